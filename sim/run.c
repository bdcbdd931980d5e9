/*
 * run.c - evaluate every op and sum per layer (see run.h).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run_opts *o, struct run *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (o->model != MODEL_ANALYTIC)
		return err_input(e, "--model: expected analytic, found cycle (the cycle-level engine is not built yet)");
	out->layers = calloc(w->n ? w->n : 1, sizeof *out->layers);
	if (!out->layers)
		return err_input(e, "out of memory");
	out->n = w->n;
	for (size_t i = 0; i < ops->n; i++) {
		struct result r;
		if (analytic_op(cfg, &ops->v[i], o->dataflow, o->ideal_memory, &r, e) < 0) {
			run_release(out);
			return -1;
		}
		result_add(&out->layers[ops->v[i].layer], &r);
		result_add(&out->total, &r);
	}
	return 0;
}

void run_release(struct run *r)
{
	free(r->layers);
	r->layers = NULL;
	r->n = 0;
}
