/*
 * sweep.h - design-space sweeps: a spec of configs, workloads and axes, run
 * point by point through the one-run path (api.h), resumable.
 *
 * The spec (YAML):
 *
 *     configs: [configs/tpu_v4_mxu.yaml]      # base, then overlays, as -c
 *     workloads: [configs/workloads/mlp.yaml]
 *     axes:
 *       array.rows: [8, 16, 32]               # any config key, or a run option: model, dataflow, batch
 *       array.cols: {from: 8, to: 32, times: 2}
 *       dataflow: [ws, os]
 *     zip: [[array.rows, array.cols]]          # these move together
 *
 * Points: every workload (outermost), then the cartesian product of the axes
 * in the spec's order, the last varying fastest; a zip group is one factor,
 * at the place of its first axis. A range is {from, to, times: T} (from,
 * from x T, ... up to to) or {from, to, step: S}, of integers.
 *
 * sweep_load reads the spec and loads every point (config, workload, lowering)
 * before anything runs, so that bad input is a positioned error up front.
 * sweep_run runs the points in worker processes; each point's summary.json
 * text lands atomically in DIR/points/<hash>.json (or its one-line error in
 * <hash>.err), named by sweep_hash_text; points already there are not run
 * again. Then DIR/sweep.csv is built, atomically, from the point files only.
 *
 * On a cluster, many processes on many hosts share one DIR: each runs a range
 * of points (sweep_load_points, sweep_run_points) and writes point files only,
 * never sweep.csv. Points are numbered from 0 in the order of sweep.csv's rows.
 * Every file is written to a temporary name in its directory, unique per host
 * and process (".<name>.tmp.<host>.<pid>"), then renamed; a run removes only
 * the temporary files of its own host's processes that are gone. sweep_emit
 * writes the jobs (one per chunk of points) for GNU parallel or a Slurm job
 * array; sweep_merge builds sweep.csv from whatever point files exist and lists
 * the points without one.
 *
 * The record. Every run and every emit writes, in DIR, what a later merge (and
 * the emitted jobs) need to find the same points without the user naming the
 * spec again:
 *
 *     DIR/sweep.yaml   the spec, byte for byte as it was read
 *     DIR/sweep.cwd    the absolute working directory the spec's relative
 *                      paths (configs, workloads) are resolved from, then a
 *                      line break
 *
 * Every relative path of a spec is from the working directory the sweep was
 * started in (never the spec's own directory), on every route: a config item
 * as -c takes it (a file there of that name, else a preset of that name), a
 * workload as the file there. A merge resolves them from sweep.cwd.
 *
 * A copy, not the spec's path: jobs waiting in a queue and a merge later all
 * see the spec that was checked, whatever happens to the original. The config
 * and workload files are read again from their places, and must not change
 * in between (a point's name covers their content: a changed file shows its
 * points as missing).
 */
#ifndef TPUSIM_SWEEP_H
#define TPUSIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "limit.h"

#define SWEEP_CHUNK_DEFAULT 10      /* points per emitted job, raised so that there are at most SWEEP_MAX_CHUNKS */
#define SWEEP_MERGE_LIST 20         /* missing points sweep_merge lists one by one */

struct run_option;

struct sweep_axis {
	const char *name;               /* as written in the spec (borrowed from the document) */
	const struct run_option *opt;   /* a run option (options.h, OPT_IN_SWEEP), or NULL: a config key */
	size_t n;
	char **values;                  /* n texts */
	bool *quoted;                   /* n: written in quotes */
	struct pos *at;                 /* n: where each value is (a range's: the range's) */
	int group;                      /* its zip group, or -1 */
};

struct ydoc;

struct sweep {
	struct ydoc *doc;
	const char *configs[8];
	int nconfigs;
	const char *workloads[SWEEP_MAX_WORKLOADS];
	char *wtext[SWEEP_MAX_WORKLOADS];   /* each workload file's content */
	size_t wlen[SWEEP_MAX_WORKLOADS];
	int nworkloads;
	struct sweep_axis axes[SWEEP_MAX_AXES];
	int naxes;
	int factor[SWEEP_MAX_AXES];     /* each axis's factor of the product (axes of one zip group share one) */
	size_t factor_n[SWEEP_MAX_AXES];
	int nfactors;
	size_t npoints;
	size_t first, last;             /* the points loaded: hash[first..last] are set */
	uint64_t *hash;                 /* npoints */
	char *text;                     /* the spec file's bytes, as read (owned; the record's copy) */
	size_t text_len;
	char *cpath[8];                 /* each config file as opened (owned): under the base directory when relative */
	char *wpath[SWEEP_MAX_WORKLOADS];   /* each workload file as opened (owned); workloads[] keep the spec's text */
	char *base;                     /* the directory relative files are under (owned), or NULL: the working one */
	bool no_reuse;                  /* set by the caller: simulate every op (run.h); emitted jobs pass --no-reuse */
};

/* Reads the spec at path and loads every point. On error sw holds nothing to release. */
int sweep_load(struct sweep *sw, const char *path, struct err *e);

/*
 * As sweep_load, but loads (and checks) only points first..last, numbered from
 * 0; the spec itself is read and checked whole. A range outside the spec's
 * points is an input error naming --points.
 */
int sweep_load_points(struct sweep *sw, const char *path, size_t first, size_t last, struct err *e);

/* Loads every point of the sweep recorded in dir (see the record, above). */
int sweep_open(struct sweep *sw, const char *dir, struct err *e);

void sweep_release(struct sweep *sw);

/* Point p's workload index and each axis's value index (vidx has naxes entries). */
void sweep_point(const struct sweep *sw, size_t p, int *workload, size_t *vidx);

/*
 * The point's file name stem: FNV-1a 64 over tpusim's version, the resolved
 * config (every key, as config --dump prints them), the workload file's
 * content, the model, the dataflow and the batch, as 16 hex digits.
 */
void sweep_hash_text(uint64_t h, char out[17]);

/* What sweep_run reports once at the start (point -1), after each point, and once at the end (finished). */
struct sweep_progress {
	size_t total, done, failed;     /* done counts the points found already done */
	size_t resumed;                 /* points found done at the start */
	long point;                     /* the point just finished, or -1 */
	bool point_failed;
	const char *hash;               /* its file stem */
	double elapsed;                 /* seconds since the start */
	bool finished;                  /* the last report, once the workers have exited (point -1): */
	int workers;                    /* the workers started, */
	long worker_rss_kib[SWEEP_MAX_JOBS];    /* and each one's peak resident memory */
};

/*
 * Runs the points not done yet in jobs worker processes (1..64), calling
 * progress (may be NULL) in this process, then writes DIR/sweep.csv. A point
 * that fails is recorded in its .err file and in the csv, and counted in
 * *failed (with those found failed); the others go on. Done means a point
 * file that is a record: any other file in its place (not a regular file, or
 * not what a run writes) is run again and replaced.
 *
 * The directory. The record is written first, or, when DIR holds one, must
 * be this spec's (its bytes) from this working directory: another spec's
 * sweep is an input error, and nothing there changes. DIR/sweep.lock (flock)
 * is held for the whole run, alone; a directory another process holds (a
 * sweep, --points jobs, a merge) is an input error. Needs every point
 * loaded. Returns 0, or -1 with e set (those, an output that cannot be
 * written, a worker that died).
 */
int sweep_run(const struct sweep *sw, const char *dir, int jobs,
	      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, size_t *failed, struct err *e);

/*
 * As sweep_run for the points loaded (sw->first..sw->last), and without
 * sweep.csv: what one job of many runs. progress counts those points only.
 * The lock is shared: many jobs run in one DIR at once, and a merge beside
 * them; a whole sweep or an emit does not.
 */
int sweep_run_points(const struct sweep *sw, const char *dir, int jobs,
		     void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, size_t *failed,
		     struct err *e);

/*
 * sweep.csv (sweep_csv.c), built from the point files only: a header, then
 * one row per point in point order, each
 *
 *     workload, the axes' values (in the spec's order), the columns below, point, status
 *
 * The columns below come from the point's summary.json, one table in
 * sweep_csv.c naming what each shows: a key at the record's top level (a
 * number of the design point, e.g. its area), or a field of the result field
 * table (stats.h) in "total", a field of parts giving a column per part
 * named by the field's csv pattern (cycles_by_category: cycles_compute, ...).
 * Each is copied as written, or divided (tops: ops/s over 1e12). point is the
 * point's file relative to DIR (points/<hash>.json, or .err for a failed
 * one; empty when missing). status is "ok", "missing" (no point file), or
 * the point's one-line error; the columns are empty unless it is ok.
 * sweepplot reads the columns by these names. A point file without one of
 * them is not a record (a file of an older tpusim): it is run again.
 */
enum sweep_csv_from { SWEEP_FROM_TOTAL, SWEEP_FROM_TOP };

struct sweep_csv_col {
	char name[40];                  /* the heading */
	int from;                       /* enum sweep_csv_from */
	const char *field;              /* SWEEP_FROM_TOTAL: the result field (stats.h; reported), its key in "total";
					   SWEEP_FROM_TOP: the key at the top level */
	int part;                       /* the field's part, or -1 (one value) */
	double div;                     /* 1: the value's text as written; else its value / div, as %.17g */
};

#define SWEEP_CSV_MAX_COLS 48

/* The columns (built once from the table and result_fields), and how many. */
const struct sweep_csv_col *sweep_csv_cols(void);
int sweep_csv_ncols(void);

#define SWEEP_CSV_WORKLOAD "workload"   /* the first column */
#define SWEEP_CSV_POINT "point"         /* the one before the last */
#define SWEEP_CSV_STATUS "status"       /* the last one */

/* The index of column name in sweep_csv_cols, or -1. */
int sweep_csv_col(const char *name);

/* The columns' names, point, then status, joined by sep, into buf (truncated to size). */
void sweep_csv_names(const char *sep, char *buf, size_t size);

enum sweep_engine { SWEEP_PARALLEL, SWEEP_SLURM };
extern const char *const sweep_engine_names[];  /* "parallel", "slurm", NULL */

/*
 * Writes the jobs of a sweep with every point loaded, runs nothing: creates
 * DIR and DIR/points, writes the record (checked and locked as by
 * sweep_run), then chunks of `chunk` points
 * (0: SWEEP_CHUNK_DEFAULT, raised so that there are at most SWEEP_MAX_CHUNKS),
 * each one command
 *
 *     cd '<working directory>' && '<this tpusim>' sweep '<DIR>/sweep.yaml' -o '<DIR>' --points I-J
 *
 * with absolute paths (the binary is /proc/self/exe), so that a job runs the
 * same from any directory or host that sees the same paths.
 * SWEEP_PARALLEL: DIR/jobs.txt, one command a line, for GNU parallel, which
 * runs each line with a shell: a path with a line break (or another control
 * character) is an input error, before anything is created.
 * SWEEP_SLURM: DIR/sweep.sbatch, a job array (task K runs chunk K) logging to
 * DIR/logs/%A_%a.out; DIR/logs is created.
 * *howto (owned) gets the lines to print: what was written and the commands
 * to run it and then merge. Returns 0, or -1 with e set.
 */
int sweep_emit(const struct sweep *sw, const char *dir, enum sweep_engine engine, size_t chunk, char **howto,
	       struct err *e);

/*
 * Writes DIR/sweep.csv from the point files there (a point without one has
 * status "missing") for a sweep with every point loaded (sweep_open), with
 * DIR's lock shared (sweep_run_points). *report (owned) gets the lines to
 * print: the counts, then the first SWEEP_MERGE_LIST missing points (index,
 * the workload and axis values, the point file's stem) and "... and N more".
 * *missing and *failed get their numbers. A point file that is not a record
 * is an input error at its place. Returns 0 (missing and failed points are
 * not an error here: the caller decides), or -1 with e set.
 */
int sweep_merge(const struct sweep *sw, const char *dir, char **report, size_t *missing, size_t *failed,
		struct err *e);

#endif
