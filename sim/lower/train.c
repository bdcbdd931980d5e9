/*
 * train.c - a training step from the forward ops (see train.h).
 *
 * The forward ops are the lowering's; everything after them is pushed here,
 * op by op, each attached to the tensors it reads and writes as lowering
 * attaches its own (lower.h): the engine waits for a tensor's last writer,
 * and the HBM need follows each tensor from its first writer to its last
 * reader. Gradients are new tensors, never a tensor written again: a
 * tensor's readers come after all its writers.
 */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "vector.h"

const char *const train_optimizer_names[] = { "sgd", "momentum", "adam", "adamw", NULL };
const char *const train_remat_names[] = { "none", "full", "save_dots", NULL };
const char *const train_input_grads_names[] = { "auto", "true", "false", NULL };

#define F(x) offsetof(struct train_params, x)
const struct cfg_key train_keys[] = {
	{ "enabled", CFG_BOOL, F(enabled), "", "false", 0, 0, NULL,
	  "a training step (forward, backward, optimizer) instead of inference; --train sets it" },
	{ "optimizer", CFG_ENUM, F(optimizer), "", "adamw", 0, 0, train_optimizer_names,
	  "the update: sgd, momentum, adam or adamw (their state: fp32 master weights below fp32, momentum 4 B, "
	  "adam 8 B per parameter)" },
	{ "remat", CFG_ENUM, F(remat), "", "none", 0, 0, train_remat_names,
	  "recomputation: none (keep what the backward reads), full (keep each block's input, run its forward "
	  "again), save_dots (keep GEMM outputs too, rerun the vector ops)" },
	{ "microbatches", CFG_INT, F(microbatches), "", "1", 1, 1 << 20, NULL,
	  "gradient accumulation: the batch in this many microbatches, one forward and backward each, then one update" },
	{ "dropout", CFG_DOUBLE, F(dropout), "", "0", 0, 0.99, NULL,
	  "dropout's probability; above 0, dropout after attention's probabilities, its output and an MLP's output, "
	  "its mask (1 B an element) kept for the backward" },
	{ "input_grads", CFG_ENUM, F(input_grads), "", "auto", 0, 0, train_input_grads_names,
	  "whether the network's inputs get gradients (a transformer's embedded tokens, whose table learns, do); auto: "
	  "all but those only convolutions read (images)" },
	CFG_END
};
#undef F

int train_state_bytes(const struct train_params *tp, int eb)
{
	int master = eb < 4 ? 4 : 0;
	switch (tp->optimizer) {
	case OPT_MOMENTUM: return master + 4;
	case OPT_ADAM:
	case OPT_ADAMW: return master + 8;
	default: return master;
	}
}

/* What the step knows of each tensor (indexed as oplist.t). */
struct tinfo {
	int32_t grad;           /* its gradient so far, or TENSOR_NONE */
	int32_t re;             /* its recomputed copy, or TENSOR_NONE */
	int32_t from;           /* the forward op whose backward gave grad last */
	int32_t mask;           /* the mask of the dropout that wrote it, or TENSOR_NONE */
	int64_t need;           /* the last segment (its serial) whose rerun needs it, or -1 */
	bool image;             /* a network input that only convolutions read */
	bool saved;             /* the backward reads it as the forward wrote it */
};

struct tc {
	const struct train_params *tp;
	int eb;
	struct oplist *l;
	struct tinfo *ti;       /* owned: l->tcap entries */
	size_t ticap;
	int32_t *rowmap;        /* owned: layers x PH_N, the row of each layer and phase, or -1 */
	size_t layers;
	int32_t *seg;           /* owned: per layer, its recomputation segment */
	size_t f0;              /* the first forward op of the microbatch being built */
	size_t nt0;             /* the first microbatch's forward tensors: [0, nt0) */
	int64_t segs;           /* segments recomputed so far (tinfo.need's serials) */
	const struct workload *w;
	const struct lower_pod *lp;     /* the pod's mesh (shard.h) */
	bool last;                      /* the last microbatch's backward: weights' gradients are final */
	struct err *e;
};

static int nomem(struct tc *c)
{
	return err_nomem(c->e, NULL);
}

/* Grows the tensor info with the tensors. */
static int grow_info(struct tc *c)
{
	if (c->ticap >= c->l->tcap)
		return 0;
	struct tinfo *t = realloc(c->ti, c->l->tcap * sizeof *t);
	if (!t)
		return nomem(c);
	for (size_t i = c->ticap; i < c->l->tcap; i++)
		t[i] = (struct tinfo){ TENSOR_NONE, TENSOR_NONE, TENSOR_NONE, TENSOR_NONE, -1, false, false };
	c->ti = t;
	c->ticap = c->l->tcap;
	return 0;
}

/* A new tensor named as like (an index), of kind and role; its index, or -1 with the error set. */
static int32_t tnew(struct tc *c, int32_t like, int kind, int role, int64_t elems)
{
	const struct tensor *src = &c->l->t[like];
	struct tensor t = { src->layer_name, src->suffix, src->block, kind, role, role == TR_VALUE ? TENSOR_NONE : like, elems,
			    TENSOR_NONE, TENSOR_NONE, TENSOR_NONE, TENSOR_NONE };
	int32_t i = oplist_add_tensor(c->l, &t);
	if (i < 0)
		return nomem(c);
	return grow_info(c) < 0 ? -1 : i;
}

/* The row of layer and phase, made at the end when it has none; -1 when memory ran out. */
static int32_t row_of(struct tc *c, size_t layer, int phase)
{
	struct oplist *l = c->l;
	int32_t *r = &c->rowmap[layer * PH_N + (size_t)phase];
	if (*r >= 0)
		return *r;
	if (l->nrows == l->rcap) {
		size_t cap = l->rcap ? 2 * l->rcap : 64;
		struct oprow *v = realloc(l->rows, cap * sizeof *v);
		if (!v)
			return nomem(c);
		l->rows = v;
		l->rcap = cap;
	}
	l->rows[l->nrows] = (struct oprow){ layer, phase };
	*r = (int32_t)l->nrows++;
	return *r;
}

/*
 * A new op named as op `like` (an index) with grad, in phase; its sizes
 * zero, no tensors. Its index, or -1 with the error set.
 */
static int32_t opush(struct tc *c, size_t like, int phase, int grad)
{
	struct oplist *l = c->l;
	if (l->n >= LOWER_MAX_OPS)
		return err_input(c->e, "--train: expected at most %d ops in a training step, found more (fewer "
				 "train.microbatches, or a smaller workload)", LOWER_MAX_OPS);
	struct op *o = oplist_add_op(l);
	if (!o)
		return nomem(c);
	const struct op *src = &l->v[like];
	o->layer_name = src->layer_name;
	o->suffix = src->suffix;
	o->block = src->block;
	o->layer = src->layer;
	o->pos = src->pos;
	o->kind = src->kind;
	o->phase = (uint8_t)phase;
	o->grad = (uint8_t)grad;
	int32_t row = row_of(c, src->layer, phase);
	if (row < 0)
		return -1;
	l->v[l->n - 1].row = (uint32_t)row;
	return (int32_t)l->n - 1;
}

/* Op i reads a and b (TENSOR_NONE: none) and writes out (TENSOR_NONE: none). */
static void link(struct tc *c, int32_t i, int32_t a, int32_t b, int32_t out)
{
	struct oplist *l = c->l;
	int32_t rd[2] = { a, b };
	l->v[i].in[0] = a;
	l->v[i].in[1] = b;
	l->v[i].out = out;
	for (int j = 0; j < 2; j++) {
		if (rd[j] == TENSOR_NONE)
			continue;
		struct tensor *t = &l->t[rd[j]];
		if (t->first_reader == TENSOR_NONE)
			t->first_reader = i;
		t->last_reader = i;
	}
	if (out != TENSOR_NONE) {
		struct tensor *t = &l->t[out];
		if (t->producer == TENSOR_NONE)
			t->producer = i;
		t->ready = i;
	}
}

/* A vector op of kind just pushed as i: in and out elements, lane operations. */
static void vsize(struct tc *c, int32_t i, int kind, int64_t in, int64_t out, int64_t lane_ops)
{
	struct op *o = &c->l->v[i];
	o->kind = OP_VEC;
	o->vec = kind;
	o->in_elems = in;
	o->out_elems = out;
	o->lane_ops = lane_ops;
}

/* A GEMM just pushed as i: m x k times k x n, repeated; which operands are weights; A's distinct elements. */
static void gsize(struct tc *c, int32_t i, int64_t m, int64_t k, int64_t n, int64_t repeat, bool aw, bool bw,
		  int64_t a_elems)
{
	struct op *o = &c->l->v[i];
	o->kind = OP_GEMM;
	o->m = m, o->k = k, o->n = n, o->repeat = repeat;
	o->a_weight = aw, o->b_weight = bw;
	o->a_elems = a_elems;
}

static bool needs_grad(const struct tc *c, int32_t t)
{
	if (t == TENSOR_NONE)
		return false;
	switch (c->l->t[t].kind) {
	case TK_WEIGHT:
	case TK_ACT: return true;
	case TK_INPUT: return c->tp->input_grads == IG_TRUE || (c->tp->input_grads == IG_AUTO && !c->ti[t].image);
	default: return false;
	}
}

/* Whether the backward reads forward tensor t as the forward wrote it: weights, inputs, what the policy keeps. */
static bool kept(const struct tc *c, int32_t t)
{
	return c->l->t[t].kind != TK_ACT || c->ti[t].saved;
}

/* The forward tensor t as the backward reads it: its recomputed copy when it was not kept. */
static int32_t rd(const struct tc *c, int32_t t)
{
	if (t == TENSOR_NONE || kept(c, t) || c->ti[t].re == TENSOR_NONE)
		return t;
	return c->ti[t].re;
}

/*
 * Whether forward ops f and g are query blocks of one causal attention
 * product whose gradients of t are parts of one tensor: t their A (rows
 * of queries, disjoint by block). Their B's (keys, values: prefixes that
 * overlap) are summed.
 */
static bool siblings(const struct tc *c, int32_t f, int32_t g, int32_t t)
{
	const struct op *a = &c->l->v[f], *b = &c->l->v[g];
	return (size_t)f >= c->f0 && a->block >= 0 && b->block >= 0 && a->layer == b->layer && a->suffix == b->suffix &&
	       a->in[0] == t && b->in[0] == t;
}

/*
 * Op i (just pushed, its inputs linked) writes a gradient of t for forward
 * op f: t's gradient when it has none yet or a sibling block wrote it,
 * else a part that an add joins with the gradient so far (".gsum"; ".gacc"
 * for a weight's gradient from an earlier microbatch). alias: op i is
 * TENSOR_NONE and the gradient is the tensor alias itself (an add's
 * backward). Returns 0, or -1 with the error set.
 */
static int contribute(struct tc *c, int32_t i, int32_t t, size_t f, int32_t alias)
{
	struct tinfo *ti = &c->ti[t];
	int32_t part;
	int64_t elems = c->l->t[t].elems, pe = elems;
	if (i >= 0 && c->l->v[i].kind == OP_GEMM) {
		const struct op *o = &c->l->v[i];     /* a part: what the op writes (a causal block's keys: a prefix) */
		pe = (o->c_elems ? o->c_elems : o->m * o->n) * o->repeat;
		pe = pe < elems ? pe : elems;
	}
	if (ti->grad != TENSOR_NONE && i >= 0 && siblings(c, ti->from, (int32_t)f, t)) {
		link(c, i, c->l->v[i].in[0], c->l->v[i].in[1], ti->grad);
		return 0;
	}
	if (alias != TENSOR_NONE)
		part = alias;
	else if ((part = tnew(c, t, TK_ACT, TR_GRAD, ti->grad == TENSOR_NONE ? elems : pe)) < 0)
		return -1;
	else
		link(c, i, c->l->v[i].in[0], c->l->v[i].in[1], part);
	ti = &c->ti[t];
	if (ti->grad == TENSOR_NONE) {
		ti->grad = part;
		ti->from = (int32_t)f;
		return 0;
	}
	bool acc = c->l->t[t].kind == TK_WEIGHT && (size_t)ti->from < c->f0;
	int32_t g, sum = opush(c, f, PH_BACKWARD, acc ? OG_GACC : OG_GSUM);
	if (sum < 0 || (g = tnew(c, t, TK_ACT, TR_GRAD, elems)) < 0)
		return -1;
	int64_t pn = c->l->t[part].elems;
	vsize(c, sum, VEC_ADD, 2 * pn, pn, pn);
	ti = &c->ti[t];
	link(c, sum, ti->grad, part, g);
	ti->grad = g;
	ti->from = (int32_t)f;
	return 0;
}

/*
 * The mask of the dropout that wrote t (a mask's "of" is its output; a
 * later microbatch's copies are paired by forward_copy).
 */
static int32_t mask_of(const struct tc *c, int32_t t)
{
	return t >= 0 && (size_t)t < c->l->nt ? c->ti[t].mask : TENSOR_NONE;
}

/*
 * Op i (just pushed) becomes collective kind of v elements (eb bytes each,
 * 0 the run's) among g, a chip holding in elements before and out after.
 */
static struct op *as_coll(struct tc *c, int32_t i, int kind, const struct ici_group *g, int64_t v, int eb, int64_t in,
			  int64_t out)
{
	struct op *o = &c->l->v[i];
	o->kind = OP_COLL;
	o->coll = kind;
	o->grp = *g;
	o->coll_eb = (uint8_t)eb;
	o->coll_elems = v;
	o->in_elems = in;
	o->out_elems = out;
	return o;
}

/*
 * Weight t's gradient is final (the last microbatch's contribution, from
 * forward op f): over a data axis (shard.h) an all-reduce sums it over the
 * data group before the update (".sync"), placed here so that it runs while
 * the backward goes on. Returns 0, or -1 with the error set.
 */
static int sync_grad(struct tc *c, int32_t t, size_t f)
{
	if (!c->last || !c->lp || c->lp->data == 1 || c->l->t[t].kind != TK_WEIGHT)
		return 0;
	int32_t g = c->ti[t].grad, i, s;
	int64_t n = c->l->t[g].elems;
	if ((i = opush(c, f, PH_BACKWARD, OG_SYNC)) < 0 || (s = tnew(c, t, TK_ACT, TR_GRAD, n)) < 0)
		return -1;
	struct op *o = as_coll(c, i, COLL_ALL_REDUCE, &c->lp->g_data, n, 0, n, n);
	/* Named after the weight: "attn.wq.sync". */
	o->suffix = c->l->t[t].suffix;
	o->block = -1;
	link(c, i, g, TENSOR_NONE, s);
	c->ti[t].grad = s;
	return 0;
}

/*
 * The backward of a collective of the mesh (shard.h): FSDP's gather of a
 * weight reduce-scatters the weight's gradient to its shard (".scatter");
 * Megatron's f all-reduces its input's gradient over the tensor axis; the
 * all-reduce of partial sums passes its gradient through as it is; under
 * sequence parallelism the gather of a block's input reduce-scatters its
 * gradient, and the reduce-scatter of its output all-gathers it.
 */
static int coll_backward(struct tc *c, size_t f, int32_t dy)
{
	struct op o = c->l->v[f];
	int32_t x = o.in[0], i;
	if (!needs_grad(c, x))
		return 0;
	if (o.coll == COLL_ALL_REDUCE && !o.identity)
		return contribute(c, -1, x, f, dy);
	if ((i = opush(c, f, PH_BACKWARD, o.grad == OG_GATHER ? OG_SCATTER : OG_DX)) < 0)
		return -1;
	int kind = o.coll == COLL_ALL_GATHER ? COLL_REDUCE_SCATTER : o.coll == COLL_REDUCE_SCATTER ? COLL_ALL_GATHER :
		   COLL_ALL_REDUCE;
	as_coll(c, i, kind, &o.grp, o.coll_elems, o.coll_eb, o.out_elems, o.in_elems);
	link(c, i, dy, TENSOR_NONE, TENSOR_NONE);
	if (contribute(c, i, x, f, TENSOR_NONE) < 0)
		return -1;
	return sync_grad(c, x, f);
}

/* The backward of forward op f, when its output has a gradient. */
static int backward(struct tc *c, size_t f)
{
	struct op o = c->l->v[f];
	int32_t dy = c->ti[o.out].grad, i;
	if (dy == TENSOR_NONE)
		return 0;
	if (o.kind == OP_COLL)
		return coll_backward(c, f, dy);
	if (o.kind == OP_GEMM) {
		int32_t a = o.in[0], b = o.in[1];
		bool acts = !o.a_weight && !o.b_weight;
		if (needs_grad(c, a)) {
			if ((i = opush(c, f, PH_BACKWARD, o.a_weight ? OG_DW : acts ? OG_DA : OG_DX)) < 0)
				return -1;
			gsize(c, i, o.m, o.n, o.k, o.repeat, false, o.b_weight, o.m * o.n);
			/* A convolution's dX: its m x k im2col rows sum into the whole input (col2im), a stride's skipped part too. */
			if (c->w->layers[o.layer].type == L_CONV2D && c->l->t[a].elems / o.repeat != o.m * o.k)
				c->l->v[i].c_elems = c->l->t[a].elems / o.repeat;
			link(c, i, dy, rd(c, b), TENSOR_NONE);
			if (contribute(c, i, a, f, TENSOR_NONE) < 0 || sync_grad(c, a, f) < 0)
				return -1;
		}
		if (needs_grad(c, b)) {
			if ((i = opush(c, f, PH_BACKWARD, o.b_weight ? OG_DW : OG_DB)) < 0)
				return -1;
			gsize(c, i, o.k, o.m, o.n, o.repeat, o.a_weight, false, o.a_elems ? o.a_elems : o.m * o.k);
			link(c, i, rd(c, a), dy, TENSOR_NONE);
			if (contribute(c, i, b, f, TENSOR_NONE) < 0 || sync_grad(c, b, f) < 0)
				return -1;
		}
		return 0;
	}
	int64_t dye = c->l->t[dy].elems;
	switch (o.vec) {
	case VEC_ADD:
		for (int j = 0; j < 2; j++)
			if (needs_grad(c, o.in[j]) && contribute(c, -1, o.in[j], f, dy) < 0)
				return -1;
		return 0;
	case VEC_DROPOUT: {
		int32_t x = o.in[0], m = mask_of(c, o.out);
		if (!needs_grad(c, x))
			return 0;
		int64_t n = c->l->t[x].elems;
		if ((i = opush(c, f, PH_BACKWARD, OG_BWD)) < 0)
			return -1;
		vsize(c, i, VEC_DROPOUT_BWD, dye + (m == TENSOR_NONE ? 0 : c->l->t[m].elems), n,
		      n * vector_ops_per_elem(VEC_DROPOUT_BWD));
		link(c, i, dy, m, TENSOR_NONE);
		return contribute(c, i, x, f, TENSOR_NONE);
	}
	case VEC_MUL:
		for (int j = 0; j < 2; j++) {
			if (!needs_grad(c, o.in[j]))
				continue;
			int64_t n = c->l->t[o.in[j]].elems;
			if ((i = opush(c, f, PH_BACKWARD, j ? OG_DB : OG_DA)) < 0)
				return -1;
			vsize(c, i, VEC_MUL, dye + n, n, n);
			link(c, i, dy, rd(c, o.in[1 - j]), TENSOR_NONE);
			if (contribute(c, i, o.in[j], f, TENSOR_NONE) < 0)
				return -1;
		}
		return 0;
	default:
		break;
	}
	int32_t x = o.in[0];
	if (!needs_grad(c, x))
		return 0;
	int64_t n = c->l->t[x].elems;
	static const int bwd[VEC_NKINDS] = { [VEC_RELU] = VEC_RELU_BWD, [VEC_GELU] = VEC_GELU_BWD, [VEC_SILU] = VEC_SILU_BWD,
					      [VEC_SOFTMAX] = VEC_SOFTMAX_BWD, [VEC_LAYERNORM] = VEC_LAYERNORM_BWD,
					      [VEC_MAXPOOL] = VEC_MAXPOOL_BWD, [VEC_AVGPOOL] = VEC_AVGPOOL_BWD };
	int k = bwd[o.vec];
	SIM_ASSERT(k);
	/* What it reads beside dY: softmax its output, average pooling nothing, the others their input. */
	int32_t saved = k == VEC_SOFTMAX_BWD ? rd(c, o.out) : k == VEC_AVGPOOL_BWD ? TENSOR_NONE : rd(c, x);
	int64_t se = saved == TENSOR_NONE ? 0 : c->l->t[saved].elems;
	int64_t lane = k == VEC_MAXPOOL_BWD || k == VEC_AVGPOOL_BWD ? o.lane_ops : n * vector_ops_per_elem(k);
	if ((i = opush(c, f, PH_BACKWARD, OG_BWD)) < 0)
		return -1;
	vsize(c, i, k, dye + se, n, lane);
	link(c, i, dy, saved, TENSOR_NONE);
	return contribute(c, i, x, f, TENSOR_NONE);
}

/* Which tensors the backward of forward op f reads from the forward (up to two, TENSOR_NONE for none). */
static void backward_reads(const struct tc *c, const struct op *o, int32_t r[2])
{
	r[0] = r[1] = TENSOR_NONE;
	if (o->kind == OP_COLL)
		return;                 /* its backward is a collective of the gradient alone */
	if (o->kind == OP_GEMM) {
		if (needs_grad(c, o->in[0]))
			r[0] = o->in[1];
		if (needs_grad(c, o->in[1]))
			r[1] = o->in[0];
		return;
	}
	switch (o->vec) {
	case VEC_ADD:
	case VEC_AVGPOOL: return;
	case VEC_MUL: r[0] = o->in[0], r[1] = o->in[1]; return;
	case VEC_DROPOUT: return;        /* its mask, which no rerun writes */
	case VEC_SOFTMAX: r[0] = o->out; return;
	default: r[0] = o->in[0]; return;
	}
}

/*
 * Marks what the backward of forward ops [f0, f1) reads as kept or not, by
 * the remat policy: what crosses segments, weights, inputs and network
 * outputs always; GEMM outputs with save_dots; everything with none.
 */
static void mark_saved(struct tc *c, size_t f0, size_t f1)
{
	struct oplist *l = c->l;
	for (size_t f = f0; f < f1; f++) {
		const struct op *o = &l->v[f];
		int32_t t = o->out;
		if (t == TENSOR_NONE)
			continue;
		const struct tensor *x = &l->t[t];
		bool keep = c->tp->remat == REMAT_NONE || x->last_reader == TENSOR_NONE ||
			    (c->tp->remat == REMAT_SAVE_DOTS && o->kind == OP_GEMM);
		/* Read in a later segment: it crosses. (Readers are forward ops of this microbatch, in [f0, f1).) */
		for (int32_t r = x->first_reader; !keep && r != TENSOR_NONE && r <= x->last_reader; r++) {
			const struct op *q = &l->v[r];
			keep = (q->in[0] == t || q->in[1] == t) && c->seg[q->layer] != c->seg[o->layer];
		}
		/* A weight gathered from its FSDP shards is gathered again for the backward (ZeRO stage 3), never kept. */
		if (x->role == TR_GATHERED)
			keep = false;
		c->ti[t].saved = keep;
	}
}

/* A copy of forward op f in phase, its row that phase's, no tensors yet; its index, or -1 with the error set. */
static int32_t clone(struct tc *c, size_t f, int phase)
{
	int32_t i = opush(c, f, phase, OG_NONE);
	if (i < 0)
		return -1;
	struct op *n = &c->l->v[i];
	uint32_t row = n->row;
	*n = c->l->v[f];
	n->phase = (uint8_t)phase;
	n->row = row;
	n->in[0] = n->in[1] = n->out = TENSOR_NONE;
	return i;
}

/* Reruns forward op f in the recompute phase, reading recomputed copies, writing its output's copy. */
static int rerun(struct tc *c, size_t f)
{
	struct op o = c->l->v[f];
	int32_t i = clone(c, f, PH_RECOMPUTE), out = o.out;
	if (i < 0)
		return -1;
	if (out != TENSOR_NONE && c->ti[out].re == TENSOR_NONE) {
		int32_t t = tnew(c, out, TK_ACT, TR_RECOMP, c->l->t[out].elems);
		if (t < 0)
			return -1;
		c->ti[out].re = t;
	}
	int32_t a = o.in[0] == TENSOR_NONE || c->ti[o.in[0]].re == TENSOR_NONE ? o.in[0] : c->ti[o.in[0]].re;
	int32_t b = o.in[1] == TENSOR_NONE || c->ti[o.in[1]].re == TENSOR_NONE ? o.in[1] : c->ti[o.in[1]].re;
	link(c, i, a, b, out == TENSOR_NONE ? TENSOR_NONE : c->ti[out].re);
	return 0;
}

/*
 * The recomputation of the segment of forward ops [s0, s1) before its
 * backward: full reruns every op; save_dots the vector ops whose outputs the
 * backward (or another rerun op) reads and were not kept.
 */
static int recompute(struct tc *c, size_t s0, size_t s1)
{
	struct oplist *l = c->l;
	int64_t s = c->segs++;
	bool *run = calloc(s1 - s0 + 1, sizeof *run);
	if (!run)
		return nomem(c);
	for (size_t f = s0; f < s1; f++) {
		int32_t r[2];
		backward_reads(c, &l->v[f], r);
		for (int j = 0; j < 2; j++)
			if (r[j] != TENSOR_NONE && !kept(c, r[j]))
				c->ti[r[j]].need = s;
	}
	for (size_t f = s1; f-- > s0;) {
		const struct op *o = &l->v[f];
		if (o->out == TENSOR_NONE || c->ti[o->out].need != s)
			continue;
		run[f - s0] = true;
		for (int j = 0; j < 2; j++)
			if (o->in[j] != TENSOR_NONE && !kept(c, o->in[j]))
				c->ti[o->in[j]].need = s;
	}
	int rc = 0;
	for (size_t f = s0; f < s1 && rc == 0; f++)
		if (run[f - s0])
			rc = rerun(c, f);
	free(run);
	return rc;
}

/*
 * Logits t split by columns over the tensor axis (written by forward op f,
 * a fc or linear split by columns, shard.h): the loss first all-reduces
 * three fp32 numbers a row, its max, the target's logit and the sum of
 * exponentials (Megatron-LM's vocabulary-parallel cross entropy), into *s;
 * TENSOR_NONE when the logits are whole. Its tensor counts elements of the
 * run's dtype, as every tensor's do. Returns 0, or -1 with the error set.
 */
static int loss_stats(struct tc *c, size_t f, int32_t t, int32_t *s)
{
	const struct op *o = &c->l->v[f];
	*s = TENSOR_NONE;
	if (o->kind != OP_GEMM || !o->col_split)
		return 0;
	int64_t n = 3 * o->m * o->repeat, e = (4 * n + c->eb - 1) / c->eb;
	int32_t i;
	if ((i = opush(c, f, PH_BACKWARD, OG_NONE)) < 0 || (*s = tnew(c, t, TK_ACT, TR_GRAD, e)) < 0)
		return -1;
	struct op *a = as_coll(c, i, COLL_ALL_REDUCE, &c->lp->g_tensor, n, 4, e, e);
	a->suffix = "loss_stats";
	a->block = -1;
	link(c, i, t, TENSOR_NONE, *s);
	return 0;
}

/* The loss's gradient of each network output among forward ops [f0, f1), given before the backward starts. */
static int losses(struct tc *c, size_t f0, size_t f1)
{
	for (size_t f = f1; f-- > f0;) {
		int32_t t = c->l->v[f].out, i, g;
		if (t == TENSOR_NONE || c->l->t[t].kind != TK_ACT || c->l->t[t].last_reader != TENSOR_NONE ||
		    c->l->t[t].ready != (int32_t)f || c->ti[t].grad != TENSOR_NONE)
			continue;
		int64_t n = c->l->t[t].elems;
		if (c->tp->grads_given) {
			if ((g = tnew(c, t, TK_INPUT, TR_GRAD, n)) < 0)
				return -1;
			c->ti[t].grad = g;
			c->ti[t].from = (int32_t)f;
			continue;
		}
		int32_t s;
		if (loss_stats(c, f, t, &s) < 0 || (i = opush(c, f, PH_BACKWARD, OG_LOSS)) < 0 ||
		    (g = tnew(c, t, TK_ACT, TR_GRAD, n)) < 0)
			return -1;
		vsize(c, i, VEC_LOSS, n, n, n * vector_ops_per_elem(VEC_LOSS));
		link(c, i, t, s, g);
		c->ti[t].grad = g;
		c->ti[t].from = (int32_t)f;
	}
	return 0;
}

/* The backward of forward ops [f0, f1), segment by segment from the last, each recomputed first. */
static int backward_pass(struct tc *c, size_t f0, size_t f1)
{
	c->f0 = f0;
	mark_saved(c, f0, f1);
	if (losses(c, f0, f1) < 0)
		return -1;
	for (size_t s1 = f1; s1 > f0;) {
		size_t s0 = s1 - 1;
		while (s0 > f0 && c->seg[c->l->v[s0 - 1].layer] == c->seg[c->l->v[s1 - 1].layer])
			s0--;
		if (recompute(c, s0, s1) < 0)
			return -1;
		for (size_t f = s1; f-- > s0;)
			if (backward(c, f) < 0)
				return -1;
		s1 = s0;
	}
	return 0;
}

/*
 * Microbatch j's forward ops: copies of the first microbatch's [0, nf),
 * reading and writing copies of its activations and inputs (the weights
 * are the same).
 */
static int forward_copy(struct tc *c, size_t nf, int32_t *map)
{
	struct oplist *l = c->l;
	size_t nt = c->nt0;
	for (size_t t = 0; t < nt; t++)
		map[t] = TENSOR_NONE;
	for (size_t f = 0; f < nf; f++) {
		struct op o = l->v[f];
		int32_t i = clone(c, f, PH_FORWARD), io[3] = { o.in[0], o.in[1], o.out };
		if (i < 0)
			return -1;
		for (int j = 0; j < 3; j++) {
			int32_t t = io[j];
			if (t == TENSOR_NONE || (l->t[t].kind != TK_ACT && l->t[t].kind != TK_INPUT))
				continue;
			if (map[t] == TENSOR_NONE) {
				int role = l->t[t].role == TR_GATHERED ? TR_GATHERED : TR_VALUE;
				if ((map[t] = tnew(c, t, l->t[t].kind, role, l->t[t].elems)) < 0)
					return -1;
				c->ti[map[t]].image = c->ti[t].image;
			}
			io[j] = map[t];
		}
		link(c, i, io[0], io[1], io[2]);
	}
	/* The copies' masks, written by the copied dropouts. */
	for (size_t t = 0; t < nt; t++) {
		const struct tensor *m = &l->t[t];
		int32_t k;
		if (m->role != TR_MASK || m->of < 0 || map[m->of] == TENSOR_NONE)
			continue;
		if ((k = tnew(c, (int32_t)t, TK_ACT, TR_MASK, l->t[t].elems)) < 0)
			return -1;
		l->t[k].of = map[l->t[t].of];
		l->t[k].producer = l->t[k].ready = l->t[map[l->t[t].of]].producer;
		c->ti[l->t[k].of].mask = k;
	}
	return 0;
}

/* One update per weight with a gradient, in the order of the weights' first readers. */
static int optimizer(struct tc *c, size_t nt)
{
	static const int kind[] = { [OPT_SGD] = VEC_SGD, [OPT_MOMENTUM] = VEC_MOMENTUM, [OPT_ADAM] = VEC_ADAM,
				    [OPT_ADAMW] = VEC_ADAM };
	int k = kind[c->tp->optimizer], sb = train_state_bytes(c->tp, c->eb);
	for (size_t t = 0; t < nt; t++) {
		const struct tensor *w = &c->l->t[t];
		if (w->kind != TK_WEIGHT || c->ti[t].grad == TENSOR_NONE || w->first_reader == TENSOR_NONE)
			continue;
		int64_t n = w->elems, se = n * sb / c->eb;
		int32_t s = TENSOR_NONE, i = opush(c, (size_t)w->first_reader, PH_OPTIMIZER, OG_UPDATE);
		if (i < 0 || (se && (s = tnew(c, (int32_t)t, TK_STATE, TR_STATE, se)) < 0))
			return -1;
		/* Named after the weight: "attn.wq.update". */
		c->l->v[i].suffix = c->l->t[t].suffix;
		c->l->v[i].block = -1;
		vsize(c, i, k, 2 * n + se, n + se, n * vector_ops_per_elem(k));
		link(c, i, (int32_t)t, c->ti[t].grad, s);
	}
	return 0;
}

/* Recomputation segments: a block's instance (a layer of index 0 in its block starts one) or a layer outside blocks. */
static void segments(const struct workload *w, int32_t *seg)
{
	int32_t s = -1;
	for (size_t i = 0; i < w->n; i++) {
		if (w->layers[i].sub <= 0)
			s++;
		seg[i] = s;
	}
}

int train_lower(const struct config *cfg, const struct workload *w, struct oplist *out, struct err *e)
{
	const struct train_params *tp = &cfg->arch.train;
	struct tc c = { .tp = tp, .eb = array_elem_bytes(cfg->arch.array.dtype), .l = out, .layers = w->n, .e = e, .w = w };
	int32_t *map = NULL;
	int rc = -1;
	for (size_t i = 0; i < w->n; i++)
		if (w->layers[i].type == L_ATTENTION && w->layers[i].mode == ATTN_DECODE) {
			char at[WORKLOAD_PATH_MAX + 8];
			workload_layer_path(&w->layers[i], at, sizeof at);
			strcat(at, ".mode");
			return err_at(e, workload_key_pos(&w->layers[i], "mode"), at, "expected prefill with train.enabled (a "
				      "training step has no KV cache), found decode");
		}
	struct lower_pod lp;
	if (shard_place(cfg, &lp, e) < 0)
		return -1;
	/* A chip's share of the batch (shard.h), in microbatches. */
	int64_t batch = w->batch / (lp.data * lp.fsdp);
	if (batch % tp->microbatches)
		return err_at(e, config_origin(cfg, "train.microbatches"), "train.microbatches",
			      "expected a divisor of the batch%s (%lld), found %lld", lp.data * lp.fsdp > 1 ? " per chip" : "",
			      (long long)batch, (long long)tp->microbatches);
	c.lp = &lp;
	if (lower_batch(w, batch / tp->microbatches, tp->dropout > 0 ? c.eb : 0, &lp, out, e) < 0) {
		oplist_release(out);
		return -1;
	}
	for (size_t i = 0; i < out->n; i++)
		if (layer_is_collective(w->layers[out->v[i].layer].type)) {
			const struct layer *ly = &w->layers[out->v[i].layer];
			char at[WORKLOAD_PATH_MAX];
			oplist_release(out);
			return err_at(e, ly->pos, workload_layer_path(ly, at, sizeof at),
				      "expected a layer a training step differentiates, found a collective (%s: time it "
				      "without --train)", layer_type_names[ly->type]);
		}
	size_t nf = out->n;
	c.nt0 = out->nt;
	if (!(c.rowmap = malloc((w->n ? w->n : 1) * PH_N * sizeof *c.rowmap)) ||
	    !(c.seg = malloc((w->n ? w->n : 1) * sizeof *c.seg)) || grow_info(&c) < 0)
		goto nomem;
	for (size_t i = 0; i < w->n * PH_N; i++)
		c.rowmap[i] = -1;
	for (size_t r = 0; r < out->nrows; r++)
		c.rowmap[out->rows[r].layer * PH_N + PH_FORWARD] = (int32_t)r;
	segments(w, c.seg);
	/* Inputs only convolutions read are images (input_grads auto): first every input, then those a non-conv reads. */
	for (size_t t = 0; t < out->nt; t++)
		c.ti[t].image = out->t[t].kind == TK_INPUT;
	for (size_t f = 0; f < nf; f++)
		for (int j = 0; j < 2; j++)
			if (out->v[f].in[j] != TENSOR_NONE && w->layers[out->v[f].layer].type != L_CONV2D)
				c.ti[out->v[f].in[j]].image = false;
	for (size_t t = 0; t < out->nt; t++)
		if (out->t[t].role == TR_MASK)
			c.ti[out->t[t].of].mask = (int32_t)t;
	c.last = tp->microbatches == 1;
	if (backward_pass(&c, 0, nf) < 0)
		goto done;
	if (tp->microbatches > 1 && !(map = malloc((c.nt0 ? c.nt0 : 1) * sizeof *map)))
		goto nomem;
	for (int64_t j = 1; j < tp->microbatches; j++) {
		size_t f0 = out->n;
		c.last = j == tp->microbatches - 1;
		if (forward_copy(&c, nf, map) < 0 || backward_pass(&c, f0, f0 + nf) < 0)
			goto done;
	}
	if (optimizer(&c, out->nt) < 0)
		goto done;
	rc = 0;
	goto done;
nomem:
	err_nomem(e, NULL);
done:
	free(map);
	free(c.ti);
	free(c.rowmap);
	free(c.seg);
	if (rc < 0)
		oplist_release(out);
	return rc;
}

/*
 * The HBM bytes of w's step with tp on cfg: 0 and *bytes; 1 when that step
 * does not lower (too many ops); -1 when memory ran out.
 */
static int step_bytes(const struct config *cfg, const struct workload *w, const struct train_params *tp, double *bytes)
{
	struct config c = *cfg;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	int64_t need[NEED_N];
	c.arch.train = *tp;
	if (train_lower(&c, w, &ops, &e) < 0)
		return e.kind == ERR_NOMEM ? -1 : 1;
	int rc = lower_hbm_need(&ops, need);
	oplist_release(&ops);
	*bytes = 0;
	for (int k = 0; k < NEED_N; k++)
		*bytes += (double)need[k] * array_elem_bytes(cfg->arch.array.dtype);
	return rc;
}

int train_fit_hint(const struct config *cfg, const struct workload *w, double capacity, char *hint, size_t size)
{
	static const int rank[] = { [REMAT_NONE] = 0, [REMAT_SAVE_DOTS] = 1, [REMAT_FULL] = 2 };
	static const int by_rank[] = { REMAT_NONE, REMAT_SAVE_DOTS, REMAT_FULL };
	const struct train_params *now = &cfg->arch.train;
	int64_t best_mb = 0, *mbs = NULL;
	int best_r = -1, n = 0, rc = 0;
	double best_bytes = 0;
	*hint = 0;
	/* The microbatch counts to try: every divisor of the batch from the one set. */
	for (int64_t d = 1; d * d <= w->batch; d++)
		n += (w->batch % d == 0) * (d * d == w->batch ? 1 : 2);
	if (!(mbs = malloc((size_t)n * sizeof *mbs)))
		return -1;
	n = 0;
	for (int64_t d = now->microbatches; d <= w->batch; d++)
		if (w->batch % d == 0)
			mbs[n++] = d;
	/*
	 * Per recomputation level, the fewest microbatches that fit, by
	 * bisection (more microbatches keep less); then the cheapest: fewest
	 * microbatches, then least recomputation.
	 */
	for (int r = rank[now->remat]; r < 3 && rc >= 0; r++) {
		int lo = r == rank[now->remat] ? 1 : 0, hi = n;        /* the first fitting index in [lo, hi) */
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			struct train_params tp = *now;
			double bytes;
			tp.microbatches = mbs[mid];
			tp.remat = by_rank[r];
			rc = step_bytes(cfg, w, &tp, &bytes);
			if (rc < 0)
				break;
			if (rc == 0 && bytes <= capacity) {
				hi = mid;
				if (best_r < 0 || mbs[mid] < best_mb || (mbs[mid] == best_mb && r < best_r))
					best_mb = mbs[mid], best_r = r, best_bytes = bytes;
			} else {
				lo = mid + 1;           /* too big, or too many ops (fewer microbatches then) */
				if (rc > 0)
					hi = mid;
			}
			rc = 0;
		}
	}
	free(mbs);
	if (rc < 0)
		return -1;
	if (best_r < 0)
		return 0;
	char keys[80] = "";
	if (by_rank[best_r] != now->remat)
		snprintf(keys, sizeof keys, "train.remat=%s", train_remat_names[by_rank[best_r]]);
	if (best_mb != now->microbatches)
		snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%strain.microbatches=%lld", *keys ? " " : "",
			 (long long)best_mb);
	snprintf(hint, size, "%s fits: %.4g GiB", keys, best_bytes / 1073741824.0);
	return 1;
}

int lower_step(const struct config *cfg, const struct workload *w, struct oplist *out, struct err *e)
{
	struct lower_pod lp;
	if (shard_place(cfg, &lp, e) < 0)
		return -1;
	/* Every chip of a mesh position does the same work: one is lowered, its share of the batch. */
	int64_t split = lp.data * lp.fsdp;
	if (w->batch % split)
		return err_at(e, config_origin(cfg, lp.fsdp > 1 ? "mesh.fsdp" : "mesh.data"), lp.fsdp > 1 ? "mesh.fsdp" : "mesh.data",
			      "expected mesh.data x mesh.fsdp to divide the batch (%lld), found %lld", (long long)w->batch,
			      (long long)split);
	if (cfg->arch.train.enabled)
		return train_lower(cfg, w, out, e);
	return lower_batch(w, w->batch / split, 0, &lp, out, e);
}

int64_t train_losses(const struct oplist *l, int64_t microbatches)
{
	int64_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].grad == OG_LOSS;
	return microbatches > 0 ? n / microbatches : n;
}

int64_t train_saved_elems(const struct oplist *l, int64_t microbatches)
{
	int64_t sum = 0;
	for (size_t i = 0; i < l->nt; i++) {
		const struct tensor *t = &l->t[i];
		if ((t->role != TR_VALUE && t->role != TR_MASK) || (t->kind != TK_ACT && t->kind != TK_INPUT) ||
		    t->last_reader == TENSOR_NONE)
			continue;
		if (t->kind == TK_ACT && (t->producer == TENSOR_NONE || l->v[t->producer].phase != PH_FORWARD))
			continue;
		int ph = l->v[t->last_reader].phase;
		if (ph == PH_BACKWARD || ph == PH_RECOMPUTE)
			sum += t->elems;
	}
	return microbatches > 0 ? sum / microbatches : sum;
}
