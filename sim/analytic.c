/*
 * analytic.c - closed-form cycles of tile programs (see analytic.h).
 */
#include "analytic.h"

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

/* The closed form's time of an op: compute and memory bounds, and HBM bytes. */
static void bound(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal, struct result *r)
{
	const struct arch *a = &cfg->arch;
	memset(r, 0, sizeof *r);
	if (o->kind == OP_GEMM) {
		SIM_ASSERT(s && s->op == o);
		r->compute_cycles = analytic_gemm_cycles(s);
		r->hbm_read_bytes = s->read_bytes[OPND_A] + s->read_bytes[OPND_B];
		r->hbm_write_bytes = s->write_bytes;
	} else {
		int64_t eb = array_elem_bytes(a->array.dtype);
		r->compute_cycles = vector_cycles(&a->vector, o->lane_ops);
		r->hbm_read_bytes = (o->in_elems - o->onchip_elems) * eb;
		r->hbm_write_bytes = o->onchip & OC_C ? 0 : o->out_elems * eb;
	}
	r->memory_cycles = ideal ? 0 : arch_memory_cycles(a, r->hbm_read_bytes + r->hbm_write_bytes);
	r->cycles = max64(r->compute_cycles, r->memory_cycles);
}

static int too_long(const struct op *o, const struct result *r, struct err *e)
{
	char path[64], name[OP_NAME_MAX];
	if (r->cycles <= ANALYTIC_MAX_CYCLES)
		return 0;
	snprintf(path, sizeof path, "layers[%zu]", o->layer);
	return err_at(e, o->pos, path, "expected ops that take at most 2^50 cycles, found %s taking more "
		      "(a larger array, buffer or bandwidth would do)", op_name(o, name, sizeof name));
}

int analytic_check(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal,
		   int64_t *compute_cycles, struct err *e)
{
	struct result r;
	bound(cfg, o, s, ideal, &r);
	*compute_cycles = r.compute_cycles;
	return too_long(o, &r, e);
}

int64_t analytic_cycles(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal)
{
	struct result r;
	bound(cfg, o, s, ideal, &r);
	return r.cycles;
}

int analytic_op(const struct config *cfg, const struct op *o, const struct sched *s, bool ideal, struct result *r,
		struct err *e)
{
	int excess_cat;
	bound(cfg, o, s, ideal, r);
	if (too_long(o, r, e) < 0)
		return -1;
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
		int64_t eb = array_elem_bytes(cfg->arch.array.dtype), out = o->out_elems * eb;
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
	r->cat[excess_cat] += r->cycles - r->compute_cycles;
	return 0;
}

int analytic_parts(const struct config *cfg, const struct config *acfg, const struct op *o,
		   const struct chip_part *parts, int n, bool ideal, struct result *r, struct err *e)
{
	int64_t slow_cat[CAT_N] = { 0 }, rd[2] = { 0 }, wr = 0;
	memset(r, 0, sizeof *r);
	for (int q = 0; q < n; q++) {
		struct result p;
		if (!parts[q].op)
			continue;
		/* Each part's own time, without memory: the arrays share the chip's bandwidth, counted below. */
		if (analytic_op(acfg, parts[q].op, parts[q].s, true, &p, e) < 0)
			return -1;
		if (p.compute_cycles >= r->compute_cycles)
			memcpy(slow_cat, p.cat, sizeof slow_cat);
		int64_t compute = max64(r->compute_cycles, p.compute_cycles);
		p.cycles = 0;
		memset(p.cat, 0, sizeof p.cat);
		result_add(r, &p);
		r->compute_cycles = compute;
		if (parts[q].s) {
			rd[0] += parts[q].s->read_bytes[OPND_A];
			rd[1] += parts[q].s->read_bytes[OPND_B];
			wr += parts[q].s->write_bytes;
		}
	}
	r->memory_cycles = ideal ? 0 : arch_memory_cycles(&cfg->arch, r->hbm_read_bytes + r->hbm_write_bytes);
	r->cycles = max64(r->compute_cycles, r->memory_cycles);
	memcpy(r->cat, slow_cat, sizeof r->cat);
	int excess = o->kind != OP_GEMM ? (r->hbm_read_bytes >= r->hbm_write_bytes ? CAT_INPUTS : CAT_OUTPUTS)
		     : rd[1] >= rd[0] && rd[1] >= wr ? CAT_WEIGHTS : rd[0] >= wr ? CAT_INPUTS : CAT_OUTPUTS;
	r->cat[excess] += r->cycles - r->compute_cycles;
	return too_long(o, r, e);
}
