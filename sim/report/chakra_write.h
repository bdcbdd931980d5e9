/*
 * chakra_write.h - a run as Chakra execution traces (MLCommons Chakra,
 * schema/protobuf/et_def.proto; the part tpusim writes is
 * sim/input/chakra.proto), one file a rank, PREFIX.<rank>.et, as ASTRA-sim
 * reads a workload.
 *
 * Every op of the run's representative chip is a node, in program order:
 *   a GEMM or vector op: COMP_NODE, duration_micros its time in the run
 *     (cycles at the clock, to the nearest microsecond), attributes
 *     num_ops (2 x MACs, or the vector lane operations), tensor_size (its
 *     HBM bytes), is_cpu_op false, and tpusim's own: tpusim.cycles,
 *     tpusim.kind (gemm, vector), a GEMM's tpusim.m, .k, .n, .repeat and
 *     inputs.shapes "[[M,K],[K,N]]", a vector op's tpusim.layer_type and
 *     tpusim.elements (what reading the trace back needs);
 *   a collective: COMM_COLL_NODE (send_recv: COMM_SEND_NODE to the next
 *     rank and COMM_RECV_NODE from the one before), comm_type, comm_size
 *     (the bytes of its array, V of models/ici.h), involved_dim (x, y, z,
 *     dcn: the axes it runs over), tpusim.group.
 * data_deps are the ops that wrote a node's inputs; ctrl_deps keep the
 * chip's program order: each compute node after the compute node before
 * it, each collective after the collective before it on its group's first
 * axis (the engine's streams).
 *
 * Every chip of the pod does what the representative does, so every rank's
 * file is the same: rank 0's is written, the others are hard links to it
 * (but with send_recv, whose peers differ: a file each). A pipeline
 * (run.pipe) gives each rank its stage's ops at one microbatch, repeated for
 * each microbatch in the schedule's order (pipeline.h): a forward after a
 * COMM_RECV_NODE of the activations from the rank of the stage before and
 * before a COMM_SEND_NODE to the next (tag 2m), a backward between the
 * gradient's receive from the next and its send to the one before (tag
 * 2m + 1), then the optimizer's ops; a file each. The files are written
 * atomically; on an error none is left.
 */
#ifndef TPUSIM_CHAKRA_WRITE_H
#define TPUSIM_CHAKRA_WRITE_H

#include "config.h"
#include "err.h"
#include "lower.h"
#include "run.h"
#include "workload.h"

/* Chakra's schema version the files declare. */
#define CHAKRA_VERSION "0.0.4"

/* Whether PREFIX.0.et can be written (checked before the run): 0, or -1 with e set. */
int chakra_check(const char *prefix, const struct config *cfg, struct err *e);

/*
 * The run r (its op_results: run_opts.keep_op_results) of ops on cfg as
 * PREFIX.<rank>.et for every chip of cfg's pod; *ranks the files. Returns
 * 0, or -1 with e set (and no file left).
 */
int chakra_write(const char *prefix, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run *r, int64_t *ranks, struct err *e);

#endif
