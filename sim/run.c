/*
 * run.c - evaluate every op and sum per layer (see run.h).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "chip.h"
#include "engine.h"
#include "schedule.h"

const struct cfg_key sim_keys[] = {
	{ "max_folds", CFG_INT, offsetof(struct sim_params, max_folds), "folds", "10000000000", 1, 0x1p62, NULL,
	  "most folds (and vector-unit chunks) the cycle model runs in one run; more is refused before it starts" },
	CFG_END
};

/* a + b for counts >= 0, INT64_MAX when it passes 64 bits. */
static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* An estimate as a message shows it: a saturated one is only known to be huge. */
static const char *shown(char *buf, size_t size, int64_t v)
{
	if (v == INT64_MAX)
		snprintf(buf, size, "2^63 or more");
	else
		snprintf(buf, size, "%lld", (long long)v);
	return buf;
}

int run_check_limits(const struct config *cfg, const char *file, int model, int64_t folds, int64_t cycles,
		     struct err *e)
{
	char found[32];
	struct pos whole = { file, 0, 0 };
	int64_t max = cfg->arch.sim.max_folds;
	if (model == MODEL_CYCLE && folds > max)
		return err_at(e, whole, NULL, "expected at most %lld folds for the cycle model (sim.max_folds), found %s; "
			      "use --model analytic, a bigger array, or raise sim.max_folds", (long long)max,
				 shown(found, sizeof found, folds));
	if (cycles > RUN_MAX_EST_CYCLES)
		return err_at(e, whole, NULL, "expected a workload that takes at most 2^58 cycles by the closed form (room "
			      "for the cycle model's stalls within the 2^62 a run counts), found %s; use a bigger array, "
			      "more bandwidth or a smaller workload", shown(found, sizeof found, cycles));
	return 0;
}

/* Plans op if it is a GEMM (into *plan; *s points at it, else NULL) and checks it against the per-op limit. */
static int plan_op(const struct config *cfg, const struct op *op, const struct run_opts *o, struct sched *plan,
		   const struct sched **s, int64_t *compute, struct err *e)
{
	*s = NULL;
	if (op->kind == OP_GEMM) {
		if (sched_plan(plan, op, cfg, o->dataflow, o->ideal_memory, e) < 0)
			return -1;
		*s = plan;
	}
	return analytic_check(cfg, op, *s, o->ideal_memory, compute, e);
}

int run_estimate(const struct config *cfg, const struct oplist *ops, const struct run_opts *o, struct sched *plans,
		 int64_t *folds, int64_t *cycles, struct err *e)
{
	*folds = *cycles = 0;
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		const struct sched *s;
		struct sched plan, *into = plans ? &plans[i] : &plan;
		int64_t compute;
		if (plan_op(cfg, op, o, into, &s, &compute, e) < 0)
			return -1;
		*folds = sat_add(*folds, engine_op_folds(cfg, op, s));
		*cycles = sat_add(*cycles, analytic_cycles(cfg, op, s, o->ideal_memory));
	}
	return 0;
}

/* Adds op i's result r to the run; fails when the run passes RUN_MAX_CYCLES. */
static int add_result(const struct config *cfg, const struct workload *w, const struct op *op, const struct sched *s,
		      struct result *r, struct run *out, struct err *e)
{
	r->spill_bytes = chip_spill_bytes(cfg, op, s);
	/* The engine's stalls past the margin: refused when seen, never summed past int64. */
	if (r->cycles > RUN_MAX_CYCLES - out->total.cycles)
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL,
			      "expected a workload that takes at most 2^62 cycles in all, found more");
	result_add(&out->layers[op->layer], r);
	result_add(&out->total, r);
	return 0;
}

/*
 * The cycle model as a chip runs it (chip.prefetch_across_ops): passes of up
 * to RUN_KEEP_PLANS ops, each one engine_ops; plans: every op's plan, or NULL
 * to plan each pass here.
 */
static int run_chip(engine *en, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		    const struct run_opts *o, const struct sched *plans, struct run *out, struct err *e)
{
	size_t most = ops->n < RUN_KEEP_PLANS ? ops->n : RUN_KEEP_PLANS;
	const struct sched **ptr = calloc(most ? most : 1, sizeof *ptr);
	struct sched *own = plans ? NULL : malloc((most ? most : 1) * sizeof *own);
	struct result *res = calloc(most ? most : 1, sizeof *res);
	int64_t *compute = calloc(most ? most : 1, sizeof *compute);
	int rc = -1;

	if (!ptr || (!plans && !own) || !res || !compute) {
		err_nomem(e, NULL);
		goto out;
	}
	for (size_t i0 = 0; i0 < ops->n; i0 += most) {
		size_t n = ops->n - i0 < most ? ops->n - i0 : most;
		for (size_t k = 0; k < n; k++) {
			const struct op *op = &ops->v[i0 + k];
			if (plans) {
				ptr[k] = op->kind == OP_GEMM ? &plans[i0 + k] : NULL;
				if (analytic_check(cfg, op, ptr[k], o->ideal_memory, &compute[k], e) < 0)
					goto out;
			} else if (plan_op(cfg, op, o, &own[k], &ptr[k], &compute[k], e) < 0) {
				goto out;
			}
		}
		if (engine_ops(en, ops, i0, n, ptr, res, e) < 0)
			goto out;
		for (size_t k = 0; k < n; k++) {
			res[k].compute_cycles = compute[k];
			if (add_result(cfg, w, &ops->v[i0 + k], ptr[k], &res[k], out, e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(ptr);
	free(own);
	free(res);
	free(compute);
	return rc;
}

/*
 * ops with the chip's placement (chip_place) in *placed when the chip keeps
 * activations: a copy of the ops that shares the tensors (free placed->v
 * only); else *use is ops itself.
 */
static int place(const struct config *cfg, const struct oplist *ops, struct oplist *placed,
		 const struct oplist **use, struct err *e)
{
	memset(placed, 0, sizeof *placed);
	*use = ops;
	if (!chip_keeps(cfg) || !ops->nt)
		return 0;
	*placed = *ops;
	if (!(placed->v = malloc((ops->n ? ops->n : 1) * sizeof *placed->v))) {
		placed->v = NULL;
		return err_nomem(e, NULL);
	}
	memcpy(placed->v, ops->v, ops->n * sizeof *placed->v);
	placed->cap = ops->n;
	*use = placed;
	return chip_place(cfg, placed, e);
}

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *lowered,
		 const struct run_opts *o, struct run *out, struct err *e)
{
	engine *en = NULL;
	struct sched *plans = NULL;
	struct oplist placed;
	const struct oplist *ops;
	int64_t folds, cycles = 0;
	bool chip = o->model == MODEL_CYCLE && cfg->arch.chip.prefetch_across_ops && !cfg->arch.array.scalesim_compat;
	memset(out, 0, sizeof *out);
	out->layers = calloc(w->n ? w->n : 1, sizeof *out->layers);
	if (!out->layers)
		return err_nomem(e, NULL);
	out->n = w->n;
	if (place(cfg, lowered, &placed, &ops, e) < 0)
		goto fail;
	/*
	 * The cycle model's work is unbounded by its input: count it, and check
	 * the limits, before simulating anything. The analytic model's work is
	 * O(1) an op; it checks its closed form's sum as it goes, and once at the end.
	 */
	if (o->model == MODEL_CYCLE) {
		/* The plans are kept for the run when they take little room (else planned again: no failure). */
		if (ops->n <= RUN_KEEP_PLANS)
			plans = malloc((ops->n ? ops->n : 1) * sizeof *plans);
		if (run_estimate(cfg, ops, o, plans, &folds, &cycles, e) < 0 ||
		    run_check_limits(cfg, w->file, o->model, folds, cycles, e) < 0)
			goto fail;
		if (!(en = engine_new(cfg, o->ideal_memory, e)))
			goto fail;
	}
	if (en && o->vcd && engine_trace(en, o->vcd, e) < 0)
		goto fail;
	if (chip) {
		if (run_chip(en, cfg, w, ops, o, plans, out, e) < 0)
			goto fail;
		goto done;
	}
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		const struct sched *s;
		struct result r;
		struct sched plan;
		int64_t compute;
		/* Each GEMM is planned (or its plan kept), the plan checked, then handed to the model. */
		if (plans) {
			s = op->kind == OP_GEMM ? &plans[i] : NULL;
			if (analytic_check(cfg, op, s, o->ideal_memory, &compute, e) < 0)
				goto fail;
		} else if (plan_op(cfg, op, o, &plan, &s, &compute, e) < 0) {
			goto fail;
		}
		if (en) {
			if (engine_op(en, op, s, &r, e) < 0)
				goto fail;
			r.compute_cycles = compute;
		} else {
			if (analytic_op(cfg, op, s, o->ideal_memory, &r, e) < 0)
				goto fail;
			cycles = sat_add(cycles, r.cycles);
			if (cycles > RUN_MAX_EST_CYCLES)
				continue;       /* refused below, once the whole sum is known */
		}
		if (add_result(cfg, w, op, s, &r, out, e) < 0)
			goto fail;
	}
	if (!en && run_check_limits(cfg, w->file, o->model, 0, cycles, e) < 0)
		goto fail;
done:
	engine_free(en);
	free(plans);
	free(placed.v);
	return 0;
fail:
	engine_free(en);
	free(plans);
	free(placed.v);
	run_release(out);
	return -1;
}

void run_release(struct run *r)
{
	free(r->layers);
	r->layers = NULL;
	r->n = 0;
}
