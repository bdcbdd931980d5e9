/*
 * plan.h - the plan stage: built once per run from the chip and the lowered
 * ops, read by every executor.
 *
 * For every op the plan holds
 *   - its placement: the op as chip placement marks it (place_ops: which
 *     operands stay in on-chip activation storage, which spill);
 *   - its split over the chip's arrays (place_split): a GEMM by N or by M,
 *     whichever the closed form finds faster (then less HBM traffic, then
 *     N), or whole on one array when neither splits it; a vector op over the
 *     cores; on a chip of one array the op itself;
 *   - each part's tile program (schedule.h), planned with one array's view of
 *     the chip (each core's buffers shared evenly by its arrays);
 *   - its closed form: compute is the slowest part's array (or vector unit)
 *     time, memory all its parts' HBM bytes at the memory model's bandwidth
 *     (memory.h), the op's cycles the larger. A collective has no part on
 *     any array: its time is on the pod's links (ici_cost), and its bytes
 *     go from HBM to HBM over them, not counted as HBM traffic (assumed:
 *     the links, not the HBM, bound them).
 * The analytic model is a reduction over the plan (analytic_plan_op), the
 * cycle engine runs its parts, the functional model runs its GEMM parts
 * register by register, compare counts its re-reads, the reuse cache keys
 * on its placed ops and the run's limits read its sums. Nobody plans again.
 *
 * Memory: O(ops x arrays) part entries of 16 bytes, one tile program a GEMM
 * part (about 240 bytes) and a copy of each split op's parts.
 */
#ifndef TPUSIM_PLAN_H
#define TPUSIM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "chip.h"
#include "config.h"
#include "limit.h"
#include "lower.h"
#include "schedule.h"
#include "stats.h"

/* The closed form of one op or part: the array's (or vector unit's) time, the HBM bytes and the memory bound. */
struct plan_bound {
	int64_t compute_cycles;         /* no memory waits; INT64_MAX past 64 bits */
	int64_t read_bytes, write_bytes;        /* HBM */
	int64_t memory_cycles;          /* the bytes at the memory model's bandwidth; 0 with ideal memory */
	int64_t fixed_cycles;           /* the op's fixed time (arch_op_fixed_cycles): the loads run on */
	int64_t comm_cycles;            /* a collective: its time on the pod's links alone (models/ici.h) */
	int64_t cycles;                 /* max(fixed + compute, memory); a collective: fixed + comm */
};

/* One op of the plan. */
struct plan_op {
	int by;                         /* enum split_by: how its parts were cut */
	struct plan_bound bound;        /* the op's closed form over its parts */
};

struct plan {
	const struct config *cfg;       /* borrowed: the chip */
	struct arch array;              /* one array's view of the chip: its share of each core's buffers */
	int df;                         /* enum dataflow */
	bool ideal;                     /* ideal memory and unbounded buffers (--ideal-memory, the functional model) */
	int arrays;                     /* arch_arrays */
	struct oplist ops;              /* the placed ops (their tensors borrowed from the lowered ops) */
	struct plan_op *v;              /* owned: ops.n entries */
	/*
	 * owned: ops.n x arrays. Op i's part on array q is parts[i * arrays + q]
	 * (op NULL: the array sits the op out); a GEMM part's tile program is
	 * parts[..].s. On a chip of one array, part i is ops.v[i] itself.
	 */
	struct chip_part *parts;
	struct sched *scheds;           /* owned: the GEMM parts' tile programs */
	struct op *part_ops;            /* owned: the ops split over several arrays, their parts */
	int64_t cycles;                 /* the closed form's cycles over all ops, saturating at INT64_MAX */
	int64_t gemm_compute_cycles;    /* the GEMM parts' compute cycles summed, saturating (the functional model's work) */
};

/*
 * Plans every op of lowered (borrowed; the plan borrows its tensors and
 * names, so it must outlive the plan) on cfg's chip (borrowed) for
 * dataflow df. Checks every op against ANALYTIC_MAX_CYCLES by its closed
 * form. Returns 0, or -1 with e set: a buffer too small for an op's
 * smallest tiles (positioned at the key to grow), an op too long, out of
 * memory. On failure p is released.
 */
int plan_build(struct plan *p, const struct config *cfg, const struct oplist *lowered, int df, bool ideal,
	       struct err *e);
void plan_release(struct plan *p);

/* Op i's parts: arrays entries (plan.parts). */
const struct chip_part *plan_parts(const struct plan *p, size_t i);

/*
 * Plans one GEMM op (or part) for df on a (one array's view of cfg's chip):
 * sched_plan, with what fell short positioned at the config key's origin in
 * cfg. Returns 0 or -1 with e set.
 */
int plan_gemm(struct sched *s, const struct op *op, const struct config *cfg, const struct arch *a, int df,
	      bool ideal, struct err *e);

/*
 * The closed form of op o planned as s (NULL for a vector op) on a: the
 * GEMM's fold grid (array_grid_cycles) or the vector unit's time, its HBM
 * bytes, and those bytes at the memory model's bandwidth unless ideal. O(1).
 */
void plan_bound_op(const struct arch *a, const struct op *o, const struct sched *s, bool ideal, struct plan_bound *b);

/* Bytes of collective o's array (V of models/ici.h), its elements at its dtype or the run's; 0 for a forward identity. */
int64_t plan_coll_bytes(const struct arch *a, const struct op *o);

/* Collective o's closed form on a's pod (ici_cost), and its time in cycles (rounded up). */
int64_t plan_coll_cycles(const struct arch *a, const struct op *o, struct ici_cost *c);

/*
 * A collective's counts in r, the same in every model: collective_ops 1,
 * comm_cycles its time alone on the links (plan_bound_op: exposed_comm
 * says what of it showed), link_bytes (ici_cost).
 */
void plan_coll_counts(const struct arch *a, const struct op *o, bool ideal, struct result *r);

/*
 * Checks b, the closed form of op o, against ANALYTIC_MAX_CYCLES (the
 * longest op any model simulates); 0 or -1 with e set at the op's layer.
 */
int plan_check_op(const struct op *o, const struct plan_bound *b, struct err *e);

/* The HBM bytes of op i's parts that move activations that did not fit on chip (place_spill_bytes). */
int64_t plan_spill_bytes(const struct plan *p, size_t i);

#endif
