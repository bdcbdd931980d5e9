/*
 * test_output.c - `tpusim run -o DIR` under kills and concurrent runs: at
 * every instant DIR/layers.csv and DIR/summary.json are both missing, one
 * alone, or a pair from one run; leftovers of killed runs go at the next run.
 *
 * A pair is from one run when the total cycles of summary.json equal the sum
 * of the cycles column of layers.csv, and both equal the total of one of the
 * settings the runs used, taken from a separate complete run of each.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "ydoc.h"

/* Settings that give different totals: the lab array with less or more HBM bandwidth. */
static const char *const settings[4] = { "hbm.gbps=1", "hbm.gbps=2", "hbm.gbps=4", "hbm.gbps=8" };

/* Starts tpusim run with setting into out (from the repository root); pause names a commit step or is NULL. */
static pid_t spawn(const char *setting, const char *out, const char *pause)
{
	const char *bin = th_tpusim();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (pause)
			setenv("TPUSIM_TEST_PAUSE_COMMIT", pause, 1);
		else
			unsetenv("TPUSIM_TEST_PAUSE_COMMIT");
		execl(bin, bin, "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--set", setting,
		      "-o", out, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int finish(pid_t pid)
{
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "tpusim ended by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* The whole file, or NULL when there is none (a missing or dangling name). */
static char *try_slurp(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return NULL;
	return th_slurp(path);
}

/* The total cycles in summary.json's text. */
static long long json_total(const char *json)
{
	struct ydoc *d = th_json("summary.json", json);
	long long cycles = th_json_int(d->root, "total.cycles");
	ydoc_free(d);
	return cycles;
}

/* The sum of the cycles column of layers.csv's text. */
static long long csv_total(const char *csv)
{
	struct th_csv *c = th_csv("layers.csv", csv);
	long long sum = 0;
	ck_assert_uint_gt(c->rows, 0);
	for (size_t r = 0; r < c->rows; r++)
		sum += th_csv_int(c, r, "cycles");
	th_csv_free(c);
	return sum;
}

/* The total of a complete run with setting (into a directory of its own). */
static long long expected_total(const char *setting)
{
	char *dir = th_tmpdir(), path[PATH_MAX], *text;
	long long t;
	snprintf(path, sizeof path, "%s/o", dir);
	ck_assert_int_eq(finish(spawn(setting, path, NULL)), 0);
	snprintf(path, sizeof path, "%s/o/summary.json", dir);
	text = th_slurp(path);
	t = json_total(text);
	free(text);
	th_rmdir(dir);
	free(dir);
	return t;
}

enum shown { SHOWN_NONE, SHOWN_LAYERS, SHOWN_SUMMARY, SHOWN_PAIR };

/*
 * Checks that out shows nothing, one file or a pair from one run; returns
 * which, and in *total the cycles shown (of the pair or the one file).
 */
static enum shown check_dir(const char *out, const long long *want, int nwant, long long *total)
{
	char path[PATH_MAX], *csv, *json;
	enum shown s;
	snprintf(path, sizeof path, "%s/layers.csv", out);
	csv = try_slurp(path);
	snprintf(path, sizeof path, "%s/summary.json", out);
	json = try_slurp(path);
	*total = csv ? csv_total(csv) : json ? json_total(json) : -1;
	if (csv && json)
		ck_assert_msg(json_total(json) == *total, "%s: summary.json total %lld, layers.csv total %lld", out,
			      json_total(json), *total);
	if (csv || json) {
		bool known = false;
		for (int i = 0; i < nwant; i++)
			known |= *total == want[i];
		ck_assert_msg(known, "%s: total %lld is no run's", out, *total);
	}
	s = csv && json ? SHOWN_PAIR : csv ? SHOWN_LAYERS : json ? SHOWN_SUMMARY : SHOWN_NONE;
	free(csv);
	free(json);
	return s;
}

/* Checks that out/.tpusim holds exactly one gen directory, current's, with the pair and nothing else. */
static void check_clean(const char *out)
{
	char path[PATH_MAX], cur[256];
	int gens = 0, files = 0;
	struct dirent *de;
	DIR *d;
	ssize_t n;

	snprintf(path, sizeof path, "%s/.tpusim/current", out);
	n = readlink(path, cur, sizeof cur - 1);
	ck_assert_int_gt(n, 0);
	cur[n] = '\0';
	snprintf(path, sizeof path, "%s/.tpusim", out);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, "current"))
			continue;
		ck_assert_msg(!strcmp(de->d_name, cur), "%s: %s left beside %s", path, de->d_name, cur);
		gens++;
	}
	closedir(d);
	ck_assert_int_eq(gens, 1);
	snprintf(path, sizeof path, "%s/.tpusim/%s", out, cur);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ck_assert_msg(!strcmp(de->d_name, "layers.csv") || !strcmp(de->d_name, "summary.json"),
			      "%s: a temporary %s is left", path, de->d_name);
		files++;
	}
	closedir(d);
	ck_assert_int_eq(files, 2);
	/* And DIR itself holds nothing but the two links and .tpusim. */
	ck_assert_ptr_nonnull(d = opendir(out));
	files = 0;
	while ((de = readdir(d)))
		files++;
	closedir(d);
	ck_assert_int_eq(files, 5);
}

/* A complete run of settings[0] into out: its pair is shown, and nothing else is left in out/.tpusim. */
static void complete_run(const char *out, const long long want[2])
{
	long long total;
	ck_assert_int_eq(finish(spawn(settings[0], out, NULL)), 0);
	ck_assert_int_eq(check_dir(out, want, 2, &total), SHOWN_PAIR);
	ck_assert_int_eq(total, want[0]);
	check_clean(out);
}

/* Runs setting into out up to the commit step, where it stops itself; then kills it. */
static void kill_at(const char *setting, const char *out, const char *step)
{
	int status;
	pid_t pid = spawn(setting, out, step);
	ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
	ck_assert_msg(WIFSTOPPED(status), "tpusim did not reach step %s (status %#x)", step, status);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
}

/*
 * Removes the links of out (or only summary.json's), as a run killed in its
 * first commit leaves DIR. (Regular files there are not tpusim's: refused,
 * see paths_refused_before_run.)
 */
static void make_missing(const char *out, bool summary_only)
{
	for (int i = summary_only; i < 2; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", out, i ? "summary.json" : "layers.csv");
		ck_assert_int_eq(unlink(path), 0);
	}
}

/*
 * Killed at each step of the commit, into a DIR that holds the links of an
 * earlier run or misses them (both, or summary.json): what DIR shows.
 */
START_TEST(kill_between_steps)
{
	static const struct {
		const char *step;
		int files;           /* DIR holds links (0), no links (1), a layers.csv link alone (2) */
		enum shown shown;
		int run;             /* whose cycles are shown: 0 the earlier run, 1 the killed one (not for SHOWN_NONE) */
	} steps[] = {
		{ "written", 0, SHOWN_PAIR, 0 },
		{ "committed", 0, SHOWN_PAIR, 1 },
		{ "cleanup", 0, SHOWN_PAIR, 1 },
		{ "written", 1, SHOWN_NONE, 0 },
		{ "unlinked", 1, SHOWN_NONE, 0 },
		/* the new link still shows the earlier run's current */
		{ "linked", 1, SHOWN_LAYERS, 0 },
		{ "committed", 1, SHOWN_PAIR, 1 },
		{ "cleanup", 1, SHOWN_PAIR, 1 },
		/* summary.json missing beside a good layers.csv link: its link is made before the commit */
		{ "written", 2, SHOWN_LAYERS, 0 },
		{ "committed", 2, SHOWN_PAIR, 1 },
	};
	long long want[2] = { expected_total(settings[0]), expected_total(settings[1]) }, total;
	char *dir = th_tmpdir(), out[PATH_MAX];

	ck_assert_int_ne(want[0], want[1]);
	snprintf(out, sizeof out, "%s/o", dir);
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		enum shown got;
		ck_assert_int_eq(finish(spawn(settings[0], out, NULL)), 0);
		if (steps[i].files)
			make_missing(out, steps[i].files == 2);
		kill_at(settings[1], out, steps[i].step);
		got = check_dir(out, want, 2, &total);
		ck_assert_msg(got == steps[i].shown, "step %s (%s): DIR shows %d, expected %d", steps[i].step,
			      steps[i].files ? "missing links" : "links", got, steps[i].shown);
		ck_assert_msg(got == SHOWN_NONE || total == want[steps[i].run], "step %s: total %lld, expected %lld", steps[i].step, total,
			      want[steps[i].run]);
		/* The next complete run puts everything right and removes the killed run's leftovers. */
		complete_run(out, want);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Runs of two settings killed after random delays (some before, some during, some after the commit). */
START_TEST(kill_at_random)
{
	long long want[2] = { expected_total(settings[0]), expected_total(settings[1]) }, total;
	char *dir = th_tmpdir(), out[PATH_MAX];
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	int shown[4] = { 0 };

	snprintf(out, sizeof out, "%s/o", dir);
	for (int i = 0; i < 40; i++) {
		struct timespec t = { 0, (long)th_rnd(&seed, 0, 40000) * 1000 };
		int status;
		pid_t pid = spawn(settings[i % 2], out, NULL);
		nanosleep(&t, NULL);
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		shown[check_dir(out, want, 2, &total)]++;
	}
	/* A single file is never shown: DIR never held an older tpusim's files. */
	ck_assert_int_eq(shown[SHOWN_LAYERS] + shown[SHOWN_SUMMARY], 0);
	complete_run(out, want);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Runs of four settings at once into one new DIR (and a new parent): all succeed, one run's pair is left. */
START_TEST(concurrent_runs)
{
	long long want[4], total;
	char *dir = th_tmpdir(), out[PATH_MAX];

	for (int i = 0; i < 4; i++)
		want[i] = expected_total(settings[i]);
	for (int round = 0; round < 6; round++) {
		pid_t pid[4];
		snprintf(out, sizeof out, "%s/r%d/o", dir, round);
		for (int i = 0; i < 4; i++)
			pid[i] = spawn(settings[(i + round) % 4], out, NULL);
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(finish(pid[i]), 0);
		ck_assert_int_eq(check_dir(out, want, 4, &total), SHOWN_PAIR);
		check_clean(out);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A run killed with its full-size pair written leaves a gen directory; the next run into DIR removes it. */
START_TEST(next_run_cleans_up)
{
	long long want[2] = { expected_total(settings[0]), expected_total(settings[1]) }, total;
	char *dir = th_tmpdir(), out[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	int gens = 0;
	DIR *d;

	snprintf(out, sizeof out, "%s/o", dir);
	kill_at(settings[1], out, "written");
	ck_assert_int_eq(check_dir(out, want, 2, &total), SHOWN_NONE);
	snprintf(path, sizeof path, "%s/.tpusim", out);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d)))
		gens += !strncmp(de->d_name, "gen-", 4);
	closedir(d);
	ck_assert_int_eq(gens, 1);
	complete_run(out, want);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A report that cannot be committed changes nothing in DIR; bad -o values are bad input. */
START_TEST(uncommitted_changes_nothing)
{
	char *dir = th_tmpdir(), path[PATH_MAX], *out, *err, *a, *b;
	const char *argv[] = { "run", "-c", "c.yaml", "-w", "w.yaml", "-o", "o", NULL };
	const char *empty[] = { "run", "-c", "c.yaml", "-w", "w.yaml", "-o", "", NULL };
	const char *file[] = { "run", "-c", "c.yaml", "-w", "w.yaml", "-o", "c.yaml", NULL };

	free(th_write(dir, "c.yaml", "array:\n  rows: 4\n  cols: 4\n"));
	free(th_write(dir, "w.yaml", "name: t\nlayers:\n  - {name: f, type: fc, in_features: 8, out_features: 8}\n"));
	snprintf(path, sizeof path, "%s/o", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(th_write(path, "layers.csv", "old csv\n"));
	free(th_write(path, "summary.json", "old json\n"));
	free(th_write(path, ".tpusim", "not a directory\n"));
	/* Regular files of the user's: refused before the run, kept. */
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(err, "-o: expected no file of another at \"o/layers.csv\" (tpusim keeps its link into o/.tpusim "
			 "there), found a regular file\n");
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	a = th_slurp(strcat(path, "/layers.csv"));
	ck_assert_str_eq(a, "old csv\n");
	snprintf(path, sizeof path, "%s/o/summary.json", dir);
	b = th_slurp(path);
	ck_assert_str_eq(b, "old json\n");
	free(a);
	free(b);
	/* Without them, the file .tpusim is found when the reports are committed. */
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof path, "%s/o/layers.csv", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(err, "o/.tpusim: expected a directory of tpusim's reports, found Not a directory\n");
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	snprintf(path, sizeof path, "%s/o", dir);
	a = th_listing(path, true, ' ');
	ck_assert_str_eq(a, ".tpusim ");
	free(a);

	ck_assert_int_eq(th_cli(dir, empty, &out, &err), 2);
	ck_assert_str_eq(err, "-o: expected a path, found \"\"\n");
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(dir, file, &out, &err), 2);
	ck_assert_str_eq(err, "c.yaml: expected a directory for the reports, found a file\n");
	free(out);
	free(err);
	free(th_write(dir, "f\nx", "a file\n"));
	file[6] = "f\nx";
	ck_assert_int_eq(th_cli(dir, file, &out, &err), 2);
	ck_assert_str_eq(err, "f\\x0ax: expected a directory for the reports, found a file\n");
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* configs/name under the checkout, absolute (th_cli runs in a directory of its own). */
static const char *repo_path(char *buf, size_t size, const char *name)
{
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(buf, size, "%s/%s", cwd, name);
	return buf;
}

/* Runs argv in dir, wants exit status 2 with the one line want, and dir to hold only keep afterwards (th_listing). */
static void refused(const char *dir, const char *const *argv, const char *want, const char *keep)
{
	char *out, *err, *left;
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(err, want);
	ck_assert_str_eq(out, "");
	left = th_listing(dir, true, ' ');
	ck_assert_msg(!strcmp(left, keep), "%s: left \"%s\", expected \"%s\"", want, left, keep);
	free(left);
	free(out);
	free(err);
}

/*
 * The pre-run checks of output paths, each refused before anything is
 * simulated (exit 2, one line, nothing made): two options that name one file
 * under two spellings or through a link; a directory where a file goes (a
 * chart, a page, a VCD base ending in '/', a saved result's .npy); a report
 * file in -o DIR that tpusim did not make (a user's summary.json: kept as it
 * is); and a chart name that is neither .png nor .svg, named by its option.
 */
START_TEST(paths_refused_before_run)
{
	char lab[PATH_MAX], v1[PATH_MAX], r50[PATH_MAX], mlp[PATH_MAX], bert[PATH_MAX], path[PATH_MAX];
	char *dir = th_tmpdir(), *text;
	repo_path(lab, sizeof lab, "configs/lab_4x4.yaml");
	repo_path(v1, sizeof v1, "configs/tpu_v1.yaml");
	repo_path(r50, sizeof r50, "configs/workloads/resnet50.yaml");
	repo_path(mlp, sizeof mlp, "configs/workloads/mlp.yaml");
	repo_path(bert, sizeof bert, "configs/workloads/bert_base.yaml");

	/* One file, two spellings: ./t.gz and t.gz; a link and its target (which stays as it was). */
	const char *spell[] = { "run", "-c", v1, "-w", r50, "--trace", "./t.gz", "--dram-trace", "t.gz", NULL };
	refused(dir, spell, "--dram-trace: expected a path of its own, found \"t.gz\", where --trace writes too\n", "");
	free(th_write(dir, "target", "old\n"));
	snprintf(path, sizeof path, "%s/link", dir);
	ck_assert_int_eq(symlink("target", path), 0);
	const char *link[] = { "run", "-c", v1, "-w", r50, "--trace", "link", "--dram-trace", "target", NULL };
	refused(dir, link, "--dram-trace: expected a path of its own, found \"target\", where --trace writes too\n",
		"link target ");
	const char *sub[] = { "run", "-c", v1, "-w", mlp, "--trace", "a/../t.txt", "--dram-trace", "t.txt", NULL };
	snprintf(path, sizeof path, "%s/a", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	refused(dir, sub, "--dram-trace: expected a path of its own, found \"t.txt\", where --trace writes too\n",
		"a link target ");
	snprintf(path, sizeof path, "%s/target", dir);
	text = th_slurp(path);
	ck_assert_str_eq(text, "old\n");
	free(text);
	th_rmdir(dir);
	free(dir);

	/* A directory where a file goes. */
	dir = th_tmpdir();
	snprintf(path, sizeof path, "%s/d.png", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	const char *png[] = { "roofline", "-c", lab, "-w", bert, "-o", "d.png", NULL };
	refused(dir, png, "-o: expected a writable path, found \"d.png\" (Is a directory)\n", "d.png ");
	snprintf(path, sizeof path, "%s/d.html", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	const char *html[] = { "lab", "-c", lab, "--gemm", "64x64x64", "--html", "d.html", NULL };
	refused(dir, html, "--html: expected a writable path, found \"d.html\" (Is a directory)\n", "d.html d.png ");
	const char *vcd[] = { "run", "-c", lab, "-w", mlp, "--vcd", "nodir/", NULL };
	refused(dir, vcd, "--vcd: expected a writable path, found \"nodir/\" (Is a directory)\n", "d.html d.png ");
	const char *vcd2[] = { "run", "-c", lab, "-w", mlp, "--vcd", "d.png", NULL };
	refused(dir, vcd2, "--vcd: expected a writable path, found \"d.png\" (Is a directory)\n", "d.html d.png ");
	snprintf(path, sizeof path, "%s/so", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/so/fc1.npy", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	const char *npy[] = { "run", "-c", lab, "-w", mlp, "--model", "functional", "--save-outputs", "so", NULL };
	refused(dir, npy, "--save-outputs: expected a writable path, found \"so/fc1.npy\" (Is a directory)\n",
		"d.html d.png so ");
	/* A chart of another kind, named by its option. */
	const char *pdf[] = { "roofline", "-c", lab, "-w", bert, "-o", "r.pdf", NULL };
	refused(dir, pdf, "-o: expected a file name ending in .png or .svg, found \"r.pdf\"\n",
		"d.html d.png so ");
	th_rmdir(dir);
	free(dir);

	/* A summary.json of the user's in -o DIR: refused, kept, nothing made beside it. */
	dir = th_tmpdir();
	snprintf(path, sizeof path, "%s/own", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(th_write(path, "summary.json", "mine\n"));
	const char *own[] = { "run", "-c", v1, "-w", mlp, "-o", "own", NULL };
	refused(dir, own, "-o: expected no file of another at \"own/summary.json\" (tpusim keeps its link into "
		"own/.tpusim there), found a regular file\n", "own ");
	text = th_listing(path, true, ' ');
	ck_assert_str_eq(text, "summary.json ");
	free(text);
	snprintf(path, sizeof path, "%s/own/summary.json", dir);
	text = th_slurp(path);
	ck_assert_str_eq(text, "mine\n");
	free(text);
	th_rmdir(dir);
	free(dir);

	/* Help lists the statuses of a command stopped by a signal. */
	const char *help[] = { "--help", NULL };
	char *out, *err;
	ck_assert_int_eq(th_cli(".", help, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "130 SIGINT, 143 SIGTERM"));
	free(out);
	free(err);
}
END_TEST

Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *t = tcase_create("output");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, kill_between_steps);
	tcase_add_test(t, kill_at_random);
	tcase_add_test(t, concurrent_runs);
	tcase_add_test(t, next_run_cleans_up);
	tcase_add_test(t, uncommitted_changes_nothing);
	tcase_add_test(t, paths_refused_before_run);
	suite_add_tcase(s, t);
	return s;
}
