/*
 * test_analytic.c - cycles worked out by hand, the closed form against
 * models/array's timer walked over the tile program, and SCALE-Sim's
 * compute model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "plan.h"
#include "schedule.h"
#include "tests.h"

static int64_t cycles(const char *preset, const char *const *sets, struct op o, int df)
{
	struct config c;
	struct sched s;
	struct err e = { 0 };
	th_config(&c, preset, sets);
	ck_assert_msg(plan_gemm(&s, &o, &c, &c.arch, df, false, &e) == 0, "%s", e.msg);
	return analytic_gemm_cycles(&s);
}

/*
 * 4x4 array, M = 10, K = 6, N = 5.
 * ws: folds (Sr, Sc) = (4,4) (2,4) (4,1) (2,1), each streaming T = 10 rows.
 *   The first tile shifts in (4), each fold streams 10 rows while the next
 *   tile shifts in behind it (10, 10, 10, and the last 10), then the last
 *   partial sums drain through 4 rows and across Sc = 1 column: 4 + 1 - 2 = 3.
 *   4 + 4 x 10 + 3 = 47.
 */
START_TEST(ws_by_hand)
{
	ck_assert_int_eq(cycles("lab_4x4", NULL, th_gemm(10, 6, 5, 1), DF_WS), 47);
	/*
	 * No shadow tile: each tile shifts in from the last cycle of the fold
	 * before's stream (its last input reads each weight register in the
	 * cycle the chain writes it; its partial sums drain behind), so the
	 * first fold pays Sr + T and each later one Sr - 1 + T:
	 * 14 + 11 + 13 + 11 = 49, then the last drain 4 + 1 - 2 = 3: 52.
	 * The first column block (Sc = 4) ended at 25 and drains until
	 * 25 + 4 + 4 - 2 = 31, earlier.
	 */
	const char *serial[] = { "array.weight_double_buffer=false", NULL };
	ck_assert_int_eq(cycles("lab_4x4", serial, th_gemm(10, 6, 5, 1), DF_WS), 52);
}
END_TEST

/*
 * ws with T < R: M = 2, K = 8, N = 4. Tile 0 shifts in (4); tile 1 needs 4
 * cycles to shift in, longer than tile 0's 2-row stream (4); tile 1 streams 2
 * rows and drains 4 + 4 - 2 = 6. 4 + 4 + 2 + 6 = 16.
 */
START_TEST(ws_shift_bound)
{
	ck_assert_int_eq(cycles("lab_4x4", NULL, th_gemm(2, 8, 4, 1), DF_WS), 16);
}
END_TEST

/*
 * os: folds of (Sr, Sc) over M = 10 (4, 4, 2) x N = 5 (4, 1): 6 folds of T = K = 6.
 * The first streams 6; each later one max(6, Sr of the block before, whose
 * results drain through the out registers) = 6; the last fold's final MAC
 * lands 2 + 1 - 2 = 1 cycle after its stream, then 4 to drain.
 * 6 + 5 x 6 + 1 + 4 = 41. Serial (the accumulators are the drain path): a
 * fold starts Sr - 1 after the previous stream, Sr of the previous fold:
 * streams end at 6, 6+3+6 = 15, 24, 24+1+6 = 31, 40, 49; the last drains
 * 2 + 1 - 2 + 4 = 5: 54 (fold 4, Sr 4 x Sc 1, is out at 40 + 4 + 1 - 2 + 4 = 47).
 */
START_TEST(os_by_hand)
{
	const char *serial[] = { "array.weight_double_buffer=false", NULL };
	ck_assert_int_eq(cycles("lab_4x4", NULL, th_gemm(10, 6, 5, 1), DF_OS), 41);
	ck_assert_int_eq(cycles("lab_4x4", serial, th_gemm(10, 6, 5, 1), DF_OS), 54);
}
END_TEST

/*
 * is: the input A^T (K = 6 x M = 10) stays: folds (4,4) (2,4) (4,4) (2,4) (4,2) (2,2),
 * each streaming T = N = 5. 4 + 5 x 5 + (5 + 4 + 2 - 2) = 38.
 */
START_TEST(is_by_hand)
{
	ck_assert_int_eq(cycles("lab_4x4", NULL, th_gemm(10, 6, 5, 1), DF_IS), 38);
}
END_TEST

/*
 * Rates (array.h), on 4x4 at int8, M = 10, K = 16, N = 4, ws, no chunking.
 * Rate 2 packs two elements of K into each PE: a fold covers 8 of K in 4
 * rows, so 2 folds of (4 rows, 4 columns) streaming 10: 4 + 10 + 10 + (4 + 4
 * - 2) = 30, as a 10 x 8 x 4 GEMM at rate 1. Rate 1 takes 4 folds: 4 + 3 x 10
 * + 10 + 6 = 50. Rate 1/3 streams each of the 4 folds 3 times: 4 + 3 x 30 +
 * 30 + 6 = 130. os (M = 4, K = 16, N = 4): one block streams K = 16 at rate
 * 1, 8 at rate 2, 48 at rate 1/3, then its results drain Sr + Sc - 2 + R =
 * 10: 26, 18, 58. is (A^T, 16 x 10, stays; T = N = 4): at rate 2, folds
 * (4, 4) (4, 4) (4, 4) (4, 4) (4, 2) (4, 2): 4 + 5 x max(4, 4) + 4 + (4 + 2
 * - 2) = 32. HBM is made fast enough not to steer the plan. The bytes moved
 * are the operands' own at every rate.
 */
START_TEST(rates_by_hand)
{
	const char *r2[] = { "array.rate_int8=2", "hbm.gbps=1e5", NULL }, *r1[] = { "hbm.gbps=1e5", NULL };
	const char *r13[] = { "array.rate_int8=1/3", "hbm.gbps=1e5", NULL };
	ck_assert_int_eq(cycles("lab_4x4", r2, th_gemm(10, 16, 4, 1), DF_WS), 30);
	ck_assert_int_eq(cycles("lab_4x4", r1, th_gemm(10, 8, 4, 1), DF_WS), 30);
	ck_assert_int_eq(cycles("lab_4x4", r1, th_gemm(10, 16, 4, 1), DF_WS), 50);
	ck_assert_int_eq(cycles("lab_4x4", r13, th_gemm(10, 16, 4, 1), DF_WS), 130);
	ck_assert_int_eq(cycles("lab_4x4", r1, th_gemm(4, 16, 4, 1), DF_OS), 26);
	ck_assert_int_eq(cycles("lab_4x4", r2, th_gemm(4, 16, 4, 1), DF_OS), 18);
	ck_assert_int_eq(cycles("lab_4x4", r13, th_gemm(4, 16, 4, 1), DF_OS), 58);
	ck_assert_int_eq(cycles("lab_4x4", r2, th_gemm(10, 16, 4, 1), DF_IS), 32);

	struct config c;
	struct sched s;
	struct err e = { 0 };
	struct op o = th_gemm(10, 16, 4, 1);
	th_config(&c, "lab_4x4", r2);
	ck_assert_msg(plan_gemm(&s, &o, &c, &c.arch, DF_WS, false, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(s.read_bytes[OPND_A] + s.read_bytes[OPND_B], 10 * 16 + 16 * 4);
	ck_assert_int_eq(s.write_bytes, 10 * 4);
}
END_TEST

/*
 * SCALE-Sim v2 on 4x4: per fold 2R + C + T - 2 (ws, is) or R + C + T - 2 (os),
 * with the full array even for partial folds; minus 1 per layer.
 * ws: 4 folds x (8 + 4 + 10 - 2) - 1 = 79; os: 6 x (4 + 4 + 6 - 2) - 1 = 71;
 * is: 6 x (8 + 4 + 5 - 2) - 1 = 89.
 */
START_TEST(scalesim_by_hand)
{
	const char *compat[] = { "array.scalesim_compat=true", NULL };
	ck_assert_int_eq(cycles("lab_4x4", compat, th_gemm(10, 6, 5, 1), DF_WS), 79);
	ck_assert_int_eq(cycles("lab_4x4", compat, th_gemm(10, 6, 5, 1), DF_OS), 71);
	ck_assert_int_eq(cycles("lab_4x4", compat, th_gemm(10, 6, 5, 1), DF_IS), 89);
}
END_TEST

/*
 * SCALE-Sim's AlexNet topology on a 32 x 32 array, every layer and dataflow,
 * from its own formulas: out = ceil((H - R + s) / s); ws Sr = K, Sc = N, T = M;
 * is Sr = K, Sc = M, T = N; os Sr = M, Sc = N, T = K. Conv1 on ws is the
 * published check value 112,283.
 */
START_TEST(scalesim_alexnet)
{
	static const int64_t layers[5][6] = {   /* H, R, C, N, stride */
		{ 227, 11, 3, 96, 4 }, { 27, 5, 96, 256, 1 }, { 13, 3, 256, 384, 1 },
		{ 13, 3, 384, 384, 1 }, { 13, 3, 384, 256, 1 },
	};
	const char *compat[] = { "array.scalesim_compat=true", "array.rows=32", "array.cols=32", NULL };
	struct config c;
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	th_config(&c, "edge_32x32", compat);
	ck_assert_msg(workload_load(&w, "traces/alexnet.csv", 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ops.n, 5);
	for (int df = 0; df < 3; df++) {
		for (int i = 0; i < 5; i++) {
			int64_t h = layers[i][0], r = layers[i][1], s = layers[i][4];
			int64_t o = (h - r + s + s - 1) / s, M = o * o, K = r * r * layers[i][2], N = layers[i][3];
			int64_t sr = df == DF_OS ? M : K, sc = df == DF_IS ? M : N, t = df == DF_WS ? M : df == DF_IS ? N : K;
			int64_t per = (df == DF_OS ? 32 : 64) + 32 + t - 2;
			int64_t want = ((sr + 31) / 32) * ((sc + 31) / 32) * per - 1;
			struct result res;
			char name[OP_NAME_MAX];
			ck_assert_int_eq(th_analytic(&c, &ops.v[i], df, false, &res, &e), 0);
			ck_assert_msg(res.compute_cycles == want, "%s df %d: %lld, want %lld", op_name(&ops.v[i], name, sizeof name), df,
				      (long long)res.compute_cycles, (long long)want);
			if (i == 0 && df == DF_WS)
				ck_assert_int_eq(res.compute_cycles, 112283);
		}
	}
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

/*
 * The tile program of s walked through models/array's timer with every
 * operand there at once; cat[] receives its cycles by category.
 */
static int64_t timer_walk(const struct config *c, const struct sched *s, int64_t cat[CAT_N])
{
	struct array_timer tm;
	struct array_step st;
	struct sched_iter it;
	struct tile_ins ins;
	int64_t sum = 0, end;
	memset(cat, 0, CAT_N * sizeof *cat);
	array_timer_init(&tm, &c->arch.array, s->df, 0);
	sched_iter_init(&it, s);
	while (sched_next(&it, &ins)) {
		if (ins.kind != TI_FOLD)
			continue;
		struct array_fold f = { .sc = ins.sc, .cont = ins.cont, .last = ins.last, .inst_last = ins.inst_last };
		sched_fold_view(s, &ins, &f.sr, &f.t);
		f.shift = f.sr;
		f.stream = f.t;
		array_timer_fold(&tm, &f, &st);
		ck_assert_int_eq(st.wait_to, st.wait_from);     /* nothing to wait for */
		ck_assert_int_eq(st.end, st.start + f.t);
		for (int i = 0; i < CAT_N; i++)
			cat[i] += st.cat[i];
	}
	end = array_timer_end(&tm, cat);
	for (int i = 0; i < CAT_N; i++)
		sum += cat[i];
	/* The timer's categories cover its cycles: streaming and the array's own overhead. */
	ck_assert_int_eq(sum, end);
	ck_assert_int_eq(cat[CAT_COMPUTE], analytic_stream_cycles(s));
	/* Nothing waited, so nothing but the array's own categories. */
	ck_assert_int_eq(cat[CAT_WEIGHTS] + cat[CAT_INPUTS] + cat[CAT_OUTPUTS] + cat[CAT_VECTOR], 0);
	return end;
}

/*
 * The closed form equals models/array's timer fed every fold of the tile
 * program with its operands there at once, on 1,000 random GEMMs, arrays
 * and buffers (fixed seed), for ws, os and is, pipelined, serial and
 * SCALE-Sim compatible, with partial last folds, chunks and parts of K,
 * and (but SCALE-Sim's) at rates that pack K or take passes: the cycles,
 * and their split into compute, weight_shift and fill_drain.
 */
START_TEST(closed_form_matches_timer)
{
	static const char *const rates[] = { "1", "2", "4", "1/2", "1/3" };
	int checked = 0, modes[3][3] = { { 0 } }, shifted = 0, rated = 0;
	for (int i = 0; i < 1000; i++) {
		char s[8][64];
		const char *sets[9];
		struct config c;
		struct sched sc;
		struct err e = { 0 };
		struct op o = th_gemm(th_rnd(&rng, 1, 200), th_rnd(&rng, 1, 200), th_rnd(&rng, 1, 200), 1);
		int df = (int)th_rnd(&rng, 0, 2), mode = (int)th_rnd(&rng, 0, 2);
		o.repeat = th_rnd(&rng, 1, 3);
		snprintf(s[0], 64, "array.rows=%lld", (long long)th_rnd(&rng, 1, 20));
		snprintf(s[1], 64, "array.cols=%lld", (long long)th_rnd(&rng, 1, 20));
		snprintf(s[2], 64, "sram.outputs.kib=%lld", (long long)th_rnd(&rng, 1, 4));
		snprintf(s[3], 64, "sram.inputs.kib=%lld", (long long)th_rnd(&rng, 1, 4));
		snprintf(s[4], 64, "sram.weights.kib=%lld", (long long)th_rnd(&rng, 1, 4));
		snprintf(s[5], 64, "array.weight_double_buffer=%s", mode == 1 ? "false" : "true");
		snprintf(s[6], 64, "array.scalesim_compat=%s", mode == 2 ? "true" : "false");
		snprintf(s[7], 64, "array.rate_int8=%s", mode == 2 ? "1" : rates[th_rnd(&rng, 0, 4)]);
		for (int j = 0; j < 8; j++)
			sets[j] = s[j];
		sets[8] = NULL;
		th_config(&c, "lab_4x4", sets);
		if (plan_gemm(&sc, &o, &c, &c.arch, df, false, &e) < 0)
			continue;
		checked++;
		modes[df][mode]++;
		rated += sc.pack > 1 || sc.passes > 1;
		int64_t cat[CAT_N], walk = timer_walk(&c, &sc, cat);
		ck_assert_msg(walk == analytic_gemm_cycles(&sc),
			      "case %d: df %d mode %d M %lld K %lld N %lld x%lld on %lldx%lld: timer %lld, closed form %lld", i,
			      df, mode, (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.repeat, (long long)sc.R,
			      (long long)sc.C, (long long)walk, (long long)analytic_gemm_cycles(&sc));
		ck_assert_msg(cat[CAT_WEIGHT_SHIFT] == analytic_shift_cycles(&sc),
			      "case %d: df %d mode %d M %lld K %lld N %lld x%lld on %lldx%lld: weight_shift: timer %lld, "
			      "closed form %lld", i, df, mode, (long long)o.m, (long long)o.k, (long long)o.n,
			      (long long)o.repeat, (long long)sc.R, (long long)sc.C, (long long)cat[CAT_WEIGHT_SHIFT],
			      (long long)analytic_shift_cycles(&sc));
		/* What the closed form reports: the same split, fill_drain the rest. */
		struct result r;
		ck_assert_int_eq(analytic_op(&c, &o, &sc, true, &r, &e), 0);
		for (int k = 0; k < CAT_N; k++)
			ck_assert_msg(r.cat[k] == cat[k], "case %d: %s: analytic %lld, timer %lld", i, cat_names[k],
				      (long long)r.cat[k], (long long)cat[k]);
		if (df == DF_OS)
			ck_assert_int_eq(cat[CAT_WEIGHT_SHIFT], 0);
		else
			shifted += mode == 0 && cat[CAT_WEIGHT_SHIFT] > sc.R;    /* a shift beyond the first exposed */
		/* Never faster than the MACs spread over every PE at its rate. */
		ck_assert_int_ge(walk * sc.Rp * sc.C * sc.pack, op_macs(&o) * sc.passes);
	}
	ck_assert_int_gt(checked, 500);
	ck_assert_int_gt(rated, 200);
	ck_assert_int_gt(shifted, 30);
	for (int df = 0; df < 3; df++)
		for (int m = 0; m < 3; m++)
			ck_assert_int_gt(modes[df][m], 30);
}
END_TEST

/*
 * The timer by hand, ws on 4x4 with a 10-row stream: folds (4,4) (2,4) (4,1)
 * (2,1) as in ws_by_hand (47 cycles), but B's second tile (2 rows) arrives
 * at cycle 20, after fold 0 has streamed (4-14). It shifts in over 20-22, so
 * fold 1 starts at 22 instead of 14: an 8-cycle wait on B, then everything
 * as before, 8 cycles later: 55. Fold 1's stream ends at 32 and its block
 * leaves R + Sc - 2 = 6 cycles later, at 38.
 */
START_TEST(timer_waits_by_hand)
{
	struct config c;
	struct array_timer tm;
	struct array_step st;
	static const int64_t shape[4][2] = { { 4, 4 }, { 2, 4 }, { 4, 1 }, { 2, 1 } };
	int64_t cat[CAT_N] = { 0 }, waited = 0;
	th_config(&c, "lab_4x4", NULL);
	array_timer_init(&tm, &c.arch.array, DF_WS, 0);
	for (int i = 0; i < 4; i++) {
		struct array_fold f = { .sr = shape[i][0], .sc = shape[i][1], .t = 10 };
		f.last = i % 2 == 1;
		f.inst_last = i == 3;
		f.shift = f.sr, f.stream = 10;
		f.ready[OPND_B] = i == 1 ? 20 : 0;
		array_timer_fold(&tm, &f, &st);
		if (i == 1) {
			ck_assert_int_eq(st.start, 22);
			ck_assert_int_eq(st.wait_from, 14);
			ck_assert_int_eq(st.wait_to, 22);
			ck_assert_int_eq(st.wait_opnd[0], OPND_B);
			ck_assert_int_eq(st.wait_ready[0], 22);       /* shifted in */
			ck_assert_int_eq(st.out, 38);
		}
		waited += st.wait_to - st.wait_from;
		for (int j = 0; j < CAT_N; j++)
			cat[j] += st.cat[j];
	}
	ck_assert_int_eq(array_timer_end(&tm, cat), 55);
	ck_assert_int_eq(cat[CAT_COMPUTE], 40);
	ck_assert_int_eq(cat[CAT_WEIGHT_SHIFT], 4);   /* the first shift; fold 1's waited for its tile */
	ck_assert_int_eq(cat[CAT_FILL_DRAIN], 3);     /* the last drain */
	ck_assert_int_eq(waited, 8);
}
END_TEST

/*
 * A matrix-vector product on TPU v1 (M = 1, K = N = 4096): 16 MiB of weights
 * at 34 GB/s / 0.7 GHz = 48.57 B per cycle. The op takes the memory time, and
 * only its compute time with ideal memory.
 */
START_TEST(memory_bound_gemv)
{
	struct config c;
	struct result r, ideal;
	struct err e = { 0 };
	struct op o = th_gemm(1, 4096, 4096, 1);
	int64_t bytes = 4096 * 4096 + 4096 + 4096;
	th_config(&c, "tpu_v1", NULL);
	ck_assert_int_eq(th_analytic(&c, &o, DF_WS, false, &r, &e), 0);
	ck_assert_int_eq(th_analytic(&c, &o, DF_WS, true, &ideal, &e), 0);
	ck_assert_int_eq(r.hbm_read_bytes + r.hbm_write_bytes, bytes);
	ck_assert_int_eq(r.cycles, (int64_t)ceil(bytes / (34.0 / 0.7)));
	ck_assert_int_eq(ideal.cycles, ideal.compute_cycles);
	ck_assert_int_gt(r.cycles, ideal.cycles);
	/* 16 x 16 folds of T = 1 behind 256-cycle weight shifts: 256 + 255 x 256 + 1 + 256 + 256 - 2 */
	ck_assert_int_eq(ideal.compute_cycles, 256 + 255 * 256 + 1 + 256 + 256 - 2);
}
END_TEST

Suite *analytic_suite(void)
{
	Suite *s = suite_create("analytic");
	TCase *t = tcase_create("analytic");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, ws_by_hand);
	tcase_add_test(t, ws_shift_bound);
	tcase_add_test(t, os_by_hand);
	tcase_add_test(t, is_by_hand);
	tcase_add_test(t, rates_by_hand);
	tcase_add_test(t, scalesim_by_hand);
	tcase_add_test(t, scalesim_alexnet);
	tcase_add_test(t, closed_form_matches_timer);
	tcase_add_test(t, timer_waits_by_hand);
	tcase_add_test(t, memory_bound_gemv);
	suite_add_tcase(s, t);
	return s;
}
