/*
 * cmd_sim.c - the commands that simulate a workload: run, roofline, compare
 * (see cli.h). Each loads and runs the request the command line describes
 * (api.h), checks its outputs can be written before the run, and prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chakra_write.h"
#include "cli.h"
#include "compare.h"
#include "fsx.h"
#include "limit.h"
#include "npy.h"
#include "options.h"
#include "plot.h"
#include "report.h"

/* A long run's progress on a terminal (stderr), from its second second on, five times a second at most. */
struct run_view {
	struct timespec t0;
	double last;
	bool shown;
	const struct oplist *ops;
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void run_progress(void *ctx, const struct run_progress *p)
{
	struct run_view *v = ctx;
	double t = seconds_since(&v->t0);
	char name[OP_NAME_MAX], part[64] = "";
	if (t < 1.0 || t - v->last < 0.2 || p->done >= p->ops)
		return;
	v->last = t;
	v->shown = true;
	if (p->op_folds > 0)
		snprintf(part, sizeof part, " %.0f%% of its folds,", 100.0 * (double)p->op_folds_done / (double)p->op_folds);
	fprintf(stderr, "\r\033[Ksimulating: %zu of %zu ops done; op %zu (%s)%s %.0f s", p->done, p->ops, p->op + 1,
		op_name(&v->ops->v[p->op < p->ops ? p->op : p->ops - 1], name, sizeof name), part, t);
	fflush(stderr);
}

/* The config's warnings, once per run, on stderr. */
static void warn(const struct sim *s)
{
	char lines[8][CONFIG_WARNING_MAX];
	int n = config_warnings(&s->cfg, run_has_ports(&s->opts), true, lines, 8);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "warning: %s\n", lines[i]);
	if (s->w.note[0])
		fprintf(stderr, "warning: %s\n", s->w.note);
}

/* The run's traces (--vcd, --trace, --dram-trace) are complete on disk: a later failure removes them. */
static bool traces_written;

/* After a failure past the simulation (the reports), the traces go too: a failed run leaves no trace. */
void cmd_sim_undo(const struct cli_args *a)
{
	const struct sim_request *rq = &a->rq;
	char vcd[LIMIT_PATH_BUF];
	if (!traces_written)
		return;
	if (rq->vcd && snprintf(vcd, sizeof vcd, "%s.vcd", rq->vcd) < (int)sizeof vcd && fsx_regular(vcd))
		unlink(vcd);
	if (rq->trace && fsx_regular(rq->trace))
		unlink(rq->trace);
	if (rq->dram_trace && fsx_regular(rq->dram_trace))
		unlink(rq->dram_trace);
}

static int save_check(const char *dir, const struct oplist *ops, struct err *e);

/* Loads, lowers and runs what the command line asks for: what every simulating command starts with. */
static int simulate(const struct cli_args *a, const char *cmd, struct sim *s, struct err *e)
{
	struct sim_request *rq = malloc(sizeof *rq);
	int rc;
	if (!rq)
		return err_nomem(e, NULL);
	*rq = a->rq;
	rq->keep_outputs = a->save != NULL;
	rc = sim_load(s, rq, cmd, e);
	free(rq);
	if (rc < 0)
		return -1;
	if (a->save && save_check(a->save, &s->ops, e) < 0)
		return -1;
	if (a->chakra) {
		if (s->opts.model == MODEL_FUNCTIONAL)
			return err_input(e, "--chakra: expected --model cycle or analytic (their times go in the trace), found "
					 "--model functional");
		if (chakra_check(a->chakra, &s->cfg, e) < 0)
			return -1;
		s->opts.keep_op_results = true;
	}
	warn(s);
	struct run_view view = { .ops = &s->ops };
	if (isatty(STDERR_FILENO)) {
		clock_gettime(CLOCK_MONOTONIC, &view.t0);
		s->opts.progress = run_progress;
		s->opts.progress_ctx = &view;
	}
	rc = sim_run(s, e);
	traces_written = rc == 0;
	s->opts.progress = NULL;
	if (view.shown)
		fprintf(stderr, "\r\033[K");
	return rc;
}

/* DIR/name, in buf. */
static const char *in_dir(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/*
 * --plot DIR: makes DIR (when missing) and checks that both pictures can be
 * put there. Before the run (check), a DIR made only for the check is removed
 * again, so that a run that fails leaves nothing.
 */
static int plot_dir(const char *dir, bool check, char *p1, char *p2, size_t size, struct err *e)
{
	bool made = mkdir(dir, 0755) == 0;
	int rc;
	if (!made && errno != EEXIST)
		return err_input(e, "--plot: expected a directory that can be created, found \"%s\" (%s)", cli_shown(0, dir),
				 strerror(errno));
	rc = plot_check(in_dir(p1, size, dir, "cycles.png"), "--plot", e) < 0 ||
	     plot_check(in_dir(p2, size, dir, "roofline.png"), "--plot", e) < 0 ? -1 : 0;
	if (made && (check || rc < 0))
		rmdir(dir);
	return rc;
}

/*
 * An output directory (opt DIR): makes DIR (when missing) and checks that a
 * file can be created there. Before the run (check), a DIR made only for the
 * check is removed again, so that a run that fails leaves nothing.
 */
static int dir_usable(const char *opt, const char *dir, bool check, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	bool made = mkdir(dir, 0755) == 0;
	int fd, er;
	if (!made && errno != EEXIST)
		return err_input(e, "%s: expected a directory that can be created, found \"%s\" (%s)", opt, cli_shown(0, dir),
				 strerror(errno));
	if (snprintf(path, sizeof path, "%s/.tpusim-checkXXXXXX", dir) >= (int)sizeof path)
		return err_input(e, "%s: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", opt, strlen(dir));
	if ((fd = mkstemp(path)) >= 0) {
		close(fd);
		unlink(path);
	}
	er = errno;
	if (made && (check || fd < 0))
		rmdir(dir);
	if (fd < 0)
		return err_input(e, "%s: expected a directory where files can be written, found \"%s\" (%s)", opt,
				 cli_shown(0, dir), strerror(er));
	return 0;
}

/*
 * run -o DIR, before the run: DIR is a directory tpusim may write in whose
 * report names are free or its own (report_check), or is missing under one
 * (make_parents made its parents). Made only when the run
 * is done (report_write), so that runs into one new DIR at once do not meet
 * each other's checks.
 */
static int reports_dir_check(const char *dir, struct err *e)
{
	struct stat st;
	char *parent, *slash;
	int rc = 0;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return err_input(e, "%s: expected a directory for the reports, found a file", cli_shown(0, dir));
		if (access(dir, W_OK | X_OK) != 0)
			return err_input(e, "-o: expected a directory where files can be written, found \"%s\" (%s)",
					 cli_shown(0, dir), strerror(errno));
		return report_check(dir, e);
	}
	if (errno != ENOENT)
		return err_input(e, "-o: expected a directory that can be created, found \"%s\" (%s)", cli_shown(0, dir),
				 strerror(errno));
	if (!(parent = strdup(dir)))
		return err_nomem(e, NULL);
	for (slash = parent + strlen(parent); slash > parent + 1 && slash[-1] == '/';)
		*--slash = '\0';
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent] = '\0';
	if (access(slash ? parent : ".", W_OK | X_OK) != 0)
		rc = err_input(e, "-o: expected a directory that can be created, found \"%s\" (%s)", cli_shown(0, dir),
			       strerror(errno));
	free(parent);
	return rc;
}

struct saved {
	char name[OP_NAME_MAX + 24];    /* the file's name without .npy */
	size_t at;                      /* the output's index */
};

static int saved_cmp(const void *x, const void *y)
{
	const struct saved *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->at > b->at) - (a->at < b->at);
}

/*
 * Each output's file name: the op's name with '/' as '_', and, for ops whose
 * names give the same file name, the op's index in the run after a '.'
 * ("mm.0", "mm.3"). A name that ends in such an index is unique (the index
 * is), so a plain name that meets one gets its index too, until none meet.
 */
static struct saved *save_names(const struct run_output *outs, size_t n, struct err *e)
{
	struct saved *v = malloc((n ? n : 1) * sizeof *v), *w = malloc((n ? n : 1) * sizeof *w);
	bool *idx = calloc(n ? n : 1, sizeof *idx), again = true;
	if (!v || !w || !idx) {
		free(v);
		free(w);
		free(idx);
		err_nomem(e, "--save-outputs");
		return NULL;
	}
	while (again) {
		again = false;
		for (size_t i = 0; i < n; i++) {
			char *p = v[i].name;
			snprintf(p, sizeof v[i].name, "%s", outs[i].name);
			for (; *p; p++)
				if (*p == '/')
					*p = '_';
			if (idx[i])
				snprintf(p, sizeof v[i].name - (size_t)(p - v[i].name), ".%zu", outs[i].op);
			v[i].at = i;
		}
		memcpy(w, v, n * sizeof *w);
		qsort(w, n, sizeof *w, saved_cmp);
		for (size_t i = 0; i + 1 < n; i++)
			if (!strcmp(w[i].name, w[i + 1].name))
				for (size_t k = i; k < i + 2; k++)
					if (!idx[w[k].at])
						idx[w[k].at] = again = true;
	}
	free(w);
	free(idx);
	return v;
}

/* What a run wrote before a later step failed: removed then (undo_written), so that a failed run leaves nothing. */
struct written {
	const char *save;               /* --save-outputs DIR: names[0 .. saved) are its files */
	struct saved *names;            /* owned */
	size_t saved;
	bool save_made;                 /* DIR was made by this run */
	const char *plots[2];           /* --plot's pictures, once drawn */
	const char *plot;               /* --plot DIR, when this run made it */
	const char *chakra;             /* --chakra PREFIX: ranks of its files written */
	int64_t ranks;
};

static void undo_written(struct written *w)
{
	char path[LIMIT_PATH_BUF];
	for (size_t i = 0; i < w->saved; i++)
		if (snprintf(path, sizeof path, "%s/%s.npy", w->save, w->names[i].name) < (int)sizeof path && fsx_regular(path))
			unlink(path);
	if (w->save_made)
		rmdir(w->save);
	for (int i = 0; i < 2; i++)
		if (w->plots[i] && fsx_regular(w->plots[i]))
			unlink(w->plots[i]);
	if (w->plot)
		rmdir(w->plot);
	for (int64_t k = 0; k < w->ranks; k++)
		if (snprintf(path, sizeof path, "%s.%lld.et", w->chakra, (long long)k) < (int)sizeof path && fsx_regular(path))
			unlink(path);
}

/*
 * --save-outputs DIR: every GEMM op's result as DIR/<file>.npy (save_names;
 * int32 for int8 operands, else float32), each file written atomically; DIR
 * is made when missing. w records what was written (all of it on failure).
 */
static int save_outputs(const char *dir, const struct run *r, struct written *w, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	struct stat st;
	w->save = dir;
	w->save_made = stat(dir, &st) != 0;
	if (dir_usable("--save-outputs", dir, false, e) < 0) {
		w->save_made = false;
		return -1;
	}
	if (!(w->names = save_names(r->outputs, r->noutputs, e)))
		return -1;
	for (size_t i = 0; i < r->noutputs; i++) {
		const struct run_output *o = &r->outputs[i];
		snprintf(path, sizeof path, "%s/%s.npy", dir, w->names[i].name);
		if (npy_write(path, o->c, o->m, o->n, o->ints, e) < 0)
			return -1;
		w->saved++;
	}
	return 0;
}

/*
 * --save-outputs DIR, before the run: the file of each GEMM op the run will
 * save (save_names, from the ops as the run names them) must not be a
 * directory (fsx_file_path).
 */
static int save_check(const char *dir, const struct oplist *ops, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	struct run_output *outs = calloc(ops->n ? ops->n : 1, sizeof *outs);
	struct saved *names;
	size_t n = 0;
	int rc = 0;
	if (!outs)
		return err_nomem(e, "--save-outputs");
	for (size_t i = 0; i < ops->n; i++)
		if (ops->v[i].kind == OP_GEMM) {
			op_name(&ops->v[i], outs[n].name, sizeof outs[n].name);
			outs[n++].op = i;
		}
	if (!(names = save_names(outs, n, e))) {
		free(outs);
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (snprintf(path, sizeof path, "%s/%s.npy", dir, names[i].name) < (int)sizeof path && fsx_file_path(path) != 0)
			rc = fsx_open_error(e, "--save-outputs", path, errno);
	free(names);
	free(outs);
	return rc;
}

int cmd_run(const struct cli_args *a, struct err *e)
{
	struct sim *s;
	char p1[LIMIT_PATH_BUF], p2[LIMIT_PATH_BUF];
	struct written w = { 0 };
	struct stat st;
	int rc = -1;

	if (cli_given(a, "--dram-trace-format") && !a->rq.dram_trace)
		return err_input(e, "--dram-trace-format: expected with --dram-trace FILE, found it alone");
	if (a->save && a->rq.model != MODEL_FUNCTIONAL)
		return err_input(e, "--save-outputs: expected --model functional (only it computes values), found --model %s",
				 run_model_names[a->rq.model]);
	if (a->plot && plot_dir(a->plot, true, p1, p2, sizeof p1, e) < 0)
		return -1;
	if (a->save && dir_usable("--save-outputs", a->save, true, e) < 0)
		return -1;
	if (a->out && reports_dir_check(a->out, e) < 0)
		return -1;
	if (!(s = calloc(1, sizeof *s)))
		return err_nomem(e, NULL);
	if (simulate(a, "run", s, e) < 0)
		goto out;
	struct report_ctx ctx = { &s->cfg, &s->w, &s->run, &s->opts, &s->ops };
	if (a->plot) {
		bool made = stat(a->plot, &st) != 0;
		if (plot_dir(a->plot, false, p1, p2, sizeof p1, e) < 0)
			goto out;
		w.plot = made ? a->plot : NULL;
		if (plot_cycles(p1, &s->cfg, &s->w, &s->run, e) < 0)
			goto out;
		w.plots[0] = p1;
		if (plot_roofline(p2, &s->cfg, &s->w, &s->run, &s->opts, e) < 0)
			goto out;
		w.plots[1] = p2;
	}
	if (a->save && save_outputs(a->save, &s->run, &w, e) < 0)
		goto out;
	if (a->chakra) {
		w.chakra = a->chakra;
		if (chakra_write(a->chakra, &s->cfg, &s->w, &s->ops, &s->run, &w.ranks, e) < 0)
			goto out;
	}
	if (a->out && report_write(a->out, &ctx, e) < 0)
		goto out;
	report_summary(stdout, &ctx);
	if (a->out && s->cfg.arch.array.scalesim_compat)
		printf("wrote %s/layers.csv, %s/summary.json and %s/COMPUTE_REPORT.csv\n", cli_shown(0, a->out),
		       cli_shown(1, a->out), cli_shown(1, a->out));
	else if (a->out)
		printf("wrote %s/layers.csv and %s/summary.json\n", cli_shown(0, a->out), cli_shown(1, a->out));
	if (a->plot)
		printf("wrote %s and %s\n", cli_shown(0, p1), cli_shown(1, p2));
	if (a->save)
		printf("wrote %zu result%s in %s\n", w.saved, w.saved == 1 ? "" : "s", cli_shown(0, a->save));
	if (a->chakra)
		printf("wrote %lld Chakra trace%s, %s.0.et to %s.%lld.et\n", (long long)w.ranks, w.ranks == 1 ? "" : "s",
		       cli_shown(0, a->chakra), cli_shown(1, a->chakra), (long long)(w.ranks - 1));
	if (a->timing) {
		struct timespec t1;
		struct rusage ru;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		getrusage(RUSAGE_SELF, &ru);
		double wall = (double)(t1.tv_sec - a->start.tv_sec) + 1e-9 * (double)(t1.tv_nsec - a->start.tv_nsec);
		printf("timing: %.3f s wall, %.3g simulated cycles/s, peak RSS %.1f MiB\n", wall,
		       wall > 0 ? (double)s->run.total.cycles / wall : 0.0, (double)ru.ru_maxrss / 1024.0);
	}
	rc = 0;
out:
	if (rc < 0)
		undo_written(&w);
	free(w.names);
	sim_release(s);
	free(s);
	return rc;
}

int cmd_roofline(const struct cli_args *a, struct err *e)
{
	struct sim *s;
	int rc = -1;

	if (!a->out)
		return err_input(e, "roofline: expected -o FILE.png or FILE.svg, found none");
	if (plot_check(a->out, "-o", e) < 0)
		return -1;
	if (!(s = calloc(1, sizeof *s)))
		return err_nomem(e, NULL);
	if (simulate(a, "roofline", s, e) == 0 && plot_roofline(a->out, &s->cfg, &s->w, &s->run, &s->opts, e) == 0) {
		printf("wrote %s\n", cli_shown(0, a->out));
		rc = 0;
	}
	sim_release(s);
	free(s);
	return rc;
}

/* "ws,os,is" -> dataflows; each at most once. */
static int parse_dataflows(const char *list, int *df, int *n, struct err *e)
{
	const char *p = list;
	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int d = 0; array_dataflow_names[d]; d++)
			if (strlen(array_dataflow_names[d]) == len && !strncmp(p, array_dataflow_names[d], len))
				found = d;
		for (int j = 0; j < *n; j++)
			if (df[j] == found)
				found = -1;
		if (found < 0 || *n == 3)
			return cli_bad_arg(e, "--dataflows", "expected a list of distinct ws, os, is separated by commas", list);
		df[(*n)++] = found;
		p += len + (p[len] == ',');
	}
	if (*n == 0)
		return cli_bad_arg(e, "--dataflows", "expected a list of distinct ws, os, is separated by commas", list);
	return 0;
}

/*
 * compare runs the cycle or the analytic model (the options of the other
 * commands are refused by the parser, cli.c); -o must name a chart (FILE.png
 * or FILE.svg), not a directory of reports as with run (a directory there is
 * refused with every file output's rule, cli_prepare_outputs).
 */
static int compare_check_args(const struct cli_args *a, struct err *e)
{
	const char *ext = a->out ? strrchr(a->out, '.') : NULL;
	if (a->rq.model == MODEL_FUNCTIONAL)
		return err_input(e, "--model: expected cycle or analytic for tpusim compare, found functional; check values "
				 "with tpusim run --model functional");
	if (a->out && (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg"))))
		return err_input(e, "-o: expected FILE.png or FILE.svg for compare's chart, found \"%s\"", cli_shown(0, a->out));
	return 0;
}

int cmd_compare(const struct cli_args *a, struct err *e)
{
	struct sim *s;
	struct sim_request *rq;
	struct compare *c;
	int df[COMPARE_MAX], n, rc = -1;

	if (compare_check_args(a, e) < 0)
		return -1;
	if (parse_dataflows(a->dataflows ? a->dataflows : "ws,os,is", df, &n, e) < 0)
		return -1;
	if (a->out && plot_check(a->out, "-o", e) < 0)
		return -1;
	s = calloc(1, sizeof *s);
	rq = malloc(sizeof *rq);
	c = calloc(1, sizeof *c);
	if (!s || !rq || !c) {
		free(s);
		free(rq);
		free(c);
		return err_nomem(e, NULL);
	}
	*rq = a->rq;
	if (sim_load(s, rq, "compare", e) < 0)
		goto out;
	warn(s);
	if (compare_run(c, &s->cfg, &s->w, &s->ops, &s->opts, df, n, e) < 0)
		goto out;
	if (a->out && plot_compare(a->out, &s->cfg, &s->w, c, e) < 0)
		goto out;
	report_compare(stdout, &s->cfg, &s->w, &s->opts, c, a->csv);
	if (a->out && !a->csv)
		printf("wrote %s\n", cli_shown(0, a->out));
	rc = 0;
out:
	compare_release(c);
	sim_release(s);
	free(s);
	free(rq);
	free(c);
	return rc;
}

