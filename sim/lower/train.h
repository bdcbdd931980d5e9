/*
 * train.h - a training step: the forward ops, their backward, what is
 * recomputed, and the optimizer's update (keys train.*, config.h).
 *
 * The step is the workload lowered at the microbatch (the batch over
 * train.microbatches), then for each microbatch its forward ops and their
 * backward in reverse order, and last one update per weight. Every op has
 * its phase (forward, backward, recompute, optimizer) and adds to the result
 * row of its layer and phase (lower.h).
 *
 * Backward, for each forward op whose output has a gradient, with dY that
 * gradient:
 *   GEMM C = A B (M x K times K x N, repeated r times):
 *     dA = dY B^T   M x N times N x K (its name ".dx"; ".dw" when A is a weight)
 *     dB = A^T dY   K x M times M x N (".dw"), A as the forward read it (a
 *                   convolution's input, expanded on chip as im2col)
 *   each when its operand needs a gradient: a weight, an activation, a
 *   network input with train.input_grads. Both have the forward's MACs: a
 *   convolution's dX is the transposed convolution as dY W^T over the
 *   forward's im2col rows (col2im sums them into the input), its dW the
 *   correlation of the input with dY. Both operands activations (attention's
 *   Q K^T and P V): ".da" and ".db".
 *   relu, gelu, silu, layernorm, max pool: dX from dY and X (vector_kind
 *   *_bwd); softmax: from dY and its output; average pool: from dY; add:
 *   dY is both inputs' gradient (no op); mul: dA = dY B and dB = dY A.
 * A network output (an activation nobody reads) gets its gradient from the
 * loss: softmax cross-entropy's, a vector op ("loss") on the output.
 * A tensor read by several ops gets their gradients summed (".gsum", an add
 * on the vector unit, into the first's place), except the row blocks of
 * queries that one causal attention's blocks write, which join as their
 * forward outputs do (the keys' and values' gradients, prefixes that
 * overlap, are summed); a weight's gradient over microbatches is summed the
 * same way (".gacc"). A convolution's dX writes its whole input (c_elems).
 *
 * Recomputation (train.remat) works on segments: a block's instance (the
 * layers of "enc.3"), or a layer outside blocks. What crosses segments (a
 * tensor a later segment reads) is kept, as are weights and inputs.
 *   none       every activation the backward reads is kept from the forward
 *   full       only what crosses segments is kept; before its backward each
 *              segment's forward runs again (Korthikanti et al., MLSys
 *              2023, "full activation recomputation"): every op whose
 *              output the backward, or another rerun op, reads (all of a
 *              post-layernorm block, as BERT's), and the backward reads
 *              what it recomputed. A workload without blocks has segments
 *              of one layer, whose inputs are kept anyway: nothing reruns
 *   save_dots  GEMM outputs are kept too (JAX's checkpoint_dots); a vector
 *              op is run again only when the backward, or another rerun op,
 *              reads its output
 *
 * The optimizer (train.optimizer) reads each weight, its gradient and its
 * state and writes the weight and the state, on the vector unit. The state
 * per parameter (train_state_bytes): with weights narrower than fp32, an fp32
 * master copy (4 B); momentum adds fp32 momentum (4 B), adam and adamw the
 * fp32 first and second moments (8 B). bf16 Adam is then 2 (weight) + 2
 * (gradient) + 12 = 16 B per parameter, the accounting of Rajbhandari et al.
 * (ZeRO, SC 2020, Sec. 3.1). State tensors are counted in elements of the
 * run's dtype (bytes / element size: exact, as state bytes are multiples of
 * 4).
 */
#ifndef TPUSIM_TRAIN_H
#define TPUSIM_TRAIN_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "lower.h"
#include "workload.h"

extern const char *const train_optimizer_names[];   /* "sgd", "momentum", "adam", "adamw" */
extern const char *const train_remat_names[];       /* "none", "full", "save_dots" */
extern const char *const train_input_grads_names[]; /* "auto", "true", "false" */

/* The optimizer's state bytes per parameter, beyond the weight and its gradient, for weights of eb bytes. */
int train_state_bytes(const struct train_params *tp, int eb);

/*
 * The training step of w on cfg (its train.* keys, and its dtype's element
 * size) into out (empty). Refused, positioned: a batch that
 * train.microbatches does not divide, an attention layer in decode mode (a
 * training step has no KV cache). Returns 0, or -1 with e set.
 */
int train_lower(const struct config *cfg, const struct workload *w, struct oplist *out, struct err *e);

/*
 * A step of w on cfg that fits in capacity bytes of HBM when cfg's does
 * not: more recomputation (save_dots, then full), then more microbatches
 * (twice as many, while they divide the batch), the cheapest first. Puts
 * its keys and bytes in hint ("train.remat=full fits: 18.9 GiB") and
 * returns 1; 0 when none fits (hint ""); -1 when memory ran out.
 */
int train_fit_hint(const struct config *cfg, const struct workload *w, double capacity, char *hint, size_t size);

/* The run's ops on cfg: train_lower when train.enabled, else lower_workload. */
int lower_step(const struct config *cfg, const struct workload *w, struct oplist *out, struct err *e);

/*
 * What the backward keeps from the forward, in elements, per microbatch:
 * the network inputs and forward activations that a backward or recompute
 * op reads.
 */
int64_t train_saved_elems(const struct oplist *l, int64_t microbatches);

/* The losses of a step, per microbatch: one per network output (an activation the forward writes and nobody reads). */
int64_t train_losses(const struct oplist *l, int64_t microbatches);

#endif
