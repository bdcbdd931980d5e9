/*
 * request.h - one simulation as the front ends ask for it: the config files
 * and overrides, the workload and the run options. The command line, the
 * library's JSON request (api.h) and the sweep fill it, each through the run
 * option table (options.h); sim_load and sim_run (api.h) carry it out.
 */
#ifndef TPUSIM_REQUEST_H
#define TPUSIM_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "limit.h"

struct opcache;

/* An override from a request: key, value text, and where the value was given. */
struct sim_override {
	const char *key, *value;    /* borrowed */
	bool quoted;                /* a quoted string, so never a number */
	struct pos at;
};

struct sim_request {
	const char *configs[CONFIG_MAX_FILES];      /* borrowed; in order */
	int nconfigs;
	const char *assignments[CONFIG_MAX_SETS];   /* borrowed; "key.path=value", the CLI's --set */
	int nassignments;
	struct sim_override overrides[CONFIG_MAX_SETS];   /* a request's "set", after the assignments */
	int noverrides;
	const char *workload;       /* borrowed */
	int model;                  /* enum model */
	int dataflow;               /* enum dataflow, or -1 for the config's */
	int64_t batch;              /* > 0 overrides the workload's */
	bool ideal_memory;
	bool train;                 /* a training step: train.enabled set true after the overrides */
	const char *vcd;            /* borrowed; trace to vcd + ".vcd" (cycle: the engine's, functional: every PE), or NULL */
	const char *trace;          /* borrowed; cycle: the event trace (trace.h) to this path, or NULL */
	const char *dram_trace;     /* borrowed; cycle: the DRAM trace to this path, or NULL */
	int dram_format;            /* enum trace_dram_format */
	uint64_t seed;              /* functional: random operands */
	bool keep_outputs;          /* functional: keep every GEMM op's result (run.h) */
	bool no_reuse;              /* simulate every op, also one identical to an op already simulated, and every block instance (run.h) */
	struct opcache *cache;      /* borrowed: results to reuse across runs (opcache.h), or NULL */
};

#endif
