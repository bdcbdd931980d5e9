/*
 * sweepplot_int.h - what the reader (sweepplot_read.c), the Pareto front
 * (sweepplot_pareto.c) and the charts (sweepplot.c) share, not outside.
 */
#ifndef TPUSIM_SWEEPPLOT_INT_H
#define TPUSIM_SWEEPPLOT_INT_H

#include "sweepplot.h"

/* Whether ch may be in an axis name (and, as it is, in a file name): [A-Za-z0-9._-]. */
bool sweepplot_name_char(char ch);

/* Sorts the indexes idx[0..n-1] of points (x[i], y[i]) by x, then y, then index. */
void sweepplot_sort_xy(size_t *idx, size_t n, const double *x, const double *y);

#endif
