/*
 * sweepplot_run.c - the charts of a finished sweep (see sweepplot.h): reads
 * DIR/sweep.csv, makes the view, picks the charts (the lines of every group,
 * the heatmaps over the first two numeric groups, a Pareto chart per
 * workload), draws their files into a temporary directory and moves them
 * into DIR/plots only when every chart is drawn.
 */
#include "sweepplot_int.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sweepplot_note(struct sweepplot_out *o, struct err *e, const char *fmt, ...)
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

/* Keeps name in d->names (for the move and the list of files written). */
static int keep_name(struct sweepplot_drawing *d, const char *name, struct err *e)
{
	if (d->n == d->cap) {
		size_t nc = d->cap ? 2 * d->cap : 64;
		char **nn = realloc(d->names, nc * sizeof *nn);
		if (!nn)
			return err_nomem(e, NULL);
		d->names = nn;
		d->cap = nc;
	}
	if (!(d->names[d->n] = strdup(name)))
		return err_nomem(e, NULL);
	d->n++;
	return 0;
}

int sweepplot_draw(struct sweepplot_drawing *d, const char *name, enum sweepplot_chart kind, const void *chart,
		   struct err *e)
{
	static const char *const ext[2] = { "png", "svg" };
	for (int k = 0; k < 2; k++) {
		char path[4700], file[400];
		int rc;
		snprintf(path, sizeof path, "%s/%s.%s", d->tmpdir, name, ext[k]);
		if (kind == SWEEPPLOT_CH_LINES)
			rc = plot_lines(path, chart, e);
		else if (kind == SWEEPPLOT_CH_HEAT)
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
		snprintf(file, sizeof file, "%s.%s", name, ext[k]);
		if (keep_name(d, file, e) < 0)
			return -1;
	}
	return 0;
}

int sweepplot_write(struct sweepplot_drawing *d, const char *name, const char *text, size_t len, struct err *e)
{
	char path[4700], q[LIMIT_QUOTE_BUF];
	snprintf(path, sizeof path, "%s/%s", d->tmpdir, name);
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(text, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		snprintf(path, sizeof path, "%s/%s", d->plots, name);
		return err_input(e, "%s: expected a file that can be written, found %s", err_quote(q, sizeof q, path, LIMIT_PATH),
				 strerror(errno));
	}
	return keep_name(d, name, e);
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

/* Whether name is one a plotting run draws (a chart, or a csv beside one): <metric>_vs_..., heatmap_..., pareto_..., slice_.... */
static bool drawn_name(const char *name)
{
	static const char *const kinds[] = { "heatmap_", "pareto_", "slice_" };
	size_t n = strlen(name);
	bool ext = n > 4 && (!strcmp(name + n - 4, ".png") || !strcmp(name + n - 4, ".svg") || !strcmp(name + n - 4, ".csv"));
	for (size_t k = 0; ext && k < sizeof kinds / sizeof *kinds; k++)
		if (!strncmp(name, kinds[k], strlen(kinds[k])))
			return true;
	for (int m = 0; ext && m < SWEEPPLOT_NMETRICS; m++) {
		size_t len = strlen(sweepplot_metric_names[m]);
		if (!strncmp(name, sweepplot_metric_names[m], len) && !strncmp(name + len, "_vs_", 4))
			return true;
	}
	return false;
}

/*
 * Removes from plots the charts of an earlier draw that this one did not
 * draw again (a heatmap left out now, a --hold that names files otherwise),
 * so that plots holds one draw; files of other names are left alone.
 */
static void remove_stale(const struct sweepplot_drawing *d, const char *plots)
{
	DIR *dd = opendir(plots);
	for (struct dirent *de; dd && (de = readdir(dd));) {
		char path[4700];
		bool ours = false;
		struct stat st;
		if (!drawn_name(de->d_name))
			continue;
		for (size_t k = 0; k < d->n && !ours; k++)
			ours = !strcmp(d->names[k], de->d_name);
		snprintf(path, sizeof path, "%s/%s", plots, de->d_name);
		if (!ours && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			unlink(path);
	}
	if (dd)
		closedir(dd);
}

/* Moves the drawn files into dir/plots: the directory itself when there is none yet. */
static int move_in(struct sweepplot_drawing *d, const char *dir, struct sweepplot_out *o, struct err *e)
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
		remove_stale(d, plots);
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

static int draw_all(struct sweepplot_drawing *d, const struct sweepplot_view *v, const struct sweepplot_opts *opts,
		    const int *obj, struct sweepplot_bufs *b, struct err *e)
{
	int heat[2], nheat = 0;
	for (int g = 0; g < v->ng; g++)
		if (sweepplot_chart_lines(d, v, g, b, e) < 0)
			return -1;
	for (int g = 0; g < v->ng && nheat < 2; g++)
		if (v->numeric[g] && g != v->df)
			heat[nheat++] = g;
	if (nheat == 2 && sweepplot_chart_heat(d, v, heat[0], heat[1], opts->all_heatmaps, b, e) < 0)
		return -1;
	for (size_t w = 0; w < v->nw; w++)
		if (sweepplot_chart_pareto(d, v, w, obj, b, e) < 0)
			return -1;
	return 0;
}

int sweepplot_dir(const char *dir, const struct sweepplot_opts *opts, struct sweepplot_out *o, struct err *e)
{
	static const struct sweepplot_opts none = { 0 };
	struct sweepplot_table t;
	struct sweepplot_view v = { 0 };
	struct sweepplot_bufs b = { 0 };
	struct sweepplot_drawing d = { 0 };
	char csv[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], plots[LIMIT_PATH_BUF];
	struct stat st;
	int rc = -1, obj[3];

	memset(o, 0, sizeof *o);
	if (!opts)
		opts = &none;
	if (sweepplot_pareto_pair(opts->pareto, obj, &obj[2], e) < 0)
		return -1;
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
		if (sweepplot_note(o, e, "skipped %zu of %zu rows whose status is not ok (the first: %s:%ld: %s)", t.nrows - t.nok,
			 t.nrows, err_quote(q, sizeof q, csv, LIMIT_PATH), t.rows[r].line, err_quote(shown_st, sizeof shown_st, t.rows[r].status, 200)) < 0) {
			sweepplot_out_release(o);
			sweepplot_release(&t);
			return -1;
		}
	}
	d.out = o;
	if (sweepplot_view_make(&v, &t) < 0 || sweepplot_bufs_make(&v, &b) < 0) {
		err_nomem(e, NULL);
		goto done;
	}
	if (sweepplot_hold(&v, opts->hold, opts->nhold, e) < 0)
		goto done;
	clean_stale(dir);
	snprintf(d.tmpdir, sizeof d.tmpdir, "%s/.plots.tmp.%ld", dir, (long)getpid());
	snprintf(d.plots, sizeof d.plots, "%s/plots", dir);
	if (mkdir(d.tmpdir, 0755) != 0) {
		err_input(e, "%s: expected a directory that can be written, found %s", err_quote(q, sizeof q, dir, LIMIT_PATH),
			  strerror(errno));
		goto done;
	}
	if (draw_all(&d, &v, opts, obj, &b, e) < 0 || move_in(&d, dir, o, e) < 0)
		remove_dir(d.tmpdir);
	else
		rc = 0;
done:
	if (rc < 0)
		sweepplot_out_release(o);
	for (size_t k = 0; k < d.n; k++)
		free(d.names[k]);
	free(d.names);
	sweepplot_bufs_release(&b);
	sweepplot_view_release(&v);
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
