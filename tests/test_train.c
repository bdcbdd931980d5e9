/*
 * test_train.c - a training step (train.h), against counts worked from the
 * layers' shapes: the closed forms 6 N D and 8 N D of a dense transformer,
 * a CNN's backward at twice its forward, each op of a small MLP's step by
 * hand, what full recomputation keeps, Adam's bytes per parameter, and the
 * refusals.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "options.h"
#include "tests.h"
#include "tpusim.h"
#include "trace.h"
#include "train.h"

/* The training step of the workload at path (or of yaml text when path is NULL) on tpu_v4 with sets (NULL-terminated). */
static void step(const char *path, const char *yaml, const char *const *sets, struct workload *w, struct oplist *ops)
{
	struct config c;
	struct err e = { 0 };
	char *dir = NULL, *file = NULL;
	const char *on[] = { "train.enabled=true", NULL };
	th_config(&c, "tpu_v4", on);
	for (; sets && *sets; sets++)
		if (config_set(&c, *sets, &e) < 0)
			ck_abort_msg("--set %s: %s", *sets, e.msg);
	if (!path) {
		dir = th_tmpdir();
		path = file = th_write(dir, "w.yaml", yaml);
	}
	memset(ops, 0, sizeof *ops);
	if (workload_load(w, path, 0, &e) < 0 || train_lower(&c, w, ops, &e) < 0)
		ck_abort_msg("the step did not lower: %s", e.msg);
	free(file);
	if (dir)
		th_rmdir(dir);
	free(dir);
}

static void done(struct workload *w, struct oplist *ops)
{
	oplist_release(ops);
	workload_release(w);
}

static int32_t op_in(const struct oplist *ops, const char *name, int phase);

/* MACs of the step's GEMMs by phase. */
static void macs_by_phase(const struct oplist *ops, int64_t macs[PH_N])
{
	memset(macs, 0, PH_N * sizeof *macs);
	for (size_t i = 0; i < ops->n; i++)
		macs[ops->v[i].phase] += op_macs(&ops->v[i]);
}

/*
 * A dense decoder of L blocks (d_model d, 8 heads, seq s, feed-forward 4d,
 * post-layernorm as BERT) after a layernorm stem, batch b, as text. N, the matmuls' parameters:
 * 4 d^2 (q, k, v, out) + 2 x 4 d^2 (up, down) = 12 d^2 a block; D = b s
 * tokens. Attention's products: Q K^T and P V, s^2 d MACs each per sample
 * and block.
 */
static char *decoder(int L, int64_t d, int64_t s, int64_t b)
{
	char *y = malloc(2048);
	snprintf(y, 2048, "name: dec\nbatch: %lld\nlayers:\n  - {name: stem, type: layernorm, elements: %lld}\n"
		 "  - block:\n      name: b\n      repeat: %d\n      layers:\n"
		 "        - {name: attn, type: attention, seq: %lld, d_model: %lld, heads: 8}\n"
		 "        - {name: add1, type: add, elements: %lld, inputs: [attn, block.in]}\n"
		 "        - {name: ln1, type: layernorm, elements: %lld}\n"
		 "        - {name: mlp, type: mlp, tokens: %lld, d_model: %lld, d_ff: %lld, activation: gelu}\n"
		 "        - {name: add2, type: add, elements: %lld, inputs: [mlp, ln1]}\n"
		 "        - {name: ln2, type: layernorm, elements: %lld}\n",
		 (long long)b, (long long)(s * d), L, (long long)s, (long long)d, (long long)(s * d), (long long)(s * d), (long long)s,
		 (long long)d, (long long)(4 * d), (long long)(s * d), (long long)(s * d));
	return y;
}

/*
 * 6 N D plus attention: forward 2 N D + 4 L b s^2 d FLOPs, backward twice
 * that (every matmul's dX and dW, both operands of the attention products).
 * Full recomputation runs the forward again: 8 N D + 16 L b s^2 d.
 */
START_TEST(transformer_flops_closed_form)
{
	const int64_t L = 3, d = 256, s = 128, b = 2, N = 12 * L * d * d, D = b * s;
	const double attn = 4.0 * (double)(L * b * s * s * d);
	struct workload w;
	struct oplist ops;
	int64_t macs[PH_N];
	char *y = decoder((int)L, d, s, b);
	const char *full[] = { "train.remat=full", NULL };

	step(NULL, y, NULL, &w, &ops);
	macs_by_phase(&ops, macs);
	double model = 2.0 * (double)(macs[PH_FORWARD] + macs[PH_BACKWARD]);
	double want = 6.0 * (double)N * (double)D + 3 * attn;
	ck_assert_msg(model >= 0.99 * want && model <= 1.01 * want, "%.6g FLOPs against 6 N D + attention %.6g", model, want);
	ck_assert_int_eq(macs[PH_RECOMPUTE], 0);
	ck_assert_int_eq(macs[PH_OPTIMIZER], 0);
	done(&w, &ops);

	step(NULL, y, full, &w, &ops);
	macs_by_phase(&ops, macs);
	double hw = 2.0 * (double)(macs[PH_FORWARD] + macs[PH_BACKWARD] + macs[PH_RECOMPUTE]);
	want = 8.0 * (double)N * (double)D + 4 * attn;
	ck_assert_msg(hw >= 0.99 * want && hw <= 1.01 * want, "%.6g FLOPs against 8 N D + attention %.6g", hw, want);
	done(&w, &ops);
	free(y);
}
END_TEST

/*
 * ResNet-50: backward = 2 x forward MACs, exactly (each conv's dX and dW
 * have its MACs), with the images' gradient (train.input_grads=true).
 * Without it (auto: the input only a convolution reads), the first conv's
 * dX goes: 112 x 112 outputs x 7 x 7 x 3 x 64.
 */
START_TEST(cnn_backward_twice_forward)
{
	struct workload w;
	struct oplist ops;
	int64_t macs[PH_N];
	const char *images[] = { "train.input_grads=true", NULL };
	step("configs/workloads/resnet50.yaml", NULL, images, &w, &ops);
	macs_by_phase(&ops, macs);
	ck_assert_int_eq(macs[PH_FORWARD], INT64_C(4089184256));
	ck_assert_int_eq(macs[PH_BACKWARD], 2 * macs[PH_FORWARD]);
	/* conv1's dX (12544 x 64 times 64 x 147) sums its im2col rows into the 224 x 224 x 3 input: what it writes. */
	const struct op *dx = &ops.v[op_in(&ops, "conv1.dx", PH_BACKWARD)];
	ck_assert_int_eq(dx->m * dx->n, 112 * 112 * 7 * 7 * 3);
	ck_assert_int_eq(dx->c_elems, 224 * 224 * 3);
	done(&w, &ops);
	step("configs/workloads/resnet50.yaml", NULL, NULL, &w, &ops);
	macs_by_phase(&ops, macs);
	ck_assert_int_eq(macs[PH_BACKWARD], 2 * macs[PH_FORWARD] - INT64_C(112) * 112 * 7 * 7 * 3 * 64);
	done(&w, &ops);
}
END_TEST

/* The op of ops named name in phase, or -1. */
static int32_t op_in(const struct oplist *ops, const char *name, int phase)
{
	char buf[OP_NAME_MAX];
	for (size_t i = 0; i < ops->n; i++)
		if (ops->v[i].phase == phase && !strcmp(op_name(&ops->v[i], buf, sizeof buf), name))
			return (int32_t)i;
	return -1;
}

static const char *tname(const struct oplist *ops, int32_t t, char *buf)
{
	return t < 0 ? "-" : tensor_name(&ops->t[t], buf, OP_NAME_MAX);
}

/* Op name of phase reads a and b and writes out (tensor names, "-" for none). */
static void uses(const struct oplist *ops, const char *name, int phase, const char *a, const char *b, const char *out)
{
	char x[OP_NAME_MAX], y[OP_NAME_MAX], z[OP_NAME_MAX];
	int32_t i = op_in(ops, name, phase);
	ck_assert_msg(i >= 0, "no op %s in phase %s", name, step_phase_names[phase]);
	const struct op *o = &ops->v[i];
	ck_assert_msg(!strcmp(tname(ops, o->in[0], x), a) && !strcmp(tname(ops, o->in[1], y), b) &&
		      !strcmp(tname(ops, o->out, z), out), "%s: %s, %s -> %s; expected %s, %s -> %s", name, x, y, z, a, b, out);
}

/*
 * A two-layer MLP's step, op by op: batch 4, fc 8 -> 6, relu, fc 6 -> 3.
 * Backward: the loss on f2's output (12 elements), f2's dX (4 x 3 times
 * 3 x 6) and dW (6 x 4 times 4 x 3), relu's backward from its input, f1's dX
 * (4 x 6 times 6 x 8) and dW (8 x 4 times 4 x 6); Adam updates 48 and 18
 * weights, reading weight, gradient and 6 elements of state (12 B at 2 B)
 * per parameter and writing weight and state.
 */
START_TEST(mlp_step_by_hand)
{
	struct workload w;
	struct oplist ops;
	const char *y = "name: m\nbatch: 4\nlayers:\n"
			"  - {name: f1, type: fc, in_features: 8, out_features: 6}\n"
			"  - {name: r, type: relu, elements: 6}\n"
			"  - {name: f2, type: fc, in_features: 6, out_features: 3}\n";
	static const struct { const char *name; int phase; int64_t m, k, n; } gemms[] = {
		{ "f1", PH_FORWARD, 4, 8, 6 }, { "f2", PH_FORWARD, 4, 6, 3 }, { "f2.dx", PH_BACKWARD, 4, 3, 6 },
		{ "f2.dw", PH_BACKWARD, 6, 4, 3 }, { "f1.dx", PH_BACKWARD, 4, 6, 8 }, { "f1.dw", PH_BACKWARD, 8, 4, 6 },
	};
	step(NULL, y, NULL, &w, &ops);
	ck_assert_int_eq(ops.n, 3 + 1 + 2 + 1 + 2 + 2);
	for (size_t g = 0; g < sizeof gemms / sizeof *gemms; g++) {
		int32_t i = op_in(&ops, gemms[g].name, gemms[g].phase);
		ck_assert_msg(i >= 0, "%s", gemms[g].name);
		ck_assert_int_eq(ops.v[i].m, gemms[g].m);
		ck_assert_int_eq(ops.v[i].k, gemms[g].k);
		ck_assert_int_eq(ops.v[i].n, gemms[g].n);
	}
	uses(&ops, "f2.loss", PH_BACKWARD, "f2.out", "-", "f2.out.grad");
	ck_assert_int_eq(train_losses(&ops, 1), 1);
	uses(&ops, "f2.dx", PH_BACKWARD, "f2.out.grad", "f2.w", "r.out.grad");
	uses(&ops, "f2.dw", PH_BACKWARD, "r.out", "f2.out.grad", "f2.w.grad");
	uses(&ops, "r.bwd", PH_BACKWARD, "r.out.grad", "f1.out", "f1.out.grad");
	uses(&ops, "f1.dx", PH_BACKWARD, "f1.out.grad", "f1.w", "f1.in.grad");
	uses(&ops, "f1.dw", PH_BACKWARD, "f1.in", "f1.out.grad", "f1.w.grad");
	uses(&ops, "f1.w.update", PH_OPTIMIZER, "f1.w", "f1.w.grad", "f1.w.state");
	uses(&ops, "f2.w.update", PH_OPTIMIZER, "f2.w", "f2.w.grad", "f2.w.state");
	const struct op *u = &ops.v[op_in(&ops, "f1.w.update", PH_OPTIMIZER)];
	ck_assert_int_eq(u->vec, VEC_ADAM);
	ck_assert_int_eq(u->in_elems, 48 * (1 + 1 + 6));
	ck_assert_int_eq(u->out_elems, 48 * (1 + 6));
	ck_assert_int_eq(u->lane_ops, 48 * 12);
	ck_assert_int_eq(ops.t[u->out].elems, 48 * 6);
	const struct op *r = &ops.v[op_in(&ops, "r.bwd", PH_BACKWARD)];
	ck_assert_int_eq(r->vec, VEC_RELU_BWD);
	ck_assert_int_eq(r->in_elems, 24 + 24);
	ck_assert_int_eq(r->out_elems, 24);
	/* Rows: each layer forward, then backward from the last, then the updates. */
	static const struct { size_t layer; int phase; } rows[] = {
		{ 0, PH_FORWARD }, { 1, PH_FORWARD }, { 2, PH_FORWARD }, { 2, PH_BACKWARD }, { 1, PH_BACKWARD },
		{ 0, PH_BACKWARD }, { 0, PH_OPTIMIZER }, { 2, PH_OPTIMIZER },
	};
	ck_assert_uint_eq(ops.nrows, sizeof rows / sizeof *rows);
	for (size_t i = 0; i < ops.nrows; i++) {
		ck_assert_uint_eq(ops.rows[i].layer, rows[i].layer);
		ck_assert_int_eq(ops.rows[i].phase, rows[i].phase);
	}
	done(&w, &ops);
}
END_TEST

/*
 * Fan-out and microbatches, by hand. A residual block: x feeds f and the
 * add, so x's gradient is the add's (dY itself) plus f's dX: one ".gsum".
 * Two microbatches of 2: the second's dW of f joins the first's (".gacc"),
 * one update for f's weight.
 */
START_TEST(gradient_sums)
{
	struct workload w;
	struct oplist ops;
	const char *y = "name: r\nbatch: 4\nlayers:\n"
			"  - {name: f0, type: fc, in_features: 5, out_features: 5}\n"
			"  - {name: f, type: fc, in_features: 5, out_features: 5}\n"
			"  - {name: a, type: add, elements: 5, inputs: [f, f0]}\n";
	const char *two[] = { "train.microbatches=2", NULL };
	int gsum = 0, gacc = 0, upd = 0, fwd = 0;
	step(NULL, y, two, &w, &ops);
	for (size_t i = 0; i < ops.n; i++) {
		gsum += ops.v[i].grad == OG_GSUM;
		gacc += ops.v[i].grad == OG_GACC;
		upd += ops.v[i].grad == OG_UPDATE;
		fwd += ops.v[i].phase == PH_FORWARD;
		if (ops.v[i].kind == OP_GEMM)
			ck_assert(ops.v[i].m == 2 || ops.v[i].k == 2);      /* a microbatch's rows, or its dW's reduction */
	}
	ck_assert_int_eq(fwd, 2 * 3);
	ck_assert_int_eq(gsum, 2);              /* f0.out's, in each microbatch */
	ck_assert_int_eq(gacc, 2);              /* f.w and f0.w, in the second */
	ck_assert_int_eq(upd, 2);
	uses(&ops, "a.loss", PH_BACKWARD, "a.out", "-", "a.out.grad");
	uses(&ops, "f.dx", PH_BACKWARD, "a.out.grad", "f.w", "f0.out.grad");
	done(&w, &ops);
}
END_TEST

/*
 * What the backward keeps. With full recomputation: the stem's input (its
 * rerun reads it), each block's input (the stem's output, block 0's ln2
 * output) and the network's output, which the loss reads: L + 2 tensors of
 * b s d. Without: per block its input x (q, k and v's dW read it), q and k
 * (each other's gradient), v, ctx (the output projection's dW), add1's
 * output (ln1's backward), ln1's output (up's dW), h and act (4 d wide: the
 * gelu's backward, down's dW) and add2's output (ln2's backward): 16 b s d,
 * and the probabilities, b x 8 heads x s x s (the softmax's backward, P V's
 * dV); then the stem's input and the network's output.
 */
START_TEST(what_the_backward_keeps)
{
	const int64_t L = 2, d = 64, s = 32, b = 2;
	struct workload w;
	struct oplist ops;
	char *y = decoder((int)L, d, s, b);
	const char *full[] = { "train.remat=full", NULL };
	step(NULL, y, full, &w, &ops);
	ck_assert_int_eq(train_saved_elems(&ops, 1), (L + 2) * b * s * d);
	done(&w, &ops);
	step(NULL, y, NULL, &w, &ops);
	int64_t per = 16 * b * s * d + b * 8 * s * s;
	ck_assert_int_eq(train_saved_elems(&ops, 1), L * per + 2 * b * s * d);
	done(&w, &ops);
	free(y);
}
END_TEST

/*
 * Korthikanti et al., MLSys 2023, Sec. 4.1: a transformer layer keeps
 * s b h (34 + 5 a s / h) bytes at 16 bits without recomputation, counting
 * dropout after the attention probabilities (a 1-byte mask and the dropped
 * copy), its output and the MLP's. A layer's share: the step of 2 layers
 * less that of 1.
 */
START_TEST(saved_activations_as_published)
{
	const int64_t d = 512, s = 256, b = 2, a = 8;
	const char *drop[] = { "train.dropout=0.1", NULL };
	struct workload w;
	struct oplist ops;
	int64_t saved[2];
	for (int L = 1; L <= 2; L++) {
		char *y = decoder(L, d, s, b);
		step(NULL, y, drop, &w, &ops);
		saved[L - 1] = 2 * train_saved_elems(&ops, 1);      /* bf16: 2 B an element */
		done(&w, &ops);
		free(y);
	}
	double per = (double)(saved[1] - saved[0]), want = (double)(s * b * d) * (34.0 + 5.0 * (double)(a * s) / (double)d);
	ck_assert_msg(per >= 0.95 * want && per <= 1.05 * want, "a layer keeps %.0f B, the formula %.0f B", per, want);
}
END_TEST

/* Adam keeps 12 B a parameter beyond the bf16 weight and gradient (16 B in all), momentum 8, sgd 4; at fp32 no master copy. */
START_TEST(optimizer_state_bytes)
{
	struct train_params tp = { true, OPT_ADAMW, REMAT_NONE, 1, IG_TRUE, 0, false };
	ck_assert_int_eq(2 + 2 + train_state_bytes(&tp, 2), 16);
	tp.optimizer = OPT_ADAM;
	ck_assert_int_eq(train_state_bytes(&tp, 2), 12);
	ck_assert_int_eq(train_state_bytes(&tp, 4), 8);
	tp.optimizer = OPT_MOMENTUM;
	ck_assert_int_eq(train_state_bytes(&tp, 2), 8);
	tp.optimizer = OPT_SGD;
	ck_assert_int_eq(train_state_bytes(&tp, 2), 4);
	ck_assert_int_eq(train_state_bytes(&tp, 4), 0);
}
END_TEST

/*
 * The HBM need of the MLP step, by hand: weights 48 + 18, Adam's state 6
 * elements each, the input 4 x 8. Live together, activations and
 * gradients peak at f2's dW: f1's output (24), r's (24), the loss's
 * gradient (12) and r.out's (24), with f2's weight gradient (18).
 */
START_TEST(hbm_need_of_a_step)
{
	struct workload w;
	struct oplist ops;
	int64_t need[NEED_N];
	const char *y = "name: m\nbatch: 4\nlayers:\n"
			"  - {name: f1, type: fc, in_features: 8, out_features: 6}\n"
			"  - {name: r, type: relu, elements: 6}\n"
			"  - {name: f2, type: fc, in_features: 6, out_features: 3}\n";
	step(NULL, y, NULL, &w, &ops);
	ck_assert_int_eq(lower_hbm_need(&ops, need), 0);
	ck_assert_int_eq(need[NEED_WEIGHTS], 48 + 18);
	ck_assert_int_eq(need[NEED_STATE], 6 * (48 + 18));
	ck_assert_int_eq(need[NEED_INPUTS], 4 * 8);
	ck_assert_int_eq(need[NEED_ACTIVATIONS], 24 + 24 + 12 + 24);
	ck_assert_int_eq(need[NEED_GRADIENTS], 18);
	done(&w, &ops);
}
END_TEST

/* Refusals, positioned: a decode layer, microbatches that do not divide the batch; the CLI's exit status 2. */
START_TEST(refusals)
{
	char *dir = th_tmpdir(), *out, *err;
	const char *a1[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/gpt2_decode.yaml", "--train",
			     "--model", "analytic", NULL };
	const char *a2[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/mlp.yaml", "--train", "--set",
			     "train.microbatches=3", "--model", "analytic", NULL };
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(th_cli(cwd, a1, &out, &err), 2);
	ck_assert_msg(strstr(err, "gpt2_decode.yaml:") && strstr(err, "mode: expected prefill with train.enabled (a training "
								       "step has no KV cache), found decode\n"), "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(cwd, a2, &out, &err), 2);
	ck_assert_str_eq(err, "--set:1:20: train.microbatches: expected a divisor of the batch (16), found 3\n");
	free(out);
	free(err);
	/* A train.* key that inference ignores; a training step in the lab. */
	const char *a3[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/mlp.yaml", "--set", "train.remat=full",
			     "--model", "analytic", NULL };
	ck_assert_int_eq(th_cli(cwd, a3, &out, &err), 2);
	ck_assert_str_eq(err, "--set:1:13: train.remat: expected it with train.enabled: true or --train (a training step; "
			 "inference it would not change), found it set to full\n");
	free(out);
	free(err);
	const char *a4[] = { "lab", "-c", "configs/lab_4x4.yaml", "--gemm", "4x4x4", "--set", "train.enabled=true", NULL };
	ck_assert_int_eq(th_cli(cwd, a4, &out, &err), 2);
	ck_assert_str_eq(err, "--set:1:15: train.enabled: expected false (tpusim lab runs one GEMM, no training step), found true\n");
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* What a step of ResNet-50 at batch 16 keeps in HBM with mb microbatches, by the library. */
static double need_of(int64_t mb)
{
	struct sim s;
	struct sim_request rq;
	struct err e = { 0 };
	char set[64];
	snprintf(set, sizeof set, "train.microbatches=%lld", (long long)mb);
	run_options_default(&rq);
	rq.configs[rq.nconfigs++] = "configs/tpu_v4.yaml";
	rq.workload = "configs/workloads/resnet50.yaml";
	rq.assignments[rq.nassignments++] = set;
	rq.model = MODEL_ANALYTIC;
	rq.batch = 16;
	rq.train = true;
	ck_assert_msg(sim_load(&s, &rq, "run", &e) == 0 && sim_run(&s, &e) == 0, "%s", e.msg);
	double b = s.run.hbm.total;
	sim_release(&s);
	return b;
}

/*
 * A step that does not fit names the fewest microbatches that do: with 0.5
 * GiB, ResNet-50 at batch 16 needs more with 2 than fit and less with 4
 * (each measured alone), so the hint says 4.
 */
START_TEST(fit_hint_names_microbatches)
{
	char *out, *err, cwd[4096], want[200];
	double two = need_of(2), four = need_of(4), cap = 0.5 * 1073741824.0;
	ck_assert_msg(two > cap && four <= cap, "%.0f, %.0f", two, four);
	const char *argv[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/resnet50.yaml", "--batch", "16",
			       "--train", "--set", "hbm.capacity_gib=0.5", "--model", "analytic", NULL };
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(th_cli(cwd, argv, &out, &err), 2);
	snprintf(want, sizeof want, "; train.microbatches=4 fits: %.4g GiB)\n", four / 1073741824.0);
	ck_assert_msg(strstr(err, want), "%s", err);
	free(out);
	free(err);
}
END_TEST

/*
 * A run's report of the step: every cycle in one phase, the phases' sum the
 * total; MFU the model FLOPs over time x peak; layers.csv's rows say their
 * phase.
 */
START_TEST(step_report)
{
	struct sim s;
	struct sim_request rq;
	struct err e = { 0 };
	run_options_default(&rq);
	rq.configs[rq.nconfigs++] = "configs/tpu_v4.yaml";
	rq.workload = "configs/workloads/mlp.yaml";
	rq.model = MODEL_ANALYTIC;
	rq.train = true;
	ck_assert_msg(sim_load(&s, &rq, "run", &e) == 0, "%s", e.msg);
	ck_assert_msg(sim_run(&s, &e) == 0, "%s", e.msg);
	struct run_step st;
	run_step_of(&s.run, &s.cfg, &s.w, &st);
	int64_t sum = 0;
	for (int k = 0; k < PH_N; k++)
		sum += st.cycles[k];
	ck_assert_int_eq(sum, s.run.total.cycles);
	ck_assert_int_gt(st.cycles[PH_OPTIMIZER], 0);
	int64_t fwd = 16 * (784 * 512 + 512 * 256 + 256 * 10);
	ck_assert_int_eq(st.macs[PH_FORWARD], fwd);
	ck_assert_int_eq(st.macs[PH_BACKWARD], 2 * fwd);
	double secs = (double)s.run.total.cycles / 1.05e9, peak = 2 * 8 * 128 * 128 * 1.05e9;
	ck_assert_double_eq_tol(st.mfu, 6.0 * (double)fwd / (secs * peak), 1e-12);
	char *json = sim_summary_json(&s);
	ck_assert_ptr_nonnull(strstr(json, "\"cycles_by_phase\": {\"forward\": "));
	ck_assert_ptr_nonnull(strstr(json, "\"phase\": \"optimizer\""));
	ck_assert_ptr_nonnull(strstr(json, "\"mfu_dtype\": \"bf16\""));
	free(json);
	sim_release(&s);
	/* The library's request key: the same step's summary, byte for byte, and a bad value at its place. */
	char *res = NULL;
	ck_assert_int_eq(tpusim_run_json("{\"configs\": [\"configs/tpu_v4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", "
					 "\"model\": \"analytic\", \"train\": true}", &res), 0);
	ck_assert_ptr_nonnull(strstr(res, "\"train\": true,\n  \"step_time_s\": "));
	ck_assert_ptr_nonnull(strstr(res, "\"phase\": \"backward\""));
	tpusim_free(res);
	ck_assert_int_eq(tpusim_run_json("{\"configs\": [\"configs/tpu_v4.yaml\"], \"workload\": \"mlp\", \"train\": 1}", &res), 2);
	ck_assert_str_eq(res, "request:1:66: train: expected true or false, found \"1\"");
	tpusim_free(res);
}
END_TEST

/*
 * A step's event trace reads back (format version 3: the backward's layers
 * come last to first) and its transfers and cycles are the run's.
 */
START_TEST(trace_of_a_step)
{
	char *dir = th_tmpdir(), *out, *err, path[4200], cwd[4096];
	struct trace_summary ts;
	struct err e = { 0 };
	snprintf(path, sizeof path, "%s/t.gz", dir);
	const char *argv[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/mlp.yaml", "--train", "--trace",
			       path, NULL };
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(th_cli(cwd, argv, &out, &err), 0);
	ck_assert_msg(trace_read(path, &ts, NULL, NULL, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ts.version, TRACE_VERSION);
	/* Rows by layer and phase: fc1's forward is its layer's row; its backward a row of its own. */
	int fwd = 0, bwd = 0;
	for (size_t l = 0; l < ts.nlayers; l++) {
		fwd += ts.layers[l].name && !strcmp(ts.layers[l].name, "fc1") && l == 0;
		bwd += ts.layers[l].name && !strcmp(ts.layers[l].name, "fc1 backward") && l >= 5;
	}
	ck_assert_int_eq(fwd + bwd, 2);
	char want[200];
	snprintf(want, sizeof want, "\n%lld cycles = ", (long long)ts.cycles);
	ck_assert_msg(strstr(out, want), "the trace's %lld cycles, the run's: %s", (long long)ts.cycles, out);
	trace_summary_release(&ts);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * The golden training steps (tests/golden/train.csv, written by
 * scripts/golden.py --train): every number a change must keep, or move on
 * purpose and say why.
 */
START_TEST(golden_steps)
{
	char *text = th_slurp("tests/golden/train.csv");
	struct th_csv *g = th_csv("tests/golden/train.csv", text);
	static const char *const ints[] = { "cycles", "hbm_read_bytes", "hbm_write_bytes", "macs" };
	ck_assert_uint_ge(g->rows, 18);
	for (size_t r = 0; r < g->rows; r++) {
		char cfg[200], key[400];
		struct sim s;
		struct sim_request rq;
		struct err e = { 0 };
		const char *model = th_csv_get(g, r, "model");
		snprintf(cfg, sizeof cfg, "configs/%s.yaml", th_csv_get(g, r, "preset"));
		snprintf(key, sizeof key, "%s,%s,%s", cfg, th_csv_get(g, r, "workload"), model);
		run_options_default(&rq);
		rq.configs[rq.nconfigs++] = cfg;
		rq.workload = th_csv_get(g, r, "workload");
		rq.model = !strcmp(model, "cycle") ? MODEL_CYCLE : MODEL_ANALYTIC;
		rq.dataflow = DF_WS;
		rq.train = true;
		ck_assert_msg(sim_load(&s, &rq, "run", &e) == 0 && sim_run(&s, &e) == 0, "%s: %s", key, e.msg);
		const struct result *t = &s.run.total;
		const int64_t now[] = { t->cycles, t->hbm_read_bytes, t->hbm_write_bytes, t->macs };
		for (int k = 0; k < 4; k++)
			ck_assert_msg(th_csv_int(g, r, ints[k]) == now[k], "%s: %s: golden %lld, now %lld", key, ints[k],
				      (long long)th_csv_int(g, r, ints[k]), (long long)now[k]);
		struct run_step st;
		run_step_of(&s.run, &s.cfg, &s.w, &st);
		for (int k = 0; k < PH_N; k++) {
			char col[40];
			snprintf(col, sizeof col, "cycles_%s", step_phase_names[k]);
			ck_assert_msg(th_csv_int(g, r, col) == st.cycles[k], "%s: %s: golden %lld, now %lld", key, col,
				      (long long)th_csv_int(g, r, col), (long long)st.cycles[k]);
		}
		double saved = (double)train_saved_elems(&s.ops, 1) * 2;
		ck_assert_msg(atof(th_csv_get(g, r, "saved_activation_bytes")) == saved, "%s: saved %.17g", key, saved);
		ck_assert_msg(atof(th_csv_get(g, r, "hbm_bytes_needed")) == s.run.hbm.total, "%s: HBM %.17g", key,
			      s.run.hbm.total);
		sim_release(&s);
	}
	th_csv_free(g);
	free(text);
}
END_TEST

Suite *train_suite(void)
{
	Suite *s = suite_create("train");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, transformer_flops_closed_form);
	tcase_add_test(tc, cnn_backward_twice_forward);
	tcase_add_test(tc, mlp_step_by_hand);
	tcase_add_test(tc, gradient_sums);
	tcase_add_test(tc, what_the_backward_keeps);
	tcase_add_test(tc, saved_activations_as_published);
	tcase_add_test(tc, optimizer_state_bytes);
	tcase_add_test(tc, hbm_need_of_a_step);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, step_report);
	tcase_add_test(tc, trace_of_a_step);
	tcase_add_test(tc, golden_steps);
	tcase_add_test(tc, fit_hint_names_microbatches);
	suite_add_tcase(s, tc);
	return s;
}
