/*
 * etrace.c - the engine's timeline as a VCD (see etrace.h).
 */
#include "etrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cat.h"
#include "stats.h"
#include "vcd.h"
#include "xmath.h"

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

struct etrace {
	vcd *v;
	int lanes;
	struct lane *lane;              /* lanes */
	int top_op, top_index;          /* the chip's op */
	char top_name[OP_NAME_MAX];
	int64_t top_op_index;
	bool top_dirty;
	struct etrace_ev *buf;          /* events not yet written */
	size_t n, cap, flush_at;
	int64_t seq;
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

etrace *etrace_open(const char *path, const struct config *cfg, struct err *e)
{
	etrace *t = calloc(1, sizeof *t);
	int64_t apc = cfg->arch.chip.arrays_per_core;
	char name[64];
	if (!t || !(t->lane = calloc((size_t)arch_arrays(&cfg->arch), sizeof *t->lane))) {
		free(t);
		err_nomem(e, "vcd");
		return NULL;
	}
	t->lanes = (int)arch_arrays(&cfg->arch);
	t->flush_at = FLUSH_AT;
	if (!(t->v = vcd_open(path, cfg->arch.clock_ghz, e))) {
		free(t->lane);
		free(t);
		return NULL;
	}
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
	return t;
}

void etrace_pass(etrace *t, int64_t t0)
{
	t->offset = t->base - t0;
}

bool etrace_add(etrace *t, const struct etrace_ev *ev)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct etrace_ev *nb = realloc(t->buf, cap * sizeof *nb);
		if (!nb) {
			t->nomem = true;
			return false;
		}
		t->buf = nb;
		t->cap = cap;
	}
	t->buf[t->n] = *ev;
	t->buf[t->n++].seq = t->seq++;
	return t->n >= t->flush_at;
}

static int by_cycle(const void *a, const void *b)
{
	const struct etrace_ev *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
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
	}
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
	size_t i = 0;
	qsort(t->buf, t->n, sizeof *t->buf, by_cycle);
	while (i < t->n && (all || t->buf[i].cycle < before)) {
		int64_t c = t->buf[i].cycle;
		/* An event before one already written: a frontier named too late (or a kernel that failed). */
		if (c + t->offset < t->written && !t->late)
			t->late = c + t->offset + 1;
		t->written = max64(t->written, c + t->offset);
		for (; i < t->n && t->buf[i].cycle == c; i++)
			apply(t, &t->buf[i]);
		emit(t, c + t->offset);
	}
	memmove(t->buf, t->buf + i, (t->n - i) * sizeof *t->buf);
	t->n -= i;
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
		return err_nomem(e, "vcd");
	if (t->late)
		return err_sim(e, "vcd: expected events in cycle order, found one at cycle %lld after cycle %lld",
			       (long long)(t->late - 1), (long long)t->written);
	t->base = cycles > INT64_MAX - t->base ? INT64_MAX : t->base + cycles;
	return vcd_flush(t->v, t->base, e);
}

int64_t etrace_cycles(const etrace *t)
{
	return t->base;
}

static void release(etrace *t)
{
	free(t->buf);
	free(t->lane);
	free(t);
}

int etrace_close(etrace *t, struct err *e)
{
	int rc = vcd_close(t->v, t->base, e);
	release(t);
	return rc;
}

void etrace_abandon(etrace *t)
{
	if (!t)
		return;
	vcd_abandon(t->v);
	release(t);
}
