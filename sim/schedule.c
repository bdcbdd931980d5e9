/*
 * schedule.c - tiling, loop order and HBM traffic of one GEMM op (see schedule.h).
 */
#include "schedule.h"

#include <string.h>

#include "xmath.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a / b + (a % b != 0);
}

/*
 * The bytes in memory of `im2col` bytes of A. A convolution's A (M x K, the
 * im2col matrix) holds each input element up to kh x kw times; memory holds
 * it once (a_unique bytes) and the expansion happens on chip. Rounded up.
 */
static int64_t a_share(const struct sched *s, int64_t im2col)
{
	const struct op *o = s->op;
	unsigned __int128 full = (unsigned __int128)o->m * (unsigned __int128)o->k * (unsigned __int128)s->eb;
	unsigned __int128 x = (unsigned __int128)im2col * (unsigned __int128)s->a_unique;
	return (int64_t)((x + full - 1) / full);
}

/* Bytes in memory of `chunk` of the t rows of X, rounded up. */
static int64_t x_share(const struct sched *s, int64_t chunk, int64_t x_bytes)
{
	return (int64_t)(((unsigned __int128)x_bytes * (unsigned __int128)chunk + (unsigned __int128)s->t - 1) /
			 (unsigned __int128)s->t);
}

/* Capacity view of the buffers for one plan. */
struct caps {
	bool unified, ideal;
	int64_t w, i, o;                /* bytes */
};

/* A candidate plan: what it keeps, its chunk, footprint and traffic. */
struct cand {
	bool ok, keep_s, keep_x;
	int order;
	int64_t chunk, kpart, traffic;
	int64_t fp[SRAM_NBUF];
};

static bool better(const struct cand *a, const struct cand *b)
{
	if (!b->ok)
		return a->ok;
	if (!a->ok)
		return false;
	if (a->traffic != b->traffic)
		return a->traffic < b->traffic;
	return a->chunk > b->chunk;
}

/*
 * ws/is: S panel kdim x cc (kept) or two Sr x Sc tiles (streamed); X whole
 * (kept) or two Sr x chunk tiles; outputs two chunk x cc accumulator tiles.
 */
static struct cand plan_wsis(const struct sched *s, const struct caps *cp, int order, bool ks, bool kx,
			     int64_t s_bytes, int64_t x_bytes, int64_t c_bytes)
{
	struct cand c = { .keep_s = ks, .keep_x = kx, .order = order };
	int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
	int64_t cap_s = s->s_buf == SRAM_WEIGHTS ? cp->w : cp->i, cap_x = s->x_buf == SRAM_WEIGHTS ? cp->w : cp->i;
	/* Kept S: its column panel (kdim x cc) when columns are outer, all of it when chunks are. */
	int64_t panel = s->df == DF_IS ? a_share(s, s->rows * cc * s->eb) : s->rows * cc * s->eb;
	int64_t need_s = ks ? (order == ORDER_CT ? panel : s_bytes) : 2 * rr * cc * s->eb, need_x, avail_x, chunk = s->t;

	if (s->compat && !ks)
		need_s = 0;                         /* SCALE-Sim's compute ignores buffer sizes */
	if (!cp->ideal) {
		if (cp->unified) {
			cap_s = cap_x = cp->w + cp->i;
			avail_x = cap_x - need_s;
		} else {
			avail_x = cap_x;
		}
		if (need_s > cap_s || avail_x < 0)
			return c;
		if (!s->compat) {
			chunk = min64(chunk, cp->o / (2 * cc * s->ab));
			if (!kx)
				chunk = min64(chunk, avail_x / (2 * rr * s->eb));
			else if (order == ORDER_TC)   /* the chunk of X (chunk x kdim) stays across the columns */
				chunk = min64(chunk, (int64_t)((unsigned __int128)avail_x * (unsigned __int128)s->t /
							       (unsigned __int128)x_bytes));
		}
		if (kx && order == ORDER_CT && x_bytes > avail_x)
			return c;
		if (chunk < 1)
			return c;
	}
	need_x = kx ? (order == ORDER_CT ? x_bytes : x_share(s, chunk, x_bytes)) : s->compat ? 0 : 2 * rr * chunk * s->eb;
	int64_t nt = ceil_div(s->t, chunk);
	c.ok = true;
	c.chunk = chunk;
	c.traffic = s_bytes * (ks || nt == 1 ? 1 : nt) + x_bytes * (kx || s->nc == 1 ? 1 : s->nc) + c_bytes;
	c.fp[s->s_buf] += need_s;
	c.fp[s->x_buf] += need_x;
	c.fp[SRAM_OUTPUTS] = s->compat ? 0 : 2 * chunk * cc * s->ab;
	return c;
}

/*
 * os: A kept in chunks of `chunk` rows x K, or streamed in parts of rr x kpart;
 * B's column panel (K x cc) kept across the row folds of a chunk, or streamed
 * in parts of kpart x cc; outputs two rr x cc blocks draining. kpart (the
 * reduction streamed per part) is as long as the streaming parts allow.
 */
static struct cand plan_os(const struct sched *s, const struct caps *cp, bool ka, bool kb,
			   int64_t a_bytes, int64_t b_bytes, int64_t c_bytes)
{
	struct cand c = { .keep_s = ka, .keep_x = kb };
	const struct op *o = s->op;
	int64_t rr = min64(s->R, o->m), cc = min64(s->C, o->n), eb = s->eb;
	int64_t panel_b = o->k * cc * eb, chunk = ka ? o->m : rr, kpart = o->k;

	if (!cp->ideal && !s->compat) {
		int64_t cap_a = cp->unified ? cp->w + cp->i : cp->i, cap_b = cp->unified ? cp->w + cp->i : cp->w;
		if (2 * rr * cc * s->ab > cp->o)
			return c;
		if (kb) {
			if (panel_b > cap_b)
				return c;
			if (cp->unified)
				cap_a -= panel_b;
			else
				cap_b -= panel_b;
		}
		if (ka) {
			/* Rows per chunk, leaving room for B's smallest parts when they share the pool. */
			int64_t room = cap_a - (cp->unified && !kb ? 2 * min64(o->k, s->R) * cc * eb : 0);
			int64_t rows = room <= 0 ? 0 : (int64_t)((unsigned __int128)room * (unsigned __int128)o->m /
								 (unsigned __int128)s->a_unique);
			chunk = rows >= o->m ? o->m : rows / s->R * s->R;
			if (chunk < rr)
				return c;
			if (cp->unified)
				cap_b = cap_a - a_share(s, chunk * o->k * eb);
		}
		if (cp->unified) {
			int64_t per_k = (ka ? 0 : 2 * rr * eb) + (kb ? 0 : 2 * cc * eb);
			if (per_k)
				kpart = min64(kpart, (ka ? cap_b : cap_a) / per_k);
		} else {
			if (!ka)
				kpart = min64(kpart, cap_a / (2 * rr * eb));
			if (!kb)
				kpart = min64(kpart, cap_b / (2 * cc * eb));
		}
		if (kpart < 1)
			return c;
	}
	int64_t nm = ceil_div(o->m, chunk);
	c.ok = true;
	c.chunk = chunk;
	c.kpart = kpart;
	c.traffic = a_bytes * (ka || s->nc == 1 ? 1 : s->nc) + b_bytes * (kb ? nm : s->nr) + c_bytes;
	c.fp[SRAM_INPUTS] += ka ? a_share(s, chunk * o->k * eb) : s->compat ? 0 : 2 * rr * kpart * eb;
	c.fp[SRAM_WEIGHTS] += kb ? panel_b : s->compat ? 0 : 2 * kpart * cc * eb;
	c.fp[SRAM_OUTPUTS] = s->compat ? 0 : 2 * rr * cc * s->ab;
	return c;
}

/* Names the buffer that must grow when no plan fits, with what the smallest plan needs. */
static int too_small(const struct sched *s, const struct config *cfg, const struct caps *cp, struct err *e)
{
	const struct op *o = s->op;
	int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
	int64_t need_o = s->df == DF_OS ? 2 * rr * cc * s->ab : 2 * cc * s->ab;
	int64_t need_w, need_i;
	const char *key;
	char path[64];

	if (s->df == DF_OS) {
		need_i = 2 * rr * s->eb;             /* parts of one element of K */
		need_w = 2 * cc * s->eb;
	} else {
		int64_t stile = 2 * rr * cc * s->eb, xtile = 2 * rr * s->eb;
		need_w = s->s_buf == SRAM_WEIGHTS ? stile : xtile;
		need_i = s->s_buf == SRAM_WEIGHTS ? xtile : stile;
	}
	if (need_o > cp->o) {
		key = "sram.outputs.kib";
		snprintf(path, sizeof path, "%s", key);
		return err_at(e, config_origin(cfg, key), path,
			      "expected at least %lld bytes for two tiles of %lld accumulators for %s, found %lld",
			      (long long)need_o, (long long)need_o / (2 * s->ab), o->name, (long long)cp->o);
	}
	if (cp->unified) {
		key = "sram.inputs.kib";
		return err_at(e, config_origin(cfg, key), key,
			      "expected weights.kib + inputs.kib of at least %lld bytes for the smallest tiles of %s, "
			      "found %lld", (long long)(need_w + need_i), o->name, (long long)(cp->w + cp->i));
	}
	key = need_w > cp->w ? "sram.weights.kib" : "sram.inputs.kib";
	return err_at(e, config_origin(cfg, key), key,
		      "expected at least %lld bytes for two streaming tiles of %s, found %lld",
		      (long long)(need_w > cp->w ? need_w : need_i), o->name,
		      (long long)(need_w > cp->w ? cp->w : cp->i));
}

int sched_plan(struct sched *s, const struct op *op, const struct config *cfg, int df, bool ideal,
	       struct err *e)
{
	const struct arch *a = &cfg->arch;
	struct caps cp = { a->sram.unified, ideal, sram_bytes(&a->sram, SRAM_WEIGHTS),
			   sram_bytes(&a->sram, SRAM_INPUTS), sram_bytes(&a->sram, SRAM_OUTPUTS) };
	struct cand best = { 0 };
	int64_t a_bytes, b_bytes, c_bytes;

	SIM_ASSERT(op->kind == OP_GEMM);
	memset(s, 0, sizeof *s);
	s->op = op;
	s->df = df;
	s->R = a->array.rows;
	s->C = a->array.cols;
	s->eb = array_elem_bytes(a->array.dtype);
	s->ab = array_acc_bytes(a->array.dtype);
	s->compat = a->array.scalesim_compat;
	s->dbuf = a->array.weight_double_buffer;
	s->a_unique = (op->a_elems ? op->a_elems : op->m * op->k) * s->eb;
	a_bytes = s->a_unique;
	b_bytes = op->k * op->n * s->eb;
	c_bytes = op->m * op->n * s->eb;

	switch (df) {
	case DF_WS:
		s->rows = op->k, s->cols = op->n, s->t = op->m;
		s->s_opnd = OPND_B, s->x_opnd = OPND_A;
		break;
	case DF_IS:
		s->rows = op->k, s->cols = op->m, s->t = op->n;
		s->s_opnd = OPND_A, s->x_opnd = OPND_B;
		break;
	default:
		s->rows = op->m, s->cols = op->n, s->t = op->k;
		s->s_opnd = OPND_A, s->x_opnd = OPND_B;
		break;
	}
	s->s_buf = sram_operand_buf(df, s->s_opnd);
	s->x_buf = sram_operand_buf(df, s->x_opnd);
	s->nr = ceil_div(s->rows, s->R);
	s->nc = ceil_div(s->cols, s->C);

	for (int order = 0; order < (df == DF_OS ? 1 : 2); order++) {
		for (int ks = 0; ks < 2; ks++) {
			for (int kx = 0; kx < 2; kx++) {
				struct cand c;
				if (df == DF_OS)
					c = plan_os(s, &cp, ks, kx, a_bytes, b_bytes, c_bytes);
				else if (df == DF_WS)
					c = plan_wsis(s, &cp, order, ks, kx, b_bytes, a_bytes, c_bytes);
				else
					c = plan_wsis(s, &cp, order, ks, kx, a_bytes, b_bytes, c_bytes);
				if (better(&c, &best))
					best = c;
			}
		}
	}
	if (!best.ok)
		return too_small(s, cfg, &cp, e);

	s->keep_s = best.keep_s;
	s->keep_x = best.keep_x;
	s->order = best.order;
	s->chunk = best.chunk;
	memcpy(s->footprint, best.fp, sizeof s->footprint);
	if (df == DF_OS) {
		int64_t nm = ceil_div(op->m, s->chunk);
		s->nchunks = nm;
		s->kpart = best.kpart;
		s->nparts = ceil_div(op->k, s->kpart);
		s->folds = s->nr * s->nc * op->repeat;
		s->read_bytes[OPND_A] = a_bytes * (s->keep_s || s->nc == 1 ? 1 : s->nc) * op->repeat;
		s->read_bytes[OPND_B] = b_bytes * (s->keep_x ? nm : s->nr) * op->repeat;
	} else {
		int64_t nt = ceil_div(s->t, s->chunk);
		int64_t sb = df == DF_WS ? b_bytes : a_bytes, xb = df == DF_WS ? a_bytes : b_bytes;
		int so = s->s_opnd, xo = s->x_opnd;
		s->nchunks = nt;
		s->folds = s->nr * s->nc * nt * op->repeat;
		s->read_bytes[so] = sb * (s->keep_s || nt == 1 ? 1 : nt) * op->repeat;
		s->read_bytes[xo] = xb * (s->keep_x || s->nc == 1 ? 1 : s->nc) * op->repeat;
	}
	s->write_bytes = c_bytes * op->repeat;
	return 0;
}

/* ---- the tile program ---- */

void sched_iter_init(struct sched_iter *it, const struct sched *s)
{
	memset(it, 0, sizeof *it);
	it->s = s;
}

uint64_t sched_base(int operand)
{
	static const uint64_t base[3] = { 0, UINT64_C(1) << 40, UINT64_C(2) << 40 };
	return base[operand];
}

/*
 * Places a tile in the layout (see schedule.h): the block (r0, c0) of h x w
 * elements of a matrix with `cols` columns, cut into blocks of h rows,
 * starts at element r0 x cols + h x c0.
 */
static void place(const struct sched *s, struct tile_ins *ins)
{
	const struct op *o = s->op;
	int64_t r0, c0, h, w, cols, size;
	switch (ins->operand) {
	case OPND_A:
		r0 = ins->m0, c0 = ins->k0, h = ins->m, w = ins->k, cols = o->k, size = s->a_unique;
		break;
	case OPND_B:
		r0 = ins->k0, c0 = ins->n0, h = ins->k, w = ins->n, cols = o->n, size = o->k * o->n * s->eb;
		break;
	default:
		r0 = ins->m0, c0 = ins->n0, h = ins->m, w = ins->n, cols = o->n, size = o->m * o->n * s->eb;
		break;
	}
	int64_t from = (r0 * cols + h * c0) * s->eb, to = from + h * w * s->eb;
	if (ins->operand == OPND_A) {
		/*
		 * A convolution's A is the im2col matrix, but memory holds its
		 * input tensor (a_unique bytes for all m x k): a tile's bytes are
		 * its proportional share, rounded down at both ends, so that the
		 * tiles partition the tensor.
		 */
		unsigned __int128 full = (unsigned __int128)o->m * (unsigned __int128)o->k * (unsigned __int128)s->eb;
		from = (int64_t)((unsigned __int128)from * (unsigned __int128)s->a_unique / full);
		to = (int64_t)((unsigned __int128)to * (unsigned __int128)s->a_unique / full);
	}
	ins->addr = sched_base(ins->operand) + (uint64_t)(ins->rep * size + from);
	ins->bytes = to - from;
}

/* Appends an instruction on block b (a fold's block) of the given kind and operand. */
static struct tile_ins *emit(struct sched_iter *it, const struct tile_ins *b, enum tile_kind k, int operand)
{
	struct tile_ins *ins = &it->q[it->qn++];
	*ins = *b;
	ins->kind = k;
	ins->operand = operand;
	if (k != TI_FOLD)
		place(it->s, ins);
	return ins;
}

/* Fills the queue with the instructions of step (rep, i0, i1, i2), then advances. */
static void step(struct sched_iter *it)
{
	const struct sched *s = it->s;
	const struct op *o = s->op;
	struct tile_ins b = { .rep = it->rep };
	it->qn = it->qi = 0;

	if (s->df == DF_OS) {
		/* i0: chunk of M rows, i1: column block, i2: row block within the chunk, i3: part of K. */
		int64_t row0 = it->i0 * s->chunk + it->i2 * s->R;
		int64_t chunk_rows = min64(s->chunk, o->m - it->i0 * s->chunk);
		b.m0 = row0, b.m = min64(s->R, o->m - row0);
		b.n0 = it->i1 * s->C, b.n = min64(s->C, o->n - b.n0);
		b.k0 = it->i3 * s->kpart, b.k = min64(s->kpart, o->k - b.k0);
		b.sr = b.m, b.sc = b.n, b.t = b.k;
		b.cont = it->i3 > 0;
		b.first = it->i3 == 0;
		b.last = it->i3 == s->nparts - 1;
		b.inst_last = b.last && it->i0 == s->nchunks - 1 && it->i1 == s->nc - 1 && (it->i2 + 1) * s->R >= chunk_rows;
		if (it->i1 == 0 || !s->keep_s)
			emit(it, &b, TI_LOAD, OPND_A);
		if (it->i2 == 0 || !s->keep_x)
			emit(it, &b, TI_LOAD, OPND_B);
		emit(it, &b, TI_FOLD, OPND_C);
		if (++it->i3 < s->nparts)
			return;
		it->i3 = 0;
		emit(it, &b, TI_STORE, OPND_C);
		if (++it->i2 * s->R >= chunk_rows) {
			it->i2 = 0;
			if (++it->i1 == s->nc) {
				it->i1 = 0;
				if (++it->i0 == s->nchunks) {
					it->i0 = 0;
					if (++it->rep == o->repeat)
						it->done = true;
				}
			}
		}
		return;
	}
	/* ws/is. i0, i1: column block of S and chunk of T (in the plan's order), i2: row block of kdim. */
	int64_t n0 = s->order == ORDER_CT ? s->nc : s->nchunks, n1 = s->order == ORDER_CT ? s->nchunks : s->nc;
	int64_t ci = s->order == ORDER_CT ? it->i0 : it->i1, ti = s->order == ORDER_CT ? it->i1 : it->i0;
	int64_t c0 = ci * s->C, t0 = ti * s->chunk;
	b.k0 = it->i2 * s->R, b.k = b.sr = min64(s->R, s->rows - b.k0);
	b.sc = min64(s->C, s->cols - c0);
	b.t = min64(s->chunk, s->t - t0);
	if (s->df == DF_WS)
		b.m0 = t0, b.m = b.t, b.n0 = c0, b.n = b.sc;
	else
		b.m0 = c0, b.m = b.sc, b.n0 = t0, b.n = b.t;
	b.first = it->i2 == 0;
	b.last = it->i2 == s->nr - 1;
	b.inst_last = b.last && it->i0 == n0 - 1 && it->i1 == n1 - 1;
	if (ti == 0 || !s->keep_s)
		emit(it, &b, TI_LOAD, s->s_opnd);
	if (ci == 0 || !s->keep_x)
		emit(it, &b, TI_LOAD, s->x_opnd);
	emit(it, &b, TI_FOLD, OPND_C);
	if (++it->i2 == s->nr) {
		emit(it, &b, TI_STORE, OPND_C);
		it->i2 = 0;
		if (++it->i1 == n1) {
			it->i1 = 0;
			if (++it->i0 == n0) {
				it->i0 = 0;
				if (++it->rep == o->repeat)
					it->done = true;
			}
		}
	}
}

bool sched_next(struct sched_iter *it, struct tile_ins *out)
{
	if (it->qi == it->qn) {
		if (it->done)
			return false;
		step(it);
	}
	*out = it->q[it->qi++];
	return true;
}
