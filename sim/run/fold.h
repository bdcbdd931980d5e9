/*
 * fold.h - a repeated block run as a few of its instances.
 *
 * A chip's cycle run (chip.prefetch_across_ops) is one simulation on one
 * clock: ops overlap across layers, so an op's result depends on what ran
 * before it and reuse of identical ops (opcache.h) does not apply. A block
 * of many alike instances (96 decoder blocks) still settles into a steady
 * state after a few: each instance then takes what the one before it took.
 *
 * Folding runs a workload whose every block of at least 2 x keep instances
 * keeps its first keep - 1 and its last, chained as the whole block is; the
 * instances left out take the results of the last kept before the last
 * (the representative). The caller checks that the block had settled
 * (fold_steady) and otherwise folds again with twice keep, or runs it all.
 *
 * A block folds only when its instances past the first read alike: each
 * instance's inputs are the instance before's, one instance on, or the same
 * layers outside the block. A later layer that reads an instance left out
 * reads the representative's.
 */
#ifndef TPUSIM_FOLD_H
#define TPUSIM_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "lower.h"
#include "workload.h"

/* The instances kept first (the representative is the 15th), and how near two must be to be settled. */
#define FOLD_KEEP 16
#define FOLD_TOL 1e-4

struct fold {
	struct workload w;              /* the folded workload: its layers owned, the rest borrowed from the whole one */
	size_t *to;                     /* owned: layer i of the whole workload -> the layer of w that stands for it */
	size_t n;                       /* the whole workload's layers */
	int64_t keep;
	/* For fold_steady: each folded block's representative and the instance before it, in w. */
	struct fold_block {
		size_t rep, prev, size;         /* their first layers in w, and the layers an instance has */
		int64_t instances;              /* in the whole block */
	} *blocks;
	size_t nblocks;
};

/*
 * Folds w at keep (at least 3) into f: 1 when a block folded, 0 when none
 * did (f is empty), -1 with e set when memory ran out.
 */
int fold_workload(const struct workload *w, int64_t keep, struct fold *f, struct err *e);
void fold_release(struct fold *f);

/*
 * index: for each (layer, phase) of w, its row in the folded run's results,
 * rows (oplist.rows of the folded ops; NULL: row i is layer i, forward), or
 * SIZE_MAX (owned by the caller, freed with free).
 */
int fold_index(const struct fold *f, const struct oprow *rows, size_t nrows, size_t **index, struct err *e);

/* The folded run's row that stands for the whole run's row (layer, phase), or SIZE_MAX when none does. */
size_t fold_row(const struct fold *f, const size_t *index, size_t layer, int phase);

/*
 * Whether every folded block had settled: in every phase, its
 * representative's cycles and the instance's before differ by at most tol
 * of the larger. cycles: each row's of the folded run.
 */
bool fold_steady(const struct fold *f, const size_t *index, const int64_t *cycles, double tol);

#endif
