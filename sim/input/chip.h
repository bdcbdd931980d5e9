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
	double op_fixed_ns;             /* the fixed time of every op (models/cat.h: op_fixed) */
};

extern const struct cfg_key chip_keys[];

struct op;
struct sched;

/* One array's share of an op: a part of a GEMM (planned as s) or of a vector op; op NULL: none. */
struct chip_part {
	const struct op *op;            /* borrowed */
	const struct sched *s;          /* borrowed; a GEMM part's plan */
};

/* How an op is shared out over the arrays. */
enum split_by { SPLIT_NONE, SPLIT_M, SPLIT_N };

#endif
