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
	c->cycles = 0;
	c->folds = 0;
	c->last_sr = c->last_sc = c->last_t = 0;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* os: a fold after the first streams at least R cycles, the drain of the fold before it. */
static int64_t os_drain_pad(const struct array_chain *c)
{
	return c->p->weight_double_buffer && c->folds >= 2 && c->last_t < c->p->rows ? c->p->rows - c->last_t : 0;
}

void array_chain_fold(struct array_chain *c, int64_t sr, int64_t sc, int64_t t, bool cont)
{
	const struct array_params *p = c->p;
	SIM_ASSERT(sr >= 1 && sr <= p->rows && sc >= 1 && sc <= p->cols && t >= 1);
	SIM_ASSERT(!cont || (c->df == DF_OS && c->folds > 0));

	if (cont) {
		c->cycles += t;
		c->last_t += t;
		return;
	}
	if (!p->weight_double_buffer) {
		/* Serial: each fold loads, streams, fills and drains on its own. */
		if (c->df == DF_OS)
			c->cycles += t + sr + sc - 2 + p->rows;
		else
			c->cycles += sr + t + p->rows + sc - 2;
	} else if (c->df == DF_OS) {
		/* Fold f streams while fold f-1's outputs drain from the shadow registers. */
		c->cycles += os_drain_pad(c) + t;
	} else {
		/* This fold's tile shifts in (sr cycles) while the previous fold streams. */
		c->cycles += c->folds == 0 ? sr : max64(c->last_t, sr);
	}
	c->folds++;
	c->last_sr = sr;
	c->last_sc = sc;
	c->last_t = t;
}

int64_t array_chain_end(const struct array_chain *c)
{
	const struct array_params *p = c->p;
	if (c->folds == 0 || !p->weight_double_buffer)
		return c->cycles;
	if (c->df == DF_OS)
		return c->cycles + os_drain_pad(c) + c->last_sr + c->last_sc - 2 + p->rows;
	return c->cycles + c->last_t + p->rows + c->last_sc - 2;
}
