/*
 * functional.h - the array register by register, cycle by cycle, with real values.
 *
 * The third executor of a plan (DESIGN.md): every PE of the R x C array has
 * its registers, and a GEMM's folds (the same tile program, sched_next, that
 * the engine runs) move real values through them. Operands are int8 (int32
 * products and sums), bf16 or fp16 (fp32 products, exact, and fp32 sums) or
 * fp32. The result is checked against a plain reference GEMM; the cycles are
 * the array's own, with ideal memory, and must equal models/array's fold
 * timer and the closed form of sim/analytic (the property test).
 *
 * Registers (state during a cycle; a register written in cycle c holds the
 * new value from cycle c + 1):
 *
 *   ws  w[2]   two weight banks; the bank a MAC uses travels with its input
 *              (the fold's select bit), so a fold swaps banks PE by PE, on
 *              the wave of its first input
 *       x      the input, passing right one PE per cycle
 *       p      the partial sum, passing down one PE per cycle
 *   is  the same, with A^T stationary and B's columns streaming
 *   os  a, b   A passing right, B passing down
 *       acc    the output being accumulated
 *       out    the drain register (the shadow: pipelined mode only)
 *
 * Timing, with t0 the op's first cycle, fold f streaming T_f from s_f to
 * e_f = s_f + T_f, on Sr_f x Sc_f PEs:
 *
 *   ws/is  Fold f's tile enters column j on a shift chain, one row per cycle,
 *          the value for the deepest row first, from cycle L_f + j: row i
 *          shifts from cycle L_f + i + j to L_f + j + Sr_f - 1 (the chain
 *          follows a wave down the column) and the tile is in place from
 *          L_f + j + Sr_f. Pipelined (array.weight_double_buffer), the chain
 *          is the bank fold f uses, bank f mod 2; serial, the weight
 *          register itself. A chain needs the column's top port (free once
 *          the tile before is in: L_{f-1} + Sr_{f-1}) and its bank: fold g,
 *          the last to use it (f - 2 pipelined, f - 1 serial), reads PE
 *          (k, j) for the last time in cycle e_g - 1 + k + j and the chain
 *          first writes it in cycle L_f + k + j, which may be that cycle
 *          (the write lands for the next). So L_f = max(L_{f-1} + Sr_{f-1},
 *          e_g - 1): pipelined s_{f-1}, or s_{f-1} - 1 when fold f-1 waited
 *          for e_{f-2}; serial e_{f-1} - 1 (partial sums still moving down
 *          do not block it). L_0 = t0. s_f = max(e_{f-1}, L_f + Sr_f).
 *          Input row t of the fold
 *          enters array row i at s_f + t + i and meets column j at
 *          s_f + t + i + j; its partial sum crosses all R rows and leaves
 *          the bottom of column j at the end of cycle s_f + t + R - 1 + j.
 *   os     Row i's element t of the fold meets column j's at s_f + t + i + j.
 *          A block's results, once its last row's are in (X_j = e + Sr - 1
 *          + j for column j), move down one row per cycle and leave the
 *          bottom; the last leaves at the end of cycle X_j + R - 1. A new
 *          result may be written into a register in the cycle its old value
 *          moves on. Pipelined: a finished result goes to out, so the next
 *          block needs e' >= e + Sr of the block before: its last part
 *          (cont: K streamed in parts) waits for that, the parts before it
 *          stream back to back (as models/array's timer); serial: the drain
 *          runs through acc, so the next block's first MAC needs
 *          s' >= e + Sr - 1, and its parts stream back to back.
 *
 * The op ends when its last output has left the array. Cycles are charged
 * as models/array charges them: streams are compute; ws/is gaps between
 * streams are weight_shift, os gaps fill_drain; after the last stream,
 * fill_drain.
 *
 * Every register carries the fold its value belongs to, and a MAC that
 * meets a weight, operand or partial sum of another fold, or a write over a
 * value that has not moved on, is a model violation (ERR_SIM, with the
 * cycle and the PE): the registers judge the timing above, and a test makes
 * the controller start one cycle early to see them object (opts.early:
 * every start that a rule sets, L_0 and os's s_0 excepted, or only one
 * rule's (opts.early_what), comes that many cycles before the rule
 * evaluated on the actual earlier starts; from fold opts.early_fold on). Cost O(cycles x PEs): each cycle touches only the PEs
 * a fold's band occupies, about 3 ns per PE and cycle; pe_updates counts
 * cycles x R x C.
 */
#ifndef TPUSIM_FUNCTIONAL_H
#define TPUSIM_FUNCTIONAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cat.h"
#include "config.h"
#include "err.h"
#include "limit.h"
#include "lower.h"
#include "schedule.h"

/* One PE's registers during a cycle, as numbers (ints exactly). fold: -1 when the register holds nothing. */
struct func_reg {
	double v;
	int64_t fold;
};

struct func_pe {
	struct func_reg w[2];           /* ws/is: the two weight banks */
	int wsel;                       /* ws/is: the bank the input in x uses (or last used) */
	struct func_reg x;              /* ws/is: the input; os: A */
	struct func_reg p;              /* ws/is: the partial sum; os: B */
	struct func_reg acc, out;       /* os */
};

/* A value leaving the array (ws/is: a partial sum into the accumulators; os: a finished output). */
struct func_out {
	int64_t m, n;                   /* its element of C */
	int64_t fold;
	double v;
};

/* What an observer sees each cycle, from the op's first cycle to its last. Borrowed for the call. */
struct func_view {
	int64_t cycle;
	int64_t R, C;
	int df;                         /* enum dataflow */
	const struct func_pe *pe;       /* R x C, row-major: pe[i * C + j] */
	int64_t fold;                   /* the fold streaming at row 0 this cycle, or the last one that did; -1 before */
	const struct tile_ins *ins;     /* that fold's instruction, or NULL */
	int64_t loading;                /* ws/is: the fold whose tile column 0 is shifting in, or -1 */
	const struct func_out *left;    /* the values that leave the array this cycle (never NULL) */
	int nleft;
};

/* Return 0 to go on, anything else to stop the run early (func_run then returns 0 with r->stopped). */
typedef int (*func_observer)(const struct func_view *v, void *ctx);

struct func_opts {
	uint64_t seed;                  /* operands when a or b is NULL: uniform in the dtype (int8 -128..127, floats in
					   [-1, 1) rounded to it), A from seed and B from seed + 1 (func_random) */
	const double *a, *b;            /* borrowed or NULL: M x K and K x N row-major (per repeat instance, the same) */
	double *c;                      /* NULL, or M x N receiving the last instance's result */
	func_observer observe;          /* NULL, or called every cycle */
	void *ctx;
	int64_t early;                  /* tests only: every load and stream starts this many cycles before the rule */
	int64_t early_fold;             /* tests only: the first fold early applies to (0: every fold) */
	int early_what;                 /* tests only: the rule early moves (enum func_early) */
};

/*
 * The rules opts.early moves (see the timing above): every one; ws/is L_f
 * (the stream then follows its rule from the earlier L_f); the stream's own
 * rule (ws/is s_f = max(e_{f-1}, L_f + Sr_f); os the e_{f-1} term); os's
 * drain rules (pipelined: a block's last part ends Sr_prev after the
 * previous block; serial: its first part starts e + Sr_prev - 1).
 */
enum func_early { FUNC_EARLY_ALL, FUNC_EARLY_LOAD, FUNC_EARLY_STREAM, FUNC_EARLY_DRAIN };

struct func_result {
	int64_t cycles;                 /* from t0 = 0 to the last output leaving the array */
	int64_t cat[CAT_N];             /* sums to cycles */
	int64_t outputs;                /* elements of C checked (over all instances) */
	int64_t mismatches;             /* ints: not equal to the reference; floats: error above the bound */
	double max_abs_error;           /* against the reference (double precision) */
	int64_t pe_updates;             /* PE register updates simulated: cycles x R x C */
	bool stopped;                   /* the observer stopped the run */
};

/*
 * The error bound for a float dtype: |c - ref| <= gamma(n) * sum_k |a_k b_k|
 * + n eta with gamma(n) = n u / (1 - n u), u = 2^-24 (fp32 sums), n = K
 * (+ 1 for fp32, whose products round too) and eta = 2^-149, fp32's
 * smallest subnormal; 0 for int8 (exact). Derivation (Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., sec. 2.1 and 3.1): every
 * element is a sum of K products, added in some order (down a column, then
 * fold by fold into the accumulator; os in the PE), so each product passes
 * through at most K - 1 fp32 additions, each a factor (1 + d), |d| <= u;
 * the product of at most n such factors is 1 + t with |t| <= gamma(n).
 * bf16 and fp16 products are exact in fp32 (8 + 8 and 11 + 11 significant
 * bits <= 24); fp32 products round once more. The reference is computed in
 * double, whose products are exact and whose sums add gamma(K) at u = 2^-53,
 * which the bound includes. Underflow (Higham, sec. 2.1): with gradual
 * underflow an addition whose result is subnormal is exact, and a product
 * that lands below fp32's normal range (fp32's, and bf16's, whose exponents
 * reach as far) rounds with an absolute error of at most eta / 2; K such
 * errors, grown by the sums' (1 + d) factors, stay below n eta. The double
 * reference's products of these operands are exact (2^-298 at the least).
 * Assumes no overflow.
 */
double func_bound(int dtype, int64_t K, double sum_abs_products);

/* Whether v is exactly a value of the dtype (int8: an integer in -128..127; bf16, fp16, fp32: finite and exact). */
bool func_representable(int dtype, double v);

/* n operands of the dtype from seed, as func_run draws them when opts.a or opts.b is NULL. */
void func_random(int dtype, uint64_t seed, double *v, int64_t n);

/*
 * Runs GEMM op o planned as s (the plan's part, planned with ideal memory;
 * borrowed) on cfg's array, register by register. Returns 0 (the values may
 * still mismatch: see r), or -1 with e set: a register conflict (ERR_SIM),
 * operands not representable in the dtype (ERR_INPUT), or out of memory.
 */
int func_run(const struct config *cfg, const struct op *o, const struct sched *s, const struct func_opts *opt,
	     struct func_result *r, struct err *e);

/*
 * Per-PE signals in a VCD (sim/trace/vcd.h), written by an observer: open a
 * func_vcd, pass func_vcd_observe as opts.observe with the handle as ctx,
 * then close it (or abandon it on failure: the file is removed). Signals:
 * tpusim.op (a string), tpusim.cycle, tpusim.fold, tpusim.loading (the
 * view's), and under tpusim.pe_I_J five per PE: ws/is weight (the bank the
 * PE's input uses), shadow (the other bank), input, psum, fold (the weight's
 * fold); os a, b, acc, out, fold (acc's, else out's). Registers that hold
 * nothing show 0, a fold of -1 none. Values are integers for int8 (int32
 * sums), reals otherwise. Times are the run's cycles: an op's cycle c is at
 * base + c (func_vcd_set_op). One array of at most FUNC_VCD_MAX_PES x
 * FUNC_VCD_MAX_PES.
 *
 * Size: each cycle changes at most R x C x FUNC_VCD_SIGNALS + 3 signals;
 * func_vcd_bytes counts FUNC_VCD_CHANGE_BYTES for each, about the most the
 * file holds per possible change (16 x 16, 128^3: ws int8 113 MB, os int8
 * 163 MB, 15.4 bytes per possible change; fp32 less), and callers refuse a
 * run estimated above sim.max_trace_bytes (1 GiB: about 52,000 cycles of a
 * 16 x 16 array) before running.
 */
typedef struct func_vcd func_vcd;

#define FUNC_VCD_SIGNALS 5
#define FUNC_VCD_CHANGE_BYTES 16

/*
 * Creates path (the whole name, e.g. "t.vcd") for cfg's array running
 * dataflow df. Returns owned, or NULL with e set: an input error naming
 * --vcd (a chip of several arrays, an array over FUNC_VCD_MAX_PES, a path
 * that cannot be created) or out of memory.
 */
func_vcd *func_vcd_open(const struct config *cfg, int df, const char *path, struct err *e);

/* The op that runs next: its name in tpusim.op from its cycle 0, which is the run's cycle base. */
void func_vcd_set_op(func_vcd *fv, const char *name, int64_t base);

/* The observer (ctx: the func_vcd): writes the view's registers at base + v->cycle; always returns 0. */
int func_vcd_observe(const struct func_view *v, void *ctx);

/* Writes the final time (the run's end_cycle) and closes; 0, or -1 with e set (the file is removed). Frees fv. */
int func_vcd_close(func_vcd *fv, int64_t end_cycle, struct err *e);

/* Closes and removes the file (a failed run). Frees fv; NULL is a no-op. */
void func_vcd_abandon(func_vcd *fv);

/* The size bound above for a run of `cycles` on cfg's array, in bytes (saturating at INT64_MAX). */
int64_t func_vcd_bytes(const struct config *cfg, int64_t cycles);

#endif
