/*
 * test_plan.c - the plan stage and the memory facts everyone asks the memory
 * model for.
 *
 * Expectations are worked by hand (the split of a small GEMM, the memory
 * bound at a preset's bandwidth) or are a second model's numbers (the
 * cycle engine against the closed form, both over the ideal memory model).
 */
#include <check.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "api.h"
#include "memory.h"
#include "plan.h"
#include "run.h"
#include "tests.h"

/*
 * The memory's bandwidth and latency are the model's facts: the channel
 * model's are hbm.gbps and hbm.latency_ns at the clock, the ideal model's
 * unbounded and 0, and the closed form's memory bound follows the model.
 */
START_TEST(memory_facts_from_the_model)
{
	struct config c;
	th_config(&c, "tpu_v1", NULL);
	/* TPU v1: 34 GB/s at 0.7 GHz is 34 / 0.7 = 48.571... B/cycle; 100 ns is 70 cycles. */
	ck_assert_double_eq_tol(mem_model_bytes_per_cycle(&c.arch.hbm, c.arch.clock_ghz, false), 34.0 / 0.7, 1e-12);
	ck_assert_int_eq(mem_model_latency_cycles(&c.arch.hbm, c.arch.clock_ghz, false), 70);
	ck_assert_double_eq_tol(arch_hbm_bytes_per_s(&c.arch), 34e9, 1);
	/* 1,000 bytes at 48.57 B/cycle: 20.6, so 21 cycles. */
	ck_assert_int_eq(arch_memory_cycles(&c.arch, 1000), 21);
	ck_assert(isinf(mem_model_bytes_per_cycle(&c.arch.hbm, c.arch.clock_ghz, true)));
	ck_assert_int_eq(mem_model_latency_cycles(&c.arch.hbm, c.arch.clock_ghz, true), 0);

	th_config(&c, "tpu_v1", (const char *const[]){ "hbm.model=ideal", NULL });
	ck_assert(isinf(mem_model_bytes_per_cycle(&c.arch.hbm, c.arch.clock_ghz, false)));
	ck_assert(isinf(arch_hbm_bytes_per_s(&c.arch)));
	ck_assert_int_eq(arch_memory_cycles(&c.arch, 1000), 0);
	ck_assert_int_eq(mem_model_latency_cycles(&c.arch.hbm, c.arch.clock_ghz, false), 0);
}
END_TEST

/*
 * A 4x4 array, two of them on one core, and one fc layer of M 8, K 4, N 8
 * (ws): the plan splits N in whole array columns, 4 and 4, each part K 4 x
 * N 4 on one array; the second part reads A from the core's buffers where
 * the first brought it (on chip). On one array the plan's part is the op.
 */
START_TEST(split_by_hand)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct plan p;
	struct err e = { 0 };
	th_config(&c, "lab_4x4", (const char *const[]){ "chip.arrays_per_core=2", NULL });
	th_lower("name: t\nlayers:\n  - {name: fc, type: fc, in_features: 4, out_features: 8, tokens: 8}\n", &w, &ops);
	ck_assert_int_eq(ops.n, 1);
	ck_assert_msg(plan_build(&p, &c, &ops, DF_WS, false, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(p.arrays, 2);
	ck_assert_int_eq(p.v[0].by, SPLIT_N);
	const struct chip_part *cp = plan_parts(&p, 0);
	for (int q = 0; q < 2; q++) {
		ck_assert_ptr_nonnull(cp[q].op);
		ck_assert_ptr_nonnull(cp[q].s);
		ck_assert_ptr_eq(cp[q].s->op, cp[q].op);
		ck_assert_int_eq(cp[q].op->m, 8);
		ck_assert_int_eq(cp[q].op->k, 4);
		ck_assert_int_eq(cp[q].op->n, 4);
	}
	ck_assert_int_eq(cp[0].op->onchip & OC_A, 0);
	ck_assert_int_eq(cp[1].op->onchip & OC_A, OC_A);
	/* One array's view: each buffer is half of the core's. */
	for (int b = 0; b < SRAM_NBUF; b++)
		ck_assert_int_eq(p.array.sram.buf[b].kib, c.arch.sram.buf[b].kib / 2 ? c.arch.sram.buf[b].kib / 2 : 1);
	plan_release(&p);

	th_config(&c, "lab_4x4", NULL);
	ck_assert_msg(plan_build(&p, &c, &ops, DF_WS, false, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(p.arrays, 1);
	ck_assert_int_eq(p.v[0].by, SPLIT_NONE);
	ck_assert_ptr_eq(plan_parts(&p, 0)->op, &p.ops.v[0]);
	plan_release(&p);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* A run on a plan built once gives what run_workload gives (it builds its own). */
START_TEST(run_on_plan_is_run_workload)
{
	static const char *const presets[] = { "tpu_v4", "tpu_v1", "lab_4x4" };
	for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
		for (int model = MODEL_ANALYTIC; model <= MODEL_CYCLE; model++) {
			struct config c;
			struct workload w;
			struct oplist ops;
			struct plan p;
			struct run a, b;
			struct err e = { 0 };
			struct run_opts o = { .dataflow = DF_WS, .model = model };
			th_config(&c, presets[k], NULL);
			ck_assert_int_eq(workload_load(&w, "configs/workloads/mlp.yaml", 0, &e), 0);
			ck_assert_int_eq(lower_workload(&w, &ops, &e), 0);
			ck_assert_msg(plan_build(&p, &c, &ops, DF_WS, false, &e) == 0, "%s", e.msg);
			ck_assert_msg(run_on_plan(&p, &w, &o, &a, &e) == 0, "%s", e.msg);
			ck_assert_msg(run_workload(&c, &w, &ops, &o, &b, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(a.n, b.n);
			ck_assert_int_eq(memcmp(&a.total, &b.total, sizeof a.total), 0);
			for (size_t l = 0; l < a.n; l++)
				ck_assert_int_eq(memcmp(&a.layers[l], &b.layers[l], sizeof a.layers[l]), 0);
			/* The plan's closed form is the analytic model's cycles. */
			if (model == MODEL_ANALYTIC)
				ck_assert_int_eq(p.cycles, a.total.cycles);
			run_release(&a);
			run_release(&b);
			plan_release(&p);
			oplist_release(&ops);
			workload_release(&w);
		}
	}
}
END_TEST

/*
 * Repeated layers are planned once and copied: every GEMM part's tile
 * program equals the one planning that op afresh gives (on one array), and
 * on a chip of several arrays every part carries its own op's name and
 * layer. BERT's twelve layers are alike.
 */
START_TEST(alike_ops_planned_alike)
{
	static const char *const presets[] = { "tpu_v1", "tpu_v4" };
	for (size_t k = 0; k < 2; k++) {
		struct config c;
		struct workload w;
		struct oplist ops;
		struct plan p;
		struct err e = { 0 };
		th_config(&c, presets[k], NULL);
		ck_assert_int_eq(workload_load(&w, "configs/workloads/bert_base.yaml", 0, &e), 0);
		ck_assert_int_eq(lower_workload(&w, &ops, &e), 0);
		ck_assert_msg(plan_build(&p, &c, &ops, DF_WS, false, &e) == 0, "%s", e.msg);
		for (size_t i = 0; i < p.ops.n; i++) {
			const struct chip_part *cp = plan_parts(&p, i);
			for (int q = 0; q < p.arrays; q++) {
				if (!cp[q].op)
					continue;
				ck_assert_ptr_eq(cp[q].op->layer_name, p.ops.v[i].layer_name);
				ck_assert_int_eq(cp[q].op->layer, p.ops.v[i].layer);
				if (!cp[q].s)
					continue;
				ck_assert_ptr_eq(cp[q].s->op, cp[q].op);
				if (p.arrays == 1) {
					struct sched fresh;
					ck_assert_int_eq(plan_gemm(&fresh, cp[q].op, &c, &p.array, DF_WS, false, &e), 0);
					ck_assert_int_eq(memcmp(&fresh, cp[q].s, sizeof fresh), 0);
				}
			}
		}
		plan_release(&p);
		oplist_release(&ops);
		workload_release(&w);
	}
}
END_TEST

/* Loads config x workload with hbm.model=ideal for model. */
static void load_ideal(struct sim *s, const char *config, const char *workload, int model)
{
	struct sim_request rq = { .configs = { config }, .nconfigs = 1, .assignments = { "hbm.model=ideal" },
				  .nassignments = 1, .workload = workload, .model = model, .dataflow = -1 };
	struct err e = { 0 };
	ck_assert_msg(sim_load(s, &rq, "run", &e) == 0, "%s x %s: %s", config, workload, e.msg);
}

/*
 * The pairs the ideal-memory test runs: at most this many fold instructions
 * and vector chunks (run_plan_folds); the engine runs about 2 million a
 * second, so the 8 x 14 pairs below it take about 10 s. Every preset runs
 * most shipped workloads; all 112 pairs but lab_4x4 x llm7b_prefill (which
 * the cycle model refuses) agree as well (checked by hand: tpusim run ...
 * --set hbm.model=ideal with --model analytic and --model cycle).
 */
#define IDEAL_MAX_FOLDS 2000000

/*
 * With the ideal memory model (hbm.model=ideal, buffers as configured), the
 * cycle engine and the closed form agree on every preset and the shipped
 * workloads, in total and layer by layer: no memory time, and neither asks
 * hbm.gbps.
 */
START_TEST(ideal_memory_model_analytic_is_cycle)
{
	glob_t cg, wg;
	int ran = 0, refused = 0;
	ck_assert_int_eq(glob("configs/*.yaml", 0, NULL, &cg), 0);
	ck_assert_int_eq(glob("configs/workloads/*.yaml", 0, NULL, &wg), 0);
	for (size_t i = 0; i < cg.gl_pathc; i++) {
		for (size_t j = 0; j < wg.gl_pathc; j++) {
			struct sim *a = calloc(1, sizeof *a), *c = calloc(1, sizeof *c);
			struct err e = { 0 };
			ck_assert(a && c);
			if (th_pod_only(wg.gl_pathv[j])) {
				refused++;
				free(a);
				free(c);
				continue;
			}
			load_ideal(a, cg.gl_pathv[i], wg.gl_pathv[j], MODEL_ANALYTIC);
			load_ideal(c, cg.gl_pathv[i], wg.gl_pathv[j], MODEL_CYCLE);
			if (th_sim_folds(c, wg.gl_pathv[j]) > IDEAL_MAX_FOLDS) {
				refused++;
			} else {
				ck_assert_msg(sim_run(a, &e) == 0, "%s x %s: %s", cg.gl_pathv[i], wg.gl_pathv[j], e.msg);
				ck_assert_msg(sim_run(c, &e) == 0, "%s x %s: %s", cg.gl_pathv[i], wg.gl_pathv[j], e.msg);
				ck_assert_msg(a->run.total.cycles == c->run.total.cycles, "%s x %s: analytic %lld, cycle %lld",
					      cg.gl_pathv[i], wg.gl_pathv[j], (long long)a->run.total.cycles,
					      (long long)c->run.total.cycles);
				ck_assert_int_eq(a->run.total.memory_cycles, 0);
				for (size_t l = 0; l < a->run.n; l++)
					ck_assert_msg(a->run.layers[l].cycles == c->run.layers[l].cycles,
						      "%s x %s: layer %zu: analytic %lld, cycle %lld", cg.gl_pathv[i],
						      wg.gl_pathv[j], l, (long long)a->run.layers[l].cycles,
						      (long long)c->run.layers[l].cycles);
				ran++;
			}
			sim_release(a);
			sim_release(c);
			free(a);
			free(c);
		}
	}
	ck_assert_msg(ran >= 90, "%d pairs ran, %d left out", ran, refused);
	globfree(&cg);
	globfree(&wg);
}
END_TEST

/*
 * The memory model's counters reach the results: a cycle run of three fc
 * layers on lab_4x4 (layer by layer) makes one request per load and store
 * of the plan's tile programs, counted here by walking them (sched_next);
 * its bursts carry at least its HBM bytes and at most a burst more per
 * request and channel; the layers add up to the total; and an analytic run
 * counts nothing.
 */
START_TEST(memory_counters_reach_the_results)
{
	static const char yaml[] = "name: t\nlayers:\n"
				   "  - {name: a, type: fc, in_features: 24, out_features: 40, tokens: 9}\n"
				   "  - {name: b, type: fc, in_features: 40, out_features: 8, tokens: 9}\n"
				   "  - {name: c, type: fc, in_features: 8, out_features: 300, tokens: 9}\n";
	struct config c;
	struct workload w;
	struct oplist ops;
	struct plan p;
	struct run r;
	struct err e = { 0 };
	th_config(&c, "lab_4x4", NULL);
	th_lower(yaml, &w, &ops);
	ck_assert_msg(plan_build(&p, &c, &ops, DF_WS, false, &e) == 0, "%s", e.msg);
	int64_t requests = 0;
	for (size_t i = 0; i < p.ops.n; i++) {
		struct sched_iter it;
		struct tile_ins ins;
		sched_iter_init(&it, plan_parts(&p, i)->s);
		while (sched_next(&it, &ins))
			requests += ins.kind == TI_LOAD || ins.kind == TI_STORE;
	}
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .no_reuse = true };
	ck_assert_msg(run_on_plan(&p, &w, &o, &r, &e) == 0, "%s", e.msg);
	const int64_t *mc = r.total.mem_counts;
	int64_t bytes = r.total.hbm_read_bytes + r.total.hbm_write_bytes, burst = c.arch.hbm.burst_bytes;
	ck_assert_int_eq(mc[0], requests);
	ck_assert_int_ge(mc[1] * burst, bytes);
	ck_assert_int_le(mc[1] * burst, bytes + mc[0] * c.arch.hbm.channels * burst);
	int64_t sum[MEM_MAX_COUNTERS] = { 0 };
	for (size_t l = 0; l < r.n; l++)
		for (int k = 0; k < MEM_MAX_COUNTERS; k++)
			sum[k] += r.layers[l].mem_counts[k];
	for (int k = 0; k < MEM_MAX_COUNTERS; k++)
		ck_assert_int_eq(sum[k], mc[k]);
	run_release(&r);
	o.model = MODEL_ANALYTIC;
	ck_assert_msg(run_on_plan(&p, &w, &o, &r, &e) == 0, "%s", e.msg);
	for (int k = 0; k < MEM_MAX_COUNTERS; k++)
		ck_assert_int_eq(r.total.mem_counts[k], 0);
	run_release(&r);
	plan_release(&p);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *t = tcase_create("plan");
	tcase_set_timeout(t, 600);
	tcase_add_test(t, memory_facts_from_the_model);
	tcase_add_test(t, split_by_hand);
	tcase_add_test(t, run_on_plan_is_run_workload);
	tcase_add_test(t, alike_ops_planned_alike);
	tcase_add_test(t, ideal_memory_model_analytic_is_cycle);
	tcase_add_test(t, memory_counters_reach_the_results);
	suite_add_tcase(s, t);
	return s;
}
