/*
 * test_chip.c - a chip, not a layer: several arrays, activations kept on
 * chip, weights streamed ahead across ops.
 */
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "tests.h"

static int run(const struct config *cfg, const char *yaml, int model, bool ideal, struct run *r)
{
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };
	struct run_opts o = { cfg->arch.array.dataflow, model, ideal, NULL };
	int rc;
	th_lower(yaml, &w, &ops);
	rc = run_workload(cfg, &w, &ops, &o, r, &e);
	ck_assert_msg(rc == 0, "%s", e.msg);
	oplist_release(&ops);
	workload_release(&w);
	return rc;
}

static const char g1024[] = "name: g\nbatch: 1\nlayers:\n"
			    "  - {name: g, type: matmul, m: 1024, k: 512, n: 2048, a: activation, b: weight}\n";

/*
 * A 1024 x 512 x 2048 GEMM on 128 x 128 ws arrays (tpu_v4_mxu), ideal
 * memory. One array: 4 row blocks x 16 column blocks = 64 folds of T = 1024
 * rows, pipelined: the first shift (128), 64 x 1024 streaming, the last
 * sums' way out (128 + 128 - 2) = 65,918 cycles. Four arrays, split by N
 * into 512 columns each: 16 folds: 128 + 16 x 1024 + 254 = 16,766, the
 * per-array closed form, in both models.
 */
START_TEST(even_split_takes_per_array_closed_form)
{
	static const char *const one[] = { NULL };
	static const char *const four[] = { "chip.arrays_per_core=4", NULL };
	static const char *const two_by_two[] = { "chip.cores=2", "chip.arrays_per_core=2", NULL };
	const char *const *sets[] = { one, four, two_by_two };
	const int64_t want[] = { 128 + 64 * 1024 + 128 + 128 - 2, 128 + 16 * 1024 + 254, 128 + 16 * 1024 + 254 };
	for (int i = 0; i < 3; i++) {
		for (int model = 0; model < 2; model++) {
			struct config c;
			struct run r;
			th_config(&c, "tpu_v4_mxu", sets[i]);
			run(&c, g1024, model ? MODEL_CYCLE : MODEL_ANALYTIC, true, &r);
			ck_assert_msg(r.total.cycles == want[i], "case %d, model %d: %lld cycles, want %lld", i, model,
				      (long long)r.total.cycles, (long long)want[i]);
			ck_assert_int_eq(r.total.macs, INT64_C(1024) * 512 * 2048);
			ck_assert_int_eq(r.total.folds, 64);
			ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
			run_release(&r);
		}
	}
}
END_TEST

/*
 * The same GEMM with real memory: 150 GB/s at 1.05 GHz is about 143 B a
 * cycle, shared by every array. Four arrays want four times the bytes a
 * cycle, and each reads all of A, so they stall more: their wait
 * categories (weights, inputs, outputs) take a larger share of the cycles
 * than one array's.
 */
START_TEST(more_arrays_stall_more_when_memory_bound)
{
	static const char *const one[] = { NULL };
	static const char *const four[] = { "chip.arrays_per_core=4", NULL };
	double share[2];
	for (int i = 0; i < 2; i++) {
		struct config c;
		struct run r;
		th_config(&c, "tpu_v4_mxu", i ? four : one);
		run(&c, g1024, MODEL_CYCLE, false, &r);
		int64_t waits = r.total.cat[CAT_WEIGHTS] + r.total.cat[CAT_INPUTS] + r.total.cat[CAT_OUTPUTS];
		share[i] = (double)waits / (double)r.total.cycles;
		run_release(&r);
	}
	ck_assert_msg(share[1] > share[0] + 0.2, "stalls: one array %.3f, four %.3f", share[0], share[1]);
}
END_TEST

/*
 * Random GEMMs and vector ops on random chips (1..2 cores x 1..4 arrays,
 * ws/os/is, layer by layer or with loads running ahead across ops), ideal
 * memory: the engine takes exactly the closed form's cycles, op by op, and
 * the categories sum to them.
 */
START_TEST(engine_equals_analytic_on_many_arrays)
{
	uint64_t seed = 0x5eed0c41u;
	static const char *const df[] = { "ws", "os", "is" };
	for (int i = 0; i < 60; i++) {
		char yaml[512], cores[32], apc[32], rows[32], flow[32], pre[48];
		int64_t m = th_rnd(&seed, 1, 700), k = th_rnd(&seed, 1, 300), n = th_rnd(&seed, 1, 700);
		snprintf(cores, sizeof cores, "chip.cores=%lld", (long long)th_rnd(&seed, 1, 2));
		snprintf(apc, sizeof apc, "chip.arrays_per_core=%lld", (long long)th_rnd(&seed, 1, 4));
		snprintf(rows, sizeof rows, "array.rows=%lld", (long long)th_rnd(&seed, 2, 32));
		snprintf(flow, sizeof flow, "array.dataflow=%s", df[th_rnd(&seed, 0, 2)]);
		snprintf(pre, sizeof pre, "chip.prefetch_across_ops=%s", i % 2 ? "true" : "false");
		const char *sets[] = { cores, apc, rows, flow, pre, NULL };
		snprintf(yaml, sizeof yaml,
			 "name: r\nbatch: 1\nlayers:\n"
			 "  - {name: a, type: matmul, m: %lld, k: %lld, n: %lld, a: activation, b: weight}\n"
			 "  - {name: b, type: relu, elements: %lld}\n"
			 "  - {name: c, type: matmul, m: %lld, k: %lld, n: %lld, a: activation, b: weight}\n",
			 (long long)m, (long long)k, (long long)n, (long long)(m * n), (long long)m, (long long)n,
			 (long long)k);
		struct config c;
		struct run ra, rc;
		th_config(&c, "lab_4x4", sets);
		run(&c, yaml, MODEL_ANALYTIC, true, &ra);
		run(&c, yaml, MODEL_CYCLE, true, &rc);
		for (size_t l = 0; l < ra.n; l++) {
			ck_assert_msg(ra.layers[l].cycles == rc.layers[l].cycles, "case %d (%s %s %s %s, %lldx%lldx%lld) layer %zu: "
				      "analytic %lld, engine %lld", i, cores, apc, rows, flow, (long long)m, (long long)k,
				      (long long)n, l, (long long)ra.layers[l].cycles, (long long)rc.layers[l].cycles);
			ck_assert_int_eq(th_cat_sum(&rc.layers[l]), rc.layers[l].cycles);
			ck_assert_int_eq(ra.layers[l].macs, rc.layers[l].macs);
		}
		run_release(&ra);
		run_release(&rc);
	}
}
END_TEST

/*
 * The same random chips with real memory and small buffers, loads running
 * ahead across ops: every run finishes (no array waits forever on room
 * another holds), the categories sum to the cycles, no op is faster than
 * its array's own time, and the HBM bytes are those the plans move.
 */
START_TEST(chip_passes_finish_with_small_buffers)
{
	uint64_t seed = 0xb0ff3e5u;
	for (int i = 0; i < 40; i++) {
		char yaml[640], cores[32], apc[32], kib[40], flow[32];
		static const char *const df[] = { "ws", "os", "is" };
		int64_t m = th_rnd(&seed, 1, 900), k = th_rnd(&seed, 1, 400), n = th_rnd(&seed, 1, 900);
		snprintf(cores, sizeof cores, "chip.cores=%lld", (long long)th_rnd(&seed, 1, 2));
		snprintf(apc, sizeof apc, "chip.arrays_per_core=%lld", (long long)th_rnd(&seed, 1, 4));
		snprintf(kib, sizeof kib, "sram.weights.kib=%lld", (long long)th_rnd(&seed, 4, 64));
		snprintf(flow, sizeof flow, "array.dataflow=%s", df[th_rnd(&seed, 0, 2)]);
		const char *sets[] = { cores, apc, kib, flow, "chip.prefetch_across_ops=true", "sram.inputs.kib=16",
				       "sram.outputs.kib=16", NULL };
		snprintf(yaml, sizeof yaml,
			 "name: r\nbatch: 1\nlayers:\n"
			 "  - {name: a, type: matmul, m: %lld, k: %lld, n: %lld, a: activation, b: weight}\n"
			 "  - {name: b, type: gelu, elements: %lld}\n"
			 "  - {name: c, type: matmul, m: %lld, k: %lld, n: %lld, a: activation, b: weight}\n"
			 "  - {name: d, type: matmul, m: %lld, k: %lld, n: %lld, a: activation, b: weight}\n",
			 (long long)m, (long long)k, (long long)n, (long long)(m * n), (long long)m, (long long)n,
			 (long long)k, (long long)m, (long long)k, (long long)n);
		struct config c;
		struct run ra, rc;
		th_config(&c, "lab_4x4", sets);
		run(&c, yaml, MODEL_ANALYTIC, false, &ra);
		run(&c, yaml, MODEL_CYCLE, false, &rc);
		for (size_t l = 0; l < rc.n; l++) {
			ck_assert_int_eq(th_cat_sum(&rc.layers[l]), rc.layers[l].cycles);
			ck_assert_int_eq(rc.layers[l].hbm_read_bytes, ra.layers[l].hbm_read_bytes);
			ck_assert_int_eq(rc.layers[l].hbm_write_bytes, ra.layers[l].hbm_write_bytes);
		}
		/* Ops compute one after another on the arrays: overlap hides memory time, never compute. */
		ck_assert_int_ge(rc.total.cycles, ra.total.compute_cycles);
		for (size_t l = 0; l < rc.n; l++)
			ck_assert_int_ge(rc.layers[l].cycles, ra.layers[l].compute_cycles);
		run_release(&ra);
		run_release(&rc);
	}
}
END_TEST

Suite *chip_suite(void)
{
	Suite *s = suite_create("chip");
	TCase *t = tcase_create("chip");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, even_split_takes_per_array_closed_form);
	tcase_add_test(t, more_arrays_stall_more_when_memory_bound);
	tcase_add_test(t, engine_equals_analytic_on_many_arrays);
	tcase_add_test(t, chip_passes_finish_with_small_buffers);
	suite_add_tcase(s, t);
	return s;
}
