/*
 * sweepplot_axes.c - the groups of a sweep's axes (see sweepplot.h): each axis's
 * distinct values by hashing, the axes that change together (a zip group of
 * the spec) found by comparing their indexings; and the view the charts read:
 * each group's values as numbers, their order and labels, its name and unit,
 * the dataflow's, batch's and model's groups, the workloads' short names,
 * and the values held by a chart: the user's (--hold), the others those of
 * the best row by cycles among the rows with the user's.
 */
#include "sweepplot_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "config.h"
#include "fsx.h"

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
		size_t h = (size_t)fsx_fnv(FSX_FNV_INIT, s, strlen(s)) & (cap - 1);
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

void sweepplot_view_release(struct sweepplot_view *v)
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

char *sweepplot_file_part(const char *s, size_t max)
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
static int workload_names(struct sweepplot_view *v)
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
		if (!(v->wname[w] = sweepplot_file_part(buf, 190)))
			return -1;
	}
	return 0;
}

static const struct sweepplot_view *sort_view;
static int sort_group;

static int by_number(const void *a, const void *b)
{
	double x = sort_view->num[sort_group][*(const size_t *)a], y = sort_view->num[sort_group][*(const size_t *)b];
	if (x != y)
		return x < y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Group g's values: numbers, order, labels. */
static int group_values(struct sweepplot_view *v, int g)
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

int sweepplot_axis_group(const struct sweepplot_view *v, int i)
{
	for (int g = 0; g < v->ng; g++)
		if (v->group[i] == v->lead[g])
			return g;
	return -1;
}

/* Each axis's short name: what follows its last '.', unless another axis's is the same. */
static void short_names(struct sweepplot_view *v)
{
	const struct sweepplot_table *t = v->t;
	for (int i = 0; i < t->naxes; i++) {
		const char *dot = strrchr(t->axis[i], '.'), *s = dot ? dot + 1 : t->axis[i];
		bool unique = *s != '\0';
		for (int j = 0; j < t->naxes && unique; j++) {
			const char *dj = strrchr(t->axis[j], '.');
			unique = j == i || strcmp(dj ? dj + 1 : t->axis[j], s);
		}
		snprintf(v->shortname[i], sizeof v->shortname[i], "%s", unique ? s : t->axis[i]);
	}
}

/*
 * The ok row with the fewest cycles (the first of equal ones) of those where
 * axis ax[k] has value val[k] for each of the n holds; SIZE_MAX: none.
 */
static size_t best_row(const struct sweepplot_view *v, const int *ax, const size_t *val, int n)
{
	const struct sweepplot_table *t = v->t;
	size_t best = SIZE_MAX;
	for (size_t r = 0; r < t->nrows; r++) {
		bool held = t->rows[r].ok;
		for (int k = 0; k < n && held; k++)
			held = v->idx[ax[k]][r] == val[k];
		if (held && (best == SIZE_MAX || t->rows[r].m[SWEEPPLOT_CYCLES] < t->rows[best].m[SWEEPPLOT_CYCLES]))
			best = r;
	}
	return best;
}

int sweepplot_view_make(struct sweepplot_view *v, const struct sweepplot_table *t)
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
	v->batch = v->model = -1;
	for (int i = 0; i < t->naxes; i++) {
		int g = sweepplot_axis_group(v, i);
		if (g >= 0 && !strcmp(t->axis[i], "batch"))
			v->batch = g;
		if (g >= 0 && !strcmp(t->axis[i], "model"))
			v->model = g;
	}
	short_names(v);
	v->r0 = best_row(v, NULL, NULL, 0);
	return workload_names(v);
}

bool sweepplot_at_held(const struct sweepplot_view *v, size_t r, uint64_t mask)
{
	if (!v->t->rows[r].ok)
		return false;
	for (int g = 0; g < v->ng; g++)
		if (!(mask >> g & 1) && gval(v, g, r) != gval(v, g, v->r0))
			return false;
	return true;
}

/* " (did you mean X?)" for the axis name closest to name, or "". */
static void near_axis(const struct sweepplot_axes *a, const char *name, char *buf, size_t size)
{
	cfg_did_you_mean(name, a->name, (size_t)a->n, false, buf, size);
}

/* Axis i's values joined by ", " (at most 20, then "..."). */
static void axis_values(const struct sweepplot_axes *a, int i, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < a->nvals[i] && k <= 20 && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", k ? ", " : "", k < 20 ? a->vals[i][k] : "...");
}

/* The axis and value index of hold text h into *ax and *val; an input error when a has not them. */
static int hold_parse(const struct sweepplot_axes *a, const char *h, int *ax, size_t *val, struct err *e)
{
	const char *eq = strchr(h, '=');
	char q[300], names[2000], near[300];
	size_t n = 0;
	names[0] = '\0';
	for (int i = 0; i < a->n && n < sizeof names; i++)
		n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", a->name[i]);
	if (!eq || eq == h)
		return err_input(e, "--hold: expected axis=value (an axis of the sweep: %s), found \"%s\"",
				 a->n ? names : "none", err_quote(q, sizeof q, h, 60));
	for (*ax = 0; *ax < a->n; (*ax)++)
		if (strlen(a->name[*ax]) == (size_t)(eq - h) && !strncmp(a->name[*ax], h, (size_t)(eq - h)))
			break;
	if (*ax == a->n) {
		char axis[200];
		snprintf(axis, sizeof axis, "%.*s", (int)(eq - h), h);
		near_axis(a, axis, near, sizeof near);
		return err_input(e, "--hold: expected an axis of the sweep (%s), found \"%s\"%s", a->n ? names : "none",
				 err_quote(q, sizeof q, axis, 60), near);
	}
	for (*val = 0; *val < a->nvals[*ax]; (*val)++)
		if (!strcmp(a->vals[*ax][*val], eq + 1))
			return 0;
	axis_values(a, *ax, names, sizeof names);
	return err_input(e, "--hold: %s: expected one of its values in the sweep (%s), found \"%s\"", a->name[*ax], names,
			 err_quote(q, sizeof q, eq + 1, 60));
}

int sweepplot_hold_find(const struct sweepplot_axes *a, const char *const *hold, int nhold, int *ax, size_t *val,
			struct err *e)
{
	SIM_ASSERT(nhold <= SWEEPPLOT_MAX_HOLDS);
	for (int k = 0; k < nhold; k++) {
		if (hold_parse(a, hold[k], &ax[k], &val[k], e) < 0)
			return -1;
		for (int j = 0; j < k; j++)
			if (ax[j] == ax[k])
				return err_input(e, "--hold: expected each axis once, found %s again", a->name[ax[k]]);
	}
	return 0;
}

/* The table's axes and their values (as first seen) for sweepplot_hold_find; vals[i] owned, NULL: no memory. */
static int table_axes(const struct sweepplot_view *v, struct sweepplot_axes *a)
{
	const struct sweepplot_table *t = v->t;
	memset(a, 0, sizeof *a);
	a->n = t->naxes;
	for (int i = 0; i < t->naxes; i++) {
		const char **vals = malloc((v->nd[i] + 1) * sizeof *vals);
		if (!vals)
			return -1;
		for (size_t k = 0; k < v->nd[i]; k++)
			vals[k] = cell(t, v->first[i][k], i);
		a->name[i] = t->axis[i];
		a->nvals[i] = v->nd[i];
		a->vals[i] = vals;
	}
	return 0;
}

int sweepplot_hold(struct sweepplot_view *v, const char *const *hold, int nhold, struct err *e)
{
	int ax[SWEEPPLOT_MAX_HOLDS];
	size_t val[SWEEPPLOT_MAX_HOLDS];
	char held[1000];
	size_t n = 0;
	struct sweepplot_axes a;
	int rc = table_axes(v, &a) < 0 ? err_nomem(e, NULL) : sweepplot_hold_find(&a, hold, nhold, ax, val, e);
	for (int i = 0; i < a.n; i++)
		free((void *)a.vals[i]);
	if (rc < 0)
		return -1;
	for (int k = 0; k < nhold; k++)
		n += (size_t)snprintf(held + n, n < sizeof held ? sizeof held - n : 0, "%s%s", k ? " and " : "", hold[k]);
	if (nhold && (v->r0 = best_row(v, ax, val, nhold)) == SIZE_MAX)
		return err_input(e, "--hold: expected an ok row with %s, found none", held);
	for (int k = 0; k < nhold; k++) {
		int g = sweepplot_axis_group(v, ax[k]);
		if (g >= 0)
			v->user |= 1ULL << g;
		if (g >= 0 && g == v->df)
			v->df = -1;
	}
	return 0;
}

/* Appends the groups of want (user's or not) not in mask, "a=1, b=2", to buf at *n. */
static void held_list(const struct sweepplot_view *v, uint64_t mask, bool user, char *buf, size_t size, size_t *n)
{
	bool first = true;
	for (int g = 0; g < v->ng && *n + 1 < size; g++) {
		if ((mask >> g & 1) || (bool)(v->user >> g & 1) != user)
			continue;
		*n += (size_t)snprintf(buf + *n, size - *n, "%s%s=%s", first ? "" : ", ", v->name[g],
				       v->label[g][gval(v, g, v->r0)]);
		first = false;
	}
}

void sweepplot_held_text(const struct sweepplot_view *v, uint64_t mask, char *buf, size_t size)
{
	size_t n = 0;
	uint64_t all = v->ng < 64 ? (1ULL << v->ng) - 1 : ~0ULL;
	buf[0] = '\0';
	for (int u = 1; u >= 0; u--) {
		uint64_t these = (u ? v->user : ~v->user) & all & ~mask;
		if (!these || n + 1 >= size)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s", n ? "; " : "; held at ");
		held_list(v, mask, u, buf, size, &n);
		if (n + 1 < size)
			n += (size_t)snprintf(buf + n, size - n, " (%s)", u ? "--hold" : "best by cycles");
	}
}
