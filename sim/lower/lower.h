/*
 * lower.h - layers become GEMM ops and vector ops.
 *
 * Everything becomes matrix multiplication: a GEMM op is A (M x K) times
 * B (K x N), repeated `repeat` times on independent data, with each operand
 * marked activation or weight.
 *
 *   conv2d     im2col: M = batch*Ho*Wo, K = kh*kw*in_c/groups, N = out_c/groups,
 *              repeat = groups (depthwise: K = kh*kw, N = 1, repeat = channels)
 *   fc/linear  M = batch*tokens, K = in_features, N = out_features
 *   matmul     as given; batch scales the rows that meet a shared weight,
 *              or the repeat count when both operands are activations
 *   attention  Q, K, V projections; per KV head, Q.K^T and P.V with the heads
 *              of one group stacked into M (activation x activation); softmax
 *              on the vector unit; the output projection. Decode has one query
 *              over kv_cache + 1 keys. Causal prefill splits the queries into
 *              blocks of causal_block rows and skips the key blocks a block
 *              cannot see. In op order: q_proj, k_proj, v_proj, every block's
 *              qk, the softmax over all of them, every block's pv, o_proj.
 *   mlp        up (and gate), the activation (and the gate's multiply), down
 *   vector     add, mul, relu, gelu, silu, softmax, layernorm, pool
 *
 * Shapes are checked here, where the math is: a filter larger than the padded
 * input, groups or heads that do not divide, products beyond 64 bits.
 */
#ifndef TPUSIM_LOWER_H
#define TPUSIM_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "ici.h"
#include "limit.h"
#include "vector.h"
#include "workload.h"

/*
 * A GEMM, a vector op, or a collective over the pod's links (models/ici.h):
 * a collective moves its array between chips and computes nothing; its
 * in_elems and out_elems are what each chip holds before and after.
 */
enum op_kind { OP_GEMM, OP_VEC, OP_COLL };

/*
 * The phase of a step an op belongs to: inference is all forward; a
 * training step (train.h) adds the others. Results are summed per layer
 * and phase (struct oprow).
 */
enum step_phase { PH_FORWARD, PH_BACKWARD, PH_RECOMPUTE, PH_OPTIMIZER, PH_BUBBLE, PH_N };
extern const char *const step_phase_names[];    /* "forward", "backward", "recompute", "optimizer" */

/*
 * What a training op computes of the forward op it is named after (its
 * name's last part, op_name): the gradient of its A (".dx", or ".dw" when A
 * is a weight; ".da" when both operands are activations) or of its B
 * (".dw"; ".db"); a vector op's backward (".bwd"); the loss's gradient of a
 * network output (".loss"); a sum of two gradients of one tensor (".gsum")
 * or of one weight over two microbatches (".gacc"); a weight's update
 * (".update"); FSDP's all-gather of a weight before its GEMM (".gather",
 * shard.h), the reduce-scatter of its gradient (".scatter"), a weight
 * gradient's all-reduce over the data axis (".sync"). A recomputed op is its
 * forward op's name and ".re".
 */
enum op_grad { OG_NONE, OG_DX, OG_DW, OG_DA, OG_DB, OG_BWD, OG_LOSS, OG_GSUM, OG_GACC, OG_UPDATE, OG_GATHER, OG_SCATTER,
	       OG_SYNC, OG_N };

/*
 * Tensors. Every op reads and writes named tensors, so that the chip can
 * keep an activation on chip from the op that writes it to the last op that
 * reads it (chip.h). A tensor is
 *   TK_INPUT   an input of the network: in HBM before the run
 *   TK_WEIGHT  a GEMM's weight operand: in HBM, read by its one op
 *   TK_CACHE   state kept in HBM across runs (a decoder's KV cache)
 *   TK_ACT     written by ops of the run (producer .. ready), read by later
 *              ops (first_reader .. last_reader); one nobody reads is an
 *              output of the network (a recomputed or gradient tensor nobody
 *              reads is dropped when written)
 *   TK_STATE   an optimizer's state (train.h): in HBM across steps
 * Which tensors a layer reads: the layers named by its `inputs` key (a
 * block's input with nothing before the block is a new network input), else
 * the previous layer's output when it has the size the layer reads, else a
 * new network input (workload.h). Errors name a layer by its place in the
 * file (workload_layer_path): every instance of a block's layer has one.
 *
 * Names ("layer.suffix"): a layer's last op writes "out"; a new network input
 * is "in" (or "in0", "in1" for two operands); a GEMM's weight is "w" (a matmul
 * of two weights: "wa", "wb"). Attention: "wq", "wk", "wv", "wo"; "q", "k",
 * "v"; "scores" (written by every qk), "probs" (softmax), "ctx" (every pv).
 * Decode's qk and pv read "k_cache" and "v_cache" (batch x kv_cache x
 * kv_heads x head_dim each) where prefill's read k and v; decode's k and v,
 * the new token's, go to the cache in HBM and no op reads them. MLP: "w_up",
 * "w_gate", "w_down"; "h" (up), "g" (gate), "act" (the activation, of g when
 * gated, else of h), "gated" (act x h). Sizes: a GEMM's weight K x N x repeat
 * (as A: M x K x repeat), a new input what the op reads (a convolution: its
 * whole input); an activation's elements are the sum of what its writers
 * write (a GEMM M x N x repeat). Every tensor is written before it is read.
 */
enum tensor_kind { TK_INPUT, TK_WEIGHT, TK_CACHE, TK_ACT, TK_STATE };
extern const char *const tensor_kind_names[];   /* "input", "weight", "cache", "act", "state" */

/*
 * What a training step's tensor is of the tensor it is named after (its
 * name gains ".grad", ".re", ".state", ".mask", ".gathered"): the same
 * tensor, its gradient, its recomputed copy, a weight's optimizer state, a
 * dropout's mask (written with its output by the dropout op; 1 byte an
 * element, counted in elements of the run's dtype, rounded up), a weight
 * gathered whole from its FSDP shards (an activation, shard.h).
 */
enum tensor_role { TR_VALUE, TR_GRAD, TR_RECOMP, TR_STATE, TR_MASK, TR_GATHERED };

#define TENSOR_NONE (-1)

struct tensor {
	const char *layer_name;     /* borrowed: the layer that owns it (as struct op) */
	const char *suffix;         /* static text: "out" for a layer's output, else its part ("q", "w", "in") */
	int32_t block;              /* a causal block, or -1 */
	int kind;                   /* enum tensor_kind */
	int role;                   /* enum tensor_role */
	int32_t of;                 /* the tensor it is the gradient, copy or state of (TR_VALUE: TENSOR_NONE) */
	int64_t elems;              /* elements, over all repeats (bytes: times the array's element size) */
	int32_t producer;           /* TK_ACT: the first op that writes it; else TENSOR_NONE */
	int32_t ready;              /* TK_ACT: the last op that writes it (readers wait for it); else TENSOR_NONE */
	int32_t first_reader;       /* the first op that reads it, or TENSOR_NONE */
	int32_t last_reader;        /* the last op that reads it, or TENSOR_NONE */
};

struct op {
	const char *layer_name;     /* borrowed: the layer's name in the workload (NULL: "op") */
	const char *suffix;         /* static text: "" for the layer's one op, else its part ("qk", "up") */
	int32_t block;              /* a causal prefill's query block for qk[i] and pv[i]; -1 none */
	size_t layer;               /* index into the workload's layers */
	struct pos pos;             /* where that layer was given */
	enum op_kind kind;
	uint8_t phase;              /* enum step_phase */
	uint8_t grad;               /* enum op_grad */
	uint32_t row;               /* the result row it adds to (oplist.rows) */
	/* OP_GEMM */
	int64_t m, k, n, repeat;
	bool a_weight, b_weight;    /* operand roles */
	bool col_split;             /* N is 1/tensor of the layer's (a fc or linear split by columns, shard.h) */
	int64_t a_elems;            /* distinct elements of A in memory, per instance: m*k, or for a
				       convolution the input it reads (at most m*k; im2col repeats them) */
	int64_t c_elems;            /* distinct elements of C in memory, per instance: 0 for m*n, or for a
				       convolution's dX (train.h) the input's (col2im sums the rows into it) */
	/* OP_COLL */
	int coll;                   /* enum coll_kind */
	struct ici_group grp;       /* the chips it runs among (models/ici.h) */
	uint8_t coll_eb;            /* bytes an element of its array; 0: the run's (array.dtype) */
	bool identity;              /* a forward identity (Megatron's f, shard.h): nothing moves; its backward all-reduces */
	int64_t coll_elems;         /* its array's elements (V of models/ici.h) */
	/* OP_VEC (and OP_COLL: in_elems, out_elems) */
	int vec;                    /* enum vec_kind */
	int64_t in_elems;           /* elements read */
	int64_t out_elems;          /* elements written */
	int64_t lane_ops;           /* vector lane operations */
	/* Tensors (indices into oplist.t): GEMM A and B, or a vector op's inputs; TENSOR_NONE when absent. */
	int32_t in[2];
	int32_t out;
	/* Where the operands live: chip_place (chip.h) sets these; lowering leaves 0, all in HBM. */
	uint8_t onchip;             /* OC_* bits: the operand is in on-chip activation storage */
	uint8_t spill;              /* OC_* bits: an activation in HBM because it did not fit on chip */
	int64_t onchip_elems;       /* vector op: elements of its inputs read from on-chip storage */
	int64_t spill_elems;        /* vector op: elements of its inputs that spilled to HBM */
};

/* Operand bits of op.onchip and op.spill: A or a vector op's first input, B or its second, the result. */
enum { OC_A = 1, OC_B = 2, OC_C = 4 };

/* A row of results: one layer's ops of one phase. */
struct oprow {
	size_t layer;               /* index into the workload's layers */
	int phase;                  /* enum step_phase */
};

struct oplist {
	struct op *v;               /* owned */
	size_t n, cap;
	struct tensor *t;           /* owned: the tensors the ops name */
	size_t nt, tcap;
	/*
	 * owned: the result rows, in the order of their first op; op.row
	 * indexes them. Lowering gives one per layer (row i: layer i, forward);
	 * a training step one per layer and phase that has an op. A list built
	 * by hand may have none (nrows 0): then op.layer is the row.
	 */
	struct oprow *rows;
	size_t nrows, rcap;
};

/* Appends the ops of every layer of w to out (empty), on one chip. */
int lower_workload(const struct workload *w, struct oplist *out, struct err *e);

/*
 * The pod a workload is lowered for (shard.h): its links, and each mesh
 * axis's degree and the chips it runs among.
 */
struct lower_pod {
	const struct ici_params *pod;   /* borrowed */
	int64_t data, fsdp, tensor, pipeline;
	bool sequence;                  /* sequence parallelism (tensor > 1) */
	struct ici_group g_data, g_fsdp, g_tensor, g_pipeline;
};

/*
 * lower_workload at batch instead of the workload's (train.c: a microbatch),
 * on the pod (a collective's share of each chip; NULL: one chip),
 * with dropout when drop_eb > 0 (the run's element size, for the masks):
 * attention's probabilities (P V reads "probs_dropped"), its output (o_proj
 * writes "proj", the dropout "out") and an MLP's output (down writes
 * "down"), where Korthikanti et al. (MLSys 2023, Sec. 4.1) place it.
 */
int lower_batch(const struct workload *w, int64_t batch, int drop_eb, const struct lower_pod *pod, struct oplist *out,
		struct err *e);
void oplist_release(struct oplist *l);

/*
 * A new op at the end of l, zeroed but for no tensors (TENSOR_NONE), or
 * NULL: l holds LOWER_MAX_OPS already, or memory ran out (l unchanged).
 */
struct op *oplist_add_op(struct oplist *l);

/* t appended to l's tensors: its index, or -1 when memory ran out. */
int32_t oplist_add_tensor(struct oplist *l, const struct tensor *t);

/* The rows of l's results: nrows, or layers (a list without rows). */
size_t oplist_nrows(const struct oplist *l, size_t layers);

/* The row op o (of l) adds to. */
size_t oplist_row(const struct oplist *l, const struct op *o);

/* The op's name in buf: "layer", "layer.suffix", "layer.qk[3]" or "layer.up.dw". Returns buf. */
const char *op_name(const struct op *o, char *buf, size_t size);

/* The tensor's name in buf: "layer.out", "layer.q", "layer.scores[3]", "layer.w.grad". Returns buf. */
const char *tensor_name(const struct tensor *t, char *buf, size_t size);

/* MACs of a GEMM op (M*K*N*repeat); 0 for a vector op. Checked not to overflow by lowering. */
int64_t op_macs(const struct op *o);

/*
 * What a run keeps in HBM, in elements, by kind: every weight, cache,
 * network input and optimizer state, and the activations and weights'
 * gradients live at once where together they peak over the ops (a tensor
 * from its first writer to its last reader, a network output to the end, a
 * recomputed or gradient tensor nobody reads only at its writer). Counted
 * as if no activation stayed on chip: an upper bound with
 * chip.keep_activations.
 */
enum hbm_need { NEED_WEIGHTS, NEED_CACHES, NEED_INPUTS, NEED_ACTIVATIONS, NEED_GRADIENTS, NEED_STATE, NEED_N };
/* "weights", "caches", "inputs", "activations", "gradients", "optimizer_state" */
extern const char *const hbm_need_names[];

/* need[] as above for the ops of l; -1 when memory ran out, else 0. Sums saturate at INT64_MAX. */
int lower_hbm_need(const struct oplist *l, int64_t need[NEED_N]);

#endif
