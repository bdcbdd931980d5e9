/*
 * lower.c - layers to GEMM and vector ops (see lower.h).
 */
#include "lower.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every product, and the workload's total of all of them, stays below this,
 * so bytes (x4) and every sum over the workload fit in int64.
 */
#define LOWER_LIMIT (INT64_C(1) << 58)
#define LOWER_MAX_OPS 1000000           /* ops per workload */
#define LOWER_MAX_BLOCKS 4096           /* causal blocks per attention layer */

struct ctx {
	const struct workload *w;
	const struct layer *l;
	size_t idx;
	struct oplist *out;
	struct err *e;
	bool overflow;
	int64_t total;                  /* MACs, elements and operand sizes over the workload */
	int32_t block;                  /* the causal block the next ops belong to; -1 none */
};

/* Adds x to the workload's running total; false when it passes LOWER_LIMIT. */
static bool count(struct ctx *c, int64_t x)
{
	c->total += x;
	return c->total <= LOWER_LIMIT;
}

/* a*b, remembering an overflow past LOWER_LIMIT in c. */
static int64_t mul(struct ctx *c, int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r) || r > LOWER_LIMIT || r < 0) {
		c->overflow = true;
		return 1;
	}
	return r;
}

static int shape_err(struct ctx *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int shape_err(struct ctx *c, const char *key, const char *fmt, ...)
{
	char path[64], msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (key)
		snprintf(path, sizeof path, "layers[%zu].%s", c->idx, key);
	else
		snprintf(path, sizeof path, "layers[%zu]", c->idx);
	return err_at(c->e, key ? workload_key_pos(c->l, key) : c->l->pos, path, "%s", msg);
}

static const char *name_of(const char *layer, const char *suffix, int32_t block, char *buf, size_t size)
{
	if (block >= 0)
		snprintf(buf, size, "%s.%s[%d]", layer, suffix, (int)block);
	else
		snprintf(buf, size, "%s%s%s", layer, *suffix ? "." : "", suffix);
	return buf;
}

const char *op_name(const struct op *o, char *buf, size_t size)
{
	return name_of(o->layer_name ? o->layer_name : "op", o->suffix ? o->suffix : "", o->block, buf, size);
}

/* The name the op about to be pushed for suffix will have. */
static const char *ctx_name(const struct ctx *c, const char *suffix, char *buf, size_t size)
{
	return name_of(c->l->name, suffix, c->block, buf, size);
}

static struct op *push(struct ctx *c, const char *suffix)
{
	struct oplist *l = c->out;
	struct op *o;
	if (l->n >= LOWER_MAX_OPS)
		return NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct op *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	o = &l->v[l->n++];
	memset(o, 0, sizeof *o);
	o->layer_name = c->l->name;
	o->suffix = suffix;
	o->block = c->block;
	o->layer = c->idx;
	o->pos = c->l->pos;
	return o;
}

static int gemm(struct ctx *c, const char *suffix, int64_t m, int64_t k, int64_t n, int64_t repeat,
		bool a_weight, bool b_weight)
{
	char name[OP_NAME_MAX];
	struct op *o;
	repeat = mul(c, repeat, c->l->repeat);
	/* Operand sizes and MACs must all fit; bytes are at most 4x these. */
	int64_t sa = mul(c, mul(c, m, k), repeat), sb = mul(c, mul(c, k, n), repeat), sc = mul(c, mul(c, m, n), repeat);
	int64_t macs = mul(c, mul(c, mul(c, m, k), n), repeat);
	if (c->overflow)
		return shape_err(c, NULL, "expected sizes whose products fit in 58 bits, found a larger product in %s",
				 ctx_name(c, suffix, name, sizeof name));
	if (!count(c, macs) || !count(c, sa) || !count(c, sb) || !count(c, sc))
		return shape_err(c, NULL, "expected a workload whose total work fits in 58 bits, found more");
	if (!(o = push(c, suffix)))
		return c->out->n >= LOWER_MAX_OPS ? shape_err(c, NULL, "expected at most %d ops in a workload, found more",
							     LOWER_MAX_OPS)
						  : err_nomem(c->e, NULL);
	o->kind = OP_GEMM;
	o->m = m;
	o->k = k;
	o->n = n;
	o->repeat = repeat;
	o->a_weight = a_weight;
	o->b_weight = b_weight;
	o->a_elems = m * k;
	return 0;
}

static int vec(struct ctx *c, const char *suffix, int kind, int64_t in, int64_t out, int64_t lane_ops)
{
	char name[OP_NAME_MAX];
	struct op *o;
	in = mul(c, in, c->l->repeat);
	out = mul(c, out, c->l->repeat);
	lane_ops = mul(c, lane_ops, c->l->repeat);
	if (c->overflow)
		return shape_err(c, NULL, "expected sizes whose products fit in 58 bits, found a larger product in %s",
				 ctx_name(c, suffix, name, sizeof name));
	if (!count(c, in) || !count(c, out) || !count(c, lane_ops))
		return shape_err(c, NULL, "expected a workload whose total work fits in 58 bits, found more");
	if (!(o = push(c, suffix)))
		return c->out->n >= LOWER_MAX_OPS ? shape_err(c, NULL, "expected at most %d ops in a workload, found more",
							     LOWER_MAX_OPS)
						  : err_nomem(c->e, NULL);
	o->kind = OP_VEC;
	o->vec = kind;
	o->in_elems = in;
	o->out_elems = out;
	o->lane_ops = lane_ops;
	return 0;
}

/* Output size of a window of size k (already dilated) over n with padding p and stride s. */
static int out_dim(struct ctx *c, const char *kkey, int64_t n, int64_t k, int64_t p, int64_t s, int64_t *out)
{
	const struct layer *l = c->l;
	if (l->scalesim_rounding) {
		if (k > n)
			return shape_err(c, kkey, "expected a filter no larger than the input (%lld), found %lld",
					 (long long)n, (long long)k);
		*out = (n - k + s + s - 1) / s;   /* SCALE-Sim: ceil((H - R + s) / s) */
		return 0;
	}
	if (k > n + 2 * p)
		return shape_err(c, kkey, "expected a filter no larger than the padded input (%lld), found %lld",
				 (long long)(n + 2 * p), (long long)k);
	*out = (n + 2 * p - k) / s + 1;
	return 0;
}

static int lower_conv(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	int64_t kh = l->kernel_h ? l->kernel_h : l->kernel, kw = l->kernel_w ? l->kernel_w : l->kernel;
	int64_t ekh, ekw, ho, wo;

	if (!kh || !kw)
		return shape_err(c, "kernel", "expected an integer in [1, 1099511627776], found no value "
				 "(give kernel, or kernel_h and kernel_w)");
	ekh = mul(c, l->dilation, kh - 1) + 1;
	ekw = mul(c, l->dilation, kw - 1) + 1;
	if (c->overflow)
		return shape_err(c, "dilation", "expected a dilated filter that fits in 58 bits, found more");
	if (out_dim(c, l->kernel_h ? "kernel_h" : "kernel", l->in_h, ekh, l->padding, l->stride, &ho) < 0 ||
	    out_dim(c, l->kernel_w ? "kernel_w" : "kernel", l->in_w, ekw, l->padding, l->stride, &wo) < 0)
		return -1;
	if (l->in_c % l->groups || l->out_c % l->groups)
		return shape_err(c, "groups", "expected a divisor of in_c (%lld) and out_c (%lld), found %lld",
				 (long long)l->in_c, (long long)l->out_c, (long long)l->groups);
	int64_t m = mul(c, mul(c, batch, ho), wo), k = mul(c, mul(c, kh, kw), l->in_c / l->groups);
	if (gemm(c, "", m, k, l->out_c / l->groups, l->groups, false, true) < 0)
		return -1;
	/* Memory holds each input element once: one group's input, or what the windows touch. */
	int64_t bh, input;
	struct op *o = &c->out->v[c->out->n - 1];
	if (!__builtin_mul_overflow(batch, l->in_h, &bh) && !__builtin_mul_overflow(bh, l->in_w, &input) &&
	    !__builtin_mul_overflow(input, l->in_c / l->groups, &input) && input < o->a_elems)
		o->a_elems = input;
	return 0;
}

static int lower_pool(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	int64_t k = l->kernel, ho = 1, wo = 1, window;
	int kind = l->pool_mode == POOL_MAX ? VEC_MAXPOOL : VEC_AVGPOOL;
	if (l->global) {
		window = mul(c, l->in_h, l->in_w);
	} else {
		if (!k)
			return shape_err(c, "kernel", "expected an integer in [1, 1099511627776], found no value "
					 "(give kernel, or global: true)");
		if (out_dim(c, "kernel", l->in_h, k, l->padding, l->stride, &ho) < 0 ||
		    out_dim(c, "kernel", l->in_w, k, l->padding, l->stride, &wo) < 0)
			return -1;
		window = mul(c, k, k);
	}
	int64_t in = mul(c, mul(c, mul(c, batch, l->in_h), l->in_w), l->in_c);
	int64_t out = mul(c, mul(c, mul(c, batch, ho), wo), l->in_c);
	return vec(c, "", kind, in, out, mul(c, out, window));
}

static int lower_matmul(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	bool aw = l->a == ROLE_WEIGHT, bw = l->b == ROLE_WEIGHT;
	int64_t m = l->m, n = l->n, rep = 1;
	if (bw && !aw)
		m = mul(c, m, batch);      /* samples add rows that meet the shared B */
	else if (aw && !bw)
		n = mul(c, n, batch);      /* samples add columns that meet the shared A */
	else if (!aw && !bw)
		rep = batch;               /* independent products per sample */
	return gemm(c, "", m, l->k, n, rep, aw, bw);
}

static int lower_attention(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	int64_t h = l->heads, g = l->kv_heads ? l->kv_heads : l->heads, hd = l->head_dim, q, kv, grp, rows;
	int64_t soft = 0;

	if (h % g)
		return shape_err(c, "kv_heads", "expected a divisor of heads (%lld), found %lld", (long long)h, (long long)g);
	if (!hd) {
		if (l->d_model % h)
			return shape_err(c, "heads", "expected a divisor of d_model (%lld), found %lld",
					 (long long)l->d_model, (long long)h);
		hd = l->d_model / h;
	}
	grp = h / g;
	q = l->mode == ATTN_DECODE ? 1 : l->seq;
	kv = l->mode == ATTN_DECODE ? l->kv_cache + 1 : l->seq;
	rows = mul(c, batch, q);
	if (gemm(c, "q_proj", rows, l->d_model, mul(c, h, hd), 1, false, true) < 0 ||
	    gemm(c, "k_proj", rows, l->d_model, mul(c, g, hd), 1, false, true) < 0 ||
	    gemm(c, "v_proj", rows, l->d_model, mul(c, g, hd), 1, false, true) < 0)
		return -1;
	/* Query blocks: one of all q rows, or causal_block rows each when causal prefill skips masked keys. */
	int64_t nb = 1, cb = q;
	bool blocked = l->causal && l->mode == ATTN_PREFILL && q > l->causal_block;
	if (blocked) {
		/* (A causal prefill of one block computes the whole block, masked half included.) */
		cb = l->causal_block;
		nb = q / cb + (q % cb != 0);
		if (nb > LOWER_MAX_BLOCKS)
			return shape_err(c, "causal_block", "expected at least %lld (at most %d blocks of the %lld queries), "
					 "found %lld", (long long)(q / LOWER_MAX_BLOCKS + (q % LOWER_MAX_BLOCKS != 0)),
					 LOWER_MAX_BLOCKS, (long long)q, (long long)cb);
	}
	/*
	 * Every block's scores first, then the softmax over all of them, then
	 * every block's P.V: each op comes after the ops that write what it reads.
	 * Block i of queries sees keys [0, i*cb + rows_i): later key blocks are skipped.
	 */
	for (int64_t i = 0; i < nb; i++) {
		int64_t r = q - i * cb < cb ? q - i * cb : cb, keys = blocked ? i * cb + r : kv;
		c->block = blocked ? (int32_t)i : -1;
		if (gemm(c, "qk", mul(c, r, grp), hd, keys, mul(c, batch, g), false, false) < 0)
			return -1;
		soft += mul(c, mul(c, mul(c, batch, h), r), keys);
	}
	c->block = -1;
	if (vec(c, "softmax", VEC_SOFTMAX, soft, soft, mul(c, soft, vector_ops_per_elem(VEC_SOFTMAX))) < 0)
		return -1;
	for (int64_t i = 0; i < nb; i++) {
		int64_t r = q - i * cb < cb ? q - i * cb : cb, keys = blocked ? i * cb + r : kv;
		c->block = blocked ? (int32_t)i : -1;
		if (gemm(c, "pv", mul(c, r, grp), keys, hd, mul(c, batch, g), false, false) < 0)
			return -1;
	}
	c->block = -1;
	return gemm(c, "o_proj", rows, mul(c, h, hd), l->d_model, 1, false, true);
}

static int lower_mlp(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	static const int act_vec[] = { VEC_RELU, VEC_GELU, VEC_SILU };
	int64_t rows = mul(c, batch, l->tokens), hidden = mul(c, rows, l->d_ff);
	int act = act_vec[l->activation];
	if (gemm(c, "up", rows, l->d_model, l->d_ff, 1, false, true) < 0)
		return -1;
	if (l->gated && gemm(c, "gate", rows, l->d_model, l->d_ff, 1, false, true) < 0)
		return -1;
	if (vec(c, layer_type_names[L_RELU + l->activation], act, hidden, hidden,
		mul(c, hidden, vector_ops_per_elem(act))) < 0)
		return -1;
	if (l->gated && vec(c, "mul", VEC_MUL, mul(c, 2, hidden), hidden, hidden) < 0)
		return -1;
	return gemm(c, "down", rows, l->d_ff, l->d_model, 1, false, true);
}

static int lower_layer(struct ctx *c)
{
	const struct layer *l = c->l;
	int64_t b = c->w->batch;
	switch (l->type) {
	case L_CONV2D: return lower_conv(c, b);
	case L_FC:
	case L_LINEAR: return gemm(c, "", mul(c, b, l->tokens), l->in_features, l->out_features, 1, false, true);
	case L_MATMUL: return lower_matmul(c, b);
	case L_ATTENTION: return lower_attention(c, b);
	case L_MLP: return lower_mlp(c, b);
	case L_POOL: return lower_pool(c, b);
	case L_ADD:
	case L_MUL: {
		int64_t n = mul(c, b, l->elements);
		return vec(c, "", l->type == L_ADD ? VEC_ADD : VEC_MUL, mul(c, 2, n), n, n);
	}
	default: {
		static const int kinds[L_NTYPES] = { [L_RELU] = VEC_RELU, [L_GELU] = VEC_GELU, [L_SILU] = VEC_SILU,
						     [L_SOFTMAX] = VEC_SOFTMAX, [L_LAYERNORM] = VEC_LAYERNORM };
		int k = kinds[l->type];
		int64_t n = mul(c, b, l->elements);
		return vec(c, "", k, n, n, mul(c, n, vector_ops_per_elem(k)));
	}
	}
}

int lower_workload(const struct workload *w, struct oplist *out, struct err *e)
{
	struct ctx c = { w, NULL, 0, out, e, false, 0, -1 };
	if (w->n > LOWER_MAX_OPS)
		return err_at(e, (struct pos){ w->file, 0, 0 }, "layers", "expected at most %d layers, found %zu",
			      LOWER_MAX_OPS, w->n);
	for (size_t i = 0; i < w->n; i++) {
		c.l = &w->layers[i];
		c.idx = i;
		if (lower_layer(&c) < 0)
			return -1;
	}
	return 0;
}

void oplist_release(struct oplist *l)
{
	free(l->v);
	free(l->t);
	l->v = NULL;
	l->t = NULL;
	l->n = l->cap = l->nt = l->tcap = 0;
}

const char *tensor_name(const struct tensor *t, char *buf, size_t size)
{
	return name_of(t->layer_name ? t->layer_name : "op", t->suffix ? t->suffix : "", t->block, buf, size);
}

int64_t op_macs(const struct op *o)
{
	return o->kind == OP_GEMM ? o->m * o->k * o->n * o->repeat : 0;
}
