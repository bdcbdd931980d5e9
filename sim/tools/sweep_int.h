/*
 * sweep_int.h - what the parts of the sweep share among themselves, not
 * outside: the spec (sweep_spec.c) gives each point's request and the
 * record's directory, the csv module (sweep_csv.c) reads a point's file and
 * writes sweep.csv, the run (sweep_run.c) and the emit and merge of cluster
 * jobs (sweep_emit.c) use both.
 */
#ifndef TPUSIM_SWEEP_INT_H
#define TPUSIM_SWEEP_INT_H

#include "sweep.h"

struct sim_request;

/* The whole file at path (owned), its length in *len, or NULL with e set at `at` (key: the spec's key, or NULL). */
char *sweep_slurp(const char *path, size_t *len, struct pos at, const char *key, struct err *e);

/*
 * Point p's request into *rq (borrowing sw's strings): the run options at
 * their defaults, then the axes' values; its workload's index in *widx.
 */
int sweep_request(const struct sweep *sw, size_t p, struct sim_request *rq, int *widx, struct err *e);

/* The working directory the spec's relative paths are from (sweep.h: the record's, or this process's) into buf. */
int sweep_work_dir(const struct sweep *sw, char *buf, size_t size, struct err *e);

/* mkdir path (one level) unless it is a writable directory already; an input error naming -o otherwise. */
int sweep_make_dir(const char *path, struct err *e);

/*
 * How a process uses a sweep's directory, held as a lock on DIR/sweep.lock
 * (flock) for as long as it does: a whole sweep or an emit alone, --points
 * jobs (many, on many hosts) and merges together.
 */
enum sweep_use { SWEEP_ALONE, SWEEP_SHARED };
#define SWEEP_LOCK "sweep.lock"

/* Takes dir's lock for use: its descriptor, to close when done, or -1 with e set (in use: an input error naming opt). */
int sweep_lock(const char *dir, enum sweep_use use, const char *opt, struct err *e);

/*
 * Creates dir and dir/points, takes dir's lock, checks the record there or
 * writes it (sweep.h), removes stale temporary files. Returns the lock's
 * descriptor, or -1 with e set (another spec's record: an input error).
 */
int sweep_dir_prepare(const struct sweep *sw, const char *dir, enum sweep_use use, struct err *e);

/* What a point's files say; SWEEP_INVALID: a file there that is not a point's record (not done). */
enum sweep_status { SWEEP_MISSING, SWEEP_OK, SWEEP_FAILED, SWEEP_INVALID };

/* A point's row of sweep.csv after the axes, as text, from its file. */
struct sweep_row {
	char val[SWEEP_CSV_MAX_COLS][40];       /* SWEEP_OK: each column of sweep_csv_cols */
	char err[ERR_MSG_MAX];          /* SWEEP_FAILED: the .err file's line */
};

/*
 * Reads the files of the point named h in dir/points: its status, and row
 * filled as it says; SWEEP_INVALID with e set at the file's place that is
 * not a record.
 */
enum sweep_status sweep_row_read(const char *dir, uint64_t h, struct sweep_row *row, struct err *e);

/*
 * Writes dir/sweep.csv from the point files; each point's status in st (NULL,
 * or npoints entries). A point file that is not a record is its error.
 */
int sweep_csv_write(const struct sweep *sw, const char *dir, unsigned char *st, struct err *e);

#endif
