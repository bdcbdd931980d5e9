/*
 * energy.h - what the actions counted by a run cost, in picojoules.
 *
 * Energy is counts times per-action energies, never a second estimate:
 *   mac        MACs x the MAC energy of the array's dtype
 *   array      MACs x the energy of moving operands between PE registers
 *   sram_*     bytes read and written in each buffer x that buffer's energy
 *              per byte, which grows with the size of one bank: a log-log
 *              line through the 64-bit read energies of 8 KiB, 32 KiB and
 *              1 MiB arrays (Horowitz, ISSCC 2014), extended beyond them
 *   hbm        bits moved over HBM/DRAM x pJ per bit
 *   leakage    time x the power the chip draws doing nothing: its area x
 *              area.idle_mw_per_mm2 (area.h), so leakage is scaled by area
 * The per-action energies are config keys (energy.*), with presets in
 * configs/energy/ that cite their sources.
 */
#ifndef TPUSIM_ENERGY_H
#define TPUSIM_ENERGY_H

#include <stdint.h>

#include "cfgkey.h"
#include "sram.h"

struct energy_params {
	double mac_int8_pj, mac_fp16_pj, mac_fp32_pj;   /* one multiply-accumulate */
	double pe_move_pj;                               /* operand movement per MAC */
	double sram_8kib_pj, sram_32kib_pj, sram_1mib_pj; /* one 64-bit read of an array that size */
	double hbm_pj_per_bit;
};

extern const struct cfg_key energy_keys[];

enum energy_part { EN_MAC, EN_ARRAY, EN_SRAM_WEIGHTS, EN_SRAM_INPUTS, EN_SRAM_OUTPUTS, EN_HBM, EN_LEAKAGE, EN_N };
extern const char *const energy_part_names[];    /* "mac", "array", "sram_weights", ... */

/* Energy per byte of one access to a bank of bank_bytes, in pJ. */
double energy_sram_pj_per_byte(const struct energy_params *p, double bank_bytes);

/* MAC energy for a dtype (enum dtype of array.h). */
double energy_mac_pj(const struct energy_params *p, int dtype);

#endif
