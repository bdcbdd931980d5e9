/*
 * test_determinism.c - the same run gives the same bytes. summary.json,
 * layers.csv, plots, stdout and stderr of `tpusim` are identical across
 * repeats and under a locale whose decimal separator is a comma (de_DE.UTF-8,
 * generated with localedef into a temporary directory for these tests); and a
 * host program that set that locale before calling tpusim_run_json gets the
 * answer it gets in the C locale, with its own locale left as it was.
 */
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "tpusim.h"

#define DE "de_DE.UTF-8"

/* The directory localedef wrote de_DE.UTF-8 into; empty when it could not. */
static char locdir[PATH_MAX];

/* Runs in the runner's own process, once for the test case, before the tests fork. */
static void make_locale(void)
{
	char tmpl[] = "/tmp/tpusim-locale-XXXXXX", out[PATH_MAX + 16];
	int status;
	pid_t pid;

	locdir[0] = '\0';
	if (!mkdtemp(tmpl))
		return;
	snprintf(out, sizeof out, "%s/" DE, tmpl);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("localedef", "localedef", "-i", "de_DE", "-f", "UTF-8", out, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		snprintf(locdir, sizeof locdir, "%s", tmpl);
		return;
	}
	/* The tests that need it fail, saying so (use_locale). */
	th_rmdir(tmpl);
}

static void remove_locale(void)
{
	if (locdir[0])
		th_rmdir(locdir);
}

/*
 * Points this process's environment at the generated locale (or at C) and
 * checks that the locale loads and writes 0.5 as "0,5": a test that cannot
 * tell the locales apart cannot fail. When de_DE could not be made, the test
 * fails, naming the locale: a decimal-comma test that passes or skips
 * without one has checked nothing.
 */
static void use_locale(bool de)
{
	if (!de) {
		ck_assert_int_eq(setenv("LC_ALL", "C", 1), 0);
		return;
	}
	ck_assert_msg(locdir[0], "no " DE " locale: localedef -i de_DE -f UTF-8 failed (its sources are Debian's "
		      "locales package, which make check installs)");
	ck_assert_int_eq(setenv("LOCPATH", locdir, 1), 0);
	ck_assert_int_eq(setenv("LC_ALL", DE, 1), 0);
	ck_assert_msg(setlocale(LC_ALL, "") != NULL, DE " (made by localedef in %s) does not load", locdir);
	char buf[16];
	snprintf(buf, sizeof buf, "%g", 0.5);
	ck_assert_str_eq(buf, "0,5");
	ck_assert(strtod("0.5", NULL) == 0.0);
	ck_assert_ptr_nonnull(setlocale(LC_ALL, "C"));
}

/* The whole file at path and its length (owned), or NULL when there is none. */
static char *slurp_n(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	size_t cap = 0;
	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (cap - *len < 4096) {
			cap = cap ? cap * 2 : 65536;
			s = realloc(s, cap);
			ck_assert_ptr_nonnull(s);
		}
		size_t r = fread(s + *len, 1, cap - *len, f);
		*len += r;
		if (!r)
			break;
	}
	fclose(f);
	return s;
}

/* One command: its arguments (paths relative to the repository) and the files it writes in its directory. */
struct cmd {
	const char *argv[24];
	const char *files[3];
};

static const struct cmd cmds[] = {
	{ { "run", "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/bert_base.yaml", "--model", "analytic", "-o",
	    "out", NULL },
	  { "out/summary.json", "out/layers.csv", NULL } },
	{ { "run", "-c", "configs/lab_4x4.yaml", "-c", "configs/memory/hbm2e.yaml", "-w", "configs/workloads/mlp.yaml",
	    "--set", "clock_ghz=0.7", "--set", "hbm.gbps=12.5", "--set", "sram.inputs.bytes_per_cycle=2", "-o", "out",
	    NULL },
	  { "out/summary.json", "out/layers.csv", NULL } },
	{ { "run", "-c", "configs/edge_32x32.yaml", "-w", "traces/alexnet.csv", "--dataflow", "os", "-o", "out", NULL },
	  { "out/summary.json", "out/layers.csv", NULL } },
	{ { "compare", "-c", "configs/gemmini.yaml", "-w", "configs/workloads/llm7b_decode.yaml", "--model", "analytic",
	    "--csv", NULL },
	  { NULL } },
	{ { "lower", "-w", "configs/workloads/mobilenet_v2.yaml", "--csv", NULL }, { NULL } },
	{ { "config", "--dump", "-c", "configs/tpu_v1.yaml", "--set", "energy.hbm_pj_per_bit=2.25", NULL }, { NULL } },
	/* A refusal that prints a range of decimals. */
	{ { "config", "--dump", "-c", "configs/tpu_v1.yaml", "--set", "clock_ghz=0.0001", NULL }, { NULL } },
	{ { "roofline", "-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/mlp.yaml", "-o", "roofline.svg", NULL },
	  { "roofline.svg", NULL } },
	{ { "compare", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "-o", "compare.svg", NULL },
	  { "compare.svg", NULL } },
};
#define NCMDS (int)(sizeof cmds / sizeof *cmds)

/* What one command gave: exit status, stdout, stderr, and each file's bytes. */
struct outcome {
	int rc;
	char *out, *err, *file[3];
	size_t len[3];
};

static void run_cmd(const struct cmd *c, struct outcome *o)
{
	char *dir = th_tmpdir(), cwd[PATH_MAX], paths[24][PATH_MAX + 32], path[PATH_MAX * 2];
	const char *argv[24];
	int i;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	for (i = 0; c->argv[i]; i++) {
		argv[i] = c->argv[i];
		if (!strncmp(c->argv[i], "configs/", 8) || !strncmp(c->argv[i], "traces/", 7)) {
			snprintf(paths[i], sizeof paths[i], "%s/%s", cwd, c->argv[i]);
			argv[i] = paths[i];
		}
	}
	argv[i] = NULL;
	memset(o, 0, sizeof *o);
	o->rc = th_cli(dir, argv, &o->out, &o->err);
	for (i = 0; c->files[i]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, c->files[i]);
		o->file[i] = slurp_n(path, &o->len[i]);
		ck_assert_msg(o->file[i] != NULL, "%s %s wrote no %s: %s", c->argv[0], c->argv[2], c->files[i], o->err);
	}
	th_rmdir(dir);
	free(dir);
}

static void outcome_free(struct outcome *o)
{
	free(o->out);
	free(o->err);
	for (int i = 0; i < 3; i++)
		free(o->file[i]);
}

static void same(const struct cmd *c, const struct outcome *a, const struct outcome *b, const char *how)
{
	ck_assert_msg(a->rc == b->rc, "%s %s: exit %d, then %d (%s)", c->argv[0], c->argv[2], a->rc, b->rc, how);
	ck_assert_msg(!strcmp(a->out, b->out), "%s %s: stdout differs (%s):\n%.2000s\n----\n%.2000s", c->argv[0],
		      c->argv[2], how, a->out, b->out);
	ck_assert_msg(!strcmp(a->err, b->err), "%s %s: stderr differs (%s): %s / %s", c->argv[0], c->argv[2], how, a->err,
		      b->err);
	for (int i = 0; c->files[i]; i++)
		ck_assert_msg(a->len[i] == b->len[i] && !memcmp(a->file[i], b->file[i], a->len[i]), "%s %s: %s differs (%s)",
			      c->argv[0], c->argv[2], c->files[i], how);
}

/* Every command twice in the C locale: the same bytes. */
START_TEST(repeats_are_identical)
{
	const struct cmd *c = &cmds[_i];
	struct outcome a, b;
	use_locale(false);
	run_cmd(c, &a);
	ck_assert_msg(a.rc == 0 || !strcmp(c->argv[0], "config"), "%s %s: exit %d: %s", c->argv[0], c->argv[2], a.rc,
		      a.err);
	run_cmd(c, &b);
	same(c, &a, &b, "a repeat");
	outcome_free(&a);
	outcome_free(&b);
}
END_TEST

/* Every command under LC_ALL=de_DE.UTF-8 (gnuplot too): the bytes it gives under LC_ALL=C. */
START_TEST(decimal_comma_cli)
{
	const struct cmd *c = &cmds[_i];
	struct outcome a, b;
	use_locale(false);
	run_cmd(c, &a);
	use_locale(true);
	run_cmd(c, &b);
	same(c, &a, &b, "LC_ALL=" DE);
	outcome_free(&a);
	outcome_free(&b);
}
END_TEST

static const char *const requests[] = {
	"{\"configs\": [\"configs/tpu_v4_mxu.yaml\"], \"workload\": \"configs/workloads/bert_base.yaml\","
	" \"model\": \"analytic\", \"set\": {\"clock_ghz\": 0.7, \"energy.hbm_pj_per_bit\": 2.25}}",
	"{\"configs\": [\"configs/lab_4x4.yaml\", \"configs/memory/hbm2e.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\","
	" \"set\": {\"hbm.gbps\": 12.5}}",
	/* A refusal that prints a range of decimals. */
	"{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"set\": {\"clock_ghz\": 0.0001}}",
};
#define NREQ (int)(sizeof requests / sizeof *requests)

/*
 * A host program in de_DE.UTF-8, process-wide (setlocale) and then for its
 * thread only (uselocale): tpusim_run_json answers as in the C locale and
 * leaves the caller's locale in place.
 */
START_TEST(decimal_comma_library)
{
	char *want = NULL, *got = NULL;
	int want_rc, got_rc;
	use_locale(true);
	ck_assert_ptr_nonnull(setlocale(LC_ALL, "C"));
	want_rc = tpusim_run_json(requests[_i], &want);
	ck_assert_ptr_nonnull(want);

	ck_assert_msg(setlocale(LC_ALL, DE) != NULL, DE " does not load");
	got_rc = tpusim_run_json(requests[_i], &got);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(got_rc == want_rc && !strcmp(got, want), "in " DE ": exit %d, in C %d:\n%.3000s\n----\n%.3000s",
		      got_rc, want_rc, got, want);
	ck_assert_str_eq(localeconv()->decimal_point, ",");
	ck_assert(uselocale((locale_t)0) == LC_GLOBAL_LOCALE);
	tpusim_free(got);

	/* A copy of the global de_DE (newlocale with LOCPATH set leaks in glibc). */
	locale_t de = duplocale(LC_GLOBAL_LOCALE);
	ck_assert_ptr_nonnull(de);
	ck_assert_ptr_nonnull(setlocale(LC_ALL, "C"));
	uselocale(de);
	got_rc = tpusim_run_json(requests[_i], &got);
	ck_assert_msg(got_rc == want_rc && !strcmp(got, want), "with uselocale(" DE "): another answer");
	ck_assert(uselocale((locale_t)0) == de);
	ck_assert_str_eq(localeconv()->decimal_point, ",");
	uselocale(LC_GLOBAL_LOCALE);
	freelocale(de);
	tpusim_free(got);
	tpusim_free(want);
}
END_TEST

Suite *determinism_suite(void)
{
	Suite *s = suite_create("determinism");
	TCase *t = tcase_create("determinism");
	tcase_set_timeout(t, 120);
	tcase_add_unchecked_fixture(t, make_locale, remove_locale);
	tcase_add_loop_test(t, repeats_are_identical, 0, NCMDS);
	tcase_add_loop_test(t, decimal_comma_cli, 0, NCMDS);
	tcase_add_loop_test(t, decimal_comma_library, 0, NREQ);
	suite_add_tcase(s, t);
	return s;
}
