/*
 * cmd_sweep.c - the commands over many runs or over a run's record: sweep
 * (run, emit, merge, plot) and trace (see cli.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sweep.h"
#include "sweepplot.h"
#include "trace.h"

struct sweep_view {
	bool tty;
	double last;    /* when the TTY line was last drawn */
};

/* Progress: one line redrawn on a terminal, else one line per finished point. */
static void sweep_progress(void *ctx, const struct sweep_progress *p)
{
	struct sweep_view *v = ctx;
	size_t ran = p->done - p->resumed, left = p->total - p->done;
	double rate = p->elapsed > 0 ? (double)ran / p->elapsed : 0;
	if (p->finished) {
		if (p->workers) {
			printf("ran %zu points in %.1f s (%.1f points/s) on %d worker%s, peak RSS per worker", ran, p->elapsed,
			       rate, p->workers, p->workers == 1 ? "" : "s");
			for (int w = 0; w < p->workers; w++)
				printf("%s %.1f", w ? "," : "", (double)p->worker_rss_kib[w] / 1024.0);
			printf(" MiB\n");
		}
	} else if (p->point < 0) {
		printf("sweep: %zu points, %zu already done\n", p->total, p->resumed);
	} else if (!v->tty) {
		printf("%zu/%zu %s %s\n", p->done, p->total, p->point_failed ? "failed" : "ok", p->hash);
	} else if (left == 0 || p->elapsed - v->last >= 0.1) {
		char bar[31];
		size_t full = p->total ? p->done * 30 / p->total : 30;
		memset(bar, '#', full);
		memset(bar + full, '.', 30 - full);
		bar[30] = 0;
		v->last = p->elapsed;
		printf("\r[%s] %zu/%zu points, %.1f points/s, ETA %.0f s, %zu failed\033[K", bar, p->done, p->total, rate,
		       rate > 0 ? (double)left / rate : 0.0, p->failed);
		if (left == 0)
			putchar('\n');
	}
	fflush(stdout);
}

/* The view the command line asks of the charts: --hold, --pareto, --heatmaps. */
static void plot_opts(const struct cli_args *a, struct sweepplot_opts *po)
{
	memset(po, 0, sizeof *po);
	for (int k = 0; k < a->nhold; k++)
		po->hold[k] = a->hold[k];
	po->nhold = a->nhold;
	po->pareto = a->pareto;
	po->all_heatmaps = a->heatmaps == 1;
}

/* The holds checked against the spec's axes and values, before anything runs (sweepplot_hold_find). */
static int holds_in_spec(const struct cli_args *a, const struct sweep *sw, struct err *e)
{
	struct sweepplot_axes ax = { .n = sw->naxes };
	int axis[SWEEPPLOT_MAX_HOLDS];
	size_t val[SWEEPPLOT_MAX_HOLDS];
	for (int i = 0; i < sw->naxes; i++) {
		ax.name[i] = sw->axes[i].name;
		ax.nvals[i] = sw->axes[i].n;
		ax.vals[i] = (const char *const *)sw->axes[i].values;
	}
	return sweepplot_hold_find(&ax, a->hold, a->nhold, axis, val, e);
}

/* Draws the charts of the sweep in dir (sweepplot.h) and lists them. */
static int sweep_plot(const struct cli_args *a, const char *dir, struct err *e)
{
	struct sweepplot_out o;
	struct sweepplot_opts po;
	plot_opts(a, &po);
	if (sweepplot_dir(dir, &po, &o, e) < 0)
		return -1;
	for (size_t k = 0; k < o.nnotes; k++)
		printf("%s\n", o.notes[k]);
	for (size_t k = 0; k < o.nfiles; k++)
		printf("wrote %s\n", cli_shown(0, o.files[k]));
	sweepplot_out_release(&o);
	return 0;
}

/* "I-J": the points from I to J, each a whole number of at most SWEEP_MAX_POINTS. */
static bool point_range(const char *text, long long *first, long long *last)
{
	const char *dash = strchr(text, '-');
	char *end;
	if (!dash || !isdigit((unsigned char)text[0]) || !isdigit((unsigned char)dash[1]))
		return false;
	*first = strtoll(text, &end, 10);
	if (end != dash || *first > SWEEP_MAX_POINTS)
		return false;
	*last = strtoll(dash + 1, &end, 10);
	return !*end && *last <= SWEEP_MAX_POINTS;
}

/*
 * tpusim sweep SPEC.yaml -o DIR [-j N] [--points I-J] [--no-reuse] [--plot [VIEW]]
 * tpusim sweep SPEC.yaml -o DIR --emit parallel|slurm [--chunk-size C] [--no-reuse]
 * tpusim sweep --merge DIR [--plot [VIEW]]
 * tpusim sweep --plot DIR [VIEW]
 * VIEW: --hold AXIS=VALUE ..., --pareto X,Y, --heatmaps first|all
 * Returns the exit status (4: points missing after a merge; else 1: points failed), or -1 with e set.
 */
int cmd_sweep(const struct cli_args *a, struct err *e)
{
	const char *spec = a->arg, *dir = a->out, *merge = a->merge, *points = a->points;
	bool have_j = cli_given(a, "-j"), emit = a->emit >= 0, chunk = a->chunk > 0, plot = a->sweep_plot;
	long long first = 0, last = 0;
	struct sweep *sw;
	struct sweep_view view = { isatty(STDOUT_FILENO), 0 };
	char *text = NULL;
	size_t missing = 0, failed = 0;
	int rc;

	/* The view's options go with --plot; the one bad --pareto is said before any point runs. */
	const char *vopt = a->nhold ? "--hold" : a->pareto ? "--pareto" : a->heatmaps >= 0 ? "--heatmaps" : NULL;
	if (vopt && !plot)
		return err_input(e, "%s: expected --plot with it (it says what the charts show), found none", vopt);
	if (a->pareto) {
		int pair[2], colour;
		if (sweepplot_pareto_pair(a->pareto, pair, &colour, e) < 0)
			return -1;
	}
	/* sweep --plot DIR: the option first, then the directory, nothing else but the view's options. */
	if (plot && cli_given(a, "--plot") == 2) {
		for (int i = 0; i < CLI_MAX_OPTS; i++)
			if (a->at[i] > 2 && a->at[i] != cli_given(a, "--hold") && a->at[i] != cli_given(a, "--pareto") &&
			    a->at[i] != cli_given(a, "--heatmaps"))
				return err_input(e, "sweep --plot: expected only DIR and --hold, --pareto, --heatmaps, found "
						 "another option");
		char q[300];
		if (a->extra)
			return err_input(e, "sweep --plot: expected only DIR, found another, \"%s\"",
					 err_quote(q, sizeof q, a->extra, 60));
		if (!spec)
			return err_input(e, "--plot: expected a value after it, found the end of the command line");
		if (!*spec)
			return cli_bad_arg(e, "--plot", "expected a directory", spec);
		return sweep_plot(a, spec, e);
	}
	if (cli_one_operand(a, e) < 0)
		return -1;
	if (merge && (spec || dir || have_j || points || emit || chunk || a->rq.no_reuse))
		return err_input(e, "--merge: expected only the directory of a sweep (tpusim sweep --merge DIR), found %s too",
				 spec ? "SPEC.yaml" : dir ? "-o" : have_j ? "-j" : points ? "--points" : emit ? "--emit" :
				 chunk ? "--chunk-size" : "--no-reuse");
	if (emit && (have_j || points))
		return err_input(e, "--emit: expected no %s (the jobs run their points one at a time; parallel -j or Slurm "
				 "sets how many run at once), found one", have_j ? "-j" : "--points");
	if (chunk && !emit)
		return err_input(e, "--chunk-size: expected --emit parallel|slurm with it, found none");
	if (plot && (emit || points))
		return err_input(e, "--plot: expected a whole sweep or --merge DIR (the charts need every point), found %s",
				 emit ? "--emit" : "--points");
	if (points && !point_range(points, &first, &last))
		return cli_bad_arg(e, "--points", "expected I-J, the points from I to J (numbered from 0)", points);
	if (!merge && !spec)
		return err_input(e, "sweep: expected SPEC.yaml (or --merge DIR), found none");
	if (!merge && !dir)
		return err_input(e, "sweep: expected -o DIR, found none");
	if (!(sw = calloc(1, sizeof *sw)))
		return err_nomem(e, NULL);
	if ((merge ? sweep_open(sw, merge, e) : points ? sweep_load_points(sw, spec, (size_t)first, (size_t)last, e)
						       : sweep_load(sw, spec, e)) < 0) {
		free(sw);
		return -1;
	}
	sw->no_reuse = a->rq.no_reuse;
	if ((a->nhold && holds_in_spec(a, sw, e) < 0) || (!merge && cli_make_parents("-o", dir, true, e) < 0)) {
		sweep_release(sw);
		free(sw);
		return -1;
	}
	if (merge)
		rc = sweep_merge(sw, merge, &text, &missing, &failed, e);
	else if (emit)
		rc = sweep_emit(sw, dir, (enum sweep_engine)a->emit, (size_t)a->chunk, &text, e);
	else if (points)
		rc = sweep_run_points(sw, dir, (int)a->jobs, sweep_progress, &view, &failed, e);
	else
		rc = sweep_run(sw, dir, (int)a->jobs, sweep_progress, &view, &failed, e);
	if (rc == 0 && text) {
		fputs(text, stdout);
	} else if (rc == 0 && points) {
		char nf[40] = "";
		if (failed)
			snprintf(nf, sizeof nf, ", %zu failed", failed);
		printf("ran points %lld-%lld of %zu into %s/points%s; tpusim sweep --merge %s builds sweep.csv\n", first,
		       last, sw->npoints, cli_shown(0, dir), nf, cli_shown(1, dir));
	} else if (rc == 0) {
		printf("wrote %s/sweep.csv: %zu points, %zu ok, %zu failed\n", cli_shown(0, dir), sw->npoints,
		       sw->npoints - failed, failed);
	}
	free(text);
	/* The charts of what is there (failed points are left out), then the line that says what is not. */
	if (rc == 0 && plot && !missing)
		rc = sweep_plot(a, merge ? merge : dir, e);
	fflush(stdout);
	if (rc == 0 && missing) {
		/* Missing points first: their jobs are still to run. */
		fprintf(stderr, "sweep: expected every point to have a result, found %zu of %zu missing (run their jobs, "
			"then merge again)\n", missing, sw->npoints);
		rc = 4;
	} else if (rc == 0 && failed) {
		const char *d = cli_shown(0, merge ? merge : dir);
		bool one = failed == 1;
		fprintf(stderr, "sweep: expected every point to succeed, found %zu of %zu failed (%s in ", failed,
			points ? (size_t)(last - first + 1) : sw->npoints, one ? "its error is" : "their errors are");
		if (!points)
			fprintf(stderr, "%s/sweep.csv's status column and in ", d);
		fprintf(stderr, "%s .err file%s in %s/points: delete %s to run %s again)\n", one ? "its" : "their",
			one ? "" : "s", d, one ? "that" : "those", one ? "it" : "them");
		rc = 1;
	}
	sweep_release(sw);
	free(sw);
	return rc;
}

static void print_record(void *ctx, const struct trace_rec *r)
{
	trace_rec_print(ctx, r);
}

/* tpusim trace FILE [--records]: checks the event trace and prints what its events add up to (and each record). */
int cmd_trace(const struct cli_args *a, struct err *e)
{
	struct trace_summary s;
	if (cli_one_operand(a, e) < 0)
		return -1;
	if (!a->arg)
		return err_input(e, "trace: expected a file, tpusim trace FILE.gz [--records], found none");
	if (trace_read(a->arg, &s, a->records ? print_record : NULL, stdout, e) < 0)
		return -1;
	if (a->records)
		putchar('\n');
	trace_summary_print(stdout, a->arg, &s);
	trace_summary_release(&s);
	return 0;
}
