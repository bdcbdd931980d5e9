/*
 * vector.c - vector unit costs (see vector.h).
 */
#include "vector.h"

#include <stddef.h>

const char *const vector_kind_names[] = { "add", "mul", "relu", "gelu", "silu", "softmax", "layernorm",
					  "maxpool", "avgpool", "relu_bwd", "gelu_bwd", "silu_bwd", "softmax_bwd",
					  "layernorm_bwd", "maxpool_bwd", "avgpool_bwd", "loss", "sgd", "momentum", "adam",
					  "dropout", "dropout_bwd", NULL };

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
 *
 * A training step's, also assumed, per element of the gradient out:
 *   relu_bwd       1: the incoming gradient where x > 0
 *   gelu_bwd      14: the tanh form again (8), its derivative (5), times dy (1)
 *   silu_bwd       8: the sigmoid (4), s (1 + x (1 - s)) (3), times dy (1)
 *   softmax_bwd    4: dx = p (dy - sum(dy p)): multiply, sum, subtract, multiply
 *   layernorm_bwd 10: x-hat again (4), dy x gamma, two sums, the combination (3)
 *   loss           6: softmax cross-entropy's gradient, softmax(y) - target (5 + 1)
 * and per parameter: sgd 2 (w -= lr g), momentum 4 (m = b m + g; w -= lr m),
 * adam 12 (m and v moments 5, bias corrections 2, sqrt, divide, epsilon,
 * weight decay and the step 2). Pooling's backward routes each window
 * element's gradient: one per window element, as forward. Dropout (a
 * training step's, train.dropout): 2 per element (draw, keep or zero and
 * scale), its backward 1 (the incoming gradient where the mask kept it).
 */
int vector_ops_per_elem(enum vec_kind k)
{
	switch (k) {
	case VEC_GELU: return 8;
	case VEC_SILU: return 4;
	case VEC_SOFTMAX: return 5;
	case VEC_LAYERNORM: return 7;
	case VEC_GELU_BWD: return 14;
	case VEC_SILU_BWD: return 8;
	case VEC_SOFTMAX_BWD: return 4;
	case VEC_LAYERNORM_BWD: return 10;
	case VEC_LOSS: return 6;
	case VEC_SGD: return 2;
	case VEC_MOMENTUM: return 4;
	case VEC_ADAM: return 12;
	case VEC_DROPOUT: return 2;
	default: return 1;
	}
}

int64_t vector_cycles(const struct vector_params *p, int64_t ops)
{
	return ops / p->lanes + (ops % p->lanes != 0);
}
