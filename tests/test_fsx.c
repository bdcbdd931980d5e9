/*
 * test_fsx.c - the file plumbing (sim/base/fsx.h): FNV-1a against its published
 * test vectors, whole-file reads at the bound (n passes, n - 1 refused), a
 * FIFO that does not hang, atomic writes that leave no temporary file, the
 * temporary-name scheme and its cleanup, mkdir -p, the writability check;
 * and the one exit class of a failed output write, for every writer: exit
 * status 1 with "<option>: expected to write \"<path>\", found <error>", the
 * disk made full with /dev/full (directly or through a link) or, for the
 * writers that go through a temporary file, with RLIMIT_FSIZE (1,000 bytes:
 * under the page and the report, over the message on stderr, a file too).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsx.h"
#include "limit.h"
#include "tests.h"

/* Published FNV-1a 64 vectors (Fowler, Noll, Vo: the FNV test suite). */
START_TEST(fnv_vectors)
{
	static const struct { const char *s; uint64_t h; } v[] = {
		{ "", UINT64_C(0xcbf29ce484222325) },
		{ "a", UINT64_C(0xaf63dc4c8601ec8c) },
		{ "foobar", UINT64_C(0x85944171f73967e8) },
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		ck_assert_uint_eq(fsx_fnv(FSX_FNV_INIT, v[i].s, strlen(v[i].s)), v[i].h);
	/* Hashing in pieces is hashing the whole. */
	ck_assert_uint_eq(fsx_fnv(fsx_fnv(FSX_FNV_INIT, "foo", 3), "bar", 3), UINT64_C(0x85944171f73967e8));
}
END_TEST

START_TEST(read_at_the_bound)
{
	char *dir = th_tmpdir(), *p = th_write(dir, "f", "0123456789"), *text, fifo[LIMIT_PATH_BUF];
	size_t len;
	ck_assert_int_eq(fsx_read(p, 10, &text, &len), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(text, "0123456789");
	free(text);
	errno = 0;
	ck_assert_int_eq(fsx_read(p, 9, &text, &len), -1);
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_ptr_null(text);
	ck_assert_int_eq(fsx_read(dir, 100, &text, &len), -1);
	ck_assert_int_eq(errno, EISDIR);
	snprintf(fifo, sizeof fifo, "%s/missing", dir);
	ck_assert_int_eq(fsx_read(fifo, 100, &text, &len), -1);
	ck_assert_int_eq(errno, ENOENT);
	/* A FIFO without a writer: the open does not wait for one, and the read finds the end. */
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	alarm(10);
	ck_assert_int_eq(fsx_read(fifo, 100, &text, &len), 0);
	alarm(0);
	ck_assert_uint_eq(len, 0);
	free(text);
	free(p);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(atomic_write_and_its_temporary_name)
{
	char *dir = th_tmpdir(), path[LIMIT_PATH_BUF], tmp[LIMIT_PATH_BUF], want[LIMIT_PATH_BUF], *text, *list;
	size_t len;
	snprintf(path, sizeof path, "%s/x.csv", dir);
	ck_assert_int_eq(fsx_tmp_name(tmp, sizeof tmp, path), 0);
	snprintf(want, sizeof want, "%s/.x.csv.tmp.", dir);
	ck_assert_msg(!strncmp(tmp, want, strlen(want)), "%s", tmp);
	snprintf(want, sizeof want, ".%ld", (long)getpid());
	ck_assert_str_eq(tmp + strlen(tmp) - strlen(want), want);
	ck_assert_int_eq(fsx_tmp_name(tmp, strlen(path) + 5, path), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);

	ck_assert_int_eq(fsx_write_atomic(path, "old\n", 4), 0);
	ck_assert_int_eq(fsx_write_atomic(path, "new text\n", 9), 0);
	ck_assert_int_eq(fsx_read(path, 100, &text, &len), 0);
	ck_assert_str_eq(text, "new text\n");
	free(text);
	list = th_listing(dir, true, ' ');
	ck_assert_str_eq(list, "x.csv ");
	free(list);
	snprintf(path, sizeof path, "%s/no/x.csv", dir);
	ck_assert_int_eq(fsx_write_atomic(path, "x", 1), -1);
	ck_assert_int_eq(errno, ENOENT);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A temporary file of a writer that died is removed; a live writer's, and other files, stay. */
/*
 * A path that is not a regular file of its own: an output the user named is
 * written through it (the link's target gets the text, the link stays); a
 * command's own file (fsx_write_own) replaces it, so a FIFO in a sweep's
 * points/ does not hold the write for good (no reader ever comes).
 */
START_TEST(own_files_replace_what_outputs_write_through)
{
	char *dir = th_tmpdir(), target[4096], link[4096], fifo[4096];
	struct stat st;
	snprintf(target, sizeof target, "%s/target", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	free(th_write(dir, "target", "old\n"));
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_int_eq(fsx_write_atomic(link, "new\n", 4), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	char *got = th_slurp(target);
	ck_assert_str_eq(got, "new\n");
	free(got);
	ck_assert_int_eq(fsx_write_own(fifo, "point\n", 6), 0);
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	got = th_slurp(fifo);
	ck_assert_str_eq(got, "point\n");
	free(got);
	ck_assert_int_eq(fsx_write_own(link, "own\n", 4), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	got = th_slurp(target);
	ck_assert_str_eq(got, "new\n");
	free(got);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(clean_tmp_removes_the_dead_writers_files)
{
	char *dir = th_tmpdir(), path[LIMIT_PATH_BUF], dead[LIMIT_PATH_BUF], live[LIMIT_PATH_BUF], *list, *p;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		snprintf(path, sizeof path, "%s/a.json", dir);
		_exit(fsx_tmp_name(dead, sizeof dead, path) == 0 && close(open(dead, O_CREAT | O_WRONLY, 0644)) == 0 ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof path, "%s/b.json", dir);
	ck_assert_int_eq(fsx_tmp_name(live, sizeof live, path), 0);
	ck_assert_int_eq(close(open(live, O_CREAT | O_WRONLY, 0644)), 0);
	free(th_write(dir, ".c.tmp.elsewhere.1", "another host's"));
	free(th_write(dir, "keep", "x"));
	fsx_clean_tmp(dir);
	list = th_listing(dir, true, '\n');
	p = strrchr(live, '/') + 1;
	snprintf(path, sizeof path, "%s\n.c.tmp.elsewhere.1\nkeep\n", p);
	ck_assert_str_eq(list, path);
	free(list);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(mkdirs_and_writable)
{
	char *dir = th_tmpdir(), path[LIMIT_PATH_BUF], *f = th_write(dir, "file", "unchanged"), *text, *list;
	size_t len;
	bool made;
	snprintf(path, sizeof path, "%s/a//b/c/", dir);
	ck_assert_int_eq(fsx_mkdirs(path, &made), 0);
	ck_assert(made);
	ck_assert_int_eq(fsx_mkdirs(path, &made), 0);
	ck_assert(!made);
	snprintf(path, sizeof path, "%s/file/d", dir);
	ck_assert_int_eq(fsx_mkdirs(path, &made), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_int_eq(fsx_mkdirs(f, &made), -1);
	ck_assert_int_eq(errno, ENOTDIR);

	snprintf(path, sizeof path, "%s/new", dir);
	ck_assert_int_eq(fsx_writable(path), 0);
	ck_assert_int_ne(access(path, F_OK), 0);        /* the check leaves nothing */
	ck_assert_int_eq(fsx_writable(f), 0);
	ck_assert_int_eq(fsx_read(f, 100, &text, &len), 0);
	ck_assert_str_eq(text, "unchanged");
	free(text);
	snprintf(path, sizeof path, "%s/missing/new", dir);
	ck_assert_int_eq(fsx_writable(path), -1);
	ck_assert_int_eq(errno, ENOENT);
	list = th_listing(dir, true, ' ');
	ck_assert_str_eq(list, "a file ");
	free(list);
	free(f);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Runs tpusim with argv (from the repository), files limited to fsize bytes (0: no limit); stderr into *err. */
static int run_limited(const char *const *argv, long fsize, char **err)
{
	char ef[64];
	int status;
	pid_t pid;
	snprintf(ef, sizeof ef, "/tmp/tpusim-fsx-err-%d", (int)getpid());
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *args[24] = { th_tpusim() };
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);
		for (int j = 0; argv[j]; j++)
			args[j + 1] = argv[j];
		dup2(null, 1);
		dup2(e, 2);
		if (fsize) {
			struct rlimit rl = { (rlim_t)fsize, (rlim_t)fsize };
			signal(SIGXFSZ, SIG_IGN);       /* a write past the limit fails with EFBIG instead */
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*err = th_slurp(ef);
	unlink(ef);
	ck_assert_msg(WIFEXITED(status), "status %#x", status);
	return WEXITSTATUS(status);
}

#define RUN "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml"

/* Every writer of outputs: a full disk is exit status 1, with one message. */
START_TEST(failed_writes_are_exit_1)
{
	char *dir = th_tmpdir(), link[LIMIT_PATH_BUF], base[LIMIT_PATH_BUF], want[2 * LIMIT_PATH_BUF], out[LIMIT_PATH_BUF];
	char html[LIMIT_PATH_BUF], *err, *list;
	snprintf(base, sizeof base, "%s/t", dir);
	snprintf(link, sizeof link, "%s/t.vcd", dir);
	ck_assert_int_eq(symlink("/dev/full", link), 0);
	struct {
		const char *argv[16];
		long fsize;
		const char *what, *path;
		const char *error;
	} cases[] = {
		{ { RUN, "--trace", "/dev/full" }, 0, "--trace", "/dev/full", "No space left on device" },
		{ { RUN, "--dram-trace", "/dev/full" }, 0, "--dram-trace", "/dev/full", "No space left on device" },
		{ { RUN, "--vcd", base }, 0, "--vcd", link, "No space left on device" },
		{ { RUN, "--model", "analytic", "-o", out }, 1000, "-o", NULL, "File too large" },
		{ { "lab", "-c", "configs/lab_4x4.yaml", "--gemm", "4x4x4", "--html", html }, 1000, "--html", html,
		    "File too large" },
	};
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(html, sizeof html, "%s/lab.html", dir);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ck_assert_msg(run_limited(cases[i].argv, cases[i].fsize, &err) == 1, "%s: %s", cases[i].what, err);
		if (cases[i].path) {
			snprintf(want, sizeof want, "%s: expected to write \"%s\", found %s\n", cases[i].what, cases[i].path,
				 cases[i].error);
			ck_assert_str_eq(err, want);
		} else {
			/* The report's first file: its name is the writer's choice, the class and the form are not. */
			snprintf(want, sizeof want, "%s: expected to write \"%s/", cases[i].what, out);
			ck_assert_msg(!strncmp(err, want, strlen(want)) && strstr(err, cases[i].error), "%s", err);
		}
		free(err);
	}
	/* The link the user named is left alone; the page and its temporary file are gone. */
	list = th_listing(dir, true, ' ');
	ck_assert_msg(!strncmp(list, "t.vcd", 5) || strstr(list, " t.vcd"), "%s", list);
	ck_assert_ptr_null(strstr(list, "lab.html"));
	ck_assert_ptr_null(strstr(list, ".tmp."));
	free(list);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *fsx_suite(void)
{
	Suite *s = suite_create("fsx");
	TCase *t = tcase_create("fsx");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, fnv_vectors);
	tcase_add_test(t, read_at_the_bound);
	tcase_add_test(t, atomic_write_and_its_temporary_name);
	tcase_add_test(t, own_files_replace_what_outputs_write_through);
	tcase_add_test(t, clean_tmp_removes_the_dead_writers_files);
	tcase_add_test(t, mkdirs_and_writable);
	tcase_add_test(t, failed_writes_are_exit_1);
	suite_add_tcase(s, t);
	return s;
}
