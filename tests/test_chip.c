/*
 * test_chip.c - a chip, not a layer: several arrays, activations kept on
 * chip, weights streamed ahead across ops.
 */
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "place.h"
#include "run.h"
#include "tests.h"

static int run(const struct config *cfg, const char *yaml, int model, bool ideal, struct run *r)
{
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };
	struct run_opts o = { .dataflow = cfg->arch.array.dataflow, .model = model, .ideal_memory = ideal };
	int rc;
	th_lower(yaml, &w, &ops);
	rc = run_workload(cfg, &w, &ops, &o, r, &e);
	ck_assert_msg(rc == 0, "%s", e.msg);
	oplist_release(&ops);
	workload_release(&w);
	return rc;
}

/* Runs workload file path on preset with sets (NULL-terminated), batch > 0 overriding the file's. */
static void run_file(const char *preset, const char *const *sets, const char *path, int64_t batch, int model,
		     bool ideal, struct run *r, struct workload *w)
{
	struct config c;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	th_config(&c, preset, sets);
	struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = model, .ideal_memory = ideal };
	ck_assert_msg(workload_load(w, path, batch, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_msg(run_workload(&c, w, &ops, &o, r, &e) == 0, "%s", e.msg);
	oplist_release(&ops);
}

static const char g1024[] = "name: g\nbatch: 1\nlayers:\n"
			    "  - {name: g, type: matmul, m: 1024, k: 512, n: 2048, a: activation, b: weight}\n";

/*
 * A 1024 x 512 x 2048 GEMM on 128 x 128 ws arrays (tpu_v4_mxu), ideal
 * memory. One array: 4 row blocks x 16 column blocks = 64 folds of T = 1024
 * rows, pipelined: the first shift (128), 64 x 1024 streaming, the last
 * sums' way out (128 + 128 - 2) = 65,918 cycles. Four arrays, split by N
 * into 512 columns each: 16 folds: 128 + 16 x 1024 + 254 = 16,766, the
 * per-array closed form, in both models. Each adds the op's fixed time
 * once: 1 us of chip.op_fixed_ns at 1.05 GHz, 1,050 cycles.
 */
START_TEST(even_split_takes_per_array_closed_form)
{
	static const char *const one[] = { NULL };
	static const char *const four[] = { "chip.arrays_per_core=4", NULL };
	static const char *const two_by_two[] = { "chip.cores=2", "chip.arrays_per_core=2", NULL };
	const char *const *sets[] = { one, four, two_by_two };
	const int64_t want[] = { 1050 + 128 + 64 * 1024 + 128 + 128 - 2, 1050 + 128 + 16 * 1024 + 254,
				 1050 + 128 + 16 * 1024 + 254 };
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

/*
 * ResNet-50 at batch 8 on TPU v1. Layer by layer (both switches off) it is
 * what it was before the chip keys existed, but for the plans' tie-break on
 * a short last chunk (issue 22: 6,913,352 then): 6,903,592 cycles, 197,924,032
 * bytes read and 134,696,768 written over DDR3 (the 198 MB and 135 MB of
 * issue 8's table). With activations on chip and loads running ahead, DDR3
 * carries the weights and the images: the weights are summed here from the
 * layers' shapes (kh x kw x in_c / groups x out_c per convolution), the
 * images are 8 x 224 x 224 x 3 bytes; reads must be within 10% of that,
 * and the cycles within 30% of the same run with ideal memory.
 */
START_TEST(resnet50_batch8_on_tpu_v1)
{
	static const char *const off[] = { "chip.keep_activations=false", "chip.prefetch_across_ops=false", NULL };
	const char *path = "configs/workloads/resnet50.yaml";
	struct workload w;
	struct run r, ideal;
	run_file("tpu_v1", off, path, 8, MODEL_CYCLE, false, &r, &w);
	ck_assert_int_eq(r.total.cycles, 6903592);
	ck_assert_int_eq(r.total.hbm_read_bytes, 197924032);
	ck_assert_int_eq(r.total.hbm_write_bytes, 134696768);
	ck_assert_int_eq(r.total.spill_bytes, 0);
	int64_t weights = 0;
	for (size_t i = 0; i < w.n; i++) {
		const struct layer *l = &w.layers[i];
		if (l->type == L_CONV2D)
			weights += l->kernel * l->kernel * l->in_c / l->groups * l->out_c;
		else if (l->type == L_FC || l->type == L_LINEAR)
			weights += l->in_features * l->out_features;
	}
	ck_assert_int_gt(weights, 25000000);      /* ResNet-50: 25.5 M weights in its convolutions and fc */
	int64_t images = INT64_C(8) * 224 * 224 * 3;
	workload_release(&w);
	run_release(&r);

	run_file("tpu_v1", NULL, path, 8, MODEL_CYCLE, false, &r, &w);
	workload_release(&w);
	run_file("tpu_v1", NULL, path, 8, MODEL_CYCLE, true, &ideal, &w);
	workload_release(&w);
	double want = (double)(weights + images);
	ck_assert_msg(r.total.hbm_read_bytes >= want * 0.9 && r.total.hbm_read_bytes <= want * 1.1,
		      "read %lld bytes, weights + images %lld", (long long)r.total.hbm_read_bytes, (long long)(weights + images));
	ck_assert_msg(r.total.cycles <= ideal.total.cycles * 1.3, "%lld cycles, ideal memory %lld",
		      (long long)r.total.cycles, (long long)ideal.total.cycles);
	/* The result of the last layer (8 x 1000 bytes) is all it writes. */
	ck_assert_int_eq(r.total.hbm_write_bytes, 8 * 1000);
	run_release(&r);
	run_release(&ideal);
}
END_TEST

/*
 * The TPU v1 paper's apps (Jouppi et al., ISCA 2017, Tables 1 and 3) on
 * tpu_v1.yaml, cycle model: TOPS within 20% of the paper's, and never above
 * the bandwidth bound, min(92, ops per weight byte x 2 x 34 GB/s) TOPS
 * (Table 1's ratio); CNN0 with under 5% of its cycles waiting for weights.
 */
START_TEST(tpu_v1_apps_against_the_paper)
{
	static const struct {
		const char *file;
		double tops, ratio;
	} app[] = {
		{ "configs/workloads/tpuv1_mlp0.yaml", 12.3, 200 },
		{ "configs/workloads/tpuv1_mlp1.yaml", 9.7, 168 },
		{ "configs/workloads/tpuv1_lstm0.yaml", 3.7, 64 },
		{ "configs/workloads/tpuv1_cnn0.yaml", 86.0, 2888 },
	};
	for (size_t i = 0; i < sizeof app / sizeof app[0]; i++) {
		struct workload w;
		struct run r;
		run_file("tpu_v1", NULL, app[i].file, 0, MODEL_CYCLE, false, &r, &w);
		double tops = 2.0 * (double)r.total.macs / ((double)r.total.cycles / 0.7e9) / 1e12;
		double bound = app[i].ratio * 2 * 34e9 / 1e12;
		if (bound > 91.75)
			bound = 91.75;
		ck_assert_msg(tops >= app[i].tops * 0.8 && tops <= app[i].tops * 1.2, "%s: %.2f TOPS, paper %.1f",
			      app[i].file, tops, app[i].tops);
		ck_assert_msg(tops <= bound, "%s: %.2f TOPS above its bound %.2f", app[i].file, tops, bound);
		if (app[i].ratio > 1000)
			ck_assert_msg(r.total.cat[CAT_WEIGHTS] < r.total.cycles / 20, "%s: weight stalls %lld of %lld",
				      app[i].file, (long long)r.total.cat[CAT_WEIGHTS], (long long)r.total.cycles);
		workload_release(&w);
		run_release(&r);
	}
}
END_TEST

/*
 * TPU v4 (2 cores x 4 MXUs of 128 x 128, 1.05 GHz: 275 TFLOPS) with ideal
 * memory: an 8192^3 bf16 GEMM splits into 8 parts of 1024 columns and
 * reaches at least 90% of the peak, in both models.
 */
START_TEST(tpu_v4_big_gemm_near_peak)
{
	static const char yaml[] = "name: g\nbatch: 1\nlayers:\n"
				   "  - {name: g, type: matmul, m: 8192, k: 8192, n: 8192, a: activation, b: weight}\n";
	for (int model = 0; model < 2; model++) {
		struct config c;
		struct run r;
		th_config(&c, "tpu_v4", NULL);
		run(&c, yaml, model ? MODEL_CYCLE : MODEL_ANALYTIC, true, &r);
		double flops = 2.0 * 8192.0 * 8192.0 * 8192.0 / ((double)r.total.cycles / 1.05e9);
		ck_assert_msg(flops >= 0.9 * 275e12, "model %d: %.4g FLOP/s in %lld cycles", model, flops,
			      (long long)r.total.cycles);
		ck_assert_int_eq(r.total.split_n_ops + r.total.split_m_ops, 1);
		run_release(&r);
	}
}
END_TEST

/*
 * A residual pair on lab_4x4 (int8: one byte an element), 16 tokens:
 *   a: fc 32 -> 32 reads the network input X (512 B) and writes a.out (512 B)
 *   b: fc 32 -> 32 reads a.out, writes b.out (512 B)
 *   c: add [b, a] reads b.out and a.out, writes c.out (512 B, the output)
 * With 1 KiB of activation storage both a.out and b.out fit (512 + 512):
 * everything between the ops stays on chip; HBM moves X, the two weights
 * (32 x 32 B each) and c.out. With 24 tokens (768 B tensors) b.out does not
 * fit beside a.out (held until c): b writes it to HBM and c reads it back,
 * 768 + 768 B of spill; HBM reads X, the weights and b.out, and writes b.out
 * and c.out.
 */
START_TEST(residual_pair_kept_and_spilled)
{
	static const char yaml[] = "name: r\nbatch: 1\nlayers:\n"
				   "  - {name: a, type: fc, tokens: 16, in_features: 32, out_features: 32}\n"
				   "  - {name: b, type: fc, tokens: 16, in_features: 32, out_features: 32}\n"
				   "  - {name: c, type: add, elements: 512, inputs: [b, a]}\n";
	static const char *const fits[] = { "chip.keep_activations=true", "chip.activation_kib=1", NULL };
	static const char big[] = "name: r\nbatch: 1\nlayers:\n"
				  "  - {name: a, type: fc, tokens: 24, in_features: 32, out_features: 32}\n"
				  "  - {name: b, type: fc, tokens: 24, in_features: 32, out_features: 32}\n"
				  "  - {name: c, type: add, elements: 768, inputs: [b, a]}\n";
	struct config c;
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };

	/* The placement itself, op by op. */
	th_config(&c, "lab_4x4", fits);
	th_lower(yaml, &w, &ops);
	ck_assert_int_eq(place_ops(&c.arch, &ops, &e), 0);
	ck_assert_int_eq(ops.v[0].onchip, OC_C);
	ck_assert_int_eq(ops.v[1].onchip, OC_A | OC_C);
	ck_assert_int_eq(ops.v[2].onchip, OC_A | OC_B);
	ck_assert_int_eq(ops.v[2].onchip_elems, 1024);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(ops.v[i].spill, 0);
	c.arch.chip.activation_kib = 0;     /* auto: lab_4x4's 256 KiB input buffer */
	ck_assert_int_eq(place_activation_bytes(&c.arch), 256 * 1024);
	oplist_release(&ops);
	workload_release(&w);

	for (int model = 0; model < 2; model++) {
		struct run r;
		th_config(&c, "lab_4x4", fits);
		run(&c, yaml, model ? MODEL_CYCLE : MODEL_ANALYTIC, false, &r);
		ck_assert_int_eq(r.total.hbm_read_bytes, 512 + 2 * 32 * 32);
		ck_assert_int_eq(r.total.hbm_write_bytes, 512);
		ck_assert_int_eq(r.total.spill_bytes, 0);
		run_release(&r);

		run(&c, big, model ? MODEL_CYCLE : MODEL_ANALYTIC, false, &r);
		ck_assert_int_eq(r.total.hbm_read_bytes, 768 + 2 * 32 * 32 + 768);
		ck_assert_int_eq(r.total.hbm_write_bytes, 768 + 768);
		ck_assert_int_eq(r.total.spill_bytes, 768 + 768);
		ck_assert_int_eq(r.layers[1].spill_bytes, 768);
		ck_assert_int_eq(r.layers[2].spill_bytes, 768);
		run_release(&r);
	}
}
END_TEST

/*
 * Eight arrays in a core whose unified buffers (3 + 8 KiB) do not divide
 * by eight: each array plans with 1 KiB of each (the floor), and the engine
 * must give it the same room, or one operand's tile takes the pool the
 * other's needs and the fold never starts (it did: 1,408 B a pool).
 */
START_TEST(array_shares_match_the_plans)
{
	static const char *const sets[] = { "sram.unified=true", "chip.prefetch_across_ops=true", "chip.arrays_per_core=8",
					    "sram.weights.kib=3", "sram.inputs.kib=8", NULL };
	static const char yaml[] = "name: m\nbatch: 1\nlayers:\n  - {name: l0, type: matmul, m: 232, k: 133, n: 170}\n";
	struct config c;
	struct run r;
	th_config(&c, "lab_4x4", sets);
	run(&c, yaml, MODEL_CYCLE, false, &r);
	ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
	ck_assert_int_eq(r.total.macs, INT64_C(232) * 133 * 170);
	run_release(&r);
}
END_TEST

/*
 * A vector op's spill is the inputs that spilled, not the network inputs it
 * also reads: on tpu_v1 with 1 KiB of activation storage, fc f writes 64 x
 * 256 = 16,384 B (too big: it spills), add a reads f.out back and a new
 * network input (16,384 B each) and writes a.out (16,384 B, spilled: relu
 * reads it). a's spill: 16,384 read back + 16,384 written = 32,768 B, of
 * the 49,152 B it moves.
 */
START_TEST(vector_spill_counts_spilled_inputs_only)
{
	static const char *const sets[] = { "chip.activation_kib=1", NULL };
	static const char yaml[] = "name: v\nbatch: 1\nlayers:\n"
				   "  - {name: f, type: fc, in_features: 256, out_features: 256, tokens: 64}\n"
				   "  - {name: a, type: add, elements: 16384}\n"
				   "  - {name: r, type: relu, elements: 16384}\n";
	for (int model = 0; model < 2; model++) {
		struct config c;
		struct run r;
		th_config(&c, "tpu_v1", sets);
		run(&c, yaml, model ? MODEL_CYCLE : MODEL_ANALYTIC, false, &r);
		ck_assert_int_eq(r.layers[1].hbm_read_bytes + r.layers[1].hbm_write_bytes, 3 * 16384);
		ck_assert_int_eq(r.layers[1].spill_bytes, 2 * 16384);
		ck_assert_int_eq(r.layers[0].spill_bytes, 16384);
		ck_assert_int_eq(r.layers[2].spill_bytes, 16384);
		run_release(&r);
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
	tcase_add_test(t, resnet50_batch8_on_tpu_v1);
	tcase_add_test(t, tpu_v1_apps_against_the_paper);
	tcase_add_test(t, tpu_v4_big_gemm_near_peak);
	tcase_add_test(t, residual_pair_kept_and_spilled);
	tcase_add_test(t, array_shares_match_the_plans);
	tcase_add_test(t, vector_spill_counts_spilled_inputs_only);
	suite_add_tcase(s, t);
	return s;
}
