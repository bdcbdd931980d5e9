/*
 * analytic.c - closed-form cycles of tile programs (see analytic.h).
 */
#include "analytic.h"

#include <math.h>
#include <string.h>

#include "xmath.h"

int64_t analytic_gemm_cycles(const struct sched *s)
{
	struct array_grid g = sched_grid(s);
	return array_grid_cycles(&g);
}

int64_t analytic_stream_cycles(const struct sched *s)
{
	struct array_grid g = sched_grid(s);
	return array_grid_stream_cycles(&g);
}

int64_t analytic_shift_cycles(const struct sched *s)
{
	struct array_grid g = sched_grid(s);
	return array_grid_shift_cycles(&g);
}

/*
 * SRAM traffic of a planned GEMM: models/sram's per-fold counts, summed over
 * the folds in closed form (ws/is: every stationary tile once per chunk, the
 * stream once per column block, partial sums written once per row block and
 * read back after the first; os: A once per column block, B once per row
 * block, each output once), plus every HBM load written in and every result
 * read out to the stores.
 */
static void gemm_sram(const struct sched *s, struct result *r)
{
	const struct op *o = s->op;
	int64_t rep = o->repeat, mn = o->m * o->n;
	struct sram_fold sum;
	if (s->df == DF_OS)
		sum = (struct sram_fold){ rep * mn, rep * s->nc * o->m * o->k, rep * s->nr * o->k * o->n, 0 };
	else
		sum = (struct sram_fold){ rep * s->nchunks * s->rows * s->cols, rep * s->nc * s->rows * s->t, rep * s->nr * mn,
					  rep * (s->nr - 1) * mn };
	sram_fold_traffic(s->df, s->eb, s->ab, &sum, r->sram_read_bytes, r->sram_write_bytes);
	r->sram_read_bytes[sram_operand_buf(s->df, OPND_C)] += s->write_bytes + s->onchip_write_bytes;
	r->sram_write_bytes[sram_operand_buf(s->df, OPND_A)] += s->read_bytes[OPND_A];
	r->sram_write_bytes[sram_operand_buf(s->df, OPND_B)] += s->read_bytes[OPND_B];
	/* A result kept on chip goes from the accumulators to the activation storage (the input buffer). */
	r->sram_write_bytes[SRAM_INPUTS] += s->onchip_write_bytes;
}

/* The closed form's time of an op (plan_bound_op) as a result: compute and memory bounds, and HBM bytes. */
static void bound(const struct arch *a, const struct op *o, const struct sched *s, bool ideal, struct result *r)
{
	struct plan_bound b;
	plan_bound_op(a, o, s, ideal, &b);
	memset(r, 0, sizeof *r);
	r->compute_cycles = b.compute_cycles;
	r->hbm_read_bytes = b.read_bytes;
	r->hbm_write_bytes = b.write_bytes;
	r->memory_cycles = b.memory_cycles;
	r->cycles = b.cycles;
	r->cat[CAT_OP_FIXED] = b.fixed_cycles;
}

static int too_long(const struct op *o, const struct result *r, struct err *e)
{
	struct plan_bound b = { .cycles = r->cycles };
	return plan_check_op(o, &b, e);
}

int analytic_check(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal,
		   int64_t *compute_cycles, struct err *e)
{
	struct result r;
	bound(&cfg->arch, o, s, ideal, &r);
	*compute_cycles = r.compute_cycles;
	return too_long(o, &r, e);
}

int64_t analytic_cycles(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal)
{
	struct result r;
	bound(&cfg->arch, o, s, ideal, &r);
	return r.cycles;
}

/* One op (or part) on a: the closed form, its categories and its counts. */
static int op_result(const struct arch *a, const struct op *o, const struct sched *s, bool ideal, struct result *r,
		     struct err *e)
{
	int excess_cat;
	bound(a, o, s, ideal, r);
	if (too_long(o, r, e) < 0)
		return -1;
	if (o->kind == OP_COLL) {
		/* Alone, as the closed form has it: nothing hides its time, its fixed time (the links' start) in it. */
		plan_coll_counts(a, o, ideal, r);
		r->cat[CAT_OP_FIXED] = 0;
		r->cat[CAT_EXPOSED_COMM] = r->cycles;
		return 0;
	}
	if (o->kind == OP_GEMM) {
		r->macs = op_macs(o);
		r->cat[CAT_COMPUTE] = analytic_stream_cycles(s);
		r->cat[CAT_WEIGHT_SHIFT] = analytic_shift_cycles(s);
		r->cat[CAT_FILL_DRAIN] = r->compute_cycles - r->cat[CAT_COMPUTE] - r->cat[CAT_WEIGHT_SHIFT];
		r->folds = s->folds;
		r->gemm_ops = 1;
		gemm_sram(s, r);
		/* Memory time beyond compute waits on the operand that moves the most bytes. */
		excess_cat = s->read_bytes[OPND_B] >= s->read_bytes[OPND_A] && s->read_bytes[OPND_B] >= s->write_bytes ?
			     CAT_WEIGHTS : s->read_bytes[OPND_A] >= s->write_bytes ? CAT_INPUTS : CAT_OUTPUTS;
	} else {
		int64_t eb = array_elem_bytes(a->array.dtype), out = o->out_elems * eb;
		r->cat[CAT_VECTOR] = r->compute_cycles;
		/*
		 * Operands land in the input buffer (unless already held there) and
		 * are read once; results pass through the output buffer, then to HBM
		 * or to the activation storage.
		 */
		r->sram_write_bytes[SRAM_INPUTS] = r->hbm_read_bytes;
		r->sram_read_bytes[SRAM_INPUTS] = o->in_elems * eb;
		r->sram_write_bytes[SRAM_OUTPUTS] = r->sram_read_bytes[SRAM_OUTPUTS] = out;
		if (o->onchip & OC_C)
			r->sram_write_bytes[SRAM_INPUTS] += out;
		r->vector_ops = 1;
		excess_cat = r->hbm_read_bytes >= r->hbm_write_bytes ? CAT_INPUTS : CAT_OUTPUTS;
	}
	r->cat[excess_cat] += r->cycles - r->compute_cycles - r->cat[CAT_OP_FIXED];
	return 0;
}

int analytic_op(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal, struct result *r,
		struct err *e)
{
	return op_result(&cfg->arch, o, s, ideal, r, e);
}

/*
 * Op o split into parts[0 .. n) on the chip's arrays (each planned with the
 * view a): the arrays run together, so its compute is the slowest part's,
 * its memory time all the parts' HBM bytes at the chip's bandwidth, its
 * cycles the larger; its categories are the slowest part's, with the memory
 * time beyond compute added as for one op. Counts are summed.
 */
static int parts_result(const struct plan *p, const struct op *o, const struct chip_part *parts, struct result *r,
			struct err *e)
{
	int64_t slow_cat[CAT_N] = { 0 }, rd[2] = { 0 }, wr = 0;
	memset(r, 0, sizeof *r);
	for (int q = 0; q < p->arrays; q++) {
		struct result pr;
		if (!parts[q].op)
			continue;
		/* Each part's own time, without memory: the arrays share the chip's bandwidth, counted below. */
		if (op_result(&p->array, parts[q].op, parts[q].s, true, &pr, e) < 0)
			return -1;
		if (pr.compute_cycles >= r->compute_cycles)
			memcpy(slow_cat, pr.cat, sizeof slow_cat);
		int64_t compute = max64(r->compute_cycles, pr.compute_cycles);
		pr.cycles = 0;
		memset(pr.cat, 0, sizeof pr.cat);
		result_add(r, &pr);
		r->compute_cycles = compute;
		if (parts[q].s) {
			rd[0] += parts[q].s->read_bytes[OPND_A];
			rd[1] += parts[q].s->read_bytes[OPND_B];
			wr += parts[q].s->write_bytes;
		}
	}
	const struct plan_bound *b = &p->v[o - p->ops.v].bound;
	r->memory_cycles = b->memory_cycles;
	r->cycles = b->cycles;
	memcpy(r->cat, slow_cat, sizeof r->cat);
	r->cat[CAT_OP_FIXED] = b->fixed_cycles;
	int excess = o->kind != OP_GEMM ? (r->hbm_read_bytes >= r->hbm_write_bytes ? CAT_INPUTS : CAT_OUTPUTS)
		     : rd[1] >= rd[0] && rd[1] >= wr ? CAT_WEIGHTS : rd[0] >= wr ? CAT_INPUTS : CAT_OUTPUTS;
	r->cat[excess] += r->cycles - r->compute_cycles - b->fixed_cycles;
	return too_long(o, r, e);
}

int analytic_plan_op(const struct plan *p, size_t i, struct result *r, struct err *e)
{
	const struct op *o = &p->ops.v[i];
	const struct chip_part *cp = plan_parts(p, i);
	int by = p->v[i].by;
	if (p->arrays == 1 || o->kind == OP_COLL) {
		if (op_result(&p->cfg->arch, o, cp->s, p->ideal, r, e) < 0)
			return -1;
	} else if (parts_result(p, o, cp, r, e) < 0) {
		return -1;
	}
	r->split_m_ops = by == SPLIT_M;
	r->split_n_ops = by == SPLIT_N;
	r->spill_bytes = plan_spill_bytes(p, i);
	return 0;
}
