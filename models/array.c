/*
 * array.c - systolic array fold timing (see array.h).
 */
#include "array.h"

#include <stddef.h>

#include "err.h"

const char *const array_dataflow_names[] = { "ws", "os", "is", NULL };
static const char *const dtype_names[] = { "int8", "bf16", "fp16", "fp32", NULL };

#define F(x) offsetof(struct array_params, x)
const struct cfg_key array_keys[] = {
	{ "rows", CFG_INT, F(rows), "PE", "128", 1, 4096, NULL,
	  "processing elements down the array (the reduction dimension in ws and is)" },
	{ "cols", CFG_INT, F(cols), "PE", "128", 1, 4096, NULL,
	  "processing elements across the array" },
	{ "dataflow", CFG_ENUM, F(dataflow), "", "ws", 0, 0, array_dataflow_names,
	  "which operand stays in the PEs: ws weights, os outputs, is inputs" },
	{ "scalesim_compat", CFG_BOOL, F(scalesim_compat), "", "false", 0, 0, NULL,
	  "compute cycles exactly as SCALE-Sim v2 counts them (no overlap between folds)" },
	{ "weight_double_buffer", CFG_BOOL, F(weight_double_buffer), "", "true", 0, 0, NULL,
	  "a shadow tile in the PEs loads (or drains) while the current fold computes" },
	{ "dtype", CFG_ENUM, F(dtype), "", "int8", 0, 0, dtype_names,
	  "operand type; int8 accumulates in int32, bf16/fp16/fp32 in fp32" },
	CFG_END
};
#undef F

int array_elem_bytes(int dtype)
{
	switch (dtype) {
	case DT_INT8: return 1;
	case DT_BF16:
	case DT_FP16: return 2;
	default: return 4;
	}
}

int array_acc_bytes(int dtype)
{
	(void)dtype;
	return 4;   /* int32 for int8, fp32 otherwise */
}

int64_t array_scalesim_fold_cycles(const struct array_params *p, int df, int64_t t)
{
	if (df == DF_OS)
		return p->rows + p->cols + t - 2;
	return 2 * p->rows + p->cols + t - 2;
}

void array_chain_init(struct array_chain *c, const struct array_params *p, int df)
{
	c->p = p;
	c->df = df;
	c->s = c->e = c->drained = 0;
	c->folds = 0;
	c->last_sr = c->last_sc = 0;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

void array_chain_fold(struct array_chain *c, int64_t sr, int64_t sc, int64_t t, bool cont)
{
	const struct array_params *p = c->p;
	int64_t R = p->rows;
	SIM_ASSERT(sr >= 1 && sr <= p->rows && sc >= 1 && sc <= p->cols && t >= 1);
	SIM_ASSERT(!cont || (c->df == DF_OS && c->folds > 0));

	if (cont) {
		c->e += t;
		return;
	}
	if (!p->weight_double_buffer) {
		/* Serial: each fold loads, streams, fills and drains on its own. */
		if (c->df == DF_OS) {
			if (c->folds)
				c->e += c->last_sr + c->last_sc - 2 + R;     /* the previous fold's drain */
			c->s = c->e;
		} else {
			c->s = c->e + sr;
		}
		c->e = c->s + t;
		if (c->df != DF_OS)
			c->e += R + sc - 2;
		c->drained = c->e;
	} else if (c->df == DF_OS) {
		/*
		 * Fold f streams while fold f-1's outputs drain from the shadow
		 * registers (R cycles); those outputs are out once the drain is done,
		 * skewed by their position.
		 */
		int64_t s = c->folds == 0 ? 0 : c->folds >= 2 ? max64(c->e, c->s + R) : c->e;
		if (c->folds)
			c->drained = max64(c->drained, s + c->last_sr + c->last_sc - 2 + R);
		c->s = s;
		c->e = s + t;
	} else {
		/* This fold's tile shifts in (sr cycles) once the previous fold has started streaming. */
		c->s = c->folds == 0 ? sr : max64(c->e, c->s + sr);
		c->e = c->s + t;
		c->drained = max64(c->drained, c->e + R + sc - 2);
	}
	c->folds++;
	c->last_sr = sr;
	c->last_sc = sc;
}

int64_t array_chain_end(const struct array_chain *c)
{
	const struct array_params *p = c->p;
	if (c->folds == 0)
		return 0;
	if (!p->weight_double_buffer)
		return c->df == DF_OS ? c->e + c->last_sr + c->last_sc - 2 + p->rows : c->e;
	if (c->df == DF_OS) {
		int64_t out = (c->folds >= 2 ? max64(c->e, c->s + p->rows) : c->e) + c->last_sr + c->last_sc - 2 + p->rows;
		return max64(out, c->drained);
	}
	return c->drained;
}
