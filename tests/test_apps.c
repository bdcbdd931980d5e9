/*
 * test_apps.c - the TPU v1 paper's benchmark apps (configs/workloads/tpuv1_*.yaml).
 *
 * Jouppi et al., ISCA 2017, Table 1 gives each app's layer counts by kind,
 * weights, ops per weight byte (one op per MAC; int8 weights, one byte each)
 * and batch, but no shapes. Each test loads and lowers one app and checks
 * its weights and MACs against the arithmetic of its shapes (as its file's
 * header works them out), its layer counts and batch against Table 1
 * exactly, and its weights and MACs per weight byte against Table 1 within 2 %.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

struct app {
	const char *file;
	int64_t batch;                  /* Table 1 */
	int fc, conv, vec, pool;        /* Table 1: layers by kind */
	int64_t paper_weights;          /* Table 1 */
	int64_t paper_macs_per_byte;    /* Table 1: ops per weight byte */
	int64_t weights;                /* from the shapes, by hand */
	int64_t macs;                   /* from the shapes, by hand */
};

/* Elements per sample that layer l reads from the layer before it. */
static int64_t chain_in(const struct layer *l)
{
	switch (l->type) {
	case L_CONV2D:
	case L_POOL: return l->in_h * l->in_w * l->in_c;
	case L_FC: return l->in_features;
	default: return l->elements;
	}
}

/* Elements per sample that op o (the one op of its layer) writes. */
static int64_t chain_out(const struct op *o, int64_t batch)
{
	return (o->kind == OP_GEMM ? o->m * o->n * o->repeat : o->out_elems) / batch;
}

static void check_app(const struct app *a)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	int fc = 0, conv = 0, vec = 0, pool = 0;
	int64_t weights = 0, macs = 0;

	ck_assert_msg(workload_load(&w, a->file, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(w.batch, a->batch);
	for (size_t i = 0; i < w.n; i++) {
		switch (w.layers[i].type) {
		case L_FC: fc++; break;
		case L_CONV2D: conv++; break;
		case L_POOL: pool++; break;
		case L_ADD: case L_MUL: case L_RELU: case L_GELU: case L_SILU: case L_SOFTMAX: case L_LAYERNORM:
			vec++;
			break;
		default: ck_abort_msg("%s: layer %s is no kind of Table 1", a->file, w.layers[i].name);
		}
	}
	ck_assert_int_eq(fc, a->fc);
	ck_assert_int_eq(conv, a->conv);
	ck_assert_int_eq(vec, a->vec);
	ck_assert_int_eq(pool, a->pool);
	/* One op per layer: the FC and conv layers are GEMMs whose B is the weight. */
	ck_assert_uint_eq(ops.n, w.n);
	for (size_t i = 0; i < ops.n; i++) {
		const struct op *o = &ops.v[i];
		ck_assert_uint_eq(o->layer, i);
		if (o->kind == OP_GEMM) {
			ck_assert(o->b_weight && !o->a_weight);
			weights += o->k * o->n * o->repeat;
			macs += op_macs(o);
		}
		/* Each layer reads the output of the one before, but an LSTM gate reads [x, h_prev]. */
		if (i > 0 && !strstr(w.layers[i].name, ".gate_"))
			ck_assert_msg(chain_in(&w.layers[i]) == chain_out(&ops.v[i - 1], w.batch),
				      "%s: %s reads %lld elements, %s writes %lld", a->file, w.layers[i].name,
				      (long long)chain_in(&w.layers[i]), w.layers[i - 1].name,
				      (long long)chain_out(&ops.v[i - 1], w.batch));
	}
	ck_assert_int_eq(weights, a->weights);
	ck_assert_int_eq(macs, a->macs);
	/* Within 2 % of Table 1: 50 |x - paper| <= paper. */
	ck_assert_msg(50 * llabs(weights - a->paper_weights) <= a->paper_weights, "%s: %lld weights", a->file,
		      (long long)weights);
	ck_assert_msg(50 * llabs(macs - a->paper_macs_per_byte * weights) <= a->paper_macs_per_byte * weights,
		      "%s: %.1f MACs per weight byte", a->file, (double)macs / (double)weights);
	oplist_release(&ops);
	workload_release(&w);
}

#define M INT64_C(1000000)

/* 5 FC, 20 M weights, 200 ops per weight byte, batch 200; an FC weight meets each sample once. */
START_TEST(tpuv1_mlp0)
{
	const int64_t wt = 1536 * 2048 + 4 * 2048 * 2048;       /* 19,922,944 */
	const struct app a = { "configs/workloads/tpuv1_mlp0.yaml", 200, 5, 0, 0, 0, 20 * M, 200, wt, 200 * wt };
	ck_assert_int_eq(wt, 19922944);
	check_app(&a);
}
END_TEST

/* 4 FC, 5 M weights, 168 ops per weight byte, batch 168. */
START_TEST(tpuv1_mlp1)
{
	const int64_t wt = 512 * 1536 + 1536 * 1536 + 1536 * 1024 + 1024 * 256;    /* 4,980,736 */
	const struct app a = { "configs/workloads/tpuv1_mlp1.yaml", 168, 4, 0, 0, 0, 5 * M, 168, wt, 168 * wt };
	ck_assert_int_eq(wt, 4980736);
	check_app(&a);
}
END_TEST

/* 24 FC + 34 vector, 52 M weights, 64 ops per weight byte, batch 64: six LSTM layers of 1024 cells. */
START_TEST(tpuv1_lstm0)
{
	const int64_t wt = 4 * (1536 + 1024) * 1024 + 5 * 4 * (1024 + 1024) * 1024;     /* 52,428,800 */
	/* Vector: per layer i*g, f*c, c, tanh(c), h (5 x 6), and residual adds in layers 3-6 (4). */
	const struct app a = { "configs/workloads/tpuv1_lstm0.yaml", 64, 4 * 6, 0, 5 * 6 + 4, 0, 52 * M, 64, wt, 64 * wt };
	ck_assert_int_eq(wt, 52428800);
	check_app(&a);
}
END_TEST

/* 37 FC + 19 vector, 34 M weights, 96 ops per weight byte, batch 96: nine LSTM layers of 640 cells, an output FC. */
START_TEST(tpuv1_lstm1)
{
	const int64_t wt = 9 * 4 * (640 + 640) * 640 + 640 * 7168;      /* 34,078,720 */
	const struct app a = { "configs/workloads/tpuv1_lstm1.yaml", 96, 9 * 4 + 1, 0, 9 * 2 + 1, 0, 34 * M, 96, wt,
			       96 * wt };
	ck_assert_int_eq(wt, 34078720);
	check_app(&a);
}
END_TEST

/* 16 conv, 8 M weights, 2888 ops per weight byte, batch 8: every layer outputs 19 x 19. */
START_TEST(tpuv1_cnn0)
{
	const int64_t wt = 5 * 5 * 48 * 256 + 13 * 3 * 3 * 256 * 256 + 256 * 256 + 256 * 1;       /* 8,040,704 */
	const struct app a = { "configs/workloads/tpuv1_cnn0.yaml", 8, 0, 16, 0, 0, 8 * M, 2888, wt,
			       INT64_C(8) * 19 * 19 * wt };
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	ck_assert_int_eq(wt, 8040704);
	check_app(&a);
	/* Each GEMM has M = 8 x 19 x 19 = 2888 rows, so MACs per weight is exactly 2888. */
	ck_assert_msg(workload_load(&w, a.file, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	for (size_t i = 0; i < ops.n; i++)
		ck_assert_int_eq(ops.v[i].m, 2888);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* 4 FC + 72 conv + 13 pool, 100 M weights, 1750 ops per weight byte, batch 32. */
START_TEST(tpuv1_cnn1)
{
	/* Weights of the stem and of each stage (first block, then the rest), and the output pixels. */
	const int64_t conv1 = 7 * 7 * 3 * 64, stem = 64 * 64 + 3 * 3 * 64 * 192;
	const int64_t s1 = (192 * 64 + 3 * 3 * 64 * 64 + 64 * 256) + 3 * (256 * 64 + 3 * 3 * 64 * 64 + 64 * 256);
	const int64_t s2 = (256 * 128 + 3 * 3 * 128 * 128 + 128 * 512) + 4 * (512 * 128 + 3 * 3 * 128 * 128 + 128 * 512);
	const int64_t s3 = (512 * 256 + 3 * 3 * 256 * 256 + 256 * 1024) +
			   8 * (1024 * 256 + 3 * 3 * 256 * 256 + 256 * 1024);
	const int64_t s4 = (1024 * 512 + 3 * 3 * 512 * 512 + 512 * 2048) +
			   4 * (2048 * 512 + 3 * 3 * 512 * 512 + 512 * 2048);
	const int64_t fc = 4 * 4 * 2048 * 1792 + 2 * 1792 * 1792 + 1792 * 1000;
	const int64_t wt = conv1 + stem + s1 + s2 + s3 + s4 + fc;
	const int64_t per_sample = conv1 * 112 * 112 + (stem + s1) * 56 * 56 + s2 * 28 * 28 + s3 * 14 * 14 +
				   s4 * 7 * 7 + fc;
	const struct app a = { "configs/workloads/tpuv1_cnn1.yaml", 32, 4, 3 + 23 * 3, 0, 1 + 4 + 2 + 2 + 4, 100 * M,
			       1750, wt, 32 * per_sample };
	ck_assert_int_eq(conv1 + stem + s1 + s2 + s3 + s4, 33412288);
	ck_assert_int_eq(fc, 66934784);
	ck_assert_int_eq(per_sample, INT64_C(5477111808));
	check_app(&a);
}
END_TEST

#undef M

Suite *apps_suite(void)
{
	Suite *s = suite_create("apps");
	TCase *t = tcase_create("apps");
	tcase_add_test(t, tpuv1_mlp0);
	tcase_add_test(t, tpuv1_mlp1);
	tcase_add_test(t, tpuv1_lstm0);
	tcase_add_test(t, tpuv1_lstm1);
	tcase_add_test(t, tpuv1_cnn0);
	tcase_add_test(t, tpuv1_cnn1);
	suite_add_tcase(s, t);
	return s;
}
