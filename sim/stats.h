/*
 * stats.h - what one op, one layer or a whole run cost, as both models count it.
 *
 * Every cycle of an op's time is in exactly one category, so the categories
 * sum to `cycles`:
 *   compute      the array streams operands (one row of T per cycle)
 *   weights      waiting for weights (operand B) to arrive, or for the weight
 *                buffer's port to feed the array
 *   inputs       the same for inputs (operand A) and the input buffer
 *   outputs      waiting for an accumulator tile to be free, and the stores
 *                still draining to HBM after the array is done
 *   vector       the vector unit computing
 *   fill_drain   the array's own overhead: the first weight shift, shifts
 *                longer than the stream before them, os drains, and the skew
 *                of filling and draining the array
 */
#ifndef TPUSIM_STATS_H
#define TPUSIM_STATS_H

#include <stdint.h>

#include "sram.h"

enum cat { CAT_COMPUTE, CAT_WEIGHTS, CAT_INPUTS, CAT_OUTPUTS, CAT_VECTOR, CAT_FILL_DRAIN, CAT_N };

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
