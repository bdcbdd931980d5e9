/*
 * test_engine.c - the cycle-level engine against the analytic model, stall
 * categories, and memory that matters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "bus.h"
#include "engine.h"
#include "etrace.h"
#include "memory.h"
#include "tests.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;

/*
 * With ideal memory the engine's cycles equal the analytic model's, for ws, os
 * and is, on 1,000 random GEMMs and arrays (fixed seed), pipelined and serial,
 * SCALE-Sim compatible or not; and so do HBM and SRAM traffic. The categories
 * always sum to the cycles.
 */
START_TEST(ideal_engine_equals_analytic)
{
	for (int i = 0; i < 1000; i++) {
		char s[5][64];
		const char *sets[6];
		struct config c;
		struct result a, g;
		struct err e = { 0 };
		struct op o = th_gemm(th_rnd(&rng, 1, 64), th_rnd(&rng, 1, 64), th_rnd(&rng, 1, 64), th_rnd(&rng, 1, 2));
		int df = (int)th_rnd(&rng, 0, 2);
		engine *en;
		if (th_rnd(&rng, 0, 3) == 0)
			o.a_elems = th_rnd(&rng, 1, o.m * o.k);
		snprintf(s[0], 64, "array.rows=%lld", (long long)th_rnd(&rng, 1, 16));
		snprintf(s[1], 64, "array.cols=%lld", (long long)th_rnd(&rng, 1, 16));
		snprintf(s[2], 64, "array.weight_double_buffer=%s", th_rnd(&rng, 0, 3) ? "true" : "false");
		snprintf(s[3], 64, "array.scalesim_compat=%s", th_rnd(&rng, 0, 5) ? "false" : "true");
		snprintf(s[4], 64, "array.dtype=%s", th_rnd(&rng, 0, 1) ? "int8" : "fp32");
		for (int j = 0; j < 5; j++)
			sets[j] = s[j];
		sets[5] = NULL;
		th_config(&c, "lab_4x4", sets);
		ck_assert_int_eq(th_analytic(&c, &o, df, true, &a, &e), 0);
		en = engine_new(&c, true, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_msg(th_engine(en, &c, &o, df, true, &g, &e) == 0, "%s", e.msg);
		engine_free(en);
		ck_assert_msg(g.cycles == a.cycles, "case %d: df %d M %lld K %lld N %lld x%lld on %s %s: engine %lld, analytic %lld",
			      i, df, (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.repeat, s[0], s[1],
			      (long long)g.cycles, (long long)a.cycles);
		ck_assert_int_eq(th_cat_sum(&g), g.cycles);
		ck_assert_int_eq(th_cat_sum(&a), a.cycles);
		/* no memory stalls with ideal memory */
		ck_assert_int_eq(g.cat[CAT_WEIGHTS] + g.cat[CAT_INPUTS] + g.cat[CAT_OUTPUTS], 0);
		ck_assert_int_eq(g.cat[CAT_COMPUTE], a.cat[CAT_COMPUTE]);
		ck_assert_int_eq(g.cat[CAT_WEIGHT_SHIFT], a.cat[CAT_WEIGHT_SHIFT]);
		ck_assert_int_eq(g.cat[CAT_FILL_DRAIN], a.cat[CAT_FILL_DRAIN]);
		ck_assert_int_eq(g.hbm_read_bytes, a.hbm_read_bytes);
		ck_assert_int_eq(g.hbm_write_bytes, a.hbm_write_bytes);
		for (int b = 0; b < SRAM_NBUF; b++) {
			ck_assert_int_eq(g.sram_read_bytes[b], a.sram_read_bytes[b]);
			ck_assert_int_eq(g.sram_write_bytes[b], a.sram_write_bytes[b]);
		}
	}
}
END_TEST

/*
 * The same with real, small buffers (so plans chunk the stream, split K into
 * parts, swap the loop order, share a unified pool) but instant memory: the
 * engine's cycles equal the closed form of that plan whenever no fold waited
 * for an accumulator tile (the closed form has no accumulator limit), and are
 * never fewer; on 1,000 random cases.
 */
START_TEST(real_plans_instant_memory)
{
	int checked = 0;
	for (int i = 0; i < 1000; i++) {
		char s[8][64];
		const char *sets[9];
		struct config c;
		struct result a, g;
		struct err e = { 0 };
		struct op o = th_gemm(th_rnd(&rng, 1, 96), th_rnd(&rng, 1, 96), th_rnd(&rng, 1, 96), th_rnd(&rng, 1, 2));
		int df = (int)th_rnd(&rng, 0, 2);
		engine *en;
		if (th_rnd(&rng, 0, 3) == 0)
			o.a_elems = th_rnd(&rng, 1, o.m * o.k);
		snprintf(s[0], 64, "array.rows=%lld", (long long)th_rnd(&rng, 1, 12));
		snprintf(s[1], 64, "array.cols=%lld", (long long)th_rnd(&rng, 1, 12));
		snprintf(s[2], 64, "array.weight_double_buffer=%s", th_rnd(&rng, 0, 3) ? "true" : "false");
		snprintf(s[3], 64, "sram.weights.kib=%lld", (long long)th_rnd(&rng, 1, 3));
		snprintf(s[4], 64, "sram.inputs.kib=%lld", (long long)th_rnd(&rng, 1, 3));
		snprintf(s[5], 64, "sram.outputs.kib=%lld", (long long)th_rnd(&rng, 1, 3));
		snprintf(s[6], 64, "sram.unified=%s", th_rnd(&rng, 0, 2) ? "false" : "true");
		snprintf(s[7], 64, "array.dtype=%s", th_rnd(&rng, 0, 1) ? "int8" : "bf16");
		for (int j = 0; j < 8; j++)
			sets[j] = s[j];
		sets[8] = NULL;
		th_config(&c, "lab_4x4", sets);
		if (th_analytic(&c, &o, df, false, &a, &e) < 0)
			continue;                   /* buffers too small for this array */
		en = engine_new(&c, false, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_int_eq(engine_instant_memory(en, &e), 0);
		ck_assert_msg(th_engine(en, &c, &o, df, false, &g, &e) == 0, "%s", e.msg);
		engine_free(en);
		ck_assert_int_ge(g.cycles, a.compute_cycles);
		if (g.cat[CAT_OUTPUTS] > 0)
			continue;
		ck_assert_msg(g.cycles == a.compute_cycles, "case %d: df %d M %lld K %lld N %lld x%lld, %s %s %s %s %s %s: "
			      "engine %lld, closed form %lld", i, df, (long long)o.m, (long long)o.k, (long long)o.n,
			      (long long)o.repeat, s[0], s[1], s[3], s[4], s[5], s[6], (long long)g.cycles,
			      (long long)a.compute_cycles);
		ck_assert_int_eq(g.hbm_read_bytes, a.hbm_read_bytes);
		ck_assert_int_eq(th_cat_sum(&g), g.cycles);
		checked++;
	}
	ck_assert_int_gt(checked, 500);
}
END_TEST

/* Vector ops: with ideal memory, lane operations / lanes cycles exactly. */
START_TEST(ideal_vector_equals_analytic)
{
	struct config c;
	struct err e = { 0 };
	th_config(&c, "tpu_v1", NULL);
	for (int i = 0; i < 50; i++) {
		struct op o;
		struct result a, g;
		engine *en = engine_new(&c, true, &e);
		memset(&o, 0, sizeof o);
		o.kind = OP_VEC;
		o.vec = VEC_SOFTMAX;
		o.out_elems = th_rnd(&rng, 1, 3000000);
		o.in_elems = o.out_elems;
		o.lane_ops = 5 * o.out_elems;
		ck_assert_int_eq(th_analytic(&c, &o, DF_WS, true, &a, &e), 0);
		ck_assert_int_eq(th_engine(en, &c, &o, DF_WS, true, &g, &e), 0);
		ck_assert_int_eq(g.cycles, (o.lane_ops + 255) / 256);
		ck_assert_int_eq(g.cycles, a.cycles);
		ck_assert_int_eq(g.cat[CAT_VECTOR], g.cycles);
		for (int b = 0; b < SRAM_NBUF; b++) {
			ck_assert_int_eq(g.sram_read_bytes[b], a.sram_read_bytes[b]);
			ck_assert_int_eq(g.sram_write_bytes[b], a.sram_write_bytes[b]);
		}
		ck_assert_int_eq(g.hbm_read_bytes, a.hbm_read_bytes);
		engine_free(en);
	}
}
END_TEST

static struct result run1(const char *preset, const char *const *sets, struct op o, int df, bool ideal)
{
	struct config c;
	struct result r;
	struct err e = { 0 };
	engine *en;
	th_config(&c, preset, sets);
	en = engine_new(&c, ideal, &e);
	ck_assert_ptr_nonnull(en);
	ck_assert_msg(th_engine(en, &c, &o, df, ideal, &r, &e) == 0, "%s", e.msg);
	engine_free(en);
	ck_assert_int_eq(th_cat_sum(&r), r.cycles);
	return r;
}

/*
 * 4x4 array, one fold, ws, M = 10 rows of K = 4 times a 4 x 4 weight tile.
 * The weights shift in during cycles 0-3; input row i enters array row 0 at
 * cycle 4 + i and crosses one row and one column per cycle, so the last row
 * (i = 9) reaches the last column of the last row at 4 + 9 + 3 + 3 = 19 and its
 * sum leaves the array at the end of cycle 19: 20 cycles. 19 fails, 20 holds.
 */
START_TEST(boundary_one_fold)
{
	struct result r = run1("lab_4x4", NULL, th_gemm(10, 4, 4, 1), DF_WS, true);
	ck_assert(!(r.cycles <= 19));
	ck_assert(r.cycles <= 20);
	ck_assert_int_eq(r.cat[CAT_COMPUTE], 10);
	ck_assert_int_eq(r.cat[CAT_WEIGHT_SHIFT], 4);  /* 4 to shift */
	ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 6);    /* 4 + 4 - 2 to drain */
}
END_TEST

/*
 * Two folds (K = 8): with the shadow tile, fold 2's weights shift in while
 * fold 1 streams, so fold 2 streams right after: 4 + 10 + 10 + 6 = 30.
 * Without it fold 2's weights shift into the weight registers from the
 * cycle fold 1's last input row reads them (the write lands after the read;
 * its partial sums drain on below): 4 + 10 + (4 - 1) + 10 + 6 = 33.
 */
START_TEST(boundary_double_buffer)
{
	const char *serial[] = { "array.weight_double_buffer=false", NULL };
	struct result r = run1("lab_4x4", NULL, th_gemm(10, 8, 4, 1), DF_WS, true);
	ck_assert(!(r.cycles <= 29));
	ck_assert(r.cycles <= 30);
	r = run1("lab_4x4", serial, th_gemm(10, 8, 4, 1), DF_WS, true);
	ck_assert(!(r.cycles <= 32));
	ck_assert(r.cycles <= 33);
}
END_TEST

/*
 * One 64 KiB weight tile from TPU v1's DDR3: 34 GB/s at 700 MHz is
 * 34 / 0.7 = 48.57 B per cycle, so 65,536 B take 65,536 / 48.57 = 1,349.3
 * cycles, plus the 100 ns (70 cycle) access latency.
 */
START_TEST(tpu_v1_weight_tile)
{
	struct config c;
	mem *h;
	uint64_t t;
	int64_t done, retry, ask;
	th_config(&c, "tpu_v1", NULL);
	h = mem_new(&c.arch.hbm, c.arch.clock_ghz, false);
	ck_assert(mem_issue(h, 0, 0, 65536, false, &t, &retry));
	done = mem_done(h, t, 0, &ask);
	ck_assert_int_ge(done - 70, 1349);
	ck_assert_int_le(done - 70, 1350);
	/* A second tile behind it waits for the bandwidth, not for another latency. */
	ck_assert(mem_issue(h, 0, 65536, 65536, false, &t, &retry));
	ck_assert_int_le(mem_done(h, t, 0, &ask) - done, 1350);
	mem_free(h);
}
END_TEST

/*
 * A matrix-vector product (M = 1, K = N = 4096) on TPU v1 moves 16 MiB of
 * weights for 16 M MACs: far left of the ridge. It runs at the bandwidth
 * bound, bytes / 48.57 B per cycle, within 2%, waiting on weights.
 */
START_TEST(gemv_at_bandwidth_bound)
{
	struct result r = run1("tpu_v1", NULL, th_gemm(1, 4096, 4096, 1), DF_WS, false);
	double bound = (double)(4096 * 4096 + 4096 + 4096) / (34.0 / 0.7);
	ck_assert_msg(fabs((double)r.cycles / bound - 1) < 0.02, "%lld cycles against a bound of %.0f",
		      (long long)r.cycles, bound);
	ck_assert_int_gt(r.cat[CAT_WEIGHTS], r.cycles / 2);
}
END_TEST

/*
 * On one TPU v4 MXU (ridge 229 ops/B): halving the bandwidth nearly doubles
 * a memory-bound matrix-vector product. A 2048 x 2048 x 16384 product (about
 * 1,000 ops/B, its inputs kept in a 16 MiB buffer) runs within 5% of its
 * ideal-memory time, the array's peak times its mapping utilisation, and
 * barely moves at half the bandwidth: only its cold start, while the inputs
 * first stream in, waits on memory.
 */
START_TEST(halving_bandwidth)
{
	const char *half[] = { "hbm.gbps=75", NULL };
	const char *big[] = { "sram.inputs.kib=16384", NULL };
	const char *big_half[] = { "sram.inputs.kib=16384", "hbm.gbps=75", NULL };
	struct result m1 = run1("tpu_v4_mxu", NULL, th_gemm(1, 4096, 4096, 1), DF_WS, false);
	struct result m2 = run1("tpu_v4_mxu", half, th_gemm(1, 4096, 4096, 1), DF_WS, false);
	double ratio = (double)m2.cycles / (double)m1.cycles;
	ck_assert_msg(ratio > 1.8 && ratio < 2.05, "memory-bound: %lld -> %lld", (long long)m1.cycles, (long long)m2.cycles);
	struct result c0 = run1("tpu_v4_mxu", big, th_gemm(2048, 2048, 16384, 1), DF_WS, true);
	struct result c1 = run1("tpu_v4_mxu", big, th_gemm(2048, 2048, 16384, 1), DF_WS, false);
	struct result c2 = run1("tpu_v4_mxu", big_half, th_gemm(2048, 2048, 16384, 1), DF_WS, false);
	ck_assert_msg((double)c1.cycles / (double)c0.cycles < 1.05, "%lld vs ideal %lld", (long long)c1.cycles,
		      (long long)c0.cycles);
	ratio = (double)c2.cycles / (double)c1.cycles;
	ck_assert_msg(ratio < 1.1, "compute-bound: %lld -> %lld", (long long)c1.cycles, (long long)c2.cycles);
}
END_TEST

/*
 * 4x4 array, M = 64 in two chunks of 32 (a 1 KiB accumulator buffer), K = 512,
 * N = 64. A 2 KiB weight buffer keeps each 512 x 4 column panel of B across
 * both chunks; halve it and each panel crosses HBM once per chunk: 32 KiB more
 * weight traffic, and with memory slow enough to matter (0.25 B per cycle)
 * the weight stalls and the cycles grow.
 */
START_TEST(smaller_buffer_more_traffic_and_stalls)
{
	const char *full[] = { "sram.outputs.kib=1", "sram.weights.kib=2", "hbm.gbps=0.25", NULL };
	const char *half[] = { "sram.outputs.kib=1", "sram.weights.kib=1", "hbm.gbps=0.25", NULL };
	struct result a = run1("lab_4x4", full, th_gemm(64, 512, 64, 1), DF_WS, false);
	struct result b = run1("lab_4x4", half, th_gemm(64, 512, 64, 1), DF_WS, false);
	ck_assert_int_eq(b.hbm_read_bytes - a.hbm_read_bytes, 512 * 64);
	ck_assert_int_gt(b.cat[CAT_WEIGHTS], a.cat[CAT_WEIGHTS]);
	ck_assert_int_gt(b.cycles, a.cycles);
}
END_TEST

/* The engine in SCALE-Sim mode with ideal memory: AlexNet conv1 on 32x32 ws is 112,283 cycles. */
START_TEST(engine_scalesim_alexnet)
{
	const char *compat[] = { "array.scalesim_compat=true", "array.rows=32", "array.cols=32", NULL };
	struct config c;
	struct workload w;
	struct oplist ops = { 0 };
	struct result r;
	struct err e = { 0 };
	engine *en;
	th_config(&c, "edge_32x32", compat);
	ck_assert_msg(workload_load(&w, "traces/alexnet.csv", 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	en = engine_new(&c, true, &e);
	ck_assert_int_eq(th_engine(en, &c, &ops.v[0], DF_WS, true, &r, &e), 0);
	ck_assert_int_eq(r.cycles, 112283);
	engine_free(en);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * The weight buffer's port limits the shift of each tile: on the 4x4 array a
 * 4 x 4 int8 tile is 16 bytes, so at 1 byte per cycle each of the 16 x 16
 * folds of M = 4, K = N = 64 waits 16 cycles for its tile instead of
 * streaming its 4 rows: more than 255 x 16 cycles, mostly waiting on weights.
 * With the default 4 bytes per cycle the shifts keep up (4 cycles each).
 */
START_TEST(weight_port_limits_shift)
{
	const char *slow[] = { "sram.weights.bytes_per_cycle=1", "hbm.gbps=100000", "hbm.latency_ns=0", NULL };
	const char *fast[] = { "hbm.gbps=100000", "hbm.latency_ns=0", NULL };
	struct result a = run1("lab_4x4", fast, th_gemm(4, 64, 64, 1), DF_WS, false);
	struct result b = run1("lab_4x4", slow, th_gemm(4, 64, 64, 1), DF_WS, false);
	ck_assert_int_lt(a.cycles, 256 * 4 + 64);
	ck_assert_int_gt(b.cycles, 255 * 16);
	ck_assert_int_gt(b.cat[CAT_WEIGHTS], 255 * 12);
}
END_TEST

/*
 * Large arrays, tiny K and T, ideal memory: hundreds of blocks drain at once;
 * the engine must not wait on accumulator tiles that ideal memory makes free.
 */
START_TEST(ideal_large_array_small_k)
{
	static const int64_t shapes[][3] = { { 100000, 3, 4 }, { 5000, 2, 300 }, { 7, 1, 9000 } };
	for (int i = 0; i < 3; i++) {
		for (int df = 0; df < 3; df++) {
			struct config c;
			struct result a, g;
			struct err e = { 0 };
			struct op o = th_gemm(shapes[i][0], shapes[i][1], shapes[i][2], 1);
			th_config(&c, "tpu_v1", NULL);
			ck_assert_int_eq(th_analytic(&c, &o, df, true, &a, &e), 0);
			g = run1("tpu_v1", NULL, o, df, true);
			ck_assert_msg(g.cycles == a.cycles, "shape %d df %d: engine %lld, analytic %lld", i, df,
				      (long long)g.cycles, (long long)a.cycles);
		}
	}
}
END_TEST

/* ---- the engine's observers (etrace.h) ---- */

/* An observer that writes down what it is told, as "kind idx@cycle" and the lifecycle calls. */
struct rec_obs {
	struct etrace_obs obs;
	char log[512];
	int *freed;
};

static void rec_say(struct etrace_obs *o, const char *fmt, long long a, long long b)
{
	struct rec_obs *r = (struct rec_obs *)o;
	size_t n = strlen(r->log);
	snprintf(r->log + n, sizeof r->log - n, fmt, a, b);
}

static void rec_ev(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	static const char *name[ET_N] = { [ET_OP] = "op", [ET_FOLD] = "fold", [ET_FOLDED] = "folded", [ET_OPEND] = "opend" };
	char fmt[32];
	snprintf(fmt, sizeof fmt, "%s %%lld@%%lld ", name[ev->kind]);
	rec_say(o, fmt, (long long)ev->idx, (long long)c);
}

static void rec_pass(struct etrace_obs *o, int64_t c, size_t first, size_t n)
{
	rec_say(o, "pass %lld+%lld ", (long long)first, (long long)n);
	rec_say(o, "@%lld%.0lld ", (long long)c, 0);
}

static int rec_pass_end(struct etrace_obs *o, int64_t c, struct err *e)
{
	(void)e;
	rec_say(o, "end@%lld%.0lld ", (long long)c, 0);
	return 0;
}

/* What the observer logged up to its close: it is freed with the traces, so its log with it. */
static char closed_log[64];

static int rec_close(struct etrace_obs *o, int64_t c, struct err *e)
{
	(void)e;
	rec_say(o, "close@%lld%.0lld", (long long)c, 0);
	snprintf(closed_log, sizeof closed_log, "%s", ((struct rec_obs *)o)->log);
	return 0;
}

static void rec_free(struct etrace_obs *o)
{
	struct rec_obs *r = (struct rec_obs *)o;
	(*r->freed)++;
	free(r);
}

static const struct etrace_obs_ops rec_ops = {
	.on = { [ET_OP] = rec_ev, [ET_FOLD] = rec_ev, [ET_FOLDED] = rec_ev, [ET_OPEND] = rec_ev },
	.on_pass = rec_pass,
	.on_pass_end = rec_pass_end,
	.close = rec_close,
	.free = rec_free,
};

/*
 * An observer of its own (no sink of the engine's) takes the kinds it asks
 * for, in cycle order, on the report's timeline. boundary_double_buffer's
 * two folds: fold 0 streams over cycles 4-13, fold 1 over 14-23 (its weights
 * shifted in behind fold 0), the drain ends at 30. At cycle 14 fold 0's end
 * comes before fold 1's start, as they were reported. A second pass goes on
 * at cycle 30. The observer is freed once, when the traces close.
 */
START_TEST(observer_timeline)
{
	struct config c;
	struct result r;
	struct err e = { 0 };
	int freed = 0;
	struct op o = th_gemm(10, 8, 4, 1);
	struct rec_obs *ro = calloc(1, sizeof *ro);
	engine *en;
	ck_assert_ptr_nonnull(ro);
	ro->obs.ops = &rec_ops;
	ro->freed = &freed;
	th_config(&c, "lab_4x4", NULL);
	en = engine_new(&c, true, &e);
	ck_assert_ptr_nonnull(en);
	ck_assert_int_eq(engine_observe(en, &ro->obs, &e), 0);
	ck_assert_msg(th_engine(en, &c, &o, DF_WS, true, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.cycles, 30);
	ck_assert_str_eq(ro->log, "pass 0+1 @0 op 0@0 fold 0@4 folded 0@14 fold 1@14 folded 1@24 opend 0@30 end@30 ");
	ro->log[0] = 0;
	ck_assert_msg(th_engine(en, &c, &o, DF_WS, true, &r, &e) == 0, "%s", e.msg);
	ck_assert_str_eq(ro->log, "pass 0+1 @30 op 0@30 fold 0@34 folded 0@44 fold 1@44 folded 1@54 opend 0@60 end@60 ");
	ro->log[0] = 0;
	ck_assert_int_eq(engine_trace_close(en, &e), 0);
	ck_assert_str_eq(closed_log, "close@60");
	ck_assert_int_eq(freed, 1);
	engine_free(en);
	ck_assert_int_eq(freed, 1);
}
END_TEST

static void count_tick(void *ctx, size_t op, int64_t folds)
{
	int64_t *t = ctx;
	t[0]++;
	t[1] = (int64_t)op;
	t[2] = folds;
}

/*
 * Fold ticks every ENGINE_FOLDS_TICK = 65536 folds: ws on a 4x4 array with
 * one input row runs a fold per 4 x 4 weight tile, so K = 4 x 256 and
 * N = 4 x 256 make 65536 folds, one tick (op 0, 65536 folds); 4 x 255 by
 * 4 x 257 make 65535, none. Turned off, no tick.
 */
START_TEST(observer_fold_ticks)
{
	struct config c;
	struct result r;
	struct err e = { 0 };
	int64_t t[3] = { 0, -1, -1 };
	struct op at = th_gemm(1, 4 * 256, 4 * 256, 1), below = th_gemm(1, 4 * 255, 4 * 257, 1);
	engine *en;
	th_config(&c, "lab_4x4", NULL);
	en = engine_new(&c, true, &e);
	ck_assert_ptr_nonnull(en);
	engine_on_folds(en, count_tick, t);
	ck_assert_msg(th_engine(en, &c, &below, DF_WS, true, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.folds, 65535);
	ck_assert_int_eq(t[0], 0);
	ck_assert_msg(th_engine(en, &c, &at, DF_WS, true, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.folds, 65536);
	ck_assert_int_eq(t[0], 1);
	ck_assert_int_eq(t[1], 0);
	ck_assert_int_eq(t[2], 65536);
	engine_on_folds(en, NULL, NULL);
	ck_assert_msg(th_engine(en, &c, &at, DF_WS, true, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t[0], 1);
	engine_free(en);
}
END_TEST

/*
 * The bus's windows, by hand. At P = 4 bytes a cycle, 10 bytes accepted at
 * cycle 0 and 6 at cycle 1 cross over cycles 0-3 (16 / 4); a window [0, 2)
 * takes floor(2 x 4) = 8, [2, 5) the other 8; 4 bytes accepted at cycle 10
 * (the queue drained at cycle 4: a new busy period) go to the last window.
 * At P = 1.5, 10 bytes from cycle 0: [0, 1) takes floor(1.5) = 1; [1, 2)
 * would take floor(3) - 1 = 2 but its cap is floor(1.5) = 1; [2, 3) takes
 * floor(4.5) - 2 = 2, capped to 1; the last window the 7 left. The ideal
 * memory (P infinite): 5 bytes accepted at cycle 3 are not in a window that
 * ends at 3, and all in the next.
 */
START_TEST(bus_windows)
{
	struct bus b;
	bus_init(&b, 4, 0);
	bus_accept(&b, 0, 10);
	bus_accept(&b, 1, 6);
	ck_assert_int_eq(bus_close(&b, 2), 8);
	ck_assert_int_eq(bus_close(&b, 5), 8);
	bus_accept(&b, 10, 4);
	ck_assert_int_eq(bus_close_last(&b), 4);

	bus_init(&b, 1.5, 0);
	bus_accept(&b, 0, 10);
	ck_assert_int_eq(bus_close(&b, 1), 1);
	ck_assert_int_eq(bus_close(&b, 2), 1);
	ck_assert_int_eq(bus_close(&b, 3), 1);
	ck_assert_int_eq(bus_close_last(&b), 7);

	bus_init(&b, INFINITY, 0);
	bus_accept(&b, 3, 5);
	ck_assert_int_eq(bus_close(&b, 3), 0);
	ck_assert_int_eq(bus_close(&b, 4), 5);
	ck_assert_int_eq(bus_close_last(&b), 0);
}
END_TEST

Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *t = tcase_create("engine");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, ideal_engine_equals_analytic);
	tcase_add_test(t, ideal_vector_equals_analytic);
	tcase_add_test(t, real_plans_instant_memory);
	tcase_add_test(t, engine_scalesim_alexnet);
	tcase_add_test(t, ideal_large_array_small_k);
	tcase_add_test(t, weight_port_limits_shift);
	tcase_add_test(t, boundary_one_fold);
	tcase_add_test(t, boundary_double_buffer);
	tcase_add_test(t, tpu_v1_weight_tile);
	tcase_add_test(t, gemv_at_bandwidth_bound);
	tcase_add_test(t, halving_bandwidth);
	tcase_add_test(t, smaller_buffer_more_traffic_and_stalls);
	tcase_add_test(t, observer_timeline);
	tcase_add_test(t, observer_fold_ticks);
	tcase_add_test(t, bus_windows);
	suite_add_tcase(s, t);
	return s;
}
