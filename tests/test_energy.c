/*
 * test_energy.c - energy from counts, worked out by hand; where it goes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "run.h"
#include "tests.h"
#include "ydoc.h"

/*
 * 4x4 array, ws, M = 10, K = 6, N = 5, int8, everything on chip, ideal memory:
 * 47 cycles (tests/test_analytic.c), 300 MACs. Bytes, fold by fold:
 *   weights: 4 folds shift their tiles, 6 x 5 = 30 read; B loaded, 30 written
 *   inputs:  2 column blocks stream 6 x 10 each, 120 read; A loaded, 60 written
 *   outputs: 2 row blocks write 10 x 5 int32 sums, 400; the second reads them
 *            back, 200, and the stores read 50 results: 250
 *   HBM: A 60 + B 30 read, C 50 written: 140 bytes = 1,120 bits
 * With 1 pJ per MAC, 0.5 per MAC moved, 1 pJ per SRAM byte (8 pJ per 64 bits
 * at every size), 1 pJ per HBM bit, and an idle power of 1 mW per mm2 over
 * lab_4x4's 5.9801464 mm2 (tests/test_area.c) for 47 ns, 281.0669 pJ of leakage:
 *   300 + 150 + 60 + 180 + 650 + 1,120 + 281.0669 = 2,741.0669 pJ.
 */
START_TEST(tiny_case_by_hand)
{
	static const char *const models[] = { "analytic", "cycle" };
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	for (int i = 0; i < 2; i++) {
		char path[4200], *out, *err;
		const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", w, "-o", dir, "--ideal-memory", "--model",
				       models[i], "--set", "energy.mac_int8_pj=1", "--set", "energy.pe_move_pj=0.5",
				       "--set", "energy.sram_8kib_pj=8", "--set", "energy.sram_32kib_pj=8",
				       "--set", "energy.sram_1mib_pj=8", "--set", "energy.hbm_pj_per_bit=1",
				       "--set", "area.idle_mw_per_mm2=1", NULL };
		ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
		snprintf(path, sizeof path, "%s/summary.json", dir);
		struct ydoc *d = th_json_file(path);
		const struct ynode *total = th_json_at(d->root, "total");
		ck_assert_ptr_nonnull(total);
		ck_assert_int_eq(th_json_int(total, "cycles"), 47);
		/* to the last pJ: within half a pJ of the hand count */
		static const double want[] = { 300, 150, 60, 180, 650, 1120, 281.0669 };
		ck_assert(fabs(th_json_num(total, "energy_pj") - 2741.0669) < 0.5);
		const struct ynode *parts = th_json_at(total, "energy_pj_by_component");
		ck_assert_ptr_nonnull(parts);
		ck_assert_uint_eq(parts->n, EN_N);
		for (int k = 0; k < EN_N; k++) {
			double got = th_json_num(parts, energy_part_names[k]);
			ck_assert_msg(fabs(got - want[k]) < 0.5, "%s: %.17g", energy_part_names[k], got);
		}
		ydoc_free(d);
		free(out);
		free(err);
	}
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The energy and metrics of layer i of w on preset p at batch b (cycle engine). */
static void layer_energy(const char *preset, const char *yaml, int64_t batch, size_t layer, struct metrics *m)
{
	struct config c;
	struct workload w;
	struct oplist ops = { 0 };
	struct run r;
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .ideal_memory = false };
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "w.yaml", yaml);
	th_config(&c, preset, NULL);
	ck_assert_msg(workload_load(&w, path, batch, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_msg(run_workload(&c, &w, &ops, &o, &r, &e) == 0, "%s", e.msg);
	report_metrics(&c.arch, &r.layers[layer], false, m);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}

/*
 * TPU v1 at batch 8. A 4096 x 4096 fully connected layer is memory-bound:
 * 16 MiB of weights at 160 pJ per DDR3 byte (2.7 mJ) against 134 M MACs at
 * 0.23 pJ (31 uJ): DRAM dominates. A 3x3 convolution of 512 channels over
 * 56 x 56 does 59 G MACs (13.6 mJ) on 28 MB of traffic (4.5 mJ): the MACs
 * dominate.
 */
START_TEST(dram_versus_mac_on_tpu_v1)
{
	struct metrics fc, conv;
	layer_energy("tpu_v1", "layers:\n  - {name: fc, type: fc, in_features: 4096, out_features: 4096}\n", 8, 0, &fc);
	ck_assert_msg(fc.part[EN_HBM] > fc.part[EN_MAC], "fc: DRAM %g pJ, MAC %g pJ", fc.part[EN_HBM], fc.part[EN_MAC]);
	ck_assert(fc.intensity < 2698);                     /* left of TPU v1's ridge */
	layer_energy("tpu_v1", "layers:\n  - {name: c, type: conv2d, in_h: 56, in_w: 56, in_c: 512, out_c: 512, "
		     "kernel: 3, padding: 1}\n", 8, 0, &conv);
	ck_assert_msg(conv.part[EN_HBM] < conv.part[EN_MAC], "conv: DRAM %g pJ, MAC %g pJ", conv.part[EN_HBM],
		      conv.part[EN_MAC]);
	/* 59,190,018,048 MACs x 0.23 pJ */
	ck_assert(fabs(conv.part[EN_MAC] - 8.0 * 56 * 56 * 9 * 512 * 512 * 0.23) < 1);
}
END_TEST

/* SRAM energy per byte follows the bank size through Horowitz's three points. */
START_TEST(sram_energy_by_size)
{
	struct config c;
	th_config(&c, "tpu_v1", NULL);
	ck_assert(fabs(energy_sram_pj_per_byte(&c.arch.energy, 8192) - 10.0 / 8) < 1e-9);
	ck_assert(fabs(energy_sram_pj_per_byte(&c.arch.energy, 32768) - 20.0 / 8) < 1e-9);
	ck_assert(fabs(energy_sram_pj_per_byte(&c.arch.energy, 1048576) - 100.0 / 8) < 1e-9);
	/* halfway (in log) between 8 KiB and 32 KiB: the geometric mean, sqrt(10 x 20) */
	ck_assert(fabs(energy_sram_pj_per_byte(&c.arch.energy, 16384) - sqrt(200.0) / 8) < 1e-9);
}
END_TEST

Suite *energy_suite(void)
{
	Suite *s = suite_create("energy");
	TCase *t = tcase_create("energy");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, tiny_case_by_hand);
	tcase_add_test(t, dram_versus_mac_on_tpu_v1);
	tcase_add_test(t, sram_energy_by_size);
	suite_add_tcase(s, t);
	return s;
}
