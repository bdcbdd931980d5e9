/*
 * api.h - one simulation from a request: the path the CLI's `run` and the
 * library's tpusim_run_json (tpusim.h) share.
 *
 * A request names the config files, the overrides, the workload and the run
 * options; sim_load resolves the config (files in order, then overrides),
 * loads and lowers the workload; sim_run evaluates it; sim_summary_json
 * prints the summary.json text. Nothing here prints or exits.
 */
#ifndef TPUSIM_API_H
#define TPUSIM_API_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "lower.h"
#include "request.h"
#include "run.h"
#include "workload.h"

struct ydoc;

/*
 * Parses a library request (JSON; NULL reads as empty) into rq, nothing more:
 * no file is opened. *d receives the parsed document (owned; ydoc_free it,
 * also on error, after the last use of rq, whose strings it holds). Errors
 * are placed in "request:line:col". Returns 0, or -1 with e set.
 */
int sim_request_parse(const char *json, struct sim_request *rq, struct ydoc **d, struct err *e);

/* A request resolved and run. */
struct sim {
	struct config cfg;
	struct workload w;
	struct oplist ops;
	struct run_opts opts;
	struct run run;
};

/*
 * Loads the config and workload of rq and lowers the workload, and checks that
 * rq->vcd + ".vcd", rq->trace and rq->dram_trace can be written (leaving no
 * file behind) by the model asked for (traces: the cycle model); cmd names the
 * command in "expected -c CONFIG" messages. On error s holds nothing to release.
 */
int sim_load(struct sim *s, const struct sim_request *rq, const char *cmd, struct err *e);

/*
 * The request's config into c: its files in order, its --set assignments,
 * its overrides, then --train (train.enabled). Returns 0, or -1 with e set.
 */
int sim_config(struct config *c, const struct sim_request *rq, struct err *e);

/* Runs the loaded workload with s->opts into s->run. */
int sim_run(struct sim *s, struct err *e);

/* Releases everything sim_load and sim_run made; s may be zeroed. */
void sim_release(struct sim *s);

/* The text of summary.json for a run (owned; free()), or NULL when memory ran out. */
char *sim_summary_json(const struct sim *s);

#endif
