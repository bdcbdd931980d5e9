/*
 * run_int.h - what run.c shares with run_pipe.c (a pipeline's run): not for
 * other modules.
 */
#ifndef TPUSIM_RUN_INT_H
#define TPUSIM_RUN_INT_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct err;
struct oplist;
struct plan;
struct result;
struct run;
struct run_hbm;
struct run_opts;
struct workload;

/* Simulates the plan's ops on the run's model into out (its rows and layers set up). */
int run_model(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
	      struct err *e);

/* Adds result r to row `row` of out and to its total; fails when the run passes RUN_MAX_CYCLES. */
int run_add_result(const struct workload *w, size_t row, const struct result *r, struct run *out, struct err *e);

/*
 * run_hbm_fit with the activations kept times over (a pipeline stage's
 * microbatches in flight), the message naming whose bytes ("the run's").
 */
int run_hbm_fit_kept(const struct config *cfg, const struct workload *w, const struct oplist *ops, int64_t kept,
		     const char *whose, struct run_hbm *h, struct err *e);

/* A pipeline's run (mesh.pipeline > 1, pipeline.h): run_on_plan's. */
int run_pipelined(const struct plan *p, const struct workload *w, const struct run_opts *o, struct run *out,
		  struct err *e);

#endif
