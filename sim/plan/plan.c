/*
 * plan.c - the plan stage (see plan.h).
 */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fsx.h"
#include "place.h"
#include "xmath.h"

/*
 * An op's time from its bounds: a GEMM's loads run on through its fixed
 * time (the array waits it out), max(fixed + compute, memory); a vector
 * pass issues its loads itself once it starts, fixed + max(compute, memory).
 */
static int64_t bound_cycles(const struct op *o, const struct plan_bound *b)
{
	if (o->kind == OP_COLL)
		return sat_add(b->fixed_cycles, b->comm_cycles);
	if (o->kind == OP_GEMM)
		return max64(sat_add(b->fixed_cycles, b->compute_cycles), b->memory_cycles);
	return sat_add(b->fixed_cycles, max64(b->compute_cycles, b->memory_cycles));
}

int plan_gemm(struct sched *s, const struct op *op, const struct config *cfg, const struct arch *a, int df,
	      bool ideal, struct err *e)
{
	struct sched_short why;
	if (config_check_rate(cfg, NULL, e) < 0)
		return -1;
	if (sched_plan(s, op, a, df, ideal, &why) == 0)
		return 0;
	return err_at(e, config_origin(cfg, why.key), why.key, "%s", why.msg);
}

int64_t plan_coll_bytes(const struct arch *a, const struct op *o)
{
	if (o->identity)
		return 0;
	int64_t eb = o->coll_eb ? o->coll_eb : array_elem_bytes(a->array.dtype);
	return o->coll_elems > INT64_MAX / eb ? INT64_MAX : o->coll_elems * eb;
}

int64_t plan_coll_cycles(const struct arch *a, const struct op *o, struct ici_cost *c)
{
	ici_cost(&a->pod, o->coll, (double)plan_coll_bytes(a, o), &o->grp, c);
	double cyc = ceil(c->seconds * a->clock_ghz * 1e9);
	return cyc >= 0x1p62 ? INT64_MAX : (int64_t)cyc;
}

void plan_coll_counts(const struct arch *a, const struct op *o, bool ideal, struct result *r)
{
	struct ici_cost c;
	struct plan_bound b;
	plan_coll_cycles(a, o, &c);
	plan_bound_op(a, o, NULL, ideal, &b);
	r->collective_ops = 1;
	r->comm_cycles = b.cycles;
	ici_cost_link_bytes(&c, r->link_bytes);
}

void plan_bound_op(const struct arch *a, const struct op *o, const struct sched *s, bool ideal, struct plan_bound *b)
{
	memset(b, 0, sizeof *b);
	if (o->kind == OP_COLL) {
		struct ici_cost c;
		b->comm_cycles = plan_coll_cycles(a, o, &c);
		b->fixed_cycles = b->comm_cycles ? arch_op_fixed_cycles(a) : 0;        /* nothing to move: no time */
		b->cycles = bound_cycles(o, b);
		return;
	}
	if (o->kind == OP_GEMM) {
		SIM_ASSERT(s && s->op == o);
		struct array_grid g = sched_grid(s);
		b->compute_cycles = array_grid_cycles(&g);
		b->read_bytes = s->read_bytes[OPND_A] + s->read_bytes[OPND_B];
		b->write_bytes = s->write_bytes;
	} else {
		int64_t eb = array_elem_bytes(a->array.dtype);
		b->compute_cycles = vector_cycles(&a->vector, o->lane_ops);
		b->read_bytes = (o->in_elems - o->onchip_elems) * eb;
		b->write_bytes = o->onchip & OC_C ? 0 : o->out_elems * eb;
	}
	b->memory_cycles = ideal ? 0 : arch_memory_cycles(a, b->read_bytes + b->write_bytes);
	b->fixed_cycles = arch_op_fixed_cycles(a);
	b->cycles = bound_cycles(o, b);
}

int plan_check_op(const struct op *o, const struct plan_bound *b, struct err *e)
{
	char path[64], name[OP_NAME_MAX];
	if (b->cycles <= ANALYTIC_MAX_CYCLES)
		return 0;
	snprintf(path, sizeof path, "layers[%zu]", o->layer);
	return err_at(e, o->pos, path, "expected ops that take at most 2^" LIMIT_STR(ANALYTIC_MAX_CYCLES_LOG2) " cycles, found %s taking more "
		      "(a larger array, buffer or bandwidth would do)", op_name(o, name, sizeof name));
}

/*
 * The closed form of op o cut into parts cp[0 .. arrays): the arrays run
 * together, so compute is the slowest part's and memory all the parts' HBM
 * bytes at the chip's bandwidth (each part's bound is taken with ideal
 * memory: the arrays share the chip's bandwidth, counted here).
 */
static void parts_bound(const struct plan *p, const struct chip_part *cp, struct plan_bound *b)
{
	const struct op *op = NULL;     /* a part: every part is of the op's kind */
	memset(b, 0, sizeof *b);
	for (int q = 0; q < p->arrays; q++) {
		struct plan_bound pb;
		if (!cp[q].op)
			continue;
		op = cp[q].op;
		plan_bound_op(&p->array, cp[q].op, cp[q].s, true, &pb);
		b->compute_cycles = max64(b->compute_cycles, pb.compute_cycles);
		b->read_bytes += pb.read_bytes;
		b->write_bytes += pb.write_bytes;
	}
	b->memory_cycles = p->ideal ? 0 : arch_memory_cycles(&p->cfg->arch, b->read_bytes + b->write_bytes);
	b->fixed_cycles = arch_op_fixed_cycles(&p->cfg->arch);
	b->cycles = op ? bound_cycles(op, b) : 0;
}

/* Room for one op's parts while it is being split: the parts, their programs, and a trial split beside them. */
struct trial {
	struct op part[CHIP_MAX_ARRAYS];
	struct sched s[CHIP_MAX_ARRAYS];
	struct chip_part cp[CHIP_MAX_ARRAYS];
	struct plan_bound b;
};

/*
 * Cuts op `by` into t's parts and plans each with one array's view. 1: this
 * split does not apply or a part does not fit (another split may), 0: done,
 * -1: error (a whole op that does not fit).
 */
static int try_split(const struct plan *p, const struct op *op, int by, struct trial *t, struct err *e)
{
	int n = place_split(&p->cfg->arch, op, by, p->df, t->part);
	if (op->kind == OP_GEMM && by != SPLIT_NONE && n < 2)
		return 1;
	for (int q = 0; q < p->arrays; q++) {
		t->cp[q].op = place_part_empty(&t->part[q]) ? NULL : &t->part[q];
		t->cp[q].s = NULL;
		if (t->cp[q].op && t->part[q].kind == OP_GEMM) {
			struct err pe;
			if (plan_gemm(&t->s[q], &t->part[q], p->cfg, &p->array, p->df, p->ideal, &pe) < 0) {
				if (by != SPLIT_NONE)
					return 1;
				*e = pe;
				return -1;
			}
			t->cp[q].s = &t->s[q];
		}
	}
	parts_bound(p, t->cp, &t->b);
	return 0;
}

/*
 * Op op on the chip's arrays, into *best: a vector op over the cores; a
 * GEMM split by N or by M, whichever the closed form finds faster (then
 * less HBM traffic, then N), or whole when neither splits it.
 */
static int split(const struct plan *p, const struct op *op, struct trial *best, struct trial *alt, int *by,
		 struct err *e)
{
	int rn, rm;
	*by = SPLIT_NONE;
	if (op->kind != OP_GEMM)
		return try_split(p, op, SPLIT_NONE, best, e);
	if ((rn = try_split(p, op, SPLIT_N, best, e)) < 0 || (rm = try_split(p, op, SPLIT_M, alt, e)) < 0)
		return -1;
	if (rm == 0 && (rn || alt->b.cycles < best->b.cycles ||
			(alt->b.cycles == best->b.cycles && alt->b.read_bytes + alt->b.write_bytes <
							    best->b.read_bytes + best->b.write_bytes))) {
		*by = SPLIT_M;
		return try_split(p, op, SPLIT_M, best, e);
	}
	if (rn == 0) {
		*by = SPLIT_N;
		return 0;
	}
	return try_split(p, op, SPLIT_NONE, best, e);
}

/* Growable pools; pointers into them are fixed once the plan is built. */
struct pools {
	struct sched *s;
	size_t ns, cs;
	struct op *o;
	size_t no, co;
};

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *n;
	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(n = realloc(*v, c * size)))
		return -1;
	*v = n;
	*cap = c;
	return 0;
}

/* Pointers as indices while the pools grow: an index + 1 in place of a pointer, 0 for NULL. */
#define AS_INDEX(i) ((void *)(uintptr_t)((i) + 1))
#define INDEX_OF(ptr) ((size_t)(uintptr_t)(ptr) - 1)

/*
 * The ops to plan: the lowered ops with the chip's placement when it keeps
 * activations (a copy that shares the tensors), else the lowered ops.
 */
static int place(struct plan *p, const struct oplist *ops, struct err *e)
{
	p->ops = *ops;
	p->ops.v = NULL;
	if (!(p->ops.v = malloc((ops->n ? ops->n : 1) * sizeof *p->ops.v)))
		return err_nomem(e, NULL);
	memcpy(p->ops.v, ops->v, ops->n * sizeof *p->ops.v);
	p->ops.cap = ops->n;
	return place_ops(&p->cfg->arch, &p->ops, e);
}

/*
 * Ops alike: the fields planning and splitting read (the reuse cache's,
 * opcache.h, without names, positions and tensors). A network's repeated
 * layers are planned once and their plans copied: planning is most of a
 * closed-form run's time.
 */
struct likeness {
	int64_t m, k, n, repeat, a_elems, c_elems, in_elems, out_elems, lane_ops, onchip_elems, spill_elems, coll_elems;
	int32_t kind, vec, coll;
	uint8_t a_weight, b_weight, onchip, spill, coll_eb, identity;
	struct ici_group grp;
};

static void likeness(const struct op *o, struct likeness *l)
{
	memset(l, 0, sizeof *l);        /* padding too: compared and hashed as bytes */
	l->m = o->m, l->k = o->k, l->n = o->n, l->repeat = o->repeat, l->a_elems = o->a_elems, l->c_elems = o->c_elems;
	l->in_elems = o->in_elems, l->out_elems = o->out_elems, l->lane_ops = o->lane_ops;
	l->onchip_elems = o->onchip_elems, l->spill_elems = o->spill_elems;
	l->kind = (int32_t)o->kind, l->vec = o->vec;
	l->coll_elems = o->coll_elems, l->coll = o->coll, l->grp = o->grp, l->coll_eb = o->coll_eb;
	l->identity = o->identity;
	l->a_weight = o->a_weight, l->b_weight = o->b_weight, l->onchip = o->onchip, l->spill = o->spill;
}

/* Open addressing over op indices + 1 (0: empty); cap a power of two, at least twice the ops. */
struct alike {
	size_t *slot, mask;
};

/* The first op before i alike to op i (its index), or i itself, recorded. */
static size_t alike_find(struct alike *a, const struct oplist *ops, size_t i)
{
	struct likeness li, lj;
	likeness(&ops->v[i], &li);
	for (size_t h = (size_t)fsx_fnv(FSX_FNV_INIT, &li, sizeof li) & a->mask;; h = (h + 1) & a->mask) {
		if (!a->slot[h]) {
			a->slot[h] = i + 1;
			return i;
		}
		likeness(&ops->v[a->slot[h] - 1], &lj);
		if (!memcmp(&li, &lj, sizeof li))
			return a->slot[h] - 1;
	}
}

/* Op o's share as an earlier alike op's part was: o's names and place, that part's sizes. */
static struct op part_like(const struct op *o, const struct op *was)
{
	struct op p = *o;
	p.kind = was->kind;
	p.m = was->m, p.k = was->k, p.n = was->n, p.a_elems = was->a_elems, p.c_elems = was->c_elems;
	p.lane_ops = was->lane_ops, p.in_elems = was->in_elems, p.out_elems = was->out_elems;
	p.onchip_elems = was->onchip_elems, p.spill_elems = was->spill_elems;
	p.onchip = was->onchip, p.spill = was->spill;
	return p;
}

/* One array's view of the chip: each core's buffers shared by its arrays. */
static void array_view(const struct arch *chip, struct arch *out)
{
	*out = *chip;
	place_array_sram(chip, &out->sram);
}

int plan_build(struct plan *p, const struct config *cfg, const struct oplist *lowered, int df, bool ideal,
	       struct err *e)
{
	struct pools pl = { 0 };
	struct trial *t = NULL, *alt = NULL;
	struct alike al = { NULL, 0 };
	size_t n = lowered->n, arrays, cap = 2;

	memset(p, 0, sizeof *p);
	if (config_check_rate(cfg, NULL, e) < 0)
		return -1;
	p->cfg = cfg;
	p->df = df;
	p->ideal = ideal;
	p->arrays = (int)arch_arrays(&cfg->arch);
	arrays = (size_t)p->arrays;
	array_view(&cfg->arch, &p->array);
	if (place(p, lowered, e) < 0)
		goto fail;
	if (!(p->v = calloc(n ? n : 1, sizeof *p->v)) || !(p->parts = calloc((n ? n : 1) * arrays, sizeof *p->parts)))
		goto nomem;
	if (arrays > 1 && (!(t = malloc(sizeof *t)) || !(alt = malloc(sizeof *alt))))
		goto nomem;
	while (cap < 2 * n)
		cap *= 2;
	if (!(al.slot = calloc(cap, sizeof *al.slot)))
		goto nomem;
	al.mask = cap - 1;
	for (size_t i = 0; i < n; i++) {
		const struct op *op = &p->ops.v[i];
		struct chip_part *cp = &p->parts[i * arrays];
		struct plan_op *po = &p->v[i];
		size_t was = alike_find(&al, &p->ops, i);
		if (was < i) {
			/* Planned before: its parts and tile programs, with this op's names (pointers fixed below). */
			const struct chip_part *wp = &p->parts[was * arrays];
			*po = p->v[was];
			if (grow((void **)&pl.o, &pl.co, pl.no + arrays, sizeof *pl.o) < 0 ||
			    grow((void **)&pl.s, &pl.cs, pl.ns + arrays, sizeof *pl.s) < 0)
				goto nomem;
			for (size_t q = 0; q < arrays; q++) {
				if (!wp[q].op)
					continue;
				if (arrays == 1) {
					cp[q].op = op;
				} else {
					pl.o[pl.no] = part_like(op, &pl.o[INDEX_OF(wp[q].op)]);
					cp[q].op = AS_INDEX(pl.no++);
				}
				if (wp[q].s) {
					pl.s[pl.ns] = pl.s[INDEX_OF(wp[q].s)];
					cp[q].s = AS_INDEX(pl.ns++);
				}
			}
			p->cycles = sat_add(p->cycles, po->bound.cycles);
			continue;
		}
		if (op->kind == OP_COLL) {
			/* On the links, not the arrays: no part. */
			plan_bound_op(&cfg->arch, op, NULL, ideal, &po->bound);
			po->by = SPLIT_NONE;
		} else if (arrays == 1) {
			cp->op = op;
			if (op->kind == OP_GEMM) {
				if (grow((void **)&pl.s, &pl.cs, pl.ns + 1, sizeof *pl.s) < 0)
					goto nomem;
				if (plan_gemm(&pl.s[pl.ns], op, cfg, &p->array, df, ideal, e) < 0)
					goto fail;
				cp->s = AS_INDEX(pl.ns++);
			}
			plan_bound_op(&cfg->arch, op, op->kind == OP_GEMM ? &pl.s[INDEX_OF(cp->s)] : NULL, ideal, &po->bound);
			po->by = SPLIT_NONE;
		} else {
			size_t used = 0, gemms = 0;
			if (split(p, op, t, alt, &po->by, e) < 0)
				goto fail;
			po->bound = t->b;
			for (size_t q = 0; q < arrays; q++)
				if (t->cp[q].op) {
					used++;
					gemms += t->cp[q].s != NULL;
				}
			if (grow((void **)&pl.o, &pl.co, pl.no + used, sizeof *pl.o) < 0 ||
			    grow((void **)&pl.s, &pl.cs, pl.ns + gemms, sizeof *pl.s) < 0)
				goto nomem;
			for (size_t q = 0; q < arrays; q++) {
				if (!t->cp[q].op)
					continue;
				pl.o[pl.no] = t->part[q];
				cp[q].op = AS_INDEX(pl.no++);
				if (t->cp[q].s) {
					pl.s[pl.ns] = t->s[q];
					cp[q].s = AS_INDEX(pl.ns++);
				}
			}
		}
		if (plan_check_op(op, &po->bound, e) < 0)
			goto fail;
		p->cycles = sat_add(p->cycles, po->bound.cycles);
	}
	/* The pools are final: indices become pointers. */
	p->scheds = pl.s;
	p->part_ops = pl.o;
	pl.s = NULL;
	pl.o = NULL;
	for (size_t i = 0; i < n; i++) {
		for (size_t q = 0; q < arrays; q++) {
			struct chip_part *cp = &p->parts[i * arrays + q];
			if (arrays > 1 && cp->op)
				cp->op = &p->part_ops[INDEX_OF(cp->op)];
			if (cp->s) {
				struct sched *s = &p->scheds[INDEX_OF(cp->s)];
				s->op = cp->op;
				cp->s = s;
				struct array_grid g = sched_grid(s);
				p->gemm_compute_cycles = sat_add(p->gemm_compute_cycles, array_grid_cycles(&g));
			}
		}
	}
	free(t);
	free(alt);
	free(al.slot);
	return 0;
nomem:
	err_nomem(e, NULL);
fail:
	free(t);
	free(alt);
	free(al.slot);
	free(pl.s);
	free(pl.o);
	plan_release(p);
	return -1;
}

void plan_release(struct plan *p)
{
	free(p->ops.v);
	free(p->v);
	free(p->parts);
	free(p->scheds);
	free(p->part_ops);
	memset(p, 0, sizeof *p);
}

const struct chip_part *plan_parts(const struct plan *p, size_t i)
{
	return &p->parts[i * (size_t)p->arrays];
}

int64_t plan_spill_bytes(const struct plan *p, size_t i)
{
	const struct chip_part *cp = plan_parts(p, i);
	int64_t bytes = 0;
	for (int q = 0; q < p->arrays; q++)
		if (cp[q].op)
			bytes += place_spill_bytes(&p->cfg->arch, cp[q].op, cp[q].s);
	return bytes;
}
