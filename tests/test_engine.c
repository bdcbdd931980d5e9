/*
 * test_engine.c - the cycle-level engine against the analytic model, stall
 * categories, and memory that matters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "tests.h"

static struct op gemm(int64_t m, int64_t k, int64_t n, int64_t rep)
{
	struct op o;
	memset(&o, 0, sizeof o);
	snprintf(o.name, sizeof o.name, "g");
	o.kind = OP_GEMM;
	o.m = m, o.k = k, o.n = n, o.repeat = rep;
	o.b_weight = true;
	o.a_elems = m * k;
	return o;
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static int64_t rnd(int64_t lo, int64_t hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + (int64_t)(rng % (uint64_t)(hi - lo + 1));
}

static int64_t cat_sum(const struct result *r)
{
	int64_t s = 0;
	for (int i = 0; i < CAT_N; i++) {
		ck_assert_int_ge(r->cat[i], 0);
		s += r->cat[i];
	}
	return s;
}

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
		struct op o = gemm(rnd(1, 64), rnd(1, 64), rnd(1, 64), rnd(1, 2));
		int df = (int)rnd(0, 2);
		engine *en;
		if (rnd(0, 3) == 0)
			o.a_elems = rnd(1, o.m * o.k);
		snprintf(s[0], 64, "array.rows=%lld", (long long)rnd(1, 16));
		snprintf(s[1], 64, "array.cols=%lld", (long long)rnd(1, 16));
		snprintf(s[2], 64, "array.weight_double_buffer=%s", rnd(0, 3) ? "true" : "false");
		snprintf(s[3], 64, "array.scalesim_compat=%s", rnd(0, 5) ? "false" : "true");
		snprintf(s[4], 64, "array.dtype=%s", rnd(0, 1) ? "int8" : "fp32");
		for (int j = 0; j < 5; j++)
			sets[j] = s[j];
		sets[5] = NULL;
		th_config(&c, "lab_4x4", sets);
		ck_assert_int_eq(analytic_op(&c, &o, df, true, &a, &e), 0);
		en = engine_new(&c, true, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_msg(engine_op(en, &o, df, &g, &e) == 0, "%s", e.msg);
		engine_free(en);
		ck_assert_msg(g.cycles == a.cycles, "case %d: df %d M %lld K %lld N %lld x%lld on %s %s: engine %lld, analytic %lld",
			      i, df, (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.repeat, s[0], s[1],
			      (long long)g.cycles, (long long)a.cycles);
		ck_assert_int_eq(cat_sum(&g), g.cycles);
		ck_assert_int_eq(cat_sum(&a), a.cycles);
		/* no memory stalls with ideal memory */
		ck_assert_int_eq(g.cat[CAT_WEIGHTS] + g.cat[CAT_INPUTS] + g.cat[CAT_OUTPUTS], 0);
		ck_assert_int_eq(g.cat[CAT_COMPUTE], a.cat[CAT_COMPUTE]);
		ck_assert_int_eq(g.hbm_read_bytes, a.hbm_read_bytes);
		ck_assert_int_eq(g.hbm_write_bytes, a.hbm_write_bytes);
		for (int b = 0; b < SRAM_NBUF; b++) {
			ck_assert_int_eq(g.sram_read_bytes[b], a.sram_read_bytes[b]);
			ck_assert_int_eq(g.sram_write_bytes[b], a.sram_write_bytes[b]);
		}
	}
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
		o.out_elems = rnd(1, 3000000);
		o.in_elems = o.out_elems;
		o.lane_ops = 5 * o.out_elems;
		ck_assert_int_eq(analytic_op(&c, &o, DF_WS, true, &a, &e), 0);
		ck_assert_int_eq(engine_op(en, &o, DF_WS, &g, &e), 0);
		ck_assert_int_eq(g.cycles, (o.lane_ops + 255) / 256);
		ck_assert_int_eq(g.cycles, a.cycles);
		ck_assert_int_eq(g.cat[CAT_VECTOR], g.cycles);
		engine_free(en);
	}
}
END_TEST

Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *t = tcase_create("engine");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, ideal_engine_equals_analytic);
	tcase_add_test(t, ideal_vector_equals_analytic);
	suite_add_tcase(s, t);
	return s;
}
