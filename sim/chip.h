/*
 * chip.h - the chip around the arrays: how many arrays, and what stays on chip
 * between ops.
 *
 * Keys chip.*: cores (each with its SRAM buffers, sram.*, and vector unit),
 * arrays per core (sharing the core's SRAM and vector unit; all cores share
 * the off-chip memory, hbm.*), and the two switches that make a network run
 * as a chip runs it instead of layer by layer:
 *
 *   keep_activations     a tensor that an op writes stays in on-chip activation
 *                        storage (chip.activation_kib) from its producer to its
 *                        last reader when it fits beside the tensors already
 *                        held there; one that does not fit spills: it is
 *                        written to HBM and read back, and those bytes are
 *                        counted as spill. The network's inputs are read once,
 *                        its outputs written once.
 *   prefetch_across_ops  the load queue runs on into the next ops' weight tiles
 *                        while buffer space allows, and an op starts when its
 *                        inputs exist, not when the previous op's stores
 *                        reach HBM.
 *
 * Both off (the default, and always under array.scalesim_compat): every op
 * reads its operands from HBM and writes its result back, one after another.
 */
#ifndef TPUSIM_CHIP_H
#define TPUSIM_CHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"
#include "err.h"
#include "limit.h"

struct chip_params {
	int64_t cores;                  /* TensorCores */
	int64_t arrays_per_core;        /* systolic arrays (MXUs) per core */
	bool keep_activations;
	bool prefetch_across_ops;
	int64_t activation_kib;         /* on-chip activation storage, whole chip; 0 = auto (see chip.c) */
};

extern const struct cfg_key chip_keys[];

struct config;
struct op;
struct sram_params;
struct oplist;
struct sched;

/* One array's share of an op: a part of a GEMM (planned as s) or of a vector op; op NULL: none. */
struct chip_part {
	const struct op *op;            /* borrowed */
	const struct sched *s;          /* borrowed; a GEMM part's plan */
};

/* How an op is shared out over the arrays. */
enum split_by { SPLIT_NONE, SPLIT_M, SPLIT_N };

/*
 * The parts of op o over the chip's arrays, into part[0 .. arrays): a GEMM
 * split by M (rows of A and C) or N (columns of B and C), in whole array
 * tiles (ws and os: N in columns of the array, os M in its rows; is: M in
 * columns), as evenly as those allow; a vector op split over the cores (on
 * the first array of each), by elements. Each part is a copy of o with its
 * share; arrays that get nothing get a part with `kind` OP_VEC and no work
 * (chip_part_empty). Returns how many parts have work (1: not split).
 */
int chip_split(const struct config *cfg, const struct op *o, int by, int df, struct op *part);

/* True when part p has no work: its array sits the op out. */
bool chip_part_empty(const struct op *p);

/* One array's share of its core's buffers: sram.*.kib / arrays_per_core, at least 1 KiB each. */
void chip_array_sram(const struct config *cfg, struct sram_params *out);

/*
 * The config one array plans with: each core's buffers shared evenly by its
 * arrays (sram.*.kib / arrays_per_core, at least 1 KiB). Everything else as cfg.
 */
void chip_array_config(const struct config *cfg, struct config *out);

/* Bytes of on-chip activation storage: chip.activation_kib, or auto: cores x the inputs buffer's pool. */
int64_t chip_activation_bytes(const struct config *cfg);

/* True when cfg keeps activations on chip (chip.keep_activations, never under array.scalesim_compat). */
bool chip_keeps(const struct config *cfg);

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
 * Without chip_keeps every op is left as lowered (all in HBM). Returns 0, or
 * -1 with e set (out of memory).
 */
int chip_place(const struct config *cfg, struct oplist *ops, struct err *e);

/*
 * The HBM bytes of op o (planned as s, NULL for a vector op) that move
 * activations that did not fit on chip: the spill traffic, part of the
 * op's HBM bytes.
 */
int64_t chip_spill_bytes(const struct config *cfg, const struct op *o, const struct sched *s);

#endif
