/*
 * run_pipe.c - a pipeline's run: each stage's chip simulated at one
 * microbatch, the stages scheduled, their rows and bubbles summed
 * (pipeline.h; run.h says what the rows and total then are).
 */
#include <stdlib.h>
#include <string.h>

#include "ici.h"
#include "pipeline.h"
#include "run.h"
#include "run_int.h"
#include "shard.h"
#include "train.h"
#include "xmath.h"

/* n times r, by doubling (n up to 2^20 microbatches): a count a run of n alike microbatches adds. */
static void result_times(struct result *acc, const struct result *r, int64_t n)
{
	struct result x = *r;
	memset(acc, 0, sizeof *acc);
	for (; n > 0; n >>= 1) {
		if (n & 1)
			result_add(acc, &x);
		struct result y = x;
		result_add(&x, &y);
	}
}

/* One stage: its workload, ops and plan, and its chip's run. */
struct run_pipe_stage {
	struct config cfg;              /* the run's at one microbatch (the plan points here) */
	struct workload w;
	struct oplist ops;
	struct plan plan;
	bool planned;
	struct run run;
	size_t *row;                    /* (layer, phase) of w -> its row in run, or SIZE_MAX */
	double send_bytes;              /* what it sends the next stage a microbatch */
};

/* A pipeline's stages, kept with the run for its traces (run_opts.keep_op_results). */
struct run_pipe {
	int64_t stages;
	struct run_pipe_stage *st;
};

static void stage_release(struct run_pipe_stage *s)
{
	run_release(&s->run);
	if (s->planned)
		plan_release(&s->plan);
	oplist_release(&s->ops);
	pipe_stage_release(&s->w);
	free(s->row);
}

/*
 * The bytes a stage sends the next each microbatch: the output of its last
 * layer (of nlayers), as the stage lowered alone (ops) writes it in the
 * forward. (What a later stage reads of an earlier layer, past the stage
 * boundary, is not sent: a transformer's stages read only the block before.)
 */
static double output_bytes(const struct config *cfg, const struct oplist *ops, size_t nlayers)
{
	int32_t out = TENSOR_NONE;
	for (size_t i = 0; i < ops->n; i++)
		if (ops->v[i].layer + 1 == nlayers && ops->v[i].phase == PH_FORWARD && ops->v[i].out != TENSOR_NONE)
			out = ops->v[i].out;
	return out == TENSOR_NONE ? 0 : (double)ops->t[out].elems * array_elem_bytes(cfg->arch.array.dtype);
}

/* The cycles of one microbatch's activations over the pipeline axis's link (a send_recv to the next chip). */
static int64_t send_cycles(const struct config *cfg, const struct lower_pod *lp, const struct run_pipe_stage *s)
{
	double bytes = output_bytes(cfg, &s->ops, s->w.n);
	struct ici_cost c;
	ici_cost(lp->pod, COLL_SEND_RECV, bytes, &lp->g_pipeline, &c);
	double cycles = c.seconds * cfg->arch.clock_ghz * 1e9;
	return cycles >= 0x1p62 ? INT64_MAX / 4 : (int64_t)(cycles + 0.999999);
}

/*
 * Stage k of the pipeline: its layers [a, b) lowered at one microbatch
 * (cfg1), checked against HBM with `kept` microbatches' activations, and
 * simulated; its times into t.
 */
static int run_stage(const struct config *c1, const struct workload *w, const struct run_opts *o, bool ideal,
		     int64_t k, size_t a, size_t b, int64_t batch, int64_t kept, struct run_pipe_stage *s, struct pipe_times *t,
		     struct err *e)
{
	char whose[64];
	const struct config *cfg1 = &s->cfg;
	s->cfg = *c1;
	/* A stage before the last gets its outputs' gradients from the next: no loss. */
	s->cfg.arch.train.grads_given = k + 1 < c1->arch.mesh.pipeline;
	if (pipe_stage(w, a, b, &s->w, e) < 0)
		return -1;
	s->w.batch = batch;
	if (lower_step(cfg1, &s->w, &s->ops, e) < 0)
		return -1;
	snprintf(whose, sizeof whose, "stage %lld's chip's", (long long)k);
	if (run_hbm_fit_kept(cfg1, NULL, &s->ops, kept, whose, &s->run.hbm, e) < 0)
		return -1;
	if (plan_build(&s->plan, cfg1, &s->ops, o->dataflow, ideal, e) < 0)
		return -1;
	s->planned = true;
	struct run_hbm h = s->run.hbm;
	s->run.n = oplist_nrows(&s->ops, s->w.n);
	s->run.rows = s->ops.rows;
	if (!(s->run.layers = calloc(s->run.n ? s->run.n : 1, sizeof *s->run.layers)) ||
	    !(s->row = malloc((s->w.n ? s->w.n : 1) * PH_N * sizeof *s->row)))
		return err_nomem(e, NULL);
	if (o->keep_op_results) {
		s->run.nops = s->ops.n;
		if (!(s->run.op_results = calloc(s->ops.n ? s->ops.n : 1, sizeof *s->run.op_results)))
			return err_nomem(e, NULL);
	}
	if (run_model(&s->plan, &s->w, o, &s->run, e) < 0)
		return -1;
	s->run.hbm = h;
	for (size_t c = 0; c < s->w.n * PH_N; c++)
		s->row[c] = SIZE_MAX;
	memset(t, 0, sizeof *t);
	for (size_t r = 0; r < s->run.n; r++) {
		int ph = run_row_phase(&s->run, r);
		int64_t cyc = s->run.layers[r].cycles;
		s->row[(size_t)(run_row_layer(&s->run, &s->w, r) - s->w.layers) * PH_N + (size_t)ph] = r;
		if (ph == PH_FORWARD)
			t->f += cyc;
		else if (ph == PH_OPTIMIZER)
			t->update += cyc;
		else
			t->b += cyc;
	}
	return 0;
}

void run_pipe_free(struct run_pipe *pp)
{
	for (int64_t s = 0; pp && s < pp->stages; s++)
		stage_release(&pp->st[s]);
	if (pp)
		free(pp->st);
	free(pp);
}

const struct oplist *run_pipe_ops(const struct run_pipe *pp, int64_t s, const struct result **res, double *send_bytes)
{
	*res = pp->st[s].run.op_results;
	*send_bytes = pp->st[s].send_bytes;
	return &pp->st[s].ops;
}

int run_pipe_cut(const struct config *cfg, const struct workload *w, const struct oplist *ops, size_t *first,
		 struct err *e)
{
	int64_t P = cfg->arch.mesh.pipeline;
	int64_t *macs = calloc(w->n ? w->n : 1, sizeof *macs);
	if (!macs)
		return err_nomem(e, NULL);
	for (size_t i = 0; i < ops->n; i++)
		macs[ops->v[i].layer] = sat_add(macs[ops->v[i].layer], op_macs(&ops->v[i]));
	int rc = pipe_split(w, macs, P, first);
	free(macs);
	if (rc < 0) {
		size_t units = 0;
		for (size_t i = 0; i < w->n; i++)
			units += w->layers[i].sub <= 0;
		return err_at(e, config_origin(cfg, "mesh.pipeline"), "mesh.pipeline", "expected at most %zu stages (the "
			      "workload's block instances and layers outside blocks), found %lld", units, (long long)P);
	}
	return 0;
}

int run_pipe_sends(const struct config *cfg, const struct workload *w, const size_t *first, double *bytes,
		   struct err *e)
{
	struct config c1 = *cfg;
	int64_t P = cfg->arch.mesh.pipeline;
	c1.arch.train.microbatches = 1;
	c1.arch.mesh.microbatches = 1;
	int64_t M = cfg->arch.train.enabled ? cfg->arch.train.microbatches : cfg->arch.mesh.microbatches;
	for (int64_t s = 0; s + 1 < P; s++) {
		struct workload ws;
		struct oplist ops = { 0 };
		if (pipe_stage(w, first[s], first[s + 1], &ws, e) < 0)
			return -1;
		ws.batch = w->batch / M;
		c1.arch.train.grads_given = true;
		int rc = lower_step(&c1, &ws, &ops, e);
		bytes[s] = rc < 0 ? 0 : output_bytes(cfg, &ops, ws.n);
		oplist_release(&ops);
		pipe_stage_release(&ws);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int run_pipelined(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
		  struct err *e)
{
	const struct config *cfg = p->cfg;
	const struct arch *ar = &cfg->arch;
	bool train = ar->train.enabled;
	int64_t P = ar->mesh.pipeline, M = train ? ar->train.microbatches : ar->mesh.microbatches;
	const char *mkey = train ? "train.microbatches" : "mesh.microbatches";
	struct lower_pod lp;
	struct config c1 = *cfg;
	struct run_pipe_stage *st = NULL;
	struct pipe_times *t = NULL;
	struct pipe_result pr = { 0 };
	size_t *first = NULL;
	int rc = -1;

	if (o->model == MODEL_FUNCTIONAL)
		return err_at(e, config_origin(cfg, "mesh.pipeline"), "mesh.pipeline", "expected 1 for --model functional (it "
			      "runs one chip's values), found %lld", (long long)P);
	if (shard_place(cfg, &lp, e) < 0)
		return -1;
	if (P * M * (train ? 2 : 1) > PIPE_MAX_TASKS)
		return err_at(e, config_origin(cfg, mkey), mkey, "expected mesh.pipeline x %s%s to be at most %lld, found "
			      "%lld x %lld", mkey, train ? " x 2" : "", (long long)PIPE_MAX_TASKS, (long long)P, (long long)M);
	if (w->batch % (lp.data * lp.fsdp * M))
		return err_at(e, config_origin(cfg, mkey), mkey, "expected mesh.data x mesh.fsdp x %s to divide the batch "
			      "(%lld), found %lld x %lld x %lld", mkey, (long long)w->batch, (long long)lp.data,
			      (long long)lp.fsdp, (long long)M);
	c1.arch.train.microbatches = 1;
	c1.arch.mesh.microbatches = 1;
	if (!(first = malloc((size_t)(P + 1) * sizeof *first)) || !(st = calloc((size_t)P, sizeof *st)) ||
	    !(t = calloc((size_t)P, sizeof *t))) {
		err_nomem(e, NULL);
		goto out;
	}
	if (run_pipe_cut(cfg, w, &p->ops, first, e) < 0)
		goto out;
	for (int64_t s = 0; s < P; s++) {
		/* The microbatches whose activations a stage holds at once: the schedule's. */
		int64_t kept = !train ? 1 : ar->mesh.schedule == PIPE_GPIPE ? M : min64(P - s, M);
		if (run_stage(&c1, w, o, p->ideal, s, first[s], first[s + 1], w->batch / M, kept, &st[s], &t[s], e) < 0)
			goto out;
		if (s + 1 < P) {
			t[s].send = send_cycles(cfg, &lp, &st[s]);
			st[s].send_bytes = output_bytes(cfg, &st[s].ops, st[s].w.n);
		}
		if (s == 0 || st[s].run.hbm.total > out->hbm.total)
			out->hbm = st[s].run.hbm;
	}
	if (pipe_schedule(ar->mesh.schedule, P, M, train, t, &pr, e) < 0)
		goto out;

	/* The rows: every layer's and phase's, as its stage's chip ran them, M times; then each stage's bubble. */
	size_t rows = oplist_nrows(&p->ops, w->n);
	out->n = rows + (size_t)P;
	out->stages = P;
	if (!(out->own_rows = malloc(out->n * sizeof *out->own_rows)) ||
	    !(out->layers = calloc(out->n, sizeof *out->layers))) {
		err_nomem(e, NULL);
		goto out;
	}
	for (size_t r = 0; r < rows; r++)
		out->own_rows[r] = p->ops.rows ? p->ops.rows[r] : (struct oprow){ r, PH_FORWARD };
	for (int64_t s = 0; s < P; s++)
		out->own_rows[rows + (size_t)s] = (struct oprow){ first[s], PH_BUBBLE };
	out->rows = out->own_rows;
	int64_t s = 0;
	for (size_t r = 0; r < rows; r++) {
		size_t layer = out->rows[r].layer;
		int ph = out->rows[r].phase;
		for (s = 0; layer >= first[s + 1]; s++)
			;
		size_t from = st[s].row[(layer - first[s]) * PH_N + (size_t)ph];
		struct result x;
		if (from == SIZE_MAX)
			continue;
		result_times(&x, &st[s].run.layers[from], ph == PH_OPTIMIZER ? 1 : M);
		if (run_add_result(w, r, &x, out, e) < 0)
			goto out;
	}
	for (s = 0; s < P; s++) {
		struct result x = { 0 };
		x.cycles = x.cat[CAT_BUBBLE] = pr.bubble[s];
		if (run_add_result(w, rows + (size_t)s, &x, out, e) < 0)
			goto out;
	}
	rc = 0;
	if (o->keep_op_results) {
		if (!(out->pipe = malloc(sizeof *out->pipe))) {
			rc = err_nomem(e, NULL);
			goto out;
		}
		*out->pipe = (struct run_pipe){ P, st };
		st = NULL;
	}
out:
	for (int64_t s2 = 0; st && s2 < P; s2++)
		stage_release(&st[s2]);
	free(st);
	free(t);
	free(first);
	pipe_result_release(&pr);
	if (rc < 0)
		run_release(out);
	return rc;
}
