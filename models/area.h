/*
 * area.h - the silicon area of a chip and the power it draws doing nothing,
 * from a density table (keys area.*).
 *
 * Each component is counted parts times a density:
 *   pe_array          PEs x (the dtype's MAC + its registers) x logic_overhead;
 *                     a PE's registers: the weight (two with
 *                     array.weight_double_buffer), the input and the partial
 *                     sum, at the dtype's operand and accumulator widths
 *   sram_<buffer>     each core's buffer: bits x bit cell x sram_overhead
 *                     (sram_outputs is the accumulators)
 *   sram_activations  the chip's activation storage, when chip.activation_kib
 *                     is its own (CMEM) rather than the inputs buffer
 *   vector            cores x lanes x one lane x logic_overhead
 *   memory_phy        memory controllers and PHYs: hbm.gbps x mm2 per GB/s
 *                     (brought by hbm.type)
 *   io                host and chip-to-chip I/O (PCIe, ICI), one figure
 *   interconnect      on-chip wiring, clock and what a floorplan leaves unlabelled,
 *   control           and the control logic: fractions of the die
 * so the die is the sum of the others / (1 - both fractions). area.node
 * brings its densities (the table in area.c, with its sources) for every
 * density key the same source does not set, as hbm.type does for memory.
 */
#ifndef TPUSIM_AREA_H
#define TPUSIM_AREA_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"
#include "sram.h"

enum area_node { AREA_45NM, AREA_28NM, AREA_16NM, AREA_7NM, AREA_CUSTOM, AREA_NNODES };

struct area_params {
	int node;                                        /* enum area_node */
	int pe_dtype;                                    /* 0 auto (array.dtype), else enum dtype + 1 */
	double mac_int8_um2, mac_fp16_um2, mac_fp32_um2; /* multiplier + accumulating adder */
	double reg_bit_um2;                              /* one flip-flop */
	double logic_overhead;                           /* placed logic / its cells' own area */
	double sram_bit_um2;                             /* one 6T bit cell */
	double sram_overhead;                            /* a buffer's macros / its bit cells */
	double vector_lane_um2;                          /* one vector lane, before logic_overhead */
	double phy_mm2_per_gbps;                         /* memory controller and PHY */
	double io_mm2;                                   /* host and chip-to-chip I/O */
	double interconnect_fraction, control_fraction;  /* of the die */
	double idle_mw_per_mm2;                          /* power drawn doing nothing */
};

extern const struct cfg_key area_keys[];

enum area_part {
	AR_PE_ARRAY, AR_SRAM_WEIGHTS, AR_SRAM_INPUTS, AR_SRAM_OUTPUTS, AR_SRAM_ACTIVATIONS, AR_VECTOR, AR_MEMORY_PHY,
	AR_IO, AR_INTERCONNECT, AR_CONTROL, AR_N
};
extern const char *const area_part_names[];      /* "pe_array", "sram_weights", ..., "control" */

/* What area.node brings: the keys (full dotted names, NULL-terminated) and each node's values as config text. */
#define AREA_NODE_NKEYS 7
extern const char *const area_node_keys[AREA_NODE_NKEYS + 1];
extern const char *const area_node_defaults[AREA_NNODES][AREA_NODE_NKEYS];

/* The parts of a chip the densities apply to. */
struct area_chip {
	int dtype;                       /* enum dtype of array.h */
	int pack;                        /* elements of K a PE takes a cycle, each with its multiplier (array_pack) */
	bool weight_double_buffer;
	int64_t pes;                     /* the whole chip's */
	int64_t cores;
	int64_t sram_kib[SRAM_NBUF];     /* one core's buffers */
	int64_t activation_kib;          /* the chip's own activation storage; 0: none */
	int64_t vector_lanes;            /* one core's */
	double memory_gbps;
};

/* One PE in um2: its MACs (pack of them, array.h) and registers, times logic_overhead. */
double area_pe_um2(const struct area_params *p, int dtype, int pack, bool weight_double_buffer);

/* kib KiB of SRAM in mm2. */
double area_sram_mm2(const struct area_params *p, double kib);

/* The die in mm2, by part (enum area_part) in part[]; the parts sum to it. */
double area_mm2(const struct area_params *p, const struct area_chip *c, double part[]);

#endif
