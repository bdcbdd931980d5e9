/*
 * engine_events.c - the engine's timeline as an event trace (trace.h): an
 * observer of the timeline (etrace.h), behind engine_trace_events.
 *
 * It takes ET_OP, ET_OPEND, ET_LOAD, ET_FOLD, ET_STORE, ET_CHARGE, ET_VEC and
 * the vector unit's transfers (ET_V*), one record each: a load or store is
 * one record with its completion; its W records, from ET_CHARGE, are the
 * exact charges of the lane's cycles (where the VCD's stall signal names one
 * category per wait). An op's first ET_OP also names it (an N record), and
 * each pass begins with a P record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "etrace.h"
#include "trace.h"

struct esink {
	struct etrace_obs obs;
	trace_writer *w;                /* owned until closed */
	char *path;                     /* owned */
	int64_t named;                  /* ops named so far (N records) */
};

/* Writes ev, at timeline cycle c. */
static void record(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	struct esink *t = (struct esink *)o;
	/* Set field by field: the writer reads only those of the record's kind, and zeroing the rest costs more than writing it. */
	struct trace_rec r;
	r.cycle = c, r.lane = ev->lane, r.op = ev->opi, r.idx = ev->idx, r.rep = ev->rep;
	r.m0 = ev->m0, r.k0 = ev->k0, r.n0 = ev->n0, r.m = ev->m, r.k = ev->k, r.n = ev->n;
	r.addr = ev->addr, r.bytes = ev->bytes, r.onchip = ev->where != 0, r.out = -1, r.operand = OPND_A;
	r.t = ev->t, r.end = 0, r.chunks = 0, r.cat = 0, r.cause = 0, r.part = false;
	char name[OP_NAME_MAX];
	switch (ev->kind) {
	case ET_OP:
		if (ev->opi >= t->named) {
			const struct op *op = ev->op;
			/* A forward op's row is its layer; another phase's, a row after the layers, named with its phase. */
			char row[OP_NAME_MAX + 16];
			snprintf(row, sizeof row, "%s%s%s", op->layer_name ? op->layer_name : "op", op->phase ? " " : "",
				 op->phase ? step_phase_names[op->phase] : "");
			trace_writer_put(t->w, &(struct trace_rec){ .kind = TR_NAME, .cycle = c, .op = ev->opi,
								    .layer = (int64_t)(op->phase ? op->row : op->layer),
								    .opkind = (int)op->kind,
								    .name = op_name(op, name, sizeof name), .layer_name = row });
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
		r.end = etrace_later(ev, c, ev->end);
		break;
	case ET_FOLD:
		r.kind = TR_FOLD;
		r.t = ev->t;
		r.end = etrace_later(ev, c, ev->end);
		r.out = ev->out < 0 ? -1 : etrace_later(ev, c, ev->out);
		break;
	case ET_STORE:
	case ET_VSTORE:
		r.kind = TR_STORE;
		r.end = etrace_later(ev, c, ev->end);
		break;
	case ET_CHARGE:
		r.kind = TR_CHARGE;
		r.end = etrace_later(ev, c, ev->end);
		r.cat = ev->arg;
		r.cause = ev->cause;
		break;
	case ET_VEC:
		r.kind = TR_VEC;
		r.chunks = ev->n;
		r.end = etrace_later(ev, c, ev->end);
		break;
	default:
		return;
	}
	trace_writer_put(t->w, &r);
}

static void on_pass(struct etrace_obs *o, int64_t c, size_t first, size_t n)
{
	trace_writer_put(((struct esink *)o)->w,
			 &(struct trace_rec){ .kind = TR_PASS, .cycle = c, .first = (int64_t)first, .ops = (int64_t)n });
}

static int esink_close(struct etrace_obs *o, int64_t c, struct err *e)
{
	struct esink *t = (struct esink *)o;
	trace_writer *w = t->w;
	t->w = NULL;
	return trace_writer_close(w, c, e);
}

static void esink_abandon(struct etrace_obs *o)
{
	struct esink *t = (struct esink *)o;
	trace_writer_abandon(t->w);
	t->w = NULL;
}

static void esink_free(struct etrace_obs *o)
{
	struct esink *t = (struct esink *)o;
	esink_abandon(o);
	free(t->path);
	free(t);
}

static const struct etrace_obs_ops esink_ops = {
	.on = { [ET_OP] = record, [ET_OPEND] = record, [ET_LOAD] = record, [ET_VLOAD] = record, [ET_FOLD] = record,
		[ET_STORE] = record, [ET_VSTORE] = record, [ET_CHARGE] = record, [ET_VEC] = record },
	.on_pass = on_pass,
	.close = esink_close,
	.abandon = esink_abandon,
	.free = esink_free,
};

int engine_trace_events(engine *en, const char *path, const struct trace_head *h, struct err *e)
{
	struct esink *t = calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(path))) {
		free(t);
		return err_nomem(e, "--trace");
	}
	t->obs.ops = &esink_ops;
	t->obs.path = t->path;
	if (!(t->w = trace_writer_open(path, h, e))) {
		esink_free(&t->obs);
		return -1;
	}
	return engine_observe(en, &t->obs, e);
}
