/*
 * run.c - evaluate every op and sum per layer (see run.h).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "fold.h"
#include "functional.h"
#include "npy.h"
#include "opcache.h"
#include "run_int.h"
#include "plan.h"
#include "stop.h"
#include "train.h"
#include "xmath.h"

const char *const run_model_names[] = { "analytic", "cycle", "functional", NULL };

const struct cfg_key sim_keys[] = {
	{ "max_folds", CFG_INT, offsetof(struct sim_params, max_folds), "folds", "10000000000", 1, 0x1p62, NULL,
	  "most folds (and vector-unit chunks) the cycle model runs in one run; more is refused before it starts" },
	{ "max_pe_updates", CFG_INT, offsetof(struct sim_params, max_pe_updates), "PE cycles", "100000000000", 1, 0x1p62,
	  NULL, "most PE register updates (cycles x rows x cols over the GEMMs) the functional model runs in one run; "
	  "more is refused before it starts" },
	{ "max_trace_bytes", CFG_INT, offsetof(struct sim_params, max_trace_bytes), "bytes", "1073741824", 1, 0x1p62, NULL,
	  "most bytes a --vcd or --dram-trace file of one run is estimated to take (the cycle and functional models' and "
	  "the lab's); more is refused before the run starts" },
	{ "allow_hbm_overflow", CFG_BOOL, offsetof(struct sim_params, allow_hbm_overflow), "", "false", 0, 0, NULL,
	  "run a workload that needs more than hbm.capacity_gib anyway; summary.json says fits_hbm: false" },
	CFG_END
};

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
		return err_at(e, whole, NULL, "expected a workload that takes at most 2^" LIMIT_STR(RUN_MAX_EST_CYCLES_LOG2) " cycles by the closed form "
			      "(room for the cycle model's stalls within the 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " a run counts), found %s; use a bigger array, "
			      "more bandwidth or a smaller workload", shown(found, sizeof found, cycles));
	return 0;
}

int64_t run_plan_folds(const struct plan *p)
{
	int64_t folds = 0;
	for (size_t i = 0; i < p->ops.n; i++) {
		const struct chip_part *cp = plan_parts(p, i);
		for (int q = 0; q < p->arrays; q++)
			if (cp[q].op)
				folds = sat_add(folds, engine_op_folds(p->cfg, cp[q].op, cp[q].s));
	}
	return folds;
}

int run_estimate(const struct config *cfg, const struct oplist *ops, const struct run_opts *o, int64_t *folds,
		 int64_t *cycles, struct err *e)
{
	struct plan p;
	if (plan_build(&p, cfg, ops, o->dataflow, o->ideal_memory || o->model == MODEL_FUNCTIONAL, e) < 0)
		return -1;
	*folds = run_plan_folds(&p);
	*cycles = p.cycles;
	plan_release(&p);
	return 0;
}

int run_check_trace_bytes(const struct config *cfg, const char *opt, int64_t bytes, const char *how, const char *hint,
			  struct err *e)
{
	char found[32];
	int64_t max = cfg->arch.sim.max_trace_bytes;
	if (bytes <= max)
		return 0;
	return err_input(e, "%s: expected a file of at most %lld bytes (sim.max_trace_bytes), found an estimated %s bytes "
			 "(%s); %s, or raise sim.max_trace_bytes (--set sim.max_trace_bytes=%s)", opt, (long long)max,
			 shown(found, sizeof found, bytes), how, hint, bytes == INT64_MAX ? "N" : found);
}

/*
 * The cycle model's traces, estimated from the plan before the engine starts
 * (engine_vcd_bytes, engine_dram_bytes): refused past sim.max_trace_bytes.
 */
static int check_engine_traces(const struct plan *p, const struct run_opts *o, int64_t folds, struct err *e)
{
	char how[160];
	if (o->vcd) {
		snprintf(how, sizeof how, "%lld folds and vector chunks x %d bytes", (long long)folds, ENGINE_VCD_FOLD_BYTES);
		if (run_check_trace_bytes(p->cfg, "--vcd", engine_vcd_bytes(p->arrays, folds), how,
					  "use a smaller workload or array", e) < 0)
			return -1;
	}
	if (o->dram_trace) {
		int64_t bytes = 0, b = p->cfg->arch.hbm.burst_bytes;
		for (size_t i = 0; i < p->ops.n; i++)
			bytes = sat_add(bytes, sat_add(p->v[i].bound.read_bytes, p->v[i].bound.write_bytes));
		snprintf(how, sizeof how, "%lld HBM bytes by the closed form / %lld-byte bursts x %d bytes a line",
			 (long long)bytes, (long long)b, ENGINE_DRAM_LINE_BYTES);
		if (run_check_trace_bytes(p->cfg, "--dram-trace", engine_dram_bytes(bytes, b), how,
					  "use a smaller workload", e) < 0)
			return -1;
	}
	return 0;
}

/* ---- the functional model ---- */


/* The functional model's run: its options, the per-PE trace and the operands' buffers. */
struct frun {
	const struct config *cfg;
	const struct workload *w;
	const struct plan *p;           /* built with ideal memory */
	struct run_opts o;              /* the caller's, with ideal memory */
	func_vcd *vcd;                  /* per-PE signals, or NULL */
	int64_t base;                   /* the run's cycle at the current op's cycle 0 */
};

/* Checks that every value of a file given for layer key is representable in the dtype. */
static int file_values(const struct layer_file *f, int dtype, const double *v, int64_t rows, int64_t cols,
		       const char *key, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	for (int64_t i = 0; i < rows * cols; i++)
		if (!func_representable(dtype, v[i]))
			return err_at(e, f->at, key, "expected values representable in %s (array.dtype), found %.17g at [%lld][%lld] "
				      "in \"%s\"", array_dtype_names[dtype], v[i], (long long)(i / cols), (long long)(i % cols),
				      err_quote(q, sizeof q, f->path, LIMIT_PATH));
	return 0;
}

/* f's values into v (its header's rows x cols, as lowering checked them against the op), each checked for the dtype. */
static int file_operand(const struct frun *fr, const struct layer_file *f, double *v, struct err *e)
{
	if (npy_read(f->path, f->at, f->key, &f->head, v, e) < 0)
		return -1;
	return file_values(f, fr->cfg->arch.array.dtype, v, f->head.rows, f->head.cols, f->key, e);
}

/*
 * The operands of GEMM op number i: its layer's .npy files, else random from
 * the seed (*drew set when one is). a: M x K, b: K x N.
 */
static int op_operands(const struct frun *fr, const struct op *op, size_t i, double *a, double *b, bool *drew,
		       struct err *e)
{
	int dt = fr->cfg->arch.array.dtype;
	uint64_t seed = fr->o.seed + 2 * (uint64_t)i;
	bool from_file[2] = { false, false };
	func_random(dt, seed, a, op->m * op->k);
	func_random(dt, seed + 1, b, op->k * op->n);
	for (size_t k = 0; k < fr->w->nfiles; k++) {
		const struct layer_file *f = &fr->w->files[k];
		if (f->layer != op->layer)
			continue;
		if (file_operand(fr, f, f->operand ? b : a, e) < 0)
			return -1;
		from_file[f->operand != 0] = true;
	}
	*drew |= !from_file[0] || !from_file[1];
	return 0;
}

/*
 * Every operand file's values read and checked before the first op runs, so
 * that a bad value in the last layer's file is not found after the work of
 * the layers before it. a and b hold the largest operands.
 */
static int check_files(const struct frun *fr, double *a, double *b, struct err *e)
{
	for (size_t k = 0; k < fr->w->nfiles; k++) {
		const struct layer_file *f = &fr->w->files[k];
		if (file_operand(fr, f, f->operand ? b : a, e) < 0)
			return -1;
	}
	return 0;
}

/* The registers' cycles and categories in place of the closed form's; the check added to ck. */
static void func_result_into(const struct func_result *f, struct result *r, struct run_check *ck)
{
	r->cycles = r->compute_cycles = f->cycles;
	r->memory_cycles = 0;
	memcpy(r->cat, f->cat, sizeof r->cat);
	ck->outputs += f->outputs;
	ck->mismatches += f->mismatches;
	if (f->max_abs_error > ck->max_abs_error)
		ck->max_abs_error = f->max_abs_error;
}

/*
 * GEMM op i: the closed form for its counts (r), then the registers for its
 * time, on one array or on each part of the op split over the chip's arrays
 * (operands sliced: rows of A and C when split by M, columns of B and C by
 * N). c (M x N) receives the result when not NULL.
 */
static int func_gemm(struct frun *fr, size_t i, const double *a, const double *b, double *c, struct result *r,
		     struct run_check *ck, struct err *e)
{
	const struct plan *p = fr->p;
	const struct op *op = &p->ops.v[i];
	const struct chip_part *cp = plan_parts(p, i);
	struct func_result f;
	struct func_opts fo = { .seed = 0, .a = a, .b = b, .c = c };
	if (fr->vcd) {
		fo.observe = func_vcd_observe;
		fo.ctx = fr->vcd;
	}
	if (analytic_plan_op(p, i, r, e) < 0)
		return -1;
	if (p->arrays == 1) {
		if (func_run(fr->cfg, op, cp->s, &fo, &f, e) < 0)
			return -1;
		func_result_into(&f, r, ck);
		return 0;
	}
	struct func_result slow = { 0 };
	struct run_check sum = { 0 };
	int64_t off = 0, K = op->k, N = op->n;
	bool by_n = p->v[i].by == SPLIT_N;
	for (int q = 0; q < p->arrays; q++) {
		const struct op *pt = cp[q].op;
		double *bs = NULL, *cs = NULL;
		int rc;
		if (!pt)
			continue;
		fo.a = by_n ? a : a + off * K;
		fo.b = b;
		fo.c = c && !by_n ? c + off * N : NULL;
		if (by_n && ((bs = malloc((size_t)(K * pt->n) * sizeof *bs)) == NULL ||
			     (c && (cs = malloc((size_t)(op->m * pt->n) * sizeof *cs)) == NULL))) {
			free(bs);
			return err_nomem(e, "functional model");
		}
		if (by_n) {
			for (int64_t k = 0; k < K; k++)
				memcpy(bs + k * pt->n, b + k * N + off, (size_t)pt->n * sizeof *bs);
			fo.b = bs;
			fo.c = cs;
		}
		rc = func_run(fr->cfg, pt, cp[q].s, &fo, &f, e);
		if (rc == 0 && cs)
			for (int64_t m = 0; m < op->m; m++)
				memcpy(c + m * N + off, cs + m * pt->n, (size_t)pt->n * sizeof *cs);
		free(bs);
		free(cs);
		if (rc < 0)
			return -1;
		if (f.cycles >= slow.cycles)
			slow = f;
		func_result_into(&f, r, &sum);
		off += by_n ? pt->n : pt->m;
	}
	slow.outputs = sum.outputs;
	slow.mismatches = sum.mismatches;
	slow.max_abs_error = sum.max_abs_error;
	func_result_into(&slow, r, ck);
	return 0;
}

static void outputs_release(struct run *r)
{
	for (size_t i = 0; i < r->noutputs; i++)
		free(r->outputs[i].c);
	free(r->outputs);
	r->outputs = NULL;
	r->noutputs = 0;
}

static int run_functional(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
			  struct err *e)
{
	const struct config *cfg = p->cfg;
	const struct oplist *ops = &p->ops;
	struct frun fr = { cfg, w, p, *o, NULL, 0 };
	int64_t updates, cycles, ngemm = 0, pes;
	double *a = NULL, *b = NULL;
	int64_t amax = 0, bmax = 0;
	char found[32];
	int rc = -1;

	fr.o.ideal_memory = true;
	SIM_ASSERT(p->ideal);
	/* The work: PE updates by the closed form (ideal memory), and the closed form's cycles. */
	pes = cfg->arch.array.rows * cfg->arch.array.cols;
	updates = p->gemm_compute_cycles > INT64_MAX / pes ? INT64_MAX : p->gemm_compute_cycles * pes;
	cycles = p->cycles;
	if (updates > cfg->arch.sim.max_pe_updates) {
		err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected at most %lld PE updates for the functional model "
		       "(sim.max_pe_updates), found %s; use --model cycle, a smaller workload or array, or raise "
		       "sim.max_pe_updates", (long long)cfg->arch.sim.max_pe_updates, shown(found, sizeof found, updates));
		goto out;
	}
	if (run_check_limits(cfg, w->file, o->model, 0, cycles, e) < 0)
		goto out;
	if (cfg->arch.array.scalesim_compat) {
		err_at(e, config_origin(cfg, "array.scalesim_compat"), "array.scalesim_compat", "expected false for --model "
		       "functional (it times folds by the register rules, not SCALE-Sim's), found true");
		goto out;
	}
	if (config_check_rate(cfg, "--model functional", e) < 0)
		goto out;                       /* before any op runs; func_run refuses it too (tpusim lab) */
	if (!(out->checks = calloc(out->n ? out->n : 1, sizeof *out->checks)))
		goto nomem;
	for (size_t i = 0; i < ops->n; i++) {
		if (ops->v[i].kind != OP_GEMM)
			continue;
		ngemm++;
		amax = max64(amax, ops->v[i].m * ops->v[i].k);
		bmax = max64(bmax, ops->v[i].k * ops->v[i].n);
	}
	if (o->keep_outputs && ngemm && !(out->outputs = calloc((size_t)ngemm, sizeof *out->outputs)))
		goto nomem;
	if ((amax && !(a = malloc((size_t)amax * sizeof *a))) || (bmax && !(b = malloc((size_t)bmax * sizeof *b))))
		goto nomem;
	if (check_files(&fr, a, b, e) < 0)
		goto out;
	if (o->vcd) {
		char path[LIMIT_PATH_BUF], how[160];
		/* the GEMMs' cycles: only they change the signals */
		snprintf(how, sizeof how, "%lld cycles of GEMMs x (%lld x %lld PEs x %d signals + 3) x %d bytes",
			 (long long)(updates / pes), (long long)cfg->arch.array.rows, (long long)cfg->arch.array.cols,
			 FUNC_VCD_SIGNALS, FUNC_VCD_CHANGE_BYTES);
		if (run_check_trace_bytes(cfg, "--vcd", func_vcd_bytes(cfg, updates / pes), how,
					  "use a smaller GEMM, or tpusim lab", e) < 0)
			goto out;
		snprintf(path, sizeof path, "%s.vcd", o->vcd);
		if (!(fr.vcd = func_vcd_open(cfg, o->dataflow, path, e)))
			goto out;
	}
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		struct result r;
		if (stop_check(e) < 0)
			goto out;
		if (op->kind != OP_GEMM) {
			if (analytic_plan_op(p, i, &r, e) < 0)
				goto out;
		} else {
			double *c = NULL;
			if (o->keep_outputs) {
				struct run_output *ro = &out->outputs[out->noutputs];
				op_name(op, ro->name, sizeof ro->name);
				ro->op = i;
				ro->m = op->m, ro->n = op->n;
				ro->ints = cfg->arch.array.dtype == DT_INT8;
				if (!(c = ro->c = malloc((size_t)(op->m * op->n) * sizeof *c)))
					goto nomem;
				out->noutputs++;
			}
			if (op_operands(&fr, op, i, a, b, &out->drew, e) < 0)
				goto out;
			/* The op's fixed time comes first (the closed form's plan_bound_op): the GEMM starts after it. */
			int64_t start = fr.base, fixed = arch_op_fixed_cycles(&cfg->arch);
			fr.base = start + fixed;
			if (fr.vcd) {
				char name[OP_NAME_MAX];
				func_vcd_set_op(fr.vcd, op_name(op, name, sizeof name), fr.base);
			}
			if (func_gemm(&fr, i, a, b, c, &r, &out->checks[oplist_row(ops, op)], e) < 0)
				goto out;
			r.cat[CAT_OP_FIXED] += fixed;
			r.cycles += fixed;
			fr.base = start;
		}
		fr.base += r.cycles;
		if (run_add_result(w, oplist_row(ops, op), &r, out, e) < 0)
			goto out;
	}
	for (size_t l = 0; l < out->n; l++) {
		out->check.outputs += out->checks[l].outputs;
		out->check.mismatches += out->checks[l].mismatches;
		out->check.max_abs_error = out->check.max_abs_error > out->checks[l].max_abs_error ?
					   out->check.max_abs_error : out->checks[l].max_abs_error;
	}
	for (size_t l = 0; l < out->n; l++)
		if (out->checks[l].mismatches) {
			const struct oprow *row = ops->rows ? &ops->rows[l] : NULL;
			err_sim(e, "functional model: layer %s%s%s: %lld of %lld outputs differ from the reference GEMM by more "
				"than the error bound (largest error %.6g); %lld of %lld in the whole run",
				w->layers[row ? row->layer : l].name, row && row->phase ? ", " : "",
				row && row->phase ? step_phase_names[row->phase] : "",
				(long long)out->checks[l].mismatches, (long long)out->checks[l].outputs,
				out->checks[l].max_abs_error, (long long)out->check.mismatches,
				(long long)out->check.outputs);
			goto out;
		}
	/* the trace is finished only by a run that succeeds: a failed run writes nothing */
	if (fr.vcd) {
		func_vcd *v = fr.vcd;
		fr.vcd = NULL;
		if (func_vcd_close(v, out->total.cycles, e) < 0)
			goto out;
	}
	rc = 0;
	goto out;
nomem:
	err_nomem(e, "functional model");
out:
	func_vcd_abandon(fr.vcd);
	free(a);
	free(b);
	return rc;
}

int run_add_result(const struct workload *w, size_t row, const struct result *r, struct run *out, struct err *e)
{
	/* The engine's stalls past the margin: refused when seen, never summed past int64. */
	if (r->cycles > RUN_MAX_CYCLES - out->total.cycles)
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL,
			      "expected a workload that takes at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " cycles in all, found more");
	SIM_ASSERT(row < out->n);
	result_add(&out->layers[row], r);
	result_add(&out->total, r);
	return 0;
}

/* Op i's result into the run's op_results, when it keeps them. */
static void keep_op(struct run *out, size_t i, const struct result *r)
{
	if (out->op_results && i < out->nops)
		out->op_results[i] = *r;
}

/* Reuse in one run (opcache.h): the cache and the run's key parts; cache NULL: none. */
struct reuse {
	struct opcache *cache;
	uint64_t cfg;
	const struct run_opts *o;
};

/* Op's cached result into *r: true when there was one. */
static bool reused(const struct reuse *ru, const struct op *op, struct opkey *k, struct result *r)
{
	const struct result *got;
	if (!ru->cache)
		return false;
	opcache_key(k, ru->cfg, ru->o->model, ru->o->dataflow, ru->o->ideal_memory, op);
	if (!(got = opcache_get(ru->cache, k)))
		return false;
	*r = *got;
	return true;
}

/* What the engine's fold ticks need to report the run's progress (run_opts.progress). */
struct ticker {
	const struct run_opts *o;
	struct run_progress p;
	const struct plan *plan;
	size_t i0;                      /* the pass's first op */
};

static void tick(void *ctx, size_t op, int64_t folds)
{
	struct ticker *t = ctx;
	const struct chip_part *pt = plan_parts(t->plan, op);
	(void)t->i0;
	t->p.op = op;
	t->p.op_folds_done = folds;
	t->p.op_folds = pt->op ? engine_op_folds(t->plan->cfg, pt->op, pt->s) : 0;
	t->o->progress(t->o->progress_ctx, &t->p);
}

static void ops_done(const struct run_opts *o, size_t done, size_t ops)
{
	if (o->progress)
		o->progress(o->progress_ctx, &(struct run_progress){ done, ops, done, 0, 0 });
}

/*
 * The cycle model on the plan: passes of ops through engine_run (chip:
 * up to RUN_KEEP_PLANS op parts a pass; else one op a pass, each looked up
 * in ru first).
 */
static int run_engine(engine *en, const struct plan *p, const struct run_opts *o, const struct workload *w,
		      bool chip, const struct reuse *ru, struct run *out, struct err *e)
{
	const struct oplist *ops = &p->ops;
	size_t arrays = (size_t)p->arrays;
	size_t most = chip ? RUN_KEEP_PLANS / arrays : 1;
	if (most > ops->n)
		most = ops->n ? ops->n : 1;
	struct result *res = calloc(most, sizeof *res);
	int rc = -1;
	struct ticker tk = { o, { 0, ops->n, 0, 0, 0 }, p, 0 };
	struct opkey key;

	if (!res) {
		err_nomem(e, NULL);
		goto out;
	}
	if (o->progress)
		engine_on_folds(en, tick, &tk);
	for (size_t i0 = 0; i0 < ops->n; i0 += most) {
		size_t n = ops->n - i0 < most ? ops->n - i0 : most;
		tk.i0 = i0;
		if (stop_check(e) < 0)
			goto out;
		if (!chip && reused(ru, &ops->v[i0], &key, &res[0])) {
			if (run_add_result(w, oplist_row(ops, &ops->v[i0]), &res[0], out, e) < 0)
				goto out;
			keep_op(out, i0, &res[0]);
			ops_done(o, tk.p.done = i0 + 1, ops->n);
			continue;
		}
		if (engine_run(en, ops, i0, n, plan_parts(p, i0), chip, res, e) < 0)
			goto out;
		for (size_t k = 0; k < n; k++) {
			const struct op *op = &ops->v[i0 + k];
			int by = p->v[i0 + k].by;
			res[k].compute_cycles = p->v[i0 + k].bound.compute_cycles;
			res[k].split_m_ops = by == SPLIT_M;
			res[k].split_n_ops = by == SPLIT_N;
			res[k].spill_bytes = plan_spill_bytes(p, i0 + k);
			if (run_add_result(w, oplist_row(ops, op), &res[k], out, e) < 0)
				goto out;
			keep_op(out, i0 + k, &res[k]);
			if (!chip && ru->cache && opcache_put(ru->cache, &key, &res[k]) < 0) {
				err_nomem(e, "reuse cache");
				goto out;
			}
		}
		ops_done(o, tk.p.done = i0 + n, ops->n);
	}
	rc = 0;
out:
	engine_on_folds(en, NULL, NULL);
	free(res);
	return rc;
}

/*
 * A chip's cycle run of a workload with a long repeated block, folded
 * (fold.h): 1 when out holds the whole run's results, 0 when nothing folds
 * or no block settled before it would be run whole, -1 with e set.
 */
static int run_folded(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
		      struct err *e)
{
	const struct config *cfg = p->cfg;
	struct reuse none = { NULL, 0, o };
	for (int64_t keep = FOLD_KEEP;; keep *= 2) {
		struct fold f;
		struct oplist ops = { 0 };
		struct plan fp;
		struct run part = { 0 };
		engine *en = NULL;
		size_t *index = NULL;
		int64_t *cycles = NULL;
		int got = fold_workload(w, keep, &f, e), rc = -1;
		if (got <= 0)
			return got;
		if (lower_step(cfg, &f.w, &ops, e) < 0) {
			fold_release(&f);
			return -1;
		}
		if (plan_build(&fp, cfg, &ops, o->dataflow, p->ideal, e) < 0)
			goto done;
		part.n = oplist_nrows(&ops, f.w.n);
		part.rows = ops.rows;
		if (!(part.layers = calloc(part.n ? part.n : 1, sizeof *part.layers)) ||
		    !(cycles = calloc(part.n ? part.n : 1, sizeof *cycles))) {
			err_nomem(e, NULL);
			goto planned;
		}
		if (fold_index(&f, ops.rows, part.n, &index, e) < 0)
			goto planned;
		/* Ops not lowered from w (a list built by hand): nothing stands for them, and the run is run whole. */
		bool mapped = true;
		for (size_t r = 0; r < out->n && mapped; r++)
			mapped = fold_row(&f, index, out->rows ? out->rows[r].layer : r, run_row_phase(out, r)) != SIZE_MAX;
		if (!mapped) {
			keep = 0;
			rc = 1;
			goto planned;
		}
		if (run_check_limits(cfg, w->file, o->model, run_plan_folds(&fp), fp.cycles, e) < 0 ||
		    !(en = engine_new(cfg, o->ideal_memory, e)) || run_engine(en, &fp, o, &f.w, true, &none, &part, e) < 0)
			goto planned;
		for (size_t r = 0; r < part.n; r++)
			cycles[r] = part.layers[r].cycles;
		rc = 0;
		if (fold_steady(&f, index, cycles, FOLD_TOL)) {
			for (size_t r = 0; r < out->n && rc == 0; r++)
				rc = run_add_result(w, r, &part.layers[fold_row(&f, index, out->rows ? out->rows[r].layer : r,
									     run_row_phase(out, r))], out, e);
			out->folded_keep = keep;
			rc = rc < 0 ? -1 : 1;
		}
planned:
		engine_free(en);
		plan_release(&fp);
done:
		free(index);
		free(cycles);
		free(part.layers);
		oplist_release(&ops);
		fold_release(&f);
		if (rc != 0)
			return keep ? rc : 0;
	}
}

int run_model(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
	      struct err *e)
{
	const struct config *cfg = p->cfg;
	const struct oplist *ops = &p->ops;
	engine *en = NULL;
	bool chip = cfg->arch.chip.prefetch_across_ops && !cfg->arch.array.scalesim_compat;
	bool traced = o->vcd || o->trace || o->dram_trace || o->keep_op_results;
	struct reuse ru = { NULL, 0, o };
	struct opcache *own = NULL;

	if (!o->no_reuse && !traced && (o->model == MODEL_ANALYTIC || (o->model == MODEL_CYCLE && !chip))) {
		/* Out of memory is out of memory (exit 3), also for the cache, whose results would be the same. */
		if (!(ru.cache = o->cache ? o->cache : (own = opcache_new())))
			return err_nomem(e, "reuse cache");
		ru.cfg = opcache_config_hash(cfg);
	}
	if (o->model == MODEL_CYCLE && chip && !traced && !o->no_reuse) {
		int got = run_folded(p, w, o, out, e);
		if (got < 0)
			goto fail;
		if (got)
			goto done;
	}
	if (o->model == MODEL_FUNCTIONAL) {
		if (run_functional(p, w, o, out, e) < 0)
			goto fail;
		goto done;
	}
	/*
	 * The cycle model's work is unbounded by its input: count it, and check
	 * the limits, before simulating anything. The analytic model's work is
	 * O(1) an op.
	 */
	int64_t folds = o->model == MODEL_CYCLE ? run_plan_folds(p) : 0;
	if (run_check_limits(cfg, w->file, o->model, folds, p->cycles, e) < 0)
		goto fail;
	if (o->model == MODEL_CYCLE && check_engine_traces(p, o, folds, e) < 0)
		goto fail;
	if (o->model == MODEL_CYCLE) {
		if (!(en = engine_new(cfg, o->ideal_memory, e)))
			goto fail;
		if (o->vcd && engine_trace(en, o->vcd, e) < 0)
			goto fail;
		if (o->trace) {
			struct trace_head h = { cfg, w->name, w->batch, o->dataflow, o->ideal_memory };
			if (engine_trace_events(en, o->trace, &h, e) < 0)
				goto fail;
		}
		if (o->dram_trace && engine_trace_dram(en, o->dram_trace, o->dram_format, e) < 0)
			goto fail;
		if (run_engine(en, p, o, w, chip, &ru, out, e) < 0 || engine_trace_close(en, e) < 0)
			goto fail;
		goto done;
	}
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		struct result r;
		struct opkey key;
		if (stop_check(e) < 0)
			goto fail;
		if (!reused(&ru, op, &key, &r)) {
			if (analytic_plan_op(p, i, &r, e) < 0)
				goto fail;
			if (ru.cache && opcache_put(ru.cache, &key, &r) < 0) {
				err_nomem(e, "reuse cache");
				goto fail;
			}
		}
		if (run_add_result(w, oplist_row(ops, op), &r, out, e) < 0)
			goto fail;
		keep_op(out, i, &r);
	}
done:
	engine_free(en);
	opcache_free(own);
	return 0;
fail:
	if (en)
		engine_trace_abandon(en);
	engine_free(en);
	opcache_free(own);
	return -1;
}

const struct layer *run_row_layer(const struct run *r, const struct workload *w, size_t i)
{
	return &w->layers[r->rows ? r->rows[i].layer : i];
}

int run_row_phase(const struct run *r, size_t i)
{
	return r->rows ? r->rows[i].phase : PH_FORWARD;
}

void run_step_of(const struct run *r, const struct config *cfg, const struct workload *w, struct run_step *s)
{
	double peak = arch_peak_macs_per_s(&cfg->arch);
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < r->n; i++) {
		int ph = run_row_phase(r, i);
		s->cycles[ph] += r->layers[i].cycles;
		s->macs[ph] += r->layers[i].macs;
	}
	/* A pipeline's total is its stages' chips': the step is one chip's share. */
	s->seconds = (double)r->total.cycles / (double)run_stages(r) / (cfg->arch.clock_ghz * 1e9);
	for (size_t i = 0; i < w->n && !s->tokens_per_sample; i++) {
		const struct layer *l = &w->layers[i];
		if (l->type == L_ATTENTION)
			s->tokens_per_sample = l->mode == ATTN_PREFILL ? l->seq : 1;
		else if ((l->type == L_FC || l->type == L_LINEAR || l->type == L_MLP) && l->tokens > 1)
			s->tokens_per_sample = l->tokens;
	}
	s->model_flops = 2.0 * (double)(s->macs[PH_FORWARD] + s->macs[PH_BACKWARD]);
	s->hardware_flops = s->model_flops + 2.0 * (double)s->macs[PH_RECOMPUTE];
	if (s->seconds > 0) {
		s->samples_per_s = (double)w->batch / s->seconds;
		s->tokens_per_s = s->samples_per_s * (double)s->tokens_per_sample;
		s->mfu = s->model_flops / (2 * peak * s->seconds * (double)run_stages(r));
		s->hfu = s->hardware_flops / (2 * peak * s->seconds * (double)run_stages(r));
	}
}

const char *run_row_label(const struct run *r, const struct workload *w, size_t i, char *buf, size_t size)
{
	int ph = run_row_phase(r, i);
	snprintf(buf, size, "%s%s%s", run_row_layer(r, w, i)->name, ph ? " " : "", ph ? step_phase_names[ph] : "");
	return buf;
}

bool run_has_ports(const struct run_opts *o)
{
	return o->model == MODEL_CYCLE && !o->ideal_memory;
}

/* Refuses options the model cannot honour, before anything is planned. */
static int check_opts(const struct workload *w, const struct run_opts *o, struct err *e)
{
	if ((o->trace || o->dram_trace) && o->model != MODEL_CYCLE)
		return err_input(e, "%s: expected --model cycle (only the cycle engine has events to trace), found --model %s",
				 o->trace ? "--trace" : "--dram-trace", run_model_names[o->model]);
	if (w->nfiles && o->model != MODEL_FUNCTIONAL) {
		const struct layer_file *f = &w->files[0];
		return err_at(e, f->at, f->key, "expected --model functional (only the functional model reads operand "
			      "values), found the %s model", run_model_names[o->model]);
	}
	return 0;
}

/* bytes in buf as a user reads them: "12.5 GiB", "3.2 MiB", "200 B". */
static const char *bytes_text(double bytes, char *buf, size_t size)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (u < 4 && bytes >= 1024 * 0.1 * (u ? 1 : 10))
		bytes /= 1024, u++;
	snprintf(buf, size, "%.4g %s", bytes, unit[u]);
	return buf;
}

const char *run_hbm_parts(const struct run_hbm *h, char *buf, size_t size)
{
	char b[40];
	*buf = 0;
	for (int k = 0; k < NEED_N; k++) {
		if (k > NEED_ACTIVATIONS && !h->step)
			continue;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s%s %s", k ? ", " : "", hbm_need_names[k],
			 k == NEED_ACTIVATIONS ? " live at the peak" : "", bytes_text(h->bytes[k], b, sizeof b));
	}
	return buf;
}

const char *run_bytes_text(double bytes, char *buf, size_t size)
{
	return bytes_text(bytes, buf, size);
}

int run_hbm_fit(const struct config *cfg, const struct workload *w, const struct oplist *ops, struct run_hbm *h,
		struct err *e)
{
	return run_hbm_fit_kept(cfg, w, ops, 1, "the run's", h, e);
}

int run_hbm_fit_kept(const struct config *cfg, const struct workload *w, const struct oplist *ops, int64_t kept,
		     const char *whose, struct run_hbm *h, struct err *e)
{
	int eb = array_elem_bytes(cfg->arch.array.dtype);
	int64_t need[NEED_N];
	memset(h, 0, sizeof *h);
	if (lower_hbm_need(ops, need) < 0)
		return err_nomem(e, NULL);
	need[NEED_ACTIVATIONS] = sat_mul(need[NEED_ACTIVATIONS], kept);
	for (int k = 0; k < NEED_N; k++) {
		h->bytes[k] = (double)need[k] * eb;
		h->total += h->bytes[k];
	}
	h->capacity = cfg->arch.hbm.capacity_gib * 1073741824.0;
	h->step = cfg->arch.train.enabled;
	h->fits = h->capacity == 0 || h->total <= h->capacity;
	if (h->fits || cfg->arch.sim.allow_hbm_overflow)
		return 0;
	char parts[400], t[40], hint[160] = "";
	if (cfg->arch.train.enabled && w) {
		int fit = train_fit_hint(cfg, w, h->capacity, hint + 2, sizeof hint - 2);
		if (fit < 0)
			return err_nomem(e, NULL);
		if (!fit)
			snprintf(hint + 2, sizeof hint - 2, "no train.remat or train.microbatches fits");
		memcpy(hint, "; ", 2);
	}
	return err_at(e, config_origin(cfg, "hbm.capacity_gib"), "hbm.capacity_gib",
		      "expected room for %s %s (%s), found %.4g GiB (sim.allow_hbm_overflow: true runs it anyway%s)",
		      whose, bytes_text(h->total, t, sizeof t), run_hbm_parts(h, parts, sizeof parts), cfg->arch.hbm.capacity_gib,
		      hint);
}

int run_on_plan(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
		struct err *e)
{
	memset(out, 0, sizeof *out);
	SIM_ASSERT(p->df == o->dataflow && p->ideal == (o->ideal_memory || o->model == MODEL_FUNCTIONAL));
	if (check_opts(w, o, e) < 0)
		return -1;
	if (p->cfg->arch.mesh.pipeline > 1)
		return run_pipelined(p, w, o, out, e);
	if (run_hbm_fit(p->cfg, w, &p->ops, &out->hbm, e) < 0)
		return -1;
	out->n = oplist_nrows(&p->ops, w->n);
	out->rows = p->ops.rows;
	out->layers = calloc(out->n ? out->n : 1, sizeof *out->layers);
	if (!out->layers)
		return err_nomem(e, NULL);
	if (o->keep_op_results && o->model != MODEL_FUNCTIONAL) {
		out->nops = p->ops.n;
		if (!(out->op_results = calloc(out->nops ? out->nops : 1, sizeof *out->op_results))) {
			run_release(out);
			return err_nomem(e, NULL);
		}
	}
	if (run_model(p, w, o, out, e) < 0) {
		run_release(out);
		return -1;
	}
	return 0;
}

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *lowered,
		 const struct run_opts *o, struct run *out, struct err *e)
{
	struct plan p;
	memset(out, 0, sizeof *out);
	if (check_opts(w, o, e) < 0)
		return -1;
	if (plan_build(&p, cfg, lowered, o->dataflow, o->ideal_memory || o->model == MODEL_FUNCTIONAL, e) < 0)
		return -1;
	int rc = run_on_plan(&p, w, o, out, e);
	plan_release(&p);
	return rc;
}

void run_release(struct run *r)
{
	outputs_release(r);
	free(r->checks);
	r->checks = NULL;
	free(r->layers);
	r->layers = NULL;
	free(r->own_rows);
	r->own_rows = NULL;
	free(r->op_results);
	r->op_results = NULL;
	r->nops = 0;
	run_pipe_free(r->pipe);
	r->pipe = NULL;
	r->rows = NULL;
	r->n = 0;
}
