/*
 * sweepplot_heat.c - the heatmaps of a sweep (see sweepplot.h): utilization and
 * energy over two numeric groups, one file per workload x dataflow, every
 * other group held; the pairs left out past SWEEPPLOT_MAX_HEATMAPS named.
 */
#include "sweepplot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Key's name as the notes say it: "beta os" (workload, then the dataflow's value when it splits them). */
static void key_text(const struct sweepplot_view *v, size_t key, size_t nd, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", v->wname[key / nd], nd > 1 ? " " : "", nd > 1 ? v->label[v->df][key % nd] : "");
}

/* The note for the pairs left out, drawn from..nkeys-1 of those with cells (has), and how to ask for them. */
static int left_out(struct sweepplot_drawing *d, const struct sweepplot_view *v, const bool *has, size_t from,
		    size_t nkeys, size_t nd, size_t drawn, struct err *e)
{
	char list[900] = "", one[400];
	size_t n = 0, shown = 0;
	for (size_t key = from; key < nkeys; key++) {
		if (!has[key])
			continue;
		n++;
		key_text(v, key, nd, one, sizeof one);
		if (shown < 8 && strlen(list) + strlen(one) + 2 < sizeof list - 40) {
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", shown ? ", " : "", one);
			shown++;
		}
	}
	if (!n)
		return 0;
	if (shown < n)
		snprintf(list + strlen(list), sizeof list - strlen(list), " and %zu more", n - shown);
	return sweepplot_note(d->out, e, "heatmaps: drew the first %zu of %zu workload x dataflow pairs (at most %d); left "
			      "out: %s (--heatmaps all draws every one%s)", drawn, drawn + n, SWEEPPLOT_MAX_HEATMAPS, list,
			      nd > 1 ? ", --hold dataflow=... one dataflow's" : "");
}

int sweepplot_chart_heat(struct sweepplot_drawing *d, const struct sweepplot_view *v, int gx, int gy, bool all,
			 struct sweepplot_bufs *b, struct err *e)
{
	const struct sweepplot_table *t = v->t;
	size_t nx = v->nd[v->lead[gx]], ny = v->nd[v->lead[gy]], nd = ndf(v, -1), nkeys = v->nw * nd, drawn = 0;
	const char **ytext;
	char held[3000], title[4000], xlabel[800], ylabel[800], name[500];
	struct plot_heatmap h = { 0 };

	if (nx > SWEEPPLOT_MAX_CELLS || ny > SWEEPPLOT_MAX_CELLS)
		return sweepplot_note(d->out, e, "heatmaps: none, %s has %zu values and %s %zu (at most %d each)", v->name[gx], nx,
			    v->name[gy], ny, SWEEPPLOT_MAX_CELLS);
	bool *has = calloc(nkeys + 1, sizeof *has);
	if (!has || !(ytext = calloc(ny, sizeof *ytext))) {
		free(has);
		return err_nomem(e, NULL);
	}
	for (size_t k = 0; k < nx; k++)
		b->tic_text[k] = v->label[gx][v->order[gx][k]];
	for (size_t k = 0; k < ny; k++)
		ytext[k] = v->label[gy][v->order[gy][k]];
	sweepplot_held_text(v, free_groups(v, gx, gy), held, sizeof held);
	sweepplot_axis_label(v, gx, xlabel, sizeof xlabel);
	sweepplot_axis_label(v, gy, ylabel, sizeof ylabel);
	h.xlabel = xlabel;
	h.ylabel = ylabel;
	h.nx = nx;
	h.ny = ny;
	h.xtics = b->tic_text;
	h.ytics = ytext;
	h.npanels = 2;
	size_t key = 0;
	for (; key < nkeys && (all || drawn < SWEEPPLOT_MAX_HEATMAPS); key++) {
		size_t w = key / nd, dv = key % nd, cells = 0;
		static const int metric[2] = { SWEEPPLOT_UTILIZATION, SWEEPPLOT_ENERGY };
		struct sweepplot_scale s[2];
		double lo[2] = { INFINITY, INFINITY }, hi[2] = { 0, 0 };
		for (size_t k = 0; k < nx * ny; k++)
			b->z[0][k] = b->z[1][k] = NAN;
		for (size_t r = 0; r < t->nrows; r++) {
			if (!sweepplot_at_held(v, r, free_groups(v, gx, gy)) || wval(v, r) != w || (nd > 1 && gval(v, v->df, r) != dv))
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
			sweepplot_metric_scale(metric[p], hi[p], &s[p]);
			for (size_t k = 0; k < nx * ny; k++)
				b->z[p][k] /= s[p].div;
			h.panel[p].title = sweepplot_metric_titles[metric[p]];
			h.panel[p].zlabel = s[p].label;
			h.panel[p].z = b->z[p];
			h.panel[p].zlog = sweepplot_log10_axis(lo[p], hi[p]);
		}
		snprintf(title, sizeof title, "%s%s%s: utilization and energy over %s and %s%s", v->wname[w],
			 nd > 1 ? " " : "", nd > 1 ? v->label[v->df][dv] : "", v->name[gx], v->name[gy], held);
		h.title = title;
		char *df = nd > 1 ? sweepplot_file_part(v->label[v->df][dv], 60) : NULL;
		snprintf(name, sizeof name, "heatmap_%s%s%s", v->wname[w], df ? "_" : "", df ? df : "");
		free(df);
		if (sweepplot_draw(d, name, SWEEPPLOT_CH_HEAT, &h, e) < 0) {
			free(ytext);
			free(has);
			return -1;
		}
		drawn++;
	}
	free(ytext);
	/* The pairs not drawn that have cells: named in the note. */
	for (size_t k = key; k < nkeys; k++)
		for (size_t r = 0; r < t->nrows && !has[k]; r++)
			has[k] = sweepplot_at_held(v, r, free_groups(v, gx, gy)) && wval(v, r) == k / nd &&
				 (nd == 1 || gval(v, v->df, r) == k % nd);
	int rc = left_out(d, v, has, key, nkeys, nd, drawn, e);
	free(has);
	return rc;
}
