/*
 * analytic.c - closed-form cycles of tile programs (see analytic.h).
 */
#include "analytic.h"

#include <math.h>
#include <string.h>

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}


/* Pipelined ws/is: the sum of array_chain over the fold order of schedule.h. */
static int64_t wsis_pipelined(const struct sched *s, int64_t rep)
{
	int64_t R = s->R, nr = s->nr, rk = s->rows - (nr - 1) * R, sr0 = nr == 1 ? rk : R;
	int64_t nt = s->nchunks, tt = s->chunk, tl = s->t - (nt - 1) * tt;
	int64_t sc_last = s->cols - (s->nc - 1) * s->C;
	int64_t nfull = rep * s->nc * (nt - 1), nlast = rep * s->nc;
	/* Within one (column, chunk) block: fold r overlaps the shift of fold r+1. */
#define INNER(T) (nr >= 2 ? (nr - 2) * max64((T), R) + max64((T), rk) : 0)
	int64_t sum = nfull * (INNER(tt) + max64(tt, sr0)) + nlast * INNER(tl) + (nlast - 1) * max64(tl, sr0);
#undef INNER
	return sr0 + sum + tl + R + sc_last - 2;
}

static int64_t wsis_serial(const struct sched *s, int64_t rep)
{
	int64_t nt = s->nchunks, f = s->nr * s->nc * nt;
	return rep * (s->nc * nt * s->rows + s->nc * s->nr * s->t + nt * s->nr * s->cols + f * (s->R - 2));
}

static int64_t os_cycles(const struct sched *s, int64_t rep)
{
	int64_t R = s->R, K = s->t, f = s->nr * s->nc;
	if (!s->dbuf)
		return rep * (f * (K + R - 2) + s->nc * s->rows + s->nr * s->cols);
	int64_t sr_last = s->rows - (s->nr - 1) * R, sc_last = s->cols - (s->nc - 1) * s->C;
	return K + (rep * f - 1) * max64(K, R) + sr_last + sc_last - 2 + R;
}

int64_t analytic_gemm_cycles(const struct sched *s)
{
	int64_t rep = s->op->repeat;
	if (s->compat) {
		struct array_params p = { .rows = s->R, .cols = s->C };
		return rep * (s->nr * s->nc * array_scalesim_fold_cycles(&p, s->df, s->t) - 1);
	}
	if (s->df == DF_OS)
		return os_cycles(s, rep);
	return s->dbuf ? wsis_pipelined(s, rep) : wsis_serial(s, rep);
}

static int64_t memory_cycles(const struct arch *a, int64_t bytes, bool ideal)
{
	if (ideal || bytes == 0)
		return 0;
	return (int64_t)ceil((double)bytes / hbm_bytes_per_cycle(&a->hbm, a->clock_ghz));
}

int analytic_op(const struct config *cfg, const struct op *o, int df, bool ideal, struct result *r,
		struct err *e)
{
	const struct arch *a = &cfg->arch;
	memset(r, 0, sizeof *r);
	if (o->kind == OP_GEMM) {
		struct sched s;
		if (sched_plan(&s, o, cfg, df, ideal, e) < 0)
			return -1;
		r->macs = op_macs(o);
		r->compute_cycles = analytic_gemm_cycles(&s);
		r->hbm_read_bytes = s.read_bytes[OPND_A] + s.read_bytes[OPND_B];
		r->hbm_write_bytes = s.write_bytes;
		r->folds = s.folds;
		r->gemm_ops = 1;
	} else {
		int64_t eb = array_elem_bytes(a->array.dtype);
		r->compute_cycles = vector_cycles(&a->vector, o->lane_ops);
		r->hbm_read_bytes = o->in_elems * eb;
		r->hbm_write_bytes = o->out_elems * eb;
		r->vector_ops = 1;
	}
	r->memory_cycles = memory_cycles(a, r->hbm_read_bytes + r->hbm_write_bytes, ideal);
	r->cycles = max64(r->compute_cycles, r->memory_cycles);
	return 0;
}

void result_add(struct result *a, const struct result *b)
{
	a->macs += b->macs;
	a->cycles += b->cycles;
	a->compute_cycles += b->compute_cycles;
	a->memory_cycles += b->memory_cycles;
	a->hbm_read_bytes += b->hbm_read_bytes;
	a->hbm_write_bytes += b->hbm_write_bytes;
	a->folds += b->folds;
	a->gemm_ops += b->gemm_ops;
	a->vector_ops += b->vector_ops;
}
