/*
 * sweep.h - design-space sweeps: a spec of configs, workloads and axes, run
 * point by point through the one-run path (api.h), resumable.
 *
 * The spec (YAML):
 *
 *     configs: [configs/tpu_v4_mxu.yaml]      # base, then overlays, as -c
 *     workloads: [configs/workloads/mlp.yaml]
 *     axes:
 *       array.rows: [8, 16, 32]               # any config key, or dataflow, model, batch
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
 * <hash>.err), named by sweep_point_hash; points already there are not run
 * again. Then DIR/sweep.csv is built, atomically, from the point files only.
 */
#ifndef TPUSIM_SWEEP_H
#define TPUSIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define SWEEP_MAX_AXES 32
#define SWEEP_MAX_VALUES 4096
#define SWEEP_MAX_WORKLOADS 256
#define SWEEP_MAX_POINTS 1000000
#define SWEEP_MAX_JOBS 64

enum sweep_axis_kind { SWEEP_CONFIG, SWEEP_DATAFLOW, SWEEP_MODEL, SWEEP_BATCH };

struct sweep_axis {
	const char *name;               /* as written in the spec (borrowed from the document) */
	enum sweep_axis_kind kind;
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
	uint64_t *hash;                 /* npoints */
};

/* Reads the spec at path and loads every point. On error sw holds nothing to release. */
int sweep_load(struct sweep *sw, const char *path, struct err *e);

void sweep_release(struct sweep *sw);

/* Point p's workload index and each axis's value index (vidx has naxes entries). */
void sweep_point(const struct sweep *sw, size_t p, int *workload, size_t *vidx);

/*
 * The point's file name stem: FNV-1a 64 over tpusim's version, the resolved
 * config (every key, as config --dump prints them), the workload file's
 * content, the model, the dataflow and the batch, as 16 hex digits.
 */
void sweep_hash_text(uint64_t h, char out[17]);

/* What sweep_run reports after each point and once at the start (point -1). */
struct sweep_progress {
	size_t total, done, failed;     /* done counts the points found already done */
	size_t resumed;                 /* points found done at the start */
	long point;                     /* the point just finished, or -1 */
	bool point_failed;
	const char *hash;               /* its file stem */
	double elapsed;                 /* seconds since the start */
};

/*
 * Runs the points not done yet in jobs worker processes (1..64), calling
 * progress (may be NULL) in this process, then writes DIR/sweep.csv. A point
 * that fails is recorded in its .err file and in the csv; that is not an
 * error of the sweep. Returns 0, or -1 with e set (an output that cannot be
 * written, a worker that died).
 */
int sweep_run(const struct sweep *sw, const char *dir, int jobs,
	      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, struct err *e);

#endif
