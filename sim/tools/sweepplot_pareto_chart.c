/*
 * sweepplot_pareto_chart.c - the Pareto charts of a sweep (see sweepplot.h):
 * one per workload x batch x model (the points of one are comparable
 * designs; those of two are different questions), narrowed to the user's
 * held values (--hold), two objectives from
 * --pareto, every ok point coloured by the third, a series per dataflow, the
 * front (sweepplot_pareto) as a labelled step line, and the front again as
 * pareto_<...>.csv beside the pictures.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each objective's metric, in the order of sweepplot_obj_names. */
static const int obj_metric[SWEEPPLOT_NOBJ] = { SWEEPPLOT_CYCLES, SWEEPPLOT_ENERGY, SWEEPPLOT_AREA };
const char *const sweepplot_obj_names[SWEEPPLOT_NOBJ + 1] = { "latency", "energy", "area", NULL };

static int obj_find(const char *s, size_t n)
{
	for (int k = 0; k < SWEEPPLOT_NOBJ; k++)
		if (strlen(sweepplot_obj_names[k]) == n && !strncmp(sweepplot_obj_names[k], s, n))
			return k;
	return -1;
}

int sweepplot_pareto_pair(const char *text, int pair[2], int *colour, struct err *e)
{
	const char *s = text ? text : SWEEPPLOT_PARETO_DEFAULT, *comma = strchr(s, ',');
	char names[200] = "", q[300];
	for (int k = 0; k < SWEEPPLOT_NOBJ; k++)
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", sweepplot_obj_names[k]);
	pair[0] = comma ? obj_find(s, (size_t)(comma - s)) : -1;
	pair[1] = comma ? obj_find(comma + 1, strlen(comma + 1)) : -1;
	if (pair[0] < 0 || pair[1] < 0 || pair[0] == pair[1])
		return err_input(e, "--pareto: expected two of %s, joined by a comma (e.g. " SWEEPPLOT_PARETO_DEFAULT
				 "), found \"%s\"", names, err_quote(q, sizeof q, s, 60));
	*colour = -1;
	for (int k = 0; k < SWEEPPLOT_NOBJ; k++)
		if (k != pair[0] && k != pair[1])
			*colour = k;
	return 0;
}

/*
 * Whether row r is one of chart key's points: ok, of workload w and the
 * key's batch and model, and with the user's held values (--hold narrows
 * the fronts too; the best point's values do not).
 */
static bool in_key(const struct sweepplot_view *v, size_t r, size_t w, size_t bv, size_t mv)
{
	uint64_t all = v->ng < 64 ? (1ULL << v->ng) - 1 : ~0ULL;
	return sweepplot_at_held(v, r, all & ~v->user) && wval(v, r) == w && (v->batch < 0 || gval(v, v->batch, r) == bv) &&
	       (v->model < 0 || gval(v, v->model, r) == mv);
}

/* The chart's name and the title's part for the key: "_batch8_cycle", ", batch=8, model=cycle". */
static void key_names(const struct sweepplot_view *v, size_t w, size_t bv, size_t mv, char *name, size_t nsize,
		      char *what, size_t wsize)
{
	char part[300];
	snprintf(name, nsize, "pareto_%s", v->wname[w]);
	snprintf(what, wsize, "%s", v->wname[w]);
	for (int k = 0; k < 2; k++) {
		int g = k ? v->model : v->batch;
		if (g < 0)
			continue;
		const char *val = v->label[g][k ? mv : bv];
		char *safe = sweepplot_file_part(val, 60);
		snprintf(part, sizeof part, "_%s%s", k ? "" : "batch", safe ? safe : "");
		free(safe);
		snprintf(name + strlen(name), nsize - strlen(name), "%s", part);
		snprintf(what + strlen(what), wsize - strlen(what), ", %s=%s", v->name[g], val);
	}
}

static void free_labels(char **lab, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free(lab[k]);
		lab[k] = NULL;
	}
}

/*
 * The front's labels into lab[] (nf strings, owned): the values of each
 * group that varies along the front, a zip group's joined by x, the groups
 * by ", " ("128x128, 600"), and a line of the title names them once
 * ("labels: rows x cols, gbps"), so that a label stays short beside its
 * point. The groups that are the same at every point of the front go once
 * into a line of their own ("the same at every point of the front:
 * sram.inputs.kib=3072 ..."). Both lines go to same. Not batch's and
 * model's, which the title says. -1 when memory ran out (lab[] holds what
 * was made).
 */
static int front_labels(const struct sweepplot_view *v, const size_t *rows, size_t nf, char **lab, char *same,
			size_t size)
{
	const struct sweepplot_table *t = v->t;
	bool varies[SWEEP_MAX_AXES] = { false };
	char names[SWEEP_MAX_AXES][600];
	for (int g = 0; g < v->ng; g++) {
		names[g][0] = '\0';
		for (int i = 0; i < t->naxes; i++)
			if (sweepplot_axis_group(v, i) == g)
				snprintf(names[g] + strlen(names[g]), sizeof names[g] - strlen(names[g]), "%s%s",
					 names[g][0] ? " x " : "", v->shortname[i]);
		for (size_t k = 1; k < nf; k++)
			varies[g] |= gval(v, g, rows[k]) != gval(v, g, rows[0]);
	}
	same[0] = '\0';
	for (int g = 0, n = 0; nf && g < v->ng; g++)
		if (varies[g] && g != v->batch && g != v->model)
			snprintf(same + strlen(same), size - strlen(same), "%s%s", n++ ? ", " : "\nlabels: ", names[g]);
	for (int g = 0, n = 0; nf && g < v->ng; g++)
		if (!varies[g] && g != v->batch && g != v->model)
			snprintf(same + strlen(same), size - strlen(same), "%s%s=%s",
				 n++ ? " " : "\nthe same at every point of the front: ", names[g], v->label[g][gval(v, g, rows[0])]);
	for (size_t k = 0; k < nf; k++) {
		size_t len = 0;
		FILE *f = open_memstream(&lab[k], &len);
		if (!f)
			return -1;
		for (int g = 0, n = 0; g < v->ng; g++)
			if (varies[g] && g != v->batch && g != v->model)
				fprintf(f, "%s%s", n++ ? ", " : "", v->label[g][gval(v, g, rows[k])]);
		if (ferror(f) | (fclose(f) != 0))
			return -1;
	}
	return 0;
}

/* The chart of one key: its np points in b->pt (x, y set; sorted by series), the objectives' metrics m. */
static int draw_key(struct sweepplot_drawing *d, const struct sweepplot_view *v, size_t np, const int *m,
		    const char *name, const char *what, struct sweepplot_bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { 0, 0, 0 };
	struct sweepplot_scale sc[3];
	char title[8000], ftitle[200], held[3000], same[3000], *titles[SWEEP_MAX_VALUES];
	struct plot_pareto p = { 0 };

	for (size_t k = 0; k < np; k++)
		for (int j = 0; j < 3 && m[j] >= 0; j++) {
			lo[j] = fmin(lo[j], t->rows[b->pt[k].row].m[m[j]]);
			hi[j] = fmax(hi[j], t->rows[b->pt[k].row].m[m[j]]);
		}
	for (int j = 0; j < 3 && m[j] >= 0; j++)
		sweepplot_metric_scale(m[j], hi[j], &sc[j]);
	for (size_t k = 0; k < np; k++) {
		b->fx[k] = b->pt[k].x;
		b->fy[k] = b->pt[k].y;
	}
	size_t nf = sweepplot_pareto(b->fx, b->fy, np, b->front), n = 0;
	size_t *fo = nf <= np ? malloc((nf + 1) * sizeof *fo) : NULL, *rows = fo ? malloc((nf + 1) * sizeof *rows) : NULL;
	if (!rows) {
		free(fo);
		return err_nomem(e, NULL);
	}
	for (size_t k = 0; k < np; k++)
		if (b->front[k])
			fo[n++] = k;
	/* The front in order of x then y (the points are in order of series then x). */
	sweepplot_sort_xy(fo, nf, b->fx, b->fy);
	for (size_t k = 0; k < nf; k++) {
		b->xs[k] = b->fx[fo[k]] / sc[0].div;
		b->ys[k] = b->fy[fo[k]] / sc[1].div;
		rows[k] = b->pt[fo[k]].row;
		b->flab[k] = NULL;
	}
	int rc = front_labels(v, rows, nf, b->flab, same, sizeof same) < 0 ? err_nomem(e, NULL) :
		 sweepplot_rows_csv(d, v, name, rows, nf, m, m[2] >= 0 ? 3 : 2, e);
	free(fo);
	free(rows);
	if (rc < 0) {
		free_labels(b->flab, nf);
		return -1;
	}
	/* Every point, a series per dataflow, each with its colour value. */
	for (size_t k = 0; k < np; k++) {
		b->pt[k].x /= sc[0].div;
		b->pt[k].y /= sc[1].div;
	}
	size_t nser = v->df >= 0 ? v->nd[v->lead[v->df]] : 1;
	if (nser > SWEEP_MAX_VALUES)
		nser = SWEEP_MAX_VALUES;
	for (size_t k = 0; k < nser; k++)
		titles[k] = v->df >= 0 ? v->label[v->df][k] : (char *)"design points";
	for (size_t k = 0; k < np; k++)
		if (b->pt[k].series >= nser)
			b->pt[k].series = nser - 1;
	p.nseries = sweepplot_split_series(b->pt, np, nser, titles, b->fx, b->fy, b->ser);
	if (m[2] >= 0) {
		for (size_t k = 0; k < np; k++)
			b->zs[k] = t->rows[b->pt[k].row].m[m[2]] / sc[2].div;
		for (int i = 0; i < p.nseries; i++)
			b->ser[i].z = b->zs + (b->ser[i].x - b->fx);
		p.zlabel = sc[2].label;
		p.zlog = sweepplot_log10_axis(lo[2], hi[2]);
	}
	p.series = b->ser;
	p.nfront = nf;
	p.fx = b->xs;
	p.fy = b->ys;
	p.labels = (const char *const *)b->flab;
	snprintf(ftitle, sizeof ftitle, "Pareto front (%zu of %zu points)", nf, np);
	p.front_title = ftitle;
	uint64_t all = v->ng < 64 ? (1ULL << v->ng) - 1 : ~0ULL;
	sweepplot_held_text(v, all & ~v->user, held, sizeof held);
	snprintf(title, sizeof title, "%s vs %s: %s%s\nevery design point%s%s; the Pareto-optimal ones labelled%s",
		 sweepplot_metric_titles[m[1]], sweepplot_metric_titles[m[0]], what, held, m[2] >= 0 ? " coloured by " : "",
		 m[2] >= 0 ? sweepplot_metric_titles[m[2]] : "", same);
	p.title = title;
	p.xlabel = sc[0].label;
	p.ylabel = sc[1].label;
	/* A front bends where its points crowd: a log scale from a factor of 10, where other charts wait for 30. */
	p.xlog = lo[0] > 0 && hi[0] / lo[0] >= 10;
	p.ylog = lo[1] > 0 && hi[1] / lo[1] >= 10;
	rc = sweepplot_draw(d, name, SWEEPPLOT_CH_PARETO, &p, e);
	free_labels(b->flab, nf);
	return rc;
}

int sweepplot_chart_pareto(struct sweepplot_drawing *d, const struct sweepplot_view *v, size_t w, const int *obj,
			   struct sweepplot_bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t nb = v->batch >= 0 ? v->nd[v->lead[v->batch]] : 1, nm = v->model >= 0 ? v->nd[v->lead[v->model]] : 1;
	int m[3] = { obj_metric[obj[0]], obj_metric[obj[1]], obj[2] >= 0 ? obj_metric[obj[2]] : -1 };
	char name[500], what[1000];
	bool any = false;

	for (size_t bv = 0; bv < nb; bv++)
		for (size_t mv = 0; mv < nm; mv++) {
			size_t np = 0;
			for (size_t r = 0; r < t->nrows; r++) {
				if (!in_key(v, r, w, bv, mv))
					continue;
				b->pt[np].series = v->df >= 0 ? gval(v, v->df, r) : 0;
				b->pt[np].row = r;
				b->pt[np].x = t->rows[r].m[m[0]];
				b->pt[np].y = t->rows[r].m[m[1]];
				np++;
			}
			if (!np)
				continue;
			any = true;
			qsort(b->pt, np, sizeof *b->pt, sweepplot_by_series_x);
			key_names(v, w, bv, mv, name, sizeof name, what, sizeof what);
			if (draw_key(d, v, np, m, name, what, b, e) < 0)
				return -1;
		}
	return any ? 0 : sweepplot_note(d->out, e, "pareto: none for %s, which has no ok row", v->wname[w]);
}
