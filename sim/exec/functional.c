/*
 * functional.c - the array register by register, with real values (see functional.h).
 *
 * Every register of the R x C grid is an array of R x C four-byte values
 * (int8 operands: uint32, their int32 sums in two's complement; otherwise
 * float) beside an array of int32 tags: the fold its value belongs to,
 * modulo 2^30, or FREE (nothing), or TRANSIT (ws/is: a weight still shifting
 * down its chain). Structure of arrays, allocated once.
 *
 * The controller walks the tile program (sched_next) and times each fold by
 * the rules of functional.h; folds in flight sit in a ring, in program
 * order. Each cycle every fold in flight touches only its band, the PEs its
 * stream occupies (ws/is: i + j in (c - e, c - s], all R rows for the
 * partial sums, Sc columns; os: its Sr x Sc corner), so a cycle costs the
 * PEs that hold something. Order within cycle c, so that every check reads
 * the registers as they are during c and every write lands for c + 1:
 *
 *   1. edge ports take this cycle's inputs (written in c - 1: they are the
 *      state during c); a port that takes two values in one cycle is a
 *      write over a value that has not moved on;
 *   2. the observer's snapshot;
 *   3. ws/is: weight chains take their column's top port (one value a
 *      cycle; a MAC in c still reads the weight a chain writes in c, and
 *      one after it meets TRANSIT, which step 4 objects to); os: drains
 *      move finished results down one row (older blocks first; a result
 *      may only move into a FREE
 *      register, or one whose value moves on in this cycle);
 *   4. MACs and passes, older folds first, bottom row first (in place);
 *      every MAC checks the tags of its operands, and an os MAC that starts
 *      a block, or writes a finished result to out, needs a FREE register;
 *   5. ws/is: weight chains write (TRANSIT; the whole column once the tile
 *      is in, from L + j + Sr).
 *
 * A value that has moved on leaves its register FREE (the trailing edge of
 * each band is cleared), so that the observer sees what each register holds.
 * The accumulators outside the array (ws/is) take each partial sum as it
 * leaves the bottom row, the first fold of a block overwriting; an element
 * is compared with the reference when its last contribution arrives (ws/is:
 * the block's last fold; os: when it leaves), so one M x N buffer serves
 * every repeat instance (an element's contributions arrive in fold order).
 */
#include "functional.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stop.h"
#include "xmath.h"

#define TAG_MASK 0x3fffffff
#define FREE (-1)
#define TRANSIT (-2)

/* A fold in flight. */
struct ff {
	struct tile_ins in;
	int64_t idx;            /* its TI_FOLD instruction's index in the op */
	int32_t tag;            /* ws/is: idx; os: the index of its block's first part; mod 2^30 */
	int bank;               /* ws/is: the weight bank it uses */
	int64_t L, s, e;        /* ws/is: its tile shifts in from L; it streams [s, e) */
	int64_t xb;             /* os, a block's last part: X_0 = e + Sr - 1, column j drains from xb + j */
	int64_t start, end;     /* the first and last cycle it touches a register */
};

struct fm {
	int df, dtype;
	bool flt, dbuf, os;
	int64_t R, C, M, K, N;
	void *A, *B;                    /* operands as register values: M x K, K x N */
	double *ref, *bnd;              /* the reference GEMM and each element's error bound */
	void *acc;                      /* M x N: ws/is the accumulators outside the array, os the results */
	/* registers, R x C each: x (os: a), p (os: b), the weight banks, acc and out (os) */
	void *xv, *pv, *wv[2], *av, *ov;
	int32_t *xt, *pt, *wt[2], *at, *ot;
	int64_t *fed_left, *fed_top;    /* the cycle each edge port last took a value */
	/* folds in flight */
	struct ff *ring;
	int64_t cap, head, n;
	/* the controller */
	struct sched_iter it;
	struct ff next;
	bool have_next;
	int64_t nf;                     /* folds pulled */
	int64_t prev_e;                 /* the previous fold's stream end */
	int64_t port_free;              /* ws/is: the top ports take the next chain from here (L + Sr of the last) */
	int64_t bank_free[2];           /* ws/is: a chain may write the bank from here (its last reader's e - 1) */
	int64_t pb_e, pb_sr;            /* os: the previous block's stream end and rows */
	int32_t blk_tag;
	int64_t early, early_fold;
	int early_what;
	int64_t last_out;               /* the last cycle a value left the array */
	int64_t live_end;               /* the last cycle a fold pulled so far moves a value */
	struct func_result *r;
	struct err *e;
	/* the observer */
	const struct func_opts *opt;
	struct func_pe *view;
	int *wsel;
	struct func_out *left;
	int nleft, left_cap;
	struct tile_ins view_ins;
	int64_t view_fold;
};

/* ---- numbers ---- */

static float round_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7f800000) != 0x7f800000) {
		u += 0x7fff + ((u >> 16) & 1);
		u &= 0xffff0000;
	}
	memcpy(&f, &u, 4);
	return f;
}

/*
 * x rounded to a binary format of `mant` fraction bits whose smallest normal
 * exponent is emin (round to nearest even, subnormals below), as a double;
 * infinity past its largest value.
 */
static double round_minifloat(double x, int mant, int emin, double largest)
{
	int ex;
	if (x == 0 || !isfinite(x))
		return x;
	frexp(x, &ex);                          /* |x| in [2^(ex-1), 2^ex) */
	double q = ldexp(1.0, (ex - 1 > emin ? ex - 1 : emin) - mant);
	double r = nearbyint(x / q) * q;
	return fabs(r) > largest ? copysign(INFINITY, x) : r;
}

/* IEEE half. */
static double round_fp16(double x)
{
	return round_minifloat(x, 10, -14, 65504);
}

/* OCP FP8 E4M3 (4 exponent bits, bias 7, 3 fraction bits, largest 448, no infinity). */
static double round_fp8(double x)
{
	return round_minifloat(x, 3, -6, 448);
}


bool func_representable(int dtype, double v)
{
	if (!isfinite(v))
		return false;
	switch (dtype) {
	case DT_INT8: return v == floor(v) && v >= -128 && v <= 127;
	case DT_BF16: return (double)(float)v == v && round_bf16((float)v) == (float)v;
	case DT_FP16: return round_fp16(v) == v;
	case DT_FP8: return round_fp8(v) == v;
	default: return (double)(float)v == v;
	}
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A random operand of the dtype: int8 uniform in -128..127, floats uniform in [-1, 1) rounded to the dtype. */
static double random_value(int dtype, uint64_t *st)
{
	uint64_t z = splitmix(st);
	if (dtype == DT_INT8)
		return (double)(int)(z % 256) - 128;
	double u = (double)(z >> 11) * 0x1p-53 * 2 - 1;
	switch (dtype) {
	case DT_BF16: return round_bf16((float)u);
	case DT_FP16: return round_fp16((double)(float)u);
	case DT_FP8: return round_fp8(u);
	default: return (float)u;
	}
}

void func_random(int dtype, uint64_t seed, double *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = random_value(dtype, &seed);
}

static double gamma_n(double n, double u)
{
	double nu = n * u;
	return nu >= 1 ? INFINITY : nu / (1 - nu);
}

double func_bound(int dtype, int64_t K, double sum_abs_products)
{
	if (dtype == DT_INT8)
		return 0;
	/*
	 * fp32 sums of K exact products (fp32: K rounded products too), the
	 * double reference's own rounding, and underflow: n times fp32's
	 * smallest subnormal
	 */
	double n = (double)K + (dtype == DT_FP32);
	return (gamma_n(n, 0x1p-24) + gamma_n((double)K, 0x1p-53)) * sum_abs_products + n * 0x1p-149;
}

/* Register values: uint32 (int32 sums) or float. */
static void put(const struct fm *m, void *arr, int64_t i, double v)
{
	if (m->flt)
		((float *)arr)[i] = (float)v;
	else
		((uint32_t *)arr)[i] = (uint32_t)(int32_t)v;
}

static double get(const struct fm *m, const void *arr, int64_t i)
{
	return m->flt ? (double)((const float *)arr)[i] : (double)(int32_t)((const uint32_t *)arr)[i];
}

static void copy1(void *dst, int64_t di, const void *src, int64_t si)
{
	((uint32_t *)dst)[di] = ((const uint32_t *)src)[si];
}

/* ---- errors ---- */

__attribute__((format(printf, 5, 6)))
static int violation(struct fm *m, int64_t c, int64_t i, int64_t j, const char *fmt, ...)
{
	char what[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return err_sim(m->e, "functional model: cycle %lld, PE (%lld, %lld): %s", (long long)c, (long long)i,
		       (long long)j, what);
}

/* The fold a tag names (tags are indices mod 2^30): the latest such index up to the last fold pulled. */
static int64_t full_fold(const struct fm *m, int32_t tag)
{
	if (tag < 0)
		return -1;
	int64_t ref = m->nf - 1;
	return ref - (((ref & TAG_MASK) - tag) & TAG_MASK);
}

static const char *tag_text(const struct fm *m, int32_t tag, char *buf, size_t size)
{
	if (tag == FREE)
		snprintf(buf, size, "nothing");
	else if (tag == TRANSIT)
		snprintf(buf, size, "a weight still shifting in");
	else
		snprintf(buf, size, "fold %lld's", (long long)full_fold(m, tag));
	return buf;
}

/* ---- the controller: each fold's times by the rules of functional.h ---- */

/* Pulls the next fold of the program into f; false at the end. */
static bool pull(struct fm *m, struct ff *f)
{
	struct tile_ins in;
	for (;;) {
		if (!sched_next(&m->it, &in))
			return false;
		if (in.kind == TI_FOLD)
			break;
	}
	memset(f, 0, sizeof *f);
	f->in = in;
	f->idx = m->nf++;
	int64_t early = f->idx >= m->early_fold ? m->early : 0, w = m->early_what;
	int64_t el = w == FUNC_EARLY_ALL || w == FUNC_EARLY_LOAD ? early : 0;
	int64_t es = w == FUNC_EARLY_ALL || w == FUNC_EARLY_STREAM ? early : 0;
	int64_t ed = w == FUNC_EARLY_ALL || w == FUNC_EARLY_DRAIN ? early : 0;
	int64_t R = m->R, sr = in.sr, sc = in.sc;
	if (!m->os) {
		f->tag = (int32_t)(f->idx & TAG_MASK);
		f->bank = m->dbuf ? (int)(f->idx & 1) : 0;
		f->L = f->idx == 0 ? 0 : max64(m->port_free, m->bank_free[f->bank]) - el;
		f->s = max64(f->idx == 0 ? 0 : m->prev_e, f->L + sr) - es;
		f->e = f->s + in.t;
		f->start = min64(f->L, f->s);
		/* the last partial sum leaves at e + R + Sc - 3; its register is cleared a cycle later */
		f->end = max64(f->L + sc + sr - 2, f->e + R + sc - 2);
	} else {
		int64_t base = f->idx == 0 ? 0 : m->prev_e - es;
		if (in.cont) {
			f->tag = m->blk_tag;
		} else {
			f->tag = m->blk_tag = (int32_t)(f->idx & TAG_MASK);
			if (f->idx > 0 && !m->dbuf)     /* its first MAC follows the previous block's drain through acc */
				base = max64(base, m->pb_e + m->pb_sr - 1 - ed);
		}
		/* pipelined: the block's last part ends Sr_prev or more after the previous block's (out is free) */
		if (in.last && m->dbuf && m->pb_sr > 0)
			base = max64(base, m->pb_e + m->pb_sr - in.t - ed);
		f->s = f->idx == 0 ? 0 : base;
		f->e = f->s + in.t;
		f->start = f->s;
		f->end = f->e + sr + sc - 3;
		if (in.last) {
			f->xb = f->e + sr - 1;
			f->end = max64(f->end, f->xb + sc - 1 + R - 1);
			m->pb_e = f->e;
			m->pb_sr = sr;
		}
	}
	/* ws/is: the last partial sum leaves at e + R + Sc - 3; os: f->end */
	m->live_end = max64(m->live_end, m->os ? f->end : max64(f->L + sc + sr - 2, f->e + R + sc - 3));
	/* categories: streams are compute, the gaps between them shifts (ws/is) or drains (os) */
	m->r->cat[CAT_COMPUTE] += in.t;
	if (f->s > (f->idx ? m->prev_e : 0))
		m->r->cat[m->os ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT] += f->s - (f->idx ? m->prev_e : 0);
	if (!m->os) {
		m->port_free = f->L + sr;
		m->bank_free[f->bank] = f->e - 1;
	}
	m->prev_e = f->e;
	return true;
}

static struct ff *ring_at(const struct fm *m, int64_t k)
{
	return &m->ring[(m->head + k) & (m->cap - 1)];
}

static int ring_push(struct fm *m, const struct ff *f)
{
	if (m->n == m->cap) {
		struct ff *r = malloc((size_t)(2 * m->cap) * sizeof *r);
		if (!r)
			return err_nomem(m->e, "functional model");
		for (int64_t k = 0; k < m->n; k++)
			r[k] = *ring_at(m, k);
		free(m->ring);
		m->ring = r;
		m->head = 0;
		m->cap *= 2;
	}
	*ring_at(m, m->n++) = *f;
	return 0;
}

/* ---- operands and the reference ---- */

/* The stationary operand's element for PE (i, j) of fold f (ws: B[k][n], is: A[m][k]). */
static int64_t stat_index(const struct fm *m, const struct ff *f, int64_t i, int64_t j)
{
	if (m->df == DF_WS)
		return (f->in.k0 + i) * m->N + f->in.n0 + j;
	return (f->in.m0 + j) * m->K + f->in.k0 + i;
}

/* The element of C that PE column j's stream element t of fold f makes (ws/is). */
static int64_t out_index(const struct fm *m, const struct ff *f, int64_t t, int64_t j)
{
	if (m->df == DF_WS)
		return (f->in.m0 + t) * m->N + f->in.n0 + j;
	return (f->in.m0 + j) * m->N + f->in.n0 + t;
}

static void check_out(struct fm *m, int64_t idx)
{
	double v = get(m, m->acc, idx), d = fabs(v - m->ref[idx]);
	m->r->outputs++;
	if (!(d <= m->bnd[idx]))
		m->r->mismatches++;
	if (d > m->r->max_abs_error || isnan(d))
		m->r->max_abs_error = isnan(d) ? INFINITY : d;
}

static void note_left(struct fm *m, int64_t idx, int64_t fold, double v)
{
	if (!m->opt->observe)
		return;
	if (m->nleft == m->left_cap) {
		int cap = m->left_cap ? 2 * m->left_cap : 64;
		struct func_out *l = realloc(m->left, (size_t)cap * sizeof *l);
		if (!l)
			return;   /* the view shows fewer; the run is unaffected */
		m->left = l;
		m->left_cap = cap;
	}
	m->left[m->nleft++] = (struct func_out){ idx / m->N, idx % m->N, fold, v };
}

/* ---- step 1: the edge ports ---- */

static int feed(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t s = f->s, e = f->e, C = m->C;
	if (c < s || c - e + 1 > max64(f->in.sr, f->in.sc))
		return 0;
	/* the left edge: row i takes element t = c - s - i (ws A^T, is B, os A) */
	for (int64_t i = max64(0, c - e + 1); i <= min64(f->in.sr - 1, c - s); i++) {
		int64_t t = c - s - i, src;
		if (m->fed_left[i] == c)
			return violation(m, c, i, 0, "fold %lld's input written over one that has not moved on", (long long)f->idx);
		m->fed_left[i] = c;
		if (m->df == DF_WS || m->os)
			src = (f->in.m0 + (m->os ? i : t)) * m->K + f->in.k0 + (m->os ? t : i);
		else
			src = (f->in.k0 + i) * m->N + f->in.n0 + t;
		copy1(m->xv, i * C, m->df == DF_IS ? m->B : m->A, src);
		m->xt[i * C] = f->tag;
	}
	if (!m->os)
		return 0;
	/* os, the top edge: column j takes B's element t = c - s - j */
	for (int64_t j = max64(0, c - e + 1); j <= min64(f->in.sc - 1, c - s); j++) {
		int64_t t = c - s - j;
		if (m->fed_top[j] == c)
			return violation(m, c, 0, j, "fold %lld's B written over one that has not moved on", (long long)f->idx);
		m->fed_top[j] = c;
		copy1(m->pv, j, m->B, (f->in.k0 + t) * m->N + f->in.n0 + j);
		m->pt[j] = f->tag;
	}
	return 0;
}

/* ---- steps 3 and 5, ws/is: the weight chains ---- */

/* Columns whose chain for fold f is active in cycle c: [*j0, *j1]; false if none. */
static bool chain_cols(const struct ff *f, int64_t c, int64_t *j0, int64_t *j1)
{
	*j0 = max64(0, c - f->L - f->in.sr + 1);
	*j1 = min64(f->in.sc - 1, c - f->L);
	return *j0 <= *j1;
}

/*
 * A chain may write a weight in the cycle a MAC last reads it (the MAC sees
 * the value during the cycle, the write lands for the next); a MAC after the
 * write meets TRANSIT or the new fold's tag, and its own check objects.
 * What is checked here is the column's top port: one value a cycle.
 */
static int chain_check(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t j0, j1;
	if (!chain_cols(f, c, &j0, &j1))
		return 0;
	for (int64_t j = j0; j <= j1; j++) {
		if (m->fed_top[j] == c)
			return violation(m, c, 0, j, "fold %lld's weight written over one that has not moved on", (long long)f->idx);
		m->fed_top[j] = c;
	}
	return 0;
}

static void chain_write(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t j0, j1, C = m->C, b = f->bank;
	if (!chain_cols(f, c, &j0, &j1))
		return;
	const void *S = m->df == DF_WS ? m->B : m->A;
	for (int64_t j = j0; j <= j1; j++) {
		int64_t k = c - f->L - j;
		m->wt[b][k * C + j] = TRANSIT;
		if (k == f->in.sr - 1)
			for (int64_t i = 0; i < f->in.sr; i++) {
				copy1(m->wv[b], i * C + j, S, stat_index(m, f, i, j));
				m->wt[b][i * C + j] = f->tag;
			}
	}
}

/* ---- step 4, ws/is: MACs down the columns ---- */

/* p = pu + x w (pu NULL: 0) over n PEs; returns nonzero when a tag is not the fold's. */
static int32_t mac_row_u(uint32_t *restrict p, const uint32_t *restrict pu, const uint32_t *restrict x,
			 const uint32_t *restrict w, int32_t *restrict pt, const int32_t *restrict put,
			 const int32_t *restrict xt, const int32_t *restrict wt, int32_t tag, int64_t n)
{
	int32_t bad = 0;
	if (pu) {
		for (int64_t j = 0; j < n; j++) {
			bad |= (xt[j] ^ tag) | (wt[j] ^ tag) | (put[j] ^ tag);
			p[j] = pu[j] + x[j] * w[j];
			pt[j] = tag;
		}
	} else {
		for (int64_t j = 0; j < n; j++) {
			bad |= (xt[j] ^ tag) | (wt[j] ^ tag);
			p[j] = x[j] * w[j];
			pt[j] = tag;
		}
	}
	return bad;
}

static int32_t mac_row_f(float *restrict p, const float *restrict pu, const float *restrict x, const float *restrict w,
			 int32_t *restrict pt, const int32_t *restrict put, const int32_t *restrict xt,
			 const int32_t *restrict wt, int32_t tag, int64_t n)
{
	int32_t bad = 0;
	if (pu) {
		for (int64_t j = 0; j < n; j++) {
			bad |= (xt[j] ^ tag) | (wt[j] ^ tag) | (put[j] ^ tag);
			float prod = x[j] * w[j];
			p[j] = pu[j] + prod;
			pt[j] = tag;
		}
	} else {
		for (int64_t j = 0; j < n; j++) {
			bad |= (xt[j] ^ tag) | (wt[j] ^ tag);
			p[j] = x[j] * w[j];
			pt[j] = tag;
		}
	}
	return bad;
}

/* Finds the PE of row i, columns [j0, j1], whose operands do not all belong to fold f, and reports it. */
static int mac_culprit(struct fm *m, const struct ff *f, int64_t c, int64_t i, int64_t j0, int64_t j1)
{
	int64_t C = m->C;
	char a[64], b[64];
	for (int64_t j = j0; j <= j1; j++) {
		int64_t q = i * C + j;
		if (i < f->in.sr && m->xt[q] != f->tag)
			return violation(m, c, i, j, "fold %lld's MAC met %s input", (long long)f->idx,
					 tag_text(m, m->xt[q], a, sizeof a));
		if (i < f->in.sr && m->wt[f->bank][q] == TRANSIT)
			return violation(m, c, i, j, "fold %lld's input met a weight still shifting into bank %d", (long long)f->idx,
					 f->bank);
		if (i < f->in.sr && m->wt[f->bank][q] != f->tag)
			return violation(m, c, i, j, "fold %lld's input met %s weight in bank %d", (long long)f->idx,
					 tag_text(m, m->wt[f->bank][q], a, sizeof a), f->bank);
		if (i > 0 && m->pt[q - C] != f->tag)
			return violation(m, c, i, j, "fold %lld's MAC met %s partial sum from above", (long long)f->idx,
					 tag_text(m, m->pt[q - C], b, sizeof b));
	}
	SIM_ASSERT(!"a bad tag that no PE has");
	return -1;
}

static int wsis_band(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t s = f->s, e = f->e, R = m->R, C = m->C, sr = f->in.sr, sc = f->in.sc;
	int32_t tag = f->tag;
	int b = f->bank;
	for (int64_t i = min64(R - 1, c - s); i >= max64(0, c - e + 2 - sc); i--) {
		int64_t jlo = max64(0, c - e + 1 - i), jhi = min64(sc - 1, c - s - i), n = jhi - jlo + 1, q = i * C + jlo;
		int32_t bad;
		if (i < sr) {
			const int32_t *put = i ? m->pt + q - C : NULL;
			if (m->flt)
				bad = mac_row_f((float *)m->pv + q, i ? (float *)m->pv + q - C : NULL, (float *)m->xv + q,
						(float *)m->wv[b] + q, m->pt + q, put, m->xt + q, m->wt[b] + q, tag, n);
			else
				bad = mac_row_u((uint32_t *)m->pv + q, i ? (uint32_t *)m->pv + q - C : NULL,
						(uint32_t *)m->xv + q, (uint32_t *)m->wv[b] + q, m->pt + q, put, m->xt + q,
						m->wt[b] + q, tag, n);
		} else {
			/* below the fold's rows: the partial sums pass down */
			bad = 0;
			for (int64_t j = 0; j < n; j++)
				bad |= m->pt[q - C + j] ^ tag;
			memcpy((uint32_t *)m->pv + q, (uint32_t *)m->pv + q - C, (size_t)n * 4);
			memcpy(m->pt + q, m->pt + q - C, (size_t)n * 4);
		}
		if (bad)
			return mac_culprit(m, f, c, i, jlo, jhi);
		if (i == R - 1) {
			/* the partial sums leave the bottom into the accumulators */
			for (int64_t j = jlo; j <= jhi; j++) {
				int64_t t = c - s - (R - 1) - j, o = out_index(m, f, t, j), pq = i * C + j;
				if (m->flt)
					((float *)m->acc)[o] = f->in.first ? ((float *)m->pv)[pq]
									   : ((float *)m->acc)[o] + ((float *)m->pv)[pq];
				else
					((uint32_t *)m->acc)[o] = f->in.first ? ((uint32_t *)m->pv)[pq]
									      : ((uint32_t *)m->acc)[o] + ((uint32_t *)m->pv)[pq];
				note_left(m, o, f->idx, get(m, m->pv, pq));
				if (f->in.last)
					check_out(m, o);
			}
			m->last_out = c;
		}
		if (i < sr) {
			/* the inputs move right within the fold's columns; the trailing one leaves its register */
			int64_t nm = min64(jhi, sc - 2) - jlo + 1;
			if (nm > 0) {
				memmove((uint32_t *)m->xv + q + 1, (uint32_t *)m->xv + q, (size_t)nm * 4);
				memmove(m->xt + q + 1, m->xt + q, (size_t)nm * 4);
			}
			m->xt[q] = FREE;
		}
		/* the partial sum the trailing column wrote last cycle has moved down */
		if (jlo == c - e + 1 - i && jlo >= 1)
			m->pt[q - 1] = FREE;
	}
	int64_t r = c - e + 1 - sc;
	if (r >= 0 && r < R)
		m->pt[r * C + sc - 1] = FREE;
	return 0;
}

/* ---- steps 3 and 4, os: drains and MACs ---- */

static int os_drain(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t R = m->R, C = m->C, sr = f->in.sr, xb = f->xb;
	void *rv = m->dbuf ? m->ov : m->av;
	int32_t *rt = m->dbuf ? m->ot : m->at;
	char a[64];
	if (!f->in.last || c < xb || c > xb + f->in.sc - 1 + R - 1)
		return 0;
	for (int64_t j = max64(0, c - xb - R + 1); j <= min64(f->in.sc - 1, c - xb); j++) {
		int64_t d = c - xb - j, lo = d, hi = min64(sr - 1 + d, R - 1), top = hi;
		for (int64_t r = lo; r <= hi; r++)
			if (rt[r * C + j] != f->tag)
				return violation(m, c, r, j, "fold %lld's result to drain is %s value", (long long)f->idx,
						 tag_text(m, rt[r * C + j], a, sizeof a));
		if (hi == R - 1) {
			int64_t o = (f->in.m0 + R - 1 - d) * m->N + f->in.n0 + j;
			copy1(m->acc, o, rv, (R - 1) * C + j);
			note_left(m, o, f->idx, get(m, rv, (R - 1) * C + j));
			check_out(m, o);
			m->last_out = c;
			top = R - 2;
		} else if (rt[(hi + 1) * C + j] != FREE) {
			return violation(m, c, hi + 1, j, "fold %lld's result drains onto %s value that has not moved on",
					 (long long)f->idx, tag_text(m, rt[(hi + 1) * C + j], a, sizeof a));
		}
		for (int64_t r = top; r >= lo; r--) {
			copy1(rv, (r + 1) * C + j, rv, r * C + j);
			rt[(r + 1) * C + j] = rt[r * C + j];
		}
		rt[lo * C + j] = FREE;
	}
	return 0;
}

/* acc += a b over n PEs; nonzero when a tag is not the block's. */
static int32_t os_row_u(uint32_t *restrict acc, const uint32_t *restrict a, const uint32_t *restrict b,
			const int32_t *restrict acct, const int32_t *restrict at, const int32_t *restrict bt, int32_t tag,
			int64_t n)
{
	int32_t bad = 0;
	for (int64_t j = 0; j < n; j++) {
		bad |= (acct[j] ^ tag) | (at[j] ^ tag) | (bt[j] ^ tag);
		acc[j] += a[j] * b[j];
	}
	return bad;
}

static int32_t os_row_f(float *restrict acc, const float *restrict a, const float *restrict b,
			const int32_t *restrict acct, const int32_t *restrict at, const int32_t *restrict bt, int32_t tag,
			int64_t n)
{
	int32_t bad = 0;
	for (int64_t j = 0; j < n; j++) {
		bad |= (acct[j] ^ tag) | (at[j] ^ tag) | (bt[j] ^ tag);
		float prod = a[j] * b[j];
		acc[j] += prod;
	}
	return bad;
}

/* One os MAC at PE q: fresh starts the block's sum, final writes it to out (pipelined). */
static int os_mac(struct fm *m, const struct ff *f, int64_t c, int64_t i, int64_t j, bool fresh, bool final)
{
	int64_t q = i * m->C + j;
	char a[64];
	if (m->xt[q] != f->tag || m->pt[q] != f->tag)
		return violation(m, c, i, j, "fold %lld's MAC met %s %s", (long long)f->idx,
				 tag_text(m, m->xt[q] != f->tag ? m->xt[q] : m->pt[q], a, sizeof a),
				 m->xt[q] != f->tag ? "A" : "B");
	if (fresh ? m->at[q] != FREE : m->at[q] != f->tag)
		return violation(m, c, i, j, "fold %lld's MAC %s %s result in acc", (long long)f->idx,
				 fresh ? "would write over" : "met", tag_text(m, m->at[q], a, sizeof a));
	double v;
	if (m->flt) {
		float prod = ((float *)m->xv)[q] * ((float *)m->pv)[q];
		float r = fresh ? prod : ((float *)m->av)[q] + prod;
		v = r;
	} else {
		uint32_t prod = ((uint32_t *)m->xv)[q] * ((uint32_t *)m->pv)[q];
		v = (int32_t)(fresh ? prod : ((uint32_t *)m->av)[q] + prod);
	}
	if (final && m->dbuf) {
		if (m->ot[q] != FREE)
			return violation(m, c, i, j, "fold %lld's result would write over %s value in out that has not moved on",
					 (long long)f->idx, tag_text(m, m->ot[q], a, sizeof a));
		put(m, m->ov, q, v);
		m->ot[q] = f->tag;
		m->at[q] = FREE;
	} else {
		put(m, m->av, q, v);
		m->at[q] = f->tag;
	}
	return 0;
}

static int os_band(struct fm *m, const struct ff *f, int64_t c)
{
	int64_t s = f->s, e = f->e, C = m->C, sr = f->in.sr, sc = f->in.sc;
	int32_t tag = f->tag;
	for (int64_t i = min64(sr - 1, c - s); i >= max64(0, c - e + 2 - sc); i--) {
		int64_t jlo = max64(0, c - e + 1 - i), jhi = min64(sc - 1, c - s - i), q = i * C;
		bool fresh = f->in.first && jhi == c - s - i, final = f->in.last && jlo == c - e + 1 - i;
		int64_t a = jlo, b = jhi;
		if (fresh) {
			if (os_mac(m, f, c, i, jhi, true, final && jhi == jlo) < 0)
				return -1;
			b--;
		}
		if (final && jlo <= b) {
			if (os_mac(m, f, c, i, jlo, false, true) < 0)
				return -1;
			a++;
		}
		if (a <= b) {
			int32_t bad = m->flt ? os_row_f((float *)m->av + q + a, (float *)m->xv + q + a, (float *)m->pv + q + a,
							 m->at + q + a, m->xt + q + a, m->pt + q + a, tag, b - a + 1)
					     : os_row_u((uint32_t *)m->av + q + a, (uint32_t *)m->xv + q + a,
							 (uint32_t *)m->pv + q + a, m->at + q + a, m->xt + q + a, m->pt + q + a, tag,
							 b - a + 1);
			if (bad)
				for (int64_t j = a; j <= b; j++)
					if (os_mac(m, f, c, i, j, false, false) < 0)
						return -1;
		}
		/* B moves down within the block's rows, A right within its columns; trailing registers empty */
		if (i + 1 < sr) {
			memcpy((uint32_t *)m->pv + q + C + jlo, (uint32_t *)m->pv + q + jlo, (size_t)(jhi - jlo + 1) * 4);
			memcpy(m->pt + q + C + jlo, m->pt + q + jlo, (size_t)(jhi - jlo + 1) * 4);
		}
		m->pt[q + jlo] = FREE;
		int64_t nm = min64(jhi, sc - 2) - jlo + 1;
		if (nm > 0) {
			memmove((uint32_t *)m->xv + q + jlo + 1, (uint32_t *)m->xv + q + jlo, (size_t)nm * 4);
			memmove(m->xt + q + jlo + 1, m->xt + q + jlo, (size_t)nm * 4);
		}
		m->xt[q + jlo] = FREE;
	}
	return 0;
}

/* ---- the observer's view ---- */

static struct func_reg reg(const struct fm *m, const void *v, const int32_t *t, int64_t q)
{
	if (t[q] < 0)
		return (struct func_reg){ 0, -1 };
	return (struct func_reg){ get(m, v, q), full_fold(m, t[q]) };
}

/* A weight still shifting down bank b's chain at PE (i, j) during cycle c: the value it holds and its fold. */
static struct func_reg transit(const struct fm *m, int b, int64_t i, int64_t j, int64_t c)
{
	for (int64_t k = m->n - 1; k >= 0; k--) {
		const struct ff *f = ring_at(m, k);
		if (f->bank != b || f->L + i + j > c - 1 || i >= f->in.sr || j >= f->in.sc)
			continue;
		int64_t w = min64(c - 1, f->L + j + f->in.sr - 1), row = f->in.sr - 1 - (w - f->L - j) + i;
		return (struct func_reg){ get(m, m->df == DF_WS ? m->B : m->A, stat_index(m, f, row, j)), f->idx };
	}
	return (struct func_reg){ 0, -1 };
}

static void snapshot(struct fm *m, int64_t c)
{
	int64_t R = m->R, C = m->C;
	for (int64_t q = 0; q < R * C; q++) {
		struct func_pe *p = &m->view[q];
		memset(p, 0, sizeof *p);
		p->x = reg(m, m->xv, m->xt, q);
		p->p = reg(m, m->pv, m->pt, q);
		if (m->os) {
			p->w[0] = p->w[1] = (struct func_reg){ 0, -1 };
			p->acc = reg(m, m->av, m->at, q);
			p->out = reg(m, m->ov, m->ot, q);
			continue;
		}
		for (int b = 0; b < 2; b++)
			p->w[b] = m->wt[b][q] == TRANSIT ? transit(m, b, q / C, q % C, c) : reg(m, m->wv[b], m->wt[b], q);
		if (m->xt[q] >= 0)
			m->wsel[q] = m->dbuf ? (m->xt[q] & 1) : 0;
		p->wsel = m->wsel[q];
		p->acc = p->out = (struct func_reg){ 0, -1 };
	}
	m->nleft = 0;
}

static int observe(struct fm *m, int64_t c)
{
	struct func_view v = { c, m->R, m->C, m->df, m->view, -1, NULL, -1, m->left, m->nleft };
	for (int64_t k = 0; k < m->n; k++) {
		const struct ff *f = ring_at(m, k);
		if (f->s <= c && f->idx > m->view_fold) {
			m->view_fold = f->idx;
			m->view_ins = f->in;
		}
		if (!m->os && f->L <= c && c <= f->L + f->in.sr - 1)
			v.loading = f->idx;
	}
	v.fold = m->view_fold;
	v.ins = m->view_fold >= 0 ? &m->view_ins : NULL;
	return m->opt->observe(&v, m->opt->ctx);
}

/* ---- the run ---- */

static void fm_free(struct fm *m)
{
	free(m->A);
	free(m->B);
	free(m->ref);
	free(m->bnd);
	free(m->acc);
	free(m->xv);
	free(m->xt);
	free(m->fed_left);
	free(m->fed_top);
	free(m->ring);
	free(m->view);
	free(m->wsel);
	free(m->left);
}

/* Operands (given or random), checked, as register values; the reference and its bounds. */
static int operands(struct fm *m, const struct func_opts *opt)
{
	int64_t M = m->M, K = m->K, N = m->N;
	uint64_t st;
	double *a = malloc((size_t)(M * K) * sizeof *a), *b = malloc((size_t)(K * N) * sizeof *b);
	int rc = -1;
	if (!a || !b) {
		err_nomem(m->e, "functional model");
		goto out;
	}
	for (int w = 0; w < 2; w++) {
		const double *given = w ? opt->b : opt->a;
		double *v = w ? b : a;
		int64_t rows = w ? K : M, cols = w ? N : K;
		st = opt->seed + (uint64_t)w;
		for (int64_t q = 0; q < rows * cols; q++) {
			v[q] = given ? given[q] : random_value(m->dtype, &st);
			if (!func_representable(m->dtype, v[q])) {
				err_input(m->e, "%c[%lld][%lld]: expected a value representable in %s, found %.17g", w ? 'B' : 'A',
					  (long long)(q / cols), (long long)(q % cols), array_dtype_names[m->dtype], v[q]);
				goto out;
			}
			put(m, w ? m->B : m->A, q, v[q]);
		}
	}
	/* the reference in double: every product is exact there, the sums nearly so */
	for (int64_t i = 0; i < M; i++) {
		double *r = m->ref + i * N, *s = m->bnd + i * N;
		for (int64_t n = 0; n < N; n++)
			r[n] = s[n] = 0;
		for (int64_t k = 0; k < K; k++) {
			double x = a[i * K + k];
			const double *bk = b + k * N;
			for (int64_t n = 0; n < N; n++) {
				r[n] += x * bk[n];
				s[n] += fabs(x * bk[n]);
			}
		}
		for (int64_t n = 0; n < N; n++)
			s[n] = func_bound(m->dtype, K, s[n]);
	}
	rc = 0;
out:
	free(a);
	free(b);
	return rc;
}

static int fm_init(struct fm *m, const struct config *cfg, const struct op *o, const struct sched *s,
		   const struct func_opts *opt, struct func_result *r, struct err *e)
{
	int64_t R = s->Rp, C = s->C, RC = R * C;
	memset(m, 0, sizeof *m);
	m->r = r, m->e = e, m->opt = opt;
	m->df = s->df;
	m->os = s->df == DF_OS;
	m->dtype = cfg->arch.array.dtype;
	m->flt = m->dtype != DT_INT8;
	m->dbuf = s->dbuf;
	m->R = R, m->C = C, m->M = o->m, m->K = o->k, m->N = o->n;
	m->early = opt->early;
	m->early_fold = opt->early_fold;
	m->early_what = opt->early_what;
	m->view_fold = -1;
	m->last_out = -1;
	m->bank_free[0] = m->bank_free[1] = INT64_MIN;
	if (s->compat)
		return err_at(e, config_origin(cfg, "array.scalesim_compat"), "array.scalesim_compat",
			      "expected false for --model functional (it times folds by the register rules, not SCALE-Sim's), "
			      "found true");
	if (config_check_rate(cfg, "the functional model", e) < 0)
		return -1;
	m->A = malloc((size_t)(o->m * o->k) * 4);
	m->B = malloc((size_t)(o->k * o->n) * 4);
	m->acc = calloc((size_t)(o->m * o->n), 4);
	m->ref = malloc((size_t)(o->m * o->n) * sizeof *m->ref);
	m->bnd = malloc((size_t)(o->m * o->n) * sizeof *m->bnd);
	/* one block for the six value arrays and one for the six tag arrays */
	m->xv = calloc((size_t)(6 * RC), 4);
	m->xt = malloc((size_t)(6 * RC) * 4);
	m->fed_left = malloc((size_t)R * sizeof *m->fed_left);
	m->fed_top = malloc((size_t)C * sizeof *m->fed_top);
	m->cap = 64;
	m->ring = malloc((size_t)m->cap * sizeof *m->ring);
	if (opt->observe) {
		m->view = malloc((size_t)RC * sizeof *m->view);
		m->wsel = calloc((size_t)RC, sizeof *m->wsel);
		m->left_cap = (int)min64(C + 64, 1 << 20);
		m->left = malloc((size_t)m->left_cap * sizeof *m->left);
	}
	if (!m->A || !m->B || !m->acc || !m->ref || !m->bnd || !m->xv || !m->xt || !m->fed_left || !m->fed_top ||
	    !m->ring || (opt->observe && (!m->view || !m->wsel || !m->left)))
		return err_nomem(e, "functional model");
	m->pv = (uint32_t *)m->xv + RC;
	m->wv[0] = (uint32_t *)m->xv + 2 * RC;
	m->wv[1] = (uint32_t *)m->xv + 3 * RC;
	m->av = (uint32_t *)m->xv + 4 * RC;
	m->ov = (uint32_t *)m->xv + 5 * RC;
	m->pt = m->xt + RC;
	m->wt[0] = m->xt + 2 * RC;
	m->wt[1] = m->xt + 3 * RC;
	m->at = m->xt + 4 * RC;
	m->ot = m->xt + 5 * RC;
	for (int64_t q = 0; q < 6 * RC; q++)
		m->xt[q] = FREE;
	for (int64_t i = 0; i < R; i++)
		m->fed_left[i] = INT64_MIN;
	for (int64_t j = 0; j < C; j++)
		m->fed_top[j] = INT64_MIN;
	return operands(m, opt);
}

/* One cycle of every fold in flight; 1 when the observer stopped the run. */
static int cycle(struct fm *m, int64_t c)
{
	for (int64_t k = 0; k < m->n; k++)
		if (feed(m, ring_at(m, k), c) < 0)
			return -1;
	if (m->opt->observe)
		snapshot(m, c);
	for (int64_t k = 0; k < m->n; k++)
		if ((m->os ? os_drain(m, ring_at(m, k), c) : chain_check(m, ring_at(m, k), c)) < 0)
			return -1;
	for (int64_t k = 0; k < m->n; k++) {
		const struct ff *f = ring_at(m, k);
		if (c >= f->s && (m->os ? os_band(m, f, c) : wsis_band(m, f, c)) < 0)
			return -1;
	}
	if (!m->os)
		for (int64_t k = 0; k < m->n; k++)
			chain_write(m, ring_at(m, k), c);
	if (m->opt->observe && c <= m->live_end && observe(m, c))
		return 1;
	return 0;
}

int func_run(const struct config *cfg, const struct op *o, const struct sched *s, const struct func_opts *opt,
	     struct func_result *r, struct err *e)
{
	struct fm m;
	int rc = -1;
	int64_t c;
	memset(r, 0, sizeof *r);
	SIM_ASSERT(o->kind == OP_GEMM && s->op == o);
	if (fm_init(&m, cfg, o, s, opt, r, e) < 0)
		goto out;
	sched_iter_init(&m.it, s);
	m.have_next = pull(&m, &m.next);
	c = m.have_next ? min64(0, m.next.start) : 0;
	for (;; c++) {
		/* A fold's start: where a stop asked for (stop.h) ends the run. */
		while (m.have_next && m.next.start <= c) {
			if (stop_check(e) < 0 || ring_push(&m, &m.next) < 0)
				goto out;
			m.have_next = pull(&m, &m.next);
		}
		while (m.n && ring_at(&m, 0)->end < c) {
			m.head = (m.head + 1) & (m.cap - 1);
			m.n--;
		}
		if (!m.n && !m.have_next)
			break;
		int k = cycle(&m, c);
		if (k < 0)
			goto out;
		if (k > 0) {
			r->stopped = true;
			break;
		}
	}
	r->cycles = m.last_out + 1;
	if (!r->stopped)
		r->cat[CAT_FILL_DRAIN] += max64(0, r->cycles - m.prev_e);
	r->pe_updates = r->cycles * m.R * m.C;
	if (opt->c)
		for (int64_t q = 0; q < m.M * m.N; q++)
			opt->c[q] = get(&m, m.acc, q);
	rc = 0;
out:
	fm_free(&m);
	return rc;
}
