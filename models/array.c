/*
 * array.c - systolic array fold timing (see array.h).
 */
#include "array.h"

#include <stddef.h>
#include <string.h>

#include "err.h"
#include "xmath.h"

const char *const array_dataflow_names[] = { "ws", "os", "is", NULL };
const char *const array_dtype_names[] = { "int8", "bf16", "fp16", "fp32", NULL };

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
	{ "dtype", CFG_ENUM, F(dtype), "", "int8", 0, 0, array_dtype_names,
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
 * A SCALE-Sim fold's overhead: the cycles before its stream (preloading the
 * stationary tile: weight_shift) and after it (fill and drain skew:
 * fill_drain), for the full array on every fold, one cycle less per layer:
 * from the drain, or the preload when there is no drain (never below zero).
 */
static void serial_overhead(const struct array_timer *tm, bool inst_last, int64_t *pre, int64_t *post)
{
	*pre = tm->df == DF_OS ? 0 : tm->R;
	*post = tm->R + tm->C - 2;
	if (inst_last && *pre + *post > 0) {
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
	serial_overhead(&tm, false, &pre, &post);
	serial_overhead(&tm, true, &pre_l, &post_l);
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
	tm->pb_end = t0;
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

/* SCALE-Sim: each fold preloads, streams, then fills and drains on its own. */
static void serial_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	int64_t pre, post, go;
	serial_overhead(tm, f->inst_last, &pre, &post);
	if (!f->cont && tm->pending_tail) {
		charge(st->cat, CAT_FILL_DRAIN, tm->e_prev, tm->e_prev + tm->pending_tail);
		tm->e_prev += tm->pending_tail;
		tm->pending_tail = 0;
	}
	go = max64(tm->e_prev, max64(max64(f->ready[OPND_A], f->ready[OPND_B]), f->ready[OPND_C]));
	wait_on(st, tm->e_prev, go, 3, abc, f->ready);
	charge(st->cat, CAT_WEIGHT_SHIFT, go, go + pre);
	st->start = go + pre;
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

/*
 * The register rules of sim/functional.h. ws/is: fold f's tile shifts in
 * from L_f (the op's start; then pipelined: the previous fold's start, the
 * swap wave; serial: its stream end, the last input) and the fold streams
 * once the tile is in and the previous stream has ended. os: folds stream
 * back to back, but a block's results need the registers the block before
 * drains through: pipelined (out) its last part ends Sr_prev after the
 * previous block's, serial (acc) its first part starts Sr_prev - 1 after.
 */
static void fold_timed(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	int64_t base;
	if (tm->df == DF_OS) {
		base = tm->e_prev;
		if (!f->cont && !tm->dbuf)
			base = max64(base, tm->pb_end + tm->pb_sr - 1);
		if (f->last && tm->dbuf)
			base = max64(base, tm->pb_end + tm->pb_sr - f->stream);
		st->start = max64(base, max64(max64(f->ready[OPND_A], f->ready[OPND_B]), f->cont ? 0 : f->ready[OPND_C]));
		wait_on(st, base, st->start, f->cont ? 2 : 3, abc, f->ready);
	} else {
		/* The tile shifts in Sr cycles, or longer when the stationary buffer's port cannot deliver Sr x Sc elements in that time. */
		int so = array_top_operand(tm->df), xo = array_left_operand(tm->df);
		int64_t load = tm->folds == 0 ? tm->t0 : tm->dbuf ? tm->s_prev : tm->e_prev;
		int64_t rdy[3] = { max64(load, f->ready[so]) + f->shift, f->ready[xo], f->ready[OPND_C] };
		int who[3] = { so, xo, OPND_C };
		base = max64(tm->e_prev, load + f->sr);
		st->start = max64(base, max64(max64(rdy[0], rdy[1]), rdy[2]));
		wait_on(st, base, st->start, 3, who, rdy);
	}
	/* ws/is: the shift not hidden behind the previous stream; os: waiting for the drain registers. */
	charge(st->cat, tm->df == DF_OS ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT, tm->e_prev, base);
	charge(st->cat, CAT_COMPUTE, st->start, st->start + f->t);
	charge(st->cat, f->stream_cat, st->start + f->t, st->start + f->stream);
	if (!f->cont) {
		tm->s_prev = st->start;
		tm->folds++;
	}
	st->end = tm->e_prev = st->start + f->stream;
	/* The block's last results leave the bottom edge: ws/is partial sums cross R rows; os results drain R rows once its last row's are in. */
	tm->block_end = tm->df == DF_OS ? tm->e_prev + f->sr + f->sc - 2 + tm->R : tm->e_prev + tm->R + f->sc - 2;
	if (f->last) {
		tm->pb_end = tm->e_prev;
		tm->pb_sr = f->sr;
	}
}

void array_timer_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	SIM_ASSERT(f->sr >= 1 && f->sr <= tm->R && f->sc >= 1 && f->sc <= tm->C && f->t >= 1);
	SIM_ASSERT(f->stream >= f->t && f->shift >= f->sr);
	SIM_ASSERT(!f->cont || (tm->df == DF_OS && tm->folds > 0));
	memset(st, 0, sizeof *st);
	if (tm->compat)
		serial_fold(tm, f, st);
	else
		fold_timed(tm, f, st);
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
	if (tm->compat)
		end += tm->pending_tail;
	else if (tm->df == DF_OS)
		end = tm->e_prev + tm->last_sr + tm->last_sc - 2 + tm->R;
	else
		end = tm->e_prev + tm->R + tm->last_sc - 2;
	/* An earlier, wider block may still be draining. */
	end = max64(end, tm->drained);
	charge(cat, CAT_FILL_DRAIN, tm->e_prev, end);
	return end;
}
