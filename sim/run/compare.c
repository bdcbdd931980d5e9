/*
 * compare.c - one workload under several dataflows (see compare.h).
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "schedule.h"

double compare_factor(int64_t read, int64_t unique)
{
	return unique > 0 ? (double)read / (double)unique : NAN;
}

/* a += b */
static void reuse_add(struct compare_reuse *a, const struct compare_reuse *b)
{
	a->gemm_ops += b->gemm_ops;
	for (int i = 0; i < 3; i++) {
		a->unique[i] += b->unique[i];
		a->sram_read[i] += b->sram_read[i];
	}
	for (int i = 0; i < 2; i++) {
		a->hbm_unique[i] += b->hbm_unique[i];
		a->hbm_read[i] += b->hbm_read[i];
	}
}

/* What plan s of its op moves (compare.h). */
static void plan_reuse(const struct sched *s, struct compare_reuse *r)
{
	const struct op *o = s->op;
	int64_t rep = o->repeat;
	memset(r, 0, sizeof *r);
	r->gemm_ops = 1;
	r->unique[OPND_A] = rep * o->m * o->k * s->eb;
	r->unique[OPND_B] = rep * o->k * o->n * s->eb;
	r->unique[OPND_C] = rep * o->m * o->n * s->ab;
	if (s->df == DF_OS) {
		r->sram_read[OPND_A] = s->nc * r->unique[OPND_A];
		r->sram_read[OPND_B] = s->nr * r->unique[OPND_B];
	} else {
		r->sram_read[s->s_opnd] = s->nchunks * r->unique[s->s_opnd];
		r->sram_read[s->x_opnd] = s->nc * r->unique[s->x_opnd];
		r->sram_read[OPND_C] = (s->nr - 1) * r->unique[OPND_C];
	}
	if (!s->onchip[OPND_A]) {
		r->hbm_unique[OPND_A] = rep * s->a_unique;
		r->hbm_read[OPND_A] = s->read_bytes[OPND_A];
	}
	if (!s->onchip[OPND_B]) {
		r->hbm_unique[OPND_B] = rep * o->k * o->n * s->eb;
		r->hbm_read[OPND_B] = s->read_bytes[OPND_B];
	}
}

/*
 * What op i of plan p moves: its parts' re-reads summed, against the whole
 * op's distinct bytes (a part split over the arrays reads its share, or all
 * of the operand the split does not cut).
 */
static void op_reuse(const struct plan *p, size_t i, struct compare_reuse *r)
{
	const struct op *o = &p->ops.v[i];
	const struct chip_part *cp = plan_parts(p, i);
	const struct sched *s0 = NULL;
	memset(r, 0, sizeof *r);
	for (int q = 0; q < p->arrays; q++) {
		struct compare_reuse pr;
		if (!cp[q].s)
			continue;
		plan_reuse(cp[q].s, &pr);
		reuse_add(r, &pr);
		s0 = s0 ? s0 : cp[q].s;
	}
	if (!s0)
		return;
	int64_t rep = o->repeat, eb = s0->eb;
	r->gemm_ops = 1;
	r->unique[OPND_A] = rep * o->m * o->k * eb;
	r->unique[OPND_B] = rep * o->k * o->n * eb;
	r->unique[OPND_C] = rep * o->m * o->n * s0->ab;
	r->hbm_unique[OPND_A] = o->onchip & OC_A ? 0 : rep * (o->a_elems ? o->a_elems : o->m * o->k) * eb;
	r->hbm_unique[OPND_B] = o->onchip & OC_B ? 0 : rep * o->k * o->n * eb;
}

/* The re-reads of every GEMM op of plan p, into layers[] (nlayers, zeroed by the caller) and *total. */
static void count_reuse(const struct plan *p, struct compare_reuse *layers, size_t nlayers,
			struct compare_reuse *total)
{
	for (size_t i = 0; i < p->ops.n; i++) {
		const struct op *op = &p->ops.v[i];
		struct compare_reuse r;
		if (op->kind != OP_GEMM)
			continue;
		op_reuse(p, i, &r);
		SIM_ASSERT(oplist_row(&p->ops, op) < nlayers);
		reuse_add(&layers[oplist_row(&p->ops, op)], &r);
		reuse_add(total, &r);
	}
}

int compare_run(struct compare *c, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		const struct run_opts *o, const int *df, int n, struct err *e)
{
	int rc = -1;

	SIM_ASSERT(n >= 1 && n <= COMPARE_MAX);
	memset(c, 0, sizeof *c);
	for (int j = 0; j < n; j++) {
		struct run_opts oj = *o;
		struct plan p;
		oj.dataflow = df[j];
		c->df[j] = df[j];
		if (df[j] == DF_WS)
			c->base = j;
		if (!(c->layers[j] = calloc(oplist_nrows(ops, w->n) + 1, sizeof *c->layers[j]))) {
			err_nomem(e, NULL);
			goto out;
		}
		if (plan_build(&p, cfg, ops, oj.dataflow, oj.ideal_memory || oj.model == MODEL_FUNCTIONAL, e) < 0)
			goto out;
		if (run_on_plan(&p, w, &oj, &c->runs[j], e) < 0) {
			plan_release(&p);
			goto out;
		}
		c->n = j + 1;
		count_reuse(&p, c->layers[j], oplist_nrows(ops, w->n), &c->total[j]);
		plan_release(&p);
	}
	rc = 0;
out:
	/* The dataflows run so far are released with c; a dataflow whose run failed left nothing. */
	for (int j = c->n; j < n; j++) {
		free(c->layers[j]);
		c->layers[j] = NULL;
	}
	return rc;
}

void compare_release(struct compare *c)
{
	for (int j = 0; j < c->n; j++) {
		run_release(&c->runs[j]);
		free(c->layers[j]);
		c->layers[j] = NULL;
	}
	c->n = 0;
}
