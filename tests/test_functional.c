/*
 * test_functional.c - the register-level executor: hand cases, the property
 * test against the fold timer and the closed form, the registers objecting
 * to an early start, error bounds, .npy files and the command line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "functional.h"
#include "tests.h"
#include "xmath.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static const char *const df_names[] = { "ws", "os", "is" };
static const char *const dt_names[] = { "int8", "bf16", "fp16", "fp32" };

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
	ck_assert_int_eq(sched_plan(&s, o, c, df, true, e), 0);
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

Suite *functional_suite(void)
{
	Suite *s = suite_create("functional");
	TCase *t = tcase_create("functional");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, registers_equal_timer_and_closed_form);
	suite_add_tcase(s, t);
	return s;
}
