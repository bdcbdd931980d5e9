/*
 * lab.h - watch one GEMM move through the array, register by register.
 *
 * The course lab's view of the functional executor (functional.h): one GEMM
 * of M x K times K x N with seeded operands, planned with ideal memory for a
 * dataflow on the config's array (at most LAB_MAX_DIM x LAB_MAX_DIM PEs, so
 * that a grid fits a terminal and a page), run by func_run with an observer
 * that shows every cycle:
 *
 *   lab_print  the terminal: per cycle the fold in progress (index, its block
 *              of M/K/N, phase loading / streaming / draining), the R x C grid
 *              of PE registers (ws/is: w, the bank in use, with the other bank
 *              in brackets, x, p; os: a, b, acc, out; "." for an empty
 *              register) and the values that leave the array; then a summary
 *              line. As JSON (json): {"dataflow", "dtype", "seed", "rows", "cols",
 *              "gemm": {m, k, n}, "A", "B", "C" (the reference; matrices as
 *              arrays of rows), "cycles": [{"cycle", "fold", "phase", "t",
 *              "T", "loading", "block": {m0, k0, n0, m, k, n} or null, "pe":
 *              rows of PEs, each {register: value or null (empty), "folds":
 *              {register: fold or null}} (ws/is: w, w_other, x, p; os: a, b,
 *              acc, out), "leaves": [{m, n, v}]}, ...], "summary": {cycles,
 *              folds, outputs, mismatches, max_abs_error}}.
 *   lab_html   one self-contained page (inline CSS and JS) that animates the
 *              same GEMM, with the same operands, for ws, os and is side by
 *              side. The registers of every cycle are embedded as JSON, each
 *              cycle as the registers that changed since the cycle before.
 *
 * Operands (lab_operands) are those of `tpusim run --model functional --seed
 * N` (func_random): A from the seed, B from seed + 1; int8 uniform in
 * [-128, 127], floats in [-1, 1). Values print as integers (int8) or with 4
 * significant digits.
 * Cycles count from 0, the op's first cycle, as func_result.cycles does.
 */
#ifndef TPUSIM_LAB_H
#define TPUSIM_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "err.h"
#include "limit.h"

#define LAB_HTML_MAC_BYTES 4            /* the least data a MAC adds to a page, per dataflow (lab_html) */

struct lab_opts {
	int64_t m, k, n;                /* the GEMM */
	int df;                         /* enum dataflow: lab_print's */
	uint64_t seed;
	int64_t first, last;            /* lab_print: the cycles to show; last < 0: to the end */
	bool json;                      /* lab_print: JSON instead of text (see above) */
	bool step;                      /* lab_print: after each cycle shown, wait for a line of in ("q" quits) */
	FILE *in;                       /* borrowed: lines for step */
	bool prompt;                    /* step: print a prompt on stderr (in is a terminal) */
};

/* What a run gave: func_result's counts. */
struct lab_summary {
	int64_t cycles, folds, outputs, mismatches;
	double max_abs_error;
};

/* The counts of s on one line: "47 cycles, 4 folds, 50 outputs checked, 0 mismatches" (floats: ", max abs error E"). */
void lab_print_counts(FILE *out, const struct lab_summary *s, bool ints);

/* "MxKxN" -> m, k, n, each in [1, LAB_GEMM_MAX]; else an input error naming --gemm. */
int lab_parse_gemm(const char *text, int64_t *m, int64_t *k, int64_t *n, struct err *e);

/* "A..B" with 0 <= A <= B (the end is checked against the run by lab_print); else an input error naming --cycles. */
int lab_parse_cycles(const char *text, int64_t *first, int64_t *last, struct err *e);

/*
 * Whether the config fits the lab: an array of at most LAB_MAX_DIM x
 * LAB_MAX_DIM, and no memory key, which its ideal memory would ignore and
 * no energy shows (config_memory_unused). 0, or -1 with an input error.
 */
int lab_check_array(const struct config *cfg, struct err *e);

/* Fills a (m x k) and b (k x n), row-major, with the operands of seed in dtype, as func_run draws them. */
void lab_operands(int dtype, uint64_t seed, int64_t m, int64_t k, int64_t n, double *a, double *b);

/*
 * Prints the run of o on cfg's array to out (cycles o->first..o->last, or
 * until a step line says "q" or in ends) and the summary line; s receives the
 * counts of the whole run. Returns 0, or -1 with e set: an input error (the
 * array, --cycles beyond the run), a register conflict (ERR_SIM) or out of
 * memory. Nothing is printed before the input is known to be good.
 */
int lab_print(FILE *out, const struct config *cfg, const struct lab_opts *o, struct lab_summary *s, struct err *e);

/*
 * Writes the page for o (ws, os and is) to path, atomically: a temporary file
 * beside it, renamed into place; on error nothing is left at path. s receives
 * the three runs' counts, in the order ws, os, is. Returns 0, or -1 with e set
 * (input errors: an unwritable path, more than LAB_HTML_MAX bytes of data).
 * A GEMM of more than LAB_HTML_MAX / (3 LAB_HTML_MAC_BYTES) MACs is refused
 * before anything runs: every MAC writes a partial sum (ws, is) or an
 * accumulator (os), a change of at least 4 bytes in the data ("d,v,": slot
 * distance, value, commas) unless the value repeats (int8 on 16 x 16 PEs
 * takes about 18). A smaller GEMM whose data still passes LAB_HTML_MAX is
 * refused when it does, within a second.
 */
int lab_html(const char *path, const struct config *cfg, const struct lab_opts *o, struct lab_summary s[3],
	     struct err *e);

/*
 * Writes the run of o (dataflow o->df) as a VCD to base + ".vcd": the
 * functional model's per-PE signals (func_vcd_open, functional.h; op "lab"),
 * times from the op's cycle 0, the last at the run's cycles (in ps: cycles x
 * 1000 / clock_ghz). s receives the counts. Refused before the run (an input
 * error naming --vcd) when func_vcd_bytes of the closed form's cycles passes
 * sim.max_trace_bytes (run_check_trace_bytes). Returns 0, or -1 with e set (nothing left at the path).
 */
int lab_vcd(const char *base, const struct config *cfg, const struct lab_opts *o, struct lab_summary *s, struct err *e);

#endif
