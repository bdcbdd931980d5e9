/*
 * array.c - systolic array fold timing (see array.h).
 */
#include "array.h"

#include <stddef.h>
#include <string.h>

#include "err.h"
#include "xmath.h"

const char *const array_dataflow_names[] = { "ws", "os", "is", NULL };
const char *const array_dtype_names[] = { "int8", "bf16", "fp16", "fp32", "fp8", NULL };
const char *const array_dtype_auto_names[] = { "auto", "int8", "bf16", "fp16", "fp32", "fp8", NULL };
/* none: the array does not run the dtype; 1/n: n passes; n: n elements of K packed into each PE (array.h). */
const char *const array_rate_names[] = { "none", "1/8", "1/6", "1/4", "1/3", "1/2", "1", "2", "4", "8", NULL };
static const int rate_pack[] = { 0, 1, 1, 1, 1, 1, 1, 2, 4, 8 };
static const int rate_passes[] = { 1, 8, 6, 4, 3, 2, 1, 1, 1, 1 };

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
	  "operand type; int8 accumulates in int32, bf16/fp16/fp32/fp8 (E4M3) in fp32" },
	{ "rate_int8", CFG_ENUM, F(rate[DT_INT8]), "MAC/PE/cycle", "1", 0, 0, array_rate_names,
	  "MACs per PE per cycle at int8: n packs n elements of K into a PE, 1/n takes n passes, none: not run" },
	{ "rate_bf16", CFG_ENUM, F(rate[DT_BF16]), "MAC/PE/cycle", "1", 0, 0, array_rate_names,
	  "MACs per PE per cycle at bf16 (as rate_int8)" },
	{ "rate_fp16", CFG_ENUM, F(rate[DT_FP16]), "MAC/PE/cycle", "1", 0, 0, array_rate_names,
	  "MACs per PE per cycle at fp16 (as rate_int8)" },
	{ "rate_fp32", CFG_ENUM, F(rate[DT_FP32]), "MAC/PE/cycle", "1", 0, 0, array_rate_names,
	  "MACs per PE per cycle at fp32 (as rate_int8; a bf16 MXU's full fp32 takes 6 passes: 1/6)" },
	{ "rate_fp8", CFG_ENUM, F(rate[DT_FP8]), "MAC/PE/cycle", "1", 0, 0, array_rate_names,
	  "MACs per PE per cycle at fp8 (as rate_int8)" },
	CFG_END
};
#undef F

int array_elem_bytes(int dtype)
{
	switch (dtype) {
	case DT_INT8:
	case DT_FP8: return 1;
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

int array_pack(const struct array_params *p)
{
	return rate_pack[p->rate[p->dtype]];
}

int array_passes(const struct array_params *p)
{
	return rate_passes[p->rate[p->dtype]];
}

double array_rate(const struct array_params *p)
{
	return (double)array_pack(p) / array_passes(p);
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
	tm->e_prev = t0;
	tm->port_free = t0;
	tm->bank_free[0] = tm->bank_free[1] = INT64_MIN;
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
 * The register rules of sim/exec/functional.h. ws/is: fold f's tile shifts in
 * from L_f: the op's start, then once the tile before is in (the top ports
 * are free) and the bank it shifts into has been read for the last time
 * (e - 1 of the fold that last used it: f-2 pipelined, f-1 serial; the
 * chain's write lands after that read), and the fold streams once its tile
 * is in and the previous stream has ended. os: folds stream
 * back to back, but a block's results need the registers the block before
 * drains through: pipelined (out) its last part ends Sr_prev after the
 * previous block's, serial (acc) its first part starts Sr_prev - 1 after.
 */
static void fold_timed(struct array_timer *tm, const struct array_fold *f, struct array_step *st)
{
	int64_t base, tile_in = 0;
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
		int bank = tm->dbuf ? (int)(tm->folds & 1) : 0;
		int64_t load = max64(tm->port_free, tm->bank_free[bank]);
		int64_t rdy[3] = { max64(load, f->ready[so]) + f->shift, f->ready[xo], f->ready[OPND_C] };
		int who[3] = { so, xo, OPND_C };
		tile_in = rdy[0];
		base = max64(tm->e_prev, load + f->sr);
		st->start = max64(base, max64(max64(rdy[0], rdy[1]), rdy[2]));
		wait_on(st, base, st->start, 3, who, rdy);
	}
	/* ws/is: the shift not hidden behind the previous stream; os: waiting for the drain registers. */
	charge(st->cat, tm->df == DF_OS ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT, tm->e_prev, base);
	charge(st->cat, CAT_COMPUTE, st->start, st->start + f->t);
	charge(st->cat, f->stream_cat, st->start + f->t, st->start + f->stream);
	st->end = tm->e_prev = st->start + f->stream;
	if (tm->df != DF_OS) {
		tm->port_free = tile_in;
		tm->bank_free[tm->dbuf ? (int)(tm->folds & 1) : 0] = st->end - 1;
	}
	if (!f->cont)
		tm->folds++;
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

/* Cycle sums in 128 bits: a tiny array on a huge GEMM passes 64 bits before the checks see it. */
typedef __int128 wide;

static wide wmax(wide a, wide b)
{
	return a > b ? a : b;
}

static wide wmin(wide a, wide b)
{
	return a < b ? a : b;
}

/*
 * Pipelined ws/is, the bank rule: fold f+1's tile shifts in from
 * max(L_f + Sr_f, e_{f-1} - 1) = s_f - d_f, d_f = 1 when fold f waited for
 * the stream before it (e_{f-1} > L_f + Sr_f), else 0 (d_0 = 0). So two
 * starts are max(T_f, Sr_{f+1} - d_f) apart, and d_{f+1} = [T_f + d_f >
 * Sr_{f+1}]: one bit carried along the folds. A dmap is what a run of gaps
 * does to it, for either bit before: the bit after, and the cycles saved
 * against max(T_f, Sr_{f+1}).
 */
struct dmap {
	int next[2];
	wide saved[2];
};

static struct dmap dmap_id(void)
{
	return (struct dmap){ { 0, 1 }, { 0, 0 } };
}

/* One gap: from a fold streaming T into one of sr rows. */
static struct dmap dmap_gap(wide T, wide sr)
{
	struct dmap g;
	for (int d = 0; d < 2; d++) {
		g.next[d] = T + d > sr;
		g.saved[d] = d && sr > T;
	}
	return g;
}

/* a, then b. */
static struct dmap dmap_then(struct dmap a, struct dmap b)
{
	struct dmap c;
	for (int d = 0; d < 2; d++) {
		c.next[d] = b.next[a.next[d]];
		c.saved[d] = a.saved[d] + b.saved[a.next[d]];
	}
	return c;
}

/* a, n times (n <= 0: none), by squaring: O(log n). */
static struct dmap dmap_pow(struct dmap a, wide n)
{
	struct dmap r = dmap_id();
	for (; n > 0; n >>= 1) {
		if (n & 1)
			r = dmap_then(r, a);
		a = dmap_then(a, a);
	}
	return r;
}

/* The gaps inside a (column, chunk) block streaming T: into its row blocks 1..nr-1 (R rows, the last rk). */
static struct dmap dmap_block(const struct array_grid *s, wide T)
{
	wide rk = s->rows - (s->nr - 1) * s->R;
	if (s->nr == 1)
		return dmap_id();
	return dmap_then(dmap_pow(dmap_gap(T, s->R), s->nr - 2), dmap_gap(T, rk));
}

/* A block and the gap after it, into the next block's first fold. */
static struct dmap dmap_unit(const struct array_grid *s, wide T)
{
	wide sr0 = s->nr == 1 ? s->rows : s->R;
	return dmap_then(dmap_block(s, T), dmap_gap(T, sr0));
}

/*
 * The cycles the bank rule saves over the whole grid (*all) and over the
 * gaps before the one into the last column block's first fold (*before; nc
 * >= 2), in the fold order of sim/plan/schedule.h: rep outside, then
 * columns outside chunks (CT) or chunks outside columns (TC), row blocks
 * inside; chunks stream tt, the last tl.
 */
static void bank_saved(const struct array_grid *s, wide rep, wide *all, wide *before)
{
	wide nt = s->nchunks, tt = s->chunk, tl = s->t - (nt - 1) * tt, nc = s->nc;
	struct dmap full = dmap_pow(dmap_unit(s, tt), s->order == ORDER_CT ? nt - 1 : nc * (nt - 1));
	struct dmap last = dmap_block(s, tl), a, b;
	if (s->order == ORDER_CT) {
		struct dmap col = dmap_then(full, dmap_unit(s, tl));
		a = dmap_then(dmap_then(dmap_pow(col, rep * nc - 1), full), last);
		b = dmap_then(dmap_then(dmap_pow(col, rep * nc - 2), full), last);
	} else {
		struct dmap inst = dmap_then(full, dmap_pow(dmap_unit(s, tl), nc)), head = dmap_then(dmap_pow(inst, rep - 1), full);
		a = dmap_then(dmap_then(head, dmap_pow(dmap_unit(s, tl), nc - 1)), last);
		b = dmap_then(dmap_then(head, dmap_pow(dmap_unit(s, tl), nc - 2)), last);
	}
	*all = a.saved[0];
	*before = nc >= 2 ? b.saved[0] : 0;
}

/*
 * The closed form of a fold grid (see array.h).
 *
 * Pipelined ws/is: the fold chain of the timer over the fold order of
 * sim/plan/schedule.h: each gap max(T_f, Sr_{f+1}), less what the bank rule
 * saves. *e_last receives when the last fold's stream ends: the streams plus
 * the shifts they do not hide (weight_shift).
 */
static wide wsis_pipelined(const struct array_grid *s, wide rep, wide *e_last)
{
	wide R = s->R, nr = s->nr, rk = s->rows - (nr - 1) * R, sr0 = nr == 1 ? rk : R;
	wide nt = s->nchunks, tt = s->chunk, tl = s->t - (nt - 1) * tt;
	wide sc_last = s->cols - (s->nc - 1) * s->C;
	wide nfull = rep * s->nc * (nt - 1), nlast = rep * s->nc;
	/* Within one (column, chunk) block: fold r overlaps the shift of fold r+1. */
#define INNER(T) (nr >= 2 ? (nr - 2) * wmax((T), R) + wmax((T), rk) : 0)
	wide sum = nfull * (INNER(tt) + wmax(tt, sr0)) + nlast * INNER(tl) + (nlast - 1) * wmax(tl, sr0), saved, before;
	bank_saved(s, rep, &saved, &before);
	*e_last = sr0 + sum - saved + tl;
	/*
	 * The op ends when its last partial sums leave the array. The last column
	 * block may be narrower than the one before it, whose last sums cross C
	 * columns: that block's streams ended P cycles before the last one's,
	 * P being the span of the last column's blocks (all its chunks when
	 * columns are the outer loop, only the last chunk when chunks are).
	 */
	wide width = sc_last;
	if (s->nc >= 2) {
		wide p = wmax(tl, sr0) + INNER(tl);
		if (s->order == ORDER_CT)
			p += (nt - 1) * wmax(tt, sr0) + (nt - 1) * INNER(tt);
		width = wmax(width, s->C - (p - (saved - before)));
	}
#undef INNER
	return *e_last + R + width - 2;
}

/*
 * Serial ws/is: each fold shifts its tile in (Sr) from the last cycle of the
 * previous stream (the one its last input reads the registers the chain
 * writes) and streams (T): Sr - 1 + T a fold after the first, which takes
 * Sr + T; partial sums drain behind. The op ends R + Sc - 2 after the last
 * stream, or later when the block before the last column block, C wide, is
 * still draining: it ended P cycles before, P being the last column block's
 * Sr - 1 + T over its folds.
 */
static wide serial_folds(const struct array_grid *s, wide rep)
{
	return rep * s->nc * s->nchunks * s->nr;
}

static wide wsis_serial(const struct array_grid *s, wide rep)
{
	wide R = s->R, nt = s->nchunks, tl = s->t - (nt - 1) * s->chunk;
	wide width = s->cols - (s->nc - 1) * s->C;
	if (s->nc >= 2) {
		wide p = s->order == ORDER_CT ? nt * s->rows + s->nr * s->t - nt * s->nr : s->rows + s->nr * tl - s->nr;
		width = wmax(width, s->C - p);
	}
	return rep * (s->nc * nt * s->rows + s->nc * s->nr * s->t) - (serial_folds(s, rep) - 1) + R + width - 2;
}

/*
 * os (functional.h): fold g's stream ends at e_g = K + the spacing of the
 * folds before it, max(K, Sr) pipelined (its results wait for the out
 * registers the block before drains through), K + Sr - 1 serial (its first
 * MAC waits for the accumulators). Only the last row block of the last chunk
 * may have fewer than R rows (rk), once per column block. A block's last
 * results leave Sr + Sc - 2 + R after its stream ends; the op ends with the
 * latest, which is the latest fold of one of the four shapes (R or rk rows,
 * C or the last columns): in the last two row blocks of the last two column
 * blocks of the last two chunks of the last instance.
 */
static wide os_space(const struct array_grid *s, wide sr)
{
	return s->dbuf ? wmax(s->t, sr) : s->t + sr - 1;
}

static wide os_cycles(const struct array_grid *s, wide rep)
{
	wide R = s->R, C = s->C, K = s->t, f = s->nr * s->nc, rk = s->rows - (s->nr - 1) * R;
	wide per_chunk = s->chunk / R, nch = s->nchunks, end = 0;
	wide sp_full = os_space(s, R), sp_part = os_space(s, rk);
	for (wide i0 = nch >= 2 ? nch - 2 : 0; i0 < nch; i0++) {
		wide rows0 = i0 * s->chunk, nrc = (wmin(s->chunk, s->rows - rows0) + R - 1) / R;
		for (wide i1 = s->nc >= 2 ? s->nc - 2 : 0; i1 < s->nc; i1++) {
			for (wide i2 = nrc >= 2 ? nrc - 2 : 0; i2 < nrc; i2++) {
				wide g = (rep - 1) * f + i0 * per_chunk * s->nc + i1 * nrc + i2;
				/* Folds of rk rows before g: one per column block in each earlier instance, and in this chunk if it is the last. */
				wide q = (rep - 1) * s->nc + (i0 == nch - 1 ? i1 : 0);
				wide e_g = K + (g - q) * sp_full + q * sp_part;
				wide sr = wmin(R, s->rows - rows0 - i2 * R), sc = wmin(C, s->cols - i1 * C);
				end = wmax(end, e_g + sr + sc - 2 + R);
			}
		}
	}
	return end;
}

static int64_t clamp64(wide c)
{
	return c > INT64_MAX ? INT64_MAX : (int64_t)c;
}

int64_t array_grid_cycles(const struct array_grid *s)
{
	wide rep = s->rep, c, e_last;
	if (s->compat) {
		/* SCALE-Sim counts each repeated instance as a layer. */
		struct array_params p = { .rows = s->R, .cols = s->C };
		c = rep * array_scalesim_layer_cycles(&p, s->df, s->nr * s->nc, s->t);
	} else if (s->df == DF_OS) {
		c = os_cycles(s, rep);
	} else {
		c = s->dbuf ? wsis_pipelined(s, rep, &e_last) : wsis_serial(s, rep);
	}
	return clamp64(c);
}

int64_t array_grid_stream_cycles(const struct array_grid *s)
{
	/* ws/is: every (column, row) pair of blocks streams all of T once; os: every fold streams K. */
	return s->rep * s->nr * s->nc * s->t;
}

int64_t array_grid_shift_cycles(const struct array_grid *s)
{
	wide rep = s->rep, e_last;
	if (s->df == DF_OS)
		return 0;
	/* SCALE-Sim: an R-cycle preload per fold, of which a 1x1 array gives up its layer's one cycle. */
	if (s->compat)
		return clamp64(rep * ((wide)s->nr * s->nc * s->R - (s->R + s->C == 2)));
	/* Serial: every shift, Sr summed over the row blocks of each (column, chunk) block, less the cycle each after the first overlaps the stream before. */
	if (!s->dbuf)
		return clamp64(rep * s->nc * s->nchunks * s->rows - (serial_folds(s, rep) - 1));
	/* Pipelined: where the last stream ends, less the streams. */
	wsis_pipelined(s, rep, &e_last);
	return clamp64(e_last - rep * s->nr * s->nc * s->t);
}
