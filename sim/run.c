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

/*
 * A run on a chip of several arrays: each op is split (chip_split) and every
 * part planned with one array's config. split() fills, for one op, the
 * arrays' parts, their plans and the chip_part entries that point at them.
 */
struct chip_run {
	const struct config *cfg;       /* the chip */
	struct config acfg;             /* one array's view (chip_array_config) */
	int arrays;
	const struct run_opts *o;
	struct op scratch[CHIP_MAX_ARRAYS];
};

/* Plans the parts of op split `by` into part/plan/cp; the closed form into *r. 1: no plan fits, 0: done, -1: error. */
static int try_split(struct chip_run *c, const struct op *op, int by, struct op *part, struct sched *plan,
		     struct chip_part *cp, struct result *r, struct err *e)
{
	int n = chip_split(c->cfg, op, by, c->o->dataflow, part);
	if (op->kind == OP_GEMM && by != SPLIT_NONE && n < 2)
		return 1;
	for (int q = 0; q < c->arrays; q++) {
		cp[q].op = chip_part_empty(&part[q]) ? NULL : &part[q];
		cp[q].s = NULL;
		if (cp[q].op && part[q].kind == OP_GEMM) {
			struct err pe;
			if (sched_plan(&plan[q], &part[q], &c->acfg, c->o->dataflow, c->o->ideal_memory, &pe) < 0) {
				if (by != SPLIT_NONE)
					return 1;       /* another split may fit */
				*e = pe;
				return -1;
			}
			cp[q].s = &plan[q];
		}
	}
	return analytic_parts(c->cfg, &c->acfg, op, cp, c->arrays, c->o->ideal_memory, r, e) < 0 ? -1 : 0;
}

/*
 * Op op on the chip's arrays: a vector op over the cores; a GEMM split by N
 * or by M, whichever the closed form finds faster (then less HBM traffic,
 * then N), or whole on one array when neither splits it. Fills part, plan
 * and cp (c->arrays entries each) and the closed form *r.
 */
static int split_parts(struct chip_run *c, const struct op *op, struct op *part, struct sched *plan,
		       struct chip_part *cp, struct result *r, int *by, struct err *e)
{
	struct sched alt[CHIP_MAX_ARRAYS];
	struct chip_part acp[CHIP_MAX_ARRAYS];
	struct result ra;
	int rn, rm;
	*by = SPLIT_NONE;
	if (op->kind != OP_GEMM)
		return try_split(c, op, SPLIT_NONE, part, plan, cp, r, e);
	/* N into the caller's arrays, M beside it; M is planned again there when it wins. */
	if ((rn = try_split(c, op, SPLIT_N, part, plan, cp, r, e)) < 0 ||
	    (rm = try_split(c, op, SPLIT_M, c->scratch, alt, acp, &ra, e)) < 0)
		return -1;
	if (rm == 0 && (rn || ra.cycles < r->cycles ||
			(ra.cycles == r->cycles && ra.hbm_read_bytes + ra.hbm_write_bytes <
						   r->hbm_read_bytes + r->hbm_write_bytes))) {
		*by = SPLIT_M;
		return try_split(c, op, SPLIT_M, part, plan, cp, r, e);
	}
	if (rn == 0) {
		*by = SPLIT_N;
		return 0;
	}
	return try_split(c, op, SPLIT_NONE, part, plan, cp, r, e);
}

/* split_parts, and the split counted in r. */
static int split(struct chip_run *c, const struct op *op, struct op *part, struct sched *plan, struct chip_part *cp,
		 struct result *r, struct err *e)
{
	int by;
	if (split_parts(c, op, part, plan, cp, r, &by, e) < 0)
		return -1;
	r->split_m_ops = by == SPLIT_M;
	r->split_n_ops = by == SPLIT_N;
	return 0;
}

/* A chip_run for cfg and o (one array's config when there are several), or NULL with e set. */
static struct chip_run *chip_run_new(const struct config *cfg, const struct run_opts *o, struct err *e)
{
	struct chip_run *c = malloc(sizeof *c);
	if (!c) {
		err_nomem(e, NULL);
		return NULL;
	}
	c->cfg = cfg;
	c->arrays = (int)arch_arrays(&cfg->arch);
	c->o = o;
	if (c->arrays > 1)
		chip_array_config(cfg, &c->acfg);
	return c;
}

int run_estimate(const struct config *cfg, const struct oplist *ops, const struct run_opts *o, struct sched *plans,
		 int64_t *folds, int64_t *cycles, struct err *e)
{
	struct chip_run *c = NULL;
	*folds = *cycles = 0;
	if (arch_arrays(&cfg->arch) > 1 && !(c = chip_run_new(cfg, o, e)))
		return -1;
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		if (c) {
			struct op part[CHIP_MAX_ARRAYS];
			struct sched plan[CHIP_MAX_ARRAYS];
			struct chip_part cp[CHIP_MAX_ARRAYS];
			struct result r;
			if (split(c, op, part, plan, cp, &r, e) < 0) {
				free(c);
				return -1;
			}
			for (int q = 0; q < c->arrays; q++)
				if (cp[q].op)
					*folds = sat_add(*folds, engine_op_folds(&c->acfg, cp[q].op, cp[q].s));
			*cycles = sat_add(*cycles, r.cycles);
			continue;
		}
		const struct sched *s;
		struct sched plan, *into = plans ? &plans[i] : &plan;
		int64_t compute;
		if (plan_op(cfg, op, o, into, &s, &compute, e) < 0)
			return -1;
		*folds = sat_add(*folds, engine_op_folds(cfg, op, s));
		*cycles = sat_add(*cycles, analytic_cycles(cfg, op, s, o->ideal_memory));
	}
	free(c);
	return 0;
}

/* Adds op's result r to the run; fails when the run passes RUN_MAX_CYCLES. */
static int add_result(const struct workload *w, const struct op *op, const struct result *r, struct run *out,
		      struct err *e)
{
	/* The engine's stalls past the margin: refused when seen, never summed past int64. */
	if (r->cycles > RUN_MAX_CYCLES - out->total.cycles)
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL,
			      "expected a workload that takes at most 2^62 cycles in all, found more");
	result_add(&out->layers[op->layer], r);
	result_add(&out->total, r);
	return 0;
}

/* The spill bytes of op's parts (cp, arrays entries), or of op planned as s on one array. */
static int64_t spill_of(const struct config *cfg, const struct op *op, const struct sched *s,
			const struct chip_part *cp, int arrays)
{
	int64_t bytes = 0;
	if (!cp)
		return chip_spill_bytes(cfg, op, s);
	for (int q = 0; q < arrays; q++)
		if (cp[q].op)
			bytes += chip_spill_bytes(cfg, cp[q].op, cp[q].s);
	return bytes;
}

/*
 * The cycle model on the chip: passes of ops through engine_run (chip:
 * several ops a pass, up to RUN_KEEP_PLANS plans in all; else one op a
 * pass). plans: every op's plan on a one-array chip, or NULL.
 */
static int run_engine(engine *en, struct chip_run *c, const struct workload *w, const struct oplist *ops,
		      const struct sched *plans, bool chip, struct run *out, struct err *e)
{
	const struct config *cfg = c->cfg;
	int arrays = c->arrays;
	size_t most = chip ? RUN_KEEP_PLANS / (size_t)arrays : 1;
	if (most > ops->n)
		most = ops->n ? ops->n : 1;
	struct op *part = malloc(most * (size_t)arrays * sizeof *part);
	struct sched *plan = malloc(most * (size_t)arrays * sizeof *plan);
	struct chip_part *cp = malloc(most * (size_t)arrays * sizeof *cp);
	struct result *res = calloc(most, sizeof *res);
	struct result *ana = calloc(most, sizeof *ana);   /* the closed form's: compute and splits */
	int rc = -1;

	if (!part || !plan || !cp || !res || !ana) {
		err_nomem(e, NULL);
		goto out;
	}
	for (size_t i0 = 0; i0 < ops->n; i0 += most) {
		size_t n = ops->n - i0 < most ? ops->n - i0 : most;
		for (size_t k = 0; k < n; k++) {
			const struct op *op = &ops->v[i0 + k];
			size_t at = k * (size_t)arrays;
			if (arrays > 1) {
				if (split(c, op, &part[at], &plan[at], &cp[at], &ana[k], e) < 0)
					goto out;
				continue;
			}
			const struct sched *s;
			memset(&ana[k], 0, sizeof ana[k]);
			cp[at].op = op;
			if (plans) {
				s = op->kind == OP_GEMM ? &plans[i0 + k] : NULL;
				if (analytic_check(cfg, op, s, c->o->ideal_memory, &ana[k].compute_cycles, e) < 0)
					goto out;
			} else if (plan_op(cfg, op, c->o, &plan[at], &s, &ana[k].compute_cycles, e) < 0) {
				goto out;
			}
			cp[at].s = s;
		}
		if (engine_run(en, ops, i0, n, cp, chip, res, e) < 0)
			goto out;
		for (size_t k = 0; k < n; k++) {
			const struct op *op = &ops->v[i0 + k];
			res[k].compute_cycles = ana[k].compute_cycles;
			res[k].split_m_ops = ana[k].split_m_ops;
			res[k].split_n_ops = ana[k].split_n_ops;
			res[k].spill_bytes = spill_of(cfg, op, cp[k * (size_t)arrays].s, arrays > 1 ? &cp[k * (size_t)arrays] : NULL,
						      arrays);
			if (add_result(w, op, &res[k], out, e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(part);
	free(plan);
	free(cp);
	free(res);
	free(ana);
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
	struct chip_run *c = NULL;
	int64_t folds, cycles = 0;
	int arrays = (int)arch_arrays(&cfg->arch);
	bool chip = cfg->arch.chip.prefetch_across_ops && !cfg->arch.array.scalesim_compat;
	memset(out, 0, sizeof *out);
	out->layers = calloc(w->n ? w->n : 1, sizeof *out->layers);
	if (!out->layers)
		return err_nomem(e, NULL);
	if (!(c = chip_run_new(cfg, o, e))) {
		free(out->layers);
		out->layers = NULL;
		return -1;
	}
	out->n = w->n;
	if (place(cfg, lowered, &placed, &ops, e) < 0)
		goto fail;
	/*
	 * The cycle model's work is unbounded by its input: count it, and check
	 * the limits, before simulating anything. The analytic model's work is
	 * O(1) an op; it checks its closed form's sum as it goes, and once at the end.
	 */
	if (o->model == MODEL_CYCLE) {
		/* One array: the plans are kept for the run when they take little room (else planned again). */
		if (arrays == 1 && ops->n <= RUN_KEEP_PLANS)
			plans = malloc((ops->n ? ops->n : 1) * sizeof *plans);
		if (run_estimate(cfg, ops, o, plans, &folds, &cycles, e) < 0 ||
		    run_check_limits(cfg, w->file, o->model, folds, cycles, e) < 0)
			goto fail;
		if (!(en = engine_new(cfg, o->ideal_memory, e)))
			goto fail;
		if (o->vcd && engine_trace(en, o->vcd, e) < 0)
			goto fail;
		if (run_engine(en, c, w, ops, plans, chip, out, e) < 0)
			goto fail;
		goto done;
	}
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		const struct sched *s = NULL;
		struct result r;
		struct sched plan;
		int64_t compute;
		if (arrays > 1) {
			struct op part[CHIP_MAX_ARRAYS];
			struct sched pl[CHIP_MAX_ARRAYS];
			struct chip_part cp[CHIP_MAX_ARRAYS];
			if (split(c, op, part, pl, cp, &r, e) < 0)
				goto fail;
			r.spill_bytes = spill_of(cfg, op, NULL, cp, arrays);
		} else {
			if (plan_op(cfg, op, o, &plan, &s, &compute, e) < 0 ||
			    analytic_op(cfg, op, s, o->ideal_memory, &r, e) < 0)
				goto fail;
			r.spill_bytes = chip_spill_bytes(cfg, op, s);
		}
		cycles = sat_add(cycles, r.cycles);
		if (cycles > RUN_MAX_EST_CYCLES)
			continue;       /* refused below, once the whole sum is known */
		if (add_result(w, op, &r, out, e) < 0)
			goto fail;
	}
	if (run_check_limits(cfg, w->file, o->model, 0, cycles, e) < 0)
		goto fail;
done:
	engine_free(en);
	free(plans);
	free(placed.v);
	free(c);
	return 0;
fail:
	engine_free(en);
	free(plans);
	free(placed.v);
	free(c);
	run_release(out);
	return -1;
}

void run_release(struct run *r)
{
	free(r->layers);
	r->layers = NULL;
	r->n = 0;
}
