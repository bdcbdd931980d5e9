/*
 * sweepplot_pareto.c - the Pareto set of points in two minimised
 * objectives (see sweepplot.h), by one sort and a sweep in x.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdlib.h>

/* The points sorted by by_xy: qsort takes no context, so the objectives are here while it runs. */
static const double *pareto_x, *pareto_y;

static int by_xy(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (pareto_x[i] != pareto_x[j])
		return pareto_x[i] < pareto_x[j] ? -1 : 1;
	if (pareto_y[i] != pareto_y[j])
		return pareto_y[i] < pareto_y[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

void sweepplot_sort_xy(size_t *idx, size_t n, const double *x, const double *y)
{
	pareto_x = x;
	pareto_y = y;
	qsort(idx, n, sizeof *idx, by_xy);
}

size_t sweepplot_pareto(const double *x, const double *y, size_t n, bool *front)
{
	size_t *o = malloc((n + 1) * sizeof *o), count = 0;
	double best = INFINITY;     /* the least y among the points of smaller x */
	if (!o)
		return SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		o[i] = i;
	sweepplot_sort_xy(o, n, x, y);
	/*
	 * In order of x then y, a point is dominated by a point of smaller x
	 * with y no greater, or by one of equal x and smaller y: the first of
	 * its run of equal x.
	 */
	for (size_t s = 0; s < n;) {
		size_t end = s;
		while (end < n && x[o[end]] == x[o[s]])
			end++;
		for (size_t k = s; k < end; k++) {
			front[o[k]] = !(best <= y[o[k]]) && !(y[o[s]] < y[o[k]]);
			count += front[o[k]];
		}
		best = fmin(best, y[o[s]]);
		s = end;
	}
	free(o);
	return count;
}
