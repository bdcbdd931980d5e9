/*
 * sweepplot_int.h - what the files of tpusim sweep --plot share, not outside:
 * the reader (sweepplot_read.c) and the Pareto set (sweepplot_pareto.c); the
 * view of the table the charts are drawn from, its groups and held values
 * (sweepplot_axes.c); what every chart uses, the metrics' scales, points,
 * series and buffers (sweepplot_chart.c); the three kinds of chart
 * (sweepplot_line.c, sweepplot_heat.c, sweepplot_pareto_chart.c); and the
 * drawing of their files into the temporary directory that replaces DIR/plots
 * (sweepplot_run.c).
 */
#ifndef TPUSIM_SWEEPPLOT_INT_H
#define TPUSIM_SWEEPPLOT_INT_H

#include "plot.h"
#include "sweepplot.h"

/* Whether ch may be in an axis name (and, as it is, in a file name): [A-Za-z0-9._-]. */
bool sweepplot_name_char(char ch);

/* Sorts the indexes idx[0..n-1] of points (x[i], y[i]) by x, then y, then index. */
void sweepplot_sort_xy(size_t *idx, size_t n, const double *x, const double *y);

/* ---- the view: the table's groups and values, what the charts show (sweepplot_axes.c) ---- */

/* The table seen by group: made by sweepplot_view_make, every array owned. */
struct sweepplot_view {
	const struct sweepplot_table *t;
	size_t *idx[SWEEP_MAX_AXES + 1];     /* each axis's value index per row; [naxes]: the workload's */
	size_t *first[SWEEP_MAX_AXES + 1];   /* each value's first row */
	size_t nd[SWEEP_MAX_AXES + 1];
	int group[SWEEP_MAX_AXES];
	int ng, lead[SWEEP_MAX_AXES];        /* the groups, by their first axes, in the csv's order */
	bool numeric[SWEEP_MAX_AXES];        /* per group */
	double *num[SWEEP_MAX_AXES];         /* per group: each value's number (numeric groups) */
	size_t *order[SWEEP_MAX_AXES];       /* per group: the values, sorted (numeric) or as first seen */
	size_t *rank[SWEEP_MAX_AXES];        /* per group: each value's place in order */
	char **label[SWEEP_MAX_AXES];        /* per group: each value's label, its axes' values joined by x */
	char name[SWEEP_MAX_AXES][600];      /* per group: its axes' names joined by " x " */
	char unit[SWEEP_MAX_AXES][40];       /* per group: the config key's unit, or "" */
	int df;                              /* the group of the axis dataflow (splits the lines), or -1 */
	int batch, model;                    /* the groups of the axes batch and model (split the Pareto charts), or -1 */
	char shortname[SWEEP_MAX_AXES][200]; /* per axis: its last dotted part, or its name when another shares that */
	uint64_t user;                       /* the groups the user holds (--hold) */
	size_t r0;                           /* the held row: the best by cycles of those with the user's held values */
	size_t nw;
	char **wname;                        /* each workload's short name */
};

/* Fills v from t (borrowed: it outlives v). Returns -1 when memory ran out; release v either way. */
int sweepplot_view_make(struct sweepplot_view *v, const struct sweepplot_table *t);

void sweepplot_view_release(struct sweepplot_view *v);

/* Row r's text of axis a, or its workload when a is -1. */
static inline const char *cell(const struct sweepplot_table *t, size_t r, int a)
{
	return a < 0 ? t->rows[r].workload : t->rows[r].val[a];
}

/* Group g's value in row r. */
static inline size_t gval(const struct sweepplot_view *v, int g, size_t r)
{
	return v->idx[v->lead[g]][r];
}

static inline size_t wval(const struct sweepplot_view *v, size_t r)
{
	return v->idx[v->t->naxes][r];
}

/* The set of groups g (and h, and the dataflow's), as a mask for sweepplot_at_held and sweepplot_held_text. */
static inline uint64_t free_groups(const struct sweepplot_view *v, int g, int h)
{
	uint64_t m = 0;
	if (g >= 0)
		m |= 1ULL << g;
	if (h >= 0)
		m |= 1ULL << h;
	if (v->df >= 0)
		m |= 1ULL << v->df;
	return m;
}

/* The dataflow values the lines split by: dataflow's, unless its group is skip (then 1). */
static inline size_t ndf(const struct sweepplot_view *v, int skip)
{
	return v->df >= 0 && v->df != skip ? v->nd[v->lead[v->df]] : 1;
}

/* Axis i's group: its index among the groups (v->lead), or -1 (the axis has one value). */
int sweepplot_axis_group(const struct sweepplot_view *v, int i);

/* Whether row r is ok and has the held value of every group not in mask. */
bool sweepplot_at_held(const struct sweepplot_view *v, size_t r, uint64_t mask);

/*
 * Sets v->user and v->r0 from the user's "axis=value" holds (see
 * sweepplot.h); a hold of the dataflow's group stops it splitting the
 * lines. An axis or a value not in the table, an axis held twice, or holds
 * no ok row has: an input error naming --hold, with what there is.
 */
int sweepplot_hold(struct sweepplot_view *v, const char *const *hold, int nhold, struct err *e);

/*
 * "; held at a=1 (--hold); b x c=2x2 (best by cycles)" for the groups not in
 * mask, or "".
 */
void sweepplot_held_text(const struct sweepplot_view *v, uint64_t mask, char *buf, size_t size);

/* s, at most max bytes of it, with every byte outside [A-Za-z0-9._-] as _, for a file name (owned). */
char *sweepplot_file_part(const char *s, size_t max);

/* ---- what every chart uses (sweepplot_chart.c) ---- */

struct sweepplot_drawing;

/* How a metric is shown: divided by div, with its axis label. */
struct sweepplot_scale {
	double div;
	char label[160];
};

/* Metric m's scale for values up to max. */
void sweepplot_metric_scale(int m, double max, struct sweepplot_scale *s);

/* The metrics as the charts' titles name them. */
extern const char *const sweepplot_metric_titles[SWEEPPLOT_NMETRICS];

/* Group g's axis label: its name, and its unit in parentheses when it has one. */
void sweepplot_axis_label(const struct sweepplot_view *v, int g, char *buf, size_t size);

/* Whether values from lo to hi (all of them positive) belong on a log10 axis. */
bool sweepplot_log10_axis(double lo, double hi);

/* A point of a chart: its series, x, y and row. */
struct sweepplot_point {
	size_t series, row;
	double x, y;
};

/* Orders points by series, then x, then row (for qsort). */
int sweepplot_by_series_x(const void *a, const void *b);

/*
 * The lines of points pt (np, sorted by series): series s's x and y into xs,
 * ys and the series array ser (titles from titles), those with points only.
 * Returns how many.
 */
int sweepplot_split_series(const struct sweepplot_point *pt, size_t np, size_t nser, char **titles, double *xs,
			   double *ys, struct plot_series *ser);

/* Buffers of one chart, as large as the table needs. */
struct sweepplot_bufs {
	struct sweepplot_point *pt;
	double *xs, *ys, *zs;
	struct plot_series *ser;
	char **titles;           /* per series key: workload x dataflow */
	size_t nkeys;
	double *tic_at;
	const char **tic_text;
	double *z[2];
	bool *front;
	double *fx, *fy;
	char **flab;             /* the front's labels, "rows x cols=8x8 dataflow=ws" (owned while a chart is drawn) */
};

/*
 * Writes name.csv beside the pictures: the rows (n, of v's table) a chart
 * draws, in its order, each as workload, the axes, the metrics m (nm of
 * them, unscaled, named as sweepplot_metric_names), then point.
 */
int sweepplot_rows_csv(struct sweepplot_drawing *d, const struct sweepplot_view *v, const char *name,
		       const size_t *rows, size_t n, const int *m, int nm, struct err *e);

/* b's buffers for v's table. Returns -1 when memory ran out; release b then. */
int sweepplot_bufs_make(const struct sweepplot_view *v, struct sweepplot_bufs *b);

void sweepplot_bufs_release(struct sweepplot_bufs *b);

/* ---- the charts, each drawn through sweepplot_draw ---- */

enum sweepplot_chart { SWEEPPLOT_CH_LINES, SWEEPPLOT_CH_HEAT, SWEEPPLOT_CH_PARETO };

struct sweepplot_drawing {
	char tmpdir[LIMIT_PATH_BUF];
	char plots[LIMIT_PATH_BUF];        /* where the files go: named in messages for the temporary directory */
	char **names;            /* the files drawn, in tmpdir */
	size_t n, cap;
	struct sweepplot_out *out;
};

/* Appends a line for the user to o->notes. Returns 0, or -1 when memory ran out. */
int sweepplot_note(struct sweepplot_out *o, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes len bytes of text as the file name in d->tmpdir, moved in with the pictures. */
int sweepplot_write(struct sweepplot_drawing *d, const char *name, const char *text, size_t len, struct err *e);

/* Draws the chart (a struct plot_lines, plot_heatmap or plot_pareto, by kind) as name.png and .svg in d->tmpdir. */
int sweepplot_draw(struct sweepplot_drawing *d, const char *name, enum sweepplot_chart kind, const void *chart,
		   struct err *e);

/* Each metric against group g (sweepplot_line.c). */
int sweepplot_chart_lines(struct sweepplot_drawing *d, const struct sweepplot_view *v, int g, struct sweepplot_bufs *b,
			  struct err *e);

/* The heatmaps over groups gx and gy: the first SWEEPPLOT_MAX_HEATMAPS, or all (sweepplot_heat.c). */
int sweepplot_chart_heat(struct sweepplot_drawing *d, const struct sweepplot_view *v, int gx, int gy, bool all,
			 struct sweepplot_bufs *b, struct err *e);

/*
 * The Pareto charts of workload w, one per batch x model, over the
 * objectives obj[0] (x) and obj[1] (y) coloured by obj[2] (-1: none), as
 * sweepplot_pareto_pair gives them (sweepplot_pareto_chart.c).
 */
int sweepplot_chart_pareto(struct sweepplot_drawing *d, const struct sweepplot_view *v, size_t w, const int *obj,
			   struct sweepplot_bufs *b, struct err *e);

#endif
