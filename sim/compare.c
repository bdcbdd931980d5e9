/*
 * compare.c - one workload under several dataflows (see compare.h).
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
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
 * The re-reads of every GEMM op of ops (placed) under o, into layers[]
 * (nlayers, zeroed by the caller) and *total. pcfg: the config a plan uses.
 */
static int count_reuse(const struct config *pcfg, const struct oplist *ops, const struct run_opts *o,
		       struct compare_reuse *layers, size_t nlayers, struct compare_reuse *total, struct err *e)
{
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *op = &ops->v[i];
		struct sched s;
		struct compare_reuse r;
		if (op->kind != OP_GEMM)
			continue;
		if (sched_plan(&s, op, pcfg, o->dataflow, o->ideal_memory, e) < 0)
			return -1;
		plan_reuse(&s, &r);
		SIM_ASSERT(op->layer < nlayers);
		reuse_add(&layers[op->layer], &r);
		reuse_add(total, &r);
	}
	return 0;
}

int compare_run(struct compare *c, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		const struct run_opts *o, const int *df, int n, struct err *e)
{
	struct oplist placed = *ops;
	struct config *pcfg = NULL;
	int rc = -1;

	SIM_ASSERT(n >= 1 && n <= COMPARE_MAX);
	memset(c, 0, sizeof *c);
	/* The ops as the run sees them: with the chip's placement when it keeps activations. */
	placed.v = NULL;
	if (chip_keeps(cfg) && ops->nt) {
		if (!(placed.v = malloc((ops->n ? ops->n : 1) * sizeof *placed.v)))
			return err_nomem(e, NULL);
		memcpy(placed.v, ops->v, ops->n * sizeof *placed.v);
		placed.cap = ops->n;
		if (chip_place(cfg, &placed, e) < 0)
			goto out;
	}
	if (arch_arrays(&cfg->arch) > 1) {
		if (!(pcfg = malloc(sizeof *pcfg))) {
			err_nomem(e, NULL);
			goto out;
		}
		chip_array_config(cfg, pcfg);
	}
	for (int j = 0; j < n; j++) {
		struct run_opts oj = *o;
		oj.dataflow = df[j];
		c->df[j] = df[j];
		if (df[j] == DF_WS)
			c->base = j;
		if (!(c->layers[j] = calloc(w->n ? w->n : 1, sizeof *c->layers[j]))) {
			err_nomem(e, NULL);
			goto out;
		}
		if (run_workload(cfg, w, ops, &oj, &c->runs[j], e) < 0)
			goto out;
		c->n = j + 1;
		if (count_reuse(pcfg ? pcfg : cfg, placed.v ? &placed : ops, &oj, c->layers[j], w->n, &c->total[j], e) < 0)
			goto out;
	}
	rc = 0;
out:
	/* The dataflows run so far are released with c; a dataflow whose run failed left nothing. */
	for (int j = c->n; j < n; j++) {
		free(c->layers[j]);
		c->layers[j] = NULL;
	}
	free(placed.v);
	free(pcfg);
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
