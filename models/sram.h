/*
 * sram.h - the on-chip buffers: weights, inputs, outputs (accumulators).
 *
 * Three named buffers, each with a capacity, a number of banks and a port
 * width in bytes per cycle. With sram.unified the weights and inputs share one
 * scratchpad whose capacity is the sum of the two (Gemmini's layout); outputs
 * always have their own accumulator buffer (TPU v1's 4 MiB accumulators,
 * Gemmini's accumulator SRAM).
 *
 * The scheduler sizes its tiles to these capacities, so a smaller buffer means
 * more HBM re-fetches. Capacities are in KiB (1024 bytes).
 *
 * This module owns the buffer rules every other module asks for: which
 * operand lives in which buffer, what a unified pool leaves each stream,
 * the bank size that sets the energy per access, and what one fold reads and
 * writes in each buffer (the engine counts it fold by fold, the closed form
 * sums it over the folds).
 *
 * A port width may be auto (the default): as wide as the array's edge needs
 * to be fed every cycle, whatever the dataflow (array.h):
 *   weights  max(rows, cols) x element bytes: ws shifts Sc weights a cycle,
 *            is streams Sr, os streams Sc
 *   inputs   max(rows, cols) x element bytes: ws and os stream Sr inputs a
 *            cycle, is shifts Sc
 *   outputs  cols x accumulator bytes: ws and is write (and read back) Sc
 *            partial sums a cycle
 * A narrower port stretches every stream that needs more (sram_stream_cycles).
 */
#ifndef TPUSIM_SRAM_H
#define TPUSIM_SRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "array.h"
#include "cfgkey.h"
#include "limit.h"

enum sram_buf { SRAM_WEIGHTS, SRAM_INPUTS, SRAM_OUTPUTS, SRAM_NBUF };

struct sram_buf_params {
	int64_t kib;
	int64_t banks;
	int64_t bytes_per_cycle;    /* per port; 0: auto */
};

struct sram_params {
	bool unified;
	struct sram_buf_params buf[SRAM_NBUF];
	int64_t edge_bytes[SRAM_NBUF];  /* not a key: what the array's edge needs (sram_fit_edge) */
};

extern const struct cfg_key sram_keys[];
extern const char *const sram_buf_names[];   /* "weights", "inputs", "outputs" */

/* Capacity of buffer b in bytes. */
int64_t sram_bytes(const struct sram_params *p, enum sram_buf b);

/*
 * Bytes per cycle buffer b must move to feed a rows x cols array every cycle,
 * with elem_bytes per operand and acc_bytes per partial sum (the rule above).
 */
int64_t sram_edge_bytes(enum sram_buf b, int64_t rows, int64_t cols, int elem_bytes, int acc_bytes);

/* Records what the array's edge needs in p->edge_bytes: what auto ports resolve to. */
void sram_fit_edge(struct sram_params *p, int64_t rows, int64_t cols, int elem_bytes, int acc_bytes);

/* The width of buffer b's port in bytes per cycle: as configured, or the edge's need when auto. */
int64_t sram_port_bytes(const struct sram_params *p, enum sram_buf b);

/*
 * Where operands live: A in the input buffer, B in the weight buffer, C (the
 * partial sums and results) in the output buffer, in every dataflow df
 * (operand: enum operand of array.h).
 */
enum sram_buf sram_operand_buf(int df, int operand);

/* Whether buffers b and other draw on one pool: the same buffer, or weights and inputs with sram.unified. */
bool sram_shares(const struct sram_params *p, enum sram_buf b, enum sram_buf other);

/* Bytes of the pool buffer b draws on: its own capacity, or with sram.unified the weights' and inputs' together. */
int64_t sram_pool_bytes(const struct sram_params *p, enum sram_buf b);

/*
 * Bytes of buffer b's pool that a plan holding footprint[] (bytes per buffer)
 * leaves for streaming tiles, as b's share: with sram.unified the weights and
 * inputs split what their shared pool has left, half each; otherwise b has
 * what its own buffer has left. May be negative when the footprint overfills.
 */
int64_t sram_stream_room(const struct sram_params *p, enum sram_buf b, const int64_t footprint[SRAM_NBUF]);

/*
 * Tiles of `tile` bytes buffer b holds in flight for one stream: the plan's
 * two, plus what its footprint leaves (its share of a unified pool), at
 * least 2 and at most SRAM_MAX_SLOTS. For the outputs buffer, whose
 * footprint is two accumulator blocks, that is its capacity over a block.
 */
int64_t sram_stream_slots(const struct sram_params *p, enum sram_buf b, const int64_t footprint[SRAM_NBUF],
			  int64_t tile);

/* Bytes of one bank of buffer b (with sram.unified, weights and inputs share their banks): sets the energy per access. */
double sram_bank_bytes(const struct sram_params *p, enum sram_buf b);

/*
 * What folds move through the buffers, in elements: one fold's, or, the
 * counts being linear, the sum over many folds.
 */
struct sram_fold {
	int64_t tile;               /* Sr x Sc: ws/is the stationary tile shifted in; os the outputs, once per block */
	int64_t rows_t;             /* Sr x T: the left operand streamed across the rows */
	int64_t cols_t;             /* Sc x T: ws/is partial sums written; os the top operand streamed down */
	int64_t acc_t;              /* Sc x T: ws/is partial sums read back to accumulate onto */
};

/* One fold of sr x sc streaming t in dataflow df; first: the first fold (part) into its output block. */
struct sram_fold sram_fold_of(int df, int64_t sr, int64_t sc, int64_t t, bool first);

/*
 * Adds the bytes that f moves to rd[] and wr[] (per buffer): eb bytes per
 * operand element, ab per accumulator.
 */
void sram_fold_traffic(int df, int eb, int ab, const struct sram_fold *f, int64_t rd[SRAM_NBUF], int64_t wr[SRAM_NBUF]);

/*
 * The buffers as the engine uses them: reads and writes counted per buffer,
 * and the port width that limits how fast a buffer feeds the array's edge.
 * ideal: unbounded bandwidth (capacity is the schedule's business).
 */
typedef struct sram sram;

/* p: its auto ports resolved (sram_fit_edge). Returns owned, or NULL (out of memory). */
sram *sram_new(const struct sram_params *p, bool ideal);
void sram_free(sram *s);                                    /* NULL is a no-op */
void sram_reset(sram *s);

void sram_read(sram *s, enum sram_buf b, int64_t bytes);
void sram_write(sram *s, enum sram_buf b, int64_t bytes);
int64_t sram_reads(const sram *s, enum sram_buf b);        /* bytes */
int64_t sram_writes(const sram *s, enum sram_buf b);       /* bytes */

/*
 * Cycles to stream t rows into the array when they need `bytes` from buffer
 * b: t if one port keeps up (sram_port_bytes per cycle), longer if not.
 */
int64_t sram_stream_cycles(const sram *s, enum sram_buf b, int64_t t, int64_t bytes);

#endif
