/*
 * schedule.h - one GEMM op on one accelerator becomes a tile program.
 *
 * The array runs folds (array.h); the schedule decides their order, how the
 * operands are tiled in the SRAM buffers, and so what crosses HBM.
 *
 *   ws, is: a stationary operand S (kdim x cols: ws B = K x N, is A^T = K x M)
 *           and a streaming operand X (kdim x T: ws A^T, is B). Loop order
 *           ORDER_CT:
 *             for each column block c of S      (C columns of the array)
 *               for each chunk t of T           (tt rows of streaming data)
 *                 for each row block r of kdim  (R rows of the array)
 *                   fold(Sr, Sc, T_t)
 *           or ORDER_TC, with the c and t loops swapped. Partial sums of one
 *           (c, t) stay in the output buffer across r (tt x Sc accumulators,
 *           double buffered), then leave once. S tiles are re-read for every
 *           chunk unless S stays (keep_s: its column panel kdim x Sc in
 *           ORDER_CT, all of it in ORDER_TC); X is re-read for every column
 *           block unless X stays (keep_x: all of it in ORDER_CT, the chunk in
 *           ORDER_TC).
 *   os:     output blocks of R x C stay in the PEs; A (M x K) streams from
 *           the input buffer, B (K x N) from the weight buffer. Loop order:
 *             for each chunk of `chunk` rows of M (a multiple of R)
 *               for each column block c of N
 *                 for each row block of the chunk
 *                   for each part of kpart of K: fold(Sr, Sc, kpart)
 *           The parts of one fold stream back to back into the same
 *           accumulators (the later ones are marked `cont`). A is re-read for
 *           every column block unless the chunk stays (keep_s); B's column
 *           panel (K x Sc) is re-read for every row block unless it stays
 *           (keep_x), and then once per chunk.
 *
 * A convolution's A is its im2col matrix, but memory holds the input tensor
 * once (op->a_elems): A's HBM traffic and kept footprint are that tensor's
 * bytes, spread over A's tiles in proportion (halos between chunks are not
 * re-read); the expansion to im2col rows happens on chip.
 *
 * The planner tries every choice of what to keep, each with every chunk (os:
 * chunk and part of K) of a fixed series that fits the buffers (double-
 * buffered streaming tiles, with weights and inputs sharing one pool when
 * sram.unified), and picks the shortest time by the closed form,
 * max(compute, HBM bytes / bytes per cycle), then the least HBM traffic,
 * then (among plans with similar fold counts) the least memory time a tile
 * pipeline leaves exposed, then the fewest folds and largest tiles. The
 * series does not depend on the buffers, so a larger buffer never makes the
 * closed form slower. Operands are read from HBM and results written back
 * once per op, except an operand that chip placement holds in on-chip
 * activation storage (op->onchip, chip.h): it moves no HBM bytes, takes no
 * room in the staging buffers and counts as kept. The program is produced lazily by sched_next, in
 * O(1) memory, so an engine can execute it fold by fold.
 */
#ifndef TPUSIM_SCHEDULE_H
#define TPUSIM_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "lower.h"


struct sched {
	const struct op *op;            /* borrowed */
	int df;                         /* enum dataflow */
	int64_t R, C;                   /* a fold's extent down (ws/is: of K, Rp x pack; os: of M, Rp) and across */
	int64_t Rp;                     /* the array's rows (the timing's R) */
	int pack, passes;               /* the dtype's rate (array_pack, array_passes) */
	int eb, ab;                     /* bytes per element, per accumulator */
	bool compat;                    /* SCALE-Sim compatible compute timing */
	bool dbuf;                      /* array.weight_double_buffer */

	int64_t rows, cols, t;          /* the GEMM as the array sees it: fold rows x cols, stream T */
	int64_t nr, nc;                 /* fold grid: ceil(rows / R), ceil(cols / C) */
	int64_t chunk, nchunks;         /* ws/is: T per chunk; os: rows of M per chunk */
	int64_t kpart, nparts;          /* os: K streamed per part, parts per fold (ws/is: 0) */
	bool keep_s, keep_x;            /* see above */
	int order;                      /* ws/is: enum array_order, ORDER_CT or ORDER_TC */
	int s_opnd, x_opnd;             /* enum operand of S and X (os: A and B) */
	int s_buf, x_buf;               /* enum sram_buf of S and X, by sram_operand_buf */

	int64_t a_unique;               /* bytes of A in memory, per instance (conv: the input, not im2col) */
	int64_t c_unique;               /* bytes of C in memory, per instance (a conv's dX: the input, col2im) */
	int64_t folds;                  /* over all repeats */
	int64_t read_bytes[2];          /* HBM bytes read of A and B, over all repeats */
	int64_t write_bytes;            /* HBM bytes of C written, over all repeats */
	int64_t footprint[SRAM_NBUF];   /* peak bytes held in each buffer */
	int64_t kept_bytes[2];          /* of A and B: bytes a kept operand holds in its buffer through the op */
	bool onchip[3];                 /* by enum operand: in on-chip activation storage (op->onchip), not HBM */
	int64_t onchip_write_bytes;     /* C bytes written to on-chip storage instead of HBM, over all repeats */
};

/* What fell short when no plan fits: the config key to grow, and the message for it (unpositioned). */
struct sched_short {
	const char *key;                /* static: "sram.outputs.kib", ... */
	char msg[256];
};

/*
 * Plans op (a GEMM) for dataflow df on the accelerator a (one array's view:
 * its buffers are the array's share). ideal: buffers are unbounded and
 * memory ideal. Returns 0, or -1 with *why set when not even the smallest
 * tiles fit (the caller positions it at the key's origin: plan_gemm).
 */
int sched_plan(struct sched *s, const struct op *op, const struct arch *a, int df, bool ideal,
	       struct sched_short *why);

/*
 * The HBM layout of an op's tensors, assigned by the plan. A (M x K), B
 * (K x N) and C (M x N) start at sched_base(OPND_A, _B, _C), each instance of
 * a repeated op right after the previous one. Each matrix is stored tiled by
 * the blocks the plan moves of it, so that every load or store is one
 * contiguous range: block rows one after another, and within a block row the
 * blocks one after another, each row-major; the block at (r0, c0) of h x w in
 * a matrix of W columns starts at element r0 W + h c0. A convolution's A is
 * its input tensor (a_unique bytes per instance): the tile of im2col bytes
 * [x, y) is at [x a / f, y a / f) of it (a = a_unique, f = M K bytes,
 * rounded down), so the tiles partition the tensor. A vector op reads its
 * input from sched_base(OPND_A) and writes its output at sched_base(OPND_C).
 */
uint64_t sched_base(int operand);

/* The plan's fold grid (array.h), whose closed form array_grid_cycles gives. */
struct array_grid sched_grid(const struct sched *s);

/* One instruction of the tile program. */
enum tile_kind { TI_LOAD, TI_FOLD, TI_STORE };

struct tile_ins {
	enum tile_kind kind;
	int operand;                    /* TI_LOAD: OPND_A or OPND_B; TI_STORE, TI_FOLD: OPND_C */
	/*
	 * The block, in the GEMM's coordinates: rows m0 .. m0 + m - 1 of M,
	 * k0 .. of K, n0 .. of N, of repeat instance rep. A load of A moves its
	 * m x k block at (m0, k0), of B the k x n block at (k0, n0); a store
	 * the m x n block of C at (m0, n0); a fold multiplies the first by the
	 * second into the third.
	 */
	int64_t rep;
	int64_t m0, k0, n0;
	int64_t m, k, n;
	/* TI_FOLD */
	int64_t sr, sc, t;              /* the fold in elements (array.h); as timed: sched_fold_view */
	bool cont;                      /* continues the previous fold's accumulation (os parts of K) */
	bool first;                     /* the first fold into its output block's accumulators */
	bool last;                      /* the last: the block is stored after it */
	bool inst_last;                 /* the last fold of its repeat instance */
	/* TI_LOAD, TI_STORE */
	uint64_t addr;                  /* HBM address of the tile, by the layout above */
	int64_t bytes;
};

/*
 * A fold (TI_FOLD) as the array times it: the rows its tile takes and the
 * cycles its stream takes, given a packed rate or passes (array.h): ws/is
 * ceil(Sr / pack) rows streaming T x passes; os Sr rows streaming its part
 * of K, ceil(part / pack) x passes. At rate 1, the fold's own Sr and T.
 */
void sched_fold_view(const struct sched *s, const struct tile_ins *ins, int64_t *sr, int64_t *t);

struct sched_iter {
	const struct sched *s;          /* borrowed */
	int64_t rep, i0, i1, i2, i3;    /* loop indices, outer to inner; private */
	bool done;
	struct tile_ins q[4];           /* instructions of the current step */
	int qn, qi;
};

void sched_iter_init(struct sched_iter *it, const struct sched *s);

/*
 * The TI_FOLD instructions of s's program, over all repeats: s->folds, times
 * the parts of K (nparts) in os. O(1); INT64_MAX if it passes 64 bits.
 */
int64_t sched_fold_ins(const struct sched *s);

/* Next instruction in program order; false at the end. */
bool sched_next(struct sched_iter *it, struct tile_ins *out);

#endif
