/*
 * test_area.c - area and power: a PE and a buffer worked by hand from the
 * density table, how area grows, what area.node brings, and the chips
 * against their published floorplan, die bounds and measured power.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "tests.h"
#include "ydoc.h"

#define NEAR(a, b, rel) (fabs((a) - (b)) <= (rel) * fabs(b))

/*
 * lab_4x4 at the defaults (45 nm): int8, double-buffered weights.
 *   PE: the MAC 419 um2 (8-bit multiply 282 + 32-bit add 137) and 8 + 8 + 8
 *       weight, shadow and input bits plus a 32-bit partial sum = 56 flip-flops
 *       of 4.52 um2 (253.12): 672.12, x 4.5 = 3,024.54 um2; 16 PEs 0.04839264 mm2
 *   inputs 256 KiB: 2,097,152 bits x 0.346 um2 x 3.75 = 2.72105472 mm2
 *   weights, outputs 64 KiB: a quarter, 0.68026368 mm2 each
 *   vector: 4 lanes x 13,041 um2 x 4.5 = 0.234738 mm2
 *   memory: hbm.type custom brings nothing: 0.03 mm2 per GB/s x 8 = 0.24
 *   the rest: 4.60471272 mm2, 77% of the die: 5.9801464 mm2
 */
START_TEST(pe_and_buffer_by_hand)
{
	struct config c;
	double part[AR_N], die;
	th_config(&c, "lab_4x4", NULL);
	ck_assert(NEAR(area_pe_um2(&c.arch.area, DT_INT8, 1, true), 3024.54, 1e-12));
	die = arch_area_mm2(&c.arch, part);
	ck_assert(NEAR(part[AR_PE_ARRAY], 0.04839264, 1e-12));
	ck_assert(NEAR(part[AR_SRAM_INPUTS], 2.72105472, 1e-12));
	ck_assert(NEAR(part[AR_SRAM_WEIGHTS], 0.68026368, 1e-12));
	ck_assert(NEAR(part[AR_SRAM_OUTPUTS], 0.68026368, 1e-12));
	ck_assert(part[AR_SRAM_ACTIVATIONS] == 0);
	ck_assert(NEAR(part[AR_VECTOR], 0.234738, 1e-12));
	ck_assert(NEAR(part[AR_MEMORY_PHY], 0.24, 1e-12));
	ck_assert(part[AR_IO] == 0);
	ck_assert(NEAR(die, 4.60471272 / 0.77, 1e-12));
	ck_assert(NEAR(part[AR_INTERCONNECT], die * 0.21, 1e-12) && NEAR(part[AR_CONTROL], die * 0.02, 1e-12));
	double sum = 0;
	for (int k = 0; k < AR_N; k++)
		sum += part[k];
	ck_assert(NEAR(sum, die, 1e-12));
}
END_TEST

/* The parts of a config with sets applied on lab_4x4. */
static double parts_of(const char *const *sets, double part[])
{
	struct config c;
	th_config(&c, "lab_4x4", sets);
	return arch_area_mm2(&c.arch, part);
}

/* The PE array grows with rows x cols and a buffer with its KiB, exactly as the table says; nothing else moves. */
START_TEST(area_grows_as_the_table_says)
{
	double a[AR_N], b[AR_N];
	const char *small[] = { "array.rows=8", "array.cols=16", NULL };
	const char *big[] = { "array.rows=32", "array.cols=16", NULL };
	parts_of(small, a);
	parts_of(big, b);
	ck_assert(NEAR(b[AR_PE_ARRAY], 4 * a[AR_PE_ARRAY], 1e-12));
	ck_assert(NEAR(a[AR_PE_ARRAY], 128 * 3024.54e-6, 1e-12));
	for (int k = AR_SRAM_WEIGHTS; k < AR_INTERCONNECT; k++)
		ck_assert(a[k] == b[k]);
	/* 1 MiB of inputs more: 8,388,608 bits x 0.346 x 3.75 = 10.88421888 mm2, and the die 1/0.77 of it */
	const char *kib[] = { "sram.inputs.kib=1280", NULL };
	double d0 = parts_of(NULL, a), d1 = parts_of(kib, b);
	ck_assert(NEAR(b[AR_SRAM_INPUTS] - a[AR_SRAM_INPUTS], 10.88421888, 1e-12));
	ck_assert(NEAR(d1 - d0, 10.88421888 / 0.77, 1e-12));
	/* Cores multiply each core's buffers and vector unit, not the memory PHYs. */
	const char *cores[] = { "chip.cores=3", NULL };
	parts_of(cores, b);
	ck_assert(NEAR(b[AR_SRAM_WEIGHTS], 3 * a[AR_SRAM_WEIGHTS], 1e-12) && NEAR(b[AR_VECTOR], 3 * a[AR_VECTOR], 1e-12));
	ck_assert(NEAR(b[AR_PE_ARRAY], 3 * a[AR_PE_ARRAY], 1e-12) && b[AR_MEMORY_PHY] == a[AR_MEMORY_PHY]);
	/* A bf16 PE: 1,640 + 4,184 and 16 x 3 + 32 = 80 flip-flops: (5,824 + 361.6) x 4.5 */
	const char *bf16[] = { "array.dtype=bf16", NULL };
	parts_of(bf16, b);
	ck_assert(NEAR(b[AR_PE_ARRAY], 16 * (5824 + 361.6) * 4.5e-6, 1e-12));
	/* Rate 2 at int8 on a PE built for int8: two multipliers, 2 x 8 x 3 + 32 = 80 flip-flops: (838 + 361.6) x 4.5 */
	const char *packed[] = { "array.rate_int8=2", NULL };
	parts_of(packed, a);
	ck_assert(NEAR(a[AR_PE_ARRAY], 16 * (2 * 419 + 361.6) * 4.5e-6, 1e-12));
	/* area.pe_dtype builds the PE for its type whatever the run's: bf16's PE on an int8 run */
	const char *pe[] = { "area.pe_dtype=bf16", NULL };
	parts_of(pe, a);
	ck_assert(a[AR_PE_ARRAY] == b[AR_PE_ARRAY]);
}
END_TEST

/* A TPU preset's die is its own at every dtype it runs (area.pe_dtype: bf16): int8 packs into the bf16 MXU. */
START_TEST(tpu_die_whatever_the_dtype)
{
	/* area.pe_dtype's choices are auto, then array.dtype's, in enum dtype's order */
	const struct cfg_schema *sc = config_schema();
	const char *const *choices = sc->e[cfg_find(sc, "area.pe_dtype")].key->choices;
	ck_assert_str_eq(choices[0], "auto");
	for (int d = 0; d <= DT_N; d++)
		ck_assert_msg(d == DT_N ? !choices[d + 1] && !array_dtype_names[d] : !strcmp(choices[d + 1],
			      array_dtype_names[d]), "choice %d", d + 1);
	static const char *const presets[] = { "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7" };
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
		struct config a, b;
		double pa[AR_N], pb[AR_N];
		const char *int8[] = { "array.dtype=int8", NULL };
		th_config(&a, presets[i], NULL);
		th_config(&b, presets[i], int8);
		ck_assert_msg(arch_area_mm2(&a.arch, pa) == arch_area_mm2(&b.arch, pb), "%s", presets[i]);
	}
}
END_TEST

/*
 * Every node's logic densities are the 45 nm ones scaled by the stated rule,
 * (node / 45)^2, to the digits the table keeps; the bit cells are the cited ones.
 */
START_TEST(nodes_follow_their_rule)
{
	static const struct { const char *node; double nm, cell; } nodes[] = {
		{ "28nm", 28, 0.127 }, { "16nm", 16, 0.07 }, { "7nm", 7, 0.027 },
	};
	struct config base;
	th_config(&base, "lab_4x4", NULL);
	for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
		char set[40];
		struct config c;
		snprintf(set, sizeof set, "area.node=%s", nodes[i].node);
		const char *sets[] = { set, NULL };
		th_config(&c, "lab_4x4", sets);
		double s = (nodes[i].nm / 45) * (nodes[i].nm / 45);
		const struct area_params *p = &c.arch.area, *q = &base.arch.area;
		ck_assert_msg(NEAR(p->mac_int8_um2, q->mac_int8_um2 * s, 5e-4), "%s", nodes[i].node);
		ck_assert_msg(NEAR(p->mac_fp16_um2, q->mac_fp16_um2 * s, 5e-4), "%s", nodes[i].node);
		ck_assert_msg(NEAR(p->mac_fp32_um2, q->mac_fp32_um2 * s, 5e-4), "%s", nodes[i].node);
		ck_assert_msg(NEAR(p->reg_bit_um2, q->reg_bit_um2 * s, 5e-4), "%s", nodes[i].node);
		ck_assert_msg(NEAR(p->vector_lane_um2, q->vector_lane_um2 * s, 5e-4), "%s", nodes[i].node);
		ck_assert(p->sram_bit_um2 == nodes[i].cell);
	}
}
END_TEST

/* area.node brings its densities, but not over a key the same source sets; a later node replaces an earlier one's. */
START_TEST(node_brings_its_densities)
{
	struct config c;
	const char *a[] = { "area.node=7nm", NULL };
	th_config(&c, "tpu_v1", a);
	ck_assert(c.arch.area.sram_bit_um2 == 0.027 && c.arch.area.idle_mw_per_mm2 == 234);
	const char *b[] = { "area.node=7nm", "area.sram_bit_um2=0.05", NULL };
	th_config(&c, "tpu_v1", b);
	ck_assert(c.arch.area.sram_bit_um2 == 0.05 && c.arch.area.mac_int8_um2 == 10.139);
	th_config(&c, "tpu_v1", NULL);
	ck_assert(c.arch.area.sram_bit_um2 == 0.127 && c.arch.area.phy_mm2_per_gbps == 0.51);
	/* The memory type brings its PHY area as it brings its pJ per bit. */
	const char *m[] = { "hbm.type=hbm2", NULL };
	th_config(&c, "tpu_v1", m);
	ck_assert(c.arch.area.phy_mm2_per_gbps == 0.03);
}
END_TEST

/*
 * TPU v1 (Jouppi et al., ISCA 2017): a die under half of Haswell's 662 mm2
 * (Table 2), so the model's within 20% below 331; the floorplan of Fig. 2:
 * buffers 37%, compute 30%, I/O 10%, control 2%, the Unified Buffer 29% and
 * the matrix unit 24% (its labels), each within 6 points.
 */
START_TEST(tpu_v1_floorplan)
{
	struct config c;
	double part[AR_N], die;
	th_config(&c, "tpu_v1", NULL);
	die = arch_area_mm2(&c.arch, part);
	ck_assert_msg(die >= 265 && die <= 331, "die %g mm2", die);
	double buffers = part[AR_SRAM_WEIGHTS] + part[AR_SRAM_INPUTS] + part[AR_SRAM_OUTPUTS] + part[AR_SRAM_ACTIVATIONS];
	double compute = part[AR_PE_ARRAY] + part[AR_VECTOR], io = part[AR_MEMORY_PHY] + part[AR_IO];
	static const char *const what[] = { "buffers", "compute", "I/O", "control", "Unified Buffer", "matrix unit" };
	double got[] = { buffers, compute, io, part[AR_CONTROL], part[AR_SRAM_INPUTS], part[AR_PE_ARRAY] };
	double want[] = { 37, 30, 10, 2, 29, 24 };
	for (int i = 0; i < 6; i++)
		ck_assert_msg(fabs(100 * got[i] / die - want[i]) <= 6, "%s: %.1f%% of the die, the paper %.1f%%", what[i],
			      100 * got[i] / die, want[i]);
}
END_TEST

/* TPU v4i under 400 mm2 (ISCA 2021), TPU v4 under 600 mm2 (ISCA 2023). */
START_TEST(tpu_v4_dies_under_published)
{
	struct config c;
	double part[AR_N];
	th_config(&c, "tpu_v4i", NULL);
	ck_assert_double_lt(arch_area_mm2(&c.arch, part), 400);
	th_config(&c, "tpu_v4", NULL);
	ck_assert_double_lt(arch_area_mm2(&c.arch, part), 600);
}
END_TEST

/* summary.json of preset p on workload w (analytic model), owned. */
static struct ydoc *summary(const char *p, const char *w, const char *const *extra)
{
	char *dir = th_tmpdir(), path[4200], *out, *err;
	const char *argv[32] = { "run", "-c", p, "-w", w, "-o", dir, "--model", "analytic" };
	int n = 9;
	for (int i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	struct ydoc *d = th_json_file(path);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
	return d;
}

/*
 * power_w is energy over time, tops_per_mm2 the achieved rate over the
 * area, and the peak on lab_4x4 with round energies by hand: 16 PEs x
 * (1 + 0.5) pJ, ports of 4 + 4 + 16 B each read and written at 1 pJ a byte,
 * 8 B a cycle of memory at 8 pJ a byte: 24 + 48 + 64 = 136 pJ a cycle, at
 * 1 GHz 0.136 W; no idle.
 */
START_TEST(power_from_energy_and_time)
{
	const char *sets[] = { "--set", "energy.mac_int8_pj=1", "--set", "energy.pe_move_pj=0.5", "--set",
			       "energy.sram_8kib_pj=8", "--set", "energy.sram_32kib_pj=8", "--set", "energy.sram_1mib_pj=8",
			       "--set", "energy.hbm_pj_per_bit=1", "--set", "area.idle_mw_per_mm2=0", NULL };
	struct ydoc *d = summary("lab_4x4", "configs/workloads/mlp.yaml", sets);
	const struct ynode *t = th_json_at(d->root, "total");
	double seconds = (double)th_json_int(t, "cycles") / 1e9, area = th_json_num(d->root, "area_mm2");
	ck_assert(NEAR(th_json_num(t, "power_w"), th_json_num(t, "energy_pj") * 1e-12 / seconds, 1e-12));
	ck_assert(NEAR(th_json_num(t, "tops_per_mm2"), th_json_num(t, "achieved_ops_per_s") * 1e-12 / area, 1e-12));
	ck_assert(NEAR(th_json_num(d->root, "peak_power_w"), 0.136, 1e-12));
	ck_assert(th_json_num(d->root, "idle_power_w") == 0 && th_json_num(t, "energy_pj_by_component.leakage") == 0);
	ck_assert(NEAR(area, 4.60471272 / 0.77, 1e-12));
	double sum = 0;
	const struct ynode *parts = th_json_at(d->root, "area_mm2_by_component");
	ck_assert_uint_eq(parts->n, AR_N);
	for (int k = 0; k < AR_N; k++)
		sum += th_json_num(parts, area_part_names[k]);
	ck_assert(NEAR(sum, area, 1e-12));
	ydoc_free(d);
}
END_TEST

/* The average power of TPU v1's app of file f. */
static double v1_power(const char *f)
{
	struct ydoc *d = summary("tpu_v1", f, NULL);
	double w = th_json_num(th_json_at(d->root, "total"), "power_w");
	ydoc_free(d);
	return w;
}

/*
 * TPU v1's measured busy power, 40 W a die (ISCA 2017, Table 2), within 30%
 * on its apps, weighted as they were deployed (Table 1: MLPs 61%, LSTMs
 * 29%, CNNs 5%; the two apps of a kind equally).
 */
START_TEST(tpu_v1_busy_power)
{
	double mlp = (v1_power("tpuv1_mlp0") + v1_power("tpuv1_mlp1")) / 2;
	double lstm = (v1_power("tpuv1_lstm0") + v1_power("tpuv1_lstm1")) / 2;
	double cnn = (v1_power("tpuv1_cnn0") + v1_power("tpuv1_cnn1")) / 2;
	double busy = (61 * mlp + 29 * lstm + 5 * cnn) / 95;
	ck_assert_msg(busy >= 28 && busy <= 52, "busy %.1f W (MLP %.1f, LSTM %.1f, CNN %.1f)", busy, mlp, lstm, cnn);
}
END_TEST

/* TPU v4's measured mean, 170 W (Cloud TPU documentation), within 30% on a compute-bound 8192^3 bf16 GEMM. */
START_TEST(tpu_v4_compute_bound_power)
{
	char *dir = th_tmpdir();
	char *w = th_write(dir, "g.yaml", "layers:\n  - {name: g, type: matmul, m: 8192, k: 8192, n: 8192}\n");
	struct ydoc *d = summary("tpu_v4", w, NULL);
	const struct ynode *t = th_json_at(d->root, "total");
	ck_assert_double_gt(th_json_num(t, "utilization"), 0.9);
	ck_assert_msg(fabs(th_json_num(t, "power_w") / 170 - 1) <= 0.3, "%.1f W", th_json_num(t, "power_w"));
	ydoc_free(d);
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* config --dump prints the area and the peak power as comments: the dump stays a loadable config. */
START_TEST(dump_shows_area)
{
	char *out, *err;
	const char *argv[] = { "config", "--dump", "-c", "tpu_v1", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\n# area "));
	ck_assert_ptr_nonnull(strstr(out, " mm2 at 28nm: pe_array "));
	ck_assert_ptr_nonnull(strstr(out, "\n# peak power "));
	char *dir = th_tmpdir(), *f = th_write(dir, "d.yaml", out);
	struct config c;
	struct err e;
	ck_assert_msg(config_load(&c, f, &e) == 0, "%s", e.msg);
	free(out);
	free(err);
	free(f);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *area_suite(void)
{
	Suite *s = suite_create("area");
	TCase *tc = tcase_create("area");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, pe_and_buffer_by_hand);
	tcase_add_test(tc, area_grows_as_the_table_says);
	tcase_add_test(tc, tpu_die_whatever_the_dtype);
	tcase_add_test(tc, nodes_follow_their_rule);
	tcase_add_test(tc, node_brings_its_densities);
	tcase_add_test(tc, tpu_v1_floorplan);
	tcase_add_test(tc, tpu_v4_dies_under_published);
	tcase_add_test(tc, power_from_energy_and_time);
	tcase_add_test(tc, tpu_v1_busy_power);
	tcase_add_test(tc, tpu_v4_compute_bound_power);
	tcase_add_test(tc, dump_shows_area);
	suite_add_tcase(s, tc);
	return s;
}
