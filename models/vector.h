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

enum vec_kind { VEC_ADD, VEC_MUL, VEC_RELU, VEC_GELU, VEC_SILU, VEC_SOFTMAX, VEC_LAYERNORM,
		VEC_MAXPOOL, VEC_AVGPOOL, VEC_NKINDS };

struct vector_params {
	int64_t lanes;
};

extern const struct cfg_key vector_keys[];
extern const char *const vector_kind_names[];

/* Lane operations per output element; pooling costs one per window element instead. */
int vector_ops_per_elem(enum vec_kind k);

/* Cycles for ops lane-operations. */
int64_t vector_cycles(const struct vector_params *p, int64_t ops);

#endif
