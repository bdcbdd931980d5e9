/*
 * run.h - one simulation: a config, a workload and options in, results out.
 *
 * run_workload is a pure function of its inputs: it lowers nothing and writes
 * nothing, it evaluates each op of an already lowered workload and sums the
 * results per layer and in total. Sweeps and comparisons call it many times.
 */
#ifndef TPUSIM_RUN_H
#define TPUSIM_RUN_H

#include <stdbool.h>

#include "analytic.h"
#include "config.h"
#include "lower.h"
#include "workload.h"

enum model { MODEL_ANALYTIC, MODEL_CYCLE };

/* Longest run, in cycles, so that every sum of a run's counts fits in int64. */
#define RUN_MAX_CYCLES (INT64_C(1) << 62)

struct run_opts {
	int dataflow;                   /* enum dataflow */
	int model;                      /* enum model */
	bool ideal_memory;
	const char *vcd;                /* cycle model: trace to this path + ".vcd", or NULL */
};

struct run {
	struct result *layers;          /* owned; one per workload layer */
	size_t n;
	struct result total;
};

int run_workload(const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run_opts *o, struct run *out, struct err *e);
void run_release(struct run *r);

#endif
