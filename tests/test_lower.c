/*
 * test_lower.c - layers to GEMMs, each shape worked out by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define GEMM(o, M, K, N, R) do { \
	ck_assert_int_eq((o)->kind, OP_GEMM); \
	ck_assert_int_eq((o)->m, (M)); ck_assert_int_eq((o)->k, (K)); \
	ck_assert_int_eq((o)->n, (N)); ck_assert_int_eq((o)->repeat, (R)); } while (0)

static void lower1(const char *layer, int batch, struct workload *w, struct oplist *ops)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml, "name: t\nbatch: %d\nlayers:\n  - %s\n", batch, layer);
	th_lower(yaml, w, ops);
}

static void done(struct workload *w, struct oplist *ops)
{
	oplist_release(ops);
	workload_release(w);
}

START_TEST(conv_stride_padding)
{
	struct workload w;
	struct oplist ops;
	/* Ho = (10 + 2 - 3) / 2 + 1 = 5; M = 2 x 5 x 5 = 50; K = 3 x 3 x 6 = 54 */
	lower1("{name: c, type: conv2d, in_h: 10, in_w: 10, in_c: 6, out_c: 4, kernel: 3, stride: 2, padding: 1}", 2,
	       &w, &ops);
	ck_assert_int_eq(ops.n, 1);
	GEMM(&ops.v[0], 50, 54, 4, 1);
	ck_assert(ops.v[0].b_weight && !ops.v[0].a_weight);
	ck_assert_int_eq(op_macs(&ops.v[0]), 50 * 54 * 4);
	done(&w, &ops);
}
END_TEST

START_TEST(conv_dilation)
{
	struct workload w;
	struct oplist ops;
	/* dilated 3x3 by 2 spans 5: Ho = (10 - 5) / 1 + 1 = 6; M = 36 */
	lower1("{name: c, type: conv2d, in_h: 10, in_w: 10, in_c: 2, out_c: 3, kernel: 3, dilation: 2}", 1, &w, &ops);
	GEMM(&ops.v[0], 36, 18, 3, 1);
	done(&w, &ops);
}
END_TEST

START_TEST(conv_rectangular_kernel)
{
	struct workload w;
	struct oplist ops;
	/* 3x1: Ho = 8, Wo = 10 -> M = 80; K = 3 x 1 x 2 = 6 */
	lower1("{name: c, type: conv2d, in_h: 10, in_w: 10, in_c: 2, out_c: 3, kernel_h: 3, kernel_w: 1}", 1, &w, &ops);
	GEMM(&ops.v[0], 80, 6, 3, 1);
	done(&w, &ops);
}
END_TEST

START_TEST(conv_groups)
{
	struct workload w;
	struct oplist ops;
	/* 2 groups of 3 -> 2 channels: K = 3 x 3 x 3 = 27, N = 2, repeated per group */
	lower1("{name: c, type: conv2d, in_h: 5, in_w: 5, in_c: 6, out_c: 4, kernel: 3, padding: 1, groups: 2}", 1,
	       &w, &ops);
	GEMM(&ops.v[0], 25, 27, 2, 2);
	done(&w, &ops);
}
END_TEST

START_TEST(conv_depthwise)
{
	struct workload w;
	struct oplist ops;
	/* depthwise: K = 3 x 3 = 9, N = 1, repeat = 8 channels; stride 2: Ho = (7 + 2 - 3) / 2 + 1 = 4 */
	lower1("{name: dw, type: conv2d, in_h: 7, in_w: 7, in_c: 8, out_c: 8, kernel: 3, stride: 2, padding: 1, "
	       "groups: 8}", 1, &w, &ops);
	GEMM(&ops.v[0], 16, 9, 1, 8);
	ck_assert_int_eq(op_macs(&ops.v[0]), 16 * 9 * 8);
	done(&w, &ops);
}
END_TEST

START_TEST(layer_repeat)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: f, type: fc, in_features: 4, out_features: 3, tokens: 5, repeat: 7}", 2, &w, &ops);
	GEMM(&ops.v[0], 10, 4, 3, 7);
	done(&w, &ops);
}
END_TEST

START_TEST(matmul_roles_and_batch)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: m, type: matmul, m: 3, k: 4, n: 5}", 2, &w, &ops);
	GEMM(&ops.v[0], 6, 4, 5, 1);      /* shared weight B: the batch adds rows */
	done(&w, &ops);
	lower1("{name: m, type: matmul, m: 3, k: 4, n: 5, b: activation}", 2, &w, &ops);
	GEMM(&ops.v[0], 3, 4, 5, 2);      /* two activations: one product per sample */
	ck_assert(!ops.v[0].a_weight && !ops.v[0].b_weight);
	done(&w, &ops);
	lower1("{name: m, type: matmul, m: 3, k: 4, n: 5, a: weight, b: activation}", 2, &w, &ops);
	GEMM(&ops.v[0], 3, 4, 10, 1);     /* shared weight A: the batch adds columns */
	done(&w, &ops);
}
END_TEST

/* GQA: d_model 64, 8 heads of 8, 2 KV heads (groups of 4), seq 16, batch 2. */
START_TEST(attention_gqa)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: a, type: attention, seq: 16, d_model: 64, heads: 8, kv_heads: 2}", 2, &w, &ops);
	ck_assert_int_eq(ops.n, 7);
	GEMM(th_op(&ops, "a.q_proj"), 32, 64, 64, 1);   /* 2 x 16 rows, 8 x 8 */
	GEMM(th_op(&ops, "a.k_proj"), 32, 64, 16, 1);   /* 2 KV heads x 8 */
	GEMM(th_op(&ops, "a.v_proj"), 32, 64, 16, 1);
	GEMM(th_op(&ops, "a.qk"), 64, 8, 16, 4);        /* 16 queries x 4 heads stacked; 2 batch x 2 KV heads */
	GEMM(th_op(&ops, "a.pv"), 64, 16, 8, 4);
	GEMM(th_op(&ops, "a.o_proj"), 32, 64, 64, 1);
	ck_assert(!th_op(&ops, "a.qk")->a_weight && !th_op(&ops, "a.qk")->b_weight);
	ck_assert_int_eq(th_op(&ops, "a.softmax")->out_elems, 2 * 8 * 16 * 16);
	done(&w, &ops);
}
END_TEST

/* Causal prefill of 10 tokens in blocks of 4: rows 4, 4, 2 see 4, 8, 10 keys. */
START_TEST(attention_causal)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: a, type: attention, seq: 10, d_model: 16, heads: 2, causal: true, causal_block: 4}", 1, &w, &ops);
	ck_assert_int_eq(ops.n, 3 + 6 + 1 + 1);
	GEMM(th_op(&ops, "a.qk[0]"), 4, 8, 4, 2);
	GEMM(th_op(&ops, "a.qk[1]"), 4, 8, 8, 2);
	GEMM(th_op(&ops, "a.qk[2]"), 2, 8, 10, 2);
	GEMM(th_op(&ops, "a.pv[0]"), 4, 4, 8, 2);
	GEMM(th_op(&ops, "a.pv[1]"), 4, 8, 8, 2);
	GEMM(th_op(&ops, "a.pv[2]"), 2, 10, 8, 2);
	/* 2 heads x (4 x 4 + 4 x 8 + 2 x 10) = 136 scores, against 200 without the mask */
	ck_assert_int_eq(th_op(&ops, "a.softmax")->out_elems, 136);
	done(&w, &ops);
}
END_TEST

/* Decode: one query against a cache of 15 plus the new token; K/V projected for the new token only. */
START_TEST(attention_decode)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: a, type: attention, d_model: 64, heads: 8, mode: decode, kv_cache: 15}", 1, &w, &ops);
	GEMM(th_op(&ops, "a.q_proj"), 1, 64, 64, 1);
	GEMM(th_op(&ops, "a.k_proj"), 1, 64, 64, 1);
	GEMM(th_op(&ops, "a.qk"), 1, 8, 16, 8);
	GEMM(th_op(&ops, "a.pv"), 1, 16, 8, 8);
	ck_assert_int_eq(th_op(&ops, "a.softmax")->out_elems, 8 * 16);
	done(&w, &ops);
}
END_TEST

START_TEST(mlp_gated)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: f, type: mlp, tokens: 3, d_model: 8, d_ff: 16, gated: true, activation: silu}", 2, &w, &ops);
	ck_assert_int_eq(ops.n, 5);
	GEMM(th_op(&ops, "f.up"), 6, 8, 16, 1);
	GEMM(th_op(&ops, "f.gate"), 6, 8, 16, 1);
	GEMM(th_op(&ops, "f.down"), 6, 16, 8, 1);
	ck_assert_int_eq(th_op(&ops, "f.silu")->out_elems, 96);
	ck_assert_int_eq(th_op(&ops, "f.silu")->lane_ops, 96 * vector_ops_per_elem(VEC_SILU));
	ck_assert_int_eq(th_op(&ops, "f.mul")->in_elems, 192);
	done(&w, &ops);
	lower1("{name: f, type: mlp, tokens: 3, d_model: 8, d_ff: 16}", 1, &w, &ops);
	ck_assert_int_eq(ops.n, 3);                     /* up, gelu, down */
	ck_assert_ptr_eq(th_op(&ops, "f.gelu"), &ops.v[1]);
	done(&w, &ops);
}
END_TEST

START_TEST(pool_and_vector)
{
	struct workload w;
	struct oplist ops;
	/* 3x3 stride 2 pad 1 over 112: Ho = (112 + 2 - 3) / 2 + 1 = 56; out 56 x 56 x 64 */
	lower1("{name: p, type: pool, in_h: 112, in_w: 112, in_c: 64, kernel: 3, stride: 2, padding: 1}", 1, &w, &ops);
	ck_assert_int_eq(ops.v[0].kind, OP_VEC);
	ck_assert_int_eq(ops.v[0].out_elems, 56 * 56 * 64);
	ck_assert_int_eq(ops.v[0].in_elems, 112 * 112 * 64);
	ck_assert_int_eq(ops.v[0].lane_ops, 56 * 56 * 64 * 9);
	done(&w, &ops);
	lower1("{name: s, type: add, elements: 10}", 3, &w, &ops);
	ck_assert_int_eq(ops.v[0].in_elems, 60);
	ck_assert_int_eq(ops.v[0].out_elems, 30);
	done(&w, &ops);
}
END_TEST

/* ResNet-50 v1.5: torchvision lists 4.09 G multiply-adds; the exact sum is 4,089,184,256. */
START_TEST(resnet50_macs)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	int64_t macs = 0;
	ck_assert_msg(workload_load(&w, "configs/workloads/resnet50.yaml", 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	for (size_t i = 0; i < ops.n; i++)
		macs += op_macs(&ops.v[i]);
	ck_assert_int_eq(macs, INT64_C(4089184256));
	ck_assert_int_eq(w.batch, 1);
	done(&w, &ops);
	/* Batch 8 is eight times the work. */
	ck_assert_msg(workload_load(&w, "configs/workloads/resnet50.yaml", 8, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	macs = 0;
	for (size_t i = 0; i < ops.n; i++)
		macs += op_macs(&ops.v[i]);
	ck_assert_int_eq(macs, 8 * INT64_C(4089184256));
	done(&w, &ops);
}
END_TEST

/* MobileNetV2 1.0/224: the paper lists 300 M multiply-adds. */
START_TEST(mobilenet_v2_macs)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	int64_t macs = 0;
	ck_assert_msg(workload_load(&w, "configs/workloads/mobilenet_v2.yaml", 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	for (size_t i = 0; i < ops.n; i++)
		macs += op_macs(&ops.v[i]);
	ck_assert_msg(macs > 297000000 && macs < 303000000, "MobileNetV2 MACs %lld", (long long)macs);
	done(&w, &ops);
}
END_TEST

Suite *lower_suite(void)
{
	Suite *s = suite_create("lower");
	TCase *t = tcase_create("lower");
	tcase_add_test(t, conv_stride_padding);
	tcase_add_test(t, conv_dilation);
	tcase_add_test(t, conv_rectangular_kernel);
	tcase_add_test(t, conv_groups);
	tcase_add_test(t, conv_depthwise);
	tcase_add_test(t, layer_repeat);
	tcase_add_test(t, matmul_roles_and_batch);
	tcase_add_test(t, attention_gqa);
	tcase_add_test(t, attention_causal);
	tcase_add_test(t, attention_decode);
	tcase_add_test(t, mlp_gated);
	tcase_add_test(t, pool_and_vector);
	tcase_add_test(t, resnet50_macs);
	tcase_add_test(t, mobilenet_v2_macs);
	suite_add_tcase(s, t);
	return s;
}
