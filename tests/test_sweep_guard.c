/*
 * test_sweep_guard.c - the sweep's directory and records against what users
 * and other processes do to them (suite sweep, with test_sweep.c): a preset
 * config merged from elsewhere, the spec's paths resolved from the working
 * directory only, another spec's or a running sweep's directory refused,
 * failed points in the exit status, point files that are not records rerun
 * and named, a write error with its path and cause, jobs.txt lines that a
 * path cannot split, and the dataflow axis that would do nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

/* Two analytic points: instant, and enough for every route. */
static const char two[] = "axes:\n  model: [analytic]\n  dataflow: [ws, os]\n";


/* dir/name (owned). */
static char *at(const char *dir, const char *name)
{
	char *p;
	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
	return p;
}

/* The names in dir/points, sorted, space-separated (owned). */
static char *points_of(const char *o)
{
	char *p = at(o, "points"), *all = th_listing(p, false, ' ');
	free(p);
	return all;
}

/* The first point file's stem of the sweep in o (16 hex digits) into stem. */
static void first_stem(const char *o, char stem[17])
{
	char *all = points_of(o);
	ck_assert_int_ge((int)strlen(all), 16);
	memcpy(stem, all, 16);
	stem[16] = 0;
	free(all);
}

/* The line and column (from 1) of text + off, counted here. */
static void line_col(const char *text, size_t off, long *line, long *col)
{
	*line = 1, *col = 1;
	for (size_t i = 0; i < off; i++)
		if (text[i] == '\n')
			++*line, *col = 1;
		else
			++*col;
}

START_TEST(merge_preset_config)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, want[4400];
	snprintf(spec, sizeof spec, "configs: [lab_4x4]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "m"), *csv_path = at(o, "sweep.csv");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	free(out), free(err);
	char *run_csv = th_slurp(csv_path);
	/* The cluster route's last step, from another directory: the preset is a preset there too. */
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 0);
	snprintf(want, sizeof want, "wrote %s/sweep.csv: 2 points, 2 ok, 0 failed, 0 missing\n", o);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(err, "");
	free(out), free(err);
	char *merged = th_slurp(csv_path);
	ck_assert_str_eq(merged, run_csv);
	free(merged), free(run_csv), free(csv_path), free(o), free(s);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A spec's workloads are taken as -w takes them: a shipped workload's name
 * means that file, on the run and on --merge from another directory, so the
 * sweep by name writes the csv the sweep by path writes, but for the
 * workload column, which says the item as the spec gives it.
 */
static char *named_rows(const char *csv)
{
	static const char path[] = "\nconfigs/workloads/mlp.yaml,";
	char *out = calloc(1, strlen(csv) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	for (const char *c = csv; *c;) {
		if (!strncmp(c, path, sizeof path - 1)) {
			o += sprintf(o, "\nmlp,");
			c += sizeof path - 1;
		} else {
			*o++ = *c++;
		}
	}
	return out;
}

START_TEST(workload_by_name)
{
	char *dir = th_tmpdir(), spec[512], *out, *err;
	snprintf(spec, sizeof spec, "configs: [lab_4x4]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s1 = th_write(dir, "p.yaml", spec), *o1 = at(dir, "p"), *c1 = at(o1, "sweep.csv");
	snprintf(spec, sizeof spec, "configs: [lab_4x4]\nworkloads: [mlp]\n%s", two);
	char *s2 = th_write(dir, "n.yaml", spec), *o2 = at(dir, "n"), *c2 = at(o2, "sweep.csv");
	ck_assert_int_eq(th_sweep(".", &out, &err, s1, "-o", o1, NULL), 0);
	free(out), free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, s2, "-o", o2, NULL), 0);
	free(out), free(err);
	char *csv = th_slurp(c1), *by_path = named_rows(csv), *by_name = th_slurp(c2);
	free(csv);
	ck_assert_ptr_nonnull(strstr(by_path, "\nmlp,analytic,os,"));
	ck_assert_str_eq(by_name, by_path);
	free(by_name);
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o2, NULL), 0);
	free(out), free(err);
	by_name = th_slurp(c2);
	ck_assert_str_eq(by_name, by_path);
	free(by_name), free(by_path), free(c1), free(c2), free(o1), free(o2), free(s1), free(s2);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A point file is the sweep's own: a symbolic link or a FIFO found in its
 * place is no record, so the point runs again and its record replaces what
 * was there -- the link's target (a file outside DIR) is never written, and
 * a FIFO without a reader does not hold the sweep.
 */
START_TEST(point_file_not_a_file_replaced)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, stem[17], name[40];
	snprintf(spec, sizeof spec, "configs: [lab_4x4]\nworkloads: [mlp]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "m"), *victim = th_write(dir, "victim", "precious\n");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	free(out), free(err);
	first_stem(o, stem);
	snprintf(name, sizeof name, "points/%s.json", stem);
	char *pf = at(o, name), *good = th_slurp(pf);
	for (int fifo = 0; fifo < 2; fifo++) {
		struct stat st;
		ck_assert_int_eq(unlink(pf), 0);
		ck_assert_int_eq(fifo ? mkfifo(pf, 0644) : symlink(victim, pf), 0);
		ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
		ck_assert_ptr_nonnull(strstr(out, "sweep: 2 points, 1 already done\n"));
		free(out), free(err);
		ck_assert_int_eq(lstat(pf, &st), 0);
		ck_assert(S_ISREG(st.st_mode));
		char *again = th_slurp(pf), *kept = th_slurp(victim);
		ck_assert_str_eq(again, good);
		ck_assert_str_eq(kept, "precious\n");
		free(again), free(kept);
	}
	free(good), free(pf), free(victim), free(o), free(s);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Every relative path of a spec (configs, workloads) is from the working
 * directory, on every route: files of the same names beside the spec, none
 * of them valid, are never read, and a preset's name means the preset unless
 * the working directory holds a file of that name.
 */
START_TEST(spec_paths_from_working_directory)
{
	char *w = th_tmpdir(), *specs = at(w, "specs"), spec[1024], *out, *err, want[4400], cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(mkdir(specs, 0755), 0);
	char *mlp = th_slurp("configs/workloads/mlp.yaml");
	free(th_write(w, "w.yaml", mlp));
	free(th_write(w, "over.yaml", "array:\n  rows: 8\n"));
	free(th_write(specs, "w.yaml", "layers: [\n"));
	free(th_write(specs, "over.yaml", "array: [\n"));
	free(th_write(specs, "lab_4x4", "array: [\n"));
	snprintf(spec, sizeof spec, "configs: [lab_4x4, over.yaml]\nworkloads: [w.yaml]\n%s", two);
	char *s = th_write(specs, "s.yaml", spec);
	ck_assert_int_eq(th_sweep(w, &out, &err, "specs/s.yaml", "-o", "out", NULL), 0);
	free(out), free(err);
	/* The same points, named by absolute paths from elsewhere: the same point files. */
	snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml, %s/over.yaml]\nworkloads: [%s/w.yaml]\n%s", cwd, w,
		 w, two);
	char *abs = th_write(w, "abs.yaml", spec), *o = at(w, "out"), *o2 = at(w, "out2");
	ck_assert_int_eq(th_sweep("/", &out, &err, abs, "-o", o2, NULL), 0);
	free(out), free(err);
	char *p1 = points_of(o), *p2 = points_of(o2);
	ck_assert_str_eq(p1, p2);
	ck_assert_int_eq((int)strlen(p1), 2 * 22);
	/* The merge, from the spec's directory (the decoys are there): the recorded working directory's files. */
	ck_assert_int_eq(th_sweep(specs, &out, &err, "--merge", o, NULL), 0);
	snprintf(want, sizeof want, "wrote %s/sweep.csv: 2 points, 2 ok, 0 failed, 0 missing\n", o);
	ck_assert_str_eq(out, want);
	free(out), free(err);
	/* A file named as the preset in the working directory comes first, as with -c. */
	free(th_write(w, "lab_4x4", "array: [\n"));
	ck_assert_int_eq(th_sweep(specs, &out, &err, "--merge", o, NULL), 2);
	ck_assert_msg(!strncmp(err, w, strlen(w)) && strstr(err, "/lab_4x4:"), "%s", err);
	free(out), free(err);
	free(p1), free(p2), free(abs), free(o), free(o2), free(s), free(mlp), free(specs);
	th_rmdir(w);
	free(w);
}
END_TEST

START_TEST(other_spec_refused)
{
	char *dir = th_tmpdir(), spec[9000], *out, *err, want[9000], cwd[4096];
	/* Absolute paths: the spec loads from any directory. */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml]\nworkloads: [%s/configs/workloads/mlp.yaml]\n%s",
		 cwd, cwd, two);
	char *a = th_write(dir, "a.yaml", spec), *o = at(dir, "out"), *csv_path = at(o, "sweep.csv");
	char *rec_path = at(o, "sweep.yaml");
	ck_assert_int_eq(th_sweep(".", &out, &err, a, "-o", o, NULL), 0);
	free(out), free(err);
	char *csv = th_slurp(csv_path);
	/* One more value: another spec. Each route refuses it and changes nothing. */
	snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml]\nworkloads: [%s/configs/workloads/mlp.yaml]\n"
		 "axes:\n  model: [analytic]\n  dataflow: [ws, os, is]\n", cwd, cwd);
	char *b = th_write(dir, "b.yaml", spec);
	snprintf(want, sizeof want, "-o: expected a new directory or one holding this spec's sweep, found \"%s/sweep.yaml\", "
		 "the record of another spec than \"%s\" (use another -o, or remove that sweep)\n", o, b);
	static const char *const more[][3] = { { NULL }, { "--points", "0-1" }, { "--emit", "parallel" },
					       { "--emit", "slurm" } };
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(th_sweep(".", &out, &err, b, "-o", o, more[k][0], more[k][1], NULL), 2);
		ck_assert_str_eq(err, want);
		free(out), free(err);
		char *now = th_slurp(csv_path), *rec = th_slurp(rec_path), *was = th_slurp(a);
		ck_assert_str_eq(now, csv);
		ck_assert_str_eq(rec, was);
		free(now), free(rec), free(was);
	}
	/* The same spec from another working directory: its relative paths are other files. */
	ck_assert_int_eq(th_sweep("/", &out, &err, a, "-o", o, NULL), 2);
	snprintf(want, sizeof want, "-o: expected a new directory or one holding this spec's sweep, found \"%s/sweep.yaml\", "
		 "the record of \"%s\" run from another working directory (use another -o, or remove that sweep)\n", o, a);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	/* The same spec from the same place resumes. */
	ck_assert_int_eq(th_sweep(".", &out, &err, a, "-o", o, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "sweep: 2 points, 2 already done\n"));
	free(out), free(err);
	free(csv), free(a), free(b), free(o), free(csv_path), free(rec_path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * DIR/sweep.lock: a whole sweep (or an emit) holds it alone, --points jobs
 * and merges share it. Held here as either, each route is refused or runs.
 */
START_TEST(directory_in_use)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, want[9000], mwant[9000];
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "out"), *lock = at(o, "sweep.lock");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, "--emit", "parallel", NULL), 0);
	free(out), free(err);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	snprintf(want, sizeof want, "-o: expected a directory no other tpusim sweep is using, found \"%s\" in use (%s is "
		 "locked: wait for that sweep, or use another -o)\n", o, lock);
	snprintf(mwant, sizeof mwant, "--merge: expected a directory no other tpusim sweep is using, found \"%s\" in use "
		 "(%s is locked: wait for that sweep, or use another -o)\n", o, lock);
	/* A whole sweep running: nothing else. */
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	static const char *const routes[][3] = { { NULL }, { "--points", "0-1" }, { "--emit", "slurm" } };
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, routes[k][0], routes[k][1], NULL), 2);
		ck_assert_str_eq(err, want);
		free(out), free(err);
	}
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", o, NULL), 2);
	ck_assert_str_eq(err, mwant);
	free(out), free(err);
	char *names = points_of(o);
	ck_assert_str_eq(names, "");
	free(names);
	/* --points jobs running: more jobs and merges, not a whole sweep or an emit. */
	ck_assert_int_eq(flock(fd, LOCK_SH | LOCK_NB), 0);
	for (int k = 0; k < 3; k += 2) {
		ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, routes[k][0], routes[k][1], NULL), 2);
		ck_assert_str_eq(err, want);
		free(out), free(err);
	}
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, "--points", "0-1", NULL), 0);
	free(out), free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, "--merge", o, NULL), 0);
	free(out), free(err);
	close(fd);
	/* Free again: the whole sweep runs, finding both points done. */
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "sweep: 2 points, 2 already done\n"));
	free(out), free(err);
	free(s), free(o), free(lock);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A failed point: exit status 1 on every route, and the last lines count it. */
START_TEST(failed_point_exit_status)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, want[9000];
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\naxes:\n"
		 "  sim.max_folds: [1, 1000000]\n");
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "out");
	char fails[9000], jfails[9000];
	snprintf(fails, sizeof fails, "sweep: expected every point to succeed, found 1 of 2 failed (its error is in "
		 "%s/sweep.csv's status column and in its .err file in %s/points: delete that to run it again)\n", o, o);
	snprintf(jfails, sizeof jfails, "sweep: expected every point to succeed, found 1 of 2 failed (its error is in "
		 "its .err file in %s/points: delete that to run it again)\n", o);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 1);
		snprintf(want, sizeof want, "\nwrote %s/sweep.csv: 2 points, 1 ok, 1 failed\n", o);
		ck_assert_msg(strlen(out) > strlen(want) && !strcmp(out + strlen(out) - strlen(want), want), "%s", out);
		ck_assert_str_eq(err, fails);
		free(out), free(err);
	}
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, "--points", "0-1", NULL), 1);
	snprintf(want, sizeof want, "\nran points 0-1 of 2 into %s/points, 1 failed; tpusim sweep --merge %s builds "
		 "sweep.csv\n", o, o);
	ck_assert_msg(strlen(out) > strlen(want) && !strcmp(out + strlen(out) - strlen(want), want), "%s", out);
	ck_assert_str_eq(err, jfails);
	free(out), free(err);
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 1);
	snprintf(want, sizeof want, "wrote %s/sweep.csv: 2 points, 1 ok, 1 failed, 0 missing\n", o);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(err, fails);
	free(out), free(err);
	/* --plot still draws what is ok; the line about the failures comes last. */
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\naxes:\n"
		 "  sim.max_folds: [1, 1000000]\n  dataflow: [ws, os]\n");
	char *s4 = th_write(dir, "s4.yaml", spec), *o4 = at(dir, "out4"), *chart = at(o4, "plots/cycles_vs_dataflow.svg");
	ck_assert_int_eq(th_sweep(".", &out, &err, s4, "-o", o4, "--plot", NULL), 1);
	snprintf(want, sizeof want, "sweep: expected every point to succeed, found 2 of 4 failed (their errors are in "
		 "%s/sweep.csv's status column and in their .err files in %s/points: delete those to run them again)\n",
		 o4, o4);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(access(chart, F_OK), 0);
	free(out), free(err), free(s4), free(o4), free(chart);
	free(s), free(o);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A failed point's .err is its message and one line break, whatever the
 * error held before it was written: points that fail on a tiling check one
 * after another in one worker (here, eight 256x256 arrays sharing 1 MiB of
 * weights: 128 KiB each, two 128 KiB tiles needed) once left the bytes of an
 * earlier, longer message after the line break, so the sweep refused its own
 * record and wrote no sweep.csv. Under os the accumulators are what is short.
 */
START_TEST(error_record_one_line)
{
	char *dir = th_tmpdir(), *out, *err;
	char *s = th_write(dir, "s.yaml", "configs: [tpu_v4_mxu]\nworkloads: [resnet50]\naxes:\n  array.rows: [256]\n"
			   "  array.cols: [256]\n  chip.arrays_per_core: [8]\n  sram.inputs.kib: [3072, 12288]\n"
			   "  sram.weights.kib: [1024, 4096]\n  hbm.gbps: [300, 600]\n  dataflow: [ws, os]\n"
			   "  model: [analytic]\nzip: [[sram.inputs.kib, sram.weights.kib]]\n");
	char *o = at(dir, "out"), *csv_path = at(o, "sweep.csv");
	/*
	 * The binary, from dir: the error of a ws point (at s.yaml) is then shorter
	 * than the os point's before it (at the preset's full path).
	 */
	const char *argv[] = { "sweep", "s.yaml", "-o", "out", "-j", "1", NULL };
	ck_assert_int_eq(th_run(th_tpusim(), dir, argv, &out, &err), 1);
	ck_assert_msg(strstr(out, "8 points, 2 ok, 6 failed"), "%s%s", out, err);
	free(out), free(err);
	char *names = points_of(o), *p = names;
	int nerr = 0;
	for (char *name; (name = strsep(&p, " "));) {
		if (!strstr(name, ".err"))
			continue;
		char file[600], *text;
		snprintf(file, sizeof file, "points/%s", name);
		char *path = at(o, file);
		text = th_slurp(path);
		size_t n = strlen(text);
		ck_assert_msg(n > 1 && text[n - 1] == '\n' && strchr(text, '\n') == text + n - 1, "%s: %s", path, text);
		ck_assert_msg(strstr(text, "sram.weights.kib: expected at least 262144 bytes for two streaming tiles") ||
			      strstr(text, "sram.outputs.kib: expected at least 524288 bytes for two tiles"), "%s", text);
		nerr++;
		free(text), free(path);
	}
	ck_assert_int_eq(nerr, 6);
	ck_assert_int_eq(access(csv_path, F_OK), 0);
	free(names), free(s), free(o), free(csv_path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * With something else in place of the point record pf (its good bytes), --merge of o
 * says want at the place and exits 2; the sweep s into o then counts the
 * point as not done and runs it again, to the same bytes.
 */
static void refused_then_rerun(const char *s, const char *o, const char *pf, const char *want, const char *good)
{
	char *out, *err;
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "sweep: 2 points, 1 already done\n"));
	free(out), free(err);
	char *again = th_slurp(pf);
	ck_assert_str_eq(again, good);
	free(again);
}

/*
 * A point file that is not a point's record: cycles that are not a count,
 * a total that is not finite, one without a column's number (an older
 * tpusim's), a FIFO, an .err of two lines. Not done: a
 * resumed sweep runs the point again (the same bytes as the first time);
 * --merge names the file and the place.
 */
START_TEST(point_records_checked)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, want[9000], stem[17];
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "out");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	free(out), free(err);
	first_stem(o, stem);
	char name[40], *pts = at(o, "points");
	snprintf(name, sizeof name, "%s.json", stem);
	char *pf = at(pts, name), *good = th_slurp(pf);
	const char *tot = strstr(good, "\"total\": {");
	ck_assert_ptr_nonnull(tot);
	const char *cyc = strstr(tot, "\"cycles\": ");
	ck_assert_ptr_nonnull(cyc);
	size_t voff = (size_t)(cyc - good) + strlen("\"cycles\": "), vlen = strspn(good + voff, "0123456789");
	ck_assert_uint_gt(vlen, 0);
	static const struct {
		const char *value, *msg;
	} bad[] = {
		{ "true", "total.cycles: expected a count (a whole number of at least 0), found \"true\"" },
		{ "-12345", "total.cycles: expected a count (a whole number of at least 0), found \"-12345\"" },
		{ "1.5", "total.cycles: expected a count (a whole number of at least 0), found \"1.5\"" },
		{ "\"12\"", "total.cycles: expected a count (a whole number of at least 0), found \"12\"" },
	};
	long line, col;
	line_col(good, voff, &line, &col);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		char *t = malloc(strlen(good) + 20);
		snprintf(t, strlen(good) + 20, "%.*s%s%s", (int)voff, good, bad[k].value, good + voff + vlen);
		snprintf(want, sizeof want, "%s:%ld:%ld: %s\n", pf, line, col, bad[k].msg);
		free(th_write(pts, name, t));
		refused_then_rerun(s, o, pf, want, good);
		free(t);
	}
	/* A metric past double's range: not finite. */
	const char *util = strstr(tot, "\"utilization\": ");
	ck_assert_ptr_nonnull(util);
	size_t uoff = (size_t)(util - good) + strlen("\"utilization\": "), ulen = strspn(good + uoff, "0123456789.e-");
	char *t = malloc(strlen(good) + 20);
	snprintf(t, strlen(good) + 20, "%.*s1e999%s", (int)uoff, good, good + uoff + ulen);
	free(th_write(pts, name, t));
	free(t);
	line_col(good, uoff, &line, &col);
	ck_assert_int_eq(th_sweep("/", &out, &err, "--merge", o, NULL), 2);
	snprintf(want, sizeof want, "%s:%ld:%ld: total.utilization: expected a finite number of at least 0, found "
		 "\"1e999\"\n", pf, line, col);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	/*
	 * Records of a tpusim before a column: area_mm2 missing at the top level
	 * (the place is the record's opening brace), power_w in the total (its
	 * brace). Not done: run again, the same bytes.
	 */
	static const struct {
		const char *line, *msg;
		bool top;
	} older[] = {
		{ "\n  \"area_mm2\": ", "area_mm2: expected a number, found none (as in a record of an older tpusim)", true },
		{ "\n    \"power_w\": ", "total.power_w: expected a number, found none (as in a record of an older tpusim)",
		  false },
	};
	for (size_t k = 0; k < 2; k++) {
		const char *at_line = strstr(older[k].top ? good : tot, older[k].line);
		ck_assert_ptr_nonnull(at_line);
		size_t cut = (size_t)(at_line - good), end = cut + 1 + strcspn(at_line + 1, "\n");
		char *t2 = malloc(strlen(good) + 1);
		snprintf(t2, strlen(good) + 1, "%.*s%s", (int)cut, good, good + end);
		line_col(good, older[k].top ? 0 : (size_t)(strchr(tot, '{') - good), &line, &col);
		snprintf(want, sizeof want, "%s:%ld:%ld: %s\n", pf, line, col, older[k].msg);
		free(th_write(pts, name, t2));
		refused_then_rerun(s, o, pf, want, good);
		free(t2);
	}
	/* A FIFO: not opened to wait for a writer, not a record. */
	ck_assert_int_eq(unlink(pf), 0);
	ck_assert_int_eq(mkfifo(pf, 0644), 0);
	snprintf(want, sizeof want, "%s: expected a point's record, a regular file, found a FIFO or another special file\n",
		 pf);
	refused_then_rerun(s, o, pf, want, good);
	/* An .err of two lines beside no .json. */
	ck_assert_int_eq(unlink(pf), 0);
	snprintf(name, sizeof name, "%s.err", stem);
	char *ef = at(pts, name);
	free(th_write(pts, name, "one\ntwo\n"));
	snprintf(want, sizeof want, "%s:2:1: expected one line, the point's error, found more\n", ef);
	refused_then_rerun(s, o, pf, want, good);
	free(ef), free(pf), free(good), free(pts), free(s), free(o);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A workload that never ends and a worker's write that fails: bounded, and the failed write named with its cause. */
START_TEST(inputs_bounded_writes_named)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, want[9000], stem[17];
	char *z = th_write(dir, "z.yaml", "configs: [configs/lab_4x4.yaml]\nworkloads: [/dev/zero]\n");
	ck_assert_int_eq(th_sweep(".", &out, &err, z, "-o", "/nonexistent/never", NULL), 2);
	snprintf(want, sizeof want, "%s:2:13: workloads[0]: expected a readable file, found \"/dev/zero\" (File too large)\n",
		 z);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o = at(dir, "out");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 0);
	free(out), free(err);
	/* A directory where point 0's file goes: its rename fails, EISDIR, even for root. */
	first_stem(o, stem);
	char name[40], *pts = at(o, "points");
	snprintf(name, sizeof name, "%s.json", stem);
	char *pf = at(pts, name);
	ck_assert_int_eq(unlink(pf), 0);
	ck_assert_int_eq(mkdir(pf, 0755), 0);
	char *inner = at(pf, "x");
	free(th_write(pf, "x", "x"));
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 1);
	snprintf(want, sizeof want, "-o: expected to write \"%s\", found %s\n", pf, strerror(EISDIR));
	ck_assert_str_eq(err, want);
	free(out), free(err);
	free(inner), free(pf), free(pts), free(s), free(o), free(z);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * jobs.txt is read a line a job and each line run by a shell: every path is
 * quoted, and one that a line break would split is refused before anything
 * is written. A path that spells a command is only a name.
 */
START_TEST(emit_lines_cannot_split)
{
	char *dir = th_tmpdir(), spec[9000], *out, *err, want[9000], exe[4096], cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml]\nworkloads: [%s/configs/workloads/mlp.yaml]\n%s",
		 cwd, cwd, two);
	char *s = th_write(dir, "s.yaml", spec), *nl = at(dir, "x\n$(touch PWNED)\ny");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", nl, "--emit", "parallel", NULL), 2);
	snprintf(want, sizeof want, "-o: expected a directory whose absolute path fits on a line of jobs.txt (no line "
		 "break or other control character), found \"%s/x\\x0a$(touch PWNED)\\x0ay\"\n", dir);
	ck_assert_str_eq(err, want);
	ck_assert_str_eq(out, "");
	free(out), free(err);
	ck_assert_int_ne(access(nl, F_OK), 0);
	/* The working directory, the same. */
	char *wd = at(dir, "w\nd"), *o = at(dir, "out");
	ck_assert_int_eq(mkdir(wd, 0755), 0);
	ck_assert_int_eq(th_sweep(wd, &out, &err, s, "-o", o, "--emit", "parallel", NULL), 2);
	snprintf(want, sizeof want, "sweep: expected a working directory whose path fits on a line of jobs.txt (no line "
		 "break or other control character), found \"%s/w\\x0ad\"\n", dir);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	ck_assert_int_ne(access(o, F_OK), 0);
	/* A directory named as a command: one quoted line per job, run by sh as GNU parallel would, runs no command. */
	char *cmd = at(dir, "$(touch PWNED)");
	ck_assert_ptr_nonnull(realpath(th_tpusim(), exe));
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", cmd, "--emit", "parallel", NULL), 0);
	free(out), free(err);
	char *jobs_path = at(cmd, "jobs.txt"), *jobs = th_slurp(jobs_path);
	snprintf(want, sizeof want, "cd '%s' && '%s' sweep '%s/sweep.yaml' -o '%s' --points 0-1\n", cwd, exe, cmd, cmd);
	ck_assert_str_eq(jobs, want);
	jobs[strlen(jobs) - 1] = 0;
	const char *argv[] = { "-c", jobs, NULL };
	ck_assert_int_eq(th_run("/bin/sh", dir, argv, &out, &err), 0);
	free(out), free(err);
	char *pw = at(dir, "PWNED"), *pw2 = at(cwd, "PWNED");
	ck_assert_int_ne(access(pw, F_OK), 0);
	ck_assert_int_ne(access(pw2, F_OK), 0);
	char *names = points_of(cmd);
	ck_assert_int_eq((int)strlen(names), 2 * 22);
	free(names), free(pw), free(pw2), free(jobs), free(jobs_path), free(cmd), free(wd), free(o), free(nl), free(s);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* dataflow (the run option) replaces the config's array.dataflow: both as axes, the second would do nothing. */
START_TEST(dataflow_axis_once)
{
	char *dir = th_tmpdir(), *out, *err, want[9000];
	static const char *const specs[] = {
		"configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\naxes:\n"
		"  dataflow: [ws, os]\n  array.dataflow: [ws, is]\n",
		"configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\naxes:\n"
		"  array.dataflow: [ws, is]\n  model: [analytic]\n  dataflow: [ws, os]\n",
	};
	static const int line[] = { 5, 4 };
	for (int k = 0; k < 2; k++) {
		char *s = th_write(dir, "s.yaml", specs[k]), *o = at(dir, "out");
		ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o, NULL), 2);
		snprintf(want, sizeof want, "%s:%d:3: axes.array.dataflow: expected dataflow or array.dataflow as an axis, "
			 "found both (the axis dataflow replaces array.dataflow, so this one would change nothing; did you "
			 "mean dataflow alone?)\n", s, line[k]);
		ck_assert_str_eq(err, want);
		free(out), free(err);
		ck_assert_int_ne(access(o, F_OK), 0);
		free(s), free(o);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Files the user made in -o DIR: a sweep.csv in a directory with no sweep
 * record is refused before anything is written, and kept; a sweep refused
 * (points a file) leaves no sweep.lock behind.
 */
START_TEST(user_files_kept)
{
	char *dir = th_tmpdir(), spec[512], *out, *err, *text, want[9000];
	snprintf(spec, sizeof spec, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n%s", two);
	char *s = th_write(dir, "s.yaml", spec), *o3 = at(dir, "own3"), *o4 = at(dir, "own4");
	ck_assert_int_eq(mkdir(o3, 0755), 0);
	char *csv = th_write(o3, "sweep.csv", "my,own,table\n");
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o3, NULL), 2);
	snprintf(want, sizeof want, "-o: expected no file of another at \"%s\" (a sweep writes its table there), found one "
		 "in a directory with no sweep record\n", csv);
	ck_assert_str_eq(err, want);
	free(out), free(err);
	text = th_listing(o3, true, ' ');
	ck_assert_str_eq(text, "sweep.csv ");
	free(text);
	text = th_slurp(csv);
	ck_assert_str_eq(text, "my,own,table\n");
	free(text);
	ck_assert_int_eq(mkdir(o4, 0755), 0);
	free(th_write(o4, "points", "mine\n"));
	ck_assert_int_eq(th_sweep(".", &out, &err, s, "-o", o4, NULL), 2);
	free(out), free(err);
	text = th_listing(o4, true, ' ');
	ck_assert_str_eq(text, "points ");
	free(text);
	free(s), free(o3), free(o4), free(csv);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Adds these cases to the sweep suite's case (test_sweep.c). */
void sweep_guard_tests(TCase *t);

void sweep_guard_tests(TCase *t)
{
	tcase_add_test(t, merge_preset_config);
	tcase_add_test(t, workload_by_name);
	tcase_add_test(t, point_file_not_a_file_replaced);
	tcase_add_test(t, spec_paths_from_working_directory);
	tcase_add_test(t, other_spec_refused);
	tcase_add_test(t, directory_in_use);
	tcase_add_test(t, failed_point_exit_status);
	tcase_add_test(t, error_record_one_line);
	tcase_add_test(t, point_records_checked);
	tcase_add_test(t, inputs_bounded_writes_named);
	tcase_add_test(t, emit_lines_cannot_split);
	tcase_add_test(t, dataflow_axis_once);
	tcase_add_test(t, user_files_kept);
}
