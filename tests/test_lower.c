/*
 * test_lower.c - layers to GEMMs, each shape worked out by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "ici.h"
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

/* The index of the op named name; TENSOR_NONE for NULL. */
static int32_t op_at(const struct oplist *ops, const char *name)
{
	return name ? (int32_t)(th_op(ops, name) - ops->v) : TENSOR_NONE;
}

/* The index of the tensor named name; TENSOR_NONE for NULL; fails when there is none. */
static int32_t tensor_at(const struct oplist *ops, const char *name)
{
	char buf[OP_NAME_MAX];
	if (!name)
		return TENSOR_NONE;
	for (size_t i = 0; i < ops->nt; i++)
		if (!strcmp(tensor_name(&ops->t[i], buf, sizeof buf), name))
			return (int32_t)i;
	ck_abort_msg("no tensor named %s", name);
	return TENSOR_NONE;
}

/* Tensor name: its kind, elements, producer, ready, first and last reader (op names; NULL: none). */
static void tensor_is(const struct oplist *ops, const char *name, int kind, int64_t elems, const char *producer,
		      const char *ready, const char *first, const char *last)
{
	const struct tensor *t = &ops->t[tensor_at(ops, name)];
	ck_assert_msg(t->kind == kind, "%s: kind %d, want %d", name, t->kind, kind);
	ck_assert_msg(t->elems == elems, "%s: %lld elements, want %lld", name, (long long)t->elems, (long long)elems);
	ck_assert_msg(t->producer == op_at(ops, producer), "%s: producer %d", name, (int)t->producer);
	ck_assert_msg(t->ready == op_at(ops, ready), "%s: ready %d", name, (int)t->ready);
	ck_assert_msg(t->first_reader == op_at(ops, first), "%s: first reader %d", name, (int)t->first_reader);
	ck_assert_msg(t->last_reader == op_at(ops, last), "%s: last reader %d", name, (int)t->last_reader);
}

/* Op name reads in0 and in1 (NULL: none) and writes out. */
static void op_uses(const struct oplist *ops, const char *name, const char *in0, const char *in1, const char *out)
{
	const struct op *o = th_op(ops, name);
	ck_assert_msg(o->in[0] == tensor_at(ops, in0), "%s: in[0] is tensor %d", name, (int)o->in[0]);
	ck_assert_msg(o->in[1] == tensor_at(ops, in1), "%s: in[1] is tensor %d", name, (int)o->in[1]);
	ck_assert_msg(o->out == tensor_at(ops, out), "%s: out is tensor %d", name, (int)o->out);
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
	/* Tensors hold every instance: input 2 x 5 x 4 x 7, weight 4 x 3 x 7, output 2 x 5 x 3 x 7 */
	ck_assert_uint_eq(ops.nt, 3);
	tensor_is(&ops, "f.in", TK_INPUT, 280, NULL, NULL, "f", "f");
	tensor_is(&ops, "f.w", TK_WEIGHT, 84, NULL, NULL, "f", "f");
	tensor_is(&ops, "f.out", TK_ACT, 210, "f", "f", NULL, NULL);
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

/*
 * A residual block at batch 2: x (relu over 48 elements: 96); c1, a 3x3
 * stride-2 conv of x's 4 x 4 x 3 to 2 x 2 x 8 (2 x 2 x 2 x 8 = 64); c2, a 1x1
 * conv of that (64); d, the 1x1 stride-2 shortcut, naming x; and s = c2 + d.
 */
START_TEST(residual_block_tensors)
{
	struct workload w;
	struct oplist ops;
	th_lower("name: t\nbatch: 2\nlayers:\n"
		 "  - {name: x, type: relu, elements: 48}\n"
		 "  - {name: c1, type: conv2d, in_h: 4, in_w: 4, in_c: 3, out_c: 8, kernel: 3, stride: 2, padding: 1}\n"
		 "  - {name: c2, type: conv2d, in_h: 2, in_w: 2, in_c: 8, out_c: 8, kernel: 1}\n"
		 "  - {name: d, type: conv2d, in_h: 4, in_w: 4, in_c: 3, out_c: 8, kernel: 1, stride: 2, inputs: [x]}\n"
		 "  - {name: s, type: add, elements: 32, inputs: [c2, d]}\n", &w, &ops);
	ck_assert_uint_eq(ops.n, 5);
	/* x.in, x.out; c1.w, c1.out; c2.w, c2.out; d.w, d.out; s.out: nothing else is a network input */
	ck_assert_uint_eq(ops.nt, 9);
	tensor_is(&ops, "x.in", TK_INPUT, 96, NULL, NULL, "x", "x");
	/* c1 reads x by the default rule (2 x 4 x 4 x 3 = 96); d names it, and reads all 96 though its windows touch 24 */
	tensor_is(&ops, "x.out", TK_ACT, 96, "x", "x", "c1", "d");
	ck_assert_int_eq(th_op(&ops, "d")->a_elems, 2 * 2 * 2 * 3);
	tensor_is(&ops, "c1.w", TK_WEIGHT, 3 * 3 * 3 * 8, NULL, NULL, "c1", "c1");
	tensor_is(&ops, "c1.out", TK_ACT, 64, "c1", "c1", "c2", "c2");
	tensor_is(&ops, "c2.w", TK_WEIGHT, 8 * 8, NULL, NULL, "c2", "c2");
	tensor_is(&ops, "c2.out", TK_ACT, 64, "c2", "c2", "s", "s");
	tensor_is(&ops, "d.w", TK_WEIGHT, 3 * 8, NULL, NULL, "d", "d");
	tensor_is(&ops, "d.out", TK_ACT, 64, "d", "d", "s", "s");
	tensor_is(&ops, "s.out", TK_ACT, 64, "s", "s", NULL, NULL);
	op_uses(&ops, "x", "x.in", NULL, "x.out");
	op_uses(&ops, "c1", "x.out", "c1.w", "c1.out");
	op_uses(&ops, "c2", "c1.out", "c2.w", "c2.out");
	op_uses(&ops, "d", "x.out", "d.w", "d.out");
	op_uses(&ops, "s", "c2.out", "d.out", "s.out");
	done(&w, &ops);
}
END_TEST

/*
 * Causal prefill of 10 tokens in blocks of 4 (as attention_causal): every
 * block's scores, one softmax over all, then every block's P.V. Batch 1,
 * d_model 16: q, k, v, ctx and out are 10 x 16 = 160; scores 136.
 */
START_TEST(attention_causal_tensors)
{
	struct workload w;
	struct oplist ops;
	static const char *const order[] = { "a.q_proj", "a.k_proj", "a.v_proj", "a.qk[0]", "a.qk[1]", "a.qk[2]",
					     "a.softmax", "a.pv[0]", "a.pv[1]", "a.pv[2]", "a.o_proj" };
	lower1("{name: a, type: attention, seq: 10, d_model: 16, heads: 2, causal: true, causal_block: 4}", 1, &w, &ops);
	ck_assert_uint_eq(ops.n, 11);
	for (int i = 0; i < 11; i++)
		ck_assert_int_eq(op_at(&ops, order[i]), i);
	/* in; wq, q; wk, k; wv, v; scores, probs, ctx; wo, out */
	ck_assert_uint_eq(ops.nt, 12);
	tensor_is(&ops, "a.in", TK_INPUT, 160, NULL, NULL, "a.q_proj", "a.v_proj");
	tensor_is(&ops, "a.wq", TK_WEIGHT, 256, NULL, NULL, "a.q_proj", "a.q_proj");
	tensor_is(&ops, "a.q", TK_ACT, 160, "a.q_proj", "a.q_proj", "a.qk[0]", "a.qk[2]");
	tensor_is(&ops, "a.k", TK_ACT, 160, "a.k_proj", "a.k_proj", "a.qk[0]", "a.qk[2]");
	tensor_is(&ops, "a.v", TK_ACT, 160, "a.v_proj", "a.v_proj", "a.pv[0]", "a.pv[2]");
	tensor_is(&ops, "a.scores", TK_ACT, 136, "a.qk[0]", "a.qk[2]", "a.softmax", "a.softmax");
	tensor_is(&ops, "a.probs", TK_ACT, 136, "a.softmax", "a.softmax", "a.pv[0]", "a.pv[2]");
	tensor_is(&ops, "a.ctx", TK_ACT, 160, "a.pv[0]", "a.pv[2]", "a.o_proj", "a.o_proj");
	tensor_is(&ops, "a.wo", TK_WEIGHT, 256, NULL, NULL, "a.o_proj", "a.o_proj");
	tensor_is(&ops, "a.out", TK_ACT, 160, "a.o_proj", "a.o_proj", NULL, NULL);
	op_uses(&ops, "a.qk[1]", "a.q", "a.k", "a.scores");
	op_uses(&ops, "a.softmax", "a.scores", NULL, "a.probs");
	op_uses(&ops, "a.pv[2]", "a.probs", "a.v", "a.ctx");
	op_uses(&ops, "a.o_proj", "a.ctx", "a.wo", "a.out");
	done(&w, &ops);
}
END_TEST

/*
 * Decode (as attention_decode): the products read the caches, 15 tokens x 8
 * KV heads x 8 = 960 elements each; the new token's k and v (64 each) go to
 * HBM, read by no op.
 */
START_TEST(attention_decode_tensors)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: a, type: attention, d_model: 64, heads: 8, mode: decode, kv_cache: 15}", 1, &w, &ops);
	tensor_is(&ops, "a.k_cache", TK_CACHE, 960, NULL, NULL, "a.qk", "a.qk");
	tensor_is(&ops, "a.v_cache", TK_CACHE, 960, NULL, NULL, "a.pv", "a.pv");
	tensor_is(&ops, "a.k", TK_ACT, 64, "a.k_proj", "a.k_proj", NULL, NULL);
	tensor_is(&ops, "a.v", TK_ACT, 64, "a.v_proj", "a.v_proj", NULL, NULL);
	/* 8 heads x 16 keys */
	tensor_is(&ops, "a.scores", TK_ACT, 128, "a.qk", "a.qk", "a.softmax", "a.softmax");
	op_uses(&ops, "a.qk", "a.q", "a.k_cache", "a.scores");
	op_uses(&ops, "a.pv", "a.probs", "a.v_cache", "a.ctx");
	done(&w, &ops);
}
END_TEST

/* Gated MLP (as mlp_gated), batch 2 x 3 tokens: x is 6 x 8 = 48, the hidden tensors 6 x 16 = 96. */
START_TEST(mlp_gated_tensors)
{
	struct workload w;
	struct oplist ops;
	lower1("{name: f, type: mlp, tokens: 3, d_model: 8, d_ff: 16, gated: true, activation: silu}", 2, &w, &ops);
	ck_assert_uint_eq(ops.nt, 9);
	tensor_is(&ops, "f.in", TK_INPUT, 48, NULL, NULL, "f.up", "f.gate");
	tensor_is(&ops, "f.w_up", TK_WEIGHT, 128, NULL, NULL, "f.up", "f.up");
	tensor_is(&ops, "f.w_gate", TK_WEIGHT, 128, NULL, NULL, "f.gate", "f.gate");
	tensor_is(&ops, "f.w_down", TK_WEIGHT, 128, NULL, NULL, "f.down", "f.down");
	tensor_is(&ops, "f.h", TK_ACT, 96, "f.up", "f.up", "f.mul", "f.mul");
	tensor_is(&ops, "f.g", TK_ACT, 96, "f.gate", "f.gate", "f.silu", "f.silu");
	tensor_is(&ops, "f.act", TK_ACT, 96, "f.silu", "f.silu", "f.mul", "f.mul");
	tensor_is(&ops, "f.gated", TK_ACT, 96, "f.mul", "f.mul", "f.down", "f.down");
	tensor_is(&ops, "f.out", TK_ACT, 48, "f.down", "f.down", NULL, NULL);
	op_uses(&ops, "f.mul", "f.act", "f.h", "f.gated");
	done(&w, &ops);
	/* Not gated: the activation reads h, down reads act. */
	lower1("{name: f, type: mlp, tokens: 3, d_model: 8, d_ff: 16}", 1, &w, &ops);
	op_uses(&ops, "f.gelu", "f.h", NULL, "f.act");
	op_uses(&ops, "f.down", "f.act", "f.w_down", "f.out");
	done(&w, &ops);
}
END_TEST

/*
 * Without inputs, a layer reads the previous layer's output when it has the
 * size read, else a new network input; a second operand is always new.
 * Batch 2 throughout.
 */
START_TEST(default_chaining)
{
	struct workload w;
	struct oplist ops;
	th_lower("name: t\nbatch: 2\nlayers:\n"
		 "  - {name: f1, type: fc, in_features: 4, out_features: 6}\n"     /* reads 8 (new), writes 12 */
		 "  - {name: r, type: relu, elements: 6}\n"                        /* reads 12: f1.out */
		 "  - {name: f2, type: fc, in_features: 5, out_features: 3}\n"     /* reads 10: new */
		 "  - {name: s, type: add, elements: 3}\n"                         /* 6 and 6: f2.out, new */
		 "  - {name: m, type: mul, elements: 4}\n"                         /* 8 and 8: both new */
		 "  - {name: mm, type: matmul, m: 2, k: 4, n: 3, a: weight, b: activation}\n" /* B 4 x 6 = 24: new */
		 "  - {name: mm2, type: matmul, m: 2, k: 3, n: 4, b: activation}\n"  /* A 2 x 3 x 2 = 12: mm.out; B new */
		 "  - {name: ww, type: matmul, m: 2, k: 2, n: 2, a: weight, b: weight}\n", &w, &ops);
	tensor_is(&ops, "f1.in", TK_INPUT, 8, NULL, NULL, "f1", "f1");
	op_uses(&ops, "r", "f1.out", NULL, "r.out");
	tensor_is(&ops, "f2.in", TK_INPUT, 10, NULL, NULL, "f2", "f2");
	tensor_is(&ops, "r.out", TK_ACT, 12, "r", "r", NULL, NULL);
	op_uses(&ops, "s", "f2.out", "s.in1", "s.out");
	tensor_is(&ops, "s.in1", TK_INPUT, 6, NULL, NULL, "s", "s");
	op_uses(&ops, "m", "m.in0", "m.in1", "m.out");
	tensor_is(&ops, "m.in0", TK_INPUT, 8, NULL, NULL, "m", "m");
	tensor_is(&ops, "m.in1", TK_INPUT, 8, NULL, NULL, "m", "m");
	op_uses(&ops, "mm", "mm.w", "mm.in", "mm.out");
	tensor_is(&ops, "mm.w", TK_WEIGHT, 8, NULL, NULL, "mm", "mm");
	tensor_is(&ops, "mm.in", TK_INPUT, 24, NULL, NULL, "mm", "mm");
	tensor_is(&ops, "mm.out", TK_ACT, 12, "mm", "mm", "mm2", "mm2");
	op_uses(&ops, "mm2", "mm.out", "mm2.in1", "mm2.out");
	tensor_is(&ops, "mm2.in1", TK_INPUT, 24, NULL, NULL, "mm2", "mm2");
	op_uses(&ops, "ww", "ww.wa", "ww.wb", "ww.out");
	/* f1.in, f1.out, f1.w (3); r.out; f2.in, f2.w, f2.out; s.in1, s.out; m.in0, m.in1, m.out;
	   mm.w, mm.in, mm.out; mm2.in1, mm2.out; ww.wa, ww.wb, ww.out */
	ck_assert_uint_eq(ops.nt, 20);
	done(&w, &ops);
}
END_TEST

/*
 * What a run keeps in HBM, by hand. Batch 2: f1 reads 8 new inputs with 24
 * weights and writes 12, which relu reads and writes 12 more, which f2 reads
 * (18 weights) to write 6, the output, kept to the end. Live at once: 12 at
 * f1, 24 at relu (f1.out and r.out), 18 at f2 (r.out and f2.out): the peak
 * is 24. A decoder's KV cache is a cache: 2 x 960.
 */
START_TEST(hbm_need_by_hand)
{
	struct workload w;
	struct oplist ops;
	int64_t need[NEED_N];
	th_lower("name: t\nbatch: 2\nlayers:\n"
		 "  - {name: f1, type: fc, in_features: 4, out_features: 6}\n"
		 "  - {name: r, type: relu, elements: 6}\n"
		 "  - {name: f2, type: fc, in_features: 6, out_features: 3}\n", &w, &ops);
	ck_assert_int_eq(lower_hbm_need(&ops, need), 0);
	ck_assert_int_eq(need[NEED_WEIGHTS], 24 + 18);
	ck_assert_int_eq(need[NEED_INPUTS], 8);
	ck_assert_int_eq(need[NEED_CACHES], 0);
	ck_assert_int_eq(need[NEED_ACTIVATIONS], 24);
	done(&w, &ops);
	lower1("{name: a, type: attention, d_model: 64, heads: 8, mode: decode, kv_cache: 15}", 1, &w, &ops);
	ck_assert_int_eq(lower_hbm_need(&ops, need), 0);
	ck_assert_int_eq(need[NEED_CACHES], 2 * 960);
	ck_assert_int_eq(need[NEED_WEIGHTS], 4 * 64 * 64);     /* q, k, v and out projections */
	done(&w, &ops);
}
END_TEST

/* Loads yaml and expects lowering to fail with "w.yaml" + want (the path's directory left out). */
static void expect_lower_error(const char *yaml, const char *want)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "w.yaml", yaml), full[1024];
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(lower_workload(&w, &ops, &e), -1);
	ck_assert_int_eq(err_status(&e), ERR_INPUT);
	snprintf(full, sizeof full, "%s/%s", dir, want);
	ck_assert_str_eq(e.msg, full);
	oplist_release(&ops);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}

/* A layer named in inputs must write what the reader reads. */
START_TEST(inputs_size_mismatch)
{
	/* b reads 5 elements; a writes 4. The name starts at column 49 of line 3. */
	expect_lower_error("layers:\n  - {name: a, type: relu, elements: 4}\n"
			   "  - {name: b, type: relu, elements: 5, inputs: [a]}\n",
			   "w.yaml:3:49: layers[1].inputs[0]: expected a layer whose output has 5 elements (what this "
			   "layer reads), found \"a\" with 4");
	/* A conv reads its whole input, 6 x 6 x 2 = 72, not the 3 x 3 x 2 = 18 its stride-2 1x1 windows touch. */
	expect_lower_error("layers:\n  - {name: a, type: relu, elements: 18}\n  - {name: b, type: relu, elements: 4}\n"
			   "  - {name: c, type: conv2d, in_h: 6, in_w: 6, in_c: 2, out_c: 1, kernel: 1, stride: 2, "
			   "inputs: [b]}\n",
			   "w.yaml:4:97: layers[2].inputs[0]: expected a layer whose output has 72 elements (what this "
			   "layer reads), found \"b\" with 4");
	/* The second operand is checked too: c1.out has 2 x 2 x 3 = 12, s reads 8. */
	expect_lower_error("layers:\n  - {name: a, type: relu, elements: 8}\n"
			   "  - {name: c1, type: fc, in_features: 8, out_features: 12}\n"
			   "  - {name: s, type: add, elements: 8, inputs: [a, c1]}\n",
			   "w.yaml:4:51: layers[2].inputs[1]: expected a layer whose output has 8 elements (what this "
			   "layer reads), found \"c1\" with 12");
}
END_TEST

/*
 * The graph of ResNet-50 and MobileNetV2: one network input (the image,
 * 224 x 224 x 3), every add reads two activations, every tensor but the
 * classifier's output is read, and every tensor is written before it is read.
 */
START_TEST(cnn_graphs)
{
	static const char *const files[] = { "configs/workloads/resnet50.yaml", "configs/workloads/mobilenet_v2.yaml" };
	static const int adds[] = { 16, 10 };   /* 3 + 4 + 6 + 3 bottlenecks; MobileNetV2's residual blocks */
	for (int f = 0; f < 2; f++) {
		struct workload w;
		struct oplist ops = { 0 };
		struct err e = { 0 };
		int inputs = 0, n_add = 0;
		ck_assert_msg(workload_load(&w, files[f], 0, &e) == 0, "%s", e.msg);
		ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
		for (size_t i = 0; i < ops.nt; i++) {
			const struct tensor *t = &ops.t[i];
			char name[OP_NAME_MAX];
			tensor_name(t, name, sizeof name);
			if (t->kind == TK_INPUT) {
				inputs++;
				ck_assert_str_eq(name, "conv1.in");
				ck_assert_int_eq(t->elems, 224 * 224 * 3);
			}
			if (i == (size_t)ops.v[ops.n - 1].out)
				ck_assert_str_eq(name, "fc.out");
			else
				ck_assert_msg(t->last_reader != TENSOR_NONE, "%s: %s is read by no op", files[f], name);
			if (t->producer != TENSOR_NONE && t->first_reader != TENSOR_NONE)
				ck_assert_msg(t->ready < t->first_reader, "%s: %s", files[f], name);
		}
		ck_assert_int_eq(inputs, 1);
		for (size_t i = 0; i < ops.n; i++) {
			const struct op *o = &ops.v[i];
			if (o->kind != OP_VEC || o->vec != VEC_ADD)
				continue;
			n_add++;
			ck_assert(o->in[0] != TENSOR_NONE && o->in[1] != TENSOR_NONE && o->in[0] != o->in[1]);
			ck_assert_int_eq(ops.t[o->in[0]].kind, TK_ACT);
			ck_assert_int_eq(ops.t[o->in[1]].kind, TK_ACT);
		}
		ck_assert_int_eq(n_add, adds[f]);
		if (f == 0) {
			/* The first bottleneck of a stage: conv1 and the shortcut read the block input, the last add */
			op_uses(&ops, "layer2.0.conv1", "layer1.2.add.out", "layer2.0.conv1.w", "layer2.0.conv1.out");
			op_uses(&ops, "layer2.0.downsample", "layer1.2.add.out", "layer2.0.downsample.w",
				"layer2.0.downsample.out");
			op_uses(&ops, "layer2.0.add", "layer2.0.conv3.out", "layer2.0.downsample.out", "layer2.0.add.out");
			op_uses(&ops, "layer2.1.add", "layer2.1.conv3.out", "layer2.0.add.out", "layer2.1.add.out");
			op_uses(&ops, "layer1.0.downsample", "maxpool.out", "layer1.0.downsample.w", "layer1.0.downsample.out");
			/* 56 x 56 x 256 */
			tensor_is(&ops, "layer1.2.add.out", TK_ACT, 802816, "layer1.2.add", "layer1.2.add", "layer2.0.conv1",
				  "layer2.0.downsample");
		}
		done(&w, &ops);
	}
}
END_TEST

/*
 * tpusim lower prints what each op reads and writes, then the tensors: the
 * perceptron at batch 16, bf16 (2 B) on tpu_v4_mxu. fc1 reads 16 x 784 =
 * 12,544 elements, a new input; relu1 reads fc1's 16 x 512; fc3 writes
 * 16 x 10 = 160, which nothing reads.
 */
START_TEST(lower_cli_tensors)
{
	const char *argv[] = { "lower", "-w", "configs/workloads/mlp.yaml", "-c", "configs/tpu_v4_mxu.yaml", NULL };
	char *out, *err, want[512];
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\nfc1                          fc1.in, fc1.w -> fc1.out\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nrelu1                        fc1.out -> relu1.out\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ntensors: 9; bytes at 2 B per element\n"));
	snprintf(want, sizeof want, "\n%-36s %-6s %15d %15d %-28s %s\n", "fc1.in", "input", 12544, 25088, "-", "fc1");
	ck_assert_ptr_nonnull(strstr(out, want));
	snprintf(want, sizeof want, "\n%-36s %-6s %15d %15d %-28s %s\n", "fc1.w", "weight", 784 * 512, 784 * 512 * 2, "-",
		 "fc1");
	ck_assert_ptr_nonnull(strstr(out, want));
	snprintf(want, sizeof want, "\n%-36s %-6s %15d %15d %-28s %s\n", "fc1.out", "act", 8192, 16384, "fc1", "relu1");
	ck_assert_ptr_nonnull(strstr(out, want));
	snprintf(want, sizeof want, "\n%-36s %-6s %15d %15d %-28s %s\n", "fc3.out", "act", 160, 320, "fc3", "-");
	ck_assert_ptr_nonnull(strstr(out, want));
	free(out);
	free(err);
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

/*
 * Every layer type (layer_types.h) lowers: a small layer of each gives ops of
 * that layer only, the last writing its "out". The table must name every
 * type, so a new type needs a row here too. By hand, at batch 2: conv2d
 * 4 x 4 x 2, 3 x 3 to 3 channels: Ho = Wo = 2, M = 2 x 2 x 2 = 8,
 * K = 3 x 3 x 2 = 18, N = 3; fc: M = 2 x 2 tokens = 4, K = 3, N = 5, B the
 * weight; mul: 2 x 6 = 12 out, both inputs (24) in, one lane op per output;
 * gelu: 12 in and out, 8 lane ops per element (models/vector.c).
 */
START_TEST(every_type_lowers)
{
	static const struct {
		const char *type, *keys;
	} small[] = {
		{ "conv2d", "in_h: 4, in_w: 4, in_c: 2, out_c: 3, kernel: 3" },
		{ "fc", "in_features: 3, out_features: 5, tokens: 2" },
		{ "linear", "in_features: 3, out_features: 5" },
		{ "matmul", "m: 2, k: 3, n: 4" },
		{ "attention", "d_model: 8, heads: 2, seq: 4" },
		{ "mlp", "d_model: 4, d_ff: 8, gated: true" },
		{ "add", "elements: 6" },
		{ "mul", "elements: 6" },
		{ "relu", "elements: 6" },
		{ "gelu", "elements: 6" },
		{ "silu", "elements: 6" },
		{ "softmax", "elements: 6" },
		{ "layernorm", "elements: 6" },
		{ "pool", "in_h: 4, in_w: 4, in_c: 2, kernel: 2, stride: 2" },
		{ "all_gather", "shape: [2, 3], axes: [x]" },
		{ "reduce_scatter", "shape: [2, 3], axes: [x, y]" },
		{ "all_reduce", "shape: [4], axes: [dcn]" },
		{ "all_to_all", "shape: [2, 3], axes: [z]" },
		{ "send_recv", "shape: [5], axes: [y], dtype: fp32" },
	};
	ck_assert_int_eq(sizeof small / sizeof *small, L_NTYPES);
	for (int t = 0; t < L_NTYPES; t++) {
		struct workload w;
		struct oplist ops;
		char layer[256], name[OP_NAME_MAX];
		size_t i = 0;
		while (i < sizeof small / sizeof *small && strcmp(small[i].type, layer_type_names[t]))
			i++;
		ck_assert_msg(i < sizeof small / sizeof *small, "no small layer of type %s", layer_type_names[t]);
		snprintf(layer, sizeof layer, "{name: x, type: %s, %s}", small[i].type, small[i].keys);
		lower1(layer, 2, &w, &ops);
		ck_assert_int_eq(w.layers[0].type, t);
		ck_assert_uint_ge(ops.n, 1);
		for (size_t j = 0; j < ops.n; j++)
			ck_assert_uint_eq(ops.v[j].layer, 0);
		ck_assert_str_eq(tensor_name(&ops.t[ops.v[ops.n - 1].out], name, sizeof name), "x.out");
		switch (t) {
		case L_CONV2D:
			ck_assert_uint_eq(ops.n, 1);
			GEMM(&ops.v[0], 8, 18, 3, 1);
			break;
		case L_FC:
			ck_assert_uint_eq(ops.n, 1);
			GEMM(&ops.v[0], 4, 3, 5, 1);
			ck_assert(!ops.v[0].a_weight && ops.v[0].b_weight);
			break;
		case L_MUL:
			ck_assert_uint_eq(ops.n, 1);
			ck_assert_int_eq(ops.v[0].kind, OP_VEC);
			ck_assert_int_eq(ops.v[0].vec, VEC_MUL);
			ck_assert_int_eq(ops.v[0].in_elems, 24);
			ck_assert_int_eq(ops.v[0].out_elems, 12);
			ck_assert_int_eq(ops.v[0].lane_ops, 12);
			break;
		case L_GELU:
			ck_assert_uint_eq(ops.n, 1);
			ck_assert_int_eq(ops.v[0].kind, OP_VEC);
			ck_assert_int_eq(ops.v[0].vec, VEC_GELU);
			ck_assert_int_eq(ops.v[0].in_elems, 12);
			ck_assert_int_eq(ops.v[0].out_elems, 12);
			ck_assert_int_eq(ops.v[0].lane_ops, 96);
			break;
		case L_ALL_GATHER:
			/* On one chip (lower_workload: no pod) a chip holds the whole array: 2 x 3 = 6; the batch does not scale it. */
			ck_assert_uint_eq(ops.n, 1);
			ck_assert_int_eq(ops.v[0].kind, OP_COLL);
			ck_assert_int_eq(ops.v[0].coll, COLL_ALL_GATHER);
			ck_assert_int_eq(ici_group_chips(&ops.v[0].grp), 1);
			ck_assert_int_eq(ops.v[0].coll_elems, 6);
			ck_assert_int_eq(ops.v[0].in_elems, 6);
			ck_assert_int_eq(ops.v[0].coll_eb, 0);
			break;
		case L_SEND_RECV:
			ck_assert_int_eq(ops.v[0].coll, COLL_SEND_RECV);
			ck_assert_int_eq(ops.v[0].coll_eb, 4);
			break;
		}
		done(&w, &ops);
	}
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
	tcase_add_test(t, residual_block_tensors);
	tcase_add_test(t, attention_causal_tensors);
	tcase_add_test(t, attention_decode_tensors);
	tcase_add_test(t, mlp_gated_tensors);
	tcase_add_test(t, default_chaining);
	tcase_add_test(t, hbm_need_by_hand);
	tcase_add_test(t, inputs_size_mismatch);
	tcase_add_test(t, cnn_graphs);
	tcase_add_test(t, lower_cli_tensors);
	tcase_add_test(t, every_type_lowers);
	suite_add_tcase(s, t);
	return s;
}
