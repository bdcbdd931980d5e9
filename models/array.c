/*
 * array.c - systolic array fold timing (see array.h).
 */
#include "array.h"

#include <stddef.h>
#include <string.h>

#include "err.h"
#include "xmath.h"

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

int64_t array_pes(const struct array_params *p)
{
	return p->rows * p->cols;
}

int array_left_operand(int df)
{
	return df == DF_IS ? OPND_B : OPND_A;
}

int array_top_operand(int df)
{
	return df == DF_IS ? OPND_A : OPND_B;
}

int array_wait_cat(int operand)
{
	static const int cats[3] = { CAT_INPUTS, CAT_WEIGHTS, CAT_OUTPUTS };
	return cats[operand];
}

/*
 * A serial fold's overhead: the cycles before its stream (loading or
 * preloading the stationary tile: weight_shift) and after it (fill and drain
 * skew, os drain: fill_drain). SCALE-Sim charges the full array on every
 * fold, and counts one cycle less per layer: from the drain, or the preload
 * when there is no drain (never below zero).
 */
static void serial_overhead(const struct array_timer *tm, int64_t sr, int64_t sc, bool inst_last, int64_t *pre,
			    int64_t *post)
{
	int64_t R = tm->R, C = tm->C;
	*pre = tm->df == DF_OS ? 0 : tm->compat ? R : sr;
	*post = tm->compat ? R + C - 2 : tm->df == DF_OS ? sr + sc - 2 + R : R + sc - 2;
	if (tm->compat && inst_last && *pre + *post > 0) {
		if (*post > 0)
			(*post)--;
		else
			(*pre)--;
	}
}

int64_t array_scalesim_layer_cycles(const struct array_params *p, int df, int64_t folds, int64_t t)
{
	struct array_timer tm;
	int64_t pre, post, pre_l, post_l;
	array_timer_init(&tm, p, df, 0);
	tm.compat = true;
	serial_overhead(&tm, p->rows, p->cols, false, &pre, &post);
	serial_overhead(&tm, p->rows, p->cols, true, &pre_l, &post_l);
	__int128 c = (__int128)(folds - 1) * (pre + t + post) + pre_l + t + post_l;
	return c > INT64_MAX ? INT64_MAX : (int64_t)c;
}

void array_timer_init(struct array_timer *tm, const struct array_params *p, int df, int64_t t0)
{
	memset(tm, 0, sizeof *tm);
	tm->R = p->rows;
	tm->C = p->cols;
	tm->df = df;
	tm->compat = p->scalesim_compat;
	tm->dbuf = p->weight_double_buffer;
	tm->t0 = t0;
	tm->s_prev = tm->e_prev = t0;
}

/* Adds [from, to) to category c. */
static void charge(int64_t cat[CAT_N], int c, int64_t from, int64_t to)
{
	if (to > from)
		cat[c] += to - from;
}

static void wait_on(struct array_step *st, int64_t from, int64_t to, int n, const int *opnd, const int64_t *ready)
{
	st->wait_from = from;
	st->wait_to = to;
	st->nwait = n;
	for (int i = 0; i < n; i++) {
		st->wait_opnd[i] = opnd[i];
		st->wait_ready[i] = ready[i];
	}
}

static const int abc[3] = { OPND_A, OPND_B, OPND_C };

/* Serial: each fold loads (or preloads), streams, then fills and drains on its own. */
static void serial_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	int64_t pre, post, go, port;
	serial_overhead(tm, f->sr, f->sc, f->inst_last, &pre, &post);
	if (!f->cont && tm->pending_tail) {
		charge(st->cat, CAT_FILL_DRAIN, tm->e_prev, tm->e_prev + tm->pending_tail);
		tm->e_prev += tm->pending_tail;
		tm->pending_tail = 0;
	}
	go = max64(tm->e_prev, max64(max64(f->ready[OPND_A], f->ready[OPND_B]), f->ready[OPND_C]));
	wait_on(st, tm->e_prev, go, 3, abc, f->ready);
	/* A preload that the stationary buffer's port stretches waits on that operand. */
	port = tm->df == DF_OS || tm->compat ? pre : f->shift;
	charge(st->cat, CAT_WEIGHT_SHIFT, go, go + pre);
	charge(st->cat, array_wait_cat(array_top_operand(tm->df)), go + pre, go + port);
	st->start = go + port;
	charge(st->cat, CAT_COMPUTE, st->start, st->start + f->t);
	charge(st->cat, f->stream_cat, st->start + f->t, st->start + f->stream);
	st->end = tm->e_prev = st->start + f->stream;
	if (tm->df == DF_OS) {
		tm->pending_tail = post;          /* owed once the fold's last part has streamed */
		tm->block_end = tm->e_prev + post;
	} else {
		charge(st->cat, CAT_FILL_DRAIN, tm->e_prev, tm->e_prev + post);
		tm->e_prev += post;
		tm->block_end = tm->e_prev;
	}
	if (!f->cont)
		tm->folds++;
}

/* Pipelined: the next tile shifts into (os: the last outputs drain from) the shadow registers while a fold streams. */
static void pipelined_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	int64_t R = tm->R, base;
	if (tm->df == DF_OS) {
		/* A fold after the second waits for the drain of the fold two back, R cycles after the last start. */
		base = f->cont ? tm->e_prev : tm->folds >= 2 ? max64(tm->e_prev, tm->s_prev + R) : tm->e_prev;
		if (tm->folds == 0 && !f->cont)
			base = tm->t0;
		st->start = max64(base, max64(max64(f->ready[OPND_A], f->ready[OPND_B]), f->cont ? 0 : f->ready[OPND_C]));
		wait_on(st, base, st->start, f->cont ? 2 : 3, abc, f->ready);
	} else {
		/*
		 * The next tile shifts into the shadow once the previous fold has
		 * started streaming: Sr cycles, or longer when the stationary
		 * buffer's port cannot deliver Sr x Sc elements in that time.
		 */
		int so = array_top_operand(tm->df), xo = array_left_operand(tm->df);
		int64_t shadow = tm->folds ? tm->s_prev : tm->t0;
		int64_t rdy[3] = { max64(shadow, f->ready[so]) + f->shift, f->ready[xo], f->ready[OPND_C] };
		int who[3] = { so, xo, OPND_C };
		base = max64(tm->e_prev, shadow + f->sr);
		st->start = max64(base, max64(max64(rdy[0], rdy[1]), rdy[2]));
		wait_on(st, base, st->start, 3, who, rdy);
	}
	/* ws/is: the shift not hidden behind the previous stream; os: the drain of the fold two back. */
	charge(st->cat, tm->df == DF_OS ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT, tm->e_prev, base);
	charge(st->cat, CAT_COMPUTE, st->start, st->start + f->t);
	charge(st->cat, f->stream_cat, st->start + f->t, st->start + f->stream);
	if (!f->cont) {
		tm->s_prev = st->start;
		tm->folds++;
	}
	st->end = tm->e_prev = st->start + f->stream;
	/* os: a fold's outputs drain from the shadow registers once the next fold is under way. */
	tm->block_end = tm->df == DF_OS ?
		(tm->folds >= 2 ? max64(tm->e_prev, tm->s_prev + R) : tm->e_prev) + f->sr + f->sc - 2 + R :
		tm->e_prev + R + f->sc - 2;
}

void array_timer_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	SIM_ASSERT(f->sr >= 1 && f->sr <= tm->R && f->sc >= 1 && f->sc <= tm->C && f->t >= 1);
	SIM_ASSERT(f->stream >= f->t && f->shift >= f->sr);
	SIM_ASSERT(!f->cont || (tm->df == DF_OS && tm->folds > 0));
	memset(st, 0, sizeof *st);
	if (tm->compat || !tm->dbuf)
		serial_fold(tm, f, st);
	else
		pipelined_fold(tm, f, st);
	tm->last_sr = f->sr;
	tm->last_sc = f->sc;
	if (f->last) {
		st->out = tm->block_end;
		tm->drained = max64(tm->drained, tm->block_end);
	}
}

int64_t array_timer_end(struct array_timer *tm, int64_t cat[CAT_N])
{
	int64_t end = tm->e_prev;
	if (tm->folds == 0)
		return end;
	if (tm->compat || !tm->dbuf)
		end += tm->pending_tail;
	else if (tm->df == DF_OS)
		end = (tm->folds >= 2 ? max64(tm->e_prev, tm->s_prev + tm->R) : tm->e_prev) + tm->last_sr + tm->last_sc - 2 +
		      tm->R;
	else
		end = tm->e_prev + tm->R + tm->last_sc - 2;
	/* An earlier, wider block may still be draining. */
	end = max64(end, tm->drained);
	charge(cat, CAT_FILL_DRAIN, tm->e_prev, end);
	return end;
}
