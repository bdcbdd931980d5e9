/*
 * schedule.c - tiling, loop order and HBM traffic of one GEMM op (see schedule.h).
 */
#include "schedule.h"

#include <math.h>
#include <string.h>

#include "memory.h"
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
	bool ideal;
	bool on[3];                     /* by operand: held in on-chip activation storage */
	bool shared;                    /* weights and inputs draw on one pool (sram_shares) */
	int64_t pool[SRAM_NBUF];        /* bytes of the pool each buffer draws on (sram_pool_bytes) */
	const struct sram_params *sp;   /* borrowed */
};

/*
 * A candidate plan: what it keeps, its chunk (and os part), footprint and
 * traffic, and its estimated cycles: `time` is the closed form's (the
 * analytic model's: max of compute and HBM bytes / bytes per cycle),
 * `exposed` adds what the closed form leaves out, the memory time a tile
 * pipeline cannot hide (see estimate()).
 */
struct cand {
	bool ok, keep_s, keep_x;
	int order;
	int64_t chunk, kpart, traffic;
	int64_t shortest;               /* ws/is: the shortest chunk's stream, min(chunk, the last); os: the chunk */
	int64_t fp[SRAM_NBUF];
	int64_t kept[2];                /* bytes each kept operand holds (by operand A, B) */
	int64_t time, exposed;          /* exposed: beyond time, in whole 1/64ths of it */
	int64_t folds;                  /* of the plan, over all repeats */
	bool short_stream;              /* streams (os: parts of K) shorter than the array's height */
};

/*
 * Shortest time (the closed form, which alone decides whether a larger
 * buffer can be slower); then streams at least as long as the array's
 * height (shorter ones, which pay R cycles of shifting for fewer rows, win
 * only on time, and between them the longest); then least HBM traffic;
 * then, between plans whose
 * fold counts are within a factor of two, least exposed memory time (in
 * whole steps of 1/64 of the time: smaller gains are within the estimate's
 * error), else fewer folds (each costs SRAM reads, and the engine's time
 * grows with them); then the most operands kept (their loads never wait for
 * a streaming slot), then the longest shortest chunk (ws/is: a last chunk
 * shorter than a block's drain waits for its accumulator tile, which the
 * closed form does not see), then the largest chunk and part. The fold rule is not
 * transitive; the candidates are visited in a fixed order, so the choice is
 * still deterministic.
 */
static bool better(const struct cand *a, const struct cand *b)
{
	if (!b->ok)
		return a->ok;
	if (!a->ok)
		return false;
	if (a->time != b->time)
		return a->time < b->time;
	/* Streams shorter than R only win on time; between them, the longest. */
	if (a->short_stream != b->short_stream)
		return b->short_stream;
	if (a->traffic != b->traffic)
		return a->traffic < b->traffic;
	if (a->short_stream)
		return a->chunk != b->chunk ? a->chunk > b->chunk : a->kpart > b->kpart;
	/* Less exposed time is worth more folds, but not many times more (each costs SRAM reads and simulation). */
	if (a->folds > 2 * b->folds || b->folds > 2 * a->folds)
		return a->folds < b->folds;
	if (a->exposed != b->exposed)
		return a->exposed < b->exposed;
	if (a->keep_s + a->keep_x != b->keep_s + b->keep_x)
		return a->keep_s + a->keep_x > b->keep_s + b->keep_x;
	/* A short last chunk can outrun the drain of the block before it and wait for its accumulator tile. */
	if (a->shortest != b->shortest)
		return a->shortest > b->shortest;
	if (a->chunk != b->chunk)
		return a->chunk > b->chunk;
	return a->kpart > b->kpart;
}

/*
 * ws/is: S panel kdim x cc (kept) or two Sr x Sc tiles (streamed); X whole
 * (kept) or two Sr x chunk tiles; outputs two chunk x cc accumulator tiles.
 * The chunk is the largest that fits and is at most limit.
 */
static struct cand plan_wsis(const struct sched *s, const struct caps *cp, int order, bool ks, bool kx,
			     int64_t limit, int64_t s_bytes, int64_t x_bytes, int64_t c_bytes)
{
	struct cand c = { .keep_s = ks, .keep_x = kx, .order = order };
	int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
	int64_t cap_s = cp->pool[s->s_buf], cap_x = cp->pool[s->x_buf];
	bool s_on = cp->on[s->s_opnd], x_on = cp->on[s->x_opnd];
	if ((s_on && !ks) || (x_on && !kx))
		return c;                           /* an operand on chip is kept there, at no cost */
	/* Kept S: its column panel (kdim x cc) when columns are outer, all of it when chunks are. */
	int64_t panel = s->df == DF_IS ? a_share(s, s->rows * cc * s->eb) : s->rows * cc * s->eb;
	int64_t need_s = ks ? (order == ORDER_CT ? panel : s_bytes) : 2 * rr * cc * s->eb, need_x, avail_x;
	int64_t chunk = min64(s->t, limit), acc_tiles = 2;

	if ((s->compat && !ks) || s_on)
		need_s = 0;                         /* SCALE-Sim's compute ignores buffer sizes */
	if (!cp->ideal) {
		avail_x = cp->shared ? cap_x - need_s : cap_x;
		if (need_s > cap_s || avail_x < 0)
			return c;
		if (!s->compat) {
			/*
			 * Accumulators are double-buffered, unless the op has one output
			 * block in all (one column block, one chunk, one instance): then
			 * one tile may take the whole buffer, and the weights are read once.
			 */
			if (chunk > cp->pool[SRAM_OUTPUTS] / (2 * cc * s->ab)) {
				if (s->nc == 1 && s->op->repeat == 1 && chunk == s->t &&
				    s->t <= cp->pool[SRAM_OUTPUTS] / (cc * s->ab))
					acc_tiles = 1;
				else
					chunk = cp->pool[SRAM_OUTPUTS] / (2 * cc * s->ab);
			}
			if (!kx)
				chunk = min64(chunk, avail_x / (2 * rr * s->eb));
			else if (order == ORDER_TC && !x_on)   /* the chunk of X (chunk x kdim) stays across the columns */
				chunk = min64(chunk, (int64_t)((unsigned __int128)avail_x * (unsigned __int128)s->t /
							       (unsigned __int128)x_bytes));
		}
		if (kx && !x_on && order == ORDER_CT && x_bytes > avail_x)
			return c;
		if (chunk < 1)
			return c;
	}
	need_x = x_on ? 0 : kx ? (order == ORDER_CT ? x_bytes : x_share(s, chunk, x_bytes)) : s->compat ? 0 : 2 * rr * chunk * s->eb;
	int64_t nt = ceil_div(s->t, chunk);
	c.ok = true;
	c.chunk = chunk;
	c.shortest = min64(chunk, s->t - (nt - 1) * chunk);
	c.traffic = s_bytes * (ks || nt == 1 ? 1 : nt) + x_bytes * (kx || s->nc == 1 ? 1 : s->nc) + c_bytes;
	c.fp[s->s_buf] += need_s;
	c.fp[s->x_buf] += need_x;
	c.kept[s->s_opnd] = ks ? need_s : 0;
	c.kept[s->x_opnd] = kx ? need_x : 0;
	c.fp[SRAM_OUTPUTS] = s->compat ? 0 : acc_tiles * chunk * cc * s->ab;
	return c;
}

/*
 * os: A kept in chunks of `chunk` rows x K, or streamed in parts of rr x kpart;
 * B's column panel (K x cc) kept across the row folds of a chunk, or streamed
 * in parts of kpart x cc; outputs two rr x cc blocks draining. The chunk (a
 * multiple of R, or all of M) is the largest that fits and is at most
 * chunk_limit; kpart (the reduction streamed per part) the longest the
 * streaming parts allow, at most kpart_limit.
 */
static struct cand plan_os(const struct sched *s, const struct caps *cp, bool ka, bool kb, int64_t chunk_limit,
			   int64_t kpart_limit, int64_t a_bytes, int64_t b_bytes, int64_t c_bytes)
{
	struct cand c = { .keep_s = ka, .keep_x = kb };
	const struct op *o = s->op;
	int64_t rr = min64(s->R, o->m), cc = min64(s->C, o->n), eb = s->eb;
	int64_t panel_b = o->k * cc * eb, chunk = ka ? min64(o->m, chunk_limit) : rr, kpart = min64(o->k, kpart_limit);
	bool a_on = cp->on[OPND_A], b_on = cp->on[OPND_B];

	if ((a_on && !ka) || (b_on && !kb))
		return c;                           /* an operand on chip is kept there, at no cost */
	if (b_on)
		panel_b = 0;
	if (!cp->ideal && !s->compat) {
		int64_t cap_a = cp->pool[SRAM_INPUTS], cap_b = cp->pool[SRAM_WEIGHTS];
		if (2 * rr * cc * s->ab > cp->pool[SRAM_OUTPUTS])
			return c;
		if (kb) {
			if (panel_b > cap_b)
				return c;
			if (cp->shared)
				cap_a -= panel_b;
			else
				cap_b -= panel_b;
		}
		if (ka && !a_on) {
			/* Rows per chunk, leaving room for B's smallest parts when they share the pool. */
			int64_t room = cap_a - (cp->shared && !kb ? 2 * min64(o->k, s->R) * cc * eb : 0);
			int64_t rows = room <= 0 ? 0 : (int64_t)((unsigned __int128)room * (unsigned __int128)o->m /
								 (unsigned __int128)s->a_unique);
			chunk = min64(chunk, rows >= o->m ? o->m : rows / s->R * s->R);
			if (chunk < rr)
				return c;
			if (cp->shared)
				cap_b = cap_a - a_share(s, chunk * o->k * eb);
		}
		if (cp->shared) {
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
	c.chunk = c.shortest = chunk;
	c.kpart = kpart;
	c.traffic = a_bytes * (ka || s->nc == 1 ? 1 : s->nc) + b_bytes * (kb ? nm : s->nr) + c_bytes;
	c.kept[OPND_A] = ka && !a_on ? a_share(s, chunk * o->k * eb) : 0;
	c.kept[OPND_B] = kb ? panel_b : 0;
	c.fp[SRAM_INPUTS] += a_on ? 0 : ka ? c.kept[OPND_A] : s->compat ? 0 : 2 * rr * kpart * eb;
	c.fp[SRAM_WEIGHTS] += kb ? panel_b : s->compat ? 0 : 2 * kpart * cc * eb;
	c.fp[SRAM_OUTPUTS] = s->compat ? 0 : 2 * rr * cc * s->ab;
	return c;
}

/* Names the buffer that must grow when no plan fits, with what the smallest plan needs, in *why. */
static int too_small(const struct sched *s, const struct caps *cp, struct sched_short *why)
{
	const struct op *o = s->op;
	int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
	int64_t need_o = s->df == DF_OS ? 2 * rr * cc * s->ab : 2 * cc * s->ab;
	int64_t need_w, need_i;
	char opname[OP_NAME_MAX];

	if (s->df == DF_OS) {
		need_i = 2 * rr * s->eb;             /* parts of one element of K */
		need_w = 2 * cc * s->eb;
	} else {
		int64_t stile = 2 * rr * cc * s->eb, xtile = 2 * rr * s->eb;
		need_w = s->s_buf == SRAM_WEIGHTS ? stile : xtile;
		need_i = s->s_buf == SRAM_WEIGHTS ? xtile : stile;
	}
	op_name(o, opname, sizeof opname);
	if (need_o > cp->pool[SRAM_OUTPUTS]) {
		why->key = "sram.outputs.kib";
		snprintf(why->msg, sizeof why->msg, "expected at least %lld bytes for two tiles of %lld accumulators for %s, "
			 "found %lld", (long long)need_o, (long long)need_o / (2 * s->ab), opname,
			 (long long)cp->pool[SRAM_OUTPUTS]);
	} else if (cp->shared) {
		why->key = "sram.inputs.kib";
		snprintf(why->msg, sizeof why->msg, "expected weights.kib + inputs.kib of at least %lld bytes for the smallest "
			 "tiles of %s, found %lld", (long long)(need_w + need_i), opname, (long long)cp->pool[SRAM_INPUTS]);
	} else {
		bool w = need_w > cp->pool[SRAM_WEIGHTS];
		why->key = w ? "sram.weights.kib" : "sram.inputs.kib";
		snprintf(why->msg, sizeof why->msg, "expected at least %lld bytes for two streaming tiles of %s, found %lld",
			 (long long)(w ? need_w : need_i), opname, (long long)cp->pool[w ? SRAM_WEIGHTS : SRAM_INPUTS]);
	}
	return -1;
}

/* The stream of an os fold over all its parts of K, as the array times it (sched_fold_view per part). */
static int64_t os_stream(const struct sched *s)
{
	int64_t k = s->op->k, last = k - (s->nparts - 1) * s->kpart;
	int64_t per = ceil_div(s->kpart, s->pack), all = sat_mul(s->nparts - 1, per);
	return sat_mul(all > INT64_MAX - per ? INT64_MAX : all + ceil_div(last, s->pack), s->passes);
}

struct array_grid sched_grid(const struct sched *s)
{
	struct array_grid g = { s->df, s->compat, s->dbuf, s->Rp, s->C, s->rows, s->cols, s->t, s->nr, s->nc,
				s->chunk, s->nchunks, s->order, s->op->repeat };
	if (s->pack == 1 && s->passes == 1)
		return g;
	if (s->df == DF_OS) {
		g.t = os_stream(s);
	} else {
		g.rows = ceil_div(s->rows, s->pack);    /* ceil(ceil(K / pack) / Rp) = ceil(K / R): the same nr */
		g.t = sat_mul(s->t, s->passes);
		g.chunk = sat_mul(s->chunk, s->passes);
	}
	return g;
}

void sched_fold_view(const struct sched *s, const struct tile_ins *ins, int64_t *sr, int64_t *t)
{
	if (s->df == DF_OS) {
		*sr = ins->sr;
		*t = sat_mul(ceil_div(ins->t, s->pack), s->passes);
	} else {
		*sr = ceil_div(ins->sr, s->pack);
		*t = sat_mul(ins->t, s->passes);
	}
}

/* Sets the plan's fields from candidate c: its loops, tiles, footprint and HBM traffic. */
static void apply(struct sched *s, const struct cand *c, int64_t a_bytes, int64_t b_bytes, int64_t c_bytes)
{
	const struct op *op = s->op;
	s->keep_s = c->keep_s;
	s->keep_x = c->keep_x;
	s->order = c->order;
	s->chunk = c->chunk;
	memcpy(s->footprint, c->fp, sizeof s->footprint);
	memcpy(s->kept_bytes, c->kept, sizeof s->kept_bytes);
	if (s->df == DF_OS) {
		int64_t nm = ceil_div(op->m, s->chunk);
		s->nchunks = nm;
		s->kpart = c->kpart;
		s->nparts = ceil_div(op->k, s->kpart);
		s->folds = s->nr * s->nc * op->repeat;
		s->read_bytes[OPND_A] = a_bytes * (s->keep_s || s->nc == 1 ? 1 : s->nc) * op->repeat;
		s->read_bytes[OPND_B] = b_bytes * (s->keep_x ? nm : s->nr) * op->repeat;
	} else {
		int64_t nt = ceil_div(s->t, s->chunk);
		int64_t sb = s->df == DF_WS ? b_bytes : a_bytes, xb = s->df == DF_WS ? a_bytes : b_bytes;
		int so = s->s_opnd, xo = s->x_opnd;
		s->nchunks = nt;
		s->kpart = s->nparts = 0;
		s->folds = s->nr * s->nc * nt * op->repeat;
		s->read_bytes[so] = sb * (s->keep_s || nt == 1 ? 1 : nt) * op->repeat;
		s->read_bytes[xo] = xb * (s->keep_x || s->nc == 1 ? 1 : s->nc) * op->repeat;
	}
	s->write_bytes = c_bytes * op->repeat;
}

/* HBM as the estimate sees it: bytes per cycle (0: ideal memory) and the latency of one request in cycles. */
struct hbm_view {
	const struct arch *a;           /* borrowed */
	double bpc;
	int64_t latency;
};

/* Tiles a buffer holds in flight beside what the plan keeps there, as the engine counts them. */
static double slots(const struct caps *cp, const struct cand *c, int buf, int64_t tile)
{
	return (double)sram_stream_slots(cp->sp, buf, c->fp, tile);
}

/*
 * Estimated cycles of candidate c. time: the closed form, max(compute
 * cycles of the plan, all its HBM bytes / bytes per cycle). exposed: at
 * least time, and also at least
 *   first loads + compute + a block's store   the array waits for its first
 *                                             tiles; the last results leave
 *                                             after it is done
 *   loads + a fold + a block's store          the folds and stores of the
 *                                             blocks loaded last follow the
 *                                             last load
 *   n x (a tile's time in its slot) / slots   for each kind of tile that
 *                                             cycles through buffer slots:
 *                                             streaming tiles (load,
 *                                             latency, fold) and accumulator
 *                                             blocks (folds, drain, store,
 *                                             latency)
 * with byte counts over bytes per cycle, and a full chunk as the block: the
 * blocks loaded last may be full ones. A tile so large that it is most of an
 * operand, or so many tiles that few fit in their buffer, leave time exposed
 * that the closed form does not see.
 */
static void estimate(const struct sched *base, const struct caps *cp, const struct hbm_view *hm, struct cand *c,
		     int64_t a_bytes, int64_t b_bytes, int64_t c_bytes)
{
	struct sched x = *base;
	int64_t compute, eb = base->eb, R = base->R, Rp = base->Rp, rep = base->op->repeat;
	int64_t rr = min64(R, x.rows), cc = min64(x.C, x.cols), first, last, tail;
	double bpc = hm->bpc, lat = (double)hm->latency, loads, t, m, p, q, fold, tile[2], n[2], w[2], blk;
	int tbuf[2];

	apply(&x, c, a_bytes, b_bytes, c_bytes);
	struct array_grid g = sched_grid(&x);
	compute = array_grid_cycles(&g);
	c->time = compute;
	c->exposed = 0;
	c->folds = x.folds;
	if (bpc <= 0)
		return;
	if (x.df == DF_OS) {
		/* A's parts (rr x kpart) and B's (kpart x cc); accumulators hold one rr x cc block each. */
		fold = (double)(ceil_div(x.kpart, x.pack) * x.passes);
		tile[0] = (double)(rr * x.kpart * eb), tbuf[0] = SRAM_INPUTS;
		tile[1] = (double)(x.kpart * cc * eb), tbuf[1] = SRAM_WEIGHTS;
		n[0] = n[1] = (double)(x.nr * x.nc * x.nparts * rep);
		first = (cp->on[OPND_A] ? 0 : rr * x.kpart * eb) + (cp->on[OPND_B] ? 0 : x.kpart * cc * eb);
		last = cp->on[OPND_C] ? 0 : rr * cc * eb;
		tail = (int64_t)fold + rr + cc - 2 + Rp;
		blk = (double)max64(os_stream(&x), Rp) + (double)(rr + cc - 2 + Rp);
		w[0] = (double)(x.nr * x.nc * rep);
		w[1] = (double)(rr * cc * x.ab);
	} else {
		/* S tiles (rr x cc) and X tiles (rr x chunk); accumulators hold one chunk x cc block each. */
		fold = (double)x.chunk * x.passes;
		tile[0] = (double)(rr * cc * eb), tbuf[0] = x.s_buf;
		tile[1] = (double)(rr * x.chunk * eb), tbuf[1] = x.x_buf;
		n[0] = n[1] = (double)(x.nr * x.nc * x.nchunks * rep);
		first = (cp->on[x.s_opnd] ? 0 : rr * cc * eb) + (cp->on[x.x_opnd] ? 0 : rr * x.chunk * eb);
		last = cp->on[OPND_C] ? 0 : x.chunk * cc * eb;
		tail = (int64_t)fold + Rp + cc - 2;
		blk = (double)x.nr * (fold > (double)Rp ? fold : (double)Rp) + (double)(Rp + cc - 2);
		w[0] = (double)(x.nc * x.nchunks * rep);
		w[1] = (double)(x.chunk * cc * x.ab);
	}
	loads = (double)(x.read_bytes[OPND_A] + x.read_bytes[OPND_B]);
	t = (double)compute;
	m = (double)arch_memory_cycles(hm->a, x.read_bytes[OPND_A] + x.read_bytes[OPND_B] + x.write_bytes);
	if (m > t)
		t = m;
	c->time = t > (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)t;
	p = (double)first / bpc + (double)compute + (double)last / bpc;
	q = loads / bpc + (double)tail + (double)last / bpc;
	if (q > p)
		p = q;
	/* Streaming tiles: a tile holds its slot from its load until its fold has streamed. */
	for (int j = 0; j < 2; j++) {
		bool kept = j == 0 ? c->keep_s : c->keep_x;
		if (kept || x.compat)
			continue;
		q = n[j] * (tile[j] / bpc + lat + fold) / slots(cp, c, tbuf[j], (int64_t)tile[j]);
		if (q > p)
			p = q;
	}
	/* Accumulator blocks: a block holds its tile from its first fold until its store has completed. */
	q = w[0] * (blk + (double)last / bpc + lat) / slots(cp, c, SRAM_OUTPUTS, (int64_t)w[1]);
	if (q > p && !x.compat)
		p = q;
	/* In whole steps of 1/64 of the time beyond it (see better). */
	t = floor((p - (double)c->time) * 64 / ((double)c->time + 1) + 1e-9);
	c->exposed = t < 0 ? 0 : t > (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)t;
}

/*
 * The series of chunks tried for splitting total: the balanced splits
 * ceil(total / n) (n near-equal parts), the multiples unit x 2^j (whole
 * array heights; the last part is the remainder) and the fractions
 * unit / 2^j down to 1. It depends on total and unit only, never on the
 * buffers, so a larger buffer tries every member a smaller one
 * tried. The balanced splits stop at SCHED_MAX_PARTS parts: past them a
 * chunk is a sliver no plan keeps, and a huge total (2^40 rows) would
 * otherwise try some 2 sqrt(total) of them. series_at_most: its largest
 * member <= limit (limit >= 1); series_next: the next smaller member, 0
 * after 1.
 */
static int64_t pow2_at_most(int64_t unit, int64_t limit)
{
	int64_t u = unit;
	if (u > limit)
		return 0;
	while (u <= limit / 2)
		u *= 2;
	return u;
}

static int64_t series_at_most(int64_t total, int64_t unit, int64_t limit)
{
	int64_t best, f;
	if (limit >= total)
		return total;
	/* The fewest near-equal parts of at most limit, or a multiple of unit. */
	int64_t parts = ceil_div(total, limit);
	best = pow2_at_most(unit, limit);
	if (parts <= SCHED_MAX_PARTS)
		best = max64(best, ceil_div(total, parts));
	for (f = unit; f > limit; f /= 2)
		;
	return max64(best, f);
}

static int64_t series_next(int64_t total, int64_t unit, int64_t chunk)
{
	return chunk <= 1 ? 0 : series_at_most(total, unit, chunk - 1);
}

int sched_plan(struct sched *s, const struct op *op, const struct arch *a, int df, bool ideal,
	       struct sched_short *why)
{
	struct caps cp = { ideal, { false, false, false }, sram_shares(&a->sram, SRAM_WEIGHTS, SRAM_INPUTS),
			   { sram_pool_bytes(&a->sram, SRAM_WEIGHTS), sram_pool_bytes(&a->sram, SRAM_INPUTS),
			     sram_pool_bytes(&a->sram, SRAM_OUTPUTS) }, &a->sram };
	struct cand best = { 0 };
	int64_t a_bytes, b_bytes, c_bytes;
	double bpc = mem_model_bytes_per_cycle(&a->hbm, a->clock_ghz, ideal);
	struct hbm_view hm = { a, isinf(bpc) ? 0 : bpc, mem_model_latency_cycles(&a->hbm, a->clock_ghz, ideal) };
	/* Only with bounded buffers and real timing do tile sizes matter: else the largest tiles. */
	bool sizes = !ideal && !a->array.scalesim_compat;

	SIM_ASSERT(op->kind == OP_GEMM);
	memset(s, 0, sizeof *s);
	s->op = op;
	s->df = df;
	s->Rp = a->array.rows;
	s->pack = array_pack(&a->array);
	s->passes = array_passes(&a->array);
	s->R = df == DF_OS ? s->Rp : s->Rp * s->pack;
	s->C = a->array.cols;
	s->eb = array_elem_bytes(a->array.dtype);
	s->ab = array_acc_bytes(a->array.dtype);
	s->compat = a->array.scalesim_compat;
	s->dbuf = a->array.weight_double_buffer;
	s->a_unique = (op->a_elems ? op->a_elems : op->m * op->k) * s->eb;
	s->c_unique = (op->c_elems ? op->c_elems : op->m * op->n) * s->eb;
	/* Operands in on-chip activation storage move no HBM bytes. */
	for (int i = 0; i < 3; i++)
		s->onchip[i] = cp.on[i] = op->kind == OP_GEMM && (op->onchip & (1 << i));
	a_bytes = s->onchip[OPND_A] ? 0 : s->a_unique;
	b_bytes = s->onchip[OPND_B] ? 0 : op->k * op->n * s->eb;
	c_bytes = s->onchip[OPND_C] ? 0 : s->c_unique;
	s->onchip_write_bytes = s->onchip[OPND_C] ? s->c_unique * op->repeat : 0;

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

	/*
	 * Every choice of what to keep and loop order, each with every chunk
	 * (os: every chunk and part) of a fixed series that fits. The series
	 * does not depend on the buffers, so a larger buffer tries every plan a
	 * smaller one tried, and the shortest time can only improve.
	 */
	for (int order = 0; order < (df == DF_OS ? 1 : 2); order++) {
		for (int ks = 0; ks < 2; ks++) {
			for (int kx = 0; kx < 2; kx++) {
				struct cand c;
				if (df == DF_OS) {
					int64_t nrb = ceil_div(op->m, s->R);
					c = plan_os(s, &cp, ks, kx, op->m, op->k, a_bytes, b_bytes, c_bytes);
					if (!c.ok)
						continue;
					int64_t blocks = ks && sizes ? series_at_most(nrb, 1, ceil_div(c.chunk, s->R)) : 0;
					do {
						struct cand ck = ks && sizes ? plan_os(s, &cp, ks, kx, blocks * s->R, op->k, a_bytes,
										       b_bytes, c_bytes) : c;
						if (!ck.ok)
							continue;
						int64_t ku = s->Rp * s->pack;   /* the K one stream of Rp cycles covers */
						int64_t kpart = sizes ? series_at_most(op->k, ku, ck.kpart) : ck.kpart;
						for (; kpart; kpart = sizes ? series_next(op->k, ku, kpart) : 0) {
							struct cand kc = plan_os(s, &cp, ks, kx, ck.chunk, kpart, a_bytes, b_bytes,
										 c_bytes);
							if (!kc.ok)
								break;
							estimate(s, &cp, &hm, &kc, a_bytes, b_bytes, c_bytes);
							/* a part streams fewer cycles than the array's height */
							kc.short_stream = sizes && sat_mul(ceil_div(kpart, s->pack), s->passes) <
									   min64(sat_mul(ceil_div(op->k, s->pack), s->passes), s->Rp);
							if (better(&kc, &best))
								best = kc;
						}
					} while ((blocks = series_next(nrb, 1, blocks)));
					continue;
				}
				int64_t sb = df == DF_WS ? b_bytes : a_bytes, xb = df == DF_WS ? a_bytes : b_bytes;
				c = plan_wsis(s, &cp, order, ks, kx, s->t, sb, xb, c_bytes);
				if (!c.ok)
					continue;
				int64_t chunk = sizes ? series_at_most(s->t, s->Rp, c.chunk) : c.chunk;
				for (; chunk; chunk = sizes ? series_next(s->t, s->Rp, chunk) : 0) {
					struct cand cc = plan_wsis(s, &cp, order, ks, kx, chunk, sb, xb, c_bytes);
					if (!cc.ok)
						break;
					estimate(s, &cp, &hm, &cc, a_bytes, b_bytes, c_bytes);
					cc.short_stream = sizes && sat_mul(chunk, s->passes) < min64(sat_mul(s->t, s->passes), s->Rp);
					if (better(&cc, &best))
						best = cc;
				}
			}
		}
	}
	if (!best.ok)
		return too_small(s, &cp, why);
	apply(s, &best, a_bytes, b_bytes, c_bytes);
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
	int64_t r0, c0, h, w, cols, size, full;
	switch (ins->operand) {
	case OPND_A:
		r0 = ins->m0, c0 = ins->k0, h = ins->m, w = ins->k, cols = o->k, size = s->a_unique;
		full = o->m * o->k * s->eb;
		break;
	case OPND_B:
		r0 = ins->k0, c0 = ins->n0, h = ins->k, w = ins->n, cols = o->n, size = o->k * o->n * s->eb;
		full = size;
		break;
	default:
		r0 = ins->m0, c0 = ins->n0, h = ins->m, w = ins->n, cols = o->n, size = s->c_unique;
		full = o->m * o->n * s->eb;
		break;
	}
	int64_t from = (r0 * cols + h * c0) * s->eb, to = from + h * w * s->eb;
	if (size != full) {
		/*
		 * A convolution's A is the im2col matrix, but memory holds its
		 * input tensor (a_unique bytes for all m x k), and its dX's C
		 * sums into the input (c_unique): a tile's bytes are its
		 * proportional share, rounded down at both ends, so that the
		 * tiles partition the tensor.
		 */
		from = (int64_t)((unsigned __int128)from * (unsigned __int128)size / (unsigned __int128)full);
		to = (int64_t)((unsigned __int128)to * (unsigned __int128)size / (unsigned __int128)full);
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

int64_t sched_fold_ins(const struct sched *s)
{
	int64_t n;
	if (s->df != DF_OS)
		return s->folds;
	return __builtin_mul_overflow(s->folds, s->nparts, &n) ? INT64_MAX : n;
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
