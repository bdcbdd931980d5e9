/*
 * run.c - evaluate every op and sum per layer (see run.h).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "schedule.h"

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run_opts *o, struct run *out, struct err *e)
{
	engine *en = NULL;
	memset(out, 0, sizeof *out);
	out->layers = calloc(w->n ? w->n : 1, sizeof *out->layers);
	if (!out->layers)
		return err_nomem(e, NULL);
	out->n = w->n;
	if (o->model == MODEL_CYCLE && !(en = engine_new(cfg, o->ideal_memory, e)))
		goto fail;
	if (en && o->vcd && engine_trace(en, o->vcd, e) < 0)
		goto fail;
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		struct result r;
		struct sched plan, *s = NULL;
		/* Each GEMM is planned once; the plan is checked, then handed to the model. */
		if (op->kind == OP_GEMM) {
			if (sched_plan(&plan, op, cfg, o->dataflow, o->ideal_memory, e) < 0)
				goto fail;
			s = &plan;
		}
		if (en) {
			int64_t compute;
			if (analytic_check(cfg, op, s, o->ideal_memory, &compute, e) < 0 || engine_op(en, op, s, &r, e) < 0)
				goto fail;
			r.compute_cycles = compute;
		} else if (analytic_op(cfg, op, s, o->ideal_memory, &r, e) < 0) {
			goto fail;
		}
		if (r.cycles > RUN_MAX_CYCLES - out->total.cycles) {
			err_input(e, "%s: expected a workload that takes at most 2^62 cycles in all, found more", w->file);
			goto fail;
		}
		result_add(&out->layers[ops->v[i].layer], &r);
		result_add(&out->total, &r);
	}
	engine_free(en);
	return 0;
fail:
	engine_free(en);
	run_release(out);
	return -1;
}

void run_release(struct run *r)
{
	free(r->layers);
	r->layers = NULL;
	r->n = 0;
}
