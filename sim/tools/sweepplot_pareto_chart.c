/*
 * sweepplot_pareto_chart.c - the energy-vs-latency chart of each workload of a sweep
 * (see sweepplot.h): every ok point, a series per dataflow, and the Pareto
 * front (sweepplot_pareto) as a labelled step line.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int sweepplot_chart_pareto(struct sweepplot_drawing *d, const struct sweepplot_view *v, size_t w,
			   struct sweepplot_bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t np = 0, nf;
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	char title[600], ftitle[200], name[300];
	struct sweepplot_scale sx, sy;
	struct plot_pareto p = { 0 };

	for (size_t r = 0; r < t->nrows; r++) {
		if (!t->rows[r].ok || wval(v, r) != w)
			continue;
		b->pt[np].series = v->df >= 0 ? gval(v, v->df, r) : 0;
		b->pt[np].row = r;
		b->pt[np].x = t->rows[r].m[SWEEPPLOT_CYCLES];
		b->pt[np].y = t->rows[r].m[SWEEPPLOT_ENERGY];
		xlo = fmin(xlo, b->pt[np].x);
		xhi = fmax(xhi, b->pt[np].x);
		ylo = fmin(ylo, b->pt[np].y);
		yhi = fmax(yhi, b->pt[np].y);
		np++;
	}
	if (!np)
		return sweepplot_note(d->out, e, "pareto: none for %s, which has no ok row", v->wname[w]);
	qsort(b->pt, np, sizeof *b->pt, sweepplot_by_series_x);
	sweepplot_metric_scale(SWEEPPLOT_CYCLES, xhi, &sx);
	sweepplot_metric_scale(SWEEPPLOT_ENERGY, yhi, &sy);
	for (size_t k = 0; k < np; k++) {
		b->fx[k] = b->pt[k].x;
		b->fy[k] = b->pt[k].y;
	}
	nf = sweepplot_pareto(b->fx, b->fy, np, b->front);
	/* The front, in order of x then y (the points are in order of series then x). */
	size_t *fo = nf <= np ? malloc((nf + 1) * sizeof *fo) : NULL, n = 0;
	if (!fo)
		return err_nomem(e, NULL);
	for (size_t k = 0; k < np; k++)
		if (b->front[k])
			fo[n++] = k;
	sweepplot_sort_xy(fo, nf, b->fx, b->fy);
	for (size_t k = 0; k < nf; k++) {
		b->xs[k] = b->fx[fo[k]] / sx.div;
		b->ys[k] = b->fy[fo[k]] / sy.div;
		b->flab[k] = b->labels[b->pt[fo[k]].row];
	}
	free(fo);
	/* Every point, a series per dataflow. */
	for (size_t k = 0; k < np; k++) {
		b->pt[k].x /= sx.div;
		b->pt[k].y /= sy.div;
	}
	char *titles[SWEEP_MAX_VALUES];
	size_t nser = v->df >= 0 ? v->nd[v->lead[v->df]] : 1;
	if (nser > SWEEP_MAX_VALUES)
		nser = SWEEP_MAX_VALUES;
	for (size_t k = 0; k < nser; k++)
		titles[k] = v->df >= 0 ? v->label[v->df][k] : (char *)"design points";
	for (size_t k = 0; k < np; k++)
		if (b->pt[k].series >= nser)
			b->pt[k].series = nser - 1;
	p.nseries = sweepplot_split_series(b->pt, np, nser, titles, b->fx, b->fy, b->ser);
	p.series = b->ser;
	p.nfront = nf;
	p.fx = b->xs;
	p.fy = b->ys;
	p.labels = b->flab;
	snprintf(ftitle, sizeof ftitle, "Pareto front (%zu of %zu points)", nf, np);
	p.front_title = ftitle;
	snprintf(title, sizeof title, "energy vs latency: %s, every design point; the Pareto-optimal ones labelled",
		 v->wname[w]);
	p.title = title;
	p.xlabel = sx.label;
	p.ylabel = sy.label;
	p.xlog = sweepplot_log10_axis(xlo, xhi);
	p.ylog = sweepplot_log10_axis(ylo, yhi);
	snprintf(name, sizeof name, "pareto_%s", v->wname[w]);
	return sweepplot_draw(d, name, SWEEPPLOT_CH_PARETO, &p, e);
}
