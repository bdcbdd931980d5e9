/*
 * outdir.c - the crash-safe directory of a run's reports (see outdir.h).
 */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"
#include "limit.h"

#define OUTDIR_META ".tpusim"
#define OUTDIR_CURRENT "current"
#define OUTDIR_TMP "link.tmp"
#define OUTDIR_TARGET_MAX 256     /* a link's target: OUTDIR_META "/" OUTDIR_CURRENT "/" and a file's name */

/* The test hook of outdir.h: stops the process at step when TPUSIM_TEST_PAUSE_COMMIT names it. */
static void pause_at(const char *step)
{
	const char *want = getenv("TPUSIM_TEST_PAUSE_COMMIT");
	if (want && !strcmp(want, step))
		raise(SIGSTOP);
}

/* An input error "<path>: <what>, found <strerror(err)>", the path quoted. */
static int path_err(struct err *e, const char *path, const char *what, int err)
{
	char q[LIMIT_QUOTE_BUF];
	return err_input(e, "%s: %s, found %s", err_quote(q, sizeof q, path, LIMIT_PATH), what, strerror(err));
}

/* The error of a report name in DIR that is a directory: nothing can be linked there. */
static int dir_in_way(struct err *e, const char *path)
{
	char q[LIMIT_QUOTE_BUF];
	return err_input(e, "%s: expected a file or nothing there, found a directory", err_quote(q, sizeof q, path, LIMIT_PATH));
}

/* Writes f's text to its name in the directory dfd (a new file, mode 0644). */
static int write_file(int dfd, const char *dir, const struct outdir_file *f, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	int fd = openat(dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FILE *fp;
	snprintf(path, sizeof path, "%s/%s", dir, f->name);
	if (fd < 0)
		return path_err(e, path, "expected to create the report", errno);
	fchmod(fd, 0644);
	if (!(fp = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		return path_err(e, path, "expected to create the report", err);
	}
	f->write(fp, f->arg);
	if (ferror(fp) | (fclose(fp) != 0))
		return fsx_write_error(e, "-o", path, errno);
	return 0;
}

/* Whether the link name in dfd reads target. */
static bool link_is(int dfd, const char *name, const char *target)
{
	char buf[256];
	ssize_t n = readlinkat(dfd, name, buf, sizeof buf - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

/* Puts a link name -> target into dfd in one step: made as OUTDIR_TMP in gfd, then renamed. */
static int put_link(int gfd, int dfd, const char *name, const char *target)
{
	unlinkat(gfd, OUTDIR_TMP, 0);
	if (symlinkat(target, gfd, OUTDIR_TMP) != 0)
		return -1;
	return renameat(gfd, OUTDIR_TMP, dfd, name);
}

/* The name current points at, in buf ("" if none). */
static const char *current_gen(int tfd, char *buf, size_t size)
{
	ssize_t n = readlinkat(tfd, OUTDIR_CURRENT, buf, size - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* Removes the gen directory name in tfd (its files; it holds no directories), whose lock the caller holds. */
static void remove_gen(int tfd, int gfd, const char *name)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(gfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(gfd, de->d_name, 0);
	closedir(d);
	unlinkat(tfd, name, AT_REMOVEDIR);
}

/*
 * Removes every gen directory that is neither current nor locked. A pass that
 * saw current change may have skipped a directory that a later commit made
 * old, so passes repeat until current stays the same over a whole pass.
 */
static void cleanup(int tfd)
{
	char before[256], after[256];
	for (int pass = 0; pass < 8; pass++) {
		DIR *d;
		struct dirent *de;
		int fd = dup(tfd);
		current_gen(tfd, before, sizeof before);
		if (fd < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			return;
		}
		while ((de = readdir(d))) {
			char cur[256];
			int gfd;
			if (strncmp(de->d_name, "gen-", 4) || !strcmp(de->d_name, before))
				continue;
			gfd = openat(tfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (gfd < 0)
				continue;
			/* Under the lock, current is read again: a gen that became current stays. */
			if (flock(gfd, LOCK_EX | LOCK_NB) == 0 && strcmp(current_gen(tfd, cur, sizeof cur), de->d_name))
				remove_gen(tfd, gfd, de->d_name);
			close(gfd);
		}
		closedir(d);
		if (!strcmp(current_gen(tfd, after, sizeof after), before))
			return;
	}
}

/*
 * A fresh gen directory in tfd, locked: its fd, and its name in name. A
 * cleanup may remove the directory between mkdtemp and flock (it is not yet
 * locked); then it has no links left and another is made.
 */
static int new_gen(const char *meta, int tfd, char *name, size_t size)
{
	char path[LIMIT_PATH_BUF];
	for (int tries = 0; tries < 100; tries++) {
		struct stat st;
		int gfd;
		snprintf(path, sizeof path, "%s/gen-XXXXXX", meta);
		if (!mkdtemp(path))
			return -1;
		snprintf(name, size, "%s", strrchr(path, '/') + 1);
		gfd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0)
			continue;
		if (flock(gfd, LOCK_EX) == 0 && fstat(gfd, &st) == 0 && st.st_nlink > 0) {
			fchmod(gfd, 0755);
			return gfd;
		}
		close(gfd);
	}
	errno = EAGAIN;
	return -1;
}

/* The link target of a file in DIR: OUTDIR_META/OUTDIR_CURRENT/name, in buf. */
static const char *target_of(const struct outdir_file *f, char *buf, size_t size)
{
	snprintf(buf, size, OUTDIR_META "/" OUTDIR_CURRENT "/%s", f->name);
	return buf;
}

/*
 * Makes the set files in DIR the links into current. Nothing to do in the
 * steady state. Otherwise (missing; a file or another link, which
 * outdir_check refused before the run unless it came since)
 * the order keeps every instant consistent: all but the first go, then the
 * first is put, then the others; with layers.csv and summary.json, DIR shows
 * the old pair, one old file, one new file or the new pair, never two runs'
 * files.
 */
static int put_links(int gfd, int dfd, const char *dir, const struct outdir_file *files, int n, struct err *e)
{
	char target[OUTDIR_MAX_FILES][OUTDIR_TARGET_MAX], path[LIMIT_PATH_BUF];
	bool ok[OUTDIR_MAX_FILES];
	const struct outdir_file *set[OUTDIR_MAX_FILES];
	int k = 0, bad;
	for (int i = 0; i < n; i++)
		if (!files[i].optional)
			set[k++] = &files[i];
	for (int j = 0; j < k; j++)
		ok[j] = link_is(dfd, set[j]->name, target_of(set[j], target[j], sizeof target[j]));
	if (k && !ok[0]) {
		for (int j = 1; j < k; j++) {
			if (unlinkat(dfd, set[j]->name, 0) != 0 && errno != ENOENT) {
				bad = j;
				goto fail;
			}
			ok[j] = false;
		}
		pause_at("unlinked");
		if (put_link(gfd, dfd, set[0]->name, target[0]) != 0) {
			bad = 0;
			goto fail;
		}
		pause_at("linked");
	}
	for (int j = 1; j < k; j++) {
		if (!ok[j] && put_link(gfd, dfd, set[j]->name, target[j]) != 0) {
			bad = j;
			goto fail;
		}
	}
	return 0;
fail:
	snprintf(path, sizeof path, "%s/%s", dir, set[bad]->name);
	return path_err(e, path, "expected to link the report into place", errno);
}

int outdir_commit(const char *dir, const struct outdir_file *files, int n, struct err *e)
{
	char path[8192], meta[8192], gen[64], link[128];
	int dfd = -1, tfd = -1, gfd = -1, rc = -1;
	bool made_dir = false, made_meta = false, committed = false;
	struct stat st;

	SIM_ASSERT(n >= 0 && n <= OUTDIR_MAX_FILES);
	for (int i = 0; i < n; i++)
		SIM_ASSERT(files[i].optional || files[i].write);
	if (!*dir)
		return err_input(e, "-o: expected a directory path, found \"\"");
	if (strlen(dir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a directory path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(dir));
	snprintf(path, sizeof path, "%s", dir);
	if (fsx_mkdirs(path, &made_dir) != 0) {
		if (errno == ENOTDIR && stat(dir, &st) == 0)
			return err_input(e, "%s: expected a directory for the reports, found a file",
					 err_quote(meta, sizeof meta, dir, LIMIT_PATH));
		return path_err(e, dir, "expected a directory that can be created", errno);
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		path_err(e, dir, "expected a directory that can be opened", errno);
		goto out;
	}
	/* Nothing changes unless every name written can be a link. */
	for (int i = 0; i < n; i++) {
		if (!files[i].write)
			continue;
		if (fstatat(dfd, files[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
			dir_in_way(e, path);
			goto out;
		}
	}
	snprintf(meta, sizeof meta, "%s/" OUTDIR_META, dir);
	if (mkdirat(dfd, OUTDIR_META, 0755) == 0)
		made_meta = true;
	else if (errno != EEXIST) {
		path_err(e, meta, "expected a directory that can be created", errno);
		goto out;
	}
	if ((tfd = openat(dfd, OUTDIR_META, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		path_err(e, meta, "expected a directory of tpusim's reports", errno);
		goto out;
	}
	if ((gfd = new_gen(meta, tfd, gen, sizeof gen)) < 0) {
		path_err(e, meta, "expected a writable directory", errno);
		goto out;
	}
	snprintf(path, sizeof path, "%s/%s", meta, gen);
	for (int i = 0; i < n; i++)
		if (files[i].write && write_file(gfd, path, &files[i], e) < 0)
			goto out;
	pause_at("written");
	/*
	 * The links first, still showing the old current (or nothing), so that a
	 * set file that is not a link cannot sit beside the new ones. An
	 * optional file: a link into current when written; when not, an old link
	 * goes before the commit, so that it never shows another run's file
	 * beside this run's.
	 */
	if (put_links(gfd, dfd, dir, files, n, e) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		char target[OUTDIR_TARGET_MAX];
		bool want = files[i].write != NULL;
		if (!files[i].optional)
			continue;
		target_of(&files[i], target, sizeof target);
		if (want != link_is(dfd, files[i].name, target) &&
		    (want ? put_link(gfd, dfd, files[i].name, target) : unlinkat(dfd, files[i].name, 0)) != 0) {
			snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
			path_err(e, path, "expected to link the report into place", errno);
			goto out;
		}
	}
	/* The commit: one rename of a link made inside the gen directory. */
	snprintf(link, sizeof link, "%s", gen);
	if (symlinkat(link, gfd, OUTDIR_TMP) != 0) {
		int err = errno;
		if (err == EPERM || err == EOPNOTSUPP)
			err_input(e, "%s: expected a file system that supports symbolic links (the reports are links), found %s",
				  err_quote(path, sizeof path, dir, LIMIT_PATH), strerror(err));
		else
			path_err(e, meta, "expected to link the report", err);
		goto out;
	}
	if (renameat(gfd, OUTDIR_TMP, tfd, OUTDIR_CURRENT) != 0) {
		snprintf(path, sizeof path, "%s/" OUTDIR_CURRENT, meta);
		path_err(e, path, "expected to commit the report", errno);
		goto out;
	}
	committed = true;
	pause_at("committed");
	rc = 0;
out:
	if (gfd >= 0) {
		if (!committed)
			remove_gen(tfd, gfd, gen);
		close(gfd);
	}
	if (tfd >= 0) {
		pause_at("cleanup");
		cleanup(tfd);
		close(tfd);
	}
	/* A failed run leaves no directory it made (unless another run now uses it). */
	if (rc < 0 && !committed) {
		if (made_meta)
			unlinkat(dfd, OUTDIR_META, AT_REMOVEDIR);
		if (made_dir)
			rmdir(dir);
	}
	if (dfd >= 0)
		close(dfd);
	return rc;
}

int outdir_check(const char *dir, const char *const *names, int n, struct err *e)
{
	char path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], qd[LIMIT_QUOTE_BUF], target[OUTDIR_TARGET_MAX];
	struct stat st;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		snprintf(target, sizeof target, OUTDIR_META "/" OUTDIR_CURRENT "/%s", names[i]);
		if (lstat(path, &st) != 0 || link_is(AT_FDCWD, path, target))
			continue;
		if (S_ISDIR(st.st_mode))
			return dir_in_way(e, path);
		return err_input(e, "-o: expected no file of another at \"%s\" (tpusim keeps its link into %s/" OUTDIR_META
				 " there), found %s", err_quote(q, sizeof q, path, LIMIT_PATH),
				 err_quote(qd, sizeof qd, dir, LIMIT_PATH), S_ISREG(st.st_mode) ? "a regular file" :
				 S_ISLNK(st.st_mode) ? "another link" : "another file");
	}
	return 0;
}
