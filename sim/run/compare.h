/*
 * compare.h - one workload under several dataflows, and what each keeps in
 * the PEs, streams and re-reads.
 *
 * compare_run builds one plan per dataflow (plan.h), runs the workload on it
 * (run_on_plan) and counts what the plan's parts move: on a chip of several
 * arrays, the parts the run ran, against the whole op's distinct bytes. The
 * re-reads follow the loop nests of schedule.h:
 *
 *   array side (bytes the array reads from a buffer over the bytes of the
 *   matrix it sees, A being M x K, im2col for a convolution):
 *     ws  A (streams)   once per column block of N  = nc
 *         B (stays)     once per chunk of M         = nchunks
 *     os  A             once per column block of N  = nc
 *         B             once per row block of M     = nr
 *     is  A (stays)     once per chunk of N         = nchunks
 *         B (streams)   once per column block of M  = nc
 *     ws, is: partial sums read back from the output buffer once per row
 *     block of K after the first (nr - 1 times M x N accumulators); os keeps
 *     them in the PEs (0).
 *   HBM side: the bytes of A and B read from HBM over their bytes in memory
 *     (a convolution's input tensor, not im2col): 1 when the plan keeps the
 *     operand in its buffer, more when it loads tiles again (schedule.h).
 *     Operands held in on-chip activation storage move no HBM bytes and are
 *     left out of both sums.
 *
 * On a chip of several arrays the run splits each op over them; the re-reads
 * here plan each op whole on one array's share of the buffers
 * (chip_array_config), which the split does not change by much but not
 * exactly.
 */
#ifndef TPUSIM_COMPARE_H
#define TPUSIM_COMPARE_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "lower.h"
#include "run.h"
#include "workload.h"

#define COMPARE_MAX 3           /* dataflows: ws, os, is */

/* What one dataflow's plans move, summed over the GEMM ops of a layer or of the run. */
struct compare_reuse {
	int64_t gemm_ops;
	int64_t unique[3];          /* by enum operand: bytes of A (M x K) and B (K x N), and of C's accumulators */
	int64_t sram_read[3];       /* bytes the array reads of A and B; C: partial sums read back */
	int64_t hbm_unique[2];      /* A and B not held on chip: their bytes in HBM (A: a_unique) */
	int64_t hbm_read[2];        /* the HBM bytes read of them */
};

struct compare {
	int n;                                  /* dataflows compared */
	int df[COMPARE_MAX];                    /* enum dataflow, in the order given */
	int base;                               /* index of the dataflow ratios refer to: ws, else the first */
	struct run runs[COMPARE_MAX];           /* owned */
	struct compare_reuse *layers[COMPARE_MAX];      /* owned; one per result row (oplist_nrows) */
	struct compare_reuse total[COMPARE_MAX];
};

/*
 * Runs w (lowered as ops; borrowed) under each of the n dataflows df[] with
 * the options o (its dataflow is ignored) and counts the re-reads. c is
 * filled; compare_release it, also on error. Returns 0, or -1 with e set.
 */
int compare_run(struct compare *c, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		const struct run_opts *o, const int *df, int n, struct err *e);

void compare_release(struct compare *c);

/* read / unique: how many times each byte is read; NAN when there is nothing (unique 0). */
double compare_factor(int64_t read, int64_t unique);

#endif
