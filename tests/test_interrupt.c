/*
 * test_interrupt.c - what a command leaves when it is stopped or cannot
 * write: nothing. A real build/tpusim child on a run long enough to be
 * interrupted gets SIGINT or SIGTERM and must exit 128 + the signal with
 * every file and directory it made gone; an output that is a link or a FIFO
 * is written through, never replaced, and the pre-run check does not open a
 * FIFO; a trace estimated past sim.max_trace_bytes is refused before the
 * run; a write that fails (a file size limit: EFBIG) is exit status 1 in one
 * message form, with nothing left.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "ydoc.h"

/* A child tpusim: its pid and the files its stdout and stderr go to. */
struct child {
	pid_t pid;
	char out[PATH_MAX], err[PATH_MAX];
};

/* The checkout's configs/name, absolute (the children run in directories of their own). */
static const char *cfg(char *buf, size_t size, const char *name)
{
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(buf, size, "%s/configs/%s", cwd, name);
	return buf;
}

/* The child's standard input, when not NULL (else the test's). */
static const char *child_stdin;

/* Starts tpusim argv in dir; fsize > 0: files it writes are limited to fsize bytes (EFBIG past it). */
static void start(struct child *c, const char *dir, const char *const *argv, long fsize)
{
	const char *bin = th_tpusim();
	snprintf(c->out, sizeof c->out, "/tmp/tpusim-int-out-%d", (int)getpid());
	snprintf(c->err, sizeof c->err, "/tmp/tpusim-int-err-%d", (int)getpid());
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		const char *args[64];
		int n = 0, o = open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(c->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || chdir(dir) != 0)
			_exit(127);
		dup2(o, 1);
		dup2(e, 2);
		if (child_stdin) {
			int in = open(child_stdin, O_RDONLY);
			if (in < 0)
				_exit(127);
			dup2(in, 0);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (fsize > 0) {
			struct rlimit rl = { (rlim_t)fsize, (rlim_t)fsize };
			/* SIGXFSZ at its default action, as a shell leaves it: tpusim itself must ignore it. */
			signal(SIGXFSZ, SIG_DFL);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		args[n++] = bin;
		for (; *argv && n < 63; argv++)
			args[n++] = *argv;
		args[n] = NULL;
		execv(bin, (char *const *)args);
		_exit(127);
	}
}

/*
 * Waits at most secs for the child; a child still running then is killed
 * and the test fails. Returns its exit status; fails when a signal ended it.
 * *err (when not NULL): its stderr (owned).
 */
static int finish(struct child *c, double secs, char **err)
{
	int status = 0;
	pid_t got = 0;
	for (int i = 0; i < (int)(secs * 100) && (got = waitpid(c->pid, &status, WNOHANG)) == 0; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (got == 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
		unlink(c->out);
		unlink(c->err);
		ck_abort_msg("tpusim still ran after %.0f s", secs);
	}
	ck_assert_int_eq(got, c->pid);
	if (err)
		*err = th_slurp(c->err);
	unlink(c->out);
	unlink(c->err);
	ck_assert_msg(WIFEXITED(status), "tpusim ended by signal %d, not by exiting", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static void sleep_s(double s)
{
	nanosleep(&(struct timespec){ (time_t)s, (long)((s - (double)(time_t)s) * 1e9) }, NULL);
}

/*
 * The README's promise under signals: a run that SIGINT or SIGTERM stops
 * exits 128 + the signal with "interrupted by SIG..." and leaves nothing it
 * made: no report directory, no truncated trace or VCD, no empty parent of
 * an output, no plot or saved result. Each run takes 10 s or more
 * (llm7b_prefill on lab_4x4: 599,801,728 folds; resnet50: 1.65 million folds
 * with a VCD, or 10^10 PE updates in the functional model), and gets the
 * signal after 1.5 s, while it simulates and writes its traces.
 */
START_TEST(signal_leaves_nothing)
{
	char lab[PATH_MAX], llm[PATH_MAX], r50[PATH_MAX];
	const int sigs[2] = { SIGINT, SIGTERM };
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(llm, sizeof llm, "workloads/llm7b_prefill.yaml");
	cfg(r50, sizeof r50, "workloads/resnet50.yaml");
	const char *const runs[][24] = {
		{ "run", "-c", lab, "-w", r50, "--vcd", "v/w/x", "-o", "a/o", NULL },
		{ "compare", "-c", lab, "-w", llm, "-o", "c/d/x.png", NULL },
		{ "run", "-c", lab, "-w", r50, "--model", "functional", "--save-outputs", "s/o", "--plot", "p/q", "-o", "a/o",
		  NULL },
		{ "run", "-c", lab, "-w", llm, "-o", "a/o", "--trace", "t/u/tr.gz", "--dram-trace", "d/d.txt", "--set",
		  "sim.max_trace_bytes=100000000000", NULL },
	};
	for (size_t r = 0; r < sizeof runs / sizeof *runs; r++)
		for (int k = 0; k < 2; k++) {
			char *dir = th_tmpdir(), *err, *left, want[64];
			struct child c;
			start(&c, dir, runs[r], 0);
			sleep_s(1.5);
			ck_assert_int_eq(kill(c.pid, sigs[k]), 0);
			ck_assert_msg(finish(&c, 60, &err) == 128 + sigs[k], "%s %s: status != %d (stderr: %s)", runs[r][0],
				      runs[r][6], 128 + sigs[k], err);
			snprintf(want, sizeof want, "interrupted by %s\n", sigs[k] == SIGINT ? "SIGINT" : "SIGTERM");
			ck_assert_str_eq(err, want);
			left = th_listing(dir, true, ' ');
			ck_assert_msg(!strcmp(left, ""), "%s %s, %s: left \"%s\"", runs[r][0], runs[r][6], want, left);
			free(left);
			free(err);
			th_rmdir(dir);
			free(dir);
		}
}
END_TEST

/*
 * Ctrl-C at lab --step's prompt: the read it waits in ends (no SA_RESTART),
 * and that is a stop (130, "interrupted by SIGINT"), not a q that prints
 * the summary and exits 0. Its input is a FIFO whose writer never writes.
 */
START_TEST(step_prompt_interrupted)
{
	char lab[PATH_MAX], fifo[PATH_MAX];
	char *dir = th_tmpdir(), *err;
	const char *const argv[] = { "lab", "-c", cfg(lab, sizeof lab, "lab_4x4.yaml"), "--gemm", "8x8x8", "--step", NULL };
	struct child c;
	snprintf(fifo, sizeof fifo, "%s/in", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int writer = open(fifo, O_RDWR);
	ck_assert_int_ge(writer, 0);
	child_stdin = fifo;
	start(&c, dir, argv, 0);
	child_stdin = NULL;
	sleep_s(1.0);
	ck_assert_int_eq(kill(c.pid, SIGINT), 0);
	ck_assert_int_eq(finish(&c, 20, &err), 130);
	ck_assert_str_eq(err, "interrupted by SIGINT\n");
	free(err);
	close(writer);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A child that reads the FIFO at path into the file to, with a time limit (so that no writer never hangs it). */
static pid_t reader(const char *path, const char *to)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char buf[65536];
		int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644), in;
		alarm(30);
		if (out < 0 || (in = open(path, O_RDONLY)) < 0)
			_exit(1);
		for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;)
			if (write(out, buf, (size_t)n) != n)
				_exit(1);
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int status;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static char *slurp_n(const char *path, size_t *n);

/*
 * An output that is a FIFO: the pre-run check must not open it (its reader
 * would see an empty stream, and the run's own open then waits for a reader
 * that is gone). The reader gets the one trace, byte for byte the trace the
 * same run writes to a regular file.
 */
START_TEST(fifo_gets_one_stream)
{
	char lab[PATH_MAX], mlp[PATH_MAX], *dir = th_tmpdir(), fifo[PATH_MAX], got[PATH_MAX], path[PATH_MAX], *a, *b;
	size_t na, nb;
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(mlp, sizeof mlp, "workloads/mlp.yaml");
	const char *to_file[] = { "run", "-c", lab, "-w", mlp, "--trace", "r.trace", NULL };
	const char *to_fifo[] = { "run", "-c", lab, "-w", mlp, "--trace", "f.trace", NULL };
	struct child c;
	pid_t rd;
	snprintf(fifo, sizeof fifo, "%s/f.trace", dir);
	snprintf(got, sizeof got, "%s/got", dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	start(&c, dir, to_file, 0);
	ck_assert_int_eq(finish(&c, 60, NULL), 0);
	snprintf(path, sizeof path, "%s/r.trace", dir);
	a = slurp_n(path, &na);
	ck_assert_uint_gt(na, 0);
	/* The reader comes first, or half a second after the run started (and waits for it). */
	for (int late = 0; late < 2; late++) {
		char *err;
		rd = late ? -1 : reader(fifo, got);
		start(&c, dir, to_fifo, 0);
		if (late) {
			sleep_s(0.5);
			rd = reader(fifo, got);
		}
		ck_assert_msg(finish(&c, 20, &err) == 0, "%s reader: %s", late ? "a late" : "an early", err);
		free(err);
		for (int i = 0; i < 200 && waitpid(rd, NULL, WNOHANG) == 0; i++)
			sleep_s(0.01);
		reap(rd);
		b = slurp_n(got, &nb);
		ck_assert_msg(na == nb && !memcmp(a, b, na), "the FIFO's reader got %zu bytes, the file %zu", nb, na);
		free(b);
	}
	free(a);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The whole of path, binary (owned), its size in *n. */
static char *slurp_n(const char *path, size_t *n)
{
	struct stat st;
	char *buf;
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	*n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	return buf;
}

/* The first bytes of path (at most n). */
static size_t head(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t got;
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	got = read(fd, buf, n);
	close(fd);
	return got < 0 ? 0 : (size_t)got;
}

/*
 * Every output tpusim puts in place by renaming (lab --html, roofline -o,
 * compare -o, run --plot, --save-outputs) at a path that is a symbolic link:
 * the link stays, and the file it names gets the output (each format's first
 * bytes: "\x89PNG", "<!DOCTYPE", "\x93NUMPY"). A FIFO named by --html stays
 * a FIFO and its reader gets the page.
 */
START_TEST(links_and_fifos_written_through)
{
	char lab[PATH_MAX], mlp[PATH_MAX];
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(mlp, sizeof mlp, "workloads/mlp.yaml");
	static const struct {
		const char *link, *target, *magic;
	} outs[] = {
		{ "page.html", "t/page.html", "<!DOCTYPE" },
		{ "roof.png", "t/roof.png", "\x89PNG" },
		{ "cmp.png", "t/cmp.png", "\x89PNG" },
		{ "p/cycles.png", "../t/cycles.png", "\x89PNG" },
		{ "s/fc1.npy", "../t/fc1.npy", "\x93NUMPY" },
	};
	const char *const cmds[][16] = {
		{ "lab", "-c", lab, "--gemm", "4x4x4", "--html", "page.html", NULL },
		{ "roofline", "-c", lab, "-w", mlp, "-o", "roof.png", NULL },
		{ "compare", "-c", lab, "-w", mlp, "-o", "cmp.png", NULL },
		{ "run", "-c", lab, "-w", mlp, "--plot", "p", NULL },
		{ "run", "-c", lab, "-w", mlp, "--model", "functional", "--save-outputs", "s", NULL },
	};
	for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
		char *dir = th_tmpdir(), path[PATH_MAX], buf[16];
		struct stat st;
		struct child c;
		snprintf(path, sizeof path, "%s/t", dir);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof path, "%s/p", dir);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof path, "%s/s", dir);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof path, "%s/%s", dir, outs[i].link);
		ck_assert_int_eq(symlink(outs[i].target, path), 0);
		start(&c, dir, cmds[i], 0);
		ck_assert_int_eq(finish(&c, 60, NULL), 0);
		ck_assert_msg(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "%s: the link was replaced", outs[i].link);
		ck_assert_uint_eq(head(path, buf, strlen(outs[i].magic)), strlen(outs[i].magic));
		ck_assert_msg(!memcmp(buf, outs[i].magic, strlen(outs[i].magic)), "%s: not the output", outs[i].link);
		th_rmdir(dir);
		free(dir);
	}
	/* --html into a FIFO */
	char *dir = th_tmpdir(), fifo[PATH_MAX], got[PATH_MAX], buf[16];
	struct stat st;
	struct child c;
	pid_t rd;
	snprintf(fifo, sizeof fifo, "%s/page.html", dir);
	snprintf(got, sizeof got, "%s/got", dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	rd = reader(fifo, got);
	start(&c, dir, cmds[0], 0);
	ck_assert_int_eq(finish(&c, 20, NULL), 0);
	ck_assert_msg(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "--html: the FIFO was replaced");
	/* the writer has closed: the reader has its whole stream by now, or never gets one */
	for (int i = 0; i < 200 && waitpid(rd, NULL, WNOHANG) == 0; i++)
		sleep_s(0.01);
	reap(rd);
	ck_assert_uint_eq(head(got, buf, 9), 9);
	ck_assert(!memcmp(buf, "<!DOCTYPE", 9));
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The number after "found an estimated " in msg. */
static long long estimate_in(const char *msg)
{
	const char *p = strstr(msg, "found an estimated ");
	ck_assert_msg(p != NULL, "no estimate in \"%s\"", msg);
	return strtoll(p + strlen("found an estimated "), NULL, 10);
}

/*
 * The cycle model's --vcd and --dram-trace, estimated before the run and
 * capped by sim.max_trace_bytes: llm7b_prefill on lab_4x4 is 599,801,728
 * folds (README), so 2048 + 599801728 x 256 bytes of VCD: refused at once,
 * exit 2, nothing made. At the boundary (mlp on lab_4x4): the cap one byte
 * under the estimate refuses, at the estimate runs, and the file is not
 * larger than the estimate. The DRAM trace's estimate is the closed form's
 * HBM bytes (the analytic model's, summary.json) in 8-byte bursts (lab_4x4's
 * hbm.burst_bytes) of 32 bytes a line.
 */
START_TEST(trace_size_capped)
{
	char lab[PATH_MAX], llm[PATH_MAX], mlp[PATH_MAX], want[600], cap[64], path[PATH_MAX], *dir = th_tmpdir(), *err;
	struct child c;
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(llm, sizeof llm, "workloads/llm7b_prefill.yaml");
	cfg(mlp, sizeof mlp, "workloads/mlp.yaml");
	const char *big[] = { "run", "-c", lab, "-w", llm, "--vcd", "v/x", NULL };
	long long est = 2048 + 599801728LL * 256;
	start(&c, dir, big, 0);
	ck_assert_int_eq(finish(&c, 5, &err), 2);
	snprintf(want, sizeof want, "--vcd: expected a file of at most 1073741824 bytes (sim.max_trace_bytes), found an "
		 "estimated %lld bytes (599801728 folds and vector chunks x 256 bytes); use a smaller workload or array, or "
		 "raise sim.max_trace_bytes (--set sim.max_trace_bytes=%lld)\n", est, est);
	ck_assert_str_eq(err, want);
	free(err);
	char *left = th_listing(dir, true, ' ');
	ck_assert_str_eq(left, "");
	free(left);

	/* the DRAM trace's estimate, from the analytic model's HBM bytes */
	const char *an[] = { "run", "-c", lab, "-w", mlp, "--model", "analytic", "-o", "an", NULL };
	start(&c, dir, an, 0);
	ck_assert_int_eq(finish(&c, 20, NULL), 0);
	snprintf(path, sizeof path, "%s/an/summary.json", dir);
	struct ydoc *d = th_json_file(path);
	long long hbm = th_json_int(d->root, "total.hbm_read_bytes") + th_json_int(d->root, "total.hbm_write_bytes");
	ydoc_free(d);

	const char *opts[2] = { "--vcd", "--dram-trace" };
	const char *files[2] = { "x", "d.txt" }, *made[2] = { "x.vcd", "d.txt" };
	for (int k = 0; k < 2; k++) {
		const char *one[] = { "run", "-c", lab, "-w", mlp, opts[k], files[k], "--set", "sim.max_trace_bytes=1", NULL };
		long long e;
		struct stat st;
		start(&c, dir, one, 0);
		ck_assert_int_eq(finish(&c, 20, &err), 2);
		e = estimate_in(err);
		if (k == 1)
			ck_assert_int_eq(e, (hbm + 7) / 8 * 32);
		snprintf(want, sizeof want, "%s: expected a file of at most 1 bytes (sim.max_trace_bytes), found an estimated "
			 "%lld bytes (", opts[k], e);
		ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
		snprintf(want, sizeof want, ", or raise sim.max_trace_bytes (--set sim.max_trace_bytes=%lld)\n", e);
		ck_assert_str_eq(err + strlen(err) - strlen(want), want);
		free(err);
		snprintf(cap, sizeof cap, "sim.max_trace_bytes=%lld", e - 1);
		one[8] = cap;
		start(&c, dir, one, 0);
		ck_assert_int_eq(finish(&c, 20, NULL), 2);
		snprintf(path, sizeof path, "%s/%s", dir, made[k]);
		ck_assert_int_ne(access(path, F_OK), 0);
		snprintf(cap, sizeof cap, "sim.max_trace_bytes=%lld", e);
		start(&c, dir, one, 0);
		ck_assert_int_eq(finish(&c, 60, NULL), 0);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_msg(st.st_size > 0 && st.st_size <= e, "%s: %lld bytes, estimated %lld", made[k],
			      (long long)st.st_size, e);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Every output that fails once open (here EFBIG: a file size limit of 8 KiB,
 * SIGXFSZ at its default action, which tpusim ignores) is exit status 1 with one message, "<opt>: expected to
 * write \"<path>\", found File too large", and the command leaves nothing:
 * no partial file, no directory it made. ENOSPC (a VCD linked to /dev/full)
 * is named as itself.
 */
START_TEST(failed_write_one_class)
{
	char lab[PATH_MAX], r50[PATH_MAX], mlp[PATH_MAX];
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(r50, sizeof r50, "workloads/resnet50.yaml");
	cfg(mlp, sizeof mlp, "workloads/mlp.yaml");
	static const char *const fails[] = {
		"--vcd: expected to write \"v/w/x.vcd\", found File too large\n",
		"--trace: expected to write \"t/u/t.gz\", found File too large\n",
		"--dram-trace: expected to write \"d/e/d.txt\", found File too large\n",
		"--vcd: expected to write \"l/m/x.vcd\", found File too large\n",
		"--html: expected to write \"h/i/p.html\", found File too large\n",
		"--save-outputs: expected to write \"s/o/fc1.npy\", found File too large\n",
	};
	const char *const cmds[][16] = {
		{ "run", "-c", lab, "-w", r50, "--vcd", "v/w/x", NULL },
		{ "run", "-c", lab, "-w", r50, "--trace", "t/u/t.gz", NULL },
		{ "run", "-c", lab, "-w", r50, "--dram-trace", "d/e/d.txt", NULL },
		{ "lab", "-c", lab, "--gemm", "16x16x16", "--vcd", "l/m/x", NULL },
		{ "lab", "-c", lab, "--gemm", "16x16x16", "--html", "h/i/p.html", NULL },
		{ "run", "-c", lab, "-w", mlp, "--model", "functional", "--save-outputs", "s/o", NULL },
	};
	for (size_t i = 0; i < sizeof fails / sizeof *fails; i++) {
		char *dir = th_tmpdir(), *err, *left;
		struct child c;
		start(&c, dir, cmds[i], 8192);
		ck_assert_int_eq(finish(&c, 60, &err), 1);
		ck_assert_str_eq(err, fails[i]);
		left = th_listing(dir, true, ' ');
		ck_assert_msg(!strcmp(left, ""), "%s: left \"%s\"", fails[i], left);
		free(left);
		free(err);
		th_rmdir(dir);
		free(dir);
	}
	/* -o DIR: the report that does not fit is named inside DIR's generation directory, which goes too. */
	{
		char v1[PATH_MAX], *dir = th_tmpdir(), *err, *left;
		const char *argv[] = { "run", "-c", cfg(v1, sizeof v1, "tpu_v1.yaml"), "-w", r50, "-o", "r/p", NULL };
		struct child c;
		start(&c, dir, argv, 1024);
		ck_assert_int_eq(finish(&c, 60, &err), 1);
		ck_assert_msg(!strncmp(err, "-o: expected to write \"r/p/.tpusim/gen-", 39) &&
			      strstr(err, "/layers.csv\", found File too large\n") && !strchr(err, '\n')[1], "%s", err);
		left = th_listing(dir, true, ' ');
		ck_assert_msg(!strcmp(left, ""), "-o: left \"%s\"", left);
		free(left);
		free(err);
		th_rmdir(dir);
		free(dir);
	}
	/* ENOSPC, where the VCD is a link to /dev/full: the same form (not "Input/output error"), and the link stays. */
	const char *const full[][12] = {
		{ "lab", "-c", lab, "--gemm", "16x16x16", "--vcd", "f", NULL },
		{ "run", "-c", lab, "-w", mlp, "--vcd", "f", NULL },
	};
	for (int i = 0; i < 2; i++) {
		char *dir = th_tmpdir(), path[PATH_MAX], *err;
		struct stat st;
		struct child c;
		snprintf(path, sizeof path, "%s/f.vcd", dir);
		ck_assert_int_eq(symlink("/dev/full", path), 0);
		start(&c, dir, full[i], 0);
		ck_assert_int_eq(finish(&c, 60, &err), 1);
		ck_assert_str_eq(err, "--vcd: expected to write \"f.vcd\", found No space left on device\n");
		ck_assert(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
		free(err);
		th_rmdir(dir);
		free(dir);
	}
}
END_TEST

/*
 * A run that fails after its pictures and results are written (here -o DIR,
 * whose DIR/.tpusim is a file, is found only when the reports are
 * committed): they go, with the directories the run made for them.
 */
START_TEST(late_failure_leaves_nothing)
{
	char lab[PATH_MAX], mlp[PATH_MAX], *dir = th_tmpdir(), *err, *left, path[PATH_MAX];
	struct child c;
	cfg(lab, sizeof lab, "lab_4x4.yaml");
	cfg(mlp, sizeof mlp, "workloads/mlp.yaml");
	const char *argv[] = { "run", "-c", lab, "-w", mlp, "--model", "functional", "--save-outputs", "s/o", "--plot", "p/q",
			       "-o", "ro", NULL };
	snprintf(path, sizeof path, "%s/ro", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(th_write(path, ".tpusim", "a file\n"));
	start(&c, dir, argv, 0);
	ck_assert_int_eq(finish(&c, 60, &err), 2);
	ck_assert_str_eq(err, "ro/.tpusim: expected a directory of tpusim's reports, found Not a directory\n");
	left = th_listing(dir, true, ' ');
	ck_assert_str_eq(left, "ro ");
	free(left);
	left = th_listing(path, true, ' ');
	ck_assert_str_eq(left, ".tpusim ");
	free(left);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A sweep stopped while it draws its charts (gnuplot here a stand-in that
 * waits, so that the signal comes while a chart is drawn): 128 + the signal,
 * "interrupted by SIG...", and DIR as it was before (its points stay, no
 * DIR/.plots.tmp.<pid>, no plots).
 */
START_TEST(sweep_plot_interrupted)
{
	const int sigs[2] = { SIGINT, SIGTERM };
	char cwd[PATH_MAX], spec[1024], bin[PATH_MAX], path[PATH_MAX + 8], *old = getenv("PATH");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_ptr_nonnull(old);
	old = strdup(old);
	for (int k = 0; k < 2; k++) {
		char *dir = th_tmpdir(), *err, *before, *after, *s;
		struct child c;
		snprintf(spec, sizeof spec, "configs: [%s/configs/lab_4x4.yaml]\nworkloads: [%s/configs/workloads/mlp.yaml]\n"
			 "axes:\n  model: [analytic]\n  dataflow: [ws, os]\n", cwd, cwd);
		s = th_write(dir, "s.yaml", spec);
		const char *first[] = { "sweep", s, "-o", "out", NULL };
		const char *again[] = { "sweep", s, "-o", "out", "--plot", NULL };
		start(&c, dir, first, 0);
		ck_assert_int_eq(finish(&c, 60, NULL), 0);
		snprintf(bin, sizeof bin, "%s/bin", dir);
		ck_assert_int_eq(mkdir(bin, 0755), 0);
		free(th_write(bin, "gnuplot", "#!/bin/sh\nexec sleep 20\n"));
		snprintf(path, sizeof path, "%s/gnuplot", bin);
		ck_assert_int_eq(chmod(path, 0755), 0);
		snprintf(path, sizeof path, "%s/out", dir);
		before = th_listing(path, true, ' ');
		snprintf(path, sizeof path, "%s:%s", bin, old);
		setenv("PATH", path, 1);
		start(&c, dir, again, 0);
		setenv("PATH", old, 1);
		sleep_s(1.5);
		ck_assert_int_eq(kill(c.pid, sigs[k]), 0);
		ck_assert_int_eq(finish(&c, 30, &err), 128 + sigs[k]);
		ck_assert_str_eq(err, sigs[k] == SIGINT ? "interrupted by SIGINT\n" : "interrupted by SIGTERM\n");
		snprintf(path, sizeof path, "%s/out", dir);
		after = th_listing(path, true, ' ');
		ck_assert_str_eq(after, before);
		free(before), free(after), free(err), free(s);
		th_rmdir(dir);
		free(dir);
	}
	free(old);
}
END_TEST

Suite *interrupt_suite(void)
{
	Suite *s = suite_create("interrupt");
	TCase *t = tcase_create("interrupt");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, signal_leaves_nothing);
	tcase_add_test(t, step_prompt_interrupted);
	tcase_add_test(t, fifo_gets_one_stream);
	tcase_add_test(t, links_and_fifos_written_through);
	tcase_add_test(t, trace_size_capped);
	tcase_add_test(t, failed_write_one_class);
	tcase_add_test(t, late_failure_leaves_nothing);
	tcase_add_test(t, sweep_plot_interrupted);
	suite_add_tcase(s, t);
	return s;
}
