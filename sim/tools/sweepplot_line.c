/*
 * sweepplot_line.c - the line charts of a sweep (see sweepplot.h): each metric
 * against each group of axes, a line per workload x dataflow, every other
 * group held; x on a log2 scale for powers of two or a geometric series.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a numeric group's sorted values n belong on a log2 axis (see sweepplot.h). */
static bool log2_axis(const struct sweepplot_view *v, int g)
{
	size_t n = v->nd[v->lead[g]];
	const double *num = v->num[g];
	const size_t *o = v->order[g];
	double lo = num[o[0]], hi = num[o[n - 1]], ratio = n >= 2 ? num[o[1]] / num[o[0]] : 0;
	bool pow2 = true, geo = n >= 3 && ratio >= 2;
	if (n < 2 || lo <= 0 || hi / lo < 4)
		return false;
	for (size_t k = 0; k < n; k++) {
		int ex;
		pow2 &= frexp(num[o[k]], &ex) == 0.5;
		if (k)
			geo &= fabs(num[o[k]] / num[o[k - 1]] - ratio) <= 1e-9 * ratio;
	}
	return pow2 || geo;
}

/*
 * Series keys: workload w (when there are several) x dataflow value d (when
 * dataflow's group is not skip); row r's key, and each key's title in b.
 */
static size_t key_of(const struct sweepplot_view *v, int skip, size_t r)
{
	return wval(v, r) * ndf(v, skip) + (v->df >= 0 && v->df != skip ? gval(v, v->df, r) : 0);
}

static int key_titles(const struct sweepplot_view *v, int skip, struct sweepplot_bufs *b)
{
	size_t nd = ndf(v, skip);
	for (size_t k = 0; b->titles && k < b->nkeys; k++)
		free(b->titles[k]);
	free(b->titles);
	b->nkeys = v->nw * nd;
	if (!(b->titles = calloc(b->nkeys, sizeof *b->titles)))
		return -1;
	for (size_t w = 0; w < v->nw; w++)
		for (size_t d = 0; d < nd; d++) {
			char t[400];
			const char *dv = v->df >= 0 && v->df != skip ? v->label[v->df][d] : NULL;
			if (v->nw > 1 && dv)
				snprintf(t, sizeof t, "%s %s", v->wname[w], dv);
			else
				snprintf(t, sizeof t, "%s", dv ? dv : v->wname[w]);
			if (!(b->titles[w * nd + d] = strdup(t)))
				return -1;
		}
	return 0;
}

/* slice_<axis>.csv: the rows the charts against group g draw (b->pt), every metric. */
static int slice_csv(struct sweepplot_drawing *d, const struct sweepplot_view *v, int g, size_t np,
		     struct sweepplot_bufs *b, struct err *e)
{
	int m[SWEEPPLOT_NMETRICS];
	size_t *rows = malloc((np + 1) * sizeof *rows);
	char name[300];
	if (!rows)
		return err_nomem(e, NULL);
	for (int k = 0; k < SWEEPPLOT_NMETRICS; k++)
		m[k] = k;
	for (size_t k = 0; k < np; k++)
		rows[k] = b->pt[k].row;
	snprintf(name, sizeof name, "slice_%s", v->t->axis[v->lead[g]]);
	int rc = sweepplot_rows_csv(d, v, name, rows, np, m, SWEEPPLOT_NMETRICS, e);
	free(rows);
	return rc;
}

int sweepplot_chart_lines(struct sweepplot_drawing *d, const struct sweepplot_view *v, int g, struct sweepplot_bufs *b,
			  struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t nv = v->nd[v->lead[g]], np = 0;
	char held[3000], title[4000], xlabel[800], name[300];
	struct plot_lines c = { 0 };

	if (key_titles(v, g, b) < 0)
		return err_nomem(e, NULL);
	sweepplot_held_text(v, free_groups(v, g, -1), held, sizeof held);
	c.categories = !v->numeric[g];
	c.xlog2 = v->numeric[g] && log2_axis(v, g);
	sweepplot_axis_label(v, g, xlabel, sizeof xlabel);
	c.xlabel = xlabel;
	if (c.categories || nv <= 16) {
		for (size_t k = 0; k < nv; k++) {
			size_t val = v->order[g][k];
			b->tic_at[k] = c.categories ? (double)k : v->num[g][val];
			b->tic_text[k] = v->label[g][val];
		}
		c.xtics.n = nv;
		c.xtics.at = b->tic_at;
		c.xtics.text = b->tic_text;
	}
	for (size_t r = 0; r < t->nrows; r++) {
		if (!sweepplot_at_held(v, r, free_groups(v, g, -1)))
			continue;
		size_t val = gval(v, g, r);
		b->pt[np].series = key_of(v, g, r);
		b->pt[np].row = r;
		b->pt[np].x = c.categories ? (double)v->rank[g][val] : v->num[g][val];
		np++;
	}
	qsort(b->pt, np, sizeof *b->pt, sweepplot_by_series_x);
	if (slice_csv(d, v, g, np, b, e) < 0)
		return -1;
	c.nseries = sweepplot_split_series(b->pt, np, b->nkeys, b->titles, b->xs, b->ys, b->ser);
	c.series = b->ser;
	for (int m = 0; m < SWEEPPLOT_NMETRICS; m++) {
		struct sweepplot_scale s;
		double lo = INFINITY, hi = 0;
		for (size_t k = 0; k < np; k++) {
			lo = fmin(lo, t->rows[b->pt[k].row].m[m]);
			hi = fmax(hi, t->rows[b->pt[k].row].m[m]);
		}
		sweepplot_metric_scale(m, hi, &s);
		for (size_t k = 0; k < np; k++)
			b->ys[k] = t->rows[b->pt[k].row].m[m] / s.div;
		c.ylog = sweepplot_log10_axis(lo, hi);
		snprintf(title, sizeof title, "%s vs %s%s%s%s", sweepplot_metric_titles[m], v->name[g], v->nw == 1 ? ": " : "",
			 v->nw == 1 ? v->wname[0] : "", held);
		c.title = title;
		c.ylabel = s.label;
		snprintf(name, sizeof name, "%s_vs_%s", sweepplot_metric_names[m], t->axis[v->lead[g]]);
		if (sweepplot_draw(d, name, SWEEPPLOT_CH_LINES, &c, e) < 0)
			return -1;
	}
	return 0;
}
