/*
 * stats.h - what one op, one layer or a whole run cost, as both models count it.
 *
 * Every cycle of an op's time is in exactly one category of models/cat.h,
 * so the categories sum to `cycles`.
 */
#ifndef TPUSIM_STATS_H
#define TPUSIM_STATS_H

#include <stdint.h>

#include "cat.h"
#include "sram.h"

extern const char *const cat_names[];   /* "compute", "weights", ... */

struct result {
	int64_t macs;
	int64_t cycles;                 /* wall cycles */
	int64_t compute_cycles;         /* array (or vector unit) busy, fill and drain included, no memory waits */
	int64_t memory_cycles;          /* HBM bytes at full bandwidth */
	int64_t cat[CAT_N];             /* sums to cycles */
	int64_t hbm_read_bytes, hbm_write_bytes;
	int64_t sram_read_bytes[SRAM_NBUF], sram_write_bytes[SRAM_NBUF];
	int64_t folds;
	int64_t gemm_ops, vector_ops;
};

/* a += b */
void result_add(struct result *a, const struct result *b);

struct arch;

/*
 * The energy of r on accelerator a, in pJ, by part (enum energy_part of
 * models/energy.h): the counts in r times a's per-action energies. Returns
 * the total, which is the sum of the parts.
 */
double result_energy(const struct arch *a, const struct result *r, double part[]);

#endif
