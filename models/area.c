/*
 * area.c - densities by process node, and the area of a chip (see area.h).
 */
#include "area.h"

#include <stddef.h>

#include "array.h"

const char *const area_part_names[] = { "pe_array", "sram_weights", "sram_inputs", "sram_outputs",
					"sram_activations", "vector", "memory_phy", "io", "interconnect", "control", NULL };

static const char *const node_names[] = { "45nm", "28nm", "16nm", "7nm", "custom", NULL };
/* auto, then array_dtype_names in enum dtype's order */

/*
 * The defaults are the 45 nm set: 45nm (and custom) bring the keys' own
 * defaults, the other nodes the rows of area_node_defaults. The overheads and
 * the fractions are the same at every node (an assumption): they are fitted
 * to the one published floorplan of a systolic-array chip, TPU v1's (Jouppi
 * et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit",
 * ISCA 2017, Fig. 2, [TPU17]):
 *   logic_overhead 4.5: the matrix unit is 24% of a die under 331 mm2 at
 *     28 nm, about 1,200 um2 a PE; its MAC and registers alone give 260.
 *     The operator areas are of bare adders and multipliers: a PE also has
 *     its pipeline, muxes, clock and wires, and placement is not dense.
 *   sram_overhead 3.75: the Unified Buffer (24 MiB) is 29% of the die; its
 *     bit cells alone are 26 mm2. Macro periphery (array efficiency about
 *     half) and two ports (every buffer here is read and written in the
 *     same cycle) account for it.
 *   interconnect_fraction 0.21, control_fraction 0.02: Fig. 2 labels 37%
 *     buffers, 30% compute, 10% I/O and 2% control; the other 21% is
 *     wiring and space between blocks.
 */
#define F(x) offsetof(struct area_params, x)
const struct cfg_key area_keys[] = {
	{ "pe_dtype", CFG_ENUM, F(pe_dtype), "", "auto", 0, 0, array_dtype_auto_names,
	  "the type a PE's multiplier is built for (auto: array.dtype); a chip that runs several (array.rate_*) gives "
	  "its widest, so that its area is the chip's whatever the run's dtype" },
	{ "node", CFG_ENUM, F(node), "", "45nm", 0, 0, node_names,
	  "process node; brings its densities (MAC, register, bit cell, vector lane, idle power) but for those its "
	  "own file (or --set) sets; 45nm and custom: the keys' defaults, the 45 nm set" },
	{ "mac_int8_um2", CFG_DOUBLE, F(mac_int8_um2), "um2", "419", 0, 1e7, NULL,
	  "an int8 multiplier and its 32-bit accumulating adder; fp8's is taken as the same (assumed: a 4 x 4-bit "
	  "mantissa product is smaller, its fp32 accumulation larger)" },
	{ "mac_fp16_um2", CFG_DOUBLE, F(mac_fp16_um2), "um2", "5824", 0, 1e7, NULL,
	  "a bf16/fp16 multiplier and its fp32 accumulating adder" },
	{ "mac_fp32_um2", CFG_DOUBLE, F(mac_fp32_um2), "um2", "11884", 0, 1e7, NULL,
	  "an fp32 multiplier and its fp32 accumulating adder" },
	{ "reg_bit_um2", CFG_DOUBLE, F(reg_bit_um2), "um2", "4.52", 0, 1e5, NULL,
	  "one flip-flop: a bit of a PE's weight, input and partial-sum registers" },
	{ "logic_overhead", CFG_DOUBLE, F(logic_overhead), "", "4.5", 1, 100, NULL,
	  "placed logic over its cells' own area (pipeline, muxes, clock, wires, placement density)" },
	{ "sram_bit_um2", CFG_DOUBLE, F(sram_bit_um2), "um2", "0.346", 0, 1e3, NULL, "one 6T SRAM bit cell" },
	{ "sram_overhead", CFG_DOUBLE, F(sram_overhead), "", "3.75", 1, 100, NULL,
	  "an SRAM buffer's macros over their bit cells (periphery, two ports)" },
	{ "vector_lane_um2", CFG_DOUBLE, F(vector_lane_um2), "um2", "13041", 0, 1e8, NULL,
	  "one vector lane: an fp32 multiplier and adder with eight 32-bit registers" },
	{ "phy_mm2_per_gbps", CFG_DOUBLE, F(phy_mm2_per_gbps), "mm2/(GB/s)", "0.03", 0, 100, NULL,
	  "memory controllers and PHYs per GB/s of hbm.gbps (default: hbm.type's; custom memory: HBM2's)" },
	{ "io_mm2", CFG_DOUBLE, F(io_mm2), "mm2", "0", 0, 1e5, NULL,
	  "host and chip-to-chip I/O (PCIe, ICI): controllers and PHYs, one figure for the chip" },
	{ "interconnect_fraction", CFG_DOUBLE, F(interconnect_fraction), "", "0.21", 0, 0.45, NULL,
	  "of the die: on-chip wiring, clock and space between blocks" },
	{ "control_fraction", CFG_DOUBLE, F(control_fraction), "", "0.02", 0, 0.45, NULL, "of the die: control logic" },
	{ "idle_mw_per_mm2", CFG_DOUBLE, F(idle_mw_per_mm2), "mW/mm2", "96", 0, 1e5, NULL,
	  "power drawn doing nothing (leakage, clock, PHY bias), per mm2 of die" },
	CFG_END
};
#undef F

const char *const area_node_keys[AREA_NODE_NKEYS + 1] = {
	"area.mac_int8_um2", "area.mac_fp16_um2", "area.mac_fp32_um2", "area.reg_bit_um2", "area.sram_bit_um2",
	"area.vector_lane_um2", "area.idle_mw_per_mm2", NULL
};

/*
 * Each node's densities. Sources:
 *   45 nm  operators: M. Horowitz, "Computing's Energy Problem (and what we
 *          can do about it)", ISSCC 2014, its table of areas: 8-bit multiply
 *          282 um2, 32-bit add 137; fp16 multiply 1,640, fp16 add 1,360; fp32
 *          multiply 7,700, fp32 add 4,184. A MAC is its multiplier plus the
 *          adder of its accumulator (32-bit integer for int8, fp32 for the
 *          floats, as the arrays accumulate): 419, 5,824, 11,884. A vector
 *          lane: fp32 multiply + add + 8 x 32 flip-flops = 13,041.
 *          Flip-flop: NanGate FreePDK45 Open Cell Library, DFF_X1, 4.52 um2.
 *          Bit cell: Intel 45 nm, 0.346 um2 (K. Mistry et al., IEDM 2007).
 *   28 nm  bit cell: TSMC 28 nm high-density 6T, 0.127 um2 (as TSMC
 *          publishes it). Logic: the 45 nm areas x (28/45)^2 = 0.3872.
 *   16 nm  bit cell: TSMC 16 nm FinFET, 0.07 um2 (S.-Y. Wu et al., IEDM
 *          2013). Logic: x (16/45)^2 = 0.1264.
 *   7 nm   bit cell: TSMC N7, 0.027 um2 (S.-Y. Wu et al., IEDM 2016). Logic:
 *          x (7/45)^2 = 0.0242.
 * The logic rule is the classical one, area as the square of the node's
 * name: an assumption, as node names stopped being feature sizes; where a
 * node's published bit cell exists it is used instead of the rule.
 * Idle power: 28 nm 96 mW/mm2 is TPU v1's measured 28 W idle [TPU17,
 * Table 2] over its modelled 291 mm2 (configs/tpu_v1.yaml); 7 nm 234 is TPU
 * v4's lowest measured power, 90 W (Cloud TPU documentation, "TPU v4"),
 * taken as its idle draw, over its modelled 385 mm2 (configs/tpu_v4.yaml);
 * 45 nm is assumed equal to 28 nm, and 16 nm the geometric mean of 28 and
 * 7 nm (assumed).
 */
const char *const area_node_defaults[AREA_NNODES][AREA_NODE_NKEYS] = {
	/*             mac_int8  mac_fp16  mac_fp32  reg_bit   sram_bit  vector_lane idle */
	[AREA_45NM]  = { NULL,     NULL,     NULL,     NULL,     NULL,     NULL,       NULL },   /* the keys' defaults */
	[AREA_28NM]  = { "162.22", "2254.8", "4601.0", "1.750",  "0.127",  "5049.0",   "96" },
	[AREA_16NM]  = { "52.970", "736.27", "1502.4", "0.5714", "0.07",   "1648.6",   "150" },
	[AREA_7NM]   = { "10.139", "140.93", "287.56", "0.1094", "0.027",  "315.56",   "234" },
	[AREA_CUSTOM] = { NULL,    NULL,     NULL,     NULL,     NULL,     NULL,       NULL },
};

static double mac_um2(const struct area_params *p, int dtype)
{
	switch (dtype) {
	case DT_INT8:
	case DT_FP8: return p->mac_int8_um2;       /* assumed alike: see mac_int8_um2 */
	case DT_FP32: return p->mac_fp32_um2;
	default: return p->mac_fp16_um2;
	}
}

double area_pe_um2(const struct area_params *p, int dtype, int pack, bool weight_double_buffer)
{
	/* pack of each: the multiplier, the weight (and its shadow) and the input; one partial sum */
	double bits = 8.0 * array_elem_bytes(dtype) * pack * (weight_double_buffer ? 3 : 2) + 8.0 * array_acc_bytes(dtype);
	return (mac_um2(p, dtype) * pack + bits * p->reg_bit_um2) * p->logic_overhead;
}

double area_sram_mm2(const struct area_params *p, double kib)
{
	return kib * 8192.0 * p->sram_bit_um2 * p->sram_overhead * 1e-6;
}

double area_mm2(const struct area_params *p, const struct area_chip *c, double part[])
{
	double rest = 0, die;
	part[AR_PE_ARRAY] = (double)c->pes * area_pe_um2(p, c->dtype, c->pack, c->weight_double_buffer) * 1e-6;
	for (int b = 0; b < SRAM_NBUF; b++)
		part[AR_SRAM_WEIGHTS + b] = (double)c->cores * area_sram_mm2(p, (double)c->sram_kib[b]);
	part[AR_SRAM_ACTIVATIONS] = area_sram_mm2(p, (double)c->activation_kib);
	part[AR_VECTOR] = (double)(c->cores * c->vector_lanes) * p->vector_lane_um2 * p->logic_overhead * 1e-6;
	part[AR_MEMORY_PHY] = c->memory_gbps * p->phy_mm2_per_gbps;
	part[AR_IO] = p->io_mm2;
	for (int i = 0; i < AR_INTERCONNECT; i++)
		rest += part[i];
	die = rest / (1 - p->interconnect_fraction - p->control_fraction);
	part[AR_INTERCONNECT] = die * p->interconnect_fraction;
	part[AR_CONTROL] = die * p->control_fraction;
	return die;
}
