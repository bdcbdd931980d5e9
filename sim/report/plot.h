/*
 * plot.h - charts drawn by gnuplot (Debian package gnuplot-nox).
 *
 * The only module that runs gnuplot. Each chart is one gnuplot script with
 * its data inline, written to a temporary file and run; the picture goes to a
 * temporary name beside the target and is renamed into place, so a failed
 * plot leaves nothing behind. The terminal follows the extension: .png
 * (pngcairo) or .svg.
 */
#ifndef TPUSIM_PLOT_H
#define TPUSIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "config.h"
#include "err.h"
#include "run.h"
#include "workload.h"

/*
 * Checks, before anything is simulated, that a picture can be put at path:
 * its extension names a terminal and a file can be made beside it (and is
 * removed again). opt names the option in the message ("-o", "--plot").
 */
int plot_check(const char *path, const char *opt, struct err *e);

/*
 * The roofline of the accelerator (the slanted bandwidth line, the flat compute
 * roof, the ridge point) with every layer that does MACs as a point, and the
 * two canonical points: an elementwise vector add and an 8192^3 matrix multiply.
 */
int plot_roofline(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		  const struct run_opts *o, struct err *e);

/* Each layer's cycles as a bar stacked by category (stats.h). */
int plot_cycles(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		struct err *e);

/*
 * The whole run under each dataflow of c, two panels: its cycles as a ratio
 * to the base dataflow's (compare.h; ws unless left out), a bar per dataflow
 * stacked by category (cat.h) on a linear axis with the ratio printed on the
 * bar; and its energy likewise, stacked by component (energy.h).
 */
int plot_compare(const char *path, const struct config *cfg, const struct workload *w, const struct compare *c,
		 struct err *e);

/* ---- charts of a sweep (sweepplot.h decides what they show) ---- */

/* One line of a chart: n points (x[i], y[i]), in order of x (borrowed); z: each point's colour value, or NULL. */
struct plot_series {
	const char *title;
	size_t n;
	const double *x, *y, *z;
};

/* Tics at chosen places: n positions with their text (borrowed); n == 0: gnuplot's own. */
struct plot_tics {
	size_t n;
	const double *at;
	const char *const *text;
};

/*
 * A metric against one axis, a line per series. categories: x are category
 * indices 0 .. xtics.n-1, drawn as bars, the series' side by side in each
 * category; else numbers, joined as lines, on a log2 scale when xlog2. ylog:
 * y on a log10 scale, else linear from 0.
 */
struct plot_lines {
	const char *title, *xlabel, *ylabel;
	bool categories, xlog2, ylog;
	struct plot_tics xtics;
	int nseries;
	const struct plot_series *series;
};

int plot_lines(const char *path, const struct plot_lines *c, struct err *e);

/*
 * Heatmaps over two axes as a grid of nx x ny cells (x and y are indices,
 * labelled by xtics and ytics), one panel per metric side by side; each cell
 * coloured and printed with its value, z[y * nx + x], NaN: no value (left
 * blank). zlog: colours on a log10 scale.
 */
struct plot_heat_panel {
	const char *title, *zlabel;
	const double *z;
	bool zlog;
};

struct plot_heatmap {
	const char *title, *xlabel, *ylabel;
	size_t nx, ny;
	const char *const *xtics, *const *ytics;
	int npanels;                           /* 1 or 2 */
	struct plot_heat_panel panel[2];
};

int plot_heatmap(const char *path, const struct plot_heatmap *h, struct err *e);

/*
 * Two objectives, both minimised: every point (a series each, told apart by
 * the point's shape; coloured by a palette over their z when zlabel is not
 * NULL, else a colour per series), then the front's nfront points (sorted by
 * x) joined as a step line, each with its label. xlog, ylog, zlog: log10 scales.
 */
struct plot_pareto {
	const char *title, *xlabel, *ylabel, *zlabel;
	bool xlog, ylog, zlog;
	int nseries;
	const struct plot_series *series;
	size_t nfront;
	const double *fx, *fy;
	const char *const *labels;
	const char *front_title;
};

int plot_pareto(const char *path, const struct plot_pareto *p, struct err *e);

#endif
