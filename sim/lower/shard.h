/*
 * shard.h - a workload sharded over a pod's mesh: which chips share which
 * part of the work, and the collectives that join the parts.
 *
 * Keys mesh.* (their table, mesh_keys, is in shard.c): the degrees of the
 * mesh's axes, whose product is the pod's chips (or all 1: no sharding):
 *   data    the batch is split; every chip holds every weight
 *   fsdp    the batch is split too, and every weight (S. Rajbhandari et al.,
 *           "ZeRO", SC 2020; PyTorch FSDP): a chip holds 1/fsdp of each and
 *           gathers it (all_gather over the fsdp axis) before the GEMM that
 *           reads it
 *   tensor  attention heads and the MLP's hidden width are split
 *           (Megatron-LM: M. Shoeybi et al., 2019, Sec. 3): the q, k, v
 *           projections and up (and gate) by their columns, o_proj and down
 *           by their rows, whose partial sums an all_reduce over the tensor
 *           axis adds; a fc or linear runs whole on every chip, or with
 *           `split: columns` each chip computes 1/tensor of its columns
 *           (a vocabulary-parallel output layer, Megatron-LM Sec. 3: the
 *           logits stay split, and a training step's loss all-reduces
 *           three statistics a row, its max, the target's logit and the
 *           sum of exponentials); a matmul or convolution runs whole
 *   sequence  with tensor, sequence parallelism (V. Korthikanti et al.,
 *           "Reducing Activation Recomputation in Large Transformer
 *           Models", MLSys 2023, Sec. 4.2.2): the token-wise layers between
 *           the blocks (norms, elementwise, fc and linear) run on 1/tensor
 *           of the rows; attention and the MLP all-gather their input over
 *           the tensor axis and reduce-scatter their output (the same bytes
 *           as the all-reduce, less activation memory and vector work); a
 *           training step's backward swaps the two; a matmul, convolution
 *           or pool is refused
 * Each mesh axis runs over a part of the pod's axes (mesh_place): tensor
 * first, on the fastest links, then fsdp, then data (the slices, over the
 * DCN, go to data). An axis that a mesh axis takes whole wraps as the pod's
 * does; a part of one is a line.
 *
 * The chips of one mesh position do the same work, so one representative
 * chip is simulated (DESIGN.md: chips alike are simulated once).
 */
#ifndef TPUSIM_SHARD_H
#define TPUSIM_SHARD_H

#include "config.h"
#include "err.h"
#include "lower.h"

/*
 * The mesh of cfg's pod into lp (lp->pod borrowed from cfg): the groups of
 * each mesh axis. Returns 0, or -1 with e set at the mesh key that does not
 * fit: degrees whose product is not the pod's chips, a degree the pod's
 * axes do not factor into.
 */
int shard_place(const struct config *cfg, struct lower_pod *lp, struct err *e);

/* Whether any mesh degree is above 1. */
bool shard_active(const struct lower_pod *lp);

#endif
