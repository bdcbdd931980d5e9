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
 * The rules are those of the register-level model (sim/exec/functional.h, which
 * checks them PE by PE). ws/is: fold f's stationary tile shifts into each
 * column on a chain, one row per cycle (Sr cycles), starting at L_f, and the
 * fold streams once its tile is in and the previous stream has ended:
 * s_f = max(e_{f-1}, L_f + Sr_f), e_f = s_f + T_f; its last partial sums
 * leave the bottom R + Sc - 2 cycles after its stream. A tile shifts in
 * once the tile before is in (the top ports are free) and its bank has been
 * read for the last time, which the chain's first write may share (the
 * write lands for the next cycle): L_{f+1} = max(L_f + Sr_f, e_g - 1), g the
 * fold that used the bank last. Pipelined mode (the default, TPU-style:
 * array.weight_double_buffer, a second weight bank per PE) has g = f - 1:
 * L_{f+1} = s_f - d_f, d_f = 1 when fold f waited for the stream before it
 * (e_{f-1} > L_f + Sr_f), else 0; without the second bank the tile shifts
 * into the weight registers from the last cycle of the stream before,
 * L_{f+1} = e_f - 1 (partial sums still moving down do not block it).
 * L_0 = the op's start. So, with d_0 = 0 and d_{f+1} = [T_f + d_f > Sr_{f+1}],
 *
 *   ws/is pipelined: Sr_0 + sum_{f<last} max(T_f, Sr_{f+1} - d_f) + T_last + (R + Sc_last - 2)
 *   ws/is serial:    sum_f (Sr_f + T_f) - (folds - 1) + (R + Sc_last - 2)
 *
 * os: folds stream back to back; a block's results, once its last row's are
 * in, drain down R rows and out (Sr + Sc - 2 + R after its stream ends).
 * Pipelined, they drain through the out registers, which the next block's
 * results may enter once these have moved on: a block's stream ends at
 * least Sr_prev after the previous block's (fold spacing max(T, Sr_prev),
 * not R: a column pushes out only the results it holds). Serial, they drain
 * through the accumulators, so the next block's first MAC waits:
 * s = e_prev + Sr_prev - 1.
 *
 * Categories (cat.h): each T is compute. ws/is: the shifts the streams do not
 * hide are weight_shift (SCALE-Sim compatible: every R-cycle preload), the
 * skew R + Sc - 2 after the last stream (SCALE-Sim: R + C - 2 per fold, less
 * its one cycle per layer) is fill_drain. os: everything beyond T is
 * fill_drain (its drains; it shifts no stationary tile in). Waits: see cat.h.
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
 * Waits: a fold starts when its operands are there, its tile has shifted in
 * (a late tile shifts from when it arrives) and an accumulator tile is free
 * for its output block.
 *
 * All counts are in array clock cycles.
 */
#ifndef TPUSIM_ARRAY_H
#define TPUSIM_ARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include "cat.h"
#include "cfgkey.h"

enum dataflow { DF_WS, DF_OS, DF_IS };
enum dtype { DT_INT8, DT_BF16, DT_FP16, DT_FP32, DT_FP8, DT_N };

struct array_params {
	int64_t rows, cols;
	int dataflow;               /* enum dataflow */
	bool scalesim_compat;
	bool weight_double_buffer;
	int dtype;                  /* enum dtype */
	int rate[DT_N];             /* by enum dtype: index into array_rate_names */
};

extern const struct cfg_key array_keys[];
extern const char *const array_dataflow_names[];   /* "ws", "os", "is" */
extern const char *const array_dtype_names[];      /* "int8", "bf16", "fp16", "fp32", "fp8": enum dtype */
extern const char *const array_dtype_auto_names[];  /* "auto", then array_dtype_names: a dtype or the run's (index - 1: enum dtype) */
extern const char *const array_rate_names[];       /* "none", "1/8" ... "1", "2", "4", "8": array.rate_* */

/*
 * MACs per PE per cycle at the run's dtype (array.rate_<dtype>), as the
 * timing sees it. A rate n > 1 packs n adjacent elements of the reduction
 * into each PE: the PE holds n weights and multiplies n inputs a cycle
 * (how an MXU built for bf16 runs int8 at twice the rate), so a fold covers
 * rows x n of K, shifts in rows cycles and streams as at rate 1. A rate 1/n
 * takes n passes: each fold streams n times (fp32 on a bf16 MXU, the
 * operands split into bf16 parts: XLA's bf16_3x and bf16_6x). pack and
 * passes: the n of each (the other is 1). none: the array does not run the
 * dtype (pack 0, rate 0; a run refuses it: config_check_rate).
 */
int array_pack(const struct array_params *p);
int array_passes(const struct array_params *p);
double array_rate(const struct array_params *p);

/* Bytes of one operand element, and of one accumulator (partial sum) element. */
int array_elem_bytes(int dtype);
int array_acc_bytes(int dtype);

/* Processing elements: rows x cols. */
int64_t array_pes(const struct array_params *p);

/*
 * The operands of a GEMM C = A x B as the array sees them. The left operand
 * enters across the rows, Sr x T per fold (ws A, is B, os A); the top
 * operand comes down the columns: in ws and is the stationary Sr x Sc tile
 * (ws B, is A^T), in os a T x Sc stream (B).
 */
enum operand { OPND_A, OPND_B, OPND_C };

int array_left_operand(int df);
int array_top_operand(int df);

/* The category a wait for operand o is charged to: A inputs, B weights, C (an accumulator tile) outputs. */
int array_wait_cat(int operand);

/*
 * SCALE-Sim compatible cycles of `folds` folds streaming t each, counted as
 * one layer (one repeated instance): folds x the per-fold cycles above, minus
 * one for the layer where a fold has overhead to take it from (not on a 1x1
 * os array, so that no MAC takes zero cycles). Saturates at INT64_MAX.
 */
int64_t array_scalesim_layer_cycles(const struct array_params *p, int df, int64_t folds, int64_t t);

/*
 * A fold grid: the folds of one GEMM as a tile program (sim/plan/schedule.h)
 * orders them, described by its loop bounds. rows x cols is what the array
 * sees of the GEMM (ws: K x N, os: M x N, is: K x M), cut into nr x nc blocks
 * of at most R x C; t is the stream (ws: M, os: K, is: N), cut into nchunks
 * chunks of `chunk` (ws/is) or, in os, M cut into chunks of `chunk` rows;
 * order is ws/is's loop nest; rep repeated instances run one after another.
 */
enum array_order { ORDER_CT, ORDER_TC };   /* ws/is: columns outside chunks, or chunks outside columns */

struct array_grid {
	int df;                     /* enum dataflow */
	bool compat, dbuf;          /* array.scalesim_compat, array.weight_double_buffer */
	int64_t R, C;               /* the array */
	int64_t rows, cols, t;      /* the GEMM as the array sees it */
	int64_t nr, nc;             /* ceil(rows / R), ceil(cols / C) */
	int64_t chunk, nchunks;     /* see above */
	int order;                  /* enum array_order */
	int64_t rep;                /* repeated instances */
};

/*
 * The closed form of a fold grid on an array with nothing to wait for: the
 * cycles from the first fold's start until the last outputs have left
 * (fill, streams, shifts not hidden and drain; what the timer below gives
 * when fed everything at once), the streams alone (the compute category)
 * and the shifts no stream hides (weight_shift; 0 in os). O(1); INT64_MAX
 * past 64 bits. The rest of the cycles beyond streams and shifts is
 * fill_drain.
 */
int64_t array_grid_cycles(const struct array_grid *g);
int64_t array_grid_stream_cycles(const struct array_grid *g);
int64_t array_grid_shift_cycles(const struct array_grid *g);

/*
 * The array timer: the folds of one op, in program order, each timed against
 * when what it needs is there. It is the one place that knows fold timing:
 * the engine feeds it the cycles at which operands arrive, and the same timer
 * fed everything at once gives the array's own time (the closed form of
 * sim/analytic must equal that).
 *
 * For each fold, give its shape and flags and:
 *   ready[OPND_A], ready[OPND_B]  when this fold's tiles of A and B have arrived
 *   ready[OPND_C]                 when an accumulator tile is free for its block
 *   shift                         ws/is: cycles to shift the stationary tile in:
 *                                 Sr, or more when its buffer's port is slower
 *   stream, stream_cat            cycles the stream takes: T, or more when a
 *                                 buffer port cannot feed the array's edge; the
 *                                 excess is charged to stream_cat (enum cat)
 * and the timer returns when the fold starts streaming, when its stream ends,
 * when its output block has left the array (for the fold that ends a block),
 * and how the cycles from the previous stream end to this one split into
 * categories. Cycles the array waited on late data are returned as one
 * interval with who it waited for, in order (the caller shares them out,
 * say by the bytes each operand moved), so that cat[] plus that interval
 * covers the cycles exactly once. O(1) per fold.
 */
struct array_fold {
	int64_t sr, sc, t;          /* rows and columns of the grid used, stream length T */
	bool cont;                  /* continues the previous fold's accumulation (os parts of K) */
	bool last;                  /* the last fold (part) into its output block: the block leaves after it */
	bool inst_last;             /* the last fold of a repeated instance (SCALE-Sim's layer) */
	int64_t ready[3];           /* cycles, indexed by enum operand (see above) */
	int64_t shift;              /* cycles, >= sr */
	int64_t stream;             /* cycles, >= t */
	int stream_cat;             /* enum cat */
};

struct array_step {
	int64_t start;              /* the fold starts streaming */
	int64_t end;                /* its stream ends */
	int64_t out;                /* fold.last: its output block has left the array */
	int64_t cat[CAT_N];         /* cycles since the previous stream end, except the wait */
	int64_t wait_from, wait_to; /* the array waited for data [wait_from, wait_to) */
	int nwait;                  /* on these, in order: */
	int wait_opnd[3];           /* enum operand (OPND_C: an accumulator tile) */
	int64_t wait_ready[3];      /* when each was there (the stationary tile: shifted in) */
};

/* The timer's state; fields are private to array.c. */
struct array_timer {
	int64_t R, C;
	int df;
	bool compat, dbuf;
	int64_t t0;                 /* the op starts */
	int64_t e_prev;             /* stream end of the previous fold or part */
	int64_t port_free;          /* ws/is: the next tile may shift in from here (the last tile is in) */
	int64_t bank_free[2];       /* ws/is: a tile may shift into the bank from here (its last reader's e - 1) */
	int64_t folds;              /* folds started (parts not counted) */
	int64_t pending_tail;       /* SCALE-Sim os: the drain still owed by the previous fold */
	int64_t pb_end, pb_sr;      /* os: the previous block's stream end and rows */
	int64_t last_sr, last_sc;
	int64_t block_end;          /* the current output block leaves the array */
	int64_t drained;            /* the latest any finished block has left the array */
};

/* A timer for an op on array p (borrowed only during the call) in dataflow df, starting at cycle t0. */
void array_timer_init(struct array_timer *tm, const struct array_params *p, int df, int64_t t0);

/* Times the next fold; fills st. */
void array_timer_fold(struct array_timer *tm, const struct array_fold *f, struct array_step *st);

/*
 * After the last fold: the cycle its last outputs (or an earlier, wider
 * block's) have left the array. Adds the final drain, from the last stream
 * end, to cat[].
 */
int64_t array_timer_end(struct array_timer *tm, int64_t cat[CAT_N]);

#endif
