/*
 * test_functional.c - the register-level executor: hand cases, the property
 * test against the fold timer and the closed form, the registers objecting
 * to an early start and error bounds (the command line is
 * test_functional_cli.c's, the .npy reader test_npy.c's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "array.h"
#include "engine.h"
#include "functional.h"
#include "tests.h"
#include "xmath.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static const char *const df_names[] = { "ws", "os", "is" };
#define dt_names array_dtype_names

/* The config of lab_4x4 as R x C, dataflow, pipelined or not and dtype. */
static void cfg_for(struct config *c, int64_t R, int64_t C, int df, bool dbuf, int dt)
{
	char s[5][64];
	const char *sets[6];
	snprintf(s[0], 64, "array.rows=%lld", (long long)R);
	snprintf(s[1], 64, "array.cols=%lld", (long long)C);
	snprintf(s[2], 64, "array.dataflow=%s", df_names[df]);
	snprintf(s[3], 64, "array.weight_double_buffer=%s", dbuf ? "true" : "false");
	snprintf(s[4], 64, "array.dtype=%s", dt_names[dt]);
	for (int i = 0; i < 5; i++)
		sets[i] = s[i];
	sets[5] = NULL;
	th_config(c, "lab_4x4", sets);
}

/* func_run on o planned with ideal memory; returns its status. */
static int run_func(const struct config *c, const struct op *o, int df, const struct func_opts *opt,
		    struct func_result *r, struct err *e)
{
	struct sched s;
	ck_assert_int_eq(plan_gemm(&s, o, c, &c->arch, df, true, e), 0);
	return func_run(c, o, &s, opt, r, e);
}

/*
 * The property test: on 1,000 random cases (arrays 1x1..16x16, ws/os/is,
 * pipelined and serial, M, K, N in 1..40, every dtype), the registers' cycles
 * equal the cycle engine's with ideal memory and the closed form's, with
 * the same categories, and every output matches the reference.
 */
START_TEST(registers_equal_timer_and_closed_form)
{
	for (int i = 0; i < 1000; i++) {
		struct config c;
		struct result a, g;
		struct func_result f;
		struct func_opts opt = { .seed = (uint64_t)i };
		struct err e = { 0 };
		int64_t R = th_rnd(&rng, 1, 16), C = th_rnd(&rng, 1, 16);
		int df = (int)th_rnd(&rng, 0, 2), dt = (int)th_rnd(&rng, 0, 3);
		bool dbuf = th_rnd(&rng, 0, 1);
		/* a quarter of the cases larger than the array in every dimension */
		int64_t hi = i % 4 == 0 ? 40 : th_rnd(&rng, 1, 40);
		struct op o = th_gemm(th_rnd(&rng, i % 4 == 0 ? R + 1 : 1, max64(hi, R + 1)),
				      th_rnd(&rng, i % 4 == 0 ? R + 1 : 1, max64(hi, R + 1)),
				      th_rnd(&rng, i % 4 == 0 ? C + 1 : 1, max64(hi, C + 1)), th_rnd(&rng, 1, 2));
		engine *en;
		cfg_for(&c, R, C, df, dbuf, dt);
		ck_assert_msg(run_func(&c, &o, df, &opt, &f, &e) == 0, "case %d: %s", i, e.msg);
		ck_assert_int_eq(th_analytic(&c, &o, df, true, &a, &e), 0);
		en = engine_new(&c, true, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_msg(th_engine(en, &c, &o, df, true, &g, &e) == 0, "%s", e.msg);
		engine_free(en);
		ck_assert_msg(f.cycles == g.cycles && g.cycles == a.cycles,
			      "case %d: %s %s %lldx%lld M %lld K %lld N %lld x%lld: registers %lld, engine %lld, closed form %lld",
			      i, df_names[df], dbuf ? "pipelined" : "serial", (long long)R, (long long)C, (long long)o.m,
			      (long long)o.k, (long long)o.n, (long long)o.repeat, (long long)f.cycles, (long long)g.cycles,
			      (long long)a.cycles);
		for (int k = 0; k < CAT_N; k++)
			ck_assert_msg(f.cat[k] == g.cat[k], "case %d: category %d: registers %lld, engine %lld", i, k,
				      (long long)f.cat[k], (long long)g.cat[k]);
		ck_assert_int_eq(f.outputs, o.m * o.n * o.repeat);
		ck_assert_msg(f.mismatches == 0, "case %d: %lld mismatches, max error %g", i, (long long)f.mismatches,
			      f.max_abs_error);
	}
}
END_TEST


/* ---- hand cases: a 3 x 2 times 2 x 2 GEMM on a 2 x 2 array ---- */

/* A = [[1, 2], [3, 4], [5, 6]], B = [[7, 8], [9, 10]]: C = [[25, 28], [57, 64], [89, 100]]. */
static const double hand_a[6] = { 1, 2, 3, 4, 5, 6 }, hand_b[4] = { 7, 8, 9, 10 };

#define HAND_CYCLES 8
struct hand_log {
	struct func_pe pe[HAND_CYCLES][4];
	struct func_out left[HAND_CYCLES][4];
	int nleft[HAND_CYCLES];
	int64_t fold[HAND_CYCLES], loading[HAND_CYCLES];
	int64_t last;
};

static int hand_observe(const struct func_view *v, void *ctx)
{
	struct hand_log *h = ctx;
	ck_assert_int_eq(v->R * v->C, 4);
	if (v->cycle >= 0 && v->cycle < HAND_CYCLES) {
		memcpy(h->pe[v->cycle], v->pe, sizeof h->pe[0]);
		h->nleft[v->cycle] = v->nleft < 4 ? v->nleft : 4;
		memcpy(h->left[v->cycle], v->left, (size_t)h->nleft[v->cycle] * sizeof *v->left);
		h->fold[v->cycle] = v->fold;
		h->loading[v->cycle] = v->loading;
	}
	h->last = v->cycle;
	return 0;
}

static struct func_result hand_run(int df, bool dbuf, struct hand_log *h)
{
	struct config c;
	struct func_result r;
	struct err e = { 0 };
	struct op o = th_gemm(3, 2, 2, 1);
	struct func_opts opt = { .a = hand_a, .b = hand_b, .observe = hand_observe, .ctx = h };
	memset(h, 0, sizeof *h);
	cfg_for(&c, 2, 2, df, dbuf, DT_INT8);
	ck_assert_msg(run_func(&c, &o, df, &opt, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.outputs, 6);
	ck_assert_int_eq(r.mismatches, 0);
	return r;
}

static void assert_reg(struct func_reg r, double v, int64_t fold)
{
	ck_assert_int_eq(r.fold, fold);
	if (fold >= 0)
		ck_assert_double_eq(r.v, v);
}

static void assert_left(const struct hand_log *h, int64_t c, int64_t m, int64_t n, double v)
{
	for (int i = 0; i < h->nleft[c]; i++)
		if (h->left[c][i].m == m && h->left[c][i].n == n) {
			ck_assert_double_eq(h->left[c][i].v, v);
			return;
		}
	ck_abort_msg("C[%lld][%lld] did not leave in cycle %lld", (long long)m, (long long)n, (long long)c);
}

/*
 * ws, one fold (Sr = K = 2, Sc = N = 2, T = M = 3): L = 0; column j's chain
 * takes B[1][j] at cycle j, B[0][j] at j + 1, in place from j + 2, so
 * s = L + Sr = 2, e = 5. Input row t meets (i, j) at 2 + t + i + j; C[t][j]
 * leaves at the end of 2 + t + 1 + j: C[0][0] in cycle 3, C[2][1] in 6.
 * Cycles 7 = Sr 2 (weight_shift) + T 3 (compute) + R + Sc - 2 = 2 (fill_drain).
 */
START_TEST(ws_by_hand)
{
	static struct hand_log h;
	struct func_result r = hand_run(DF_WS, true, &h);
	ck_assert_int_eq(r.cycles, 7);
	ck_assert_int_eq(r.cat[CAT_WEIGHT_SHIFT], 2);
	ck_assert_int_eq(r.cat[CAT_COMPUTE], 3);
	ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 2);
	assert_reg(h.pe[1][0].w[0], 9, 0);             /* B[1][0] passing row 0 */
	assert_reg(h.pe[1][1].w[0], 0, -1);            /* column 1 starts a cycle later */
	ck_assert_int_eq(h.loading[1], 0);
	assert_reg(h.pe[2][0].w[0], 7, 0);
	assert_reg(h.pe[2][2].w[0], 9, 0);
	assert_reg(h.pe[2][1].w[0], 10, 0);            /* B[1][1] passing row 0 of column 1 */
	assert_reg(h.pe[3][1].w[0], 8, 0);
	assert_reg(h.pe[3][3].w[0], 10, 0);
	assert_reg(h.pe[2][0].w[1], 0, -1);            /* one fold: the shadow bank stays empty */
	assert_reg(h.pe[4][0].x, 5, 0);                /* A[2][0]: t = 4 - 2 - 0 - 0 */
	assert_reg(h.pe[4][3].x, 2, 0);                /* A[0][1]: t = 4 - 2 - 1 - 1 */
	assert_reg(h.pe[4][2].p, 25, 0);               /* C[0][0], written by PE (1, 0) in cycle 3 */
	assert_reg(h.pe[4][0].p, 21, 0);               /* A[1][0] B[0][0] = 3 x 7, written in cycle 3 (t = 1) */
	ck_assert_int_eq(h.nleft[3], 1);
	assert_left(&h, 3, 0, 0, 25);
	assert_left(&h, 6, 2, 1, 100);
	ck_assert_int_eq(h.fold[2], 0);
	ck_assert_int_eq(h.fold[1], -1);
}
END_TEST

/*
 * os, two blocks in one column block: rows 0-1 (Sr = 2) stream K = 2 from
 * s = 0 (e = 2); row 2 (Sr = 1) pipelined from max(e, e + Sr - K) = 2 to 4,
 * serial from e + Sr - 1 = 3 to 5. Block 0's results drain from
 * X_j = e + Sr - 1 + j = 3 + j, row i's leaving at X_j + R - 1 - i: C[1][0]
 * in 3, C[0][0] and C[1][1] in 4, C[0][1] in 5. Block 1's from 4 + j
 * (pipelined), its one row leaving at 5 + j. Cycles 7 (serial 8):
 * T 4 compute, the rest fill_drain.
 */
START_TEST(os_by_hand)
{
	static struct hand_log h;
	struct func_result r = hand_run(DF_OS, true, &h);
	ck_assert_int_eq(r.cycles, 7);
	ck_assert_int_eq(r.cat[CAT_COMPUTE], 4);
	ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 3);
	assert_reg(h.pe[1][0].x, 2, 0);                /* A[0][1] */
	assert_reg(h.pe[1][1].x, 1, 0);                /* A[0][0] */
	assert_reg(h.pe[1][2].x, 3, 0);                /* A[1][0] */
	assert_reg(h.pe[1][0].p, 9, 0);                /* B[1][0] */
	assert_reg(h.pe[1][1].p, 8, 0);                /* B[0][1] */
	assert_reg(h.pe[1][2].p, 7, 0);                /* B[0][0] */
	assert_reg(h.pe[1][0].acc, 7, 0);              /* A[0][0] B[0][0] */
	assert_reg(h.pe[2][0].out, 25, 0);             /* the last MAC writes out */
	assert_reg(h.pe[2][0].acc, 0, -1);
	assert_reg(h.pe[3][0].acc, 35, 1);             /* block 1 (fold 1): A[2][0] B[0][0] */
	assert_reg(h.pe[3][0].out, 25, 0);
	assert_reg(h.pe[3][2].out, 57, 0);
	assert_left(&h, 3, 1, 0, 57);
	assert_left(&h, 4, 0, 0, 25);
	assert_left(&h, 4, 1, 1, 64);
	assert_left(&h, 5, 0, 1, 28);
	assert_left(&h, 5, 2, 0, 89);
	assert_left(&h, 6, 2, 1, 100);
	r = hand_run(DF_OS, false, &h);
	ck_assert_int_eq(r.cycles, 8);
	ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 4);
	assert_reg(h.pe[2][0].acc, 25, 0);             /* serial: the result stays in acc until it drains */
	assert_reg(h.pe[2][0].out, 0, -1);
	assert_left(&h, 6, 2, 0, 89);
}
END_TEST

/*
 * is: A^T stationary (Sr = K = 2; M = 3 in column blocks of 2 and 1), B's
 * columns stream (T = N = 2). Fold 0: L = 0, s = 2, e = 4; fold 1 loads into
 * bank 1 from L = s_0 = 2 (column 0 takes A[2][1] in cycle 2, A[2][0] in 3)
 * and streams from max(e_0, L + Sr) = 4 to 6. C[m0 + j][t] leaves at the end
 * of s + t + 1 + j: C[0][0] in 3, C[2][1] in 6. Cycles 7: compute 4,
 * weight_shift 2, fill_drain 1.
 */
START_TEST(is_by_hand)
{
	static struct hand_log h;
	struct func_result r = hand_run(DF_IS, true, &h);
	ck_assert_int_eq(r.cycles, 7);
	ck_assert_int_eq(r.cat[CAT_COMPUTE], 4);
	ck_assert_int_eq(r.cat[CAT_WEIGHT_SHIFT], 2);
	ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 1);
	assert_reg(h.pe[2][0].w[0], 1, 0);             /* A[0][0] */
	assert_reg(h.pe[2][2].w[0], 2, 0);             /* A[0][1] */
	assert_reg(h.pe[3][0].w[1], 6, 1);             /* A[2][1], shifting into bank 1 */
	ck_assert_int_eq(h.loading[3], 1);
	assert_reg(h.pe[4][0].w[1], 5, 1);
	assert_reg(h.pe[4][2].w[1], 6, 1);
	assert_reg(h.pe[4][0].x, 7, 1);                /* B[0][0], fold 1's first input */
	ck_assert_int_eq(h.pe[4][0].wsel, 1);
	assert_reg(h.pe[4][2].x, 10, 0);               /* B[1][1], fold 0's last */
	ck_assert_int_eq(h.pe[4][2].wsel, 0);
	assert_left(&h, 3, 0, 0, 25);
	assert_left(&h, 6, 2, 1, 100);
	ck_assert_int_eq(h.last, 6);
}
END_TEST

/* ---- the registers object to a start one cycle early ---- */

struct early_case {
	const char *what;
	int df;
	bool dbuf;
	int64_t R, C, M, K, N;
};

/*
 * Each case makes one rule bind at fold 1 (R = C = 4): ws pipelined with
 * T = 2 < Sr = 4 (s_1 = L_1 + Sr, L_1 = s_0), with T = 9 > Sr (s_1 = e_0),
 * ws serial (L_1 = e_0), os pipelined with T = K = 2 < Sr = 4 (the second
 * block's stream ends Sr after the first's), os serial (s_1 = e_0 + Sr - 1).
 * On time the run is clean; one cycle early from fold 1 on, ERR_SIM.
 */
START_TEST(early_start_objected)
{
	static const struct early_case cases[] = {
		{ "ws pipelined, load-bound", DF_WS, true, 4, 4, 2, 8, 4 },
		{ "ws pipelined, stream-bound", DF_WS, true, 4, 4, 9, 8, 4 },
		{ "ws serial", DF_WS, false, 4, 4, 3, 8, 4 },
		{ "is pipelined, load-bound", DF_IS, true, 4, 4, 4, 8, 2 },
		{ "os pipelined, T < Sr", DF_OS, true, 4, 4, 8, 2, 4 },
		{ "os serial", DF_OS, false, 4, 4, 8, 3, 4 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct early_case *k = &cases[i];
		struct config c;
		struct func_result r;
		struct err e = { 0 };
		struct op o = th_gemm(k->M, k->K, k->N, 1);
		struct func_opts on_time = { .seed = 3 }, early = { .seed = 3, .early = 1, .early_fold = 1 };
		cfg_for(&c, k->R, k->C, k->df, k->dbuf, DT_INT8);
		ck_assert_msg(run_func(&c, &o, k->df, &on_time, &r, &e) == 0, "%s: %s", k->what, e.msg);
		ck_assert_int_eq(r.mismatches, 0);
		ck_assert_msg(run_func(&c, &o, k->df, &early, &r, &e) < 0, "%s: one cycle early passed", k->what);
		ck_assert_int_eq(e.kind, ERR_SIM);
		ck_assert_msg(!strncmp(e.msg, "functional model: cycle ", 24) && strstr(e.msg, ", PE ("), "%s: %s", k->what,
			      e.msg);
	}
}
END_TEST

#define EARLY_FOLDS_MAX 512

/* The on-time run's view: each fold's first streaming cycle and first loading cycle, plus 1 (0: not seen). */
struct early_view {
	int64_t s[EARLY_FOLDS_MAX], L[EARLY_FOLDS_MAX];
};

static int record_early(const struct func_view *v, void *ctx)
{
	struct early_view *ev = ctx;
	if (v->fold >= 0 && v->fold < EARLY_FOLDS_MAX && !ev->s[v->fold])
		ev->s[v->fold] = v->cycle + 1;
	if (v->loading >= 0 && v->loading < EARLY_FOLDS_MAX && !ev->L[v->loading])
		ev->L[v->loading] = v->cycle + 1;
	return 0;
}

/*
 * One rule at a time: 200 random small cases (arrays up to 6 x 6, M, K, N
 * up to 16) in every mode (ws/is/os, pipelined and serial), a random fold
 * f >= 1, and each rule that sets fold f's time (ws/is: the load L_f and the
 * stream s_f; os: the stream after e_{f-1} and the drain rule) moved one
 * cycle early from f on, alone. The on-time run's starts (seen through the
 * observer) are checked against the rules of functional.h, computed here
 * from the plan; a perturbation that moves nothing (os: the other term of
 * the max is as late) is skipped; every other one is an ERR_SIM.
 */
START_TEST(each_rule_objects_alone)
{
	static const char *const what_names[] = { "all", "load", "stream", "drain" };
	int objected = 0, skipped = 0;
	for (int i = 0; i < 200; i++) {
		int64_t R = th_rnd(&rng, 1, 6), C = th_rnd(&rng, 1, 6);
		struct op o = th_gemm(th_rnd(&rng, 1, 16), th_rnd(&rng, 1, 16), th_rnd(&rng, 1, 16), th_rnd(&rng, 1, 2));
		for (int mode = 0; mode < 6; mode++) {
			int df = mode / 2;
			bool dbuf = mode % 2;
			struct config c;
			struct sched pl;
			struct sched_iter it;
			struct tile_ins in;
			struct func_result r;
			struct err e = { 0 };
			struct early_view ev = { 0 };
			int64_t t[EARLY_FOLDS_MAX], sr[EARLY_FOLDS_MAX], nf = 0;
			bool cont[EARLY_FOLDS_MAX], last[EARLY_FOLDS_MAX];
			cfg_for(&c, R, C, df, dbuf, DT_INT8);
			ck_assert_msg(plan_gemm(&pl, &o, &c, &c.arch, df, true, &e) == 0, "%s", e.msg);
			sched_iter_init(&it, &pl);
			while (sched_next(&it, &in))
				if (in.kind == TI_FOLD) {
					if (nf < EARLY_FOLDS_MAX) {
						t[nf] = in.t, sr[nf] = in.sr;
						cont[nf] = in.cont, last[nf] = in.last;
					}
					nf++;
				}
			if (nf < 2 || nf > EARLY_FOLDS_MAX)
				continue;
			struct func_opts on_time = { .seed = (uint64_t)i, .observe = record_early, .ctx = &ev };
			ck_assert_msg(func_run(&c, &o, &pl, &on_time, &r, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(r.mismatches, 0);
			int64_t f = th_rnd(&rng, 1, nf - 1), sf = ev.s[f] - 1, e_prev = ev.s[f - 1] - 1 + t[f - 1];
			int64_t pb_e = INT64_MIN, pb_sr = 0;
			for (int64_t k = 0; k < f; k++)
				if (last[k])
					pb_e = ev.s[k] - 1 + t[k], pb_sr = sr[k];
			for (int what = FUNC_EARLY_LOAD; what <= FUNC_EARLY_DRAIN; what++) {
				bool binds;
				if (df != DF_OS) {
					if (what == FUNC_EARLY_DRAIN)
						continue;
					int64_t L = ev.L[f] - 1;
					/* the top ports free (L + Sr of the tile before), and the bank read for the last time (e - 1 of f-2, serial f-1) */
					int64_t g = dbuf ? f - 2 : f - 1, bank = g >= 0 ? ev.s[g] - 1 + t[g] - 1 : INT64_MIN;
					ck_assert_int_eq(L, max64(ev.L[f - 1] - 1 + sr[f - 1], bank));
					ck_assert_int_eq(sf, max64(e_prev, L + sr[f]));
					binds = true;
				} else {
					if (what == FUNC_EARLY_LOAD)
						continue;
					int64_t drain = INT64_MIN;
					if (!dbuf && !cont[f])
						drain = pb_e + pb_sr - 1;
					if (dbuf && last[f] && pb_sr)
						drain = pb_e + pb_sr - t[f];
					ck_assert_int_eq(sf, max64(e_prev, drain));
					binds = what == FUNC_EARLY_STREAM ? e_prev > drain : drain > e_prev;
				}
				if (!binds) {
					skipped++;
					continue;
				}
				struct func_opts early = { .seed = (uint64_t)i, .early = 1, .early_fold = f, .early_what = what };
				ck_assert_msg(func_run(&c, &o, &pl, &early, &r, &e) < 0 && e.kind == ERR_SIM,
					      "case %d: %s %s %lldx%lld M %lld K %lld N %lld x%lld: the %s rule one cycle early "
					      "from fold %lld of %lld passed", i, df_names[df], dbuf ? "pipelined" : "serial",
					      (long long)R, (long long)C, (long long)o.m, (long long)o.k, (long long)o.n,
					      (long long)o.repeat, what_names[what], (long long)f, (long long)nf);
				objected++;
			}
		}
	}
	ck_assert_int_gt(objected, 1500);
	ck_assert_int_gt(skipped, 0);
}
END_TEST

#define FOLD_STARTS_MAX 4096

/* Each fold's first streaming cycle: by the timer, and (plus 1; 0: not seen) by the registers' view. */
struct fold_starts {
	int64_t timer[FOLD_STARTS_MAX], regs[FOLD_STARTS_MAX];
};

static int record_starts(const struct func_view *v, void *ctx)
{
	struct fold_starts *fs = ctx;
	if (v->fold >= 0 && v->fold < FOLD_STARTS_MAX && !fs->regs[v->fold])
		fs->regs[v->fold] = v->cycle + 1;
	return 0;
}

/*
 * os with K streamed in parts (cont): real plans on small buffers
 * (sram.*.kib 1..2, ideal = false) split K, and the registers run them. Their
 * cycles and categories equal the engine's with instant memory (the array
 * timer's own timing of the same plan), where nothing waits for memory,
 * and every part starts when models/array's timer starts it: pipelined, the
 * out-register rule delays a block's last part, its earlier parts streaming
 * back to back. At least 100 such cases, split into 2 or more parts, clean.
 */
START_TEST(os_parts_of_k_equal_timer)
{
	int checked = 0;
	int tall_checked = 0;
	for (int i = 0; i < 2000 && (checked < 150 || tall_checked < 50); i++) {
		char s[7][64];
		const char *sets[8];
		struct config c;
		struct sched pl;
		struct result g;
		struct func_result f;
		struct func_opts opt = { .seed = (uint64_t)i };
		struct err e = { 0 };
		bool dbuf = i % 2, tall = i % 4 >= 2;
		/* tall: 24..64 rows of fp32 and K < R, so that parts of a few rows make blocks shorter than Sr */
		int64_t R = tall ? th_rnd(&rng, 24, 64) : th_rnd(&rng, 1, 8), C = th_rnd(&rng, 1, 8);
		struct op o = th_gemm(th_rnd(&rng, 1, tall ? 3 * R : 40), tall ? th_rnd(&rng, 2, R - 1) : th_rnd(&rng, 20, 200),
				      th_rnd(&rng, 1, 40), th_rnd(&rng, 1, 2));
		engine *en;
		snprintf(s[5], 64, "array.dtype=%s", tall ? "fp32" : "int8");
		snprintf(s[0], 64, "array.rows=%lld", (long long)R);
		snprintf(s[1], 64, "array.cols=%lld", (long long)C);
		snprintf(s[2], 64, "array.weight_double_buffer=%s", dbuf ? "true" : "false");
		snprintf(s[3], 64, "sram.weights.kib=%lld", (long long)th_rnd(&rng, 1, 2));
		snprintf(s[4], 64, "sram.inputs.kib=%lld", (long long)th_rnd(&rng, 1, 2));
		snprintf(s[6], 64, "array.dataflow=os");
		for (int j = 0; j < 7; j++)
			sets[j] = s[j];
		sets[7] = NULL;
		th_config(&c, "lab_4x4", sets);
		if (plan_gemm(&pl, &o, &c, &c.arch, DF_OS, false, &e) < 0 || pl.nparts < 2)
			continue;
		en = engine_new(&c, false, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_int_eq(engine_instant_memory(en, &e), 0);
		ck_assert_msg(th_engine(en, &c, &o, DF_OS, false, &g, &e) == 0, "%s", e.msg);
		engine_free(en);
		if (g.cat[CAT_OUTPUTS] > 0 || g.cat[CAT_INPUTS] > 0 || g.cat[CAT_WEIGHTS] > 0)
			continue;
		/* each part's start by the array timer, fed the plan's folds with everything ready at 0 */
		struct sched_iter it;
		struct tile_ins ins;
		struct array_timer tm;
		struct fold_starts fs = { 0 };
		int64_t nf = 0;
		array_timer_init(&tm, &c.arch.array, DF_OS, 0);
		sched_iter_init(&it, &pl);
		while (sched_next(&it, &ins)) {
			struct array_fold af = { .sr = ins.sr, .sc = ins.sc, .t = ins.t, .cont = ins.cont, .last = ins.last,
						 .inst_last = ins.inst_last, .shift = ins.sr, .stream = ins.t,
						 .stream_cat = CAT_COMPUTE };
			struct array_step st;
			if (ins.kind != TI_FOLD)
				continue;
			array_timer_fold(&tm, &af, &st);
			if (nf < FOLD_STARTS_MAX)
				fs.timer[nf] = st.start;
			nf++;
		}
		opt.observe = record_starts;
		opt.ctx = &fs;
		ck_assert_msg(func_run(&c, &o, &pl, &opt, &f, &e) == 0, "case %d: %s", i, e.msg);
		ck_assert_int_eq(f.mismatches, 0);
		for (int64_t k = 0; k < nf && k < FOLD_STARTS_MAX; k++)
			ck_assert_msg(fs.regs[k] - 1 == fs.timer[k], "case %d: os %s %lldx%lld M %lld K %lld N %lld, %lld parts of "
				      "%lld: fold %lld starts at %lld in the registers, %lld in the timer", i,
				      dbuf ? "pipelined" : "serial", (long long)R, (long long)C, (long long)o.m, (long long)o.k,
				      (long long)o.n, (long long)pl.nparts, (long long)pl.kpart, (long long)k,
				      (long long)(fs.regs[k] - 1), (long long)fs.timer[k]);
		ck_assert_msg(f.cycles == g.cycles, "case %d: os %s %lldx%lld M %lld K %lld N %lld x%lld, %lld parts of %lld: "
			      "registers %lld, engine %lld", i, dbuf ? "pipelined" : "serial", (long long)R, (long long)C,
			      (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.repeat, (long long)pl.nparts,
			      (long long)pl.kpart, (long long)f.cycles, (long long)g.cycles);
		for (int k = 0; k < CAT_N; k++)
			ck_assert_msg(f.cat[k] == g.cat[k], "case %d: category %d: registers %lld, engine %lld", i, k,
				      (long long)f.cat[k], (long long)g.cat[k]);
		checked++;
		tall_checked += tall;
	}
	ck_assert_int_ge(checked, 100);
	ck_assert_int_ge(tall_checked, 40);
}
END_TEST

/* ---- values: floats within the bound, ints exact ---- */

/* gamma(n) = n u / (1 - n u) */
static double gam(double n, double u)
{
	return n * u / (1 - n * u);
}

START_TEST(bound_by_hand)
{
	double u = 0x1p-24, d = 0x1p-53;
	ck_assert_double_eq(func_bound(DT_INT8, 1000, 5.0), 0);
	ck_assert_double_eq_tol(func_bound(DT_BF16, 3, 2.0), 2 * (3 * u / (1 - 3 * u) + 3 * d / (1 - 3 * d)), 1e-22);
	ck_assert_double_eq_tol(func_bound(DT_FP32, 3, 2.0), 2 * (4 * u / (1 - 4 * u) + 3 * d / (1 - 3 * d)), 1e-22);
	/* the underflow term: n times 2^-149, alone when the products sum to 0 */
	ck_assert_double_eq(func_bound(DT_FP32, 3, 0), 4 * 0x1p-149);
	ck_assert_double_eq(func_bound(DT_BF16, 3, 0), 3 * 0x1p-149);
	ck_assert_double_eq(func_bound(DT_INT8, 3, 0), 0);
}
END_TEST

/*
 * Products that underflow: fp32 A all 1.1e-20 and B all 1.3e-20 (as fp32)
 * make products near 1.43e-40, below fp32's normal range (2^-126, about
 * 1.18e-38): each rounds to a multiple of 2^-149, a relative error up to
 * about 5e-6, far above gamma(K + 1) but within (K + 1) 2^-149 in all. Every
 * dataflow: 0 mismatches. Overflow is still caught: A and B all 2^64 make
 * products of 2^128, infinite in fp32, every output a mismatch.
 */
START_TEST(underflow_within_bound_overflow_caught)
{
	int64_t M = 7, K = 9, N = 5;
	double a[63], b[45], c[35];
	for (int df = 0; df < 3; df++) {
		struct config cf;
		struct func_result r;
		struct err e = { 0 };
		struct op o = th_gemm(M, K, N, 1);
		struct func_opts opt = { .a = a, .b = b, .c = c };
		for (int i = 0; i < 63; i++)
			a[i] = (float)1.1e-20;
		for (int i = 0; i < 45; i++)
			b[i] = (float)1.3e-20;
		cfg_for(&cf, 4, 4, df, true, DT_FP32);
		ck_assert_msg(run_func(&cf, &o, df, &opt, &r, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(r.outputs, M * N);
		ck_assert_int_eq(r.mismatches, 0);
		/* the products really rounded: the result is not the exact sum */
		double exact = K * (double)(float)1.1e-20 * (double)(float)1.3e-20;
		ck_assert(c[0] != exact);
		ck_assert(fabs(c[0] - exact) <= (K + 1) * 0x1p-149);
		for (int i = 0; i < 63; i++)
			a[i] = 0x1p64;
		for (int i = 0; i < 45; i++)
			b[i] = 0x1p64;
		ck_assert_msg(run_func(&cf, &o, df, &opt, &r, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(r.mismatches, M * N);
		ck_assert(isinf(c[0]));
	}
}
END_TEST

/*
 * 150 x 200 x 90 on a 16 x 12 array, every dataflow and dtype: against the
 * test's own reference, ints are exact and floats within gamma(K (+1)) of
 * sum |a b| (with fp32 sums they do differ from the double reference
 * somewhere: the values really went through fp32).
 */
START_TEST(values_within_bound)
{
	int64_t M = 150, K = 200, N = 90;
	double *a = malloc((size_t)(M * K) * sizeof *a), *b = malloc((size_t)(K * N) * sizeof *b);
	double *c = malloc((size_t)(M * N) * sizeof *c);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(c);
	for (int dt = 0; dt < DT_N; dt++)
		for (int df = 0; df < 3; df++) {
			struct config cf;
			struct func_result r;
			struct err e = { 0 };
			struct op o = th_gemm(M, K, N, 1);
			struct func_opts opt = { .a = a, .b = b, .c = c };
			func_random(dt, 11, a, M * K);
			func_random(dt, 12, b, K * N);
			cfg_for(&cf, 16, 12, df, df != DF_IS, dt);
			ck_assert_msg(run_func(&cf, &o, df, &opt, &r, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(r.outputs, M * N);
			ck_assert_int_eq(r.mismatches, 0);
			double worst = 0;
			for (int64_t i = 0; i < M; i++)
				for (int64_t j = 0; j < N; j++) {
					double ref = 0, abs_sum = 0;
					for (int64_t k = 0; k < K; k++) {
						ref += a[i * K + k] * b[k * N + j];
						abs_sum += fabs(a[i * K + k] * b[k * N + j]);
					}
					double err = fabs(c[i * N + j] - ref);
					if (dt == DT_INT8)
						ck_assert_double_eq(c[i * N + j], ref);
					else
						ck_assert_msg(err <= (gam((double)K + (dt == DT_FP32), 0x1p-24) + gam((double)K, 0x1p-53)) * abs_sum,
							      "%s %s C[%lld][%lld]: error %g", dt_names[dt], df_names[df], (long long)i,
							      (long long)j, err);
					worst = fmax(worst, err);
				}
			/* fp8 products are short (8-bit significands): here their fp32 sums may all be exact */
			if (dt != DT_INT8 && dt != DT_FP8)
				ck_assert_msg(worst > 0, "%s %s: no rounding at all", dt_names[dt], df_names[df]);
			ck_assert_double_eq(worst, r.max_abs_error);
		}
	free(a);
	free(b);
	free(c);
}
END_TEST

/* int32 sums wrap as the hardware's do: -128 x -128 x 140000 = 2293760000 > 2^31 - 1 is a mismatch. */
START_TEST(int32_overflow_is_a_mismatch)
{
	struct config c;
	struct func_result r;
	struct err e = { 0 };
	int64_t K = 140000;
	struct op o = th_gemm(1, K, 1, 1);
	double *a = malloc((size_t)K * sizeof *a), one_c;
	for (int64_t k = 0; k < K; k++)
		a[k] = -128;
	struct func_opts opt = { .a = a, .b = a, .c = &one_c };
	cfg_for(&c, 1, 1, DF_OS, true, DT_INT8);
	ck_assert_int_eq(run_func(&c, &o, DF_OS, &opt, &r, &e), 0);
	ck_assert_int_eq(r.outputs, 1);
	ck_assert_int_eq(r.mismatches, 1);
	ck_assert_double_eq(one_c, 2293760000.0 - 4294967296.0);
	free(a);
}
END_TEST

/* Operands that the dtype cannot hold are refused before anything runs. */
START_TEST(unrepresentable_operands)
{
	struct config c;
	struct func_result r;
	struct err e = { 0 };
	struct op o = th_gemm(3, 2, 2, 1);
	double a[6] = { 1, 2, 3, 4, 5, 0.1 };
	struct func_opts opt = { .a = a, .b = hand_b };
	cfg_for(&c, 2, 2, DF_WS, true, DT_BF16);
	ck_assert_int_eq(run_func(&c, &o, DF_WS, &opt, &r, &e), -1);
	ck_assert_int_eq(e.kind, ERR_INPUT);
	ck_assert_str_eq(e.msg, "A[2][1]: expected a value representable in bf16, found 0.10000000000000001");
	a[5] = 200;
	cfg_for(&c, 2, 2, DF_WS, true, DT_INT8);
	ck_assert_int_eq(run_func(&c, &o, DF_WS, &opt, &r, &e), -1);
	ck_assert_str_eq(e.msg, "A[2][1]: expected a value representable in int8, found 200");
	ck_assert(func_representable(DT_FP16, 65504) && !func_representable(DT_FP16, 65505));
	ck_assert(func_representable(DT_FP16, 0x1p-24) && !func_representable(DT_FP16, 0x1p-25));
	ck_assert(func_representable(DT_BF16, 1.0078125) && !func_representable(DT_BF16, 1.00390625));
	/* fp8 E4M3: 3 fraction bits, smallest subnormal 2^-9, largest 448 (1.75 x 2^8; the next step is 32) */
	ck_assert(func_representable(DT_FP8, 1.125) && !func_representable(DT_FP8, 1.0625));
	ck_assert(func_representable(DT_FP8, 0x1p-9) && !func_representable(DT_FP8, 0x1p-10));
	ck_assert(func_representable(DT_FP8, 448) && !func_representable(DT_FP8, 480) && !func_representable(DT_FP8, 464));
	ck_assert(func_representable(DT_FP8, 0.875 * 0x1p-6) && !func_representable(DT_FP8, 0.9375 * 0x1p-6));
}
END_TEST

/* The observer can stop a run. */
static int stop_at_3(const struct func_view *v, void *ctx)
{
	(void)ctx;
	return v->cycle == 3;
}

START_TEST(observer_stops)
{
	struct config c;
	struct func_result r;
	struct err e = { 0 };
	struct op o = th_gemm(3, 2, 2, 1);
	struct func_opts opt = { .a = hand_a, .b = hand_b, .observe = stop_at_3 };
	cfg_for(&c, 2, 2, DF_WS, true, DT_INT8);
	ck_assert_int_eq(run_func(&c, &o, DF_WS, &opt, &r, &e), 0);
	ck_assert(r.stopped);
}
END_TEST

/* The observer sees each cycle of the run once, from 0 to the cycle before r.cycles (the lab's 10x6x5, then random shapes). */
static int count_cycles(const struct func_view *v, void *ctx)
{
	int64_t *n = ctx;
	ck_assert_int_eq(v->cycle, n[0]);
	n[0]++;
	return 0;
}

START_TEST(observer_sees_every_cycle)
{
	for (int i = 0; i < 120; i++) {
		for (int dbuf = 0; dbuf < 2; dbuf++) {
			struct config c;
			struct func_result r;
			struct err e = { 0 };
			int df = i % 3;
			struct op o = i < 3 ? th_gemm(10, 6, 5, 1) :
					     th_gemm(th_rnd(&rng, 1, 12), th_rnd(&rng, 1, 12), th_rnd(&rng, 1, 12), 1);
			int64_t n[1] = { 0 };
			struct func_opts opt = { .seed = 3, .observe = count_cycles, .ctx = n };
			cfg_for(&c, i < 3 ? 4 : th_rnd(&rng, 1, 6), i < 3 ? 4 : th_rnd(&rng, 1, 6), df, dbuf, DT_INT8);
			ck_assert_msg(run_func(&c, &o, df, &opt, &r, &e) == 0, "%s", e.msg);
			ck_assert_msg(n[0] == r.cycles, "%s dbuf %d: observed %lld cycles of %lld", df_names[df], dbuf,
				      (long long)n[0], (long long)r.cycles);
		}
	}
}
END_TEST

void functional_cli_tests(TCase *t);     /* test_functional_cli.c */

Suite *functional_suite(void)
{
	Suite *s = suite_create("functional");
	TCase *t = tcase_create("functional");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, ws_by_hand);
	tcase_add_test(t, os_by_hand);
	tcase_add_test(t, is_by_hand);
	tcase_add_test(t, registers_equal_timer_and_closed_form);
	tcase_add_test(t, early_start_objected);
	tcase_add_test(t, each_rule_objects_alone);
	tcase_add_test(t, os_parts_of_k_equal_timer);
	tcase_add_test(t, bound_by_hand);
	tcase_add_test(t, values_within_bound);
	tcase_add_test(t, underflow_within_bound_overflow_caught);
	tcase_add_test(t, int32_overflow_is_a_mismatch);
	tcase_add_test(t, unrepresentable_operands);
	tcase_add_test(t, observer_stops);
	tcase_add_test(t, observer_sees_every_cycle);
	functional_cli_tests(t);
	suite_add_tcase(s, t);
	return s;
}
