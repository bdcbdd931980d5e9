/*
 * test_sweep.c - tpusim sweep, through the command line: spec errors with
 * their positions (counted by hand in the specs below), rows equal to single
 * `tpusim run`s (separate processes, summary.json parsed), zip groups, a
 * failing point among good ones, point names that follow the design point,
 * and a sweep killed with SIGKILL again and again that ends with the same
 * sweep.csv as one run straight through.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "energy.h"
#include "stats.h"
#include "sweep.h"
#include "tests.h"
#include "ydoc.h"

/* A workload small enough for the cycle model in milliseconds: 4 x 8 x 12, then a relu. */
static const char tiny[] = "name: tiny\nbatch: 4\nlayers:\n"
			   "  - {name: fc, type: fc, in_features: 8, out_features: 12}\n"
			   "  - {name: act, type: relu, elements: 12}\n";

/* Runs tpusim sweep on spec (written to dir/s.yaml) with -o dir/out; returns the status. */
static int sweep(const char *dir, const char *spec, const char *jobs, char **out, char **err)
{
	char *path = th_write(dir, "s.yaml", spec), o[4200];
	snprintf(o, sizeof o, "%s/out", dir);
	const char *argv[] = { "sweep", path, "-o", o, "-j", jobs, NULL };
	int rc = th_cli(".", argv, out, err);
	free(path);
	return rc;
}

static char *csv_of(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/out/sweep.csv", dir);
	return th_slurp(p);
}

/* Splits a text into lines in place; returns how many (at most max). */
static int lines(char *text, char **v, int max)
{
	int n = 0;
	for (char *s = text; *s && n < max; n++) {
		char *nl = strchr(s, '\n');
		v[n] = s;
		if (!nl)
			return n + 1;
		*nl = 0;
		s = nl + 1;
	}
	return n;
}

/* The names of the files in dir/out/points, sorted, joined by spaces (owned). */
static char *point_names(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/out/points", dir);
	char *all = th_listing(p, false, ' ');
	size_t n = strlen(all);
	if (n)
		all[n - 1] = 0;         /* no space after the last */
	return all;
}

static const char head[] = "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n";

START_TEST(spec_errors)
{
	static const struct {
		const char *spec, *msg;     /* msg follows "<path>:" */
	} cases[] = {
		{ "axes:\n  array.rwos: [4]\n", "4:3: axes.array.rwos: expected a config key, model, dataflow, batch or train, "
						 "found an unknown key (did you mean array.rows?)" },
		{ "axes:\n  array.rows: [4, 0]\n", "4:19: array.rows: expected an integer in [1, 4096], found \"0\"" },
		{ "axes:\n  array.rows: []\n", "4:15: axes.array.rows: expected a list of values or a range {from, to, "
					       "times or step}, found an empty list" },
		{ "axes:\n  array.rows: [4, 8]\n  array.cols: [4]\nzip: [[array.rows, array.cols]]\n",
		  "6:20: zip[0][1]: expected 2 values as array.rows has, found 1 in array.cols" },
		{ "axes:\n  array.rows: [4]\nzip: [[array.rows, array.colz]]\n",
		  "5:20: zip[0][1]: expected an axis named under axes, found \"array.colz\"" },
		{ "axes:\n  dataflow: [ws, xs]\n", "4:18: axes.dataflow: expected ws, os or is, found \"xs\"" },
		{ "axes:\n  model: [functional]\n", "4:11: axes.model: expected analytic or cycle, found \"functional\"" },
		{ "axes:\n  batch: {from: 1, to: 4}\n", "4:10: axes.batch: expected a range with one of times or step, "
							"found neither" },
		{ "axes:\n  batch: {from: 8, to: 4, step: 1}\n", "4:24: axes.batch.to: expected at least from (8), found 4" },
		{ "axis:\n  batch: [1]\n", "3:1: axis: expected configs, workloads, axes or zip, found an unknown key "
					   "(did you mean axes?)" },
		{ "workload: [mlp]\n", "3:1: workload: expected configs, workloads, axes or zip, found an unknown key "
					"(did you mean workloads?)" },
		/* a value given twice would run its points twice */
		{ "axes:\n  array.rows: [8, 8]\n", "4:19: axes.array.rows[1]: expected each value once, found \"8\" again "
						     "(first at [0])" },
		{ "axes:\n  array.rows: [4, 4]\n  array.cols: [8, 8]\nzip: [[array.rows, array.cols]]\n",
		  "4:19: axes.array.rows[1]: expected each zipped set of values once, found that of [0] again" },
	};
	char *dir = th_tmpdir(), *out, *err, spec[512], want[600], o[4200];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(spec, sizeof spec, "%s%s", head, cases[i].spec);
		ck_assert_int_eq(sweep(dir, spec, "1", &out, &err), 2);
		snprintf(want, sizeof want, "%s/s.yaml:%s\n", dir, cases[i].msg);
		ck_assert_str_eq(err, want);
		free(out);
		free(err);
	}
	/* A point whose dtype the array does not run is refused before any runs, at its axis' value. */
	snprintf(spec, sizeof spec, "%saxes:\n  array.rate_int8: [1, none]\n", head);
	ck_assert_int_eq(sweep(dir, spec, "1", &out, &err), 2);
	snprintf(want, sizeof want, "%s/s.yaml:4:24: array.rate_int8: expected a rate for array.dtype int8, found none "
		 "(the array does not run int8) (array.dtype at ", dir);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	free(out);
	free(err);
	/* Nothing ran: no output directory. */
	snprintf(o, sizeof o, "%s/out", dir);
	ck_assert_int_ne(access(o, F_OK), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The keys of summary.json's total that sweep.csv's first 7 numbers show, in its order (README, "Sweeps"). */
static const char *const csv_keys[7] = { "cycles", "utilization", "achieved_ops_per_s", "hbm_read_bytes",
					 "hbm_write_bytes", "energy_pj", "pj_per_mac" };

/*
 * sweep.csv's columns after the axes, as README "Sweeps" lists them, into
 * buf joined by commas: the 7 above (tops for achieved_ops_per_s), then
 * area_mm2 and peak_power_w (the record's top level), power_w, tops_per_mm2,
 * tops_per_w, a cycles_<category> per category and an energy_<part>_pj per
 * energy component (their names from cat.h and energy.h), the step's
 * step_time_s, samples_per_s, tokens_per_s, mfu and hfu (the record's top
 * level), point and status. Returns how many there are before point.
 */
static int want_columns(char *buf, size_t size)
{
	static const char *const first[] = { "cycles", "utilization", "tops", "hbm_read_bytes", "hbm_write_bytes",
					     "energy_pj", "pj_per_mac", "area_mm2", "peak_power_w", "power_w",
					     "tops_per_mm2", "tops_per_w" };
	int n = 0;
	buf[0] = 0;
	for (size_t k = 0; k < sizeof first / sizeof first[0]; k++, n++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s,", first[k]);
	for (int k = 0; cat_names[k]; k++, n++)
		snprintf(buf + strlen(buf), size - strlen(buf), "cycles_%s,", cat_names[k]);
	for (int k = 0; k < EN_N; k++, n++)
		snprintf(buf + strlen(buf), size - strlen(buf), "energy_%s_pj,", energy_part_names[k]);
	static const char *const step[] = { "step_time_s", "samples_per_s", "tokens_per_s", "mfu", "hfu" };
	for (size_t k = 0; k < sizeof step / sizeof step[0]; k++, n++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s,", step[k]);
	snprintf(buf + strlen(buf), size - strlen(buf), "point,status");
	return n;
}

/* n commas (owned): the empty columns of a row that is not ok. */
static char *commas(int n)
{
	char *s = malloc((size_t)n + 1);
	memset(s, ',', (size_t)n);
	s[n] = 0;
	return s;
}

/*
 * The column table: the header as documented, each column found by its name;
 * the first 7 name the keys above, one value each, of which only tops is
 * scaled; a part's column names its field's part.
 */
START_TEST(csv_columns)
{
	char names[2000], want[2000], cut[10];
	int n = want_columns(want, sizeof want);
	ck_assert_int_eq(sweep_csv_ncols(), n);
	ck_assert_int_eq(n, 12 + 10 + 7 + 5);   /* 10 categories, 7 energy components (by hand: cat.h, energy.h), 5 of the step */
	sweep_csv_names(",", names, sizeof names);
	ck_assert_str_eq(names, want);
	sweep_csv_names(",", cut, sizeof cut);
	ck_assert_str_eq(cut, "cycles,ut");
	const struct sweep_csv_col *c = sweep_csv_cols();
	for (int k = 0; k < n; k++) {
		const struct result_field *f = result_field_find(c[k].field);
		/* area_mm2, peak_power_w: numbers of the design point; the step's five: of the run, not a result field */
		bool top = k == 7 || k == 8 || k >= n - 5;
		ck_assert_int_eq(sweep_csv_col(c[k].name), k);
		if (k < 7)
			ck_assert_str_eq(c[k].field, csv_keys[k]);
		ck_assert_int_eq(c[k].from, top ? SWEEP_FROM_TOP : SWEEP_FROM_TOTAL);
		if (top)
			ck_assert_msg(!f && c[k].part < 0 && !strcmp(c[k].field, c[k].name), "%s", c[k].field);
		else
			ck_assert_msg(f && f->reported && (c[k].part < 0) == (f->n == 1), "%s", c[k].field);
		ck_assert(c[k].div == (k == 2 ? 1e12 : 1));
	}
	ck_assert_str_eq(c[12].field, "cycles_by_category");
	ck_assert_int_eq(c[12].part, 0);
	ck_assert_str_eq(c[28].field, "energy_pj_by_component");
	ck_assert_int_eq(c[28].part, 6);
	ck_assert_int_eq(sweep_csv_col(SWEEP_CSV_STATUS), -1);
	ck_assert_int_eq(sweep_csv_col(SWEEP_CSV_POINT), -1);
	ck_assert_int_eq(sweep_csv_col("cycles_by_category"), -1);
	ck_assert_ptr_null(result_field_find("tops"));
}
END_TEST

/* The summary.json total of a separate tpusim run, as the csv's 7 numbers would show it. */
static void run_total(const char *dir, const char *wl, const char *rows, const char *df, const char *model,
		      char got[7][64])
{
	char o[4200], set[64], *out, *err;
	snprintf(o, sizeof o, "%s/single", dir);
	snprintf(set, sizeof set, "array.rows=%s", rows);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--set", set, "--dataflow", df, "--model",
			       model, "-o", o, NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	snprintf(o, sizeof o, "%s/single/summary.json", dir);
	char *text = th_slurp(o);
	struct err e;
	struct ydoc *d = ydoc_parse_json(o, text, &e);
	ck_assert(d);
	const struct ynode *t = ynode_get(d->root, "total");
	for (int k = 0; k < 7; k++) {
		const struct ynode *v = ynode_get(t, csv_keys[k]);
		ck_assert(v);
		if (k == 2)     /* TOPS: ops/s over 1e12 */
			snprintf(got[k], 64, "%.17g", strtod(v->str, NULL) / 1e12);
		else
			snprintf(got[k], 64, "%s", v->str);
	}
	ydoc_free(d);
	free(text);
}

/*
 * Row i's columns past the first 7 against its point file (named by its
 * point column): area_mm2 and peak_power_w as written at its top level,
 * power_w, tops_per_mm2, tops_per_w and each part as written in the total;
 * power is energy over time; the categories sum to the cycles and the energy
 * components to energy_pj.
 */
static void row_against_point(const char *dir, const struct th_csv *t, size_t i)
{
	char path[4400], col[80];
	const char *pt = th_csv_get(t, i, "point");
	ck_assert_int_eq((int)strlen(pt), (int)strlen("points/0123456789abcdef.json"));
	ck_assert(!strncmp(pt, "points/", 7) && !strcmp(pt + 23, ".json"));
	snprintf(path, sizeof path, "%s/out/%s", dir, pt);
	char *text = th_slurp(path);
	struct err e;
	struct ydoc *d = ydoc_parse_json(path, text, &e);
	ck_assert(d);
	const struct ynode *tot = ynode_get(d->root, "total"), *cats = ynode_get(tot, "cycles_by_category"),
			   *parts = ynode_get(tot, "energy_pj_by_component");
	ck_assert_str_eq(th_csv_get(t, i, "cycles"), ynode_get(tot, "cycles")->str);
	static const char *const in_total[3] = { "power_w", "tops_per_mm2", "tops_per_w" };
	static const char *const at_top[2] = { "area_mm2", "peak_power_w" };
	for (int k = 0; k < 3; k++)
		ck_assert_str_eq(th_csv_get(t, i, in_total[k]), ynode_get(tot, in_total[k])->str);
	for (int k = 0; k < 2; k++)
		ck_assert_str_eq(th_csv_get(t, i, at_top[k]), ynode_get(d->root, at_top[k])->str);
	/* power is energy over time (1 pJ = 1e-12 J; a cycle 1 / clock_ghz ns), computed here */
	double secs = th_csv_num(t, i, "cycles") / (strtod(ynode_get(d->root, "clock_ghz")->str, NULL) * 1e9);
	double w = th_csv_num(t, i, "energy_pj") * 1e-12 / secs;
	ck_assert_msg(fabs(th_csv_num(t, i, "power_w") - w) <= 1e-9 * w, "%.17g %.17g", th_csv_num(t, i, "power_w"), w);
	long long sum = 0;
	for (int k = 0; cat_names[k]; k++) {
		snprintf(col, sizeof col, "cycles_%s", cat_names[k]);
		ck_assert_str_eq(th_csv_get(t, i, col), ynode_get(cats, cat_names[k])->str);
		sum += th_csv_int(t, i, col);
	}
	ck_assert_int_eq(sum, th_csv_int(t, i, "cycles"));
	double esum = 0, energy = th_csv_num(t, i, "energy_pj");
	for (int k = 0; k < EN_N; k++) {
		snprintf(col, sizeof col, "energy_%s_pj", energy_part_names[k]);
		ck_assert_str_eq(th_csv_get(t, i, col), ynode_get(parts, energy_part_names[k])->str);
		esum += th_csv_num(t, i, col);
	}
	ck_assert_msg(fabs(esum - energy) <= 1e-9 * energy, "%.17g %.17g", esum, energy);
	ydoc_free(d);
	free(text);
}

START_TEST(rows_match_single_runs)
{
	char *dir = th_tmpdir(), *wl = th_write(dir, "tiny.yaml", tiny), spec[1024], *out, *err, *v[16];
	snprintf(spec, sizeof spec,
		 "configs: [configs/lab_4x4.yaml]\nworkloads: [%s]\naxes:\n  array.rows: [4, 8]\n  dataflow: [ws, os]\n"
		 "  model: [analytic, cycle]\n", wl);
	ck_assert_msg(sweep(dir, spec, "2", &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	char *csv = csv_of(dir);
	ck_assert_int_eq(lines(csv, v, 16), 9);
	char names[2000], hd[2100];
	int ncols = want_columns(names, sizeof names);
	snprintf(hd, sizeof hd, "workload,array.rows,dataflow,model,%s", names);
	ck_assert_str_eq(v[0], hd);
	/* Spec order: rows outermost, model fastest. */
	static const char *const order[8][3] = { { "4", "ws", "analytic" }, { "4", "ws", "cycle" }, { "4", "os", "analytic" },
						 { "4", "os", "cycle" }, { "8", "ws", "analytic" }, { "8", "ws", "cycle" },
						 { "8", "os", "analytic" }, { "8", "os", "cycle" } };
	static const char *const axes[3] = { "array.rows", "dataflow", "model" };
	static const char *const metrics[7] = { "cycles", "utilization", "tops", "hbm_read_bytes", "hbm_write_bytes",
						"energy_pj", "pj_per_mac" };
	char cycles[8][64], *text = csv_of(dir);
	struct th_csv *t = th_csv("sweep.csv", text);
	ck_assert_uint_eq(t->rows, 8);
	ck_assert_uint_eq(t->cols, 4 + (size_t)ncols + 2);
	for (size_t i = 0; i < 8; i++) {
		char want[7][64];
		ck_assert_str_eq(th_csv_get(t, i, "workload"), wl);
		for (int k = 0; k < 3; k++)
			ck_assert_str_eq(th_csv_get(t, i, axes[k]), order[i][k]);
		run_total(dir, wl, order[i][0], order[i][1], order[i][2], want);
		for (int k = 0; k < 7; k++)
			ck_assert_str_eq(th_csv_get(t, i, metrics[k]), want[k]);
		ck_assert_str_eq(th_csv_get(t, i, "status"), "ok");
		row_against_point(dir, t, i);
		snprintf(cycles[i], sizeof cycles[i], "%s", th_csv_get(t, i, "cycles"));
	}
	th_csv_free(t);
	free(text);
	/* The rows are not alike by accident: 8 rows halve the folds of 4 (12 outputs: 3 row tiles, then 2). */
	ck_assert_str_ne(cycles[0], cycles[4]);
	free(csv);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(zip_moves_together)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, *v[64];
	snprintf(spec, sizeof spec, "%saxes:\n  array.rows: [4, 8, 16]\n  dataflow: [ws, os]\n"
		 "  array.cols: {from: 4, to: 16, times: 2}\n  model: [analytic]\nzip: [[array.rows, array.cols]]\n", head);
	ck_assert_msg(sweep(dir, spec, "1", &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	char *csv = csv_of(dir);
	/* 3 zipped sizes x 2 dataflows = 6 points, not 3 x 2 x 3 = 18; the group sits at array.rows's place. */
	ck_assert_int_eq(lines(csv, v, 64), 7);
	static const char *const want[6][3] = { { "4", "ws", "4" }, { "4", "os", "4" }, { "8", "ws", "8" },
						{ "8", "os", "8" }, { "16", "ws", "16" }, { "16", "os", "16" } };
	char *text = csv_of(dir);
	struct th_csv *t = th_csv("sweep.csv", text);
	static const char *const axes[3] = { "array.rows", "dataflow", "array.cols" };
	ck_assert_uint_eq(t->rows, 6);
	ck_assert_uint_eq(t->cols, 5 + (size_t)sweep_csv_ncols() + 2);
	for (size_t i = 0; i < 6; i++)
		for (int k = 0; k < 3; k++)
			ck_assert_str_eq(th_csv_get(t, i, axes[k]), want[i][k]);
	th_csv_free(t);
	free(text);
	char *names = point_names(dir);
	ck_assert_int_eq((int)strlen(names), 6 * 21 + 5);    /* six "<16 hex>.json", spaced */
	free(names);
	free(csv);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(failing_point_recorded)
{
	char *dir = th_tmpdir(), *wl = th_write(dir, "tiny.yaml", tiny), spec[1024], *out, *err, *v[8], *q;
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [%s]\naxes:\n"
		 "  sim.max_folds: [1, 1000000]\n", wl);
	/* A failed point fails the sweep (exit 1; test_sweep_guard.c checks the lines), the others still run. */
	ck_assert_msg(sweep(dir, spec, "1", &out, &err) == 1, "%s", err);
	free(out);
	free(err);
	/* The same point alone: tpusim run fails with the error the csv must hold. */
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--set", "sim.max_folds=1", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	ck_assert_ptr_nonnull(strstr(err, "expected at most 1 folds for the cycle model (sim.max_folds)"));
	char *csv = csv_of(dir);
	ck_assert_int_eq(lines(csv, v, 8), 3);
	/* Row 1: the numbers empty, its .err file, then the message quoted (it holds commas). */
	char want[9000], *names = point_names(dir), *dot = strstr(names, ".err"), *empty = commas(sweep_csv_ncols());
	ck_assert_ptr_nonnull(dot);
	err[strcspn(err, "\n")] = 0;
	q = want + snprintf(want, sizeof want, "%s,1%s,points/%.16s.err,\"", wl, empty, dot - 16);
	free(empty);
	for (const char *s = err; *s; s++) {
		if (*s == '"')
			*q++ = '"';
		*q++ = *s;
	}
	strcpy(q, "\"");
	ck_assert_str_eq(v[1], want);
	/* Row 2 ran: ok, after the failure. */
	ck_assert_int_eq(strncmp(v[2] + strlen(v[2]) - 3, ",ok", 3), 0);
	ck_assert_ptr_nonnull(strstr(names, ".err"));
	ck_assert_ptr_nonnull(strstr(names, ".json"));
	free(names);
	free(out);
	free(err);
	free(csv);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The point file names of a one-workload sweep with these axes. */
static char *names_for(const char *wl, const char *axes)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err;
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [%s]\n%s", wl, axes);
	ck_assert_msg(sweep(dir, spec, "1", &out, &err) == 0, "%s", err);
	char *names = point_names(dir);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
	return names;
}

START_TEST(names_follow_the_point)
{
	char *dir = th_tmpdir(), *wl = th_write(dir, "tiny.yaml", tiny);
	char *a = names_for(wl, "axes:\n  array.rows: [8]\n  model: [analytic]\n");
	/* The same point written otherwise: a range, and a key set to the preset's own value (lab_4x4 has 4 columns). */
	char *b = names_for(wl, "axes:\n  model: [analytic]\n  array.rows: {from: 8, to: 8, step: 1}\n  array.cols: [4]\n");
	char *c = names_for(wl, "axes:\n  array.rows: [16]\n  model: [analytic]\n");
	char *d = names_for(wl, "axes:\n  array.rows: [8]\n  model: [cycle]\n");
	char *g = names_for(wl, "axes:\n  array.rows: [8]\n  model: [analytic]\n  dataflow: [os]\n");
	ck_assert_int_eq((int)strlen(a), 21);
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	ck_assert_str_ne(a, d);
	ck_assert_str_ne(a, g);
	/* The workload's content counts, not its name. */
	char *wl2 = th_write(dir, "other.yaml", tiny), *e = names_for(wl2, "axes:\n  array.rows: [8]\n  model: [analytic]\n");
	ck_assert_str_eq(a, e);
	free(wl2);
	wl2 = th_write(dir, "other.yaml", "name: tiny\nbatch: 5\nlayers:\n"
		       "  - {name: fc, type: fc, in_features: 8, out_features: 12}\n"
		       "  - {name: act, type: relu, elements: 12}\n");
	char *h = names_for(wl2, "axes:\n  array.rows: [8]\n  model: [analytic]\n");
	ck_assert_str_ne(a, h);
	free(a), free(b), free(c), free(d), free(e), free(g), free(h), free(wl), free(wl2);
	th_rmdir(dir);
	free(dir);
}
END_TEST

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Starts tpusim sweep in the background, output to /dev/null; returns its pid. */
static pid_t start(const char *spec, const char *out)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(th_tpusim(), th_tpusim(), "sweep", spec, "-o", out, "-j", "2", (char *)NULL);
		_exit(127);
	}
	return pid;
}

START_TEST(kill_and_resume)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, o[4200], p[4200];
	/* 10 x 2 x 2 = 40 analytic points of the MLP. */
	snprintf(spec, sizeof spec, "%saxes:\n  array.rows: {from: 1, to: 10, step: 1}\n  array.cols: [4, 8]\n"
		 "  dataflow: [ws, os]\n  model: [analytic]\n", head);
	double t0 = now();
	ck_assert_msg(sweep(dir, spec, "2", &out, &err) == 0, "%s", err);
	double whole = now() - t0;
	free(out);
	free(err);
	char *want = csv_of(dir);
	ck_assert_int_eq((int)strlen(want) > 0, 1);

	char *spec_path = th_write(dir, "s.yaml", spec);
	snprintf(o, sizeof o, "%s/killed", dir);
	uint64_t seed = (uint64_t)getpid() * 2654435761u + 7;
	for (int round = 0; round < 8; round++) {
		pid_t pid = start(spec_path, o);
		int status;
		usleep((useconds_t)th_rnd(&seed, 0, (int64_t)(whole * 0.6e6)));
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	}
	/* Finish it. */
	const char *argv[] = { "sweep", spec_path, "-o", o, "-j", "2", NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	snprintf(p, sizeof p, "%s/sweep.csv", o);
	char *got = th_slurp(p);
	ck_assert_str_eq(got, want);
	/* Then a state a crash could leave, for sure: every third point file gone (14 of 40), one cut short: 25 left. */
	{
		int n = 0;
		snprintf(p, sizeof p, "%s/killed/points", dir);
		DIR *d = opendir(p);
		for (struct dirent *de; d && (de = readdir(d));) {
			char f[4400];
			if (de->d_name[0] == '.')
				continue;
			snprintf(f, sizeof f, "%s/%s", p, de->d_name);
			if (n % 3 == 0)
				ck_assert_int_eq(unlink(f), 0);
			else if (n == 1) {
				FILE *fp = fopen(f, "w");
				fputs("{\"total\": {\"cyc", fp);
				fclose(fp);
			}
			n++;
		}
		closedir(d);
		ck_assert_int_eq(n, 40);
	}
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	ck_assert_ptr_nonnull(strstr(out, "40 points, 25 already done"));
	free(out);
	free(err);
	free(got);
	snprintf(p, sizeof p, "%s/sweep.csv", o);
	got = th_slurp(p);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	free(spec_path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- clusters: --points, --emit, --merge ---- */

/* 10 x 2 x 2 = 40 analytic points of the MLP: point p is rows p / 4 + 1, cols (4, 8)[p / 2 % 2], (ws, os)[p % 2]. */
static const char forty[] = "axes:\n  array.rows: {from: 1, to: 10, step: 1}\n  array.cols: [4, 8]\n"
			    "  dataflow: [ws, os]\n  model: [analytic]\n";


/* The point index of a summary.json of the forty-point spec, worked out from its values. */
static int forty_index(const char *path)
{
	char *text = th_slurp(path);
	struct err e;
	struct ydoc *d = ydoc_parse_json(path, text, &e);
	ck_assert_ptr_nonnull(d);
	const struct ynode *set = ynode_get(d->root, "set"), *df = ynode_get(d->root, "dataflow");
	int rows = atoi(ynode_get(set, "array.rows")->str), cols = atoi(ynode_get(set, "array.cols")->str);
	int i = (rows - 1) * 4 + (cols == 8) * 2 + !strcmp(df->str, "os");
	ydoc_free(d);
	free(text);
	return i;
}

/* The stems of dir's point files by index (stem[i][0] == 0: no file); returns how many there are. */
static int forty_stems(const char *dir, char stem[40][17])
{
	char p[4200];
	int n = 0;
	memset(stem, 0, 40 * 17);
	snprintf(p, sizeof p, "%s/points", dir);
	DIR *d = opendir(p);
	ck_assert(d);
	for (struct dirent *de; (de = readdir(d));) {
		char f[4400];
		if (de->d_name[0] == '.')
			continue;
		ck_assert_int_eq((int)strlen(de->d_name), 21);
		snprintf(f, sizeof f, "%s/%s", p, de->d_name);
		int i = forty_index(f);
		ck_assert(i >= 0 && i < 40 && !stem[i][0]);
		memcpy(stem[i], de->d_name, 16);
		n++;
	}
	closedir(d);
	return n;
}

START_TEST(cluster_errors)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, want[9000], o[4200], rec[4200], bad[4200];
	snprintf(spec, sizeof spec, "%s%s", head, forty);
	char *good = th_write(dir, "good.yaml", spec);
	snprintf(spec, sizeof spec, "%saxes:\n  array.rwos: [4]\n", head);
	char *wrong = th_write(dir, "bad.yaml", spec);
	snprintf(o, sizeof o, "%s/out", dir);
	static const char rwos[] = "4:3: axes.array.rwos: expected a config key, model, dataflow, batch or train, found an "
				   "unknown key (did you mean array.rows?)";
	/* A bad spec: the positioned error, exit 2, and no DIR (emit creates it only after the check). */
	static const char *const engines[] = { "parallel", "slurm" };
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(th_sweep(".", &out, &err, wrong, "-o", o, "--emit", engines[k], NULL), 2);
		snprintf(want, sizeof want, "%s:%s\n", wrong, rwos);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(out, "");
		free(out), free(err);
		ck_assert_int_ne(access(o, F_OK), 0);
	}
	/* Options. */
	static const struct {
		const char *a[6], *msg;
	} opts[] = {
		{ { "--emit", "pbs" }, "--emit: expected parallel or slurm, found \"pbs\"" },
		{ { "--emit", "parallel", "-j", "2" }, "--emit: expected no -j (the jobs run their points one at a time; "
						       "parallel -j or Slurm sets how many run at once), found one" },
		{ { "--emit", "slurm", "--points", "0-3" }, "--emit: expected no --points (the jobs run their points one "
							    "at a time; parallel -j or Slurm sets how many run at once), found one" },
		{ { "--chunk-size", "5" }, "--chunk-size: expected --emit parallel|slurm with it, found none" },
		{ { "--emit", "slurm", "--chunk-size", "0" }, "--chunk-size: expected an integer in [1, 1000000], found \"0\"" },
		{ { "--points", "5" }, "--points: expected I-J, the points from I to J (numbered from 0), found \"5\"" },
		{ { "--points", "-1-3" }, "--points: expected I-J, the points from I to J (numbered from 0), found \"-1-3\"" },
		{ { "--points", "3-40" }, "--points: expected I-J with I <= J < 40 (the spec's points), found 3-40" },
		{ { "--points", "5-4" }, "--points: expected I-J with I <= J < 40 (the spec's points), found 5-4" },
	};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		const char *const *a = opts[i].a;
		ck_assert_int_eq(th_sweep(".", &out, &err, good, "-o", o, a[0], a[1], a[2], a[3], NULL), 2);
		snprintf(want, sizeof want, "%s\n", opts[i].msg);
		ck_assert_str_eq(err, want);
		free(out), free(err);
		ck_assert_int_ne(access(o, F_OK), 0);
	}
	/* Slurm cannot log under a directory with % in its path: refused before anything is made. */
	snprintf(bad, sizeof bad, "%s/50%%", dir);
	ck_assert_int_eq(th_sweep(".", &out, &err, good, "-o", bad, "--emit", "slurm", NULL), 2);
	snprintf(want, sizeof want, "-o: expected a directory Slurm can log under (no blanks, quotes, %% or \\ in its "
		 "absolute path), found \"%s\"\n", bad);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	ck_assert_int_ne(access(bad, F_OK), 0);
	/* --merge: alone, and on a directory with the record. */
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", dir, good, NULL), 2);
	ck_assert_str_eq(err, "--merge: expected only the directory of a sweep (tpusim sweep --merge DIR), found SPEC.yaml "
			      "too\n");
	free(out), free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", dir, NULL), 2);
	snprintf(want, sizeof want, "--merge: expected a directory with a sweep's record (sweep.yaml and sweep.cwd, "
		 "written by tpusim sweep -o DIR), found no \"%s/sweep.cwd\" (No such file or directory)\n", dir);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	/* The record made by an emit, then spoilt: the spec copy, then the directory. */
	ck_assert_int_eq(th_sweep(".", &out, &err, good, "-o", o, "--emit", "parallel", NULL), 0);
	free(out), free(err);
	snprintf(spec, sizeof spec, "%saxes:\n  array.rwos: [4]\n", head);
	free(th_write(o, "sweep.yaml", spec));
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	snprintf(want, sizeof want, "%s/sweep.yaml:%s\n", o, rwos);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	free(th_write(o, "sweep.cwd", "configs\n"));
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	snprintf(want, sizeof want, "%s/sweep.cwd: expected an absolute directory, found \"configs\"\n", o);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	/*
	 * A working directory where the spec's files are not: the config first,
	 * named as opened, at its place in the spec ("configs: [" is 10
	 * characters: column 11).
	 */
	snprintf(rec, sizeof rec, "%s\n", dir);
	free(th_write(o, "sweep.cwd", rec));
	snprintf(spec, sizeof spec, "%s%s", head, forty);
	free(th_write(o, "sweep.yaml", spec));
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	snprintf(want, sizeof want, "%s/sweep.yaml:1:11: configs[0]: expected a readable file, found "
		 "\"%s/configs/lab_4x4.yaml\" (No such file or directory)\n", o, dir);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	/* Then the workload, at its place: "workloads: [" is 12 characters, line 2. */
	snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n%s",
		 getcwd(rec, sizeof rec), forty);
	free(th_write(o, "sweep.yaml", spec));
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	snprintf(want, sizeof want, "%s/sweep.yaml:2:13: workloads[0]: expected a readable file, found "
		 "\"%s/configs/workloads/mlp.yaml\" (No such file or directory)\n", o, dir);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	free(good), free(wrong);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(points_then_merge)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, o[4200], p[4400], cwd[4200], want[4300], stem[40][17];
	snprintf(spec, sizeof spec, "%s%s", head, forty);
	char *path = th_write(dir, "s.yaml", spec);
	snprintf(o, sizeof o, "%s/jobs", dir);
	/* Points 3 to 5 only: three files, for (1, 8, os), (2, 4, ws), (2, 4, os); no sweep.csv. */
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", o, "--points", "3-5", NULL), 0);
	snprintf(want, sizeof want, "ran points 3-5 of 40 into %s/points; tpusim sweep --merge %s builds sweep.csv\n", o, o);
	ck_assert_ptr_nonnull(strstr(out, want));
	free(out), free(err);
	ck_assert_int_eq(forty_stems(o, stem), 3);
	ck_assert(stem[3][0] && stem[4][0] && stem[5][0]);
	snprintf(p, sizeof p, "%s/sweep.csv", o);
	ck_assert_int_ne(access(p, F_OK), 0);
	/* The record: the spec's bytes, and the working directory. */
	snprintf(p, sizeof p, "%s/sweep.yaml", o);
	char *copy = th_slurp(p);
	ck_assert_str_eq(copy, spec);
	free(copy);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(want, sizeof want, "%s\n", cwd);
	snprintf(p, sizeof p, "%s/sweep.cwd", o);
	copy = th_slurp(p);
	ck_assert_str_eq(copy, want);
	free(copy);
	/* The rest in two overlapping ranges, then a merge from elsewhere equals one run straight through. */
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", o, "--points", "0-4", "-j", "2", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "sweep: 5 points, 2 already done"));
	free(out), free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", o, "--points", "6-39", NULL), 0);
	free(out), free(err);
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 0);
	snprintf(want, sizeof want, "wrote %s/sweep.csv: 40 points, 40 ok, 0 failed, 0 missing\n", o);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(err, "");
	free(out), free(err);
	ck_assert_int_eq(sweep(dir, spec, "2", &out, &err), 0);
	free(out), free(err);
	char *one = csv_of(dir);
	snprintf(p, sizeof p, "%s/sweep.csv", o);
	char *merged = th_slurp(p);
	ck_assert_str_eq(merged, one);
	free(one), free(merged), free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(merge_lists_missing)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, o[4200], p[4400], want[8192], stem[40][17];
	snprintf(spec, sizeof spec, "%s%s", head, forty);
	ck_assert_int_eq(sweep(dir, spec, "2", &out, &err), 0);
	free(out), free(err);
	snprintf(o, sizeof o, "%s/out", dir);
	ck_assert_int_eq(forty_stems(o, stem), 40);
	/* Points 0, 7 and 38 lose their files: (1, 4, ws), (2, 8, os), (10, 8, ws). */
	static const int gone[] = { 0, 7, 38 };
	for (int k = 0; k < 3; k++) {
		snprintf(p, sizeof p, "%s/points/%s.json", o, stem[gone[k]]);
		ck_assert_int_eq(unlink(p), 0);
	}
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", o, NULL), 4);
	snprintf(want, sizeof want,
		 "wrote %s/sweep.csv: 40 points, 37 ok, 0 failed, 3 missing\n"
		 "missing (index from 0, as the rows of sweep.csv: workload and axes, point file):\n"
		 "  0: workload=configs/workloads/mlp.yaml array.rows=1 array.cols=4 dataflow=ws model=analytic (%s)\n"
		 "  7: workload=configs/workloads/mlp.yaml array.rows=2 array.cols=8 dataflow=os model=analytic (%s)\n"
		 "  38: workload=configs/workloads/mlp.yaml array.rows=10 array.cols=8 dataflow=ws model=analytic (%s)\n",
		 o, stem[0], stem[7], stem[38]);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(err, "sweep: expected every point to have a result, found 3 of 40 missing (run their jobs, then "
			      "merge again)\n");
	free(out), free(err);
	/* The csv has them as missing rows. */
	char *csv = csv_of(dir), *v[64];
	ck_assert_int_eq(lines(csv, v, 64), 41);
	char *empty = commas(sweep_csv_ncols() + 2), row[400];
	snprintf(row, sizeof row, "configs/workloads/mlp.yaml,1,4,ws,analytic%smissing", empty);
	ck_assert_str_eq(v[1], row);
	snprintf(row, sizeof row, "configs/workloads/mlp.yaml,10,8,ws,analytic%smissing", empty);
	ck_assert_str_eq(v[39], row);
	free(empty);
	ck_assert_int_eq(strncmp(v[2] + strlen(v[2]) - 3, ",ok", 3), 0);
	free(csv);
	/* Every file gone: 20 listed, then the rest counted. */
	for (int i = 0; i < 40; i++) {
		snprintf(p, sizeof p, "%s/points/%s.json", o, stem[i]);
		unlink(p);
	}
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", o, NULL), 4);
	ck_assert_int_eq(lines(out, v, 64), 23);
	snprintf(want, sizeof want, "  19: workload=configs/workloads/mlp.yaml array.rows=5 array.cols=8 dataflow=os "
		 "model=analytic (%s)", stem[19]);
	ck_assert_str_eq(v[21], want);
	ck_assert_str_eq(v[22], "  ... and 20 more");
	free(out), free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Temporary files are named per host and process: a run removes those of its
 * own host's processes that are gone, and leaves another host's (its
 * writer may be running there) and those of live processes.
 */
START_TEST(stale_temp_files)
{
	char *dir = th_tmpdir(), spec[1024], *out, *err, host[256] = "", p[4400];
	snprintf(spec, sizeof spec, "%saxes:\n  model: [analytic]\n", head);
	ck_assert_int_eq(gethostname(host, sizeof host - 1), 0);
	for (char *c = host; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr(".-_", *c)))
			*c = '_';
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
	ck_assert_int_eq(sweep(dir, spec, "1", &out, &err), 0);
	free(out), free(err);
	char names[4][300];
	snprintf(names[0], sizeof names[0], ".0123456789abcdef.json.tmp.%s.%d", host, (int)gone);     /* removed */
	snprintf(names[1], sizeof names[1], ".0123456789abcdef.json.tmp.%sx.%d", host, (int)gone);    /* another host */
	snprintf(names[2], sizeof names[2], ".0123456789abcdef.json.tmp.%s.%d", host, (int)getpid()); /* alive */
	snprintf(names[3], sizeof names[3], ".sweep.csv.tmp.%s.%d", host, (int)gone);                  /* removed */
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/out/%s", dir, i == 3 ? "" : "points");
		free(th_write(p, names[i], "{\"total\": {\"cyc"));
	}
	ck_assert_int_eq(sweep(dir, spec, "1", &out, &err), 0);
	free(out), free(err);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/out/%s/%s", dir, i == 3 ? "" : "points", names[i]);
		ck_assert_msg((access(p, F_OK) == 0) == (i == 1 || i == 2), "%s", names[i]);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Reuse (opcache.h): the same sweep with each worker reusing the results of
 * identical ops, within a point (BERT's twelve layers, ResNet-50's repeated
 * blocks) and across points (the energy axis, varying fastest, changes no
 * op's timing; the model axis must not mix), with one worker and with two,
 * and with --no-reuse: every point file, layers included, and sweep.csv are
 * the same bytes.
 */
START_TEST(reuse_identity)
{
	static const char spec[] = "configs: [configs/tpu_v4_mxu.yaml]\n"
				   "workloads: [configs/workloads/bert_base.yaml, configs/workloads/resnet50.yaml]\n"
				   "axes:\n  array.rows: [64, 128]\n  dataflow: [ws, os]\n  model: [cycle, analytic]\n"
				   "  energy.hbm_pj_per_bit: [3.97, 8]\n";
	char *dir = th_tmpdir(), *path = th_write(dir, "s.yaml", spec), a[4200], b[4200], *out, *err;
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	char c[4200];
	snprintf(c, sizeof c, "%s/c", dir);
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", a, NULL), 0);
	free(out);
	free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", c, "-j", "2", NULL), 0);
	free(out);
	free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, path, "-o", b, "--no-reuse", NULL), 0);
	free(out);
	free(err);
	for (int run = 0; run < 2; run++) {
	int n = 0;
	DIR *d;
	const char *x = run ? "c" : "a";
	snprintf(a, sizeof a, "%s/%s/points", dir, x);
	ck_assert(d = opendir(a));
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(a, sizeof a, "%s/%s/points/%s", dir, x, de->d_name);
		snprintf(b, sizeof b, "%s/b/points/%s", dir, de->d_name);
		char *ta = th_slurp(a), *tb = th_slurp(b);
		ck_assert_msg(strstr(de->d_name, ".json") && ta && tb && !strcmp(ta, tb), "%s differs with reuse",
			      de->d_name);
		free(ta);
		free(tb);
		n++;
	}
	closedir(d);
	ck_assert_int_eq(n, 32);        /* 2 workloads x 2 x 2 x 2 x 2 */
	snprintf(a, sizeof a, "%s/%s/sweep.csv", dir, x);
	snprintf(b, sizeof b, "%s/b/sweep.csv", dir);
	char *ca = th_slurp(a), *cb = th_slurp(b);
	ck_assert(ca && cb);
	ck_assert_str_eq(ca, cb);
	free(ca);
	free(cb);
	}
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The pid of a child of pid, or 0 (from /proc/PID/task/PID/children). */
static pid_t child_of(pid_t pid)
{
	char p[64];
	long c = 0;
	snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%ld", &c) != 1)
			c = 0;
		fclose(f);
	}
	return (pid_t)c;
}

/*
 * A worker killed while it runs a point (as the kernel kills a process out
 * of memory): that point is recorded as failed, with the signal, and the
 * sweep goes on with a new worker for the rest. Point 0 is a cycle run of
 * about two seconds (4 x 8192 x 8192 on the 4 x 4 lab array: 4,194,304 folds),
 * point 1 its closed form; one worker, killed 0.3 s into point 0.
 */
START_TEST(killed_worker_fails_its_point_only)
{
	char *dir = th_tmpdir(), o[4200], p[4200];
	char *wl = th_write(dir, "w.yaml", "name: big\nbatch: 1\nlayers:\n"
			    "  - {name: g, type: matmul, m: 4, k: 8192, n: 8192, a: activation, b: weight}\n");
	char spec_text[8400];
	snprintf(spec_text, sizeof spec_text, "configs: [configs/lab_4x4.yaml]\nworkloads: [%s]\n"
		 "axes:\n  model: [cycle, analytic]\n", wl);
	char *spec = th_write(dir, "s.yaml", spec_text);
	snprintf(o, sizeof o, "%s/out", dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(th_tpusim(), th_tpusim(), "sweep", spec, "-o", o, (char *)NULL);
		_exit(127);
	}
	pid_t w = 0;
	for (int i = 0; i < 2000 && !(w = child_of(pid)); i++)
		usleep(1000);
	ck_assert_int_gt(w, 0);
	usleep(300000);
	ck_assert_int_eq(kill(w, SIGKILL), 0);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "sweep status %d (1: a point failed)", status);
	snprintf(p, sizeof p, "%s/sweep.csv", o);
	char *csv = th_slurp(p);
	struct th_csv *t = th_csv("sweep.csv", csv);
	ck_assert_uint_eq(t->rows, 2);
	ck_assert_str_eq(th_csv_get(t, 0, "model"), "cycle");
	ck_assert_msg(strstr(th_csv_get(t, 0, "status"), "killed by signal 9"), "%s", th_csv_get(t, 0, "status"));
	ck_assert_str_eq(th_csv_get(t, 1, "model"), "analytic");
	ck_assert_str_eq(th_csv_get(t, 1, "status"), "ok");
	th_csv_free(t);
	free(csv), free(spec), free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

void sweep_guard_tests(TCase *t);     /* test_sweep_guard.c */

Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *t = tcase_create("sweep");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, spec_errors);
	tcase_add_test(t, csv_columns);
	tcase_add_test(t, rows_match_single_runs);
	tcase_add_test(t, zip_moves_together);
	tcase_add_test(t, failing_point_recorded);
	tcase_add_test(t, names_follow_the_point);
	tcase_add_test(t, kill_and_resume);
	tcase_add_test(t, cluster_errors);
	tcase_add_test(t, points_then_merge);
	tcase_add_test(t, merge_lists_missing);
	tcase_add_test(t, stale_temp_files);
	tcase_add_test(t, reuse_identity);
	tcase_add_test(t, killed_worker_fails_its_point_only);
	sweep_guard_tests(t);
	suite_add_tcase(s, t);
	return s;
}
