/*
 * functional_vcd.c - the functional model's per-PE signals in a VCD (see
 * functional.h, func_vcd_*): an observer of func_run that writes each PE's
 * registers as they change.
 */
#include "functional.h"

#include <stdlib.h>
#include <string.h>

#include "vcd.h"
#include "xmath.h"

struct func_vcd {
	vcd *v;
	int64_t base;                   /* the run's cycle at the op's cycle 0 */
	bool os, flt;
	int op, cycle, fold, loading;   /* the run's signals */
	int *id;                        /* R x C x FUNC_VCD_SIGNALS: each PE's */
	int64_t R, C;
};

func_vcd *func_vcd_open(const struct config *cfg, int df, const char *path, struct err *e)
{
	static const char *const wsis[FUNC_VCD_SIGNALS] = { "weight", "shadow", "input", "psum", "fold" };
	static const char *const os[FUNC_VCD_SIGNALS] = { "a", "b", "acc", "out", "fold" };
	const struct array_params *ap = &cfg->arch.array;
	char name[64];
	func_vcd *fv;
	if (arch_arrays(&cfg->arch) > 1) {
		err_input(e, "--vcd: expected a chip of one array for the functional model's per-PE signals, found %lld "
			  "(chip.cores x chip.arrays_per_core); use tpusim lab or --set chip.cores=1 --set "
			  "chip.arrays_per_core=1", (long long)arch_arrays(&cfg->arch));
		return NULL;
	}
	if (ap->rows > FUNC_VCD_MAX_PES || ap->cols > FUNC_VCD_MAX_PES) {
		err_input(e, "--vcd: expected an array of at most %d x %d for the functional model's per-PE signals, "
			  "found %lld x %lld; use tpusim lab, or a smaller array (--set array.rows=16 --set array.cols=16)",
			  FUNC_VCD_MAX_PES, FUNC_VCD_MAX_PES, (long long)ap->rows, (long long)ap->cols);
		return NULL;
	}
	if (!(fv = calloc(1, sizeof *fv)) ||
	    !(fv->id = malloc((size_t)(ap->rows * ap->cols * FUNC_VCD_SIGNALS) * sizeof *fv->id))) {
		free(fv);
		err_nomem(e, "--vcd");
		return NULL;
	}
	fv->R = ap->rows, fv->C = ap->cols;
	fv->os = df == DF_OS;
	fv->flt = ap->dtype != DT_INT8;
	if (!(fv->v = vcd_open(path, cfg->arch.clock_ghz, e))) {
		free(fv->id);
		free(fv);
		return NULL;
	}
	vcd_scope(fv->v, "tpusim");
	fv->op = vcd_var(fv->v, "op", VCD_STRING, 0);
	fv->cycle = vcd_var(fv->v, "cycle", VCD_INT, 64);
	fv->fold = vcd_var(fv->v, "fold", VCD_INT, 32);
	fv->loading = vcd_var(fv->v, "loading", VCD_INT, 32);
	for (int64_t i = 0; i < fv->R; i++)
		for (int64_t j = 0; j < fv->C; j++) {
			snprintf(name, sizeof name, "pe_%lld_%lld", (long long)i, (long long)j);
			vcd_scope(fv->v, name);
			for (int k = 0; k < FUNC_VCD_SIGNALS; k++)
				fv->id[(i * fv->C + j) * FUNC_VCD_SIGNALS + k] =
					vcd_var(fv->v, fv->os ? os[k] : wsis[k], k == 4 || !fv->flt ? VCD_INT : VCD_REAL, 32);
			vcd_upscope(fv->v);
		}
	vcd_upscope(fv->v);
	vcd_begin(fv->v);
	return fv;
}

void func_vcd_set_op(func_vcd *fv, const char *name, int64_t base)
{
	fv->base = base;
	vcd_str(fv->v, fv->op, base, name);
}

static void fvcd_value(func_vcd *fv, int id, int64_t t, double v)
{
	if (fv->flt)
		vcd_real(fv->v, id, t, v);
	else
		vcd_int(fv->v, id, t, (int64_t)v);
}

int func_vcd_observe(const struct func_view *v, void *ctx)
{
	func_vcd *fv = ctx;
	int64_t t = fv->base + v->cycle;
	SIM_ASSERT(v->R == fv->R && v->C == fv->C);
	vcd_int(fv->v, fv->cycle, t, t);
	vcd_int(fv->v, fv->fold, t, v->fold);
	vcd_int(fv->v, fv->loading, t, v->loading);
	for (int64_t q = 0; q < v->R * v->C; q++) {
		const struct func_pe *p = &v->pe[q];
		const int *id = &fv->id[q * FUNC_VCD_SIGNALS];
		const struct func_reg *r[4];
		if (fv->os) {
			r[0] = &p->x, r[1] = &p->p, r[2] = &p->acc, r[3] = &p->out;
			vcd_int(fv->v, id[4], t, p->acc.fold >= 0 ? p->acc.fold : p->out.fold);
		} else {
			r[0] = &p->w[p->wsel], r[1] = &p->w[1 - p->wsel], r[2] = &p->x, r[3] = &p->p;
			vcd_int(fv->v, id[4], t, p->w[p->wsel].fold);
		}
		for (int k = 0; k < 4; k++)
			fvcd_value(fv, id[k], t, r[k]->fold >= 0 ? r[k]->v : 0);
	}
	return 0;
}

int func_vcd_close(func_vcd *fv, int64_t end_cycle, struct err *e)
{
	int rc = vcd_close(fv->v, end_cycle, e);
	free(fv->id);
	free(fv);
	return rc;
}

void func_vcd_abandon(func_vcd *fv)
{
	if (!fv)
		return;
	vcd_abandon(fv->v);
	free(fv->id);
	free(fv);
}

int64_t func_vcd_bytes(const struct config *cfg, int64_t cycles)
{
	int64_t per = (cfg->arch.array.rows * cfg->arch.array.cols * FUNC_VCD_SIGNALS + 3) * FUNC_VCD_CHANGE_BYTES;
	return cycles > INT64_MAX / per ? INT64_MAX : cycles * per;
}
