/*
 * pipeline.h - a workload in pipeline stages (mesh.pipeline), and their
 * schedule.
 *
 * Stages. The layers are cut into mesh.pipeline stages of consecutive
 * segments (a block's instance, or a layer outside blocks: the training
 * step's segments, train.h), each with about its share of the MACs: stage
 * k ends at the segment boundary nearest k/P of them. Each stage runs on its
 * own chips (mesh.data x fsdp x tensor of them), and one chip of each is
 * simulated: the stage's layers as a workload of their own, at one
 * microbatch, whose input from the stage before is a network input of its
 * own, sent over the pipeline axis's link (send_recv, models/ici.h).
 *
 * Schedule. Each stage's chip runs the forward F and backward B (with its
 * recomputation) of M microbatches, as one microbatch's simulation timed
 * them; microbatch m's forward on stage s starts once stage s - 1's is done
 * and its activations have come over the link, its backward once stage
 * s + 1's backward of m is done and the gradient has come back. The orders:
 *   gpipe  every forward, then every backward (Y. Huang et al., "GPipe",
 *          NeurIPS 2019), M microbatches' activations kept
 *   1f1b   P - s - 1 forwards, then one forward and one backward in turn,
 *          then the backwards left (PipeDream-Flush: D. Narayanan et al.,
 *          "Efficient large-scale language model training on GPU clusters
 *          using Megatron-LM", SC 2021, Sec. 2.2.1), at most P - s kept
 * and each stage's optimizer update after its last backward. Inference has
 * forwards only. The step ends when the last stage's chip is done; what a
 * chip is not busy in the step is its bubble.
 */
#ifndef TPUSIM_PIPELINE_H
#define TPUSIM_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "workload.h"

/* Tasks a schedule may have (stages x microbatches x 2): past it a run is refused. */
#define PIPE_MAX_TASKS (INT64_C(1) << 26)

/*
 * The first layer of each of P stages into first[0 .. P] (first[P] = w->n),
 * balancing macs[layer]: 0, or -1 when w has fewer than P segments.
 */
int pipe_split(const struct workload *w, const int64_t *macs, int64_t stages, size_t *first);

/*
 * Layers [a, b) of w as a workload of their own (its layers owned, the rest
 * borrowed from w: free with pipe_stage_release): an input from before a is
 * a new network input, the other inputs count from a.
 */
int pipe_stage(const struct workload *w, size_t a, size_t b, struct workload *out, struct err *e);
void pipe_stage_release(struct workload *s);

/* What one microbatch takes on a stage's chip, in cycles. */
struct pipe_times {
	int64_t f, b;                   /* forward; backward with its recomputation (0 for inference) */
	int64_t update;                 /* the optimizer's, once a step */
	int64_t send;                   /* its activations (and their gradient back) over the link to the next stage */
};

struct pipe_result {
	int64_t step;                   /* the step's cycles */
	int64_t *busy, *bubble;         /* owned, per stage: the chip's cycles busy, and idle in the step */
	int64_t *kept;                  /* owned, per stage: the most microbatches whose backward it waits for */
};

/*
 * The schedule (enum pipe_schedule) of M microbatches over P stages, each
 * timed by t[s]; train: with backwards and updates. Returns 0, or -1 with e
 * set (memory).
 */
/*
 * Task idx (0 .. M, or 2M with backwards) of stage s in the schedule's
 * order: a backward (true) or forward (false) of microbatch *m.
 */
bool pipe_task(int schedule, int64_t s, int64_t stages, int64_t mbs, bool train, int64_t idx, int64_t *m);

int pipe_schedule(int schedule, int64_t stages, int64_t microbatches, bool train, const struct pipe_times *t,
		  struct pipe_result *r, struct err *e);
void pipe_result_release(struct pipe_result *r);

#endif
