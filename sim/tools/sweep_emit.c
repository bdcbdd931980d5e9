/*
 * sweep_emit.c - a sweep on a cluster (see sweep.h): the jobs written for
 * GNU parallel or a Slurm job array (sweep_emit), and the merge of the point
 * files they leave into sweep.csv with a list of the points missing
 * (sweep_merge).
 */
#include "sweep_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"

const char *const sweep_engine_names[] = { "parallel", "slurm", NULL };

/* s as one shell word: in single quotes, each ' written '\''. */
static void sh_word(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* s in a command shown to the user: bare when the shell takes it as it is. */
static void sh_shown(FILE *f, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=+@%";
	if (*s && strspn(s, plain) == strlen(s))
		fputs(s, f);
	else
		sh_word(f, s);
}

/* dir + "/" + name, shown (see sh_shown). */
static void sh_shown_in(FILE *f, const char *dir, const char *name)
{
	char p[LIMIT_PATH_BUF];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	sh_shown(f, p);
}

/* A job's command up to its range of points: '<exe>' sweep '<dir>/sweep.yaml' -o '<dir>' --points */
static void job_command(FILE *f, const char *exe, const char *absdir, bool no_reuse)
{
	char spec[LIMIT_PATH_BUF];
	snprintf(spec, sizeof spec, "%s/sweep.yaml", absdir);
	sh_word(f, exe);
	fputs(" sweep ", f);
	sh_word(f, spec);
	fputs(" -o ", f);
	sh_word(f, absdir);
	fputs(no_reuse ? " --no-reuse --points " : " --points ", f);
}

/* A text built in memory: the stream, then its buffer (owned) once closed. */
struct mtext {
	FILE *f;
	char *text;
	size_t len;
};

static int mtext_close(struct mtext *m, struct err *e)
{
	if (ferror(m->f) | (fclose(m->f) != 0)) {
		free(m->text);
		m->text = NULL;
		return err_nomem(e, NULL);
	}
	return 0;
}

/* Whether Slurm can take dir in #SBATCH --output: the lines are split at blanks, and % starts a pattern. */
static int slurm_path_check(const char *dir, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	for (const char *c = dir; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || strchr("%\\\"'", *c))
			return err_input(e, "-o: expected a directory Slurm can log under (no blanks, quotes, %% or \\ in its "
					 "absolute path), found \"%s\"", err_quote(q, sizeof q, dir, LIMIT_PATH));
	return 0;
}

/*
 * Whether path can be put on a line of jobs.txt: GNU parallel reads a job a
 * line, so a line break would split a job, and what follows it would run as
 * a command of its own. Control characters are refused with it: none
 * belongs in a path a job names. what: "-o: expected a directory", ...
 */
static int one_line(const char *what, const char *path, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return err_input(e, "%s whose %spath fits on a line of jobs.txt (no line break or other control "
					 "character), found \"%s\"", what, strncmp(what, "-o", 2) ? "" : "absolute ",
					 err_quote(q, sizeof q, path, LIMIT_PATH));
	return 0;
}

/* Writes the jobs (see sweep_emit) into dir, whose lock is held. */
static int emit_jobs(const struct sweep *sw, const char *dir, enum sweep_engine engine, size_t chunk, size_t nchunks,
		     const char *exe, const char *cwd, struct err *e)
{
	char absdir[LIMIT_PATH_BUF], path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	struct mtext job = { 0 };
	size_t last = sw->npoints - 1;
	errno = 0;
	if (!realpath(dir, absdir) || strlen(absdir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a directory with an absolute path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found \"%s\" "
				 "(%s)", err_quote(q, sizeof q, dir, LIMIT_PATH), strerror(errno ? errno : ENAMETOOLONG));
	/* As it is now, links resolved: checked again. */
	if (engine == SWEEP_SLURM) {
		snprintf(path, sizeof path, "%s/logs", absdir);
		if (slurm_path_check(absdir, e) < 0 || sweep_make_dir(path, e) < 0)
			return -1;
	} else if (one_line("-o: expected a directory", absdir, e) < 0) {
		return -1;
	}
	if (!(job.f = open_memstream(&job.text, &job.len)))
		return err_nomem(e, NULL);
	if (engine == SWEEP_SLURM) {
		fprintf(job.f, "#!/bin/sh\n"
			"# A tpusim sweep as a Slurm job array: %zu points in %zu chunks of up to %zu; array task K runs\n"
			"# points K*%zu to K*%zu+%zu (at most %zu), numbered from 0 as the rows of sweep.csv. Submit with\n"
			"# sbatch; when every task is done, tpusim sweep --merge builds sweep.csv and lists what is missing.\n"
			"#SBATCH --job-name=tpusim-sweep\n#SBATCH --array=0-%zu\n#SBATCH --ntasks=1\n"
			"#SBATCH --cpus-per-task=1\n#SBATCH --output=%s/logs/%%A_%%a.out\n"
			": \"${SLURM_ARRAY_TASK_ID:?expected a task of the job array: submit this with sbatch}\"\n"
			"first=$((SLURM_ARRAY_TASK_ID * %zu))\nlast=$((first + %zu))\n"
			"if [ \"$last\" -gt %zu ]; then last=%zu; fi\ncd ", sw->npoints, nchunks, chunk, chunk, chunk,
			chunk - 1, last, nchunks - 1, absdir, chunk, chunk - 1, last, last);
		sh_word(job.f, cwd);
		fputs(" || exit 1\nexec ", job.f);
		job_command(job.f, exe, absdir, sw->no_reuse);
		fputs("\"$first-$last\"\n", job.f);
	} else {
		for (size_t c = 0; c < nchunks; c++) {
			fputs("cd ", job.f);
			sh_word(job.f, cwd);
			fputs(" && ", job.f);
			job_command(job.f, exe, absdir, sw->no_reuse);
			fprintf(job.f, "%zu-%zu\n", c * chunk, c * chunk + chunk - 1 < last ? c * chunk + chunk - 1 : last);
		}
	}
	if (mtext_close(&job, e) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s", dir, engine == SWEEP_SLURM ? "sweep.sbatch" : "jobs.txt");
	int rc = fsx_write_atomic(path, job.text, job.len);
	free(job.text);
	if (rc < 0 || (engine == SWEEP_SLURM && chmod(path, 0755) < 0))
		return fsx_write_error(e, "-o", path, errno);
	return 0;
}

int sweep_emit(const struct sweep *sw, const char *dir, enum sweep_engine engine, size_t chunk, char **howto,
	       struct err *e)
{
	char absdir[LIMIT_PATH_BUF], exe[LIMIT_PATH_BUF], cwd[LIMIT_PATH_BUF];
	struct mtext how = { 0 };
	ssize_t n;
	int lock;
	size_t nchunks;

	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	*howto = NULL;
	if (!chunk) {
		chunk = SWEEP_CHUNK_DEFAULT;
		if ((sw->npoints + chunk - 1) / chunk > SWEEP_MAX_CHUNKS)
			chunk = (sw->npoints + SWEEP_MAX_CHUNKS - 1) / SWEEP_MAX_CHUNKS;
	}
	nchunks = (sw->npoints + chunk - 1) / chunk;
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0 || (size_t)n >= sizeof exe - 1)
		return err_sim(e, "sweep: expected the path of this program in /proc/self/exe, found %s",
			       n < 0 ? strerror(errno) : "none");
	exe[n] = 0;
	if (sweep_work_dir(sw, cwd, sizeof cwd, e) < 0)
		return -1;
	/* Before anything is created, as DIR will be seen from the working directory; then as it is. */
	snprintf(absdir, sizeof absdir, "%s%s%s", dir[0] == '/' ? "" : cwd, dir[0] == '/' ? "" : "/", dir);
	if (engine == SWEEP_SLURM && slurm_path_check(absdir, e) < 0)
		return -1;
	if (engine == SWEEP_PARALLEL && (one_line("sweep: expected a working directory", cwd, e) < 0 ||
					 one_line("-o: expected a directory", absdir, e) < 0 ||
					 one_line("sweep: expected this program at a path", exe, e) < 0))
		return -1;
	if ((lock = sweep_dir_prepare(sw, dir, SWEEP_ALONE, e)) < 0)
		return -1;
	int rc = emit_jobs(sw, dir, engine, chunk, nchunks, exe, cwd, e);
	close(lock);
	if (rc < 0)
		return -1;

	if (!(how.f = open_memstream(&how.text, &how.len)))
		return err_nomem(e, NULL);
	fputs("wrote ", how.f);
	if (engine == SWEEP_SLURM) {
		sh_shown_in(how.f, dir, "sweep.sbatch");
		fprintf(how.f, ": %zu points in %zu array tasks of up to %zu points, logs in ", sw->npoints, nchunks, chunk);
		sh_shown_in(how.f, dir, "logs/");
		fputs("\nsubmit it:\n  sbatch ", how.f);
		sh_shown_in(how.f, dir, "sweep.sbatch");
		if (nchunks > SWEEP_SLURM_MAX_ARRAY)
			fprintf(how.f, "\n(%zu tasks: Slurm refuses arrays larger than its MaxArraySize, 1001 by default; a larger "
				"--chunk-size makes fewer)", nchunks);
		fputs("\nwhen its tasks are done, build ", how.f);
	} else {
		sh_shown_in(how.f, dir, "jobs.txt");
		fprintf(how.f, ": %zu points in %zu jobs of up to %zu points\n"
			"run them here, %ld at a time (the same command again resumes after a stop):\n"
			"  parallel --joblog ", sw->npoints, nchunks, chunk, sysconf(_SC_NPROCESSORS_ONLN));
		sh_shown_in(how.f, dir, "joblog");
		fprintf(how.f, " --resume -j %ld < ", sysconf(_SC_NPROCESSORS_ONLN));
		sh_shown_in(how.f, dir, "jobs.txt");
		fputs("\nor on many hosts, one ssh login a line in hosts.txt (each seeing this directory, the working\n"
		      "directory and tpusim at the same paths):\n  parallel --joblog ", how.f);
		sh_shown_in(how.f, dir, "joblog");
		fputs(" --resume --sshloginfile hosts.txt < ", how.f);
		sh_shown_in(how.f, dir, "jobs.txt");
		fputs("\nthen build ", how.f);
	}
	sh_shown_in(how.f, dir, "sweep.csv");
	fputs(" from the point files, listing any missing:\n  ", how.f);
	sh_shown(how.f, exe);
	fputs(" sweep --merge ", how.f);
	sh_shown(how.f, dir);
	fputc('\n', how.f);
	if (mtext_close(&how, e) < 0)
		return -1;
	*howto = how.text;
	return 0;
}

int sweep_merge(const struct sweep *sw, const char *dir, char **report, size_t *missing, size_t *failed,
		struct err *e)
{
	struct mtext r = { 0 };
	size_t nst[3] = { 0 }, listed = 0;
	unsigned char *st;
	char q[LIMIT_QUOTE_BUF];
	int lock, rc;

	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	*report = NULL;
	*missing = *failed = 0;
	if (!(st = malloc(sw->npoints)))
		return err_nomem(e, NULL);
	/* Beside --points jobs that still run (what is done so far), never beside a whole sweep. */
	if ((lock = sweep_lock(dir, SWEEP_SHARED, "--merge", e)) < 0) {
		free(st);
		return -1;
	}
	rc = sweep_csv_write(sw, dir, st, e);
	close(lock);
	if (rc < 0 || !(r.f = open_memstream(&r.text, &r.len))) {
		free(st);
		return e->kind != ERR_NONE ? -1 : err_nomem(e, NULL);
	}
	for (size_t p = 0; p < sw->npoints; p++)
		nst[st[p]]++;
	fprintf(r.f, "wrote %s/sweep.csv: %zu points, %zu ok, %zu failed, %zu missing\n", err_quote(q, sizeof q, dir, LIMIT_PATH),
		sw->npoints, nst[SWEEP_OK], nst[SWEEP_FAILED], nst[SWEEP_MISSING]);
	if (nst[SWEEP_MISSING])
		fputs("missing (index from 0, as the rows of sweep.csv: workload and axes, point file):\n", r.f);
	for (size_t p = 0; p < sw->npoints && listed < SWEEP_MERGE_LIST; p++) {
		size_t vidx[SWEEP_MAX_AXES];
		char stem[17];
		int widx;
		if (st[p] != SWEEP_MISSING)
			continue;
		listed++;
		sweep_point(sw, p, &widx, vidx);
		sweep_hash_text(sw->hash[p], stem);
		fprintf(r.f, "  %zu: workload=%s", p, err_quote(q, sizeof q, sw->workloads[widx], 200));
		for (int i = 0; i < sw->naxes; i++) {
			fprintf(r.f, " %s=", err_quote(q, sizeof q, sw->axes[i].name, 200));
			fputs(err_quote(q, sizeof q, sw->axes[i].values[vidx[i]], 200), r.f);
		}
		fprintf(r.f, " (%s)\n", stem);
	}
	if (nst[SWEEP_MISSING] > listed)
		fprintf(r.f, "  ... and %zu more\n", nst[SWEEP_MISSING] - listed);
	free(st);
	if (mtext_close(&r, e) < 0)
		return -1;
	*report = r.text;
	*missing = nst[SWEEP_MISSING];
	*failed = nst[SWEEP_FAILED];
	return 0;
}
