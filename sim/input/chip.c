/*
 * chip.c - the chip's keys (see chip.h).
 */
#include "chip.h"

#include <stddef.h>

#define F(x) offsetof(struct chip_params, x)
const struct cfg_key chip_keys[] = {
	{ "cores", CFG_INT, F(cores), "", "1", 1, CHIP_MAX_CORES, NULL,
	  "cores on the chip; each has its own SRAM buffers (sram.*) and vector unit, all share the off-chip memory" },
	{ "arrays_per_core", CFG_INT, F(arrays_per_core), "", "1", 1, CHIP_MAX_ARRAYS_PER_CORE, NULL,
	  "systolic arrays per core; they share the core's SRAM buffers and vector unit, and split each op" },
	{ "keep_activations", CFG_BOOL, F(keep_activations), "", "false", 0, 0, NULL,
	  "a tensor an op writes stays on chip until its last reader when it fits (else it spills to HBM)" },
	{ "prefetch_across_ops", CFG_BOOL, F(prefetch_across_ops), "", "false", 0, 0, NULL,
	  "the load queue runs on into the next ops' weights; an op starts when its inputs exist" },
	{ "activation_kib", CFG_AUTO, F(activation_kib), "KiB", "auto", 1, 1 << 30, NULL,
	  "on-chip storage for the activations kept between ops, whole chip; auto: each core's inputs buffer "
	  "(the unified pool when sram.unified)" },
	{ "op_fixed_ns", CFG_DOUBLE, F(op_fixed_ns), "ns", "0", 0, 1e9, NULL,
	  "the fixed time every op (a GEMM, or a vector pass) spends before it computes: launch, synchronisation, "
	  "the pipeline between fusions; the array waits it out, a GEMM's loads do not (none with "
	  "array.scalesim_compat)" },
	CFG_END
};
#undef F
