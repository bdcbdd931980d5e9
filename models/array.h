/*
 * array.h - timing of an R x C systolic array, one fold at a time.
 *
 * A fold is one placement of the stationary operand on the grid: Sr <= R rows
 * by Sc <= C columns, while the streaming operand flows for T cycles.
 *
 *   ws: weights stay; Sr rows of K, Sc columns of N; T = rows of the input (M).
 *   is: inputs stay;  Sr rows of K, Sc columns of M; T = columns of B (N).
 *   os: outputs stay; Sr rows of M, Sc columns of N; T = the reduction (K).
 *
 * Pipelined mode (the default, TPU-style): the stationary tile is double
 * buffered, so loading fold f+1's tile (ws/is: Sr cycles of shifting weights
 * down) or draining fold f-1's outputs (os: R cycles of shifting results out)
 * overlaps fold f's stream. Folds of one chain then stream back to back and the
 * skew of fill and drain is paid once per chain:
 *
 *   ws/is: Sr_0 + sum_{f<last} max(T_f, Sr_{f+1}) + T_last + (R + Sc_last - 2)
 *   os:    T_0 + sum_{f>0} max(T_f, R) + (Sr_last + Sc_last - 2) + R
 *
 * Without array.weight_double_buffer every fold pays everything in turn:
 * ws/is Sr + T + R + Sc - 2, os T + Sr + Sc - 2 + R.
 *
 * A chain ends when the last outputs have left the array: usually the last
 * fold's, but an earlier, wider fold can still be draining then, and the
 * chain waits for it.
 *
 * SCALE-Sim compatible mode (array.scalesim_compat) reproduces SCALE-Sim v2's
 * compute model: every fold costs 2R + C + T - 2 (ws, is) or R + C + T - 2
 * (os) with the array's full R and C even for a partial fold, folds never
 * overlap, and each layer's total is one cycle less (each repeated instance
 * counts as a layer, as SCALE-Sim runs a depthwise row per channel).
 *
 * All counts are in array clock cycles.
 */
#ifndef TPUSIM_ARRAY_H
#define TPUSIM_ARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"

enum dataflow { DF_WS, DF_OS, DF_IS };
enum dtype { DT_INT8, DT_BF16, DT_FP16, DT_FP32 };

struct array_params {
	int64_t rows, cols;
	int dataflow;               /* enum dataflow */
	bool scalesim_compat;
	bool weight_double_buffer;
	int dtype;                  /* enum dtype */
};

extern const struct cfg_key array_keys[];
extern const char *const array_dataflow_names[];   /* "ws", "os", "is" */

/* Bytes of one operand element, and of one accumulator (partial sum) element. */
int array_elem_bytes(int dtype);
int array_acc_bytes(int dtype);

/* Cycles of one fold in SCALE-Sim compatible mode (full array dims, no overlap). */
int64_t array_scalesim_fold_cycles(const struct array_params *p, int df, int64_t t);

/*
 * A chain of folds streamed back to back. Feed the folds in order with
 * array_chain_fold, then array_chain_end returns the cycles of the whole chain
 * (fill, every fold, drain). Covers pipelined and serial modes; not the
 * SCALE-Sim compatible mode, which has a closed form (see above).
 */
struct array_chain {
	const struct array_params *p;   /* borrowed */
	int df;
	int64_t s, e;                   /* stream start of the current fold, stream end of the last fold or part */
	int64_t drained;                /* the latest cycle any finished fold's outputs left the array */
	int64_t folds;
	int64_t last_sr, last_sc;
};

void array_chain_init(struct array_chain *c, const struct array_params *p, int df);

/*
 * Adds a fold of sr x sc streaming t cycles. cont: it continues the previous
 * fold's accumulation (os streams a long K in parts), so it only adds t.
 */
void array_chain_fold(struct array_chain *c, int64_t sr, int64_t sc, int64_t t, bool cont);
int64_t array_chain_end(const struct array_chain *c);

#endif
