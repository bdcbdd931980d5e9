/*
 * test_categories.c - where the array's own cycles go, worked out by hand
 * from the fold timing of models/array.h: compute (the streams), weight_shift
 * (shifts of the stationary tile that no stream hides) and fill_drain (the
 * skew of filling and draining, os drains), in the closed form, the cycle
 * engine with ideal memory and the array timer fed late data.
 */
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "tests.h"

/* The array's cycles split as { compute, weight_shift, fill_drain }; the other categories are 0. */
struct split {
	int64_t cycles, compute, shift, fill_drain;
};

static void check_split(const char *what, const struct result *r, struct split want)
{
	int64_t other = r->cat[CAT_WEIGHTS] + r->cat[CAT_INPUTS] + r->cat[CAT_OUTPUTS] + r->cat[CAT_VECTOR];
	ck_assert_msg(r->cycles == want.cycles && r->cat[CAT_COMPUTE] == want.compute &&
			      r->cat[CAT_WEIGHT_SHIFT] == want.shift && r->cat[CAT_FILL_DRAIN] == want.fill_drain && !other,
		      "%s: cycles %lld compute %lld weight_shift %lld fill_drain %lld other %lld; want %lld %lld %lld %lld 0",
		      what, (long long)r->cycles, (long long)r->cat[CAT_COMPUTE], (long long)r->cat[CAT_WEIGHT_SHIFT],
		      (long long)r->cat[CAT_FILL_DRAIN], (long long)other, (long long)want.cycles, (long long)want.compute,
		      (long long)want.shift, (long long)want.fill_drain);
}

/* GEMM M x K x N on lab_4x4 (with sets) in dataflow df, ideal memory: the closed form and the engine agree on want. */
static void expect(const char *const *sets, int64_t m, int64_t k, int64_t n, int df, struct split want)
{
	struct config c;
	struct result a, g;
	struct err e = { 0 };
	struct op o = th_gemm(m, k, n, 1);
	engine *en;
	th_config(&c, "lab_4x4", sets);
	ck_assert_msg(th_analytic(&c, &o, df, true, &a, &e) == 0, "%s", e.msg);
	check_split("analytic", &a, want);
	en = engine_new(&c, true, &e);
	ck_assert_ptr_nonnull(en);
	ck_assert_msg(th_engine(en, &c, &o, df, true, &g, &e) == 0, "%s", e.msg);
	engine_free(en);
	check_split("engine", &g, want);
}

static const char *const serial[] = { "array.weight_double_buffer=false", NULL };

/*
 * ws on 4x4 with a shadow register, M = 2, K = 7, N = 3: two folds, Sr 4 then
 * 3, Sc = 3, each streaming T = 2 rows.
 *   fold 0: its tile shifts in over 0-4 (weight_shift 4), streams 4-6
 *   fold 1: its tile shifts into the shadow from fold 0's start, 4-7; fold
 *           0's stream ended at 6, so 6-7 is exposed (weight_shift 1); it
 *           streams 7-9
 *   the last partial sums drain R + Sc - 2 = 5: 9-14 (fill_drain)
 * 14 = 4 compute + 5 weight_shift + 5 fill_drain. With M = 3 the stream
 * (3) is as long as the next shift (3): T = Sr - 1 exposes one cycle of it,
 * T = Sr none: 4 + 3 + 3 + 5 = 15 = 6 + 4 + 5.
 */
START_TEST(ws_exposed_shift)
{
	expect(NULL, 2, 7, 3, DF_WS, (struct split){ 14, 4, 5, 5 });
	expect(NULL, 3, 7, 3, DF_WS, (struct split){ 15, 6, 4, 5 });
}
END_TEST

/*
 * The same GEMM without a shadow register: a tile shifts into the weight
 * registers themselves, from the last cycle of the fold before's stream (its
 * last input reads each register in the cycle the chain writes it; its
 * partial sums drain on below), so every shift but that one cycle shows:
 * fold 0 shifts 0-4 and streams 4-6, fold 1 shifts 5-8 and streams 8-10,
 * then the drain 5: 15 = 4 compute + (4 + 2) weight_shift + 5 fill_drain.
 */
START_TEST(ws_serial_every_shift)
{
	expect(serial, 2, 7, 3, DF_WS, (struct split){ 15, 4, 6, 5 });
	/* A stream as long as the shift hides nothing here: 4 + 3 + 2 + 3 + 5 = 17. */
	expect(serial, 3, 7, 3, DF_WS, (struct split){ 17, 6, 6, 5 });
}
END_TEST

/*
 * is shifts its stationary input block in as ws shifts weights: A^T is
 * K = 7 x M = 3, so folds Sr 4 then 3, Sc = 3, streaming T = N = 2: the
 * numbers of ws_exposed_shift, 14 = 4 + 5 + 5, and serially 15 = 4 + 6 + 5.
 */
START_TEST(is_exposed_shift)
{
	expect(NULL, 3, 7, 2, DF_IS, (struct split){ 14, 4, 5, 5 });
	expect(serial, 3, 7, 2, DF_IS, (struct split){ 15, 4, 6, 5 });
}
END_TEST

/*
 * os has no stationary tile to shift in: everything beyond the streams is
 * fill_drain (tests/test_analytic.c's os_by_hand: M = 10, K = 6, N = 5, six
 * folds of T = 6). Pipelined 41 = 36 + 5; serial 54 = 36 + 18 (the gaps
 * of Sr - 1 while the accumulators drain, 3 + 3 + 1 + 3 + 3, and the last
 * drain 5).
 */
START_TEST(os_no_shift)
{
	expect(NULL, 10, 6, 5, DF_OS, (struct split){ 41, 36, 0, 5 });
	expect(serial, 10, 6, 5, DF_OS, (struct split){ 54, 36, 0, 18 });
}
END_TEST

/*
 * SCALE-Sim compatible: every ws fold is an R-cycle preload (weight_shift),
 * T, and R + C - 2 of fill and drain; the layer's one cycle less comes off
 * the drain. M = 10, K = 6, N = 5 on 4x4: 4 folds, 79 = 40 compute +
 * 4 x 4 weight_shift + (4 x 6 - 1) fill_drain. On a 1x1 array there is no
 * drain to take it from, so it comes off the preload: M = 3, K = 2, N = 1,
 * two folds of 1 + 3 + 0, 7 = 6 compute + (2 - 1) weight_shift.
 */
START_TEST(scalesim_preload)
{
	const char *compat[] = { "array.scalesim_compat=true", NULL };
	const char *tiny[] = { "array.scalesim_compat=true", "array.rows=1", "array.cols=1", NULL };
	expect(compat, 10, 6, 5, DF_WS, (struct split){ 79, 40, 16, 23 });
	expect(tiny, 3, 2, 1, DF_WS, (struct split){ 7, 6, 1, 0 });
}
END_TEST

/*
 * Late weights overlapping a shift (the rule of models/cat.h), on the timer:
 * ws_exposed_shift's two folds, fold 1's tile arriving late.
 *   Shadow register: the tile arrives at 6 and shifts in over 6-9. With it
 *   there the shift would have ended at 7: 6-7 stays weight_shift, 7-9 is a
 *   wait on B (the engine charges it to weights). The fold streams 9-11 and drains to 16: 4 compute +
 *   5 weight_shift + 5 fill_drain + 2 waiting.
 *   Serial: fold 0 shifts 0-4 and streams 4-6; the tile arrives at 13 and
 *   shifts in over 13-16. With it there the shift would have been 5-8 (from
 *   the stream's last cycle): 6-8 weight_shift; 8-16 is a wait on B. The
 *   fold streams 16-18 and drains to 23: 4 compute + 6 weight_shift + 5
 *   fill_drain + 8 waiting.
 */
START_TEST(late_weights_by_hand)
{
	for (int dbuf = 1; dbuf >= 0; dbuf--) {
		struct config c;
		struct array_timer tm;
		struct array_step st;
		int64_t cat[CAT_N] = { 0 }, arrive = dbuf ? 6 : 13, wait_from = dbuf ? 7 : 8, wait_to = dbuf ? 9 : 16;
		th_config(&c, "lab_4x4", dbuf ? NULL : serial);
		array_timer_init(&tm, &c.arch.array, DF_WS, 0);
		for (int i = 0; i < 2; i++) {
			struct array_fold f = { .sr = 4 - i, .sc = 3, .t = 2, .last = i == 1, .inst_last = i == 1 };
			f.shift = f.sr, f.stream = f.t;
			f.ready[OPND_B] = i ? arrive : 0;
			array_timer_fold(&tm, &f, &st);
			for (int k = 0; k < CAT_N; k++)
				cat[k] += st.cat[k];
		}
		ck_assert_int_eq(st.wait_from, wait_from);
		ck_assert_int_eq(st.wait_to, wait_to);
		ck_assert_int_eq(st.start, (dbuf ? 9 : 16));
		/* Only B was late: shifted in at 9 (shadow register), 16 (serial). */
		for (int i = 0; i < st.nwait; i++)
			ck_assert(st.wait_opnd[i] == OPND_B ? st.wait_ready[i] == wait_to :
							      st.wait_ready[i] <= wait_from);
		ck_assert_int_eq(array_timer_end(&tm, cat), (dbuf ? 16 : 23));
		ck_assert_int_eq(cat[CAT_COMPUTE], 4);
		ck_assert_int_eq(cat[CAT_WEIGHT_SHIFT], (dbuf ? 5 : 6));
		ck_assert_int_eq(cat[CAT_FILL_DRAIN], 5);
		ck_assert_int_eq(cat[CAT_WEIGHTS] + cat[CAT_INPUTS] + cat[CAT_OUTPUTS] + cat[CAT_VECTOR], 0);
	}
}
END_TEST

/* Every category has its report name, in the order of enum cat, and the names are distinct. */
START_TEST(names_follow_enum)
{
	static const char *const want[CAT_N] = {
		[CAT_COMPUTE] = "compute", [CAT_WEIGHTS] = "weights", [CAT_WEIGHT_SHIFT] = "weight_shift",
		[CAT_INPUTS] = "inputs", [CAT_OUTPUTS] = "outputs", [CAT_VECTOR] = "vector", [CAT_FILL_DRAIN] = "fill_drain",
		[CAT_OP_FIXED] = "op_fixed",
		[CAT_EXPOSED_COMM] = "exposed_comm", [CAT_BUBBLE] = "bubble",
	};
	for (int k = 0; k < CAT_N; k++)
		ck_assert_str_eq(cat_names[k], want[k]);
	ck_assert_ptr_null(cat_names[CAT_N]);
}
END_TEST

Suite *categories_suite(void)
{
	Suite *s = suite_create("categories");
	TCase *t = tcase_create("categories");
	tcase_add_test(t, ws_exposed_shift);
	tcase_add_test(t, ws_serial_every_shift);
	tcase_add_test(t, is_exposed_shift);
	tcase_add_test(t, os_no_shift);
	tcase_add_test(t, scalesim_preload);
	tcase_add_test(t, late_weights_by_hand);
	tcase_add_test(t, names_follow_enum);
	suite_add_tcase(s, t);
	return s;
}
