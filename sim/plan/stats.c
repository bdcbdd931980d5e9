/*
 * stats.c - summing results (see stats.h).
 */
#include "stats.h"

#include <string.h>

#include "config.h"
#include "err.h"

/* Indexed by enum cat (models/cat.h). */
const char *const cat_names[] = { "compute", "weights", "weight_shift", "inputs", "outputs", "vector", "fill_drain",
				  "op_fixed", "exposed_comm", "bubble", NULL };

static const char *const cat_terms[CAT_N] = { "comp%", "wgt%", "shft%", "inp%", "out%", "vec%", "f/d%", "fix%", "comm%", "bub%" };

#define R(x) RF_COUNT, offsetof(struct result, x)
#define M(x) RF_METRIC, offsetof(struct metrics, x)
#define T(label) (const char *const[]){ label }
const struct result_field result_fields[] = {
	{ "macs", NULL, "MAC", "multiply-accumulates", R(macs), 1, NULL, true, T("MACs"), 14, 0, 1, false },
	{ "cycles", NULL, "cycle", "wall cycles", R(cycles), 1, NULL, true, T("cycles"), 12, 0, 1, false },
	{ "compute_cycles", NULL, "cycle", "array or vector unit busy, fill and drain included, no memory waits",
	  R(compute_cycles), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "memory_cycles", NULL, "cycle", "HBM bytes at full bandwidth", R(memory_cycles), 1, NULL, true, NULL, 0, 0, 0,
	  false },
	{ "utilization", NULL, "", "MACs / (cycles x PEs)", M(utilization), 1, NULL, true, T("util%"), 6, 2, 100, false },
	{ "cycles_by_category", "cycles_%s", "cycle", "every cycle in one category; they sum to cycles", R(cat), CAT_N,
	  cat_names, true, cat_terms, 5, 1, 100, true },
	{ "comm_cycles", NULL, "cycle", "the collectives' time on the pod's links, each alone (its closed form), hidden "
	  "behind compute or not (exposed_comm: what was not)", R(comm_cycles), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "link_bytes", "link_%s_bytes", "B", "what the busiest link of each of the pod's axes (x, y, z, dcn) carried, "
	  "both directions together (models/ici.h)", R(link_bytes), ICI_NAXES, ici_axis_names, true, NULL, 0, 0, 0, false },
	{ "link_utilization", "link_%s_utilization", "", "link_bytes over what those links move in the cycles (both "
	  "directions at pod.link_gbps; the dcn: one, at pod.dcn_gbps)", M(link_utilization), ICI_NAXES, ici_axis_names, true,
	  NULL, 0, 0, 0, false },
	{ "hbm_read_bytes", NULL, "B", "bytes read from off-chip memory", R(hbm_read_bytes), 1, NULL, true,
	  T("HBM rd B"), 12, 0, 1, false },
	{ "hbm_write_bytes", NULL, "B", "bytes written to off-chip memory", R(hbm_write_bytes), 1, NULL, true,
	  T("HBM wr B"), 12, 0, 1, false },
	{ "spill_bytes", NULL, "B", "of the HBM bytes, those of activations that did not fit on chip (chip.keep_activations)",
	  R(spill_bytes), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "bus_shift_bytes", NULL, "B",
	  "bus_bytes - HBM bytes: other ops' bytes that crossed the memory bus in these cycles, less these ops' own that "
	  "crossed in others' (loads running ahead, stores trailing; 0 layer by layer)",
	  R(bus_shift_bytes), 1, NULL, false, NULL, 0, 0, 0, false },
	{ "bus_bytes", NULL, "B",
	  "bytes that crossed the memory bus in these cycles, whoever's operands they were: the roofline's traffic",
	  M(bus_bytes), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "ops", NULL, "op", "2 x MACs", M(ops), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "arithmetic_intensity", NULL, "op/B", "ops / bus_bytes (the roofline's x)", M(intensity), 1, NULL, true,
	  T("ops/B"), 9, 1, 1, false },
	{ "achieved_ops_per_s", NULL, "op/s", "ops / time", M(achieved_ops_per_s), 1, NULL, true, T("TOPS"), 8, 3, 1e-12,
	  false },
	{ "attainable_ops_per_s", NULL, "op/s", "the roofline: min(peak, HBM bandwidth x intensity)",
	  M(attainable_ops_per_s), 1, NULL, true, T("bound"), 8, 3, 1e-12, false },
	{ "folds", NULL, "", "placements of a stationary tile on the array", R(folds), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "split_m_ops", NULL, "op", "GEMM ops shared out over the chip's arrays by rows of A (chip.*)", R(split_m_ops), 1,
	  NULL, true, NULL, 0, 0, 0, false },
	{ "split_n_ops", NULL, "op", "GEMM ops shared out over the chip's arrays by columns of B (chip.*)", R(split_n_ops),
	  1, NULL, true, NULL, 0, 0, 0, false },
	{ "mem_counts", NULL, "", "the memory model's counters (memory.h: requests, then the model's own); summary.json "
	  "writes them under \"memory\", named by the model", R(mem_counts), MEM_MAX_COUNTERS, NULL, false, NULL, 0, 0, 0,
	  false },
	{ "sram_read_bytes", "sram_%s_read_bytes", "B", "bytes read from each on-chip buffer", R(sram_read_bytes),
	  SRAM_NBUF, sram_buf_names, true, NULL, 0, 0, 0, false },
	{ "sram_write_bytes", "sram_%s_write_bytes", "B", "bytes written to each on-chip buffer", R(sram_write_bytes),
	  SRAM_NBUF, sram_buf_names, true, NULL, 0, 0, 0, false },
	{ "energy_pj", NULL, "pJ", "the sum of the components", M(energy_pj), 1, NULL, true, T("energy uJ"), 10, 2, 1e-6,
	  false },
	{ "energy_pj_by_component", "energy_%s_pj", "pJ", "counts x per-action energies; leakage: idle power x time",
	  M(part), EN_N,
	  energy_part_names, true, NULL, 0, 0, 0, false },
	{ "pj_per_mac", NULL, "pJ/MAC", "energy / MACs", M(pj_per_mac), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "tops_per_w", NULL, "TOPS/W", "ops / energy", M(tops_per_w), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "power_w", NULL, "W", "energy / time: the average power", M(power_w), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "tops_per_mm2", NULL, "TOPS/mm2", "achieved TOPS / the die's area (area_mm2)", M(tops_per_mm2), 1, NULL, true,
	  NULL, 0, 0, 0, false },
	{ "edp_joule_seconds", NULL, "J s", "energy x delay", M(edp_js), 1, NULL, true, NULL, 0, 0, 0, false },
	{ "gemm_ops", NULL, "", "GEMM ops evaluated", R(gemm_ops), 1, NULL, false, NULL, 0, 0, 0, false },
	{ "vector_ops", NULL, "", "vector ops evaluated", R(vector_ops), 1, NULL, false, NULL, 0, 0, 0, false },
	{ "collective_ops", NULL, "", "collectives evaluated", R(collective_ops), 1, NULL, false, NULL, 0, 0, 0, false },
	{ NULL, NULL, NULL, NULL, 0, 0, 0, NULL, false, NULL, 0, 0, 0, false }
};
#undef R
#undef M
#undef T

const struct result_field *result_field_find(const char *name)
{
	for (const struct result_field *f = result_fields; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

int64_t result_field_count(const struct result_field *f, int i, const struct result *r)
{
	SIM_ASSERT(f->kind == RF_COUNT && i >= 0 && i < f->n);
	return ((const int64_t *)((const char *)r + f->off))[i];
}

double result_field_value(const struct result_field *f, int i, const struct result *r, const struct metrics *m)
{
	SIM_ASSERT(i >= 0 && i < f->n);
	if (f->kind == RF_COUNT)
		return (double)result_field_count(f, i, r);
	return ((const double *)((const char *)m + f->off))[i];
}

void result_add(struct result *a, const struct result *b)
{
	for (const struct result_field *f = result_fields; f->name; f++) {
		if (f->kind != RF_COUNT)
			continue;
		int64_t *x = (int64_t *)((char *)a + f->off);
		const int64_t *y = (const int64_t *)((const char *)b + f->off);
		/* Saturating: a run past the limits is refused by run.c, never summed past int64. */
		for (int i = 0; i < f->n; i++)
			if (__builtin_add_overflow(x[i], y[i], &x[i]))
				x[i] = y[i] > 0 ? INT64_MAX : INT64_MIN;
	}
}

double result_energy(const struct arch *a, const struct result *r, double part[])
{
	const struct energy_params *p = &a->energy;
	const struct sram_params *sp = &a->sram;
	double total = 0;

	double move, mac = arch_mac_pj(a, &move);
	part[EN_MAC] = (double)r->macs * mac;
	part[EN_ARRAY] = (double)r->macs * move;
	for (int b = 0; b < SRAM_NBUF; b++)
		part[EN_SRAM_WEIGHTS + b] = (double)(r->sram_read_bytes[b] + r->sram_write_bytes[b]) *
					    energy_sram_pj_per_byte(p, sram_bank_bytes(sp, b));
	part[EN_HBM] = (double)(r->hbm_read_bytes + r->hbm_write_bytes) * 8.0 * p->hbm_pj_per_bit;
	/* W x seconds = 1e12 pJ x cycles / (clock_ghz x 1e9) */
	part[EN_LEAKAGE] = (double)r->cycles * arch_idle_w(a) * 1e3 / a->clock_ghz;
	for (int i = 0; i < EN_N; i++)
		total += part[i];
	return total;
}

double result_peak_power_w(const struct arch *a)
{
	const struct energy_params *p = &a->energy;
	double move, mac = arch_mac_pj(a, &move), pj = arch_macs_per_cycle(a) * (mac + move);
	/* each array's port of each buffer read and written its width */
	for (int b = 0; b < SRAM_NBUF; b++)
		pj += (double)arch_arrays(a) * 2.0 * (double)sram_port_bytes(&a->sram, b) *
		      energy_sram_pj_per_byte(p, sram_bank_bytes(&a->sram, b));
	pj += a->hbm.gbps / a->clock_ghz * 8.0 * p->hbm_pj_per_bit;   /* bytes per cycle x pJ per byte */
	return pj * a->clock_ghz * 1e-3 + arch_idle_w(a);             /* pJ per cycle x 1e9 cycles/s x 1e-12 */
}
