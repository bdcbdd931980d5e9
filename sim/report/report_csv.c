/*
 * report_csv.c - layers.csv and SCALE-Sim's COMPUTE_REPORT.csv (see report.h).
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void report_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_layers_csv(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	fprintf(f, "layer,type,phase");
	for (const struct result_field *fd = result_fields; fd->name; fd++) {
		for (int i = 0; fd->reported && i < fd->n; i++) {
			fputc(',', f);
			if (fd->parts)
				fprintf(f, fd->csv, fd->parts[i]);
			else
				fputs(fd->name, f);
		}
	}
	fputc('\n', f);
	for (size_t l = 0; l < c->run->n; l++) {
		const struct result *r = &c->run->layers[l];
		struct metrics m;
		report_metrics(a, r, c->opts->ideal_memory, &m);
		const struct layer *ly = run_row_layer(c->run, c->w, l);
		report_csv_str(f, ly->name);
		fprintf(f, ",%s,%s", layer_type_names[ly->type], step_phase_names[run_row_phase(c->run, l)]);
		for (const struct result_field *fd = result_fields; fd->name; fd++) {
			for (int i = 0; fd->reported && i < fd->n; i++) {
				fputc(',', f);
				report_field_num(f, fd, i, r, &m);
			}
		}
		fputc('\n', f);
	}
}

/* ---- SCALE-Sim's COMPUTE_REPORT.csv ---- */

/* v as Python prints a float (repr): the fewest digits that read back as v, "50.0", "1e-05". */
static const char *py_float(char *buf, size_t size, double v)
{
	char e[40];
	int p, exp10;
	if (!isfinite(v))
		return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
	if (v == 0)
		return signbit(v) ? "-0.0" : "0.0";
	for (p = 1; p < 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	snprintf(e, sizeof e, "%.*e", p - 1, v);
	exp10 = atoi(strchr(e, 'e') + 1);
	if (exp10 < -4 || exp10 >= 16) {
		snprintf(buf, size, "%s", e);
		return buf;
	}
	snprintf(buf, size, "%.*f", p - 1 - exp10 > 0 ? p - 1 - exp10 : 0, v);
	if (!strchr(buf, '.'))
		snprintf(buf + strlen(buf), size - strlen(buf), ".0");
	return buf;
}

/* One layer's folds as SCALE-Sim maps them (report.h): the folds, and the sums of their two ratios. */
struct scalesim_folds {
	double folds, mapped, util;
};

static void scalesim_op(const struct op *o, int df, int64_t R, int64_t C, struct scalesim_folds *f)
{
	int64_t sr = df == DF_OS ? o->m : o->k, sc = df == DF_IS ? o->m : o->n, t = df == DF_OS ? o->k : df == DF_IS ? o->n : o->m;
	double folds = (double)o->repeat * (double)((sr + R - 1) / R) * (double)((sc + C - 1) / C);
	double cycles = df == DF_OS ? (double)(R + C + t - 2) : (double)(2 * R + 2 * C + t - 3);
	double mapped = (double)o->repeat * (double)sr * (double)sc / (double)(R * C);
	f->folds += folds;
	f->mapped += mapped;
	f->util += mapped * (double)t / cycles;
}

void report_scalesim(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	const struct oplist *ops = c->ops;
	double pes = (double)arch_pes(a);
	size_t i = 0;
	SIM_ASSERT(ops);
	fputs("LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n", f);
	for (size_t l = 0; l < c->run->n; l++) {
		const struct result *r = &c->run->layers[l];
		struct scalesim_folds s = { 0, 0, 0 };
		char u[40], m[40], cu[40];
		/* A layer's ops follow the previous layer's (lower.h). */
		for (; i < ops->n && ops->v[i].layer == l; i++)
			if (ops->v[i].kind == OP_GEMM)
				scalesim_op(&ops->v[i], c->opts->dataflow, a->array.rows, a->array.cols, &s);
		fprintf(f, "%zu, %lld, %lld, %s, %s, %s,\n", l, (long long)r->cycles,
			(long long)(r->cycles > r->compute_cycles ? r->cycles - r->compute_cycles : 0),
			py_float(u, sizeof u, r->cycles ? 100.0 * (double)r->macs / ((double)r->cycles * pes) : 0.0),
			py_float(m, sizeof m, s.folds > 0 ? 100.0 * s.mapped / s.folds : 0.0),
			py_float(cu, sizeof cu, s.folds > 0 ? 100.0 * s.util / s.folds : 0.0));
	}
	SIM_ASSERT(i == ops->n);
}
