/*
 * run.h - one simulation: a config, a workload and options in, results out.
 *
 * run_workload is a pure function of its inputs: it lowers nothing and writes
 * nothing, it evaluates each op of an already lowered workload and sums the
 * results per layer and in total. Sweeps and comparisons call it many times.
 */
#ifndef TPUSIM_RUN_H
#define TPUSIM_RUN_H

#include <stdbool.h>

#include "analytic.h"
#include "config.h"
#include "lower.h"
#include "schedule.h"
#include "workload.h"

enum model { MODEL_ANALYTIC, MODEL_CYCLE };

/*
 * Limits. A run is refused (an input error, exit status 2) before any op is
 * simulated when
 *   - the cycle model would run more than sim.max_folds folds (a GEMM's fold
 *     instructions, a vector op's chunks: engine_op_folds, summed from the
 *     plans in O(ops)): its wall time grows with them, a few million a
 *     second, whatever the cycles; the analytic model has no such limit;
 *   - the closed form's cycles (analytic_cycles) sum to more than
 *     RUN_MAX_EST_CYCLES, for either model. The analytic model reports that
 *     sum; the cycle engine adds stalls to it, which the margin to
 *     RUN_MAX_CYCLES leaves room for (16x). A cycle run that still passes
 *     RUN_MAX_CYCLES is refused at the op that passes it. No sum wraps: every
 *     estimate saturates at INT64_MAX, and the engine's clock counts to
 *     INT64_MAX (scw.h).
 * Each op is also held to ANALYTIC_MAX_CYCLES by the closed form (analytic.h).
 */
#define RUN_MAX_CYCLES (INT64_C(1) << 62)       /* so that every sum of a run's counts fits in int64 */
#define RUN_MAX_EST_CYCLES (INT64_C(1) << 58)   /* RUN_MAX_CYCLES / 16 */

struct run_opts {
	int dataflow;                   /* enum dataflow */
	int model;                      /* enum model */
	bool ideal_memory;
	const char *vcd;                /* cycle model: trace to this path + ".vcd", or NULL */
};

struct run {
	struct result *layers;          /* owned; one per workload layer */
	size_t n;
	struct result total;
};

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run_opts *o, struct run *out, struct err *e);
void run_release(struct run *r);

/* A cycle run keeps the plans of workloads of at most this many ops (about 300 B each), else plans twice. */
#define RUN_KEEP_PLANS 65536

/*
 * Plans every op of ops as run_workload would (checking each, as it does)
 * and sums the cycle model's work (*folds) and the closed form's cycles
 * (*cycles), each saturating at INT64_MAX. plans: NULL, or ops->n entries
 * that receive the GEMMs' plans (a vector op's entry is left as it was).
 * O(ops). Returns 0 or -1 with e set.
 */
int run_estimate(const struct config *cfg, const struct oplist *ops, const struct run_opts *o, struct sched *plans,
		 int64_t *folds, int64_t *cycles, struct err *e);

/*
 * The limits above, for a run of model with those estimates; file names
 * the workload in the message, e.g. "w.yaml: expected at most 100 folds for
 * the cycle model (sim.max_folds), found 101; use --model analytic, a bigger
 * array, or raise sim.max_folds". Returns 0 or -1 with e set (ERR_INPUT).
 */
int run_check_limits(const struct config *cfg, const char *file, int model, int64_t folds, int64_t cycles,
		     struct err *e);

#endif
