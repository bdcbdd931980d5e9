/*
 * analytic.c - closed-form cycles of tile programs (see analytic.h).
 */
#include "analytic.h"

#include <math.h>
#include <string.h>

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

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}



/* Pipelined ws/is: the sum of array_chain over the fold order of schedule.h. */
static wide wsis_pipelined(const struct sched *s, wide rep)
{
	wide R = s->R, nr = s->nr, rk = s->rows - (nr - 1) * R, sr0 = nr == 1 ? rk : R;
	wide nt = s->nchunks, tt = s->chunk, tl = s->t - (nt - 1) * tt;
	wide sc_last = s->cols - (s->nc - 1) * s->C;
	wide nfull = rep * s->nc * (nt - 1), nlast = rep * s->nc;
	/* Within one (column, chunk) block: fold r overlaps the shift of fold r+1. */
#define INNER(T) (nr >= 2 ? (nr - 2) * wmax((T), R) + wmax((T), rk) : 0)
	wide sum = nfull * (INNER(tt) + wmax(tt, sr0)) + nlast * INNER(tl) + (nlast - 1) * wmax(tl, sr0);
	wide e_last = sr0 + sum + tl;     /* the last fold's stream ends */
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
	return e_last + R + width - 2;
}

static wide wsis_serial(const struct sched *s, wide rep)
{
	wide nt = s->nchunks, f = s->nr * s->nc * nt;
	return rep * (s->nc * nt * s->rows + s->nc * s->nr * s->t + nt * s->nr * s->cols + f * (s->R - 2));
}

static wide os_cycles(const struct sched *s, wide rep)
{
	wide R = s->R, C = s->C, K = s->t, f = s->nr * s->nc;
	if (!s->dbuf)
		return rep * (f * (K + R - 2) + s->nc * s->rows + s->nr * s->cols);
	wide sr_last = s->rows - (s->nr - 1) * R, sc_last = s->cols - (s->nc - 1) * C;
	wide last = rep * f - 1, end = K + last * wmax(K, R) + sr_last + sc_last - 2 + R;
	/*
	 * An earlier, larger fold can finish draining after the last one: fold g's
	 * outputs leave when fold g + 1 has started (at K + g max(K, R)) plus its
	 * skew and an R-cycle drain. The latest fold of each shape lies in the last
	 * two row blocks of the last two column blocks of the last two chunks.
	 */
	wide per_chunk = s->chunk / R, nch = s->nchunks, base = (rep - 1) * f;
	for (wide i0 = nch >= 2 ? nch - 2 : 0; i0 < nch; i0++) {
		wide rows0 = i0 * s->chunk, nrc = (wmin(s->chunk, s->rows - rows0) + R - 1) / R;
		for (wide i1 = s->nc >= 2 ? s->nc - 2 : 0; i1 < s->nc; i1++) {
			for (wide i2 = nrc >= 2 ? nrc - 2 : 0; i2 < nrc; i2++) {
				wide g = base + i0 * per_chunk * s->nc + i1 * nrc + i2;
				if (g >= last)
					continue;
				wide sr = wmin(R, s->rows - rows0 - i2 * R), sc = wmin(C, s->cols - i1 * C);
				end = wmax(end, K + g * wmax(K, R) + sr + sc - 2 + R);
			}
		}
	}
	return end;
}

int64_t analytic_gemm_cycles(const struct sched *s)
{
	wide rep = s->op->repeat, c;
	if (s->compat) {
		/*
		 * SCALE-Sim: folds x per-fold cycles, minus one per layer; the minus
		 * one is dropped where a fold has no overhead to take it from (a 1x1
		 * os array), so that no MAC takes zero cycles.
		 */
		struct array_params p = { .rows = s->R, .cols = s->C };
		wide per = array_scalesim_fold_cycles(&p, s->df, s->t);
		c = rep * ((wide)s->nr * s->nc * per - (per > s->t ? 1 : 0));
	} else if (s->df == DF_OS) {
		c = os_cycles(s, rep);
	} else {
		c = s->dbuf ? wsis_pipelined(s, rep) : wsis_serial(s, rep);
	}
	return c > INT64_MAX ? INT64_MAX : (int64_t)c;
}

static int64_t memory_cycles(const struct arch *a, int64_t bytes, bool ideal)
{
	double c;
	if (ideal || bytes == 0)
		return 0;
	c = ceil((double)bytes / hbm_bytes_per_cycle(&a->hbm, a->clock_ghz));
	return c > (double)ANALYTIC_MAX_CYCLES ? INT64_MAX : (int64_t)c;
}

int64_t analytic_stream_cycles(const struct sched *s)
{
	/* ws/is: every (column, row) pair of blocks streams all of T once; os: every fold streams K. */
	return s->op->repeat * s->nr * s->nc * s->t;
}

/*
 * SRAM traffic of a planned GEMM, fold by fold summed in closed form: the
 * stationary tile shifted in, the streamed operand, partial sums written (and
 * read back to accumulate after the first row block), results read out to
 * the stores, and every HBM load written in.
 */
static void gemm_sram(const struct sched *s, struct result *r)
{
	const struct op *o = s->op;
	int64_t rep = o->repeat, eb = s->eb, ab = s->ab, mn = o->m * o->n;
	int64_t *rd = r->sram_read_bytes, *wr = r->sram_write_bytes;
	if (s->df == DF_OS) {
		rd[SRAM_INPUTS] += rep * s->nc * o->m * o->k * eb;
		rd[SRAM_WEIGHTS] += rep * s->nr * o->k * o->n * eb;
		wr[SRAM_OUTPUTS] += rep * mn * ab;
	} else {
		enum sram_buf sb = s->s_buf, xb = s->x_buf;
		rd[sb] += rep * s->nchunks * s->rows * s->cols * eb;     /* each stationary tile, once per chunk */
		rd[xb] += rep * s->nc * s->rows * s->t * eb;             /* the stream, once per column block */
		wr[SRAM_OUTPUTS] += rep * s->nr * mn * ab;
		rd[SRAM_OUTPUTS] += rep * (s->nr - 1) * mn * ab;
	}
	rd[SRAM_OUTPUTS] += s->write_bytes;
	wr[SRAM_INPUTS] += s->read_bytes[OPND_A];
	wr[SRAM_WEIGHTS] += s->read_bytes[OPND_B];
}

int analytic_op(const struct config *cfg, const struct op *o, int df, bool ideal, struct result *r,
		struct err *e)
{
	const struct arch *a = &cfg->arch;
	int excess_cat;
	memset(r, 0, sizeof *r);
	if (o->kind == OP_GEMM) {
		struct sched s;
		if (sched_plan(&s, o, cfg, df, ideal, e) < 0)
			return -1;
		r->macs = op_macs(o);
		r->compute_cycles = analytic_gemm_cycles(&s);
		r->cat[CAT_COMPUTE] = analytic_stream_cycles(&s);
		r->cat[CAT_FILL_DRAIN] = r->compute_cycles - r->cat[CAT_COMPUTE];
		r->hbm_read_bytes = s.read_bytes[OPND_A] + s.read_bytes[OPND_B];
		r->hbm_write_bytes = s.write_bytes;
		r->folds = s.folds;
		r->gemm_ops = 1;
		gemm_sram(&s, r);
		/* Memory time beyond compute waits on the operand that moves the most bytes. */
		excess_cat = s.read_bytes[OPND_B] >= s.read_bytes[OPND_A] && s.read_bytes[OPND_B] >= s.write_bytes ?
			     CAT_WEIGHTS : s.read_bytes[OPND_A] >= s.write_bytes ? CAT_INPUTS : CAT_OUTPUTS;
	} else {
		int64_t eb = array_elem_bytes(a->array.dtype);
		r->compute_cycles = vector_cycles(&a->vector, o->lane_ops);
		r->cat[CAT_VECTOR] = r->compute_cycles;
		r->hbm_read_bytes = o->in_elems * eb;
		r->hbm_write_bytes = o->out_elems * eb;
		/* Operands land in the input buffer and are read once; results pass through the output buffer. */
		r->sram_write_bytes[SRAM_INPUTS] = r->sram_read_bytes[SRAM_INPUTS] = r->hbm_read_bytes;
		r->sram_write_bytes[SRAM_OUTPUTS] = r->sram_read_bytes[SRAM_OUTPUTS] = r->hbm_write_bytes;
		r->vector_ops = 1;
		excess_cat = r->hbm_read_bytes >= r->hbm_write_bytes ? CAT_INPUTS : CAT_OUTPUTS;
	}
	r->memory_cycles = memory_cycles(a, r->hbm_read_bytes + r->hbm_write_bytes, ideal);
	r->cycles = max64(r->compute_cycles, r->memory_cycles);
	if (r->cycles > ANALYTIC_MAX_CYCLES) {
		char path[64];
		snprintf(path, sizeof path, "layers[%zu]", o->layer);
		return err_at(e, o->pos, path, "expected ops that take at most 2^50 cycles, found %s taking more "
			      "(a larger array, buffer or bandwidth would do)", o->name);
	}
	r->cat[excess_cat] += r->cycles - r->compute_cycles;
	return 0;
}
