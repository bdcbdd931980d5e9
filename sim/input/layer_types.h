/*
 * layer_types.h - the layer types: one row each, read by the workload reader
 * and by lowering.
 *
 * LAYER_TYPES(X) calls X(ID, name, keys, inputs, lower, vec) once per type:
 *   ID      its constant, L_ID (enum layer_type, workload.h)
 *   name    as `type:` gives it in a workload YAML file
 *   keys    its key table in workload.c (after name, type and repeat, which
 *           every type has)
 *   inputs  the activation inputs it reads, which is how many names its
 *           `inputs` lists; LAYER_INPUTS_BY_ROLE: one per operand whose role
 *           is activation (matmul)
 *   lower   its lowering function in lower.c, int fn(struct ctx *, int64_t
 *           batch); required: lower.c takes its address, so a row without
 *           one does not compile
 *   vec     the vector op (enum vec_kind) that lower reads for the types
 *           lowered to one vector op, the collective (enum coll_kind,
 *           models/ici.h) for the collectives; -1 for the rest
 * Each reader expands the columns it needs (workload.c: name, keys, inputs;
 * lower.c: lower, vec), so a new type is one row here, and a key table and
 * a lowering function only when it needs new ones. The order of the rows is
 * the order of the enum and of every list of the types in messages.
 */
#ifndef TPUSIM_LAYER_TYPES_H
#define TPUSIM_LAYER_TYPES_H

#define LAYER_INPUTS_BY_ROLE (-1)

#define LAYER_TYPES(X) \
	X(CONV2D,    "conv2d",    conv_keys,        1,                    lower_conv,      -1) \
	X(FC,        "fc",        fc_keys,          1,                    lower_dense,     -1) \
	X(LINEAR,    "linear",    fc_keys,          1,                    lower_dense,     -1) \
	X(MATMUL,    "matmul",    matmul_keys,      LAYER_INPUTS_BY_ROLE, lower_matmul,    -1) \
	X(ATTENTION, "attention", attention_keys,   1,                    lower_attention, -1) \
	X(MLP,       "mlp",       mlp_keys,         1,                    lower_mlp,       -1) \
	X(ADD,       "add",       elementwise_keys, 2,                    lower_binary,    VEC_ADD) \
	X(MUL,       "mul",       elementwise_keys, 2,                    lower_binary,    VEC_MUL) \
	X(RELU,      "relu",      elementwise_keys, 1,                    lower_unary,     VEC_RELU) \
	X(GELU,      "gelu",      elementwise_keys, 1,                    lower_unary,     VEC_GELU) \
	X(SILU,      "silu",      elementwise_keys, 1,                    lower_unary,     VEC_SILU) \
	X(SOFTMAX,   "softmax",   elementwise_keys, 1,                    lower_unary,     VEC_SOFTMAX) \
	X(LAYERNORM, "layernorm", elementwise_keys, 1,                    lower_unary,     VEC_LAYERNORM) \
	X(POOL,      "pool",      pool_keys,        1,                    lower_pool,      -1) \
	X(ALL_GATHER,     "all_gather",     coll_keys, 1, lower_coll, COLL_ALL_GATHER) \
	X(REDUCE_SCATTER, "reduce_scatter", coll_keys, 1, lower_coll, COLL_REDUCE_SCATTER) \
	X(ALL_REDUCE,     "all_reduce",     coll_keys, 1, lower_coll, COLL_ALL_REDUCE) \
	X(ALL_TO_ALL,     "all_to_all",     coll_keys, 1, lower_coll, COLL_ALL_TO_ALL) \
	X(SEND_RECV,      "send_recv",      coll_keys, 1, lower_coll, COLL_SEND_RECV)

#endif
