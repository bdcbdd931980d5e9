/*
 * sweepplot.h - the charts of a finished sweep, drawn from DIR/sweep.csv alone
 * (tpusim sweep --plot DIR [--hold AXIS=VALUE]... [--pareto X,Y] [--heatmaps
 * first|all]); plot.h draws them.
 *
 * The table: the csv sweep_run writes, as sweep.h declares it: a header
 * `workload`, the axes, then the columns of sweep_csv_cols, `point` and
 * `status`; one row per point. Only rows whose status is `ok` are drawn;
 * their metrics are read from those columns by name (sweepplot_read.c).
 *
 * Axes move in groups: two axes whose values always change together over the
 * rows (equal in two rows exactly when the other is) are one group, which is
 * how a zip group of the spec shows in the csv. An axis with one value is in
 * no group. A group is numeric when its first axis's values are all numbers,
 * else categorical. The group of the axis named `dataflow` splits the lines
 * (unless it is held); those of `batch` and `model` split the Pareto charts.
 *
 * The held point. A chart against one group holds every other group at one
 * value: the user's (sweepplot_opts.hold, "axis=value"), and for the groups
 * not named, the value of the best row: the ok row with the fewest cycles
 * among those with the user's values (of equal ones, the first in the csv).
 * Every title says the values held, "(--hold)" or "(best by cycles)". A hold
 * whose axis or value is not in the table, an axis held twice, or holds no ok
 * row has are an input error naming what there is, before anything is drawn.
 *
 * The charts, each as .png and .svg in DIR/plots/:
 *  - <metric>_vs_<axis>: each metric (sweepplot_metric_names: the columns
 *    cycles, utilization, tops, energy_pj, pj_per_mac, tops_per_w, area_mm2,
 *    power_w, tops_per_mm2, and hbm_bytes, the sum of hbm_read_bytes and
 *    hbm_write_bytes) against each group (named by its first axis); a series
 *    per workload x dataflow (workload only when there are several, dataflow
 *    only when it varies, is not held and is not the chart's axis); the other
 *    groups held. A numeric group as lines, on a log2 scale when its values
 *    are positive, span a factor of 4 or more, and are all powers of two or a
 *    geometric series (3 or more values, a constant ratio of 2 or more); a
 *    categorical one as bars, the series side by side. y on a log10 scale when
 *    it spans a factor of 30 or more. slice_<axis>.csv: the rows they draw.
 *  - heatmap_<workload>[_<dataflow>]: utilization and energy over the first
 *    two numeric groups (other than dataflow's), others held; one file per
 *    workload x dataflow, at most SWEEPPLOT_MAX_HEATMAPS of them (the first in
 *    the csv's order; a note names the others; all with all_heatmaps), and
 *    only for grids of at most SWEEPPLOT_MAX_CELLS cells along each axis.
 *  - pareto_<workload>[_batch<B>][_<model>]: one per workload x batch x model,
 *    of the rows with the user's held values (not the best row's), two objectives (sweepplot_pareto_pair; latency, energy, area) of every ok
 *    point, a series per dataflow, coloured by the third objective; the
 *    Pareto-optimal ones (sweepplot_pareto) joined as a step line and
 *    labelled with their axes by short name ("rows=16 cols=16 dataflow=os":
 *    a name's part after its last '.', or the whole name when two axes share
 *    that part; batch and model are in the title). pareto_<...>.csv: the front.
 *
 * The csv files (sweepplot_rows_csv) list workload, the axes, the metrics
 * shown (unscaled) and point, one row per row of sweep.csv drawn.
 * Everything is drawn into DIR/.plots.tmp.<pid> and moved into DIR/plots
 * only when all is drawn; a failure leaves DIR as it was. Then the charts
 * (and their csv files) of an earlier draw that this one did not draw again
 * are removed, so that DIR/plots holds one draw; a file of another name stays.
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

/* What --hold is checked against: n axes, each its name and its values as texts (borrowed). */
struct sweepplot_axes {
	int n;
	const char *name[SWEEP_MAX_AXES];
	size_t nvals[SWEEP_MAX_AXES];
	const char *const *vals[SWEEP_MAX_AXES];
};

/*
 * Each of the nhold holds "axis=value" as an axis index in ax[k] and a value
 * index in val[k]; an input error naming --hold, listing the axes (with the
 * nearest name) or the axis's values there are, for one that names none of
 * them or an axis again. sweepplot_dir checks the holds against the csv;
 * a sweep checks them against its spec too, before it runs.
 */
int sweepplot_hold_find(const struct sweepplot_axes *a, const char *const *hold, int nhold, int *ax, size_t *val,
			struct err *e);

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
