/*
 * lower.c - layers to GEMM and vector ops (see lower.h).
 *
 * Each op is pushed, then attached to its tensors: the ones it reads (the
 * layer's activation inputs, its weights, tensors of the layer's own earlier
 * ops) and the one it writes, whose elements are the sum of what its writers
 * write. A layer's last op writes its "out".
 */
#include "lower.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "ici.h"
#include "limit.h"

/*
 * Every product, and the workload's total of all of them, stays below this,
 * so bytes (x4) and every sum over the workload fit in int64.
 */

const char *const tensor_kind_names[] = { "input", "weight", "cache", "act", "state", NULL };
const char *const hbm_need_names[] = { "weights", "caches", "inputs", "activations", "gradients", "optimizer_state", NULL };
const char *const step_phase_names[] = { "forward", "backward", "recompute", "optimizer", "bubble", NULL };

/* The name's last part by enum op_grad, and by enum tensor_role. */
static const char *const grad_part[] = { "", "dx", "dw", "da", "db", "bwd", "loss", "gsum", "gacc", "update", "gather",
					 "scatter", "sync" };
static const char *const role_part[] = { "", "grad", "re", "state", "mask", "gathered" };
_Static_assert(sizeof grad_part / sizeof *grad_part == OG_N, "a name part per op_grad");

struct ctx {
	const struct workload *w;
	const struct layer *l;
	size_t idx;
	struct oplist *out;
	struct err *e;
	bool overflow;
	int64_t total;                  /* MACs, elements and operand sizes over the workload */
	int32_t block;                  /* the causal block the next ops belong to; -1 none */
	int32_t *layer_out;             /* owned: each lowered layer's output tensor */
	int32_t in[LAYER_MAX_INPUTS];   /* the layer's activation inputs once found; TENSOR_NONE before */
	int vec;                        /* the layer type's vector op (layer_types.h), or -1 */
	size_t file;                    /* the next of the workload's operand files to check */
	int drop_eb;                    /* dropout (lower_batch): the element size of its masks; 0 none */
	const struct lower_pod *lp;     /* borrowed: the pod and its mesh (shard.h); NULL: one chip */
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
	char at[WORKLOAD_PATH_MAX], path[WORKLOAD_PATH_MAX + 32], msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	workload_layer_path(c->l, at, sizeof at);
	if (key)
		snprintf(path, sizeof path, "%s.%s", at, key);
	else
		snprintf(path, sizeof path, "%s", at);
	return err_at(c->e, key ? workload_key_pos(c->l, key) : c->l->pos, path, "%s", msg);
}

/* "layer", "layer.suffix" or "layer.suffix[block]", then ".part" when part is not "". */
static const char *name_of(const char *layer, const char *suffix, int32_t block, const char *part, char *buf,
			   size_t size)
{
	const char *dot = *part ? "." : "";
	if (block >= 0)
		snprintf(buf, size, "%s.%s[%d]%s%s", layer, suffix, (int)block, dot, part);
	else
		snprintf(buf, size, "%s%s%s%s%s", layer, *suffix ? "." : "", suffix, dot, part);
	return buf;
}

const char *op_name(const struct op *o, char *buf, size_t size)
{
	const char *part = o->grad < OG_N ? grad_part[o->grad] : "";
	if (o->phase == PH_RECOMPUTE && !*part)
		part = role_part[TR_RECOMP];
	return name_of(o->layer_name ? o->layer_name : "op", o->suffix ? o->suffix : "", o->block, part, buf, size);
}

size_t oplist_nrows(const struct oplist *l, size_t layers)
{
	return l->rows ? l->nrows : layers;
}

size_t oplist_row(const struct oplist *l, const struct op *o)
{
	return l->rows ? o->row : o->layer;
}

/* The name the op about to be pushed for suffix will have. */
static const char *ctx_name(const struct ctx *c, const char *suffix, char *buf, size_t size)
{
	return name_of(c->l->name, suffix, c->block, "", buf, size);
}

struct op *oplist_add_op(struct oplist *l)
{
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
	o->in[0] = o->in[1] = o->out = TENSOR_NONE;
	return o;
}

int32_t oplist_add_tensor(struct oplist *l, const struct tensor *t)
{
	if (l->nt == l->tcap) {
		size_t cap = l->tcap ? 2 * l->tcap : 64;
		struct tensor *v = realloc(l->t, cap * sizeof *v);
		if (!v)
			return -1;
		l->t = v;
		l->tcap = cap;
	}
	l->t[l->nt] = *t;
	return (int32_t)l->nt++;
}

static struct op *push(struct ctx *c, const char *suffix)
{
	struct op *o = oplist_add_op(c->out);
	if (!o)
		return NULL;
	o->layer_name = c->l->name;
	o->suffix = suffix;
	o->block = c->block;
	o->layer = c->idx;
	o->row = (uint32_t)c->idx;
	o->pos = c->l->pos;
	return o;
}

static struct op *last(struct ctx *c)
{
	return &c->out->v[c->out->n - 1];
}

/* A new tensor of the current layer; its index, or -1 with the error set. */
static int32_t tensor_new(struct ctx *c, const char *suffix, int kind, int64_t elems)
{
	struct tensor t = { c->l->name, suffix, -1, kind, TR_VALUE, TENSOR_NONE, elems, TENSOR_NONE, TENSOR_NONE,
			    TENSOR_NONE, TENSOR_NONE };
	int32_t i = oplist_add_tensor(c->out, &t);
	return i < 0 ? err_nomem(c->e, NULL) : i;
}

/*
 * The op just pushed reads a and b (TENSOR_NONE: no such operand) and writes
 * the activation *out, made (named suffix) when *out is TENSOR_NONE. What the
 * op writes adds to *out's elements. Returns 0, or -1 with the error set.
 */
static int attach_op(struct ctx *c, size_t idx, int32_t a, int32_t b, int32_t *out, const char *suffix);

static int attach(struct ctx *c, int32_t a, int32_t b, int32_t *out, const char *suffix)
{
	return attach_op(c, c->out->n - 1, a, b, out, suffix);
}

/* attach for op i of the list. */
static int attach_op(struct ctx *c, size_t idx, int32_t a, int32_t b, int32_t *out, const char *suffix)
{
	struct op *o = &c->out->v[idx];
	int32_t i = (int32_t)idx, rd[2] = { a, b };
	struct tensor *t;
	if (*out == TENSOR_NONE && (*out = tensor_new(c, suffix, TK_ACT, 0)) < 0)
		return -1;
	o->in[0] = a;
	o->in[1] = b;
	o->out = *out;
	for (int j = 0; j < 2; j++) {
		if (rd[j] == TENSOR_NONE)
			continue;
		t = &c->out->t[rd[j]];
		if (t->first_reader == TENSOR_NONE)
			t->first_reader = i;
		t->last_reader = i;
	}
	t = &c->out->t[*out];
	if (t->producer == TENSOR_NONE)
		t->producer = i;
	t->ready = i;
	t->elems += o->kind == OP_GEMM ? o->m * o->n * o->repeat : o->out_elems;
	return 0;
}

/* A GEMM op's operands, elements over all repeats (each checked by gemm). */
static int64_t a_size(const struct op *o)
{
	return o->a_elems * o->repeat;
}

static int64_t b_size(const struct op *o)
{
	return o->k * o->n * o->repeat;
}

static int push_coll(struct ctx *c, const char *suffix, int grad, int kind, const struct ici_group *g, int64_t v,
		     int64_t in, int64_t out_elems, int eb, int32_t a, int32_t *out, const char *out_suffix);

/*
 * The op just pushed (a collective) goes before the one pushed before it (a
 * GEMM not attached yet), reading a and writing *out (attach_op).
 */
static int before_last(struct ctx *c, int32_t a, int32_t *out, const char *suffix)
{
	struct op *v = c->out->v, t = v[c->out->n - 1];
	v[c->out->n - 1] = v[c->out->n - 2];
	v[c->out->n - 2] = t;
	return attach_op(c, c->out->n - 2, a, TENSOR_NONE, out, suffix);
}

/*
 * A weight of the op just pushed: its A (when a_side) or its B. Sharded by
 * FSDP (shard.h), the chip holds 1/fsdp of it (rounded up) and gathers it
 * first: the all-gather (suffix, ".gather") goes before the op, and the op
 * reads what it gathered (the weight's ".gathered" copy).
 */
static int32_t weight(struct ctx *c, const char *suffix, bool a_side)
{
	const struct op *o = last(c);
	int64_t e = a_side ? a_size(o) : b_size(o);
	if (!c->lp || c->lp->fsdp == 1)
		return tensor_new(c, suffix, TK_WEIGHT, e);
	int64_t f = c->lp->fsdp;
	int32_t shard = tensor_new(c, suffix, TK_WEIGHT, e / f + (e % f != 0)), full = TENSOR_NONE;
	if (shard < 0 || push_coll(c, suffix, OG_GATHER, COLL_ALL_GATHER, &c->lp->g_fsdp, e, e / f + (e % f != 0), e, 0,
				   TENSOR_NONE, NULL, NULL) < 0)
		return -1;
	if (before_last(c, shard, &full, suffix) < 0)
		return -1;
	c->out->t[full].role = TR_GATHERED;
	c->out->t[full].of = shard;
	return full;
}

static int act_input(struct ctx *c, int j, int64_t elems, int32_t *t);

/* Sequence parallelism (shard.h): how many ways the token-wise rows are split, 1 without it. */
static int64_t seq_ways(const struct ctx *c)
{
	return c->lp && c->lp->sequence ? c->lp->tensor : 1;
}

/*
 * This chip's share of n elements of token-wise rows under sequence
 * parallelism, 1/tensor of them (n itself without it); -1 with the error
 * set at key when the tensor degree does not divide them.
 */
static int64_t seq_share(struct ctx *c, const char *key, int64_t n, const char *what)
{
	int64_t t = seq_ways(c);
	if (n % t)
		return shape_err(c, key, "expected a multiple of mesh.tensor (%lld) under mesh.sequence (each chip takes an "
				 "equal share of the rows), found %lld %s on a chip", (long long)t, (long long)n, what);
	return n / t;
}

/*
 * Tensor parallelism (shard.h): the activation input *x (act_input) of the
 * column-split GEMM just pushed (q_proj, up, a fc or linear split by
 * columns), made whole on every chip of the tensor axis first. Under
 * sequence parallelism each chip holds 1/tensor of its rows and an
 * all-gather joins them ("seq_gather"); else Megatron's f, an identity in
 * the forward whose backward all-reduces the input's gradient ("tp_in").
 * The GEMMs read what it writes (*x replaced). Only act_input without
 * tensor parallelism.
 */
static int split_input(struct ctx *c, const char *key, int32_t *x)
{
	const struct op *o = last(c);
	int64_t whole = a_size(o), part = seq_share(c, key, o->a_elems, "input elements");
	if (!c->lp || c->lp->tensor == 1)
		return act_input(c, 0, whole, x);
	if (part < 0)
		return -1;
	bool sp = c->lp->sequence;
	const char *name = sp ? "seq_gather" : "tp_in";
	int32_t y = TENSOR_NONE;
	part *= o->repeat;
	if (act_input(c, 0, sp ? part : whole, x) < 0 ||
	    push_coll(c, name, OG_NONE, sp ? COLL_ALL_GATHER : COLL_ALL_REDUCE, &c->lp->g_tensor, whole, sp ? part : whole,
		      whole, 0, TENSOR_NONE, NULL, NULL) < 0)
		return -1;
	last(c)->identity = !sp;
	if (before_last(c, *x, &y, name) < 0)
		return -1;
	*x = y;
	return 0;
}

/*
 * The layer's activation input j (operand order) of elems elements, found on
 * the first call for j: the output of the layer that inputs names (which must
 * have that size; WORKLOAD_NEW_INPUT names a new network input), else for j = 0 the previous layer's output when it has
 * that size, else a new network input ("in", or "in0" and "in1"). Sets *t;
 * returns 0, or -1 with the error set.
 */
static int act_input(struct ctx *c, int j, int64_t elems, int32_t *t)
{
	const struct layer *l = c->l;
	static const char *const two[] = { "in0", "in1" };
	int n = workload_ninputs(l);
	SIM_ASSERT(j < n && (l->ninputs == 0 || l->ninputs == n));
	if (c->in[j] != TENSOR_NONE) {
		*t = c->in[j];
		return 0;
	}
	if (l->ninputs && l->inputs[j] == WORKLOAD_NEW_INPUT) {
		if ((*t = tensor_new(c, n == 1 ? "in" : two[j], TK_INPUT, elems)) < 0)
			return -1;
	} else if (l->ninputs) {
		char key[16], q[300];
		int32_t src = l->inputs[j];
		const struct tensor *out;
		SIM_ASSERT(src >= 0 && (size_t)src < c->idx);
		out = &c->out->t[c->layer_out[src]];
		snprintf(key, sizeof key, "inputs[%d]", j);
		if (out->elems != elems)
			return shape_err(c, key, "expected a layer whose output has %lld elements (what this layer reads), "
					 "found \"%s\" with %lld", (long long)elems,
					 err_quote(q, sizeof q, c->w->layers[src].name, 60), (long long)out->elems);
		*t = c->layer_out[src];
	} else if (j == 0 && c->idx > 0 && c->out->t[c->layer_out[c->idx - 1]].elems == elems) {
		*t = c->layer_out[c->idx - 1];
	} else if ((*t = tensor_new(c, n == 1 ? "in" : two[j], TK_INPUT, elems)) < 0) {
		return -1;
	}
	c->in[j] = *t;
	return 0;
}

/* Attaches the layer's one GEMM just pushed: activation A, weight B ("w"), writing the layer's output. */
static int attach_dense(struct ctx *c, int64_t a_elems)
{
	int32_t a, b, out = TENSOR_NONE;
	if (act_input(c, 0, a_elems, &a) < 0 || (b = weight(c, "w", false)) < 0)
		return -1;
	return attach(c, a, b, &out, "out");
}

/* Attaches a layer's one vector op just pushed: its n inputs of equal size, writing the layer's output. */
static int attach_vec(struct ctx *c, int n)
{
	int32_t in[2] = { TENSOR_NONE, TENSOR_NONE }, out = TENSOR_NONE;
	for (int j = 0; j < n; j++)
		if (act_input(c, j, last(c)->in_elems / n, &in[j]) < 0)
			return -1;
	return attach(c, in[0], in[1], &out, "out");
}

/*
 * Pushes op suffix once its sizes are known to fit: no product overflowed
 * (mul), and the workload's running total, with each of the op's n totals
 * added, stays within LOWER_LIMIT. NULL with the error set.
 */
static struct op *push_counted(struct ctx *c, const char *suffix, const int64_t *totals, int n)
{
	char name[OP_NAME_MAX];
	struct op *o;
	if (c->overflow) {
		shape_err(c, NULL, "expected sizes whose products fit in 58 bits, found a larger product in %s",
			  ctx_name(c, suffix, name, sizeof name));
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!count(c, totals[i])) {
			shape_err(c, NULL, "expected a workload whose total work fits in 58 bits, found more");
			return NULL;
		}
	if (!(o = push(c, suffix))) {
		if (c->out->n >= LOWER_MAX_OPS)
			shape_err(c, NULL, "expected at most %d ops in a workload, found more", LOWER_MAX_OPS);
		else
			err_nomem(c->e, NULL);
	}
	return o;
}

static int gemm(struct ctx *c, const char *suffix, int64_t m, int64_t k, int64_t n, int64_t repeat,
		bool a_weight, bool b_weight)
{
	struct op *o;
	repeat = mul(c, repeat, c->l->repeat);
	/* Operand sizes and MACs must all fit; bytes are at most 4x these. */
	int64_t sa = mul(c, mul(c, m, k), repeat), sb = mul(c, mul(c, k, n), repeat), sc = mul(c, mul(c, m, n), repeat);
	int64_t macs = mul(c, mul(c, mul(c, m, k), n), repeat);
	if (!(o = push_counted(c, suffix, (const int64_t[]){ macs, sa, sb, sc }, 4)))
		return -1;
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
	struct op *o;
	in = mul(c, in, c->l->repeat);
	out = mul(c, out, c->l->repeat);
	lane_ops = mul(c, lane_ops, c->l->repeat);
	if (!(o = push_counted(c, suffix, (const int64_t[]){ in, out, lane_ops }, 3)))
		return -1;
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
	/*
	 * The tensor read is the whole input, every group and instance: more
	 * than M x K when the windows skip some of it (a stride beyond the
	 * filter), and then the rest counts toward the workload's total too.
	 */
	char name[OP_NAME_MAX];
	int64_t whole = mul(c, mul(c, mul(c, mul(c, batch, l->in_h), l->in_w), l->in_c), l->repeat);
	int64_t sa = o->m * o->k * o->repeat;
	if (c->overflow)
		return shape_err(c, NULL, "expected sizes whose products fit in 58 bits, found a larger product in %s",
				 op_name(o, name, sizeof name));
	if (whole > sa && !count(c, whole - sa))
		return shape_err(c, NULL, "expected a workload whose total work fits in 58 bits, found more");
	return attach_dense(c, whole);
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
	if (vec(c, "", kind, in, out, mul(c, out, window)) < 0)
		return -1;
	return attach_vec(c, 1);
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
	if (gemm(c, "", m, l->k, n, rep, aw, bw) < 0)
		return -1;
	/* The layer's operand files (workload.h), in layer order: each the shape of its operand (one sample's when rep is the batch). */
	for (; c->file < c->w->nfiles && c->w->files[c->file].layer == c->idx; c->file++) {
		const struct layer_file *f = &c->w->files[c->file];
		int64_t r = f->operand ? l->k : m, k = f->operand ? n : l->k;
		char q[LIMIT_QUOTE_BUF];
		if (f->head.rows != r || f->head.cols != k)
			return err_at(c->e, f->at, f->key, "expected a %lld x %lld array (%s of the layer's GEMM), found %lld x "
				      "%lld in \"%s\"", (long long)r, (long long)k, f->operand ? "K x N" : "M x K",
				      (long long)f->head.rows, (long long)f->head.cols, err_quote(q, sizeof q, f->path, LIMIT_PATH));
	}
	/* Activation operands in order A, B; a weight is "w", or "wa" and "wb" when both are. */
	int32_t a, b, out = TENSOR_NONE;
	int j = 0;
	if (aw ? (a = weight(c, bw ? "wa" : "w", true)) < 0 : act_input(c, j++, a_size(last(c)), &a) < 0)
		return -1;
	if (bw ? (b = weight(c, aw ? "wb" : "w", false)) < 0 : act_input(c, j, b_size(last(c)), &b) < 0)
		return -1;
	return attach(c, a, b, &out, "out");
}

/*
 * A dropout of tensor x when the step has dropout (c->drop_eb): op suffix
 * reads x and writes *y (named ysuffix, made when TENSOR_NONE) and x's mask,
 * 1 byte an element. *y is x itself without dropout. Returns 0 or -1.
 */
static int dropout(struct ctx *c, const char *suffix, int32_t x, int32_t *y, const char *ysuffix)
{
	struct op *o;
	if (!c->drop_eb) {
		*y = x;
		return 0;
	}
	int64_t n = c->out->t[x].elems, me = n / c->drop_eb + (n % c->drop_eb != 0);
	if (!(o = push_counted(c, suffix, (const int64_t[]){ n, n + me, 2 * n }, 3)))
		return -1;
	o->kind = OP_VEC;
	o->vec = VEC_DROPOUT;
	o->in_elems = n;
	o->out_elems = n + me;
	o->lane_ops = n * vector_ops_per_elem(VEC_DROPOUT);
	if (attach(c, x, TENSOR_NONE, y, ysuffix) < 0)
		return -1;
	c->out->t[*y].elems = n;
	int32_t m = tensor_new(c, ysuffix, TK_ACT, me);
	if (m < 0)
		return -1;
	c->out->t[m].role = TR_MASK;
	c->out->t[m].of = *y;
	c->out->t[m].producer = c->out->t[m].ready = (int32_t)(c->out->n - 1);
	return 0;
}

/*
 * The layer's last GEMM, just pushed, reading a and weight wt, ends the
 * layer: split by its rows over the tensor axis (shard.h), it writes partial
 * sums (partial) that an all-reduce (sum) adds, or under sequence
 * parallelism a reduce-scatter (scatter) that leaves each chip its
 * 1/tensor of the rows (split_input made sure it divides); with dropout,
 * what comes before it is pre; elems: the layer's output, over its repeats.
 */
static int finish(struct ctx *c, int32_t a, int32_t wt, const char *partial, const char *sum, const char *scatter,
		  const char *pre, int64_t elems)
{
	int32_t t = TENSOR_NONE, out = TENSOR_NONE;
	bool tp = c->lp && c->lp->tensor > 1, sp = seq_ways(c) > 1;
	if (attach(c, a, wt, &t, tp ? partial : c->drop_eb ? pre : "out") < 0)
		return -1;
	if (tp) {
		int32_t s = TENSOR_NONE;
		SIM_ASSERT(elems % seq_ways(c) == 0);
		if (push_coll(c, sp ? scatter : sum, OG_NONE, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, &c->lp->g_tensor,
			      elems, elems, elems / seq_ways(c), 0, t, &s, c->drop_eb ? pre : "out") < 0)
			return -1;
		t = s;
	}
	return c->drop_eb ? dropout(c, "dropout", t, &out, "out") : 0;
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
	/* Tensor parallelism (shard.h): this chip's heads, and their K, V heads. */
	int64_t tp = c->lp ? c->lp->tensor : 1;
	if (tp > 1) {
		if (g % tp)
			return shape_err(c, l->kv_heads ? "kv_heads" : "heads", "expected a multiple of mesh.tensor (%lld: each "
					 "chip takes whole key and value heads), found %lld", (long long)tp, (long long)g);
		h /= tp;
		g /= tp;
	}
	grp = h / g;
	q = l->mode == ATTN_DECODE ? 1 : l->seq;
	kv = l->mode == ATTN_DECODE ? l->kv_cache + 1 : l->seq;
	rows = mul(c, batch, q);

	int32_t in, wt, tq = TENSOR_NONE, tk = TENSOR_NONE, tv = TENSOR_NONE, kc = TENSOR_NONE, vc = TENSOR_NONE;
	int32_t scores = TENSOR_NONE, probs = TENSOR_NONE, ctx = TENSOR_NONE;
	if (gemm(c, "q_proj", rows, l->d_model, mul(c, h, hd), 1, false, true) < 0 ||
	    split_input(c, "seq", &in) < 0 || (wt = weight(c, "wq", false)) < 0 ||
	    attach(c, in, wt, &tq, "q") < 0)
		return -1;
	if (gemm(c, "k_proj", rows, l->d_model, mul(c, g, hd), 1, false, true) < 0 || (wt = weight(c, "wk", false)) < 0 ||
	    attach(c, in, wt, &tk, "k") < 0)
		return -1;
	if (gemm(c, "v_proj", rows, l->d_model, mul(c, g, hd), 1, false, true) < 0 || (wt = weight(c, "wv", false)) < 0 ||
	    attach(c, in, wt, &tv, "v") < 0)
		return -1;
	if (l->mode == ATTN_DECODE) {
		/* The new token's key and value join the cache in HBM; the products read the cache. */
		int64_t cache = mul(c, mul(c, mul(c, mul(c, batch, l->kv_cache), g), hd), l->repeat);
		if ((kc = tensor_new(c, "k_cache", TK_CACHE, cache)) < 0 ||
		    (vc = tensor_new(c, "v_cache", TK_CACHE, cache)) < 0)
			return -1;
		tk = kc;
		tv = vc;
	}

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
		if (gemm(c, "qk", mul(c, r, grp), hd, keys, mul(c, batch, g), false, false) < 0 ||
		    attach(c, tq, tk, &scores, "scores") < 0)
			return -1;
		soft += mul(c, mul(c, mul(c, batch, h), r), keys);
	}
	c->block = -1;
	if (vec(c, "softmax", VEC_SOFTMAX, soft, soft, mul(c, soft, vector_ops_per_elem(VEC_SOFTMAX))) < 0 ||
	    attach(c, scores, TENSOR_NONE, &probs, "probs") < 0)
		return -1;
	int32_t kept = TENSOR_NONE;
	if (dropout(c, "probs_dropout", probs, &kept, "probs_dropped") < 0)
		return -1;
	for (int64_t i = 0; i < nb; i++) {
		int64_t r = q - i * cb < cb ? q - i * cb : cb, keys = blocked ? i * cb + r : kv;
		c->block = blocked ? (int32_t)i : -1;
		if (gemm(c, "pv", mul(c, r, grp), keys, hd, mul(c, batch, g), false, false) < 0 ||
		    attach(c, kept, tv, &ctx, "ctx") < 0)
			return -1;
	}
	c->block = -1;
	if (gemm(c, "o_proj", rows, mul(c, h, hd), l->d_model, 1, false, true) < 0 || (wt = weight(c, "wo", false)) < 0)
		return -1;
	return finish(c, ctx, wt, "o_partial", "o_allreduce", "o_scatter", "proj",
		      mul(c, mul(c, rows, l->d_model), l->repeat));
}

/* The activation's op is named as its layer type: relu, gelu and silu follow the order of enum act_kind. */
_Static_assert(L_GELU == L_RELU + ACT_GELU && L_SILU == L_RELU + ACT_SILU, "activations in layer type order");

static int lower_mlp(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	static const int act_vec[] = { VEC_RELU, VEC_GELU, VEC_SILU };
	/* Tensor parallelism (shard.h): this chip's columns of the hidden width. */
	int64_t tp = c->lp ? c->lp->tensor : 1, dff = l->d_ff / tp;
	if (l->d_ff % tp)
		return shape_err(c, "d_ff", "expected a multiple of mesh.tensor (%lld), found %lld", (long long)tp,
				 (long long)l->d_ff);
	int64_t rows = mul(c, batch, l->tokens), hidden = mul(c, rows, dff);
	int act = act_vec[l->activation];
	int32_t in, wt, th = TENSOR_NONE, tg = TENSOR_NONE, ta = TENSOR_NONE, tm = TENSOR_NONE;
	/* h = x W_up; gated: g = x W_gate, act = act(g), gated = act * h; else act = act(h); out = (gated or act) W_down */
	if (gemm(c, "up", rows, l->d_model, dff, 1, false, true) < 0 || split_input(c, "tokens", &in) < 0 ||
	    (wt = weight(c, "w_up", false)) < 0 || attach(c, in, wt, &th, "h") < 0)
		return -1;
	if (l->gated && (gemm(c, "gate", rows, l->d_model, dff, 1, false, true) < 0 ||
			 (wt = weight(c, "w_gate", false)) < 0 || attach(c, in, wt, &tg, "g") < 0))
		return -1;
	if (vec(c, layer_type_names[L_RELU + l->activation], act, hidden, hidden,
		mul(c, hidden, vector_ops_per_elem(act))) < 0 ||
	    attach(c, l->gated ? tg : th, TENSOR_NONE, &ta, "act") < 0)
		return -1;
	if (l->gated && (vec(c, "mul", VEC_MUL, mul(c, 2, hidden), hidden, hidden) < 0 || attach(c, ta, th, &tm, "gated") < 0))
		return -1;
	if (gemm(c, "down", rows, dff, l->d_model, 1, false, true) < 0 || (wt = weight(c, "w_down", false)) < 0)
		return -1;
	return finish(c, l->gated ? tm : ta, wt, "down_partial", "down_allreduce", "down_scatter", "down",
		      mul(c, mul(c, rows, l->d_model), l->repeat));
}

/*
 * fc and linear: M = batch x tokens, K = in_features, N = out_features, the
 * weight B. Split by columns over the tensor axis (shard.h), N is this
 * chip's 1/tensor of them, the last part padded as Megatron-LM pads a
 * vocabulary; else under sequence parallelism M is its share of the rows.
 */
static int lower_dense(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	int64_t rows = mul(c, batch, l->tokens), n = l->out_features, tp = c->lp ? c->lp->tensor : 1;
	bool cols = l->split == DENSE_COLUMNS && tp > 1;
	if (cols)
		n = n / tp + (n % tp != 0);
	else if ((rows = seq_share(c, "tokens", rows, "rows")) < 0)
		return -1;
	if (gemm(c, "", rows, l->in_features, n, 1, false, true) < 0)
		return -1;
	if (!cols)
		return attach_dense(c, a_size(last(c)));
	int32_t a, b, out = TENSOR_NONE;
	last(c)->col_split = true;
	if (split_input(c, "tokens", &a) < 0 || (b = weight(c, "w", false)) < 0)
		return -1;
	return attach(c, a, b, &out, "out");
}

/* add and mul: two inputs of batch x elements, one output; one lane op per element out. */
static int lower_binary(struct ctx *c, int64_t batch)
{
	int64_t n = seq_share(c, "elements", mul(c, batch, c->l->elements), "elements");
	SIM_ASSERT(c->vec >= 0);
	if (n < 0)
		return -1;
	if (vec(c, "", c->vec, mul(c, 2, n), n, n) < 0)
		return -1;
	return attach_vec(c, 2);
}

/* An elementwise op of one input: batch x elements in and out, the vector unit's ops per element. */
static int lower_unary(struct ctx *c, int64_t batch)
{
	int64_t n = seq_share(c, "elements", mul(c, batch, c->l->elements), "elements");
	SIM_ASSERT(c->vec >= 0);
	if (n < 0)
		return -1;
	if (vec(c, "", c->vec, n, n, mul(c, n, vector_ops_per_elem(c->vec))) < 0)
		return -1;
	return attach_vec(c, 1);
}

/*
 * The list text of key (a collective's shape or axes, workload_yaml.c joins
 * a sequence with ", "), split at commas and spaces: its items into item[]
 * (at most max, each under 16 bytes); returns how many, or -1 with the error
 * set at the key.
 */
static int list_items(struct ctx *c, const char *key, const char *text, char item[][16], int max)
{
	int n = 0;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ", []");
		if (!len) {
			p++;
			continue;
		}
		if (n == max || len >= 16)
			return shape_err(c, key, "expected a list of at most %d short items, found \"%s\"", max, text);
		snprintf(item[n++], 16, "%.*s", (int)len, p);
		p += len;
	}
	if (!n)
		return shape_err(c, key, "expected a list of at least one item, found \"%s\"", text);
	return n;
}

/*
 * Pushes collective kind (suffix; grad its name's part) of v elements among
 * g: a chip holds in elements before and out after; it reads tensor a and
 * writes *out (made, named out_suffix, when TENSOR_NONE). eb: its elements'
 * bytes, 0 the run's. Returns 0, or -1 with the error set.
 */
static int push_coll(struct ctx *c, const char *suffix, int grad, int kind, const struct ici_group *g, int64_t v,
		     int64_t in, int64_t out_elems, int eb, int32_t a, int32_t *out, const char *out_suffix)
{
	struct op *o = push_counted(c, suffix, (const int64_t[]){ in, out_elems }, 2);
	if (!o)
		return -1;
	o->kind = OP_COLL;
	o->grad = (uint8_t)grad;
	o->coll = kind;
	o->grp = *g;
	o->coll_eb = (uint8_t)eb;
	o->coll_elems = v;
	o->in_elems = in;
	o->out_elems = out_elems;
	return a == TENSOR_NONE && out == NULL ? 0 : attach(c, a, TENSOR_NONE, out, out_suffix);
}

/*
 * A collective (models/ici.h): shape's product is its array's elements, V;
 * each chip holds V / N of it where the collective shards it (N the chips of
 * its axes on the pod), rounded up. Its tensors count elements of the run's
 * dtype, as every tensor's do.
 */
static int lower_coll(struct ctx *c, int64_t batch)
{
	const struct layer *l = c->l;
	char item[8][16];
	int64_t v = 1;
	unsigned axes = 0;
	(void)batch;
	int n = list_items(c, "shape", l->shape, item, 8);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char *end;
		long long d = strtoll(item[i], &end, 10);
		if (*end || d < 1 || d > WORKLOAD_DIM_MAX)
			return shape_err(c, "shape", "expected dimensions that are integers in [1, %lld], found \"%s\"",
					 (long long)WORKLOAD_DIM_MAX, item[i]);
		v = mul(c, v, d);
	}
	if ((n = list_items(c, "axes", l->axes, item, ICI_NAXES)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		int a = 0;
		while (ici_axis_names[a] && strcmp(ici_axis_names[a], item[i]))
			a++;
		if (!ici_axis_names[a])
			return shape_err(c, "axes", "expected axes of the pod (x, y, z, dcn), found \"%s\"", item[i]);
		if (axes >> a & 1)
			return shape_err(c, "axes", "expected each axis once, found %s twice", item[i]);
		axes |= 1u << a;
	}
	if (c->vec == COLL_SEND_RECV && n > 1)
		return shape_err(c, "axes", "expected one axis (a send goes to the next chip along it), found %d", n);
	struct ici_group grp;
	if (c->lp)
		ici_group_of(c->lp->pod, axes, &grp);
	else
		for (int a = 0; a < ICI_NAXES; a++)
			grp.n[a] = 1;           /* one chip */
	int64_t g = ici_group_chips(&grp), part = v / g + (v % g != 0);
	int64_t in = c->vec == COLL_ALL_GATHER || c->vec == COLL_ALL_TO_ALL ? part : v;
	int64_t out = c->vec == COLL_REDUCE_SCATTER || c->vec == COLL_ALL_TO_ALL ? part : v;
	in = mul(c, in, l->repeat);
	out = mul(c, out, l->repeat);
	if (push_coll(c, "", OG_NONE, c->vec, &grp, mul(c, v, l->repeat), in, out,
		      l->coll_dtype ? array_elem_bytes(l->coll_dtype - 1) : 0, TENSOR_NONE, NULL, NULL) < 0)
		return -1;
	return attach_vec(c, 1);
}

/*
 * Each layer type's lowering and vector op (layer_types.h). The address of
 * the function is taken, so a row must name one: NULL does not compile.
 */
#define LOWER_ROW(id, name, keys, inputs, fn, vk) [L_##id] = { &fn, vk },
static const struct {
	int (*fn)(struct ctx *c, int64_t batch);
	int vec;                        /* enum vec_kind, or -1 */
} lowerings[L_NTYPES] = { LAYER_TYPES(LOWER_ROW) };
#undef LOWER_ROW

int lower_workload(const struct workload *w, struct oplist *out, struct err *e)
{
	return lower_batch(w, w->batch, 0, NULL, out, e);
}

int lower_batch(const struct workload *w, int64_t batch, int drop_eb, const struct lower_pod *pod, struct oplist *out,
		struct err *e)
{
	struct ctx c = { w, NULL, 0, out, e, false, 0, -1, NULL, { TENSOR_NONE, TENSOR_NONE }, -1, 0, drop_eb, pod };
	int rc = 0;
	if (w->n > LOWER_MAX_OPS)
		return err_at(e, (struct pos){ w->file, 0, 0 }, "layers", "expected at most %d layers, found %zu",
			      LOWER_MAX_OPS, w->n);
	if (!(c.layer_out = malloc((w->n ? w->n : 1) * sizeof *c.layer_out)) ||
	    !(out->rows = malloc((w->n ? w->n : 1) * sizeof *out->rows))) {
		free(c.layer_out);
		return err_nomem(e, NULL);
	}
	out->rcap = w->n ? w->n : 1;
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		c.l = &w->layers[i];
		c.idx = i;
		c.in[0] = c.in[1] = TENSOR_NONE;
		c.vec = lowerings[c.l->type].vec;
		if (seq_ways(&c) > 1 && (c.l->type == L_CONV2D || c.l->type == L_MATMUL || c.l->type == L_POOL))
			rc = shape_err(&c, "type", "expected a layer sequence parallelism splits by its rows under "
				       "mesh.sequence (attention, mlp, fc, linear, an elementwise layer or a collective), "
				       "found %s", layer_type_names[c.l->type]);
		else
			rc = lowerings[c.l->type].fn(&c, batch);
		if (rc == 0) {
			out->rows[out->nrows++] = (struct oprow){ i, PH_FORWARD };
			c.layer_out[i] = out->v[out->n - 1].out;
			SIM_ASSERT(!strcmp(out->t[c.layer_out[i]].suffix, "out"));
		}
	}
	free(c.layer_out);
	return rc;
}

void oplist_release(struct oplist *l)
{
	free(l->v);
	free(l->t);
	free(l->rows);
	l->v = NULL;
	l->t = NULL;
	l->rows = NULL;
	l->n = l->cap = l->nt = l->tcap = l->nrows = l->rcap = 0;
}

const char *tensor_name(const struct tensor *t, char *buf, size_t size)
{
	return name_of(t->layer_name ? t->layer_name : "op", t->suffix ? t->suffix : "", t->block,
		       t->role >= TR_VALUE && t->role <= TR_GATHERED ? role_part[t->role] : "", buf, size);
}

int64_t op_macs(const struct op *o)
{
	return o->kind == OP_GEMM ? o->m * o->k * o->n * o->repeat : 0;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t c;
	return __builtin_add_overflow(a, b, &c) ? INT64_MAX : c;
}

/* Whether t counts as a weight's gradient (else, written by the run, an activation). */
static bool weight_grad(const struct oplist *l, const struct tensor *t)
{
	return t->role == TR_GRAD && t->of >= 0 && (size_t)t->of < l->nt && l->t[t->of].kind == TK_WEIGHT;
}

int lower_hbm_need(const struct oplist *l, int64_t need[NEED_N])
{
	/*
	 * The activations' and gradients' liveness as difference arrays over
	 * the ops: + at the first writer, - after the last use. Their length is
	 * the ops' or past the last op a tensor names, whichever is more: a
	 * plan's placed ops borrow the lowered tensors, whose op numbers are the
	 * lowering's.
	 */
	int32_t last = (int32_t)l->n - 1;
	for (size_t i = 0; i < l->nt; i++) {
		const struct tensor *t = &l->t[i];
		int32_t m = t->producer > t->ready ? t->producer : t->ready;
		m = t->last_reader > m ? t->last_reader : m;
		last = t->kind == TK_ACT && m > last ? m : last;
	}
	int64_t *delta = calloc(2 * (size_t)(last + 2), sizeof *delta), live[2] = { 0, 0 }, peak = -1;
	if (!delta)
		return -1;
	for (int k = 0; k < NEED_N; k++)
		need[k] = 0;
	for (size_t i = 0; i < l->nt; i++) {
		const struct tensor *t = &l->t[i];
		static const int part[] = { [TK_INPUT] = NEED_INPUTS, [TK_WEIGHT] = NEED_WEIGHTS, [TK_CACHE] = NEED_CACHES,
					    [TK_STATE] = NEED_STATE };
		if (t->kind != TK_ACT) {
			need[part[t->kind]] = add_sat(need[part[t->kind]], t->elems);
			continue;
		}
		int32_t from = t->producer, to = t->last_reader > t->ready ? t->last_reader : t->ready;
		int64_t *d = delta + (weight_grad(l, t) ? (size_t)(last + 2) : 0);
		if (from < 0)
			continue;                       /* TENSOR_NONE: nothing writes it */
		if (t->last_reader == TENSOR_NONE)
			to = t->role == TR_VALUE ? last : t->ready;   /* an output: in HBM to the end; a dropped copy: at its writer */
		to = to < from ? from : to;
		/* A sum of gradients (train.h) takes its first input's place: it is there from the next op, if at all. */
		if ((size_t)from < l->n && (l->v[from].grad == OG_GSUM || l->v[from].grad == OG_GACC) && ++from > to)
			continue;
		d[from] = add_sat(d[from], t->elems);
		d[to + 1] -= t->elems < INT64_MAX ? t->elems : 0;
	}
	for (int32_t i = 0; i <= last; i++) {
		live[0] = add_sat(live[0], delta[i]);
		live[1] = add_sat(live[1], delta[(size_t)(last + 2) + (size_t)i]);
		if (add_sat(live[0], live[1]) > peak) {
			peak = add_sat(live[0], live[1]);
			need[NEED_ACTIVATIONS] = live[0];
			need[NEED_GRADIENTS] = live[1];
		}
	}
	free(delta);
	return 0;
}
