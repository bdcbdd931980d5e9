/*
 * etrace.h - the cycle engine's timeline, in the report's cycles, written to
 * any of three sinks: a VCD (vcd.h) for a waveform viewer, an event trace and
 * a DRAM trace (trace.h).
 *
 * The engine's threads report what each array (a lane) does, as events at
 * kernel cycles: an op begins or ends, a load is issued or arrives, a fold
 * starts or ends streaming, a store is issued or done, the array waits (in a
 * category of cat.h), its cycles are charged to a category, the vector unit
 * computes a chunk or moves one. Threads learn of events out of order (a
 * load's arrival when it is issued, a wait only when the fold after it is
 * timed), so events are buffered, sorted stably by cycle (events of one cycle
 * keep the order they were reported in, and a signal shows the last value it
 * takes in a cycle) and written once no thread can report an earlier one:
 * before the frontier the engine names (etrace_flush), and all of them when a
 * pass ends. The buffer holds the events not yet written: memory is O(events
 * in flight), at most O(events of a pass); each event is 136 bytes.
 *
 * Which sink takes what: the VCD every kind but ET_OPEND, ET_CHARGE and the
 * vector unit's transfers (ET_V*); the event trace ET_OP, ET_OPEND, ET_LOAD,
 * ET_FOLD, ET_STORE, ET_CHARGE, ET_VEC and ET_V* (a load or store is one
 * record with its completion; its W records, from ET_CHARGE, are the exact
 * charges, where the VCD's stall signal names one category per wait); the
 * DRAM trace the off-chip loads and stores (ET_LOAD, ET_STORE with where 0,
 * ET_VLOAD, ET_VSTORE). etrace_wants tells the engine which kinds to report.
 *
 * Time: the timeline is the report's. A pass (one engine_run) starting at
 * kernel cycle t0 puts kernel cycle c at base + c - t0, where base is the
 * cycles the earlier passes reported; the pass then adds the cycles its ops
 * report (the last op's stores draining included). The kernel's own clock
 * can stop before the last store completes, or run on after the run's end
 * (a load thread's last steps), so it is not the timeline.
 *
 * The VCD (vcd.h: timescale 1 ps, cycle c at round(c * 1000 / clock_ghz) ps)
 * has a scope `tpusim` with the chip's op (`op`, its name as op_name gives
 * it; `op_index`, its index in the op list) and, inside it, one scope per
 * array, `core<i>_array<j>`, with
 *   op, op_index         the op this array has a part of (op empty: it sits
 *                        the op out)
 *   load                 the last load issued: "<n>:A[m0:m1,k0:k1]" or
 *                        "<n>:B[k0:k1,n0:n1]", n its index among the op's loads
 *                        (instance r of a repeated op: "<n>:rep<r>:A[...]")
 *   loads_in_flight      issued, not yet arrived
 *   loads                arrived so far (the run's count)
 *   fold                 while a fold streams: "<n>:C[m0:m1,n0:n1]+=A[m0:m1,k0:k1]*B[k0:k1,n0:n1]",
 *                        empty between folds
 *   folds                folds done so far
 *   store                the last store issued: "<n>:C[m0:m1,n0:n1]"
 *   stores_in_flight     issued, not yet in HBM (or in on-chip storage)
 *   stores               stores done so far
 *   stall                while the array is not streaming within an op: the
 *                        category its cycles are charged to (cat_names:
 *                        weights, weight_shift, inputs, outputs, fill_drain;
 *                        a wait on several late operands names the last to
 *                        arrive), and "weights"/"inputs"/... while a slow
 *                        buffer port stretches a stream; empty otherwise
 *   vector               while the vector unit computes: "chunk_<i>/<n>"
 * Tiles are in the coordinates of the array's part of the op (chip.h).
 */
#ifndef TPUSIM_ETRACE_H
#define TPUSIM_ETRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "lower.h"
#include "trace.h"

typedef struct etrace etrace;

enum etrace_kind {
	ET_OP,          /* the lane begins op (idx, opi: its index in the op list; arg 1: the lane has a part of it) */
	ET_LOAD,        /* a load issued (idx among the op's loads; arg: enum operand; the tile; addr, bytes, where; end: done) */
	ET_LOADED,      /* a load arrived */
	ET_FOLD,        /* a fold starts streaming (idx among the op's folds; the tile; t, end, out) */
	ET_FOLDED,      /* its stream ends */
	ET_STORE,       /* a store issued (idx among the op's stores; the tile; addr, bytes, where; end: done) */
	ET_STORED,      /* a store done */
	ET_STALL,       /* the array's cycles from here are charged to arg (enum cat), or -1: streaming or idle */
	ET_VEC,         /* the vector unit computes chunk idx of n until end */
	ET_VEC_END,     /* and is done with it */
	ET_OPEND,       /* the lane is done with op (idx) */
	ET_CHARGE,      /* the lane's cycles [cycle, end) are charged to category arg for cause (enum trace_cause) */
	ET_VLOAD,       /* the vector unit issues chunk idx's load from HBM (addr, bytes; end: arrived) */
	ET_VSTORE       /* the vector unit issues chunk idx's store to HBM (addr, bytes; end: done) */
};

struct etrace_ev {
	int64_t cycle;                  /* kernel cycle */
	const struct op *op;            /* borrowed until the pass ends: the op (ET_OP) or the lane's part */
	int64_t opi;                    /* the op's index in the op list */
	int64_t idx;
	int64_t rep, m0, k0, n0, m, k, n;   /* the tile, as struct tile_ins; ET_VEC: n is the chunks */
	uint64_t addr;                  /* loads and stores: HBM address and bytes */
	int64_t bytes;
	int64_t end;                    /* kernel cycles: ET_FOLD its stream end, ET_CHARGE and ET_VEC their end,
					   loads and stores when done */
	int64_t out;                    /* ET_FOLD: its block has left the array, or -1 */
	int64_t t;                      /* ET_FOLD: its compute cycles */
	int16_t lane;
	int8_t kind;                    /* enum etrace_kind */
	int8_t arg;
	int8_t cause;                   /* ET_CHARGE: enum trace_cause */
	int8_t where;                   /* loads and stores: 0 HBM, 1 on-chip storage */
};

/* A timeline with no sink yet, for the arrays of cfg's chip (cfg borrowed; must outlive t). NULL: out of memory. */
etrace *etrace_new(const struct config *cfg);

/*
 * Adds a sink: a VCD at path; an event trace at path whose header is h; a
 * DRAM trace at path in format (enum trace_dram_format). Call before the
 * first pass. Returns 0, or -1 with e set (an input error: the path cannot
 * be written).
 */
int etrace_vcd(etrace *t, const char *path, struct err *e);
int etrace_events(etrace *t, const char *path, const struct trace_head *h, struct err *e);
int etrace_dram(etrace *t, const char *path, int format, struct err *e);

/* Whether a sink takes events of kind (enum etrace_kind): the engine reports no others. */
bool etrace_wants(const etrace *t, int kind);

/* A pass of ops first .. first + n - 1 starts at kernel cycle t0: its events are at base + cycle - t0. */
void etrace_pass(etrace *t, int64_t t0, size_t first, size_t n);

/* Buffers a copy of ev. Returns true when the buffer is due for etrace_flush. */
bool etrace_add(etrace *t, const struct etrace_ev *ev);

/* Writes the buffered events at kernel cycles before `before` (no thread will report an earlier one). */
void etrace_flush(etrace *t, int64_t before);

/*
 * The pass has ended and its ops reported `cycles` in all: writes every event
 * left, moves base on by cycles, writes that time and flushes the VCD.
 * Returns 0, or -1 with e set when a write has failed or memory ran out.
 */
int etrace_pass_end(etrace *t, int64_t cycles, struct err *e);

/* The timeline so far: the cycles of the passes ended. */
int64_t etrace_cycles(const etrace *t);

/*
 * Ends every file at etrace_cycles and frees t. Returns 0, or -1 with e set
 * (the first failure; every file is removed then).
 */
int etrace_close(etrace *t, struct err *e);

/* Removes the files and frees t: a failed run leaves no trace. NULL is a no-op. */
void etrace_abandon(etrace *t);

#endif
