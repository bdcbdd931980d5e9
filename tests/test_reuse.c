/*
 * test_reuse.c - ops identical to one already simulated take its result
 * (opcache.h), and the results are those of simulating every op; the
 * progress a run reports.
 */
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "opcache.h"
#include "run.h"
#include "tests.h"

/*
 * Ops alike in everything the key covers, counted the plain way (every pair
 * compared, field by field), so that the cache's hits can be predicted: the
 * first of each kind misses, every other hits. Ops here are as lowered
 * (no chip placement).
 */
static bool alike(const struct op *a, const struct op *b)
{
	if (a->kind != b->kind || a->a_weight != b->a_weight || a->b_weight != b->b_weight)
		return false;
	if (a->kind == OP_GEMM)
		return a->m == b->m && a->k == b->k && a->n == b->n && a->repeat == b->repeat && a->a_elems == b->a_elems;
	return a->vec == b->vec && a->in_elems == b->in_elems && a->out_elems == b->out_elems &&
	       a->lane_ops == b->lane_ops;
}

static size_t distinct(const struct oplist *ops)
{
	size_t n = 0;
	for (size_t i = 0; i < ops->n; i++) {
		size_t j = 0;
		while (j < i && !alike(&ops->v[i], &ops->v[j]))
			j++;
		n += j == i;
	}
	return n;
}

static void load(const char *path, struct workload *w, struct oplist *ops)
{
	struct err e = { 0 };
	memset(ops, 0, sizeof *ops);
	ck_assert_msg(workload_load(w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(w, ops, &e) == 0, "%s", e.msg);
}

static void run(const struct config *c, const struct workload *w, const struct oplist *ops, struct run_opts *o,
		struct run *r)
{
	struct err e = { 0 };
	ck_assert_msg(run_workload(c, w, ops, o, r, &e) == 0, "%s", e.msg);
}

static void assert_same(const struct run *a, const struct run *b, const char *what)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_msg(!memcmp(&a->layers[i], &b->layers[i], sizeof a->layers[i]),
			      "%s: layer %zu differs with reuse (cycles %lld vs %lld)", what, i,
			      (long long)a->layers[i].cycles, (long long)b->layers[i].cycles);
	ck_assert_msg(!memcmp(&a->total, &b->total, sizeof a->total), "%s: total differs with reuse", what);
}

/*
 * Every preset style that runs ops one by one (one array; four arrays of a
 * core with activations kept on chip; ws and os; real and ideal memory;
 * both models), on networks with repeated layers: the results with reuse
 * equal, field by field, those of simulating every op. Where ops are as
 * lowered (no placement), the hits are exactly the ops beyond the first of
 * each kind. A chip that prefetches across ops runs them together: nothing
 * is reused in the cycle model.
 */
START_TEST(identical_ops_reused_with_equal_results)
{
	static const char *const none[] = { NULL };
	static const char *const os[] = { "array.dataflow=os", NULL };
	static const char *const v4_layers[] = { "chip.prefetch_across_ops=false", NULL };
	static const char *const v4_spill[] = { "chip.prefetch_across_ops=false", "chip.activation_kib=64", NULL };
	static const struct {
		const char *preset;
		const char *const *sets;
		const char *workload;
		int model;
		bool ideal, placed;     /* placed: the chip keeps activations (hits not predicted) */
	} cases[] = {
		{ "tpu_v4_mxu", none, "configs/workloads/bert_base.yaml", MODEL_CYCLE, false, false },
		{ "tpu_v4_mxu", none, "configs/workloads/resnet50.yaml", MODEL_CYCLE, false, false },
		{ "tpu_v4_mxu", os, "configs/workloads/mobilenet_v2.yaml", MODEL_CYCLE, false, false },
		{ "tpu_v4_mxu", none, "configs/workloads/resnet50.yaml", MODEL_ANALYTIC, false, false },
		{ "tpu_v4_mxu", none, "configs/workloads/llm7b_prefill.yaml", MODEL_CYCLE, false, false },
		{ "edge_32x32", os, "configs/workloads/bert_base.yaml", MODEL_CYCLE, false, false },
		{ "edge_32x32", none, "configs/workloads/llm7b_decode.yaml", MODEL_CYCLE, true, false },
		{ "gemmini", none, "configs/workloads/resnet50.yaml", MODEL_CYCLE, false, false },
		{ "tpu_v4", v4_layers, "configs/workloads/bert_base.yaml", MODEL_CYCLE, false, true },
		{ "tpu_v4", v4_layers, "configs/workloads/resnet50.yaml", MODEL_ANALYTIC, false, true },
		{ "tpu_v4", v4_spill, "configs/workloads/bert_base.yaml", MODEL_CYCLE, false, true },
		{ "tpu_v4", v4_spill, "configs/workloads/resnet50.yaml", MODEL_CYCLE, false, true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct config c;
		struct workload w;
		struct oplist ops;
		struct run a, b;
		struct opcache *cache = opcache_new();
		char what[200];
		th_config(&c, cases[i].preset, cases[i].sets);
		load(cases[i].workload, &w, &ops);
		struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = cases[i].model,
				      .ideal_memory = cases[i].ideal, .no_reuse = true };
		snprintf(what, sizeof what, "%s %s %s", cases[i].preset, cases[i].workload, run_model_names[cases[i].model]);
		run(&c, &w, &ops, &o, &a);
		o.no_reuse = false;
		o.cache = cache;
		run(&c, &w, &ops, &o, &b);
		assert_same(&a, &b, what);
		struct opcache_stats st = opcache_stats(cache);
		ck_assert_msg(st.hits + st.misses == (int64_t)ops.n, "%s: %lld lookups for %zu ops", what,
			      (long long)(st.hits + st.misses), ops.n);
		if (!cases[i].placed)
			ck_assert_msg(st.misses == (int64_t)distinct(&ops), "%s: %lld misses, %zu kinds of op", what,
				      (long long)st.misses, distinct(&ops));
		ck_assert_msg(st.hits > 0, "%s: nothing reused", what);
		run_release(&a);
		run_release(&b);
		opcache_free(cache);
		oplist_release(&ops);
		workload_release(&w);
	}
}
END_TEST

/* TPU v1 prefetches weights across ops: its cycle runs reuse nothing, its closed form does. */
START_TEST(prefetching_chip_reuses_nothing_in_cycle_model)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run a, b;
	struct opcache *cache = opcache_new();
	th_config(&c, "tpu_v1", NULL);
	load("configs/workloads/bert_base.yaml", &w, &ops);
	struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = MODEL_CYCLE, .no_reuse = true };
	run(&c, &w, &ops, &o, &a);
	o.no_reuse = false;
	o.cache = cache;
	run(&c, &w, &ops, &o, &b);
	assert_same(&a, &b, "tpu_v1 cycle");
	ck_assert_int_eq(opcache_stats(cache).hits + opcache_stats(cache).misses, 0);
	run_release(&a);
	run_release(&b);
	o.model = MODEL_ANALYTIC;
	run(&c, &w, &ops, &o, &b);
	ck_assert_int_eq(opcache_stats(cache).hits + opcache_stats(cache).misses, (int64_t)ops.n);
	ck_assert_int_gt(opcache_stats(cache).hits, 0);
	run_release(&b);
	opcache_free(cache);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * One cache over three runs of ResNet-50 (tpu_v4_mxu): the first simulates
 * each kind of op once; the second differs only in energy and area keys,
 * which shape no op's timing, and takes every op from the cache, with the counts
 * (and so, recomputed, the energy) of a run that simulates everything; the
 * third has another bandwidth, and reuses only within itself.
 */
START_TEST(cache_across_runs_keyed_by_timing_config)
{
	static const char *const pj[] = { "energy.hbm_pj_per_bit=11", "area.node=7nm", "area.io_mm2=5", NULL };
	static const char *const bw[] = { "hbm.gbps=75", NULL };
	struct config c1, c2, c3;
	struct workload w;
	struct oplist ops;
	struct run a, b, fresh;
	struct opcache *cache = opcache_new();
	th_config(&c1, "tpu_v4_mxu", NULL);
	th_config(&c2, "tpu_v4_mxu", pj);
	th_config(&c3, "tpu_v4_mxu", bw);
	load("configs/workloads/resnet50.yaml", &w, &ops);
	int64_t kinds = (int64_t)distinct(&ops), n = (int64_t)ops.n;
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .cache = cache };

	run(&c1, &w, &ops, &o, &a);
	ck_assert_int_eq(opcache_stats(cache).misses, kinds);
	ck_assert_int_eq(opcache_stats(cache).hits, n - kinds);
	run_release(&a);

	run(&c2, &w, &ops, &o, &b);
	ck_assert_int_eq(opcache_stats(cache).hits, (n - kinds) + n);
	struct run_opts fo = { .dataflow = DF_WS, .model = MODEL_CYCLE, .no_reuse = true };
	run(&c2, &w, &ops, &fo, &fresh);
	assert_same(&fresh, &b, "energy and area change");
	run_release(&b);
	run_release(&fresh);

	run(&c3, &w, &ops, &o, &b);
	ck_assert_int_eq(opcache_stats(cache).misses, 2 * kinds);
	run(&c3, &w, &ops, &fo, &fresh);
	assert_same(&fresh, &b, "bandwidth change");
	ck_assert_int_ne(fresh.total.cycles, 0);
	run_release(&b);
	run_release(&fresh);

	/* The same config with ideal memory: another key, its own results. */
	o.ideal_memory = fo.ideal_memory = true;
	run(&c3, &w, &ops, &o, &b);
	ck_assert_int_eq(opcache_stats(cache).misses, 3 * kinds);
	run(&c3, &w, &ops, &fo, &fresh);
	assert_same(&fresh, &b, "ideal memory");
	run_release(&b);
	run_release(&fresh);
	opcache_free(cache);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

struct seen {
	size_t calls, last_done;
	size_t ticks;
	int64_t tick_folds[8], op_folds;
	bool order_ok;
};

static void on_progress(void *ctx, const struct run_progress *p)
{
	struct seen *s = ctx;
	s->calls++;
	if (p->op_folds) {
		if (s->ticks < 8)
			s->tick_folds[s->ticks] = p->op_folds_done;
		s->ticks++;
		s->op_folds = p->op_folds;
		return;
	}
	s->order_ok &= p->done == s->last_done + 1 && p->ops == 2;
	s->last_done = p->done;
}

/*
 * Progress: after each op, and within a long GEMM every ENGINE_FOLDS_TICK
 * folds. 4 x 2048 x 1024 on the 4 x 4 ws lab array is one block of rows,
 * 2048 / 4 x 1024 / 4 = 131,072 folds: ticks at 65,536 and 131,072; then a
 * relu.
 */
START_TEST(progress_after_ops_and_every_tick_of_folds)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct seen s = { .order_ok = true };
	th_config(&c, "lab_4x4", NULL);
	th_lower("name: p\nbatch: 1\nlayers:\n"
		 "  - {name: g, type: matmul, m: 4, k: 2048, n: 1024, a: activation, b: weight}\n"
		 "  - {name: r, type: relu, elements: 4096}\n", &w, &ops);
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .ideal_memory = true, .no_reuse = true,
			      .progress = on_progress, .progress_ctx = &s };
	run(&c, &w, &ops, &o, &r);
	ck_assert_int_eq(r.total.folds, 131072);
	ck_assert_uint_eq(s.ticks, 2);
	ck_assert_int_eq(s.tick_folds[0], 65536);
	ck_assert_int_eq(s.tick_folds[1], 131072);
	ck_assert_int_eq(s.op_folds, 131072);
	ck_assert(s.order_ok);
	ck_assert_uint_eq(s.last_done, 2);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * A workload of a block of `instances` instances (a linear layer, then an add
 * of it and the instance's input; odd: then a relu of instance 0's add), a
 * layer before and one after that reads instance 20's linear.
 */
static char *block_yaml(int instances, bool odd)
{
	static char y[1024];
	snprintf(y, sizeof y,
		 "name: b\nbatch: 1\nlayers:\n"
		 "  - {name: pre, type: linear, tokens: 64, in_features: 256, out_features: 256}\n"
		 "  - block:\n      name: blk\n      repeat: %d\n      layers:\n"
		 "        - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n"
		 "        - {name: sum, type: add, elements: 16384, inputs: [fc, block.in]}\n%s"
		 "  - {name: post, type: relu, elements: 16384, inputs: [blk.20.fc]}\n",
		 instances, odd ? "        - {name: odd, type: relu, elements: 16384, inputs: [blk.0.sum]}\n" : "");
	return y;
}

static size_t layer_index(const struct workload *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->layers[i].name, name))
			return i;
	ck_abort_msg("no layer %s", name);
	return 0;
}

/*
 * Folding by hand: 40 instances at keep 16 keep instances 0 to 14 and 39,
 * 1 + 16 x 2 + 1 layers; instance 39 reads instance 14's sum as its input,
 * post reads instance 14's fc for instance 20's, and every layer left out
 * stands for its instance-14 twin. 31 instances do not fold; nor do 40
 * whose instances read instance 0's output rather than their own input.
 */
START_TEST(long_block_folds_to_first_instances_and_last)
{
	struct workload w;
	struct oplist ops;
	struct fold f;
	struct err e = { 0 };
	th_lower(block_yaml(40, false), &w, &ops);
	ck_assert_int_eq(fold_workload(&w, 16, &f, &e), 1);
	ck_assert_uint_eq(f.w.n, 34);
	ck_assert_str_eq(f.w.layers[1 + 15 * 2].name, "blk.39.fc");
	ck_assert_str_eq(f.w.layers[1 + 14 * 2].name, "blk.14.fc");
	/* blk.39.sum reads blk.39.fc and block.in: blk.38.sum, which blk.14.sum stands for. */
	ck_assert_int_eq(f.w.layers[1 + 15 * 2 + 1].inputs[0], 1 + 15 * 2);
	ck_assert_int_eq(f.w.layers[1 + 15 * 2 + 1].inputs[1], 1 + 14 * 2 + 1);
	ck_assert_int_eq(f.w.layers[33].inputs[0], 1 + 14 * 2);
	ck_assert_uint_eq(f.to[layer_index(&w, "blk.20.fc")], 1 + 14 * 2);
	ck_assert_uint_eq(f.to[layer_index(&w, "blk.38.sum")], 1 + 14 * 2 + 1);
	ck_assert_uint_eq(f.to[layer_index(&w, "blk.39.sum")], 1 + 15 * 2 + 1);
	ck_assert_uint_eq(f.to[layer_index(&w, "post")], 33);
	ck_assert_uint_eq(f.nblocks, 1);
	ck_assert_uint_eq(f.blocks[0].rep, 1 + 14 * 2);
	ck_assert_uint_eq(f.blocks[0].prev, 1 + 13 * 2);
	fold_release(&f);
	oplist_release(&ops);
	workload_release(&w);

	th_lower(block_yaml(31, false), &w, &ops);
	ck_assert_int_eq(fold_workload(&w, 16, &f, &e), 0);
	oplist_release(&ops);
	workload_release(&w);
	th_lower(block_yaml(40, true), &w, &ops);
	ck_assert_int_eq(fold_workload(&w, 16, &f, &e), 0);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * Settled is within FOLD_TOL: rows are layers (forward), the representative
 * (layers 2, 3) against the instance before (0, 1), by hand.
 */
START_TEST(settled_is_within_the_tolerance)
{
	struct fold_block b = { 2, 0, 2, 40 };
	struct fold f = { .blocks = &b, .nblocks = 1 };
	size_t *index;
	struct err e = { 0 };
	f.w.n = 4;
	ck_assert_int_eq(fold_index(&f, NULL, 4, &index, &e), 0);
	int64_t near[] = { 600000, 400000, 600050, 400000 }, far[] = { 600000, 400000, 600101, 400000 };
	ck_assert(fold_steady(&f, index, near, FOLD_TOL));     /* 50 of 1000050: 5e-5 */
	ck_assert(!fold_steady(&f, index, far, FOLD_TOL));     /* 101 of 1000101: 1.01e-4 */
	free(index);
}
END_TEST

/*
 * A chip that prefetches across ops (TPU v1) folds 40 instances: the rows
 * of instances 15 to 38 are instance 14's, the run says it folded, and its
 * cycles are within 0.1% of simulating every instance (--no-reuse). 31
 * instances run whole, equal to --no-reuse field by field.
 */
START_TEST(folded_run_near_the_whole)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run a, b;
	th_config(&c, "tpu_v1", NULL);
	th_lower(block_yaml(40, false), &w, &ops);
	struct run_opts o = { .dataflow = c.arch.array.dataflow, .model = MODEL_CYCLE, .no_reuse = true };
	run(&c, &w, &ops, &o, &a);
	o.no_reuse = false;
	run(&c, &w, &ops, &o, &b);
	ck_assert_int_eq(a.folded_keep, 0);
	ck_assert_int_eq(b.folded_keep, 16);
	ck_assert_int_eq(b.total.macs, a.total.macs);
	ck_assert_int_eq(b.total.folds, a.total.folds);
	ck_assert_int_eq(b.total.hbm_read_bytes, a.total.hbm_read_bytes);
	double d = (double)(b.total.cycles - a.total.cycles) / (double)a.total.cycles;
	ck_assert_msg(d > -1e-3 && d < 1e-3, "folded %lld, whole %lld cycles", (long long)b.total.cycles,
		      (long long)a.total.cycles);
	size_t rep = layer_index(&w, "blk.14.fc");
	for (int k = 15; k < 39; k++) {
		char name[32];
		snprintf(name, sizeof name, "blk.%d.fc", k);
		size_t i = layer_index(&w, name);
		ck_assert(!memcmp(&b.layers[i], &b.layers[rep], sizeof b.layers[i]));
		ck_assert(!memcmp(&b.layers[i + 1], &b.layers[rep + 1], sizeof b.layers[i]));
	}
	run_release(&a);
	run_release(&b);
	oplist_release(&ops);
	workload_release(&w);

	th_lower(block_yaml(31, false), &w, &ops);
	o.no_reuse = true;
	run(&c, &w, &ops, &o, &a);
	o.no_reuse = false;
	run(&c, &w, &ops, &o, &b);
	ck_assert_int_eq(b.folded_keep, 0);
	assert_same(&a, &b, "31 instances");
	run_release(&a);
	run_release(&b);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

Suite *reuse_suite(void)
{
	Suite *s = suite_create("reuse");
	TCase *t = tcase_create("reuse");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, identical_ops_reused_with_equal_results);
	tcase_add_test(t, prefetching_chip_reuses_nothing_in_cycle_model);
	tcase_add_test(t, cache_across_runs_keyed_by_timing_config);
	tcase_add_test(t, progress_after_ops_and_every_tick_of_folds);
	tcase_add_test(t, long_block_folds_to_first_instances_and_last);
	tcase_add_test(t, settled_is_within_the_tolerance);
	tcase_add_test(t, folded_run_near_the_whole);
	suite_add_tcase(s, t);
	return s;
}
