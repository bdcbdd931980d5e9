/*
 * stats.c - summing results (see stats.h).
 */
#include "stats.h"

const char *const cat_names[] = { "compute", "weights", "inputs", "outputs", "vector", "fill_drain", NULL };

void result_add(struct result *a, const struct result *b)
{
	a->macs += b->macs;
	a->cycles += b->cycles;
	a->compute_cycles += b->compute_cycles;
	a->memory_cycles += b->memory_cycles;
	for (int i = 0; i < CAT_N; i++)
		a->cat[i] += b->cat[i];
	a->hbm_read_bytes += b->hbm_read_bytes;
	a->hbm_write_bytes += b->hbm_write_bytes;
	for (int i = 0; i < SRAM_NBUF; i++) {
		a->sram_read_bytes[i] += b->sram_read_bytes[i];
		a->sram_write_bytes[i] += b->sram_write_bytes[i];
	}
	a->folds += b->folds;
	a->gemm_ops += b->gemm_ops;
	a->vector_ops += b->vector_ops;
}
