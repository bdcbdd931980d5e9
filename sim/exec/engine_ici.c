/*
 * engine_ici.c - the engine's collectives: the ICI threads that run each
 * collective's steps over the representative chip's links (models/ici.h),
 * beside the load, matrix and store threads of engine.c. A collective waits
 * for its input like any op, and its result is made available to its
 * readers when its last chain arrives (engine_int.h: struct sync).
 */
#include "engine.h"

#include <stdlib.h>

#include "engine_int.h"
#include "ici.h"
#include "plan.h"
#include "xmath.h"

/*
 * The streams collectives queue in: one per axis, a collective in that of
 * its group's first axis, each stream taking its own in program order
 * (assumed: a chip's collective DMAs are queued by the links they start
 * on). Collectives on different axes run at once; over several axes they
 * share, and contend for, the axes they have in common.
 */
#define ICI_STREAMS ICI_NAXES

static int stream_of(const struct op *o)
{
	for (int a = 0; a < ICI_NAXES; a++)
		if (o->grp.n[a] > 1)
			return a;
	return 0;
}

/* One ICI thread: chain `chain` of every collective of stream `stream`, over lane 0's pass. */
struct icithread {
	struct pass *p;
	int stream, chain;
};

/*
 * Runs the chains' stages step by step over the links (ici_send): a step
 * sends its share both ways at once and ends when both have arrived. A
 * collective leaves when its input is there and its fixed time has passed;
 * the last of its chains to arrive makes its result available.
 */
static void ici_thread(void *arg)
{
	struct icithread *it = arg;
	struct pass *p = it->p;
	struct sync *y = p->sync;
	engine *en = p->en;
	int64_t fixed = arch_op_fixed_cycles(&en->cfg->arch);
	for (size_t k = 0; k < p->n; k++) {
		const struct op *o = &p->ops->v[p->i0 + k];
		if (o->kind != OP_COLL || stream_of(o) != it->stream)
			continue;
		if (it->chain >= (y->nchains[k] ? y->nchains[k] : 1))
			continue;
		en_wait_tensor(p, o->in[0], k, false);
		en_stop_point(en);
		if (y->nchains[k]) {
			scw_wait(fixed);        /* a collective that moves nothing takes no time (plan_bound_op) */
			const struct ici_chain *ch = &y->chains[k * ICI_NAXES + (size_t)it->chain];
			for (int g = 0; g < ch->nstages; g++) {
				const struct ici_stage *st = &ch->st[g];
				for (int64_t i = 0; i < st->steps; i++) {
					int64_t done = scw_now();
					for (int d = 0; d < 2; d++)
						if (st->bytes[d] > 0)
							done = max64(done, ici_send(en->ici, st->axis, d, st->bytes[d] / (double)st->steps,
										   scw_now()));
					scw_wait_until(done);
				}
			}
		}
		if (--y->chains_left[k] == 0) {
			y->coll_end[k] = scw_now();
			en_made_available(p, k, scw_now());
			scw_event_notify(y->ev);
		}
	}
	y->ici_alive--;
}

int en_ici_start(engine *en, struct sync *y, struct pass *p)
{
	const struct arch *a = &en->cfg->arch;
	int most[ICI_STREAMS] = { 0 }, ncoll = 0, spawned = 0;
	size_t m = p->n ? p->n : 1;
	for (size_t k = 0; k < p->n; k++)
		ncoll += p->ops->v[p->i0 + k].kind == OP_COLL;
	if (!ncoll)
		return 0;
	if (!(y->chains = calloc(m * ICI_NAXES, sizeof *y->chains)) || !(y->nchains = calloc(m, sizeof *y->nchains)) ||
	    !(y->chains_left = calloc(m, sizeof *y->chains_left)) ||
	    !(y->coll_end = calloc(m, sizeof *y->coll_end)) ||
	    !(y->ici_runs = calloc(ICI_STREAMS * ICI_NAXES, sizeof *y->ici_runs)))
		return -1;
	struct icithread *runs = y->ici_runs;
	for (size_t k = 0; k < p->n; k++) {
		const struct op *o = &p->ops->v[p->i0 + k];
		if (o->kind != OP_COLL)
			continue;
		y->nchains[k] = ici_chains(&a->pod, o->coll, (double)plan_coll_bytes(a, o), &o->grp,
					  &y->chains[k * ICI_NAXES]);
		y->chains_left[k] = y->nchains[k] ? y->nchains[k] : 1;
		y->avail_left[k] = 1;
		int st = stream_of(o);
		most[st] = y->chains_left[k] > most[st] ? y->chains_left[k] : most[st];
	}
	for (int st = 0; st < ICI_STREAMS; st++)
		for (int c = 0; c < most[st]; c++) {
			runs[spawned] = (struct icithread){ p, st, c };
			y->ici_alive++;
			scw_spawn(en->kernel, "ici", ici_thread, &runs[spawned++]);
		}
	return spawned;
}
