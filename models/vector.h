/*
 * vector.h - the vector unit: activations, softmax, layernorm, pooling, adds.
 *
 * vector.lanes elements enter per cycle; an op that needs c lane-operations
 * per element (vector_ops_per_elem) takes ceil(elements * c / lanes) cycles.
 * Its operands come from and go to HBM, so small-intensity vector ops sit at
 * the left of the roofline.
 */
#ifndef TPUSIM_VECTOR_H
#define TPUSIM_VECTOR_H

#include <stdint.h>

#include "cfgkey.h"

/*
 * The forward ops, then a training step's (train.h): each forward op's
 * backward, the loss's gradient and the optimizers' updates.
 */
enum vec_kind { VEC_ADD, VEC_MUL, VEC_RELU, VEC_GELU, VEC_SILU, VEC_SOFTMAX, VEC_LAYERNORM,
		VEC_MAXPOOL, VEC_AVGPOOL,
		VEC_RELU_BWD, VEC_GELU_BWD, VEC_SILU_BWD, VEC_SOFTMAX_BWD, VEC_LAYERNORM_BWD,
		VEC_MAXPOOL_BWD, VEC_AVGPOOL_BWD, VEC_LOSS, VEC_SGD, VEC_MOMENTUM, VEC_ADAM,
		VEC_DROPOUT, VEC_DROPOUT_BWD, VEC_NKINDS };

struct vector_params {
	int64_t lanes;
};

extern const struct cfg_key vector_keys[];
extern const char *const vector_kind_names[];

/*
 * Lane operations per output element (an optimizer's: per parameter);
 * pooling and its backward cost one per window element instead.
 */
int vector_ops_per_elem(enum vec_kind k);

/* Cycles for ops lane-operations. */
int64_t vector_cycles(const struct vector_params *p, int64_t ops);

#endif
