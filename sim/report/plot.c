/*
 * plot.c - gnuplot scripts for the roofline, stalls and comparisons (see plot.h).
 */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsx.h"
#include "report.h"
#include "stop.h"

/* The colour of each category of cat.h in the charts. */
static const char *const cat_colours[CAT_N] = { "#2ca02c", "#d62728", "#ff9896", "#ff7f0e", "#9467bd", "#17becf",
						"#7f7f7f", "#bcbd22", "#e377c2", "#c7c7c7" };

/*
 * Quotes s for a gnuplot double-quoted string: no quote, backslash or
 * carriage return survives, and no backquote (gnuplot runs the command
 * between two); a line break is gnuplot's \n, a second line.
 */
static const char *gp_str(char *buf, size_t size, const char *s)
{
	size_t n = 0;
	for (; *s && n + 2 < size; s++) {
		if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
			continue;
		}
		buf[n++] = *s == '"' || *s == '\\' || *s == '\r' || *s == '`' ? '_' : *s;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * A chart's title as gp_str quotes it, its lines broken at a space before
 * they pass TITLE_WIDTH characters: gnuplot centres a title over the graph,
 * and a longer line runs off the picture at both ends.
 */
#define TITLE_WIDTH 110
static const char *gp_title(char *buf, size_t size, const char *s)
{
	char wrapped[4000];
	size_t n = 0, start = 0, space = SIZE_MAX;
	for (; *s && n + 1 < sizeof wrapped; s++) {
		wrapped[n] = *s;
		if (*s == '\n')
			start = n + 1, space = SIZE_MAX;
		else if (*s == ' ')
			space = n;
		if (n - start >= TITLE_WIDTH && space != SIZE_MAX) {
			wrapped[space] = '\n';
			start = space + 1;
			space = SIZE_MAX;
		}
		n++;
	}
	wrapped[n] = '\0';
	return gp_str(buf, size, wrapped);
}

/* path quoted for a message (see err_quote). */
static const char *shown(char *buf, size_t size, const char *path)
{
	return err_quote(buf, size, path, LIMIT_PATH);
}

/* Quotes a path for a gnuplot single-quoted string, in which only ' is special (written ''). */
static const char *gp_path(char *buf, size_t size, const char *s)
{
	size_t n = 0;
	for (; *s && n + 2 < size; s++) {
		if (*s == '\'')
			buf[n++] = '\'';
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/* gnuplot's terminal for path's kind; NULL with an error that names opt (the option, or NULL: the path) when it has none. */
static const char *terminal(const char *path, const char *opt, struct err *e)
{
	const char *ext = strrchr(path, '.');
	char q[LIMIT_QUOTE_BUF];
	if (ext && !strcmp(ext, ".png"))
		return "pngcairo size 1200,800 font 'Sans,11'";
	if (ext && !strcmp(ext, ".svg"))
		return "svg size 1200,800 font 'Sans,11'";
	if (opt)
		err_input(e, "%s: expected a file name ending in .png or .svg, found \"%s\"", opt, shown(q, sizeof q, path));
	else
		err_input(e, "%s: expected a file name ending in .png or .svg, found another", shown(q, sizeof q, path));
	return NULL;
}

/* The temporary name gnuplot draws path to, beside it (fsx.h); "" when it does not fit. */
static const char *tmp_name(char *buf, size_t size, const char *path)
{
	if (fsx_tmp_name(buf, size, path) != 0)
		buf[0] = '\0';
	return buf;
}

int plot_check(const char *path, const char *opt, struct err *e)
{
	char tmp[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	int fd;
	if (!terminal(path, opt, e))
		return -1;
	if (strlen(path) > LIMIT_OUT_PATH || strchr(path, '\n'))
		return err_input(e, "%s: expected a writable path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes without line breaks, found \"%s\"",
				 opt, shown(q, sizeof q, path));
	if (fsx_file_path(path) != 0)
		return fsx_open_error(e, opt, path, errno);
	fd = open(tmp_name(tmp, sizeof tmp, path), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_input(e, "%s: expected a writable path, found \"%s\" (%s)", opt, shown(q, sizeof q, path),
				 strerror(errno));
	close(fd);
	unlink(tmp);
	return 0;
}

/*
 * Runs the script in f (already written, still open) to draw path: gnuplot
 * writes a temporary file that is renamed into place on success.
 */
static int run_gnuplot(FILE *f, const char *script, const char *path, const char *tmp, struct err *e)
{
	pid_t pid;
	int status;
	char q[LIMIT_QUOTE_BUF];
	if (fflush(f) != 0 || ferror(f)) {
		fclose(f);
		unlink(script);
		return fsx_write_error(e, "plot", script, errno);
	}
	fclose(f);
	if (stop_check(e) < 0) {
		unlink(script);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	/* Asked to stop (stop.h) while gnuplot draws: gnuplot is stopped too, and its picture goes. */
	pid_t got = -1;
	while (pid > 0 && (got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		if (stop_requested())
			kill(pid, SIGTERM);
	if (pid < 0 || got != pid) {
		unlink(script);
		unlink(tmp);
		return err_input(e, "%s: expected to run gnuplot, found %s", shown(q, sizeof q, path), strerror(errno));
	}
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		unlink(tmp);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			return err_input(e, "%s: expected gnuplot on the PATH (Debian package gnuplot-nox), found none",
					 shown(q, sizeof q, path));
		return err_input(e, "%s: expected gnuplot to draw the plot, found it failed (status %d)", shown(q, sizeof q, path),
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (fsx_commit(tmp, path) != 0)
		return fsx_write_error(e, "plot", path, errno);
	return 0;
}

/*
 * Opens a temporary script for the picture at path and writes its prologue
 * (terminal, output); fills script and tmp (the picture's temporary name).
 */
static FILE *open_script(const char *path, char *script, size_t ssize, char *tmp, size_t tsize, struct err *e)
{
	const char *term = terminal(path, NULL, e);
	char t[2 * LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	int fd;
	FILE *f;
	if (!term)
		return NULL;
	snprintf(script, ssize, "/tmp/tpusim-plot-XXXXXX");
	fd = mkstemp(script);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		err_input(e, "%s: expected a temporary file for the plot script, found %s", shown(q, sizeof q, path),
			  strerror(errno));
		return NULL;
	}
	fprintf(f, "set terminal %s noenhanced\nset output '%s'\n", term, gp_path(t, sizeof t, tmp_name(tmp, tsize, path)));
	return f;
}

int plot_roofline(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		  const struct run_opts *o, struct err *e)
{
	const struct arch *a = &cfg->arch;
	char script[64], tmp[LIMIT_PATH_BUF], name[CFG_STR_MAX * 2], t[200];
	double peak = 2 * arch_peak_macs_per_s(a) / 1e12, bw = arch_hbm_bytes_per_s(a) / 1e12;
	double eb = array_elem_bytes(a->array.dtype), ridge = isinf(bw) ? 0 : peak / bw;
	double add_i = 1.0 / (3 * eb), mm_i = 2.0 * 8192 / (3 * eb), xmin = add_i / 4, xmax = fmax(mm_i, ridge) * 4;
	size_t nobus = 0;
	FILE *f;

	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e)))
		return -1;
	/*
	 * A layer's point: x its ops per byte that crossed the memory bus in its
	 * cycles (bus_bytes), y its ops per second; never above the roof (see
	 * engine.c, struct bus). A layer whose cycles moved no byte (its operands
	 * came earlier) has no finite x: it is drawn at the right.
	 */
	fprintf(f, "$layers << EOD\n");
	for (size_t i = 0; i < r->n; i++) {
		struct metrics m;
		if (!r->layers[i].macs)
			continue;
		report_metrics(a, &r->layers[i], o->ideal_memory, &m);
		if (m.bus_bytes <= 0) {
			nobus++;
			continue;
		}
		fprintf(f, "%.9g %.9g\n", m.intensity, m.achieved_ops_per_s / 1e12);
		if (m.intensity < xmin)
			xmin = m.intensity / 2;
		if (m.intensity > xmax)
			xmax = m.intensity * 2;
	}
	fprintf(f, "EOD\n$nobus << EOD\n");
	for (size_t i = 0; i < r->n; i++) {
		struct metrics m;
		if (!r->layers[i].macs)
			continue;
		report_metrics(a, &r->layers[i], o->ideal_memory, &m);
		if (m.bus_bytes <= 0)
			fprintf(f, "%.9g %.9g\n", xmax / 1.4, m.achieved_ops_per_s / 1e12);
	}
	fprintf(f, "EOD\n");
	/* The ideal memory (hbm.model) has no memory roof: the roof is flat at the peak. */
	bool flat = isinf(bw);
	char memtext[64];
	if (flat)
		snprintf(memtext, sizeof memtext, "ideal memory");
	else
		snprintf(memtext, sizeof memtext, "%.4g GB/s", bw * 1e3);
	fprintf(f, "set title \"Roofline: %s on %s (%lldx%lld %s, %s)\"\n", gp_str(name, sizeof name, w->name),
		gp_str(t, sizeof t, a->name), (long long)a->array.rows, (long long)a->array.cols,
		array_dataflow_names[o->dataflow], memtext);
	fprintf(f, "set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
		   "set xlabel \"arithmetic intensity (ops per byte that crossed the memory bus in the layer's cycles)\"\n"
		   "set ylabel \"performance (TOPS)\"\nset key bottom right box opaque\n"
		   "set xrange [%g:%g]\nset yrange [%g:%g]\nset samples 400\n",
		xmin, xmax, fmin(bw * xmin, peak) / 4, peak * 3);
	if (flat)
		fprintf(f, "roof(x) = %.9g\n", peak);
	else
		fprintf(f, "roof(x) = x * %.9g < %.9g ? x * %.9g : %.9g\n", bw, peak, bw, peak);
	if (!flat)
		fprintf(f, "set label 1 sprintf(\"ridge %%.0f ops/B\", %.9g) at %.9g,%.9g offset 1,-1.5\n", ridge, ridge, peak);
	fprintf(f, "set label 2 \"vector add\" at %.9g,%.9g offset 1,0\n", add_i, fmin(peak, bw * add_i));
	fprintf(f, "set label 3 \"8192x8192x8192 matmul\" at %.9g,%.9g offset -4,1.2\n", mm_i, fmin(peak, bw * mm_i));
	fprintf(f, "$canon << EOD\n%.9g %.9g\n%.9g %.9g\nEOD\n", add_i, fmin(peak, bw * add_i), mm_i,
		fmin(peak, bw * mm_i));
	if (!flat)
		fprintf(f, "$ridge << EOD\n%.9g %.9g\nEOD\n", ridge, peak);
	if (flat)
		fprintf(f, "plot roof(x) title sprintf(\"roofline: %.4g TOPS (ideal memory: no memory roof)\") lw 3 "
			   "lc rgb '#333333', ", peak);
	else
		fprintf(f, "plot roof(x) title sprintf(\"roofline: min(%.4g TOPS, %.4g GB/s x intensity)\") lw 3 "
			   "lc rgb '#333333', ", peak, bw * 1e3);
	fprintf(f, "$layers using 1:2 title \"layers of %s\" with points pt 7 ps 1.2 lc rgb '#1f77b4', "
		   "$canon using 1:2 title \"canonical: vector add, large matmul\" with points pt 5 ps 1.6 lc rgb '#d62728'",
		gp_str(name, sizeof name, w->name));
	if (!flat)
		fprintf(f, ", $ridge using 1:2 title \"ridge point\" with points pt 9 ps 2.2 lc rgb '#2ca02c'");
	if (nobus)
		fprintf(f, ", $nobus using 1:2 title \"%zu layer%s that moved no byte in %s cycles (drawn at the right)\" "
			   "with points pt 6 ps 1.2 lc rgb '#1f77b4'", nobus, nobus == 1 ? "" : "s", nobus == 1 ? "its" : "their");
	fputc('\n', f);
	return run_gnuplot(f, script, path, tmp, e);
}

int plot_cycles(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		struct err *e)
{
	const char *const *colours = cat_colours;
	char script[64], tmp[LIMIT_PATH_BUF], name[CFG_STR_MAX * 2], t[200], an[CFG_STR_MAX * 2];
	FILE *f;

	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e)))
		return -1;
	fprintf(f, "$d << EOD\nlayer");
	for (int k = 0; k < CAT_N; k++)
		fprintf(f, " %s", cat_names[k]);
	fprintf(f, "\n");
	for (size_t i = 0; i < r->n; i++) {
		char label[CFG_STR_MAX + 16];
		fprintf(f, "\"%s\"", gp_str(name, sizeof name, run_row_label(r, w, i, label, sizeof label)));
		for (int k = 0; k < CAT_N; k++)
			fprintf(f, " %lld", (long long)r->layers[i].cat[k]);
		fprintf(f, "\n");
	}
	fprintf(f, "EOD\n");
	fprintf(f, "set title \"Where the cycles go: %s on %s\"\nset style data histograms\n"
		   "set style histogram rowstacked\nset style fill solid 0.9 border -1\nset boxwidth 0.8\n"
		   "set ylabel \"cycles\"\nset xtics rotate by 90 right font ',%d'\nset key outside right top\n"
		   "set grid ytics lc rgb '#dddddd'\nset format y '%%.1s%%c'\n",
		gp_str(t, sizeof t, w->name), gp_str(an, sizeof an, cfg->arch.name), r->n > 60 ? 7 : r->n > 30 ? 8 : 10);
	fprintf(f, "plot ");
	for (int k = 0; k < CAT_N; k++)
		fprintf(f, "%s$d using %d%s title columnheader(%d) lc rgb '%s'", k ? ", " : "", k + 2,
			k ? "" : ":xtic(1)", k + 2, colours[k]);
	fprintf(f, "\n");
	return run_gnuplot(f, script, path, tmp, e);
}

/*
 * One panel of plot_compare: a bar per dataflow stacked by the nparts parts
 * in the data block `block` (columns 2 ..), each a ratio to the base, with
 * the ratio printed above the bar from the block `block`_labels.
 */
static void compare_panel(FILE *f, const char *block, const char *ylabel, const char *const *names,
			  const char *const *colours, int nparts, double top)
{
	fprintf(f, "set ylabel \"%s\"\nset yrange [0:%.6g]\nplot ", ylabel, top);
	for (int k = 0; k < nparts; k++)
		fprintf(f, "%s%s using %d%s title \"%s\" lc rgb '%s'", k ? ", " : "", block, k + 2, k ? "" : ":xtic(1)",
			names[k], colours[k]);
	fprintf(f, ", %s_labels using 1:2:3 with labels offset 0,0.9 font ',12' notitle\n", block);
}

int plot_compare(const char *path, const struct config *cfg, const struct workload *w, const struct compare *c,
		 struct err *e)
{
	static const char *const en_colours[EN_N] = { "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#d62728",
						      "#7f7f7f" };
	static const char *const stays[3] = { "B stays", "C stays", "A stays" };
	const struct arch *a = &cfg->arch;
	const struct result *base = &c->runs[c->base].total;
	char script[64], tmp[LIMIT_PATH_BUF], name[CFG_STR_MAX * 2], t[200];
	double en[COMPARE_MAX], part[COMPARE_MAX][EN_N], top[2] = { 1, 1 };
	const char *bname = array_dataflow_names[c->df[c->base]];
	FILE *f;

	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e)))
		return -1;
	for (int j = 0; j < c->n; j++)
		en[j] = result_energy(a, &c->runs[j].total, part[j]);
	/* Cycles, then energy, of each dataflow's whole run by part, over the base's. */
	for (int panel = 0; panel < 2; panel++) {
		const char *block = panel ? "$en" : "$cy";
		double b = panel ? en[c->base] : (double)base->cycles;
		if (b <= 0)
			b = 1;
		fprintf(f, "%s << EOD\n", block);
		for (int j = 0; j < c->n; j++) {
			fprintf(f, "\"%s: %s\"", array_dataflow_names[c->df[j]], stays[c->df[j]]);
			for (int k = 0; k < (panel ? EN_N : CAT_N); k++)
				fprintf(f, " %.9g", (panel ? part[j][k] : (double)c->runs[j].total.cat[k]) / b);
			fprintf(f, "\n");
		}
		fprintf(f, "EOD\n%s_labels << EOD\n", block);
		for (int j = 0; j < c->n; j++) {
			double v = (panel ? en[j] : (double)c->runs[j].total.cycles) / b;
			fprintf(f, "%d %.9g \"%.3fx\"\n", j, v, v);
			if (v > top[panel])
				top[panel] = v;
		}
		fprintf(f, "EOD\n");
	}
	fprintf(f, "set multiplot layout 1,2 title \"Dataflows compared: %s on %s (%lldx%lld), the whole run "
		   "against %s\" font ',13'\n"
		   "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 border -1\n"
		   "set boxwidth 0.6\nset grid ytics lc rgb '#dddddd'\nset key below\nset xtics nomirror\n"
		   "set ytics format '%%.2f'\n",
		gp_str(name, sizeof name, w->name), gp_str(t, sizeof t, a->name), (long long)a->array.rows,
		(long long)a->array.cols, bname);
	fprintf(f, "set title \"cycles by category\"\n");
	snprintf(t, sizeof t, "cycles / cycles under %s", bname);
	compare_panel(f, "$cy", t, cat_names, cat_colours, CAT_N, top[0] * 1.15);
	fprintf(f, "set title \"energy by component\"\n");
	snprintf(t, sizeof t, "energy / energy under %s", bname);
	compare_panel(f, "$en", t, energy_part_names, en_colours, EN_N, top[1] * 1.15);
	fprintf(f, "unset multiplot\n");
	return run_gnuplot(f, script, path, tmp, e);
}

/* ---- charts of a sweep ---- */

/* The colours of the lines of a chart, in turn; after ten, again with another dash and point. */
static const char *const line_colours[10] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
					      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };

/* The points of the series, in turn: disc, square, triangles, diamond, pentagon. */
static const int point_types[6] = { 7, 5, 9, 11, 13, 15 };

/* `set NAME (...)` with the tics t, or nothing when t has none. */
static void put_tics(FILE *f, const char *name, const struct plot_tics *t)
{
	char s[300];
	if (!t->n)
		return;
	fprintf(f, "set %s (", name);
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s\"%s\" %.17g", i ? ", " : "", gp_str(s, sizeof s, t->text[i]), t->at[i]);
	fprintf(f, ")\n");
}

/* The data block $<name><i> of n points, with a z column when z and a label column when labels is not NULL. */
static void put_block(FILE *f, const char *name, int i, size_t n, const double *x, const double *y, const double *z,
		      const char *const *labels)
{
	char s[300];
	fprintf(f, "$%s%d << EOD\n", name, i);
	for (size_t k = 0; k < n; k++) {
		fprintf(f, "%.17g %.17g", x[k], y[k]);
		if (z)
			fprintf(f, " %.17g", z[k]);
		if (labels)
			fprintf(f, " \"%s\"", gp_str(s, sizeof s, labels[k]));
		fprintf(f, "\n");
	}
	fprintf(f, "EOD\n");
}

/* The x range of the series: a margin of a quarter step of 2 on a log2 axis, else 5% of the span. */
static void put_xrange(FILE *f, const struct plot_lines *c)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < c->nseries; i++)
		for (size_t k = 0; k < c->series[i].n; k++) {
			lo = fmin(lo, c->series[i].x[k]);
			hi = fmax(hi, c->series[i].x[k]);
		}
	if (c->categories)
		fprintf(f, "set xrange [-0.5:%.17g]\n", (double)c->xtics.n - 0.5);
	else if (lo > hi)
		return;
	else if (c->xlog2)
		fprintf(f, "set xrange [%.17g:%.17g]\n", lo / pow(2, 0.25), hi * pow(2, 0.25));
	else if (hi > lo)
		fprintf(f, "set xrange [%.17g:%.17g]\n", lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo));
}

/* The lines of c, or its bars when its x are categories (each category's bars side by side, 0.8 wide in all). */
static void put_lines(FILE *f, const struct plot_lines *c)
{
	double w = c->nseries ? 0.8 / c->nseries : 0.8;
	char s[600];
	if (c->categories)
		fprintf(f, "set boxwidth %.17g absolute\nset style fill solid 0.85 border rgb '#333333'\n", w);
	fprintf(f, "plot ");
	for (int i = 0; i < c->nseries; i++) {
		fprintf(f, "%s$s%d ", i ? ", " : "", i);
		if (c->categories)
			fprintf(f, "using ($1 - 0.4 + %.17g):2 title \"%s\" with boxes lc rgb '%s'", (i + 0.5) * w,
				gp_str(s, sizeof s, c->series[i].title), line_colours[i % 10]);
		else
			fprintf(f, "using 1:2 title \"%s\" with linespoints lw 2 dt %d pt %d ps 1.4 lc rgb '%s'",
				gp_str(s, sizeof s, c->series[i].title), 1 + i / 10 % 4, point_types[i % 6], line_colours[i % 10]);
	}
	fprintf(f, "\n");
}

int plot_lines(const char *path, const struct plot_lines *c, struct err *e)
{
	char script[64], tmp[LIMIT_PATH_BUF], s[4200];
	FILE *f;

	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e)))
		return -1;
	for (int i = 0; i < c->nseries; i++)
		put_block(f, "s", i, c->series[i].n, c->series[i].x, c->series[i].y, NULL, NULL);
	fprintf(f, "set title \"%s\"\n", gp_title(s, sizeof s, c->title));
	fprintf(f, "set xlabel \"%s\"\n", gp_str(s, sizeof s, c->xlabel));
	fprintf(f, "set ylabel \"%s\"\n", gp_str(s, sizeof s, c->ylabel));
	fprintf(f, "set grid xtics ytics lc rgb '#dddddd'\nset key outside right top box Left reverse\nset border 3\n"
		   "set xtics nomirror\nset ytics nomirror\n");
	if (c->xlog2 && !c->categories)
		fprintf(f, "set logscale x 2\n");
	if (c->ylog) {
		double lo = INFINITY, hi = 0;
		for (int i = 0; i < c->nseries; i++)
			for (size_t k = 0; k < c->series[i].n; k++) {
				lo = fmin(lo, c->series[i].y[k]);
				hi = fmax(hi, c->series[i].y[k]);
			}
		fprintf(f, "set logscale y 10\nset grid mytics\n");
		if (lo > 0 && hi >= lo)
			fprintf(f, "set yrange [%.17g:%.17g]\n", lo / 1.5, hi * 1.5);
	} else
		fprintf(f, "set yrange [0:*]\n");
	put_tics(f, "xtics", &c->xtics);
	put_xrange(f, c);
	put_lines(f, c);
	return run_gnuplot(f, script, path, tmp, e);
}

int plot_heatmap(const char *path, const struct plot_heatmap *h, struct err *e)
{
	char script[64], tmp[LIMIT_PATH_BUF], s[4200];
	bool labels = h->nx * h->ny <= 144;
	FILE *f;

	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e)))
		return -1;
	for (int p = 0; p < h->npanels; p++) {
		fprintf(f, "$z%d << EOD\n", p);
		for (size_t y = 0; y < h->ny; y++)
			for (size_t x = 0; x < h->nx; x++) {
				double z = h->panel[p].z[y * h->nx + x];
				if (isfinite(z))
					fprintf(f, "%zu %zu %.17g \"%.3g\"\n", x, y, z, z);
			}
		fprintf(f, "EOD\n");
	}
	fprintf(f, "set multiplot layout 1,%d title \"%s\" font ',13'\n", h->npanels, gp_title(s, sizeof s, h->title));
	fprintf(f, "set xlabel \"%s\"\n", gp_str(s, sizeof s, h->xlabel));
	fprintf(f, "set ylabel \"%s\"\n", gp_str(s, sizeof s, h->ylabel));
	fprintf(f, "set xrange [-0.5:%.1f]\nset yrange [-0.5:%.1f]\nset tics out nomirror\n"
		   "set palette defined (0 '#fff7bc', 1 '#a1dab4', 2 '#41b6c4', 3 '#2c7fb8', 4 '#253494')\n"
		   "set style textbox opaque fc rgb 'white' noborder margins 1,1\nset key off\n",
		(double)h->nx - 0.5, (double)h->ny - 0.5);
	fprintf(f, "set xtics (");
	for (size_t x = 0; x < h->nx; x++)
		fprintf(f, "%s\"%s\" %zu", x ? ", " : "", gp_str(s, sizeof s, h->xtics[x]), x);
	fprintf(f, ")%s\nset ytics (", h->nx > 8 ? " rotate by 45 right" : "");
	for (size_t y = 0; y < h->ny; y++)
		fprintf(f, "%s\"%s\" %zu", y ? ", " : "", gp_str(s, sizeof s, h->ytics[y]), y);
	fprintf(f, ")\n");
	for (int p = 0; p < h->npanels; p++) {
		fprintf(f, "set title \"%s\"\n", gp_str(s, sizeof s, h->panel[p].title));
		fprintf(f, "set cblabel \"%s\"\n", gp_str(s, sizeof s, h->panel[p].zlabel));
		fprintf(f, "%s logscale cb\n", h->panel[p].zlog ? "set" : "unset");
		fprintf(f, "plot $z%d using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette", p);
		if (labels)
			fprintf(f, ", $z%d using 1:2:4 with labels boxed font ',9'", p);
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	return run_gnuplot(f, script, path, tmp, e);
}

/*
 * The range of axis ("x" or "y") over every point of p, into r[2] (in log10
 * on a log axis): beyond the least and the greatest by the fractions lo and
 * hi of the span. False when there is no finite point.
 */
static bool pareto_range(const struct plot_pareto *p, bool y, bool log, double lo, double hi, double r[2])
{
	double a = INFINITY, b = -INFINITY;
	for (int i = 0; i < p->nseries; i++)
		for (size_t k = 0; k < p->series[i].n; k++) {
			double v = y ? p->series[i].y[k] : p->series[i].x[k];
			a = fmin(a, log ? log10(v) : v);
			b = fmax(b, log ? log10(v) : v);
		}
	if (!(a <= b) || !isfinite(a) || !isfinite(b))
		return false;
	double span = b > a ? b - a : log ? 0.5 : fmax(fabs(a) * 0.2, 1);
	r[0] = a - lo * span;
	r[1] = b + hi * span;
	return true;
}

/* The range r of axis; on a log axis (r in log10) with tics at 1, 2 and 5 of each decade, not only at its powers of 10. */
static void put_range(FILE *f, const char *axis, bool log, const double r[2])
{
	fprintf(f, "set %srange [%.17g:%.17g]\n", axis, log ? pow(10, r[0]) : r[0], log ? pow(10, r[1]) : r[1]);
	if (!log)
		return;
	fprintf(f, "set %stics (", axis);
	for (int d = (int)floor(r[0]), n = 0; d <= (int)ceil(r[1]) && d - (int)floor(r[0]) < 40; d++)
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3)
			fprintf(f, "%s%.17g", n++ ? ", " : "", m * pow(10, d));
	fprintf(f, ")\n");
}

/* The front's labels, placed: beside the point (left[k]: to its left), at height y[k] (in log10 on a log axis). */
struct pareto_labels {
	bool *left;
	double *y;
};

static int by_y(const void *a, const void *b, void *arg)
{
	const double *y = arg;
	double d = y[*(const size_t *)a] - y[*(const size_t *)b];
	return d < 0 ? -1 : d > 0;
}

/*
 * Where each front label goes. Those of points in the right 40% of the x
 * range go to the left of them (none runs off the graph into the key or the
 * colour box), the rest to the right; the labels are stacked in the order of
 * their points' heights, at least gap (a fraction of the y range) apart,
 * moved up from their points' heights where they must be, so that no two
 * overlap and each stays in the order of its point.
 */
static int place_labels(const struct plot_pareto *p, const double xr[2], const double yr[2], double gap,
			struct pareto_labels *l)
{
	size_t n = p->nfront, *order = malloc((n + 1) * sizeof *order);
	l->left = calloc(n + 1, sizeof *l->left);
	l->y = calloc(n + 1, sizeof *l->y);
	if (!order || !l->left || !l->y) {
		free(order);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		double x = p->xlog ? log10(p->fx[k]) : p->fx[k];
		l->left[k] = xr[1] > xr[0] && (x - xr[0]) / (xr[1] - xr[0]) > 0.6;
		l->y[k] = p->ylog ? log10(p->fy[k]) : p->fy[k];
		order[k] = k;
	}
	qsort_r(order, n, sizeof *order, by_y, l->y);
	/* One stack for both sides: a label to the left of its point may reach under one to the right of another. */
	double step = gap * (yr[1] - yr[0]), last = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		size_t k = order[i];
		if (l->y[k] < last + step)
			l->y[k] = last + step;
		last = l->y[k];
	}
	free(order);
	return 0;
}

int plot_pareto(const char *path, const struct plot_pareto *p, struct err *e)
{
	char script[64], tmp[LIMIT_PATH_BUF], s[4200];
	double xr[2] = { 0, 1 }, yr[2] = { 0, 1 };
	struct pareto_labels l = { 0 };
	FILE *f;

	bool hx = pareto_range(p, false, p->xlog, 0.05, 0.25, xr), hy = pareto_range(p, true, p->ylog, 0.08, 0.08, yr);
	if (place_labels(p, xr, yr, 0.032, &l) < 0) {
		free(l.left);
		free(l.y);
		return err_nomem(e, NULL);
	}
	if (!(f = open_script(path, script, sizeof script, tmp, sizeof tmp, e))) {
		free(l.left);
		free(l.y);
		return -1;
	}
	for (int i = 0; i < p->nseries; i++)
		put_block(f, "s", i, p->series[i].n, p->series[i].x, p->series[i].y, p->series[i].z, NULL);
	put_block(f, "front", 0, p->nfront, p->fx, p->fy, NULL, NULL);
	/*
	 * Each label beside its point, at the height place_labels gave it; one
	 * moved off its point's height is joined to the point by a thin line.
	 * Block 0: the labels to the right of their points, 1: to the left.
	 */
	for (int b = 0; b < 2; b++) {
		fprintf(f, "$label%d << EOD\n", b);
		for (size_t k = 0; k < p->nfront; k++)
			if (l.left[k] == b)
				fprintf(f, "%.17g %.17g \"%s\"\n", p->fx[k], p->ylog ? pow(10, l.y[k]) : l.y[k],
					gp_str(s, sizeof s, p->labels[k]));
		fprintf(f, "EOD\n");
	}
	for (size_t k = 0; k < p->nfront; k++) {
		double y = p->ylog ? pow(10, l.y[k]) : l.y[k];
		if (y != p->fy[k])
			fprintf(f, "set arrow from %.17g,%.17g to %.17g,%.17g nohead lw 0.8 lc rgb '#999999'\n", p->fx[k],
				p->fy[k], p->fx[k], y);
	}
	fprintf(f, "set title \"%s\"\n", gp_title(s, sizeof s, p->title));
	fprintf(f, "set xlabel \"%s\"\n", gp_str(s, sizeof s, p->xlabel));
	fprintf(f, "set ylabel \"%s\"\n", gp_str(s, sizeof s, p->ylabel));
	fprintf(f, "set grid xtics ytics lc rgb '#dddddd'\nset key outside right top box Left reverse\nset border 3\n"
		   "set xtics nomirror\nset ytics nomirror\n");
	if (p->xlog)
		fprintf(f, "set logscale x 10\n");
	if (p->ylog)
		fprintf(f, "set logscale y 10\n");
	if (p->zlabel)
		fprintf(f, "set cblabel \"%s\"\n%s"
			   "set palette defined (0 '#fde725', 1 '#5ec962', 2 '#21918c', 3 '#3b528b', 4 '#440154')\n",
			gp_str(s, sizeof s, p->zlabel), p->zlog ? "set logscale cb 10\n" : "");
	if (hx)
		put_range(f, "x", p->xlog, xr);
	if (hy) {
		/* room above for labels stacked past the highest point */
		double top = yr[1];
		for (size_t k = 0; k < p->nfront; k++)
			top = fmax(top, l.y[k] + 0.02 * (yr[1] - yr[0]));
		yr[1] = top;
		put_range(f, "y", p->ylog, yr);
	}
	fprintf(f, "plot ");
	for (int i = 0; i < p->nseries; i++) {
		fprintf(f, "$s%d using 1:2%s title \"%s\" with points pt %d ps 1.4 ", i, p->zlabel ? ":3" : "",
			gp_str(s, sizeof s, p->series[i].title), point_types[i % 6]);
		if (p->zlabel)
			fprintf(f, "lc palette, ");
		else
			fprintf(f, "lc rgb '%s', ", line_colours[i % 10]);
	}
	fprintf(f, "$front0 using 1:2 title \"%s\" with steps lw 2 lc rgb '#333333', "
		   "$front0 using 1:2 notitle with points pt 6 ps 2.2 lw 2 lc rgb '#333333'", gp_str(s, sizeof s, p->front_title));
	for (int b = 0; b < 2; b++) {
		size_t n = 0;
		for (size_t k = 0; k < p->nfront; k++)
			n += l.left[k] == b;
		if (n)
			fprintf(f, ", $label%d using 1:2:3 notitle with labels %s offset char %s1.5,0 font ',10'", b,
				b ? "right" : "left", b ? "-" : "");
	}
	fprintf(f, "\n");
	free(l.left);
	free(l.y);
	return run_gnuplot(f, script, path, tmp, e);
}
