/*
 * run.h - one simulation: a config, a workload and options in, results out.
 *
 * run_workload is a pure function of its inputs: it writes nothing, it
 * evaluates each op of an already lowered workload (as lower_step lowers it)
 * and sums the results per layer and in total. Sweeps and comparisons call it
 * many times. Its one lowering: a chip's cycle run of a long repeated block
 * lowers the block folded (fold.h) and runs that instead, unless no_reuse.
 */
#ifndef TPUSIM_RUN_H
#define TPUSIM_RUN_H

#include <stdbool.h>

#include "analytic.h"
#include "config.h"
#include "limit.h"
#include "lower.h"
#include "plan.h"
#include "workload.h"

enum model { MODEL_ANALYTIC, MODEL_CYCLE, MODEL_FUNCTIONAL };
extern const char *const run_model_names[];     /* "analytic", "cycle", "functional" */

/*
 * Limits. A run is refused (an input error, exit status 2) before any op is
 * simulated when
 *   - the cycle model would run more than sim.max_folds folds (a GEMM's fold
 *     instructions, a vector op's chunks: engine_op_folds, summed from the
 *     plans in O(ops)): its wall time grows with them, a few million a
 *     second, whatever the cycles; the analytic model has no such limit;
 *   - the functional model would run more than sim.max_pe_updates PE
 *     register updates: the closed form's cycles with ideal memory times the
 *     array's rows x cols, summed over the GEMMs (each part's on a chip of
 *     several arrays); a few ns each;
 *   - the closed form's cycles (analytic_cycles) sum to more than
 *     RUN_MAX_EST_CYCLES, for either model. The analytic model reports that
 *     sum; the cycle engine adds stalls to it, which the margin to
 *     RUN_MAX_CYCLES leaves room for (16x). A cycle run that still passes
 *     RUN_MAX_CYCLES is refused at the op that passes it. No sum wraps: every
 *     estimate saturates at INT64_MAX, and the engine's clock counts to
 *     INT64_MAX (scw.h).
 * Each op is also held to ANALYTIC_MAX_CYCLES by the closed form (analytic.h).
 */

/* The functional model's operands when none is given: the command line's --seed and the library's "seed" default. */
#define RUN_DEFAULT_SEED 1

/* How far a run has got: ops done of ops, and of the op running now, its fold instructions done of folds. */
struct run_progress {
	size_t done, ops;
	size_t op;                      /* the op running now (done, when between ops) */
	int64_t op_folds_done, op_folds;        /* 0 of 0 when not known */
};

struct opcache;

struct run_opts {
	int dataflow;                   /* enum dataflow */
	int model;                      /* enum model */
	bool ideal_memory;              /* the functional model always has ideal memory */
	const char *vcd;                /* trace to this path + ".vcd", or NULL (cycle: the engine's; functional: every PE) */
	const char *trace;              /* cycle: the event trace (trace.h) to this path, or NULL */
	const char *dram_trace;         /* cycle: every off-chip request to this path, or NULL */
	int dram_format;                /* its format: enum trace_dram_format */
	uint64_t seed;                  /* functional: random operands (those not read from .npy files) */
	bool keep_outputs;              /* functional: keep every GEMM op's result in run.outputs */
	bool keep_op_results;           /* analytic and cycle: keep every op's result in run.op_results (no folding) */
	/*
	 * Reuse (opcache.h): an op identical to one already simulated takes its
	 * result, when ops are independent: the analytic model, and the cycle
	 * model layer by layer (not chip.prefetch_across_ops) without a trace
	 * (vcd, trace, dram_trace).
	 * cache: a caller's cache, kept across runs; NULL: the run's own.
	 */
	bool no_reuse;                  /* simulate every op, and every instance of a block (no folding, fold.h) */
	struct opcache *cache;
	/* Called after each op and within long GEMM ops (cycle model), from the running thread; may be NULL. */
	void (*progress)(void *ctx, const struct run_progress *p);
	void *progress_ctx;
};

/*
 * The functional model (sim/exec/functional.h) runs every GEMM op register by
 * register on the plan the engine uses with ideal memory (functional implies
 * ideal memory): the op's cycles and categories are the registers'; its
 * bytes, energy and SRAM traffic the closed form's for the same plan. Vector
 * ops take the closed form's ideal-memory numbers. Operands: a matmul
 * layer's a_npy and b_npy files (workload.h), else random in the dtype, from
 * opts.seed and the op's index. On a chip of several arrays each op's parts
 * run on their arrays, the op taking the slowest part's cycles. Every
 * repeated instance runs. A run whose outputs differ from the reference
 * beyond the bound fails (ERR_SIM); the other models refuse a workload that
 * names .npy files, which they would not read.
 */
struct run_check {
	int64_t outputs;                /* elements of C compared with the reference, over every instance */
	int64_t mismatches;             /* beyond func_bound (ints: not equal) */
	double max_abs_error;
};

struct run_output {
	char name[OP_NAME_MAX];         /* the op's name (op_name) */
	size_t op;                      /* the op's index in the run's ops */
	int64_t m, n;
	bool ints;                      /* int8 operands: int32 results */
	double *c;                      /* owned: m x n, row-major */
};

/* What a run keeps in HBM against what the memory holds (run_hbm_fit). */
struct run_hbm {
	double bytes[NEED_N];           /* by part (enum hbm_need of lower.h) */
	double total;
	double capacity;                /* bytes; 0: not checked */
	bool step;                      /* a training step's: gradients and optimizer state are parts */
	bool fits;
};

struct run {
	struct run_hbm hbm;
	struct result *layers;          /* owned; one per result row: a layer, or a layer's phase of a training step */
	size_t n;
	const struct oprow *rows;       /* borrowed from the lowered ops (oplist.rows): what each row is; NULL: row i is layer i */
	struct result total;
	int64_t folded_keep;            /* a chip's cycle run of a long repeated block: the instances it ran first (fold.h); 0: every one */
	/*
	 * A pipeline (mesh.pipeline, pipeline.h): its stages, one chip of each
	 * simulated. The rows are every stage's chip's, over the step's
	 * microbatches, then each stage's bubble (phase bubble, at its first
	 * layer): the total is the stages' chips' cycles, stages x the step's,
	 * and its ratios (utilization, categories, power) those of the average
	 * chip. 1: no pipeline.
	 */
	int64_t stages;
	struct oprow *own_rows;         /* owned: the rows of a pipeline's run (rows points here) */
	struct run_pipe *pipe;          /* owned: with keep_op_results, its stages' ops and results (run_pipe_ops) */
	struct run_check *checks;       /* functional: owned, one per layer; else NULL */
	struct run_check check;         /* functional: the whole run */
	bool drew;                      /* functional: an operand was drawn from the seed (not every one from a file) */
	struct run_output *outputs;     /* functional with keep_outputs: owned, one per GEMM op, in op order */
	struct result *op_results;      /* keep_op_results: owned, one per op of the plan, in op order */
	size_t nops;
	size_t noutputs;
};

/*
 * Whether the run's model has SRAM port widths: the cycle model without
 * ideal memory. The analytic model times folds by the closed form, and ideal
 * memory gives every port unbounded bandwidth (sram.h): a narrow port
 * changes neither.
 */
bool run_has_ports(const struct run_opts *o);

/*
 * A step as a training user reads it (any run: inference is a step of one
 * phase). Model FLOPs are 2 x the forward and backward GEMMs' MACs, hardware
 * FLOPs those and the recomputed ones; MFU and HFU divide them by the step
 * time x the peak of array.dtype (arch_peak_macs_per_s). Tokens: a sample's
 * tokens are its first attention layer's seq, else its first fc, linear or
 * mlp layer's tokens when more than 1; none (0) for a workload of neither
 * (a CNN: samples are images).
 */
struct run_step {
	int64_t cycles[PH_N], macs[PH_N];
	double seconds;                 /* the step's time */
	double samples_per_s, tokens_per_s;
	int64_t tokens_per_sample;      /* 0: none */
	double model_flops, hardware_flops, mfu, hfu;
};

void run_step_of(const struct run *r, const struct config *cfg, const struct workload *w, struct run_step *s);

/*
 * cfg's pipeline stages over w (mesh.pipeline, sim/run/pipeline.h), ops w
 * lowered (for the MACs): the first layer of each into first[0 .. P]
 * (first[P] = w->n). Returns 0, or -1 with e set at mesh.pipeline.
 */
int run_pipe_cut(const struct config *cfg, const struct workload *w, const struct oplist *ops, size_t *first,
		 struct err *e);

/* The bytes of one microbatch that stage s sends stage s + 1 (its last layer's output), into bytes[0 .. P - 2]. */
int run_pipe_sends(const struct config *cfg, const struct workload *w, const size_t *first, double *bytes,
		   struct err *e);

/*
 * Stage s of a pipeline's run (run.pipe): its chip's ops at one microbatch,
 * their results (*res, one per op), and the bytes it sends the next stage.
 */
const struct oplist *run_pipe_ops(const struct run_pipe *pp, int64_t s, const struct result **res, double *send_bytes);
void run_pipe_free(struct run_pipe *pp);

/* The chips r's total adds up: its pipeline stages, or 1. */
static inline int64_t run_stages(const struct run *r)
{
	return r->stages > 1 ? r->stages : 1;
}

/* Result row i of r: its workload layer, and its phase (enum step_phase). */
const struct layer *run_row_layer(const struct run *r, const struct workload *w, size_t i);
int run_row_phase(const struct run *r, size_t i);

/* Row i's name in buf: its layer's, then its phase unless forward ("conv1 backward"). Returns buf. */
const char *run_row_label(const struct run *r, const struct workload *w, size_t i, char *buf, size_t size);

/*
 * What the ops keep in HBM (lower_hbm_need, in bytes of the array's dtype)
 * into h, against hbm.capacity_gib: 0, or -1 with e set at that key when it
 * does not fit and sim.allow_hbm_overflow is off; for a training step of w
 * (NULL: none) the message names a recomputation or microbatch count that
 * fits, if one does (train_fit_hint). run_on_plan checks it before it
 * simulates.
 */
int run_hbm_fit(const struct config *cfg, const struct workload *w, const struct oplist *ops, struct run_hbm *h,
		struct err *e);

/*
 * h's parts in buf as messages show them: "weights 64 B, caches 0 B,
 * inputs 8 B, activations live at the peak 8 B", what is live where the
 * run needs the most (then, for a training step, its gradients then and
 * its optimizer state). Returns buf.
 */
const char *run_hbm_parts(const struct run_hbm *h, char *buf, size_t size);

/* bytes in buf as a user reads them: "12.5 GiB", "3.2 MiB", "200 B". Returns buf. */
const char *run_bytes_text(double bytes, char *buf, size_t size);

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run_opts *o, struct run *out, struct err *e);
void run_release(struct run *r);

/*
 * run_workload on a plan already built (plan_build with o's dataflow and
 * ideal memory, or ideal for the functional model): what compare does, to
 * read the plan it ran. p borrowed.
 */
int run_on_plan(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
		struct err *e);


/* The cycle model's work on plan p: engine_op_folds over every op's parts, saturating at INT64_MAX. O(ops). */
int64_t run_plan_folds(const struct plan *p);

/*
 * Plans every op of ops as run_workload would (plan_build, checking each)
 * and gives the cycle model's work (*folds) and the closed form's cycles
 * (*cycles), each saturating at INT64_MAX. Returns 0 or -1 with e set.
 */
int run_estimate(const struct config *cfg, const struct oplist *ops, const struct run_opts *o, int64_t *folds,
		 int64_t *cycles, struct err *e);

/*
 * The limits above, for a run of model with those estimates; file names
 * the workload in the message, e.g. "w.yaml: expected at most 100 folds for
 * the cycle model (sim.max_folds), found 101; use --model analytic, a bigger
 * array, or raise sim.max_folds". Returns 0 or -1 with e set (ERR_INPUT).
 */
int run_check_limits(const struct config *cfg, const char *file, int model, int64_t folds, int64_t cycles,
		     struct err *e);

/*
 * The one cap of a trace's size (sim.max_trace_bytes), for every --vcd and
 * --dram-trace, checked before the run with the writer's own estimate
 * (engine_vcd_bytes, engine_dram_bytes, func_vcd_bytes): "<opt>: expected a
 * file of at most N bytes (sim.max_trace_bytes), found an estimated M bytes
 * (<how>); <hint>, or raise sim.max_trace_bytes (--set
 * sim.max_trace_bytes=M)". Returns 0 or -1 with e set (ERR_INPUT).
 */
int run_check_trace_bytes(const struct config *cfg, const char *opt, int64_t bytes, const char *how, const char *hint,
			  struct err *e);

#endif
