/*
 * test_pipeline.c - pipeline parallelism (sim/run/pipeline.h): the stages
 * cut by hand, the GPipe and 1F1B schedules against their closed forms,
 * and a pipelined run against its stages run alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "run.h"
#include "tests.h"
#include "train.h"

static struct pipe_result schedule(int sched, int64_t stages, int64_t mbs, bool train, int64_t f, int64_t b,
				   int64_t send)
{
	struct pipe_times t[16];
	struct pipe_result r;
	struct err e = { 0 };
	for (int s = 0; s < stages; s++)
		t[s] = (struct pipe_times){ f, b, 0, send };
	ck_assert_int_eq(pipe_schedule(sched, stages, mbs, train, t, &r, &e), 0);
	return r;
}

/*
 * Four stages, eight microbatches, a forward of 10 cycles and a backward of
 * 20: both schedules take (M + P - 1)(F + B) = 11 x 30 = 330 cycles, the
 * bubble (P - 1)(F + B) = 90 on every stage (GPipe, Huang et al. 2019; the
 * same for 1F1B, Narayanan et al. 2021). A send of 5 each way adds
 * 2 (P - 1) x 5 = 30 to GPipe. GPipe keeps all 8 microbatches on each stage, 1F1B
 * P - s of them. Inference: (M + P - 1) F + (P - 1) x send = 110 + 15.
 */
START_TEST(schedules_against_their_closed_forms)
{
	for (int sched = PIPE_1F1B; sched <= PIPE_GPIPE; sched++) {
		struct pipe_result r = schedule(sched, 4, 8, true, 10, 20, 0);
		ck_assert_int_eq(r.step, 330);
		for (int s = 0; s < 4; s++) {
			ck_assert_int_eq(r.busy[s], 240);
			ck_assert_int_eq(r.bubble[s], 90);
			ck_assert_int_eq(r.kept[s], sched == PIPE_GPIPE ? 8 : 4 - s);
		}
		pipe_result_release(&r);
		if (sched == PIPE_GPIPE) {
			r = schedule(sched, 4, 8, true, 10, 20, 5);
			ck_assert_int_eq(r.step, 360);
			pipe_result_release(&r);
		}
		r = schedule(sched, 4, 8, false, 10, 0, 5);
		ck_assert_int_eq(r.step, 125);
		ck_assert_int_eq(r.bubble[0], 45);
		pipe_result_release(&r);
	}
	/*
	 * With sends, 1F1B's turns wait for the gradient's round trip. Two
	 * stages, four microbatches, worked by hand: stage 0 runs F0 0-10,
	 * F1 10-20, B0 50-70 (stage 1's B0 ends at 45, + 5), F2 70-80, B1 80-100,
	 * F3 100-110, B2 120-140, B3 150-170; GPipe (M + P - 1) 30 + 2 x 5 = 160.
	 */
	struct pipe_result r = schedule(PIPE_1F1B, 2, 4, true, 10, 20, 5);
	ck_assert_int_eq(r.step, 170);
	pipe_result_release(&r);
	r = schedule(PIPE_GPIPE, 2, 4, true, 10, 20, 5);
	ck_assert_int_eq(r.step, 160);
	pipe_result_release(&r);
	/* One microbatch: nothing overlaps, every stage waits for the others: P (F + B). */
	r = schedule(PIPE_1F1B, 4, 1, true, 10, 20, 0);
	ck_assert_int_eq(r.step, 120);
	ck_assert_int_eq(r.bubble[3], 90);
	pipe_result_release(&r);
}
END_TEST

/* A workload of a layer, a block of n instances of two layers, and a layer. */
static const char *blocks(int n)
{
	static char y[512];
	snprintf(y, sizeof y, "name: p\nbatch: 8\nlayers:\n"
		 "  - {name: pre, type: relu, elements: 16384}\n"
		 "  - block:\n      name: blk\n      repeat: %d\n      layers:\n"
		 "        - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n"
		 "        - {name: act, type: relu, elements: 16384}\n"
		 "  - {name: post, type: relu, elements: 16384}\n", n);
	return y;
}

/*
 * The cut by hand: 8 instances of equal MACs (the relus have none) in 4
 * stages start at instances 0, 2, 4, 6 (pre goes with the first, post with
 * the last); 3 segments (pre, 1 instance, post) take at most 3 stages.
 */
START_TEST(stages_cut_by_the_macs)
{
	struct workload w;
	struct oplist ops;
	size_t first[5];
	th_lower(blocks(8), &w, &ops);
	int64_t *macs = calloc(w.n, sizeof *macs);
	for (size_t i = 0; i < ops.n; i++)
		macs[ops.v[i].layer] += op_macs(&ops.v[i]);
	ck_assert_int_eq(pipe_split(&w, macs, 4, first), 0);
	ck_assert_uint_eq(first[0], 0);
	ck_assert_str_eq(w.layers[first[1]].name, "blk.2.fc");
	ck_assert_str_eq(w.layers[first[2]].name, "blk.4.fc");
	ck_assert_str_eq(w.layers[first[3]].name, "blk.6.fc");
	ck_assert_uint_eq(first[4], w.n);
	free(macs);
	oplist_release(&ops);
	workload_release(&w);
	th_lower(blocks(1), &w, &ops);
	int64_t m3[4] = { 0, 1, 0, 0 };
	ck_assert_int_eq(pipe_split(&w, m3, 3, first), 0);
	ck_assert_int_eq(pipe_split(&w, m3, 4, first), -1);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * Inference on a 4-stage pipeline of a 4-instance block (batch 8 in 4
 * microbatches): every stage is one instance, as a workload of that one
 * instance runs alone at batch 2 (F cycles, on the same chip without a
 * pod); the step is (M + P - 1) F + (P - 1) x the send of one microbatch's
 * 2 x 64 x 256 activations to the next chip (1 us a hop, 10 GB/s a link),
 * and the total is the 4 stages' chips'. Both models.
 */
START_TEST(pipelined_run_is_its_stages_scheduled)
{
	static const char *const sets[] = { "pod.x=4", "mesh.pipeline=4", "mesh.microbatches=4", "pod.link_gbps=10",
					    "pod.hop_ns=1000", NULL };
	static const char *one =
		"name: one\nbatch: 2\nlayers:\n"
		"  - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n"
		"  - {name: act, type: relu, elements: 16384}\n";
	static const char *four =
		"name: four\nbatch: 8\nlayers:\n"
		"  - block:\n      name: blk\n      repeat: 4\n      layers:\n"
		"        - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n"
		"        - {name: act, type: relu, elements: 16384}\n";
	struct config c, c0;
	struct workload w, w1;
	struct oplist ops, ops1;
	struct err e = { 0 };
	th_config(&c, "edge_32x32", sets);
	th_config(&c0, "edge_32x32", NULL);
	th_lower(one, &w1, &ops1);
	th_lower_step(&c, four, &w, &ops);
	int64_t eb = array_elem_bytes(c.arch.array.dtype);
	/* What tpusim lower lists: the stages at each instance, each sending its relu's 2 x 64 x 256 elements. */
	size_t first[5];
	double sent[3];
	ck_assert_msg(run_pipe_cut(&c, &w, &ops, first, &e) == 0 && run_pipe_sends(&c, &w, first, sent, &e) == 0, "%s", e.msg);
	for (int s = 0; s < 4; s++)
		ck_assert_uint_eq(first[s], 2 * (size_t)s);
	for (int s = 0; s < 3; s++)
		ck_assert(sent[s] == (double)(2 * 64 * 256 * eb));
	double send_s = 1e-6 + (double)(2 * 64 * 256 * eb) / 10e9;
	int64_t send = (int64_t)ceil(send_s * c.arch.clock_ghz * 1e9 - 1e-6);
	for (int model = MODEL_ANALYTIC; model <= MODEL_CYCLE; model++) {
		struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = model };
		struct run alone, r;
		ck_assert_msg(run_workload(&c0, &w1, &ops1, &o, &alone, &e) == 0, "%s", e.msg);
		ck_assert_msg(run_workload(&c, &w, &ops, &o, &r, &e) == 0, "%s", e.msg);
		int64_t f = alone.total.cycles, step = 7 * f + 3 * send;
		ck_assert_int_eq(r.stages, 4);
		ck_assert_msg(llabs(r.total.cycles - 4 * step) <= 4, "%s: %lld cycles, 4 x (7 x %lld + 3 x %lld) by hand",
			      run_model_names[model], (long long)r.total.cycles, (long long)f, (long long)send);
		ck_assert_uint_eq(r.n, w.n + 4);
		for (int s = 0; s < 4; s++) {
			const struct result *b = &r.layers[w.n + (size_t)s];
			ck_assert_int_eq(r.rows[w.n + (size_t)s].phase, PH_BUBBLE);
			ck_assert_uint_eq(r.rows[w.n + (size_t)s].layer, 2 * (size_t)s);
			ck_assert_msg(llabs(b->cycles - (step - 4 * f)) <= 1, "stage %d: bubble %lld", s, (long long)b->cycles);
			ck_assert_int_eq(b->cat[CAT_BUBBLE], b->cycles);
		}
		ck_assert_int_eq(r.total.macs, 4 * 4 * alone.total.macs);      /* 4 stages x 4 microbatches */
		ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
		struct run_step st;
		run_step_of(&r, &c, &w, &st);
		ck_assert(fabs(st.seconds - (double)r.total.cycles / 4 / (c.arch.clock_ghz * 1e9)) < 1e-12);
		run_release(&alone);
		run_release(&r);
	}
	oplist_release(&ops);
	oplist_release(&ops1);
	workload_release(&w);
	workload_release(&w1);
}
END_TEST

/*
 * A training step on 2 stages of one instance each, GPipe of 2
 * microbatches: only the last stage's output has a loss (one a
 * microbatch); the first stage's output gradient comes from the second, so
 * its backward has GEMMs only (dX and dW of its linear). The bubble rows
 * are each stage's idle time, and the phases add up to the total.
 */
START_TEST(training_stages_get_gradients_from_the_next)
{
	static const char *const sets[] = { "pod.x=2", "mesh.pipeline=2", "mesh.schedule=gpipe", "train.enabled=true",
					    "train.microbatches=2", NULL };
	struct config c;
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };
	th_config(&c, "edge_32x32", sets);
	th_lower_step(&c, "name: two\nbatch: 4\nlayers:\n  - block:\n      name: blk\n      repeat: 2\n      layers:\n"
		      "        - {name: fc, type: linear, tokens: 16, in_features: 64, out_features: 64}\n", &w, &ops);
	struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = MODEL_ANALYTIC };
	struct run r;
	ck_assert_msg(run_workload(&c, &w, &ops, &o, &r, &e) == 0, "%s", e.msg);
	int64_t by_phase[PH_N] = { 0 };
	for (size_t i = 0; i < r.n; i++) {
		const struct result *x = &r.layers[i];
		by_phase[r.rows[i].phase] += x->cycles;
		if (r.rows[i].phase == PH_BACKWARD) {
			ck_assert_int_eq(x->vector_ops, r.rows[i].layer == 1 ? 2 : 0);
			ck_assert_int_eq(x->gemm_ops, 2 * 2);
		}
	}
	ck_assert_int_gt(by_phase[PH_BUBBLE], 0);
	ck_assert_int_eq(by_phase[PH_FORWARD] + by_phase[PH_BACKWARD] + by_phase[PH_RECOMPUTE] + by_phase[PH_OPTIMIZER] +
			 by_phase[PH_BUBBLE], r.total.cycles);
	ck_assert_int_eq(r.total.cat[CAT_BUBBLE], by_phase[PH_BUBBLE]);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* Refusals at their keys: more stages than segments, microbatches that do not divide the batch, the functional model. */
START_TEST(pipeline_refusals)
{
	static const struct {
		const char *set[6];
		int model;
		const char *want;
	} cases[] = {
		{ { "pod.x=8", "mesh.pipeline=8", NULL }, MODEL_ANALYTIC,
		  "mesh.pipeline: expected at most 4 stages (the workload's block instances and layers outside blocks), found 8" },
		{ { "pod.x=4", "mesh.pipeline=4", "mesh.microbatches=3", NULL }, MODEL_ANALYTIC,
		  "mesh.microbatches: expected mesh.data x mesh.fsdp x mesh.microbatches to divide the batch (8), found 1 x 1 x 3" },
		{ { "pod.x=4", "mesh.pipeline=4", NULL }, MODEL_FUNCTIONAL,
		  "mesh.pipeline: expected 1 for --model functional" },
		{ { "pod.x=4", "mesh.pipeline=2", NULL }, MODEL_ANALYTIC,
		  "expected mesh.data x mesh.fsdp x mesh.tensor x mesh.pipeline to be the pod's 4 chips" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct config c;
		struct workload w;
		struct oplist ops;
		struct run r;
		struct err e = { 0 };
		th_config(&c, "edge_32x32", cases[i].set);
		th_lower("name: four\nbatch: 8\nlayers:\n  - block:\n      name: blk\n      repeat: 4\n      layers:\n"
			 "        - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n", &w, &ops);
		struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = cases[i].model,
				      .ideal_memory = cases[i].model == MODEL_FUNCTIONAL };
		ck_assert_int_eq(run_workload(&c, &w, &ops, &o, &r, &e), -1);
		ck_assert_msg(strstr(e.msg, cases[i].want), "case %zu: %s", i, e.msg);
		ck_assert_int_eq(e.kind, ERR_INPUT);
		oplist_release(&ops);
		workload_release(&w);
	}
}
END_TEST

Suite *pipeline_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *t = tcase_create("pipeline");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, schedules_against_their_closed_forms);
	tcase_add_test(t, stages_cut_by_the_macs);
	tcase_add_test(t, pipelined_run_is_its_stages_scheduled);
	tcase_add_test(t, training_stages_get_gradients_from_the_next);
	tcase_add_test(t, pipeline_refusals);
	suite_add_tcase(s, t);
	return s;
}
