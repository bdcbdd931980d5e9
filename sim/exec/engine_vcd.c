/*
 * engine_vcd.c - the engine's timeline as a VCD (vcd.h) for a waveform
 * viewer: an observer of the timeline (etrace.h), behind engine_trace.
 *
 * The VCD (timescale 1 ps, cycle c at round(c * 1000 / clock_ghz) ps) has a
 * scope `tpusim` with the chip's op (`op`, its name as op_name gives it;
 * `op_index`, its index in the op list) and, inside it, one scope per array,
 * `core<i>_array<j>`, with
 *   op, op_index         the op this array has a part of (op empty: it sits
 *                        the op out)
 *   load                 the last load issued: "<n>:A[m0:m1,k0:k1]" or
 *                        "<n>:B[k0:k1,n0:n1]", n its index among the op's loads
 *                        (instance r of a repeated op: "<n>:rep<r>:A[...]")
 *   loads_in_flight      issued, not yet arrived
 *   loads                arrived so far (the run's count)
 *   fold                 while a fold streams: "<n>:C[m0:m1,n0:n1]+=A[m0:m1,k0:k1]*B[k0:k1,n0:n1]",
 *                        empty between folds
 *   folds                folds done so far
 *   store                the last store issued: "<n>:C[m0:m1,n0:n1]"
 *   stores_in_flight     issued, not yet in HBM (or in on-chip storage)
 *   stores               stores done so far
 *   stall                while the array is not streaming within an op: the
 *                        category its cycles are charged to (cat_names:
 *                        weights, weight_shift, inputs, outputs, fill_drain;
 *                        a wait on several late operands names the last to
 *                        arrive), and "weights"/"inputs"/... while a slow
 *                        buffer port stretches a stream; empty otherwise
 *   vector               while the vector unit computes: "chunk_<i>/<n>"
 * Tiles are in the coordinates of the array's part of the op (chip.h).
 *
 * It takes every kind but ET_OPEND, ET_CHARGE and the vector unit's
 * transfers (ET_V*). Each event changes its lane's signals; the signals that
 * changed in a cycle are written once its events are all in (a signal shows
 * the last value it takes in a cycle), and the file is flushed at each pass's
 * end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat.h"
#include "engine.h"
#include "etrace.h"
#include "vcd.h"

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

struct vsink {
	struct etrace_obs obs;
	vcd *v;                         /* owned until closed */
	char *path;                     /* owned */
	int lanes;
	struct lane *lane;              /* lanes */
	int top_op, top_index;          /* the chip's op */
	char top_name[OP_NAME_MAX];
	int64_t top_op_index;
	bool top_dirty;
};

static void declare(struct vsink *t, struct lane *l)
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

/* ---- each kind's change to its lane's (and the chip's) signals ---- */

static struct lane *lane_of(struct etrace_obs *o, const struct etrace_ev *ev)
{
	return &((struct vsink *)o)->lane[ev->lane];
}

static void on_op(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct vsink *t = (struct vsink *)o;
	struct lane *l = lane_of(o, ev);
	char s[OP_NAME_MAX];
	(void)c;
	op_name(ev->op, s, sizeof s);
	set_str(l, S_OP, l->op, sizeof l->op, ev->arg ? s : "");
	l->op_index = ev->idx;
	l->dirty |= 1u << S_OP_INDEX;
	if (ev->lane == 0) {
		snprintf(t->top_name, sizeof t->top_name, "%s", s);
		t->top_op_index = ev->idx;
		t->top_dirty = true;
	}
}

static void on_load(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	char s[TILE_MAX];
	int n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
	(void)c;
	if (ev->arg == OPND_A)
		tile(s + n, sizeof s - (size_t)n, ev, 'A', ev->m0, ev->m, ev->k0, ev->k);
	else
		tile(s + n, sizeof s - (size_t)n, ev, 'B', ev->k0, ev->k, ev->n0, ev->n);
	set_str(l, S_LOAD, l->load, sizeof l->load, s);
	count(l, S_LOADS_IN_FLIGHT, &l->loads_in_flight, 1);
}

static void on_loaded(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	(void)c;
	count(l, S_LOADS_IN_FLIGHT, &l->loads_in_flight, -1);
	count(l, S_LOADS, &l->loads, 1);
}

static void on_fold(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	char s[TILE_MAX], a[TILE_MAX / 2];
	int n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
	(void)c;
	n += tile(s + n, sizeof s - (size_t)n, ev, 'C', ev->m0, ev->m, ev->n0, ev->n);
	snprintf(a, sizeof a, "A[%lld:%lld,%lld:%lld]*B[%lld:%lld,%lld:%lld]", (long long)ev->m0,
		 (long long)(ev->m0 + ev->m), (long long)ev->k0, (long long)(ev->k0 + ev->k), (long long)ev->k0,
		 (long long)(ev->k0 + ev->k), (long long)ev->n0, (long long)(ev->n0 + ev->n));
	snprintf(s + n, sizeof s - (size_t)n, "+=%s", a);
	set_str(l, S_FOLD, l->fold, sizeof l->fold, s);
}

static void on_folded(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	(void)c;
	set_str(l, S_FOLD, l->fold, sizeof l->fold, "");
	count(l, S_FOLDS, &l->folds, 1);
}

static void on_store(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	char s[TILE_MAX];
	int n = snprintf(s, sizeof s, "%lld:", (long long)ev->idx);
	(void)c;
	tile(s + n, sizeof s - (size_t)n, ev, 'C', ev->m0, ev->m, ev->n0, ev->n);
	set_str(l, S_STORE, l->store, sizeof l->store, s);
	count(l, S_STORES_IN_FLIGHT, &l->stores_in_flight, 1);
}

static void on_stored(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	(void)c;
	count(l, S_STORES_IN_FLIGHT, &l->stores_in_flight, -1);
	count(l, S_STORES, &l->stores, 1);
}

static void on_stall(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	(void)c;
	l->stall = ev->arg;
	l->dirty |= 1u << S_STALL;
}

static void on_vec(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	char s[48];
	(void)c;
	snprintf(s, sizeof s, "chunk %lld/%lld", (long long)ev->idx + 1, (long long)ev->n);
	set_str(l, S_VECTOR, l->vec, sizeof l->vec, s);
}

static void on_vec_end(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct lane *l = lane_of(o, ev);
	(void)c;
	set_str(l, S_VECTOR, l->vec, sizeof l->vec, "");
}

/* Writes the signals that changed, at timeline cycle c. */
static void on_cycle(struct etrace_obs *o, int64_t c)
{
	struct vsink *t = (struct vsink *)o;
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

static int on_pass_end(struct etrace_obs *o, int64_t c, struct err *e)
{
	return vcd_flush(((struct vsink *)o)->v, c, e);
}

static int vsink_close(struct etrace_obs *o, int64_t c, struct err *e)
{
	struct vsink *t = (struct vsink *)o;
	vcd *v = t->v;
	t->v = NULL;
	return vcd_close(v, c, e);
}

static void vsink_abandon(struct etrace_obs *o)
{
	struct vsink *t = (struct vsink *)o;
	if (t->v)
		vcd_abandon(t->v);
	t->v = NULL;
}

static void vsink_free(struct etrace_obs *o)
{
	struct vsink *t = (struct vsink *)o;
	vsink_abandon(o);
	free(t->path);
	free(t->lane);
	free(t);
}

static const struct etrace_obs_ops vsink_ops = {
	.on = { [ET_OP] = on_op, [ET_LOAD] = on_load, [ET_LOADED] = on_loaded, [ET_FOLD] = on_fold,
		[ET_FOLDED] = on_folded, [ET_STORE] = on_store, [ET_STORED] = on_stored, [ET_STALL] = on_stall,
		[ET_VEC] = on_vec, [ET_VEC_END] = on_vec_end },
	.on_cycle = on_cycle,
	.on_pass_end = on_pass_end,
	.close = vsink_close,
	.abandon = vsink_abandon,
	.free = vsink_free,
};

int engine_trace(engine *en, const char *path, struct err *e)
{
	const struct config *cfg = engine_config(en);
	int64_t apc = cfg->arch.chip.arrays_per_core;
	struct vsink *t = calloc(1, sizeof *t);
	char name[64];
	if (t) {
		t->obs.ops = &vsink_ops;
		t->lanes = (int)arch_arrays(&cfg->arch);
		t->lane = calloc((size_t)t->lanes, sizeof *t->lane);
		t->path = malloc(strlen(path) + 5);
	}
	if (!t || !t->lane || !t->path) {
		if (t)
			vsink_free(&t->obs);
		return err_nomem(e, t ? "vcd" : NULL);
	}
	strcpy(t->path, path);
	strcat(t->path, ".vcd");
	t->obs.path = t->path;
	if (!(t->v = vcd_open(t->path, cfg->arch.clock_ghz, e))) {
		vsink_free(&t->obs);
		return -1;
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
	return engine_observe(en, &t->obs, e);
}

int64_t engine_vcd_bytes(int64_t arrays, int64_t folds)
{
	int64_t head = arrays * ENGINE_VCD_HEAD_BYTES;
	if (folds > (INT64_MAX - head) / ENGINE_VCD_FOLD_BYTES)
		return INT64_MAX;
	return head + folds * ENGINE_VCD_FOLD_BYTES;
}
