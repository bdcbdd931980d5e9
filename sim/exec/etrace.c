/*
 * etrace.c - the engine's timeline: its events in cycle order, to its observers (see etrace.h).
 */
#include "etrace.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsx.h"
#include "xmath.h"

#define RADIX_BITS 11           /* bits of a cycle sorted a pass */
#define FLUSH_AT 4096           /* events buffered before the first flush */

/*
 * An event's place in the order events are handed on: its cycle, then its
 * index in buf. The events a flush leaves are kept in that order at the front
 * of buf, and new ones are appended in the order they are reported, so the
 * index orders the events of one cycle as they were reported.
 */
struct key {
	int64_t cycle;
	size_t i;
};

struct etrace {
	struct etrace_obs *obs;         /* owned: the observers, in the order they were added */
	uint32_t wants;                 /* the kinds some observer takes (1 << enum etrace_kind) */
	bool ticks;                     /* some observer takes fold ticks */
	struct etrace_ev *buf;          /* events not yet handed on */
	size_t n, cap, flush_at;
	struct etrace_ev *spare;        /* cap events: where the ones left after a flush go, in order */
	struct key *keys, *tkeys;       /* cap each: the order to hand buf on in, and room to sort it */
	size_t count[(1 << RADIX_BITS) + 1];    /* the sort's counts of each digit */
	int64_t base, offset;           /* timeline cycles of the passes ended; of this pass, base - t0 */
	int64_t written;                /* the last timeline cycle handed on */
	int64_t late;                   /* 1 + the first event's cycle that came after a later one was handed on; 0 none */
	bool nomem;
};

etrace *etrace_new(void)
{
	etrace *t = calloc(1, sizeof *t);
	if (t)
		t->flush_at = FLUSH_AT;
	return t;
}

/* What the observers take, after one is added or removed. */
static void survey(etrace *t)
{
	t->wants = 0;
	t->ticks = false;
	for (const struct etrace_obs *o = t->obs; o; o = o->next) {
		for (int k = 0; k < ET_N; k++)
			if (o->ops->on[k])
				t->wants |= 1u << k;
		t->ticks |= o->ops->on_folds != NULL;
	}
}

void etrace_attach(etrace *t, struct etrace_obs *o)
{
	struct etrace_obs **at = &t->obs;
	while (*at)
		at = &(*at)->next;
	o->next = NULL;
	*at = o;
	survey(t);
}

void etrace_detach(etrace *t, const struct etrace_obs_ops *ops)
{
	for (struct etrace_obs **at = &t->obs; *at;) {
		struct etrace_obs *o = *at;
		if (o->ops == ops) {
			*at = o->next;
			o->ops->free(o);
		} else {
			at = &o->next;
		}
	}
	survey(t);
}

uint32_t etrace_wants(const etrace *t)
{
	return t->wants;
}

bool etrace_ticks(const etrace *t)
{
	return t->ticks;
}

void etrace_folds(etrace *t, size_t op, int64_t folds)
{
	for (struct etrace_obs *o = t->obs; o; o = o->next)
		if (o->ops->on_folds)
			o->ops->on_folds(o, op, folds);
}

void etrace_pass(etrace *t, int64_t t0, size_t first, size_t n)
{
	t->offset = t->base - t0;
	for (struct etrace_obs *o = t->obs; o; o = o->next)
		if (o->ops->on_pass)
			o->ops->on_pass(o, t->base, first, n);
}

bool etrace_add(etrace *t, const struct etrace_ev *ev)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct etrace_ev *nb = realloc(t->buf, cap * sizeof *nb), *ns;
		struct key *nk;
		if (nb)
			t->buf = nb;
		ns = nb ? realloc(t->spare, cap * sizeof *ns) : NULL;
		if (ns)
			t->spare = ns;
		nk = ns ? realloc(t->keys, cap * sizeof *nk) : NULL;
		if (nk)
			t->keys = nk;
		nk = nk ? realloc(t->tkeys, cap * sizeof *nk) : NULL;
		if (!nk) {
			t->nomem = true;
			return false;
		}
		t->tkeys = nk;
		t->cap = cap;
	}
	t->buf[t->n++] = *ev;
	return t->n >= t->flush_at;
}

/*
 * Sorts k[0 .. n) by cycle, keeping the order of equal cycles (so by index
 * too): a least-significant-digit radix sort of the cycles above the least,
 * 11 bits a pass, as many passes as the span of cycles needs (two for spans
 * up to 4 million cycles). tmp has room for n keys. O(n) a pass.
 */
static void sort_keys(struct key *k, struct key *tmp, size_t n, size_t count[(1 << RADIX_BITS) + 1])
{
	int64_t lo, hi;
	bool sorted = true;
	struct key *from = k, *to = tmp, *x;
	if (n < 2)
		return;
	lo = hi = k[0].cycle;
	for (size_t i = 1; i < n; i++) {
		sorted &= k[i].cycle >= k[i - 1].cycle;
		lo = min64(lo, k[i].cycle);
		hi = max64(hi, k[i].cycle);
	}
	if (sorted)
		return;
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	for (int shift = 0; shift < 64 && span >> shift; shift += RADIX_BITS) {
		memset(count, 0, ((1 << RADIX_BITS) + 1) * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(((uint64_t)from[i].cycle - (uint64_t)lo) >> shift & ((1u << RADIX_BITS) - 1)) + 1]++;
		for (size_t d = 1; d <= 1u << RADIX_BITS; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++)
			to[count[((uint64_t)from[i].cycle - (uint64_t)lo) >> shift & ((1u << RADIX_BITS) - 1)]++] = from[i];
		x = from, from = to, to = x;
	}
	if (from != k)
		memcpy(k, from, n * sizeof *k);
}

/* Hands the events before kernel cycle `before`, or all of them, to the observers. */
static void flush(etrace *t, int64_t before, bool all)
{
	size_t i = 0, left;
	struct key *k = t->keys;
	struct etrace_ev *swap;
	for (size_t j = 0; j < t->n; j++)
		k[j] = (struct key){ t->buf[j].cycle, j };
	sort_keys(k, t->tkeys, t->n, t->count);
	while (i < t->n && (all || k[i].cycle < before)) {
		int64_t c = k[i].cycle, at = c + t->offset;
		/* An event before one already handed on: a frontier named too late (or a kernel that failed). */
		if (at < t->written && !t->late)
			t->late = at + 1;
		t->written = max64(t->written, at);
		for (; i < t->n && k[i].cycle == c; i++) {
			const struct etrace_ev *ev = &t->buf[k[i].i];
			/* Observers take events in cycle order only; the pass fails on a late one. */
			for (struct etrace_obs *o = t->obs; o && !t->late; o = o->next)
				if (o->ops->on[ev->kind])
					o->ops->on[ev->kind](o, ev, at);
		}
		for (struct etrace_obs *o = t->obs; o && !t->late; o = o->next)
			if (o->ops->on_cycle)
				o->ops->on_cycle(o, at);
	}
	/* The events left, in order, to the front of the spare buffer, which becomes buf. */
	left = t->n - i;
	for (size_t j = 0; j < left; j++)
		t->spare[j] = t->buf[k[i + j].i];
	swap = t->buf;
	t->buf = t->spare;
	t->spare = swap;
	t->n = left;
	/* Events that must wait for a frontier far behind: flush less often, so that each flush hands on about half. */
	while (t->n > t->flush_at / 2)
		t->flush_at *= 2;
}

void etrace_flush(etrace *t, int64_t before)
{
	flush(t, before, false);
}

int etrace_pass_end(etrace *t, int64_t cycles, struct err *e)
{
	flush(t, 0, true);
	if (t->nomem)
		return err_nomem(e, "trace");
	if (t->late)
		return err_sim(e, "trace: expected events in cycle order, found one at cycle %lld after cycle %lld",
			       (long long)(t->late - 1), (long long)t->written);
	t->base = cycles > INT64_MAX - t->base ? INT64_MAX : t->base + cycles;
	for (struct etrace_obs *o = t->obs; o; o = o->next)
		if (o->ops->on_pass_end && o->ops->on_pass_end(o, t->base, e) < 0)
			return -1;
	return 0;
}

int64_t etrace_cycles(const etrace *t)
{
	return t->base;
}

static void release(etrace *t)
{
	while (t->obs) {
		struct etrace_obs *o = t->obs;
		t->obs = o->next;
		o->ops->free(o);
	}
	free(t->buf);
	free(t->spare);
	free(t->keys);
	free(t->tkeys);
	free(t);
}

int etrace_close(etrace *t, struct err *e)
{
	int rc = 0;
	/* Each observer closes; after the first failure the others are abandoned, and the files already closed removed. */
	for (struct etrace_obs *o = t->obs; o; o = o->next) {
		if (rc == 0 && o->ops->close)
			rc = o->ops->close(o, t->base, e);
		else if (rc < 0 && o->ops->abandon)
			o->ops->abandon(o);
	}
	/* A failed run leaves no trace: the files already closed go too (never a device, pipe or link). */
	for (struct etrace_obs *o = t->obs; rc < 0 && o; o = o->next)
		if (o->path && fsx_regular(o->path))
			unlink(o->path);
	release(t);
	return rc;
}

void etrace_abandon(etrace *t)
{
	if (!t)
		return;
	for (struct etrace_obs *o = t->obs; o; o = o->next)
		if (o->ops->abandon)
			o->ops->abandon(o);
	release(t);
}
