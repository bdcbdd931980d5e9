/*
 * sweepplot.h - the charts of a finished sweep, drawn from DIR/sweep.csv alone
 * (tpusim sweep --plot DIR); plot.h draws them.
 *
 * The table: the csv sweep_run writes, as sweep.h declares it: a header
 * `workload`, the axes, then the columns of sweep_csv_cols and `status`; one
 * row per point. Only rows whose status is `ok` are drawn; their metrics are
 * read from those columns by name (sweepplot_read.c).
 *
 * Axes move in groups: two axes whose values always change together over the
 * rows (equal in two rows exactly when the other is) are one group, which is
 * how a zip group of the spec shows in the csv. An axis with one value is in
 * no group. A group is numeric when its first axis's values are all numbers,
 * else categorical. The group of the axis named `dataflow` splits the lines.
 *
 * The charts, each as .png and .svg in DIR/plots/:
 *  - <metric>_vs_<axis>: each metric (sweepplot_metric_names: the columns
 *    cycles, utilization, tops, energy_pj, pj_per_mac, and hbm_bytes, the sum
 *    of hbm_read_bytes and hbm_write_bytes) against each group (named by its
 *    first axis); a line per workload x dataflow (workload only when there are
 *    several, dataflow only when it varies and is not the chart's axis); every
 *    other group held at its value in the first ok row, written in the title.
 *    A numeric group on a log2 scale when its values are positive, span a
 *    factor of 4 or more, and are all powers of two or a geometric series
 *    (3 or more values, a constant ratio of 2 or more); y on a log10 scale
 *    when it spans a factor of 30 or more.
 *  - heatmap_<workload>[_<dataflow>]: utilization and energy over the first
 *    two numeric groups (other than dataflow's), others held as above; one
 *    file per workload x dataflow, at most SWEEPPLOT_MAX_HEATMAPS of them
 *    (the first in the csv's order), and only for grids of at most
 *    SWEEPPLOT_MAX_CELLS cells along each axis.
 *  - pareto_<workload>: energy against cycles of every ok point of the
 *    workload; the Pareto-optimal ones (sweepplot_pareto) joined as a step
 *    line and labelled with their groups' values ("128x128 ws": a group's
 *    axes joined by x).
 *
 * The pictures are drawn into DIR/.plots.tmp.<pid> and moved into DIR/plots
 * only when all are drawn; a failure leaves DIR as it was.
 */
#ifndef TPUSIM_SWEEPPLOT_H
#define TPUSIM_SWEEPPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "limit.h"
#include "sweep.h"

#define SWEEPPLOT_NMETRICS 10

enum sweepplot_metric {
	SWEEPPLOT_CYCLES,
	SWEEPPLOT_UTILIZATION,
	SWEEPPLOT_TOPS,
	SWEEPPLOT_HBM_BYTES,         /* hbm_read_bytes + hbm_write_bytes */
	SWEEPPLOT_ENERGY,            /* energy_pj */
	SWEEPPLOT_PJ_PER_MAC,
	SWEEPPLOT_TOPS_PER_W,
	SWEEPPLOT_AREA,              /* area_mm2 */
	SWEEPPLOT_POWER,             /* power_w */
	SWEEPPLOT_TOPS_PER_MM2
};

/* The metrics as the charts' file names spell them: cycles, utilization, tops, hbm_bytes, energy_pj, pj_per_mac. */
extern const char *const sweepplot_metric_names[SWEEPPLOT_NMETRICS];

struct sweepplot_row {
	long line;                   /* where the row starts in the file */
	const char *workload;        /* borrowed from the table */
	const char **val;            /* the axes' values (naxes, borrowed from the table) */
	const char *point;           /* the point's file, relative to DIR (borrowed from the table) */
	const char *status;
	bool ok;
	double m[SWEEPPLOT_NMETRICS];   /* ok rows only */
};

struct sweepplot_table {
	char *file;                  /* the path read (owned) */
	char *text;                  /* the file, its fields unquoted in place (owned) */
	int naxes;
	const char *axis[SWEEP_MAX_AXES];   /* the axes' names, in the csv's order */
	size_t nrows, nok;
	struct sweepplot_row *rows;  /* owned */
	const char **vals;           /* nrows x naxes (owned) */
};

/*
 * Reads a sweep.csv at path (quoted fields as RFC 4180; \r\n or \n; blank
 * lines skipped). Errors are positioned: file:line:col. On error t holds
 * nothing to release. A table with no ok row is not an error here.
 */
int sweepplot_read(struct sweepplot_table *t, const char *path, struct err *e);

void sweepplot_release(struct sweepplot_table *t);

/*
 * The groups of t's axes (see the top): group[i] is the index of the first
 * axis of axis i's group, or -1 when axis i has one value in every row.
 * Returns the number of groups.
 */
int sweepplot_groups(const struct sweepplot_table *t, int group[]);

/*
 * The Pareto set of n points (x[i], y[i]), both minimised: front[i] says
 * whether no other point has x <= x[i] and y <= y[i] with one of them
 * strictly less (equal points are all on the front). Returns how many are,
 * or SIZE_MAX when memory ran out. O(n log n).
 */
size_t sweepplot_pareto(const double *x, const double *y, size_t n, bool *front);

/* What the user asks of the charts (the command line's --hold, --pareto, --heatmaps); zero: the defaults. */
#define SWEEPPLOT_MAX_HOLDS 16

struct sweepplot_opts {
	const char *hold[SWEEPPLOT_MAX_HOLDS];  /* "axis=value" each (borrowed) */
	int nhold;
	const char *pareto;          /* "x,y": two of latency, energy, area; NULL: the default */
	bool all_heatmaps;           /* every workload x dataflow pair, not only the first SWEEPPLOT_MAX_HEATMAPS */
};

/*
 * The Pareto objectives (names as --pareto takes them): each a metric, all
 * minimised. sweepplot_pareto_pair reads "x,y" (NULL: the default pair) into
 * their indexes here and the third, the points' colour; an input error
 * naming --pareto otherwise.
 */
#define SWEEPPLOT_NOBJ 3
#define SWEEPPLOT_PARETO_DEFAULT "latency,area"
extern const char *const sweepplot_obj_names[SWEEPPLOT_NOBJ + 1];       /* NULL-terminated */
int sweepplot_pareto_pair(const char *text, int pair[2], int *colour, struct err *e);

/* What sweepplot_dir did: the files written and lines for the user (owned). */
struct sweepplot_out {
	char **files;
	size_t nfiles;
	char **notes;
	size_t nnotes;
};

void sweepplot_out_release(struct sweepplot_out *o);

/* Reads DIR/sweep.csv and draws every chart into DIR/plots (see the top); opts borrowed, NULL: the defaults. */
int sweepplot_dir(const char *dir, const struct sweepplot_opts *opts, struct sweepplot_out *o, struct err *e);

#endif
