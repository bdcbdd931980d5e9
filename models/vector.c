/*
 * vector.c - vector unit costs (see vector.h).
 */
#include "vector.h"

#include <stddef.h>

const char *const vector_kind_names[] = { "add", "mul", "relu", "gelu", "silu", "softmax", "layernorm",
					  "maxpool", "avgpool", NULL };

const struct cfg_key vector_keys[] = {
	{ "lanes", CFG_INT, offsetof(struct vector_params, lanes), "elements/cycle", "128", 1, 1 << 20, NULL,
	  "elements the vector unit takes per cycle" },
	CFG_END
};

/*
 * Assumed costs, in lane-operations per element: one for an add, a multiply,
 * a comparison; softmax = max, subtract, exp, sum, divide (5); layernorm =
 * mean, subtract, square, sum, rsqrt-scale, scale, shift (7); gelu and silu
 * by their usual tanh/sigmoid polynomial forms (8 and 4).
 */
int vector_ops_per_elem(enum vec_kind k)
{
	switch (k) {
	case VEC_GELU: return 8;
	case VEC_SILU: return 4;
	case VEC_SOFTMAX: return 5;
	case VEC_LAYERNORM: return 7;
	default: return 1;
	}
}

int64_t vector_cycles(const struct vector_params *p, int64_t ops)
{
	return ops / p->lanes + (ops % p->lanes != 0);
}
