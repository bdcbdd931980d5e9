/*
 * analytic.c - closed-form cycles of tile programs (see analytic.h).
 */
#include "analytic.h"

#include <string.h>

#include "xmath.h"

/* Cycle sums in 128 bits: a tiny array on a huge GEMM passes 64 bits before the checks see it. */
typedef __int128 wide;

static wide wmax(wide a, wide b)
{
	return a > b ? a : b;
}

static wide wmin(wide a, wide b)
{
	return a < b ? a : b;
}

/*
 * Pipelined ws/is: the fold chain of array.h over the fold order of
 * schedule.h. *e_last receives when the last fold's stream ends: the streams
 * plus the shifts they do not hide (weight_shift).
 */
static wide wsis_pipelined(const struct sched *s, wide rep, wide *e_last)
{
	wide R = s->R, nr = s->nr, rk = s->rows - (nr - 1) * R, sr0 = nr == 1 ? rk : R;
	wide nt = s->nchunks, tt = s->chunk, tl = s->t - (nt - 1) * tt;
	wide sc_last = s->cols - (s->nc - 1) * s->C;
	wide nfull = rep * s->nc * (nt - 1), nlast = rep * s->nc;
	/* Within one (column, chunk) block: fold r overlaps the shift of fold r+1. */
#define INNER(T) (nr >= 2 ? (nr - 2) * wmax((T), R) + wmax((T), rk) : 0)
	wide sum = nfull * (INNER(tt) + wmax(tt, sr0)) + nlast * INNER(tl) + (nlast - 1) * wmax(tl, sr0);
	*e_last = sr0 + sum + tl;
	/*
	 * The op ends when its last partial sums leave the array. The last column
	 * block may be narrower than the one before it, whose last sums cross C
	 * columns: that block's streams ended P cycles before the last one's,
	 * P being the span of the last column's blocks (all its chunks when
	 * columns are the outer loop, only the last chunk when chunks are).
	 */
	wide width = sc_last;
	if (s->nc >= 2) {
		wide p = wmax(tl, sr0) + INNER(tl);
		if (s->order == ORDER_CT)
			p += (nt - 1) * wmax(tt, sr0) + (nt - 1) * INNER(tt);
		width = wmax(width, s->C - p);
	}
#undef INNER
	return *e_last + R + width - 2;
}

/*
 * Serial ws/is: each fold shifts its tile in (Sr) after the previous stream
 * and streams (T); partial sums drain behind. The op ends R + Sc - 2 after
 * the last stream, or later when the block before the last column block,
 * C wide, is still draining: it ended P cycles before, P being the last
 * column block's shifts and streams.
 */
static wide wsis_serial(const struct sched *s, wide rep)
{
	wide R = s->R, nt = s->nchunks, tl = s->t - (nt - 1) * s->chunk;
	wide width = s->cols - (s->nc - 1) * s->C;
	if (s->nc >= 2) {
		wide p = s->order == ORDER_CT ? nt * s->rows + s->nr * s->t : s->rows + s->nr * tl;
		width = wmax(width, s->C - p);
	}
	return rep * (s->nc * nt * s->rows + s->nc * s->nr * s->t) + R + width - 2;
}

/*
 * os (functional.h): fold g's stream ends at e_g = K + the spacing of the
 * folds before it, max(K, Sr) pipelined (its results wait for the out
 * registers the block before drains through), K + Sr - 1 serial (its first
 * MAC waits for the accumulators). Only the last row block of the last chunk
 * may have fewer than R rows (rk), once per column block. A block's last
 * results leave Sr + Sc - 2 + R after its stream ends; the op ends with the
 * latest, which is the latest fold of one of the four shapes (R or rk rows,
 * C or the last columns): in the last two row blocks of the last two column
 * blocks of the last two chunks of the last instance.
 */
static wide os_space(const struct sched *s, wide sr)
{
	return s->dbuf ? wmax(s->t, sr) : s->t + sr - 1;
}

static wide os_cycles(const struct sched *s, wide rep)
{
	wide R = s->R, C = s->C, K = s->t, f = s->nr * s->nc, rk = s->rows - (s->nr - 1) * R;
	wide per_chunk = s->chunk / R, nch = s->nchunks, end = 0;
	wide sp_full = os_space(s, R), sp_part = os_space(s, rk);
	for (wide i0 = nch >= 2 ? nch - 2 : 0; i0 < nch; i0++) {
		wide rows0 = i0 * s->chunk, nrc = (wmin(s->chunk, s->rows - rows0) + R - 1) / R;
		for (wide i1 = s->nc >= 2 ? s->nc - 2 : 0; i1 < s->nc; i1++) {
			for (wide i2 = nrc >= 2 ? nrc - 2 : 0; i2 < nrc; i2++) {
				wide g = (rep - 1) * f + i0 * per_chunk * s->nc + i1 * nrc + i2;
				/* Folds of rk rows before g: one per column block in each earlier instance, and in this chunk if it is the last. */
				wide q = (rep - 1) * s->nc + (i0 == nch - 1 ? i1 : 0);
				wide e_g = K + (g - q) * sp_full + q * sp_part;
				wide sr = wmin(R, s->rows - rows0 - i2 * R), sc = wmin(C, s->cols - i1 * C);
				end = wmax(end, e_g + sr + sc - 2 + R);
			}
		}
	}
	return end;
}

static int64_t clamp64(wide c)
{
	return c > INT64_MAX ? INT64_MAX : (int64_t)c;
}

int64_t analytic_gemm_cycles(const struct sched *s)
{
	wide rep = s->op->repeat, c, e_last;
	if (s->compat) {
		/* SCALE-Sim counts each repeated instance as a layer. */
		struct array_params p = { .rows = s->R, .cols = s->C };
		c = rep * array_scalesim_layer_cycles(&p, s->df, s->nr * s->nc, s->t);
	} else if (s->df == DF_OS) {
		c = os_cycles(s, rep);
	} else {
		c = s->dbuf ? wsis_pipelined(s, rep, &e_last) : wsis_serial(s, rep);
	}
	return clamp64(c);
}

int64_t analytic_stream_cycles(const struct sched *s)
{
	/* ws/is: every (column, row) pair of blocks streams all of T once; os: every fold streams K. */
	return s->op->repeat * s->nr * s->nc * s->t;
}

int64_t analytic_shift_cycles(const struct sched *s)
{
	wide rep = s->op->repeat, e_last;
	if (s->df == DF_OS)
		return 0;
	/* SCALE-Sim: an R-cycle preload per fold, of which a 1x1 array gives up its layer's one cycle. */
	if (s->compat)
		return clamp64(rep * ((wide)s->nr * s->nc * s->R - (s->R + s->C == 2)));
	/* Serial: every shift, Sr summed over the row blocks of each (column, chunk) block. */
	if (!s->dbuf)
		return clamp64(rep * s->nc * s->nchunks * s->rows);
	/* Pipelined: where the last stream ends, less the streams. */
	wsis_pipelined(s, rep, &e_last);
	return clamp64(e_last - rep * s->nr * s->nc * s->t);
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
	return err_at(e, o->pos, path, "expected ops that take at most 2^" LIMIT_STR(ANALYTIC_MAX_CYCLES_LOG2) " cycles, found %s taking more "
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
