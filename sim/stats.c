/*
 * stats.c - summing results (see stats.h).
 */
#include "stats.h"

#include "config.h"

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

double result_energy(const struct arch *a, const struct result *r, double part[])
{
	const struct energy_params *p = &a->energy;
	const struct sram_params *sp = &a->sram;
	double total = 0, kib = 0;

	part[EN_MAC] = (double)r->macs * energy_mac_pj(p, a->array.dtype);
	part[EN_ARRAY] = (double)r->macs * p->pe_move_pj;
	for (int b = 0; b < SRAM_NBUF; b++) {
		part[EN_SRAM_WEIGHTS + b] = (double)(r->sram_read_bytes[b] + r->sram_write_bytes[b]) *
					    energy_sram_pj_per_byte(p, sram_bank_bytes(sp, b));
		kib += (double)sp->buf[b].kib;
	}
	part[EN_HBM] = (double)(r->hbm_read_bytes + r->hbm_write_bytes) * 8.0 * p->hbm_pj_per_bit;
	part[EN_LEAKAGE] = (double)r->cycles *
			   ((double)array_pes(&a->array) * p->leak_pe_pj + kib * p->leak_sram_pj_per_kib);
	for (int i = 0; i < EN_N; i++)
		total += part[i];
	return total;
}
