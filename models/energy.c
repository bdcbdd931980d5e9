/*
 * energy.c - per-action energies (see energy.h).
 */
#include "energy.h"

#include <math.h>
#include <stddef.h>

#include "array.h"

const char *const energy_part_names[] = { "mac", "array", "sram_weights", "sram_inputs", "sram_outputs", "hbm",
					  "leakage", NULL };

/*
 * Defaults: 45 nm, after Horowitz, "Computing's Energy Problem (and what we
 * can do about it)", ISSCC 2014, pp. 10-14 (its energy table): int8 MAC 0.2 + 0.03 pJ, fp16
 * 1.1 + 0.4, fp32 3.7 + 0.9; SRAM 64-bit reads 10 / 20 / 100 pJ for 8 KiB,
 * 32 KiB, 1 MiB; DRAM 1.3-2.6 nJ per 64 bits, the low end 20 pJ/bit.
 * Operand movement between PEs: twice a MAC (Eyeriss, Chen et al., ISCA
 * 2016: inter-PE 2x, register file 1x, relative to one MAC), taken here as
 * 2 x the int8 MAC. Leakage is the idle power of area.h, not a key here.
 * hbm_pj_per_bit's default here is what custom memory gets; every other
 * hbm.type brings its own (hbm_type_defaults in models/memory.c).
 */
#define F(x) offsetof(struct energy_params, x)
const struct cfg_key energy_keys[] = {
	{ "mac_int8_pj", CFG_DOUBLE, F(mac_int8_pj), "pJ", "0.23", 0, 1e6, NULL,
	  "one int8 multiply-accumulate; fp8's is taken as the same (assumed, as area.mac_int8_um2)" },
	{ "mac_fp16_pj", CFG_DOUBLE, F(mac_fp16_pj), "pJ", "1.5", 0, 1e6, NULL,
	  "one bf16/fp16 multiply-accumulate" },
	{ "mac_fp32_pj", CFG_DOUBLE, F(mac_fp32_pj), "pJ", "4.6", 0, 1e6, NULL, "one fp32 multiply-accumulate" },
	{ "pe_move_pj", CFG_DOUBLE, F(pe_move_pj), "pJ", "0.46", 0, 1e6, NULL,
	  "moving operands and partial sums between PE registers, per MAC" },
	{ "sram_8kib_pj", CFG_DOUBLE, F(sram_8kib_pj), "pJ", "10", 0, 1e6, NULL, "64-bit read of an 8 KiB SRAM" },
	{ "sram_32kib_pj", CFG_DOUBLE, F(sram_32kib_pj), "pJ", "20", 0, 1e6, NULL, "64-bit read of a 32 KiB SRAM" },
	{ "sram_1mib_pj", CFG_DOUBLE, F(sram_1mib_pj), "pJ", "100", 0, 1e6, NULL, "64-bit read of a 1 MiB SRAM" },
	{ "hbm_pj_per_bit", CFG_DOUBLE, F(hbm_pj_per_bit), "pJ/bit", "20", 0, 1e6, NULL,
	  "moving one bit to or from HBM/DRAM (default: hbm.type's)" },
	CFG_END
};
#undef F

double energy_mac_pj(const struct energy_params *p, int dtype)
{
	switch (dtype) {
	case DT_INT8:
	case DT_FP8: return p->mac_int8_pj;        /* assumed alike: see mac_int8_pj */
	case DT_FP32: return p->mac_fp32_pj;
	default: return p->mac_fp16_pj;
	}
}

double energy_sram_pj_per_byte(const struct energy_params *p, double bank_bytes)
{
	/* log-log interpolation through (8 KiB, e8), (32 KiB, e32), (1 MiB, e1m); linear in log beyond */
	double x = log(bank_bytes > 1 ? bank_bytes : 1), e;
	double x0 = log(8192.0), x1 = log(32768.0), x2 = log(1048576.0);
	double y0 = log(p->sram_8kib_pj > 0 ? p->sram_8kib_pj : 1e-12), y1 = log(p->sram_32kib_pj > 0 ? p->sram_32kib_pj : 1e-12);
	double y2 = log(p->sram_1mib_pj > 0 ? p->sram_1mib_pj : 1e-12);
	if (x <= x1)
		e = exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0));
	else
		e = exp(y1 + (y2 - y1) * (x - x1) / (x2 - x1));
	return e / 8.0;   /* a 64-bit access moves 8 bytes */
}
