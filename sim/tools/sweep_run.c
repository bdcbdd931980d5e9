/*
 * sweep_run.c - running a sweep's points (see sweep.h): worker processes,
 * each taking runs of consecutive points and writing one file per point;
 * the points already done skipped (resume); a worker killed while it ran a
 * point leaves that point failed and the rest to a new round; progress
 * reported in the calling process.
 */
#include "sweep_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "fsx.h"
#include "opcache.h"
#include "stop.h"

/* The file of point p that ends in ext ("json", "err") into path. */
static void point_path(const struct sweep *sw, size_t p, const char *dir, const char *ext, char *path, size_t size)
{
	char stem[17];
	sweep_hash_text(sw->hash[p], stem);
	snprintf(path, size, "%s/points/%s.%s", dir, stem, ext);
}

/*
 * Runs point p and writes its file; returns SWEEP_OK or SWEEP_FAILED, or -1 with
 * errno when the file cannot be written (*json: whether it was the .json).
 * cache: the worker's results of ops (opcache.h), or NULL when reuse is off.
 */
static int point_run(const struct sweep *sw, size_t p, const char *dir, struct opcache *cache, bool *json)
{
	struct sim_request rq;
	struct sim *s = calloc(1, sizeof *s);
	struct err e = { 0 };
	char path[LIMIT_PATH_BUF], *text = NULL;
	int widx, rc;
	if (!s)
		err_nomem(&e, NULL);
	else if (sweep_request(sw, p, &rq, &widx, &e) == 0 && (rq.cache = cache, rq.no_reuse = sw->no_reuse,
								 sim_load(s, &rq, "sweep", &e) == 0)) {
		if (sim_run(s, &e) == 0 && !(text = sim_summary_json(s)))
			err_nomem(&e, NULL);
		sim_release(s);
	}
	free(s);
	if ((*json = text != NULL)) {
		point_path(sw, p, dir, "json", path, sizeof path);
		rc = fsx_write_own(path, text, strlen(text)) < 0 ? -1 : SWEEP_OK;
		int er = errno;
		free(text);
		errno = er;
		return rc;
	}
	for (char *c = e.msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	/* One line: the message, cut to leave room for its line break and the NUL after it. */
	size_t n = strlen(e.msg);
	n = n < ERR_MSG_MAX - 2 ? n : ERR_MSG_MAX - 2;
	e.msg[n] = '\n';
	e.msg[n + 1] = '\0';
	point_path(sw, p, dir, "err", path, sizeof path);
	return fsx_write_own(path, e.msg, strlen(e.msg)) < 0 ? -1 : SWEEP_FAILED;
}

/*
 * What a worker tells the sweep: it starts a point, has finished one (ok or
 * failed), or could not write its file (the .json or the .err; err: errno).
 */
enum { M_START, M_OK, M_FAILED, M_UNWRITTEN_JSON, M_UNWRITTEN_ERR };

struct done_msg {
	uint32_t point;
	uint16_t worker;
	uint16_t what;
	int32_t err;
};

/*
 * The points a worker takes: runs of `chunk` consecutive points (the fastest
 * factor's values, so that points that differ only there, as an energy axis
 * does, meet in one worker's cache), dealt to the workers in turn.
 */
static size_t chunk_of(const struct sweep *sw)
{
	return sw->nfactors ? sw->factor_n[sw->nfactors - 1] : 1;
}

/*
 * A worker: the loaded points of its chunks that are not done; each point
 * announced on fd before it runs and reported after.
 */
static void worker(const struct sweep *sw, const char *dir, int jobs, int w, const bool *done, int fd, pid_t parent,
		   const sigset_t *unblocked)
{
	/* One cache for all the worker's points: ops reused within a point and across points. Out of memory: none. */
	struct opcache *cache = sw->no_reuse ? NULL : opcache_new();
	size_t chunk = chunk_of(sw);
	/*
	 * The default action, not the sweep's handler: a worker stopped is a point
	 * still to do (its files resumable). The parent forked with the two
	 * signals blocked, so none came between the fork and here; a stop the
	 * parent had recorded is the parent's (it stops the workers itself).
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	stop_clear();
	sigprocmask(SIG_SETMASK, unblocked, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	for (size_t p = sw->first; p <= sw->last; p++) {
		if (done[p] || (p - sw->first) / chunk % (size_t)jobs != (size_t)w)
			continue;
		struct done_msg m = { (uint32_t)p, (uint16_t)w, M_START, 0 };
		bool json;
		if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
			_exit(1);
		int rc = point_run(sw, p, dir, cache, &json);
		if (rc < 0) {
			m.what = json ? M_UNWRITTEN_JSON : M_UNWRITTEN_ERR;
			m.err = errno;
			_exit(write(fd, &m, sizeof m) == (ssize_t)sizeof m ? 2 : 1);
		}
		m.what = rc == SWEEP_FAILED ? M_FAILED : M_OK;
		if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
			_exit(1);
	}
	_exit(0);
}

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/*
 * Runs the loaded points not done yet (see sweep_run), using dir as use says;
 * the points failed (also those found failed) in *failed.
 */
static int run_points(const struct sweep *sw, const char *dir, int jobs, enum sweep_use use,
		      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, size_t *failed, struct err *e)
{
	char stem[17];
	struct timespec t0;
	struct sweep_progress pr = { 0 };
	struct sweep_row *row;
	bool *done;
	pid_t pids[SWEEP_MAX_JOBS], self = getpid();
	int fds[2], nw = 0, dead = 0, lock;
	bool stopped = false;

	SIM_ASSERT(jobs >= 1 && jobs <= SWEEP_MAX_JOBS);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*failed = 0;
	if ((lock = sweep_dir_prepare(sw, dir, use, e)) < 0)
		return -1;
	done = calloc(sw->npoints ? sw->npoints : 1, sizeof *done);
	row = malloc(sizeof *row);
	if (!done || !row) {
		free(done);
		free(row);
		close(lock);
		return err_nomem(e, NULL);
	}
	pr.total = sw->last - sw->first + 1;
	pr.point = -1;
	/* Done: a point with its record; a file there that is not one is run again (and replaced). */
	for (size_t p = sw->first; p <= sw->last; p++) {
		struct err ignored = { 0 };
		int st = sweep_row_read(dir, sw->hash[p], row, &ignored);
		done[p] = st == SWEEP_OK || st == SWEEP_FAILED;
		pr.resumed += done[p];
		pr.failed += st == SWEEP_FAILED;
	}
	pr.done = pr.resumed;
	if (progress)
		progress(ctx, &pr);
	/*
	 * Rounds of workers. A worker killed while it runs a point (by a signal:
	 * out of memory, a crash) leaves that point failed, with the signal in
	 * its .err file, and a new round runs the points still to do; a worker
	 * that exits with an error (a point file it could not write) fails the
	 * sweep.
	 */
	/*
	 * SIGINT and SIGTERM are held while the rounds run and taken only inside
	 * the wait for the workers' messages (ppoll), so a stop is seen however
	 * it falls: before a fork (no worker starts), between messages, or while
	 * waiting.
	 */
	sigset_t stops, unblocked;
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, &unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);
	for (bool again = true; again && e->kind == ERR_NONE && !stop_requested();) {
		long running[SWEEP_MAX_JOBS];
		int killed[SWEEP_MAX_JOBS] = { 0 };
		again = false;
		nw = 0;
		if (pipe2(fds, O_CLOEXEC) < 0) {
			err_sim(e, "sweep: expected a pipe to the workers, found %s", strerror(errno));
			break;
		}
		fflush(NULL);
		for (int w = 0; w < jobs && pr.done < pr.total && !stop_requested(); w++) {
			pid_t pid = fork();
			if (pid == 0) {
				close(fds[0]);
				worker(sw, dir, jobs, w, done, fds[1], self, &unblocked);
			}
			if (pid < 0) {
				err_sim(e, "sweep: expected to start worker %d, found %s", w, strerror(errno));
				break;
			}
			running[w] = -1;
			pids[nw++] = pid;
		}
		close(fds[1]);
		for (;;) {
			struct done_msg m;
			struct pollfd in = { fds[0], POLLIN, 0 };
			/* Asked to stop (stop.h): the workers are stopped too, and their pipe ends. */
			if (stop_requested() && !stopped) {
				stopped = true;
				for (int w = 0; w < nw; w++)
					kill(pids[w], SIGTERM);
			}
			if (ppoll(&in, 1, NULL, &unblocked) < 0 && errno == EINTR)
				continue;
			ssize_t r = read(fds[0], &m, sizeof m);
			if (r < 0 && errno == EINTR)
				continue;
			if (r != (ssize_t)sizeof m || m.worker >= nw || m.point < sw->first || m.point > sw->last)
				break;
			if (m.what == M_UNWRITTEN_JSON || m.what == M_UNWRITTEN_ERR) {
				char path[LIMIT_PATH_BUF];
				point_path(sw, m.point, dir, m.what == M_UNWRITTEN_JSON ? "json" : "err", path, sizeof path);
				if (e->kind == ERR_NONE)
					fsx_write_error(e, "-o", path, m.err);
				running[m.worker] = -1;
				continue;
			}
			if (m.what == M_START) {
				running[m.worker] = (long)m.point;
				continue;
			}
			running[m.worker] = -1;
			done[m.point] = true;
			pr.done++;
			pr.failed += m.what == M_FAILED;
			pr.point = (long)m.point;
			pr.point_failed = m.what == M_FAILED;
			sweep_hash_text(sw->hash[m.point], stem);
			pr.hash = stem;
			pr.elapsed = since(&t0);
			if (progress)
				progress(ctx, &pr);
		}
		close(fds[0]);
		pr.workers = nw;
		for (int w = 0; w < nw; w++) {
			int status;
			struct rusage ru;
			while (wait4(pids[w], &status, 0, &ru) < 0 && errno == EINTR)
				;
			if (WIFSIGNALED(status) && running[w] >= 0)
				killed[w] = WTERMSIG(status);
			else
				dead += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
			if (ru.ru_maxrss > pr.worker_rss_kib[w])
				pr.worker_rss_kib[w] = ru.ru_maxrss;
		}
		/* Stopped: the points that were running are still to do, as a new sweep will find them. */
		if (stop_requested()) {
			stop_error(e);
			break;
		}
		for (int w = 0; w < nw && !dead; w++) {
			size_t p = (size_t)running[w];
			char path[LIMIT_PATH_BUF], msg[200];
			if (!killed[w])
				continue;
			/* The point that was running: failed, unless its record made it before the signal. */
			struct err ignored = { 0 };
			int st = sweep_row_read(dir, sw->hash[p], row, &ignored);
			if (st == SWEEP_FAILED) {
				pr.failed++;
				pr.point_failed = true;
			} else if (st != SWEEP_OK) {
				snprintf(msg, sizeof msg, "sweep: the worker running this point was killed by signal %d (%s)\n",
					 killed[w], strsignal(killed[w]));
				point_path(sw, p, dir, "err", path, sizeof path);
				if (fsx_write_own(path, msg, strlen(msg)) < 0) {
					fsx_write_error(e, "-o", path, errno);
					break;
				}
				pr.failed++;
				pr.point_failed = true;
			} else {
				pr.point_failed = false;
			}
			done[p] = true;
			pr.done++;
			pr.point = (long)p;
			sweep_hash_text(sw->hash[p], stem);
			pr.hash = stem;
			pr.elapsed = since(&t0);
			if (progress)
				progress(ctx, &pr);
			again = pr.done < pr.total;
		}
		if (dead)
			break;
	}
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	if (stop_requested() && e->kind == ERR_NONE)
		stop_error(e);
	free(row);
	free(done);
	close(lock);
	*failed = pr.failed;
	pr.finished = true;
	pr.point = -1;
	pr.elapsed = since(&t0);
	if (progress && !dead && e->kind == ERR_NONE)
		progress(ctx, &pr);
	if (e->kind != ERR_NONE)
		return -1;
	if (dead)
		return err_sim(e, "sweep: expected every worker to finish, found %d that did not (a point file that cannot "
			       "be written?)", dead);
	return 0;
}

int sweep_run(const struct sweep *sw, const char *dir, int jobs,
	      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, size_t *failed, struct err *e)
{
	size_t missing = 0;
	unsigned char *st;
	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	if (run_points(sw, dir, jobs, SWEEP_ALONE, progress, ctx, failed, e) < 0)
		return -1;
	if (!(st = malloc(sw->npoints)))
		return err_nomem(e, NULL);
	int rc = sweep_csv_write(sw, dir, st, e);
	for (size_t p = 0; p < sw->npoints; p++)
		missing += st[p] == SWEEP_MISSING;
	free(st);
	if (rc == 0 && missing)
		return err_sim(e, "sweep: expected every point to have a result, found %zu without one", missing);
	return rc;
}

int sweep_run_points(const struct sweep *sw, const char *dir, int jobs,
		     void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, size_t *failed, struct err *e)
{
	return run_points(sw, dir, jobs, SWEEP_SHARED, progress, ctx, failed, e);
}
