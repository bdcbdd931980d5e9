/*
 * etrace.c - the engine's timeline, to a VCD, an event trace and a DRAM trace (see etrace.h).
 */
#include "etrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "cat.h"
#include "fsx.h"
#include "stats.h"
#include "vcd.h"
#include "xmath.h"

#define RADIX_BITS 11           /* bits of a cycle sorted a pass */
#define FLUSH_AT 4096           /* events buffered before the first flush */
#define TILE_MAX 200            /* "<n>:rep<r>:C[m0:m1,n0:n1]+=A[...]*B[...]" with 19-digit numbers */

enum sig { S_OP, S_OP_INDEX, S_LOAD, S_LOADS_IN_FLIGHT, S_LOADS, S_FOLD, S_FOLDS, S_STORE, S_STORES_IN_FLIGHT,
	   S_STORES, S_STALL, S_VECTOR, S_N };

/* What one array's signals show now, and which changed in the cycle being written. */
struct lane {
	int id[S_N];
	char op[OP_NAME_MAX], load[TILE_MAX], fold[TILE_MAX], store[TILE_MAX], vec[48];
	int64_t op_index, loads_in_flight, loads, folds, stores_in_flight, stores;
	int stall;
	uint32_t dirty;                 /* 1 << enum sig */
};

/*
 * An event's place in the order events are written: its cycle, then its index
 * in buf. The events a flush leaves are kept in that order at the front of
 * buf, and new ones are appended in the order they are reported, so the index
 * orders the events of one cycle as they were reported.
 */
struct key {
	int64_t cycle;
	size_t i;
};

struct etrace {
	const struct config *cfg;       /* borrowed */
	vcd *v;                         /* the sinks, each NULL when not asked for */
	trace_writer *w;
	trace_dram *d;
	char *vpath, *wpath, *dpath;    /* owned: their files, removed when closing one fails */
	int64_t named;                  /* the event trace: ops named so far (N records) */
	int lanes;
	struct lane *lane;              /* lanes */
	int top_op, top_index;          /* the chip's op */
	char top_name[OP_NAME_MAX];
	int64_t top_op_index;
	bool top_dirty;
	struct etrace_ev *buf;          /* events not yet written */
	size_t n, cap, flush_at;
	struct etrace_ev *spare;        /* cap events: where the ones left after a flush go, in order */
	struct key *keys, *tkeys;       /* cap each: the order to write buf in, and room to sort it */
	size_t count[(1 << RADIX_BITS) + 1];    /* the sort's counts of each digit */
	int64_t base, offset;           /* timeline cycles of the passes ended; of this pass, base - t0 */
	int64_t written;                /* the last timeline cycle written */
	int64_t late;                   /* 1 + the first event's cycle that came after a later one was written; 0 none */
	bool nomem;
};

static void declare(etrace *t, struct lane *l)
{
	static const struct {
		const char *name;
		enum vcd_type type;
		int bits;
	} sigs[S_N] = {
		[S_OP] = { "op", VCD_STRING, 0 },
		[S_OP_INDEX] = { "op_index", VCD_INT, 32 },
		[S_LOAD] = { "load", VCD_STRING, 0 },
		[S_LOADS_IN_FLIGHT] = { "loads_in_flight", VCD_INT, 32 },
		[S_LOADS] = { "loads", VCD_INT, 64 },
		[S_FOLD] = { "fold", VCD_STRING, 0 },
		[S_FOLDS] = { "folds", VCD_INT, 64 },
		[S_STORE] = { "store", VCD_STRING, 0 },
		[S_STORES_IN_FLIGHT] = { "stores_in_flight", VCD_INT, 32 },
		[S_STORES] = { "stores", VCD_INT, 64 },
		[S_STALL] = { "stall", VCD_STRING, 0 },
		[S_VECTOR] = { "vector", VCD_STRING, 0 },
	};
	for (int s = 0; s < S_N; s++)
		l->id[s] = vcd_var(t->v, sigs[s].name, sigs[s].type, sigs[s].bits);
	l->stall = -1;
}

etrace *etrace_new(const struct config *cfg)
{
	etrace *t = calloc(1, sizeof *t);
	if (!t || !(t->lane = calloc((size_t)arch_arrays(&cfg->arch), sizeof *t->lane))) {
		free(t);
		return NULL;
	}
	t->cfg = cfg;
	t->lanes = (int)arch_arrays(&cfg->arch);
	t->flush_at = FLUSH_AT;
	return t;
}

int etrace_vcd(etrace *t, const char *path, struct err *e)
{
	int64_t apc = t->cfg->arch.chip.arrays_per_core;
	char name[64];
	SIM_ASSERT(!t->v);
	if (!(t->vpath = strdup(path)))
		return err_nomem(e, "vcd");
	if (!(t->v = vcd_open(path, t->cfg->arch.clock_ghz, e)))
		return -1;
	vcd_scope(t->v, "tpusim");
	t->top_op = vcd_var(t->v, "op", VCD_STRING, 0);
	t->top_index = vcd_var(t->v, "op_index", VCD_INT, 32);
	for (int q = 0; q < t->lanes; q++) {
		snprintf(name, sizeof name, "core%lld_array%lld", (long long)(q / apc), (long long)(q % apc));
		vcd_scope(t->v, name);
		declare(t, &t->lane[q]);
		vcd_upscope(t->v);
	}
	vcd_upscope(t->v);
	vcd_begin(t->v);
	for (int q = 0; q < t->lanes; q++) {
		const struct lane *l = &t->lane[q];
		static const int counts[] = { S_LOADS_IN_FLIGHT, S_LOADS, S_FOLDS, S_STORES_IN_FLIGHT, S_STORES };
		for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
			vcd_int(t->v, l->id[counts[i]], 0, 0);
	}
	return 0;
}

int etrace_events(etrace *t, const char *path, const struct trace_head *h, struct err *e)
{
	SIM_ASSERT(!t->w);
	if (!(t->wpath = strdup(path)))
		return err_nomem(e, "--trace");
	t->named = 0;
	return (t->w = trace_writer_open(path, h, e)) ? 0 : -1;
}

int etrace_dram(etrace *t, const char *path, int format, struct err *e)
{
	SIM_ASSERT(!t->d);
	if (!(t->dpath = strdup(path)))
		return err_nomem(e, "--dram-trace");
	return (t->d = trace_dram_open(path, format, t->cfg->arch.hbm.burst_bytes, e)) ? 0 : -1;
}

bool etrace_wants(const etrace *t, int kind)
{
	switch (kind) {
	case ET_LOADED:
	case ET_FOLDED:
	case ET_STORED:
	case ET_STALL:
	case ET_VEC_END:
		return t->v != NULL;
	case ET_OPEND:
	case ET_CHARGE:
		return t->w != NULL;
	case ET_VLOAD:
	case ET_VSTORE:
		return t->w || t->d;
	case ET_LOAD:
	case ET_STORE:
		return t->v || t->w || t->d;
	default:
		return t->v || t->w;
	}
}

void etrace_pass(etrace *t, int64_t t0, size_t first, size_t n)
{
	t->offset = t->base - t0;
	if (t->w)
		trace_writer_put(t->w, &(struct trace_rec){ .kind = TR_PASS, .cycle = t->base, .first = (int64_t)first,
							    .ops = (int64_t)n });
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

/* "A[r0:r1,c0:c1]", after "rep<r>:" for an instance of a repeated op. */
static int tile(char *buf, size_t size, const struct etrace_ev *ev, char name, int64_t r0, int64_t rn, int64_t c0,
		int64_t cn)
{
	char rep[32] = "";
	if (ev->op && ev->op->repeat > 1)
		snprintf(rep, sizeof rep, "rep%lld:", (long long)ev->rep);
	return snprintf(buf, size, "%s%c[%lld:%lld,%lld:%lld]", rep, name, (long long)r0, (long long)(r0 + rn),
			(long long)c0, (long long)(c0 + cn));
}

static void set_str(struct lane *l, int sig, char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s);
	l->dirty |= 1u << sig;
}

static void count(struct lane *l, int sig, int64_t *v, int64_t by)
{
	*v += by;
	l->dirty |= 1u << sig;
}

/* Applies ev to its lane's (and the chip's) signals. */
static void apply(etrace *t, const struct etrace_ev *ev)
{
	struct lane *l = &t->lane[ev->lane];
	char s[TILE_MAX], a[TILE_MAX / 2];
	int n;
	switch (ev->kind) {
	case ET_OP:
		op_name(ev->op, s, sizeof s);
		set_str(l, S_OP, l->op, sizeof l->op, ev->arg ? s : "");
		l->op_index = ev->idx;
		l->dirty |= 1u << S_OP_INDEX;
		if (ev->lane == 0) {
			snprintf(t->top_name, sizeof t->top_name, "%s", s);
			t->top_op_index = ev->idx;
			t->top_dirty = true;
		}
		break;
	case ET_LOAD:
		n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
		if (ev->arg == OPND_A)
			tile(s + n, sizeof s - (size_t)n, ev, 'A', ev->m0, ev->m, ev->k0, ev->k);
		else
			tile(s + n, sizeof s - (size_t)n, ev, 'B', ev->k0, ev->k, ev->n0, ev->n);
		set_str(l, S_LOAD, l->load, sizeof l->load, s);
		count(l, S_LOADS_IN_FLIGHT, &l->loads_in_flight, 1);
		break;
	case ET_LOADED:
		count(l, S_LOADS_IN_FLIGHT, &l->loads_in_flight, -1);
		count(l, S_LOADS, &l->loads, 1);
		break;
	case ET_FOLD:
		n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
		n += tile(s + n, sizeof s - (size_t)n, ev, 'C', ev->m0, ev->m, ev->n0, ev->n);
		snprintf(a, sizeof a, "A[%lld:%lld,%lld:%lld]*B[%lld:%lld,%lld:%lld]", (long long)ev->m0,
			 (long long)(ev->m0 + ev->m), (long long)ev->k0, (long long)(ev->k0 + ev->k), (long long)ev->k0,
			 (long long)(ev->k0 + ev->k), (long long)ev->n0, (long long)(ev->n0 + ev->n));
		snprintf(s + n, sizeof s - (size_t)n, "+=%s", a);
		set_str(l, S_FOLD, l->fold, sizeof l->fold, s);
		break;
	case ET_FOLDED:
		set_str(l, S_FOLD, l->fold, sizeof l->fold, "");
		count(l, S_FOLDS, &l->folds, 1);
		break;
	case ET_STORE:
		n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
		tile(s + n, sizeof s - (size_t)n, ev, 'C', ev->m0, ev->m, ev->n0, ev->n);
		set_str(l, S_STORE, l->store, sizeof l->store, s);
		count(l, S_STORES_IN_FLIGHT, &l->stores_in_flight, 1);
		break;
	case ET_STORED:
		count(l, S_STORES_IN_FLIGHT, &l->stores_in_flight, -1);
		count(l, S_STORES, &l->stores, 1);
		break;
	case ET_STALL:
		l->stall = ev->arg;
		l->dirty |= 1u << S_STALL;
		break;
	case ET_VEC:
		snprintf(s, sizeof s, "chunk %lld/%lld", (long long)ev->idx + 1, (long long)ev->n);
		set_str(l, S_VECTOR, l->vec, sizeof l->vec, s);
		break;
	case ET_VEC_END:
		set_str(l, S_VECTOR, l->vec, sizeof l->vec, "");
		break;
	default:
		break;          /* the event trace's own kinds */
	}
}

/* Kernel cycle x on the timeline, as event ev (at kernel ev->cycle) is at c: saturating, as the kernel's clock does. */
static int64_t shifted(const struct etrace_ev *ev, int64_t c, int64_t x)
{
	int64_t d = x - ev->cycle;      /* x is never before the event */
	return d > INT64_MAX - c ? INT64_MAX : c + d;
}

/* Writes ev, at timeline cycle c, to the event trace and the DRAM trace. */
static void record(etrace *t, const struct etrace_ev *ev, int64_t c)
{
	/* Set field by field: the writer reads only those of the record's kind, and zeroing the rest costs more than writing it. */
	struct trace_rec r;
	r.cycle = c, r.lane = ev->lane, r.op = ev->opi, r.idx = ev->idx, r.rep = ev->rep;
	r.m0 = ev->m0, r.k0 = ev->k0, r.n0 = ev->n0, r.m = ev->m, r.k = ev->k, r.n = ev->n;
	r.addr = ev->addr, r.bytes = ev->bytes, r.onchip = ev->where != 0, r.out = -1, r.operand = OPND_A;
	r.t = ev->t, r.end = 0, r.chunks = 0, r.cat = 0, r.cause = 0, r.part = false;
	char name[OP_NAME_MAX];
	bool hbm = false, write = false;
	switch (ev->kind) {
	case ET_OP:
		if (t->w && ev->opi >= t->named) {
			const struct op *o = ev->op;
			trace_writer_put(t->w, &(struct trace_rec){ .kind = TR_NAME, .cycle = c, .op = ev->opi,
								    .layer = (int64_t)o->layer, .opkind = o->kind == OP_VEC,
								    .name = op_name(o, name, sizeof name),
								    .layer_name = o->layer_name ? o->layer_name : "op" });
			t->named = ev->opi + 1;
		}
		r.kind = TR_OP;
		r.part = ev->arg != 0;
		break;
	case ET_OPEND: r.kind = TR_OPEND; break;
	case ET_LOAD:
	case ET_VLOAD:
		r.kind = TR_LOAD;
		r.operand = ev->kind == ET_VLOAD ? OPND_A : ev->arg;
		r.end = shifted(ev, c, ev->end);
		hbm = !ev->where;
		break;
	case ET_FOLD:
		r.kind = TR_FOLD;
		r.t = ev->t;
		r.end = shifted(ev, c, ev->end);
		r.out = ev->out < 0 ? -1 : shifted(ev, c, ev->out);
		break;
	case ET_STORE:
	case ET_VSTORE:
		r.kind = TR_STORE;
		r.end = shifted(ev, c, ev->end);
		hbm = !ev->where;
		write = true;
		break;
	case ET_CHARGE:
		r.kind = TR_CHARGE;
		r.end = shifted(ev, c, ev->end);
		r.cat = ev->arg;
		r.cause = ev->cause;
		break;
	case ET_VEC:
		r.kind = TR_VEC;
		r.chunks = ev->n;
		r.end = shifted(ev, c, ev->end);
		break;
	default:
		return;         /* the VCD's own kinds */
	}
	if (t->w)
		trace_writer_put(t->w, &r);
	if (t->d && hbm)
		trace_dram_request(t->d, c, ev->addr, ev->bytes, write);
}

/* Writes the signals that changed, at timeline cycle c. */
static void emit(etrace *t, int64_t c)
{
	vcd *v = t->v;
	if (t->top_dirty) {
		vcd_str(v, t->top_op, c, t->top_name);
		vcd_int(v, t->top_index, c, t->top_op_index);
		t->top_dirty = false;
	}
	for (int q = 0; q < t->lanes; q++) {
		struct lane *l = &t->lane[q];
		if (!l->dirty)
			continue;
		for (int s = 0; s < S_N; s++) {
			if (!(l->dirty & 1u << s))
				continue;
			switch (s) {
			case S_OP: vcd_str(v, l->id[s], c, l->op); break;
			case S_OP_INDEX: vcd_int(v, l->id[s], c, l->op_index); break;
			case S_LOAD: vcd_str(v, l->id[s], c, l->load); break;
			case S_LOADS_IN_FLIGHT: vcd_int(v, l->id[s], c, l->loads_in_flight); break;
			case S_LOADS: vcd_int(v, l->id[s], c, l->loads); break;
			case S_FOLD: vcd_str(v, l->id[s], c, l->fold); break;
			case S_FOLDS: vcd_int(v, l->id[s], c, l->folds); break;
			case S_STORE: vcd_str(v, l->id[s], c, l->store); break;
			case S_STORES_IN_FLIGHT: vcd_int(v, l->id[s], c, l->stores_in_flight); break;
			case S_STORES: vcd_int(v, l->id[s], c, l->stores); break;
			case S_STALL: vcd_str(v, l->id[s], c, l->stall >= 0 ? cat_names[l->stall] : ""); break;
			case S_VECTOR: vcd_str(v, l->id[s], c, l->vec); break;
			}
		}
		l->dirty = 0;
	}
}

/* Writes the events before kernel cycle `before`, or all of them. */
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
		/* An event before one already written: a frontier named too late (or a kernel that failed). */
		bool late = at < t->written;
		if (late && !t->late)
			t->late = at + 1;
		t->written = max64(t->written, at);
		for (; i < t->n && k[i].cycle == c; i++) {
			const struct etrace_ev *ev = &t->buf[k[i].i];
			if (t->v)
				apply(t, ev);
			/* The trace files take records in cycle order only; the pass fails on a late one. */
			if ((t->w || t->d) && !t->late)
				record(t, ev, at);
		}
		if (t->v)
			emit(t, at);
	}
	/* The events left, in order, to the front of the spare buffer, which becomes buf. */
	left = t->n - i;
	for (size_t j = 0; j < left; j++)
		t->spare[j] = t->buf[k[i + j].i];
	swap = t->buf;
	t->buf = t->spare;
	t->spare = swap;
	t->n = left;
	/* Events that must wait for a frontier far behind: flush less often, so that each flush writes about half. */
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
	return t->v ? vcd_flush(t->v, t->base, e) : 0;
}

int64_t etrace_cycles(const etrace *t)
{
	return t->base;
}

static void release(etrace *t)
{
	free(t->vpath);
	free(t->wpath);
	free(t->dpath);
	free(t->buf);
	free(t->spare);
	free(t->keys);
	free(t->tkeys);
	free(t->lane);
	free(t);
}

int etrace_close(etrace *t, struct err *e)
{
	int rc = 0;
	/* Each sink closes; after the first failure the others are dropped, and the files already closed removed. */
	if (t->w) {
		rc = trace_writer_close(t->w, t->base, e);
		t->w = NULL;
	}
	if (t->d) {
		if (rc == 0)
			rc = trace_dram_close(t->d, e);
		else
			trace_dram_abandon(t->d);
		t->d = NULL;
	}
	if (t->v) {
		if (rc == 0)
			rc = vcd_close(t->v, t->base, e);
		else
			vcd_abandon(t->v);
		t->v = NULL;
	}
	if (rc < 0) {
		/* A failed run leaves no trace: the files already closed go too (never a device, pipe or link). */
		const char *paths[] = { t->wpath, t->dpath, t->vpath };
		for (int i = 0; i < 3; i++)
			if (paths[i] && fsx_regular(paths[i]))
				unlink(paths[i]);
	}
	release(t);
	return rc;
}

void etrace_abandon(etrace *t)
{
	if (!t)
		return;
	trace_writer_abandon(t->w);
	trace_dram_abandon(t->d);
	if (t->v)
		vcd_abandon(t->v);
	release(t);
}
