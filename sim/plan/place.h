/*
 * place.h - the first half of planning: where every tensor lives between ops
 * (on chip, in HBM, spilled) and how an op is shared out over the chip's
 * arrays. The plan stage (plan.h) calls these; the chip's keys that drive
 * them are in chip.h.
 */
#ifndef TPUSIM_PLACE_H
#define TPUSIM_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "lower.h"

/*
 * The parts of op o over the chip's arrays, into part[0 .. arrays): a GEMM
 * split by M (rows of A and C) or N (columns of B and C), in whole array
 * tiles (ws and os: N in columns of the array, os M in its rows; is: M in
 * columns), as evenly as those allow; a vector op split over the cores (on
 * the first array of each), by elements. Each part is a copy of o with its
 * share; arrays that get nothing get a part with `kind` OP_VEC and no work
 * (place_part_empty). Returns how many parts have work (1: not split).
 */
int place_split(const struct arch *a, const struct op *o, int by, int df, struct op *part);

/* True when part p has no work: its array sits the op out. */
bool place_part_empty(const struct op *p);

/* One array's share of its core's buffers: sram.*.kib / arrays_per_core, at least 1 KiB each. */
void place_array_sram(const struct arch *a, struct sram_params *out);

/* Bytes of on-chip activation storage: chip.activation_kib, or auto: cores x the inputs buffer's pool. */
int64_t place_activation_bytes(const struct arch *a);

/* True when a keeps activations on chip (chip.keep_activations, never under array.scalesim_compat). */
bool place_keeps(const struct arch *a);

/*
 * Decides where every tensor of ops lives and marks each op's operands
 * (op.onchip, op.spill, op.onchip_elems), in program order, in O(ops):
 *   - an activation stays on chip when, at its producer, it fits in the
 *     activation storage beside the tensors held there (each held from its
 *     producer, or a network input from its first reader, until its last
 *     reader has run); otherwise its producer writes it to HBM and every
 *     reader reads it back: it spills;
 *   - a network input with later readers is read from HBM by its first
 *     reader and then stays when it fits; weights and caches stay in HBM;
 *     a tensor nobody reads (an output of the network) is written to HBM.
 * Without place_keeps every op is left as lowered (all in HBM). Returns 0, or
 * -1 with e set (out of memory).
 */
int place_ops(const struct arch *a, struct oplist *ops, struct err *e);

/*
 * The HBM bytes of op o (planned as s, NULL for a vector op) that move
 * activations that did not fit on chip: the spill traffic, part of the
 * op's HBM bytes.
 */
int64_t place_spill_bytes(const struct arch *a, const struct op *o, const struct sched *s);

#endif
