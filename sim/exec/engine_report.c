/*
 * engine_report.c - the engine's report to its timeline (etrace.h): the
 * observers it takes (engine_observe), and the events its threads tell them
 * as they learn what they did (engine_int.h: the er_ functions). A thread
 * may learn late what it did: a transfer's issue is told with its
 * completion. So each thread marks the earliest cycle it may still tell
 * (sync->mark, xmark), and the timeline is flushed only up to the earliest
 * mark of every lane (frontier).
 */
#include "engine.h"

#include <stdlib.h>

#include "engine_int.h"
#include "xmath.h"

static void observed(engine *en)
{
	en->want = en->tr ? etrace_wants(en->tr) : 0;
	en->ticks = en->tr && etrace_ticks(en->tr);
}

int engine_observe(engine *en, struct etrace_obs *o, struct err *e)
{
	if (!en->tr && !(en->tr = etrace_new())) {
		o->ops->free(o);
		return err_nomem(e, NULL);
	}
	etrace_attach(en->tr, o);
	observed(en);
	return 0;
}

void engine_unobserve(engine *en, const struct etrace_obs_ops *ops)
{
	if (en->tr)
		etrace_detach(en->tr, ops);
	observed(en);
}

int engine_trace_close(engine *en, struct err *e)
{
	etrace *t = en->tr;
	en->tr = NULL;
	observed(en);
	if (!t)
		return 0;
	if (en->tr_failed) {
		etrace_abandon(t);
		return 0;
	}
	return etrace_close(t, e);
}

void engine_trace_abandon(engine *en)
{
	etrace_abandon(en->tr);
	en->tr = NULL;
	observed(en);
}

/* ---- the events ---- */

/* The earliest cycle any thread may still report: now, or a matrix thread's mark. */
static int64_t frontier(const struct pass *p)
{
	int64_t f = scw_now();
	for (int q = 0; q < p->sync->lanes; q++)
		f = min64(f, min64(p->sync->mark[q], min64(p->sync->xmark[2 * q], p->sync->xmark[2 * q + 1])));
	return f;
}

static void report(struct pass *p, struct etrace_ev *ev)
{
	ev->lane = (int16_t)p->lane;
	if (etrace_add(p->en->tr, ev))
		etrace_flush(p->en->tr, frontier(p));
}

/*
 * An event of kind at cycle about os's op (arg, idx), with the tile of ins
 * when given, into *ev; false when no trace wants it.
 */
static bool event(struct pass *p, struct etrace_ev *ev, int kind, int64_t cycle, const struct opstate *os, int arg,
		  int64_t idx, const struct tile_ins *ins)
{
	if (!er_wants(p, kind))
		return false;
	*ev = (struct etrace_ev){ .cycle = cycle, .op = os ? os->o : NULL, .opi = os ? (int64_t)(p->i0 + (size_t)(os - p->st)) : 0,
				  .idx = idx, .kind = (int8_t)kind, .arg = (int8_t)arg, .out = -1 };
	if (ins) {
		ev->rep = ins->rep;
		ev->m0 = ins->m0, ev->k0 = ins->k0, ev->n0 = ins->n0;
		ev->m = ins->m, ev->k = ins->k, ev->n = ins->n;
		ev->addr = ins->addr;
		ev->bytes = ins->bytes;
	}
	return true;
}

void er_trace(struct pass *p, int kind, int64_t cycle, const struct opstate *os, int arg, int64_t idx,
	      const struct tile_ins *ins)
{
	struct etrace_ev ev;
	if (event(p, &ev, kind, cycle, os, arg, idx, ins))
		report(p, &ev);
}

/* The VCD's stall signal: the array's cycles [from, to) go to cat. */
void er_stall(struct pass *p, int cat, int64_t from, int64_t to)
{
	if (to <= from || !er_wants(p, ET_STALL))
		return;
	er_trace(p, ET_STALL, from, NULL, cat, 0, NULL);
	er_trace(p, ET_STALL, to, NULL, -1, 0, NULL);
}

/* The event trace's charges: the lane's cycles [from, to) of op os go to cat, for cause (enum trace_cause). */
void er_charge(struct pass *p, const struct opstate *os, int cat, int cause, int64_t from, int64_t to)
{
	struct etrace_ev ev;
	if (to > from && event(p, &ev, ET_CHARGE, from, os, cat, 0, NULL)) {
		ev.end = to;
		ev.cause = (int8_t)cause;
		report(p, &ev);
	}
}

void er_op(struct pass *p, const struct opstate *os, size_t k, int64_t t0)
{
	struct etrace_ev ev;
	if (event(p, &ev, ET_OP, t0, os, os->o != NULL, (int64_t)(p->i0 + k), NULL)) {
		ev.op = &p->ops->v[p->i0 + k];
		report(p, &ev);
	}
}

/* Load n of op os, the tile of ins, issued at cycle issued and arrived at done; from HBM or (onchip) on-chip storage. */
void er_load(struct pass *p, const struct opstate *os, int64_t n, const struct tile_ins *ins, bool onchip,
	     int64_t issued, int64_t done)
{
	struct etrace_ev ev;
	if (event(p, &ev, ET_LOAD, issued, os, ins->operand, n, ins)) {
		ev.where = onchip;
		ev.end = done;
		report(p, &ev);
	}
}

void er_store_tile(struct pass *p, const struct opstate *os, int i, int64_t idx, const struct tile_ins *ins)
{
	if (p->store_tile)
		p->store_tile[i] = (struct etrace_ev){ .op = os->o, .opi = (int64_t)(p->i0 + (size_t)(os - p->st)),
						       .idx = idx, .rep = ins->rep, .m0 = ins->m0, .n0 = ins->n0,
						       .m = ins->m, .n = ins->n, .addr = ins->addr, .bytes = ins->bytes,
						       .out = -1, .kind = ET_STORE, .where = os->s->onchip[OPND_C] };
}

void er_store(struct pass *p, int i, int64_t issued)
{
	if (p->store_tile && er_wants(p, ET_STORE)) {
		struct etrace_ev ev = p->store_tile[i];
		ev.cycle = issued;
		ev.end = p->store_done[i];
		report(p, &ev);
	}
}

/*
 * The cycles [prev_end, st->start) before a fold, as the array timer charges
 * them (array.h): its own overhead (ws/is the shift the previous stream did
 * not hide, os and SCALE-Sim the drain) up to the wait, the wait (to the
 * operand that came last), then a SCALE-Sim preload.
 */
static void trace_gap(struct pass *p, int df, int64_t prev_end, const struct array_step *st)
{
	int64_t wf = min64(max64(st->wait_from, prev_end), st->start), wt = min64(max64(st->wait_to, wf), st->start);
	int best = 0;
	if (!er_wants(p, ET_STALL))
		return;
	for (int i = 1; i < st->nwait; i++)
		if (st->wait_ready[i] > st->wait_ready[best])
			best = i;
	er_stall(p, p->en->cfg->arch.array.scalesim_compat || df == DF_OS ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT,
		 prev_end, wf);
	if (st->nwait)
		er_stall(p, array_wait_cat(st->wait_opnd[best]), wf, wt);
	er_stall(p, CAT_WEIGHT_SHIFT, wt, st->start);
}

/*
 * The event trace's charges of a fold's cycles, from the timer's last end
 * (*tm_end) to its own (array.h): the array's overhead before the wait (ws/is
 * the shift the previous stream did not hide; os, and SCALE-Sim's previous
 * fold, the drain), the wait's shares (pc, np), a SCALE-Sim preload, the
 * stream (compute, the fold's record), a slow port's excess, then a SCALE-Sim
 * drain after the stream. They must add up to the timer's categories.
 */
static void fold_charges(struct pass *p, const struct opstate *os, const struct array_step *st,
			 const struct array_fold *f, const struct piece *pc, int np, int64_t *tm_end)
{
	bool compat = p->en->cfg->arch.array.scalesim_compat;
	int ocat = compat || os->s->df == DF_OS ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT;
	int64_t pre = st->wait_from - *tm_end, shift = st->start - st->wait_to, excess = st->end - st->start - f->t;
	int64_t post = st->cat[CAT_FILL_DRAIN] - (ocat == CAT_FILL_DRAIN ? pre : 0), x = st->wait_from;
	static const int cause[3] = { TC_WAIT_A, TC_WAIT_B, TC_WAIT_ACC };
	SIM_ASSERT(pre >= 0 && shift >= 0 && excess >= 0 && post >= 0);
	SIM_ASSERT(st->cat[CAT_COMPUTE] == f->t && st->cat[f->stream_cat] == excess);
	SIM_ASSERT(st->cat[CAT_WEIGHT_SHIFT] == (ocat == CAT_WEIGHT_SHIFT ? pre : 0) + shift);
	er_charge(p, os, ocat, ocat == CAT_FILL_DRAIN ? TC_DRAIN : TC_SHIFT, *tm_end, st->wait_from);
	for (int i = 0; i < np; i++) {
		er_charge(p, os, pc[i].cat, cause[pc[i].opnd], x, x + pc[i].cycles);
		x += pc[i].cycles;
	}
	SIM_ASSERT(x == max64(st->wait_to, st->wait_from));
	er_charge(p, os, CAT_WEIGHT_SHIFT, TC_SHIFT, st->wait_to, st->start);
	er_charge(p, os, f->stream_cat, TC_PORT, st->start + f->t, st->end);
	er_charge(p, os, CAT_FILL_DRAIN, TC_DRAIN, st->end, st->end + post);
	*tm_end = st->end + post;
}

void er_fold(struct pass *p, const struct opstate *os, int64_t nfold, const struct tile_ins *ins, int64_t prev_end,
	     const struct array_step *st, const struct array_fold *f, const struct piece *pc, int np, int64_t *tm_end)
{
	struct etrace_ev ev;
	trace_gap(p, os->s->df, prev_end, st);
	if (event(p, &ev, ET_FOLD, st->start, os, 0, nfold, ins)) {
		ev.t = f->t;                    /* the stream as the array times it (sched_fold_view) */
		ev.end = st->end;
		ev.out = ins->last ? st->out : -1;
		report(p, &ev);
	}
	er_stall(p, f->stream_cat, st->start + f->t, st->end);
	er_trace(p, ET_FOLDED, st->end, os, 0, nfold, NULL);
	if (er_wants(p, ET_CHARGE))
		fold_charges(p, os, st, f, pc, np, tm_end);
}

/*
 * A vector op's transfer (kind ET_VLOAD, ET_VSTORE) of bytes at addr, chunk
 * idx, issued at cycle issued (the matrix thread's mark) and done at done.
 */
void er_vxfer(struct pass *p, const struct opstate *os, int kind, int64_t issued, int64_t done, int64_t idx,
	      uint64_t addr, int64_t bytes)
{
	struct etrace_ev ev;
	if (event(p, &ev, kind, issued, os, OPND_A, idx, NULL)) {
		ev.addr = addr;
		ev.bytes = bytes;
		ev.end = done;
		report(p, &ev);
	}
}

void er_vec(struct pass *p, const struct opstate *os, int64_t i, int64_t n, int64_t cyc)
{
	struct etrace_ev ev;
	if (event(p, &ev, ET_VEC, scw_now(), os, 0, i, NULL)) {
		ev.n = n;
		ev.end = cyc > INT64_MAX - scw_now() ? INT64_MAX : scw_now() + cyc;     /* a wait past int64 fails the op */
		report(p, &ev);
	}
}
