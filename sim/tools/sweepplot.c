/*
 * sweepplot.c - the charts of a finished sweep (see sweepplot.h): the groups
 * of axes found in the table, what each chart shows (the lines, the heatmaps,
 * the energy-vs-latency front), drawn through plot.h into a temporary
 * directory that replaces DIR/plots only when every chart is drawn.
 */
#include "sweepplot.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "config.h"
#include "fsx.h"
#include "plot.h"

/* ---- groups of axes ---- */

/* Row r's text of axis a, or its workload when a is -1. */
static const char *cell(const struct sweepplot_table *t, size_t r, int a)
{
	return a < 0 ? t->rows[r].workload : t->rows[r].val[a];
}

static uint64_t text_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * The distinct texts of axis a (or the workload, a = -1) over the rows, in
 * order of first appearance: idx[r] is row r's; first[k] the first row with
 * value k. Returns their number, or 0 when memory ran out.
 */
static size_t distinct(const struct sweepplot_table *t, int a, size_t *idx, size_t *first)
{
	size_t cap = 16, nd = 0;
	while (cap < 2 * t->nrows)
		cap *= 2;
	size_t *slot = malloc(cap * sizeof *slot);
	if (!slot)
		return 0;
	memset(slot, 0xff, cap * sizeof *slot);
	for (size_t r = 0; r < t->nrows; r++) {
		const char *s = cell(t, r, a);
		size_t h = (size_t)text_hash(s) & (cap - 1);
		while (slot[h] != SIZE_MAX && strcmp(cell(t, first[slot[h]], a), s))
			h = (h + 1) & (cap - 1);
		if (slot[h] == SIZE_MAX) {
			slot[h] = nd;
			first[nd++] = r;
		}
		idx[r] = slot[h];
	}
	free(slot);
	return nd;
}

/* Whether two value indexings (na and nb values) are equal in the same rows; map has na entries. */
static bool together(const size_t *a, size_t na, const size_t *b, size_t nb, size_t nrows, size_t *map)
{
	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++)
		map[k] = SIZE_MAX;
	for (size_t r = 0; r < nrows; r++) {
		if (map[a[r]] == SIZE_MAX)
			map[a[r]] = b[r];
		else if (map[a[r]] != b[r])
			return false;
	}
	return true;
}

/* Fills group (see sweepplot_groups) from the axes' indexings; map: scratch of nrows. */
static int find_groups(const struct sweepplot_table *t, size_t *const *idx, const size_t *nd, size_t *map, int *group)
{
	int ng = 0;
	for (int i = 0; i < t->naxes; i++) {
		group[i] = -1;
		if (nd[i] < 2)
			continue;
		for (int j = 0; j < i && group[i] < 0; j++)
			if (group[j] == j && together(idx[j], nd[j], idx[i], nd[i], t->nrows, map))
				group[i] = j;
		if (group[i] < 0) {
			group[i] = i;
			ng++;
		}
	}
	return ng;
}

int sweepplot_groups(const struct sweepplot_table *t, int group[])
{
	size_t *idx[SWEEP_MAX_AXES] = { 0 }, nd[SWEEP_MAX_AXES] = { 0 };
	size_t *first = malloc((t->nrows + 1) * sizeof *first), *map = malloc((t->nrows + 1) * sizeof *map);
	int ng = -1;
	bool ok = first && map;
	for (int i = 0; ok && i < t->naxes; i++) {
		ok = (idx[i] = malloc((t->nrows + 1) * sizeof *idx[i])) != NULL;
		nd[i] = ok ? distinct(t, i, idx[i], first) : 0;
		ok &= nd[i] > 0 || t->nrows == 0;
	}
	if (ok)
		ng = find_groups(t, idx, nd, map, group);
	for (int i = 0; i < t->naxes; i++)
		free(idx[i]);
	free(first);
	free(map);
	return ng;
}

/* ---- what the charts show ---- */

struct view {
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
	int df;                              /* the group of the axis dataflow, or -1 */
	size_t r0;                           /* the first ok row: the held values */
	size_t nw;
	char **wname;                        /* each workload's short name */
};

static void view_release(struct view *v)
{
	for (int i = 0; i <= SWEEP_MAX_AXES; i++) {
		free(v->idx[i]);
		free(v->first[i]);
	}
	for (int g = 0; g < v->ng; g++) {
		for (size_t k = 0; v->label[g] && k < v->nd[v->lead[g]]; k++)
			free(v->label[g][k]);
		free(v->label[g]);
		free(v->num[g]);
		free(v->order[g]);
		free(v->rank[g]);
	}
	for (size_t w = 0; v->wname && w < v->nw; w++)
		free(v->wname[w]);
	free(v->wname);
}

/* s with every byte outside [A-Za-z0-9._-] as _, for a file name (owned). */
static char *file_part(const char *s, size_t max)
{
	size_t n = strlen(s) < max ? strlen(s) : max;
	char *o = malloc(n + 1);
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		o[i] = sweepplot_name_char(s[i]) ? s[i] : '_';
	o[n] = '\0';
	return o;
}

/* Short names of the workloads: the file name without its extension; a name taken already gets _<n>. */
static int workload_names(struct view *v)
{
	size_t wi = (size_t)v->t->naxes;
	if (!(v->wname = calloc(v->nw, sizeof *v->wname)))
		return -1;
	for (size_t w = 0; w < v->nw; w++) {
		const char *p = cell(v->t, v->first[wi][w], -1), *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p;
		const char *dot = strrchr(base, '.');
		char buf[200];
		snprintf(buf, sizeof buf, "%.*s", (int)(dot && dot > base ? dot - base : (long)strlen(base)), base);
		if (!*buf)
			snprintf(buf, sizeof buf, "workload");
		for (size_t k = 0; k < w; k++)
			if (!strcmp(v->wname[k], buf)) {
				snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "_%zu", w + 1);
				break;
			}
		if (!(v->wname[w] = file_part(buf, 190)))
			return -1;
	}
	return 0;
}

static const struct view *sort_view;
static int sort_group;

static int by_number(const void *a, const void *b)
{
	double x = sort_view->num[sort_group][*(const size_t *)a], y = sort_view->num[sort_group][*(const size_t *)b];
	if (x != y)
		return x < y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Group g's values: numbers, order, labels. */
static int group_values(struct view *v, int g)
{
	const struct sweepplot_table *t = v->t;
	int a = v->lead[g];
	size_t nd = v->nd[a];
	char *np;
	if (!(v->num[g] = calloc(nd, sizeof *v->num[g])) || !(v->order[g] = calloc(nd, sizeof *v->order[g])) ||
	    !(v->rank[g] = calloc(nd, sizeof *v->rank[g])) || !(v->label[g] = calloc(nd, sizeof *v->label[g])))
		return -1;
	v->numeric[g] = true;
	for (size_t k = 0; k < nd; k++) {
		const char *s = cell(t, v->first[a][k], a);
		errno = 0;
		v->num[g][k] = strtod(s, &np);
		v->numeric[g] &= *s && !*np && errno != ERANGE && isfinite(v->num[g][k]) && !strchr(" \t\n", *s);
		v->order[g][k] = k;
	}
	if (v->numeric[g]) {
		sort_view = v;
		sort_group = g;
		qsort(v->order[g], nd, sizeof *v->order[g], by_number);
	}
	for (size_t k = 0; k < nd; k++)
		v->rank[g][v->order[g][k]] = k;
	/* A value's label: the group's axes' values in the first row with it, joined by x. */
	for (size_t k = 0; k < nd; k++) {
		size_t r = v->first[a][k], len = 1;
		for (int i = 0; i < t->naxes; i++)
			if (v->group[i] == a)
				len += strlen(cell(t, r, i)) + 1;
		if (!(v->label[g][k] = malloc(len)))
			return -1;
		v->label[g][k][0] = '\0';
		for (int i = 0; i < t->naxes; i++)
			if (v->group[i] == a) {
				if (i != a)
					strcat(v->label[g][k], "x");
				strcat(v->label[g][k], cell(t, r, i));
			}
	}
	/* Its name, and the unit its config keys share. */
	v->name[g][0] = '\0';
	v->unit[g][0] = '\0';
	bool same = true;
	for (int i = 0; i < t->naxes; i++) {
		if (v->group[i] != a)
			continue;
		size_t n = strlen(v->name[g]);
		snprintf(v->name[g] + n, sizeof v->name[g] - n, "%s%s", i != a ? " x " : "", t->axis[i]);
		int c = cfg_find(config_schema(), t->axis[i]);
		const char *u = c >= 0 ? config_schema()->e[c].key->unit : "";
		if (i == a)
			snprintf(v->unit[g], sizeof v->unit[g], "%s", u);
		else
			same &= !strcmp(u, v->unit[g]);
	}
	if (!same)
		v->unit[g][0] = '\0';
	return 0;
}

static int view_make(struct view *v, const struct sweepplot_table *t)
{
	size_t *map;
	memset(v, 0, sizeof *v);
	v->t = t;
	v->df = -1;
	for (int i = 0; i <= t->naxes; i++) {
		int a = i < t->naxes ? i : -1;
		if (!(v->idx[i] = malloc((t->nrows + 1) * sizeof *v->idx[i])) ||
		    !(v->first[i] = malloc((t->nrows + 1) * sizeof *v->first[i])) ||
		    !(v->nd[i] = distinct(t, a, v->idx[i], v->first[i])))
			return -1;
	}
	v->nw = v->nd[t->naxes];
	if (!(map = malloc((t->nrows + 1) * sizeof *map)))
		return -1;
	find_groups(t, v->idx, v->nd, map, v->group);
	free(map);
	for (int i = 0; i < t->naxes; i++)
		if (v->group[i] == i)
			v->lead[v->ng++] = i;
	for (int g = 0; g < v->ng; g++) {
		if (group_values(v, g) < 0)
			return -1;
		for (int i = 0; i < t->naxes; i++)
			if (v->group[i] == v->lead[g] && !strcmp(t->axis[i], "dataflow"))
				v->df = g;
	}
	for (v->r0 = 0; v->r0 < t->nrows && !t->rows[v->r0].ok; v->r0++)
		;
	return workload_names(v);
}

/* Group g's value in row r. */
static size_t gval(const struct view *v, int g, size_t r)
{
	return v->idx[v->lead[g]][r];
}

static size_t wval(const struct view *v, size_t r)
{
	return v->idx[v->t->naxes][r];
}

/* The set of groups g (and h, and the dataflow's), as a mask for at_held and held_text. */
static uint64_t free_groups(const struct view *v, int g, int h)
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

/* Whether row r is ok and has the held value of every group not in mask. */
static bool at_held(const struct view *v, size_t r, uint64_t mask)
{
	if (!v->t->rows[r].ok)
		return false;
	for (int g = 0; g < v->ng; g++)
		if (!(mask >> g & 1) && gval(v, g, r) != gval(v, g, v->r0))
			return false;
	return true;
}

/* "; held at a=1, b x c=2x2" for the groups not in mask, or "". */
static void held_text(const struct view *v, uint64_t mask, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int g = 0; g < v->ng && n + 1 < size; g++) {
		if (mask >> g & 1)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", n ? ", " : "; held at ", v->name[g],
				      v->label[g][gval(v, g, v->r0)]);
	}
}

/* How a metric is shown: divided by div, with its axis label. */
struct scale {
	double div;
	char label[160];
};

static void metric_scale(int m, double max, struct scale *s)
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
	default:
		s->div = 1;
		snprintf(s->label, sizeof s->label, "energy per MAC (pJ)");
		break;
	}
}

static const char *const metric_titles[SWEEPPLOT_NMETRICS] = { "cycles", "utilization", "achieved TOPS",
							       "HBM traffic", "energy", "energy per MAC" };

/* Whether a numeric group's sorted values n belong on a log2 axis (see sweepplot.h). */
static bool log2_axis(const struct view *v, int g)
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

/* Whether values from lo to hi (all of them positive) belong on a log10 axis. */
static bool log10_axis(double lo, double hi)
{
	return lo > 0 && hi / lo >= 30;
}

/* ---- drawing ---- */

enum chart_kind { CH_LINES, CH_HEAT, CH_PARETO };

struct drawing {
	char tmpdir[LIMIT_PATH_BUF];
	char plots[LIMIT_PATH_BUF];        /* where the files go: named in messages for the temporary directory */
	char **names;            /* the files drawn, in tmpdir */
	size_t n, cap;
	struct sweepplot_out *out;
};

static int note(struct sweepplot_out *o, struct err *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int note(struct sweepplot_out *o, struct err *e, const char *fmt, ...)
{
	char buf[1000], **nn = realloc(o->notes, (o->nnotes + 1) * sizeof *nn);
	va_list ap;
	if (!nn)
		return err_nomem(e, NULL);
	o->notes = nn;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (!(o->notes[o->nnotes] = strdup(buf)))
		return err_nomem(e, NULL);
	o->nnotes++;
	return 0;
}

/* Draws the chart as name.png and name.svg in the temporary directory. */
static int draw(struct drawing *d, const char *name, enum chart_kind kind, const void *chart, struct err *e)
{
	static const char *const ext[2] = { "png", "svg" };
	for (int k = 0; k < 2; k++) {
		char path[4700], *keep;
		int rc;
		snprintf(path, sizeof path, "%s/%s.%s", d->tmpdir, name, ext[k]);
		if (d->n == d->cap) {
			size_t nc = d->cap ? 2 * d->cap : 64;
			char **nn = realloc(d->names, nc * sizeof *nn);
			if (!nn)
				return err_nomem(e, NULL);
			d->names = nn;
			d->cap = nc;
		}
		if (kind == CH_LINES)
			rc = plot_lines(path, chart, e);
		else if (kind == CH_HEAT)
			rc = plot_heatmap(path, chart, e);
		else
			rc = plot_pareto(path, chart, e);
		if (rc < 0) {
			char *at = strstr(e->msg, d->tmpdir), msg[ERR_MSG_MAX];
			if (at) {
				snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - e->msg), e->msg, d->plots, at + strlen(d->tmpdir));
				memcpy(e->msg, msg, sizeof msg);
			}
			return -1;
		}
		if (!(keep = malloc(strlen(name) + 5)))
			return err_nomem(e, NULL);
		sprintf(keep, "%s.%s", name, ext[k]);
		d->names[d->n++] = keep;
	}
	return 0;
}

/* A point of a chart: its series, x, y and row. */
struct point {
	size_t series, row;
	double x, y;
};

static int by_series_x(const void *a, const void *b)
{
	const struct point *p = a, *q = b;
	if (p->series != q->series)
		return p->series < q->series ? -1 : 1;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->row < q->row ? -1 : p->row > q->row;
}

/*
 * The lines of points pt (np, sorted by series): series s's x and y into xs,
 * ys and the series array ser (titles from titles), those with points only.
 * Returns how many.
 */
static int split_series(const struct point *pt, size_t np, size_t nser, char **titles, double *xs, double *ys,
			struct plot_series *ser)
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
		n++;
	}
	return n;
}

/* Buffers of one chart, as large as the table needs. */
struct bufs {
	struct point *pt;
	double *xs, *ys;
	struct plot_series *ser;
	char **titles;           /* per series key: workload x dataflow */
	size_t nkeys;
	double *tic_at;
	const char **tic_text;
	double *z[2];
	bool *front;
	double *fx, *fy;
	const char **flab;
	char **labels;           /* per row: its point label (owned) */
};

static void bufs_release(struct bufs *b)
{
	free(b->pt);
	free(b->xs);
	free(b->ys);
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

/*
 * Series keys: workload w (when there are several) x dataflow value d (when
 * dataflow's group is not skip); their number, and each key's title in b.
 */
static size_t ndf(const struct view *v, int skip)
{
	return v->df >= 0 && v->df != skip ? v->nd[v->lead[v->df]] : 1;
}

static size_t key_of(const struct view *v, int skip, size_t r)
{
	return wval(v, r) * ndf(v, skip) + (v->df >= 0 && v->df != skip ? gval(v, v->df, r) : 0);
}

static int key_titles(const struct view *v, int skip, struct bufs *b)
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

/* Each metric against group g. */
static int chart_lines(struct drawing *d, const struct view *v, int g, struct bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t nv = v->nd[v->lead[g]], np = 0;
	char held[3000], title[4000], xlabel[800], name[300];
	struct plot_lines c = { 0 };

	if (key_titles(v, g, b) < 0)
		return err_nomem(e, NULL);
	held_text(v, free_groups(v, g, -1), held, sizeof held);
	c.categories = !v->numeric[g];
	c.xlog2 = v->numeric[g] && log2_axis(v, g);
	snprintf(xlabel, sizeof xlabel, "%s%s%s%s", v->name[g], *v->unit[g] ? " (" : "", v->unit[g],
		 *v->unit[g] ? ")" : "");
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
		if (!at_held(v, r, free_groups(v, g, -1)))
			continue;
		size_t val = gval(v, g, r);
		b->pt[np].series = key_of(v, g, r);
		b->pt[np].row = r;
		b->pt[np].x = c.categories ? (double)v->rank[g][val] : v->num[g][val];
		np++;
	}
	qsort(b->pt, np, sizeof *b->pt, by_series_x);
	c.nseries = split_series(b->pt, np, b->nkeys, b->titles, b->xs, b->ys, b->ser);
	c.series = b->ser;
	for (int m = 0; m < SWEEPPLOT_NMETRICS; m++) {
		struct scale s;
		double lo = INFINITY, hi = 0;
		for (size_t k = 0; k < np; k++) {
			lo = fmin(lo, t->rows[b->pt[k].row].m[m]);
			hi = fmax(hi, t->rows[b->pt[k].row].m[m]);
		}
		metric_scale(m, hi, &s);
		for (size_t k = 0; k < np; k++)
			b->ys[k] = t->rows[b->pt[k].row].m[m] / s.div;
		c.ylog = log10_axis(lo, hi);
		snprintf(title, sizeof title, "%s vs %s%s%s%s", metric_titles[m], v->name[g], v->nw == 1 ? ": " : "",
			 v->nw == 1 ? v->wname[0] : "", held);
		c.title = title;
		c.ylabel = s.label;
		snprintf(name, sizeof name, "%s_vs_%s", sweepplot_metric_names[m], t->axis[v->lead[g]]);
		if (draw(d, name, CH_LINES, &c, e) < 0)
			return -1;
	}
	return 0;
}

/* The heatmaps over groups gx and gy. */
static int chart_heat(struct drawing *d, const struct view *v, int gx, int gy, struct bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t nx = v->nd[v->lead[gx]], ny = v->nd[v->lead[gy]], nd = ndf(v, -1), nkeys = v->nw * nd, drawn = 0;
	const char **ytext;
	char held[3000], title[4000], xlabel[800], ylabel[800], name[500];
	struct plot_heatmap h = { 0 };

	if (nx > SWEEPPLOT_MAX_CELLS || ny > SWEEPPLOT_MAX_CELLS)
		return note(d->out, e, "heatmaps: none, %s has %zu values and %s %zu (at most %d each)", v->name[gx], nx,
			    v->name[gy], ny, SWEEPPLOT_MAX_CELLS);
	if (!(ytext = calloc(ny, sizeof *ytext)))
		return err_nomem(e, NULL);
	for (size_t k = 0; k < nx; k++)
		b->tic_text[k] = v->label[gx][v->order[gx][k]];
	for (size_t k = 0; k < ny; k++)
		ytext[k] = v->label[gy][v->order[gy][k]];
	held_text(v, free_groups(v, gx, gy), held, sizeof held);
	snprintf(xlabel, sizeof xlabel, "%s%s%s%s", v->name[gx], *v->unit[gx] ? " (" : "", v->unit[gx],
		 *v->unit[gx] ? ")" : "");
	snprintf(ylabel, sizeof ylabel, "%s%s%s%s", v->name[gy], *v->unit[gy] ? " (" : "", v->unit[gy],
		 *v->unit[gy] ? ")" : "");
	h.xlabel = xlabel;
	h.ylabel = ylabel;
	h.nx = nx;
	h.ny = ny;
	h.xtics = b->tic_text;
	h.ytics = ytext;
	h.npanels = 2;
	for (size_t key = 0; key < nkeys && drawn < SWEEPPLOT_MAX_HEATMAPS; key++) {
		size_t w = key / nd, dv = key % nd, cells = 0;
		static const int metric[2] = { SWEEPPLOT_UTILIZATION, SWEEPPLOT_ENERGY };
		struct scale s[2];
		double lo[2] = { INFINITY, INFINITY }, hi[2] = { 0, 0 };
		for (size_t k = 0; k < nx * ny; k++)
			b->z[0][k] = b->z[1][k] = NAN;
		for (size_t r = 0; r < t->nrows; r++) {
			if (!at_held(v, r, free_groups(v, gx, gy)) || wval(v, r) != w || (nd > 1 && gval(v, v->df, r) != dv))
				continue;
			size_t cell_at = v->rank[gy][gval(v, gy, r)] * nx + v->rank[gx][gval(v, gx, r)];
			if (!isnan(b->z[0][cell_at]))
				continue;
			cells++;
			for (int p = 0; p < 2; p++) {
				b->z[p][cell_at] = t->rows[r].m[metric[p]];
				lo[p] = fmin(lo[p], b->z[p][cell_at]);
				hi[p] = fmax(hi[p], b->z[p][cell_at]);
			}
		}
		if (!cells)
			continue;
		for (int p = 0; p < 2; p++) {
			metric_scale(metric[p], hi[p], &s[p]);
			for (size_t k = 0; k < nx * ny; k++)
				b->z[p][k] /= s[p].div;
			h.panel[p].title = metric_titles[metric[p]];
			h.panel[p].zlabel = s[p].label;
			h.panel[p].z = b->z[p];
			h.panel[p].zlog = log10_axis(lo[p], hi[p]);
		}
		snprintf(title, sizeof title, "%s%s%s: utilization and energy over %s and %s%s", v->wname[w],
			 nd > 1 ? " " : "", nd > 1 ? v->label[v->df][dv] : "", v->name[gx], v->name[gy], held);
		h.title = title;
		char *df = nd > 1 ? file_part(v->label[v->df][dv], 60) : NULL;
		snprintf(name, sizeof name, "heatmap_%s%s%s", v->wname[w], df ? "_" : "", df ? df : "");
		free(df);
		if (draw(d, name, CH_HEAT, &h, e) < 0) {
			free(ytext);
			return -1;
		}
		drawn++;
	}
	free(ytext);
	if (nkeys > SWEEPPLOT_MAX_HEATMAPS)
		return note(d->out, e, "heatmaps: the first %d of %zu workload x dataflow pairs (at most %d)",
			    SWEEPPLOT_MAX_HEATMAPS, nkeys, SWEEPPLOT_MAX_HEATMAPS);
	return 0;
}

/* The energy-vs-latency chart of workload w. */
static int chart_pareto(struct drawing *d, const struct view *v, size_t w, struct bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t np = 0, nf;
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	char title[600], ftitle[200], name[300];
	struct scale sx, sy;
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
		return note(d->out, e, "pareto: none for %s, which has no ok row", v->wname[w]);
	qsort(b->pt, np, sizeof *b->pt, by_series_x);
	metric_scale(SWEEPPLOT_CYCLES, xhi, &sx);
	metric_scale(SWEEPPLOT_ENERGY, yhi, &sy);
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
	p.nseries = split_series(b->pt, np, nser, titles, b->fx, b->fy, b->ser);
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
	p.xlog = log10_axis(xlo, xhi);
	p.ylog = log10_axis(ylo, yhi);
	snprintf(name, sizeof name, "pareto_%s", v->wname[w]);
	return draw(d, name, CH_PARETO, &p, e);
}

/* Each ok row's label: its groups' values, joined by spaces. */
static int row_labels(const struct view *v, struct bufs *b)
{
	const struct sweepplot_table *t = v->t;
	if (!(b->labels = calloc(t->nrows, sizeof *b->labels)))
		return -1;
	for (size_t r = 0; r < t->nrows; r++) {
		size_t len = 1;
		if (!t->rows[r].ok)
			continue;
		for (int g = 0; g < v->ng; g++)
			len += strlen(v->label[g][gval(v, g, r)]) + 1;
		if (!(b->labels[r] = malloc(len)))
			return -1;
		b->labels[r][0] = '\0';
		for (int g = 0; g < v->ng; g++) {
			if (g)
				strcat(b->labels[r], " ");
			strcat(b->labels[r], v->label[g][gval(v, g, r)]);
		}
	}
	return 0;
}

static int bufs_make(const struct view *v, struct bufs *b)
{
	size_t n = v->t->nrows + 1, cells = (size_t)SWEEPPLOT_MAX_CELLS * SWEEPPLOT_MAX_CELLS;
	size_t tics = n > SWEEP_MAX_VALUES ? n : SWEEP_MAX_VALUES;
	memset(b, 0, sizeof *b);
	b->pt = malloc(n * sizeof *b->pt);
	b->xs = malloc(n * sizeof *b->xs);
	b->ys = malloc(n * sizeof *b->ys);
	b->ser = malloc(n * sizeof *b->ser);
	b->tic_at = malloc(tics * sizeof *b->tic_at);
	b->tic_text = malloc(tics * sizeof *b->tic_text);
	b->z[0] = malloc(cells * sizeof *b->z[0]);
	b->z[1] = malloc(cells * sizeof *b->z[1]);
	b->front = malloc(n * sizeof *b->front);
	b->fx = malloc(n * sizeof *b->fx);
	b->fy = malloc(n * sizeof *b->fy);
	b->flab = malloc(n * sizeof *b->flab);
	if (!b->pt || !b->xs || !b->ys || !b->ser || !b->tic_at || !b->tic_text || !b->z[0] || !b->z[1] || !b->front ||
	    !b->fx || !b->fy || !b->flab)
		return -1;
	return row_labels(v, b);
}

static void labels_release(const struct view *v, struct bufs *b)
{
	for (size_t r = 0; b->labels && r < v->t->nrows; r++)
		free(b->labels[r]);
	free(b->labels);
}

/* Removes the files of dir (not its subdirectories), then dir. */
static void remove_dir(const char *dir)
{
	DIR *dd = opendir(dir);
	for (struct dirent *de; dd && (de = readdir(dd));) {
		char path[4700];
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (dd)
		closedir(dd);
	rmdir(dir);
}

/* Removes the temporary directories of plotting runs no longer running from dir. */
static void clean_stale(const char *dir)
{
	static const char pre[] = ".plots.tmp.";
	DIR *dd = opendir(dir);
	for (struct dirent *de; dd && (de = readdir(dd));) {
		char *end, path[LIMIT_PATH_BUF];
		long pid;
		if (strncmp(de->d_name, pre, sizeof pre - 1))
			continue;
		pid = strtol(de->d_name + sizeof pre - 1, &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		remove_dir(path);
	}
	if (dd)
		closedir(dd);
}

/* Moves the drawn files into dir/plots: the directory itself when there is none yet. */
static int move_in(struct drawing *d, const char *dir, struct sweepplot_out *o, struct err *e)
{
	char plots[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	struct stat st;
	snprintf(plots, sizeof plots, "%s/plots", dir);
	if (stat(plots, &st) != 0) {
		if (rename(d->tmpdir, plots) != 0)
			return err_input(e, "%s: expected to put the plots in place, found %s", err_quote(q, sizeof q, plots, LIMIT_PATH),
					 strerror(errno));
	} else {
		for (size_t k = 0; k < d->n; k++) {
			char from[4700], to[4700];
			snprintf(from, sizeof from, "%s/%s", d->tmpdir, d->names[k]);
			snprintf(to, sizeof to, "%s/%s", plots, d->names[k]);
			if (rename(from, to) != 0)
				return err_input(e, "%s: expected to put the plot in place, found %s",
						 err_quote(q, sizeof q, to, LIMIT_PATH), strerror(errno));
		}
		rmdir(d->tmpdir);
	}
	if (!(o->files = calloc(d->n + 1, sizeof *o->files)))
		return err_nomem(e, NULL);
	for (size_t k = 0; k < d->n; k++) {
		if (!(o->files[k] = malloc(strlen(plots) + strlen(d->names[k]) + 2)))
			return err_nomem(e, NULL);
		sprintf(o->files[k], "%s/%s", plots, d->names[k]);
		o->nfiles++;
	}
	return 0;
}

static int draw_all(struct drawing *d, const struct view *v, struct bufs *b, struct err *e)
{
	int heat[2], nheat = 0;
	for (int g = 0; g < v->ng; g++)
		if (chart_lines(d, v, g, b, e) < 0)
			return -1;
	for (int g = 0; g < v->ng && nheat < 2; g++)
		if (v->numeric[g] && g != v->df)
			heat[nheat++] = g;
	if (nheat == 2 && chart_heat(d, v, heat[0], heat[1], b, e) < 0)
		return -1;
	for (size_t w = 0; w < v->nw; w++)
		if (chart_pareto(d, v, w, b, e) < 0)
			return -1;
	return 0;
}

int sweepplot_dir(const char *dir, struct sweepplot_out *o, struct err *e)
{
	struct sweepplot_table t;
	struct view v = { 0 };
	struct bufs b = { 0 };
	struct drawing d = { 0 };
	char csv[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], plots[LIMIT_PATH_BUF];
	struct stat st;
	int rc = -1;

	memset(o, 0, sizeof *o);
	if (strlen(dir) > LIMIT_OUT_DIR)
		return err_input(e, "--plot: expected a directory path of at most " LIMIT_STR(LIMIT_OUT_DIR) " bytes, found %zu", strlen(dir));
	snprintf(csv, sizeof csv, "%s/sweep.csv", dir);
	if (sweepplot_read(&t, csv, e) < 0)
		return -1;
	if (!t.nok) {
		err_input(e, "%s: expected at least one row with status ok, found none in %zu row%s",
			  err_quote(q, sizeof q, csv, LIMIT_PATH), t.nrows, t.nrows == 1 ? "" : "s");
		sweepplot_release(&t);
		return -1;
	}
	snprintf(plots, sizeof plots, "%s/plots", dir);
	if (stat(plots, &st) == 0 && !S_ISDIR(st.st_mode)) {
		err_input(e, "%s: expected a directory for the plots, found a file", err_quote(q, sizeof q, plots, LIMIT_PATH));
		sweepplot_release(&t);
		return -1;
	}
	if (t.nok < t.nrows) {
		size_t r = 0;
		char shown_st[300];
		while (t.rows[r].ok)
			r++;
		if (note(o, e, "skipped %zu of %zu rows whose status is not ok (the first: %s:%ld: %s)", t.nrows - t.nok,
			 t.nrows, err_quote(q, sizeof q, csv, LIMIT_PATH), t.rows[r].line, err_quote(shown_st, sizeof shown_st, t.rows[r].status, 200)) < 0) {
			sweepplot_out_release(o);
			sweepplot_release(&t);
			return -1;
		}
	}
	d.out = o;
	if (view_make(&v, &t) < 0 || bufs_make(&v, &b) < 0) {
		err_nomem(e, NULL);
		goto done;
	}
	clean_stale(dir);
	snprintf(d.tmpdir, sizeof d.tmpdir, "%s/.plots.tmp.%ld", dir, (long)getpid());
	snprintf(d.plots, sizeof d.plots, "%s/plots", dir);
	if (mkdir(d.tmpdir, 0755) != 0) {
		err_input(e, "%s: expected a directory that can be written, found %s", err_quote(q, sizeof q, dir, LIMIT_PATH),
			  strerror(errno));
		goto done;
	}
	if (draw_all(&d, &v, &b, e) < 0 || move_in(&d, dir, o, e) < 0)
		remove_dir(d.tmpdir);
	else
		rc = 0;
done:
	if (rc < 0)
		sweepplot_out_release(o);
	for (size_t k = 0; k < d.n; k++)
		free(d.names[k]);
	free(d.names);
	labels_release(&v, &b);
	bufs_release(&b);
	view_release(&v);
	sweepplot_release(&t);
	return rc;
}

void sweepplot_out_release(struct sweepplot_out *o)
{
	for (size_t k = 0; k < o->nfiles; k++)
		free(o->files[k]);
	free(o->files);
	for (size_t k = 0; k < o->nnotes; k++)
		free(o->notes[k]);
	free(o->notes);
	memset(o, 0, sizeof *o);
}
