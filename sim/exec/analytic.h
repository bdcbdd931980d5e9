/*
 * analytic.h - the closed-form model: cycles of a tile program without running it.
 *
 * Compute cycles follow the array's fold timing (array.h) over the fold order
 * of the schedule (schedule.h), summed in closed form in O(1) per op. Memory
 * is a bound, not a simulation: an op takes max(compute, HBM bytes / bytes
 * per cycle) cycles, and with ideal memory just its compute cycles. This model
 * is the instant estimate for sweeps and the oracle the cycle engine must
 * match under ideal memory.
 */
#ifndef TPUSIM_ANALYTIC_H
#define TPUSIM_ANALYTIC_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "limit.h"
#include "lower.h"
#include "plan.h"
#include "schedule.h"
#include "stats.h"


/* Compute cycles of a planned GEMM (INT64_MAX when past 64 bits). */
int64_t analytic_gemm_cycles(const struct sched *s);

/*
 * Checks that op o, planned as s (NULL for a vector op; borrowed), takes at
 * most ANALYTIC_MAX_CYCLES by the closed form's bound (compute, or memory
 * unless ideal): the longest op either model simulates. Run before any model
 * evaluates the op. *compute_cycles receives the closed form's compute time
 * (the array or vector unit busy, fill and drain included, no memory
 * waits), which the cycle engine's results report as theirs.
 */
int analytic_check(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal,
		   int64_t *compute_cycles, struct err *e);

/*
 * The closed form's cycles of op o planned as s (NULL for a vector op):
 * max(compute, memory unless ideal), INT64_MAX past 64 bits, not checked
 * against ANALYTIC_MAX_CYCLES. What analytic_op reports; the cycle engine's
 * result without its stalls. O(1).
 */
int64_t analytic_cycles(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal);

/* Evaluates one op planned as s (NULL for a vector op; borrowed); fails as analytic_check does. */
int analytic_op(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal, struct result *r,
		struct err *e);

/*
 * Op i of plan p, evaluated by the closed form: on one array, the op as
 * planned; split over several, its parts run together (compute the slowest
 * part's, memory all their HBM bytes at the chip's bandwidth, categories the
 * slowest part's with the memory time beyond compute added as for one op,
 * counts summed). With the split and the spill bytes. Fails as
 * analytic_check does.
 */
int analytic_plan_op(const struct plan *p, size_t i, struct result *r, struct err *e);

/* Cycles the array streams (the sum of T over folds) of a planned GEMM: its compute category. */
int64_t analytic_stream_cycles(const struct sched *s);

/*
 * Cycles the array shifts stationary tiles in while nothing streams, of a
 * planned GEMM: its weight_shift category (models/cat.h; 0 in os). The rest
 * of analytic_gemm_cycles beyond the streams and these is fill_drain.
 */
int64_t analytic_shift_cycles(const struct sched *s);

#endif
