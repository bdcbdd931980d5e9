/*
 * sweepplot_chart.c - what every chart of a sweep uses (see sweepplot.h): how each
 * metric is scaled and labelled, when an axis is on a log10 scale, the
 * points split into series, and the buffers a chart is drawn from with each
 * row's label.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

void sweepplot_metric_scale(int m, double max, struct sweepplot_scale *s)
{
	static const char *const cyc[] = { "cycles", "cycles (thousands)", "cycles (millions)", "cycles (billions)",
					   "cycles (10^12)" };
	static const char *const bytes[] = { "B", "kB", "MB", "GB", "TB" };
	static const char *const pj[] = { "pJ", "nJ", "uJ", "mJ", "J" };
	int k = 0;
	while (k < 4 && max >= pow(1000, k + 1))
		k++;
	s->div = pow(1000, k);
	switch (m) {
	case SWEEPPLOT_CYCLES:
		snprintf(s->label, sizeof s->label, "%s", cyc[k]);
		break;
	case SWEEPPLOT_UTILIZATION:
		s->div = 0.01;
		snprintf(s->label, sizeof s->label, "utilization (%% of the array's peak MACs)");
		break;
	case SWEEPPLOT_TOPS:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "achieved TOPS (10^12 ops/s)");
		break;
	case SWEEPPLOT_HBM_BYTES:
		snprintf(s->label, sizeof s->label, "HBM traffic, read + write (%s)", bytes[k]);
		break;
	case SWEEPPLOT_ENERGY:
		snprintf(s->label, sizeof s->label, "energy (%s)", pj[k]);
		break;
	case SWEEPPLOT_PJ_PER_MAC:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "energy per MAC (pJ)");
		break;
	case SWEEPPLOT_TOPS_PER_W:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "TOPS per watt (10^12 ops/J)");
		break;
	case SWEEPPLOT_AREA:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "area (mm^2)");
		break;
	case SWEEPPLOT_POWER:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "average power (W)");
		break;
	default:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "TOPS per mm^2");
		break;
	}
}

const char *const sweepplot_metric_titles[SWEEPPLOT_NMETRICS] = { "cycles", "utilization", "achieved TOPS",
							       "HBM traffic", "energy", "energy per MAC", "TOPS/W",
							       "area", "power", "TOPS/mm^2" };

void sweepplot_axis_label(const struct sweepplot_view *v, int g, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s", v->name[g], *v->unit[g] ? " (" : "", v->unit[g], *v->unit[g] ? ")" : "");
}

bool sweepplot_log10_axis(double lo, double hi)
{
	return lo > 0 && hi / lo >= 30;
}

int sweepplot_by_series_x(const void *a, const void *b)
{
	const struct sweepplot_point *p = a, *q = b;
	if (p->series != q->series)
		return p->series < q->series ? -1 : 1;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->row < q->row ? -1 : p->row > q->row;
}

int sweepplot_split_series(const struct sweepplot_point *pt, size_t np, size_t nser, char **titles, double *xs,
			   double *ys, struct plot_series *ser)
{
	int n = 0;
	for (size_t k = 0; k < np;) {
		size_t s = pt[k].series, start = k;
		for (; k < np && pt[k].series == s; k++) {
			xs[k] = pt[k].x;
			ys[k] = pt[k].y;
		}
		SIM_ASSERT(s < nser);
		ser[n].title = titles[s];
		ser[n].n = k - start;
		ser[n].x = xs + start;
		ser[n].y = ys + start;
		ser[n].z = NULL;
		n++;
	}
	return n;
}

int sweepplot_rows_csv(struct sweepplot_drawing *d, const struct sweepplot_view *v, const char *name,
		       const size_t *rows, size_t n, const int *m, int nm, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	char *text = NULL, file[400];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return err_nomem(e, NULL);
	fputs(SWEEP_CSV_WORKLOAD, f);
	for (int i = 0; i < t->naxes; i++)
		fputc(',', f), report_csv_str(f, t->axis[i]);
	for (int k = 0; k < nm; k++)
		fprintf(f, ",%s", sweepplot_metric_names[m[k]]);
	fputs("," SWEEP_CSV_POINT "\n", f);
	for (size_t k = 0; k < n; k++) {
		const struct sweepplot_row *row = &t->rows[rows[k]];
		report_csv_str(f, row->workload);
		for (int i = 0; i < t->naxes; i++)
			fputc(',', f), report_csv_str(f, row->val[i]);
		for (int j = 0; j < nm; j++)
			fprintf(f, ",%.17g", row->m[m[j]]);
		fputc(',', f), report_csv_str(f, row->point);
		fputc('\n', f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return err_nomem(e, NULL);
	}
	snprintf(file, sizeof file, "%s.csv", name);
	int rc = sweepplot_write(d, file, text, len, e);
	free(text);
	return rc;
}

int sweepplot_bufs_make(const struct sweepplot_view *v, struct sweepplot_bufs *b)
{
	size_t n = v->t->nrows + 1, cells = (size_t)SWEEPPLOT_MAX_CELLS * SWEEPPLOT_MAX_CELLS;
	size_t tics = n > SWEEP_MAX_VALUES ? n : SWEEP_MAX_VALUES;
	memset(b, 0, sizeof *b);
	b->pt = malloc(n * sizeof *b->pt);
	b->xs = malloc(n * sizeof *b->xs);
	b->ys = malloc(n * sizeof *b->ys);
	b->zs = malloc(n * sizeof *b->zs);
	b->ser = malloc(n * sizeof *b->ser);
	b->tic_at = malloc(tics * sizeof *b->tic_at);
	b->tic_text = malloc(tics * sizeof *b->tic_text);
	b->z[0] = malloc(cells * sizeof *b->z[0]);
	b->z[1] = malloc(cells * sizeof *b->z[1]);
	b->front = malloc(n * sizeof *b->front);
	b->fx = malloc(n * sizeof *b->fx);
	b->fy = malloc(n * sizeof *b->fy);
	b->flab = malloc(n * sizeof *b->flab);
	if (!b->pt || !b->xs || !b->ys || !b->zs || !b->ser || !b->tic_at || !b->tic_text || !b->z[0] || !b->z[1] || !b->front ||
	    !b->fx || !b->fy || !b->flab)
		return -1;
	return 0;
}

void sweepplot_bufs_release(struct sweepplot_bufs *b)
{
	free(b->pt);
	free(b->xs);
	free(b->ys);
	free(b->zs);
	free(b->ser);
	for (size_t k = 0; b->titles && k < b->nkeys; k++)
		free(b->titles[k]);
	free(b->titles);
	free(b->tic_at);
	free(b->tic_text);
	free(b->z[0]);
	free(b->z[1]);
	free(b->front);
	free(b->fx);
	free(b->fy);
	free(b->flab);
}
