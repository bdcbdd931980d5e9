/*
 * trace.h - the cycle engine's events as a file (an event trace), every
 * off-chip request as a DRAM simulator's trace, and reading event traces back.
 * The only module that uses zlib: trace_gz.c (the compressed byte streams,
 * the one includer of <zlib.h>, checking every zlib return), trace_write.c
 * (the writers) and trace_read.c (the reader and its printing), sharing
 * trace_gz.h and trace_fmt.h. The limits of the format are in limit.h.
 *
 * Files. A path that ends in ".gz" is written as one gzip stream (zlib,
 * deflate level 1); any other path gets the same bytes uncompressed. Readers
 * take either: a file that starts with gzip's magic bytes (1f 8b) is
 * inflated, any other is read as it is.
 *
 * The event trace, format version 1. Its bytes (after inflating) are
 *
 *   a header line, ASCII, ending in '\n':
 *     tpusim-trace 1 config=<name> workload=<name> batch=<n> model=cycle
 *       dataflow=<ws|os|is> ideal_memory=<0|1> rows=<n> cols=<n> cores=<n>
 *       arrays_per_core=<n> dtype=<int8|bf16|fp16|fp32> clock_ghz=<x>
 *       hbm_gbps=<x> hbm_burst_bytes=<n> scalesim_compat=<0|1>
 *       prefetch_across_ops=<0|1>
 *     (one line; the words after the version are key=value, separated by one
 *     space, in this order; a byte of a value that is not printable ASCII, or
 *     is a space, '%' or '=', is written %XX in hex)
 *   then records, in cycle order, and nothing after the last:
 *     one byte, the record's kind (a letter, below), then its fields, each an
 *     unsigned integer in LEB128: 7 bits a byte, low bits first, the top bit
 *     set on every byte but the last; at most 10 bytes (a value below 2^63
 *     takes at most 9, and every field but a ~ one is below 2^63). The first
 *     field of every record is dc, its cycle minus the previous record's
 *     (the first record's: minus 0), so cycles never decrease. A field
 *     marked ~ is the difference from the same field of the lane's previous
 *     record of that kind (for L: of the same operand), or from 0 for the
 *     first, modulo 2^64 and zigzag-encoded (0, -1, 1, -2, ... written as 0,
 *     1, 2, 3, ...): a tile walk costs a byte or two a field.
 *
 * Cycles are the report's timeline, as in the VCD (etrace.h): a pass of the
 * engine starts where the previous one ended, and the last record's cycle is
 * the run's total cycles. lane: the array, core c's array j being lane
 * c x arrays_per_core + j. op: the op's index in the run's op list (as
 * `tpusim lower` lists them). Tiles are in the coordinates of the lane's part
 * of the op, and a repeated op's instance is rep (0 for the first).
 *
 *   P  pass      dc first ops          the engine runs ops first .. first+ops-1
 *                                      together from here (layer by layer: one)
 *   N  name      dc op layer kind len name[len] layer_len layer_name[layer_len]
 *                                      op's name (as tpusim lower names it), the
 *                                      index and name of its result row (its
 *                                      workload layer; from version 3, a
 *                                      training step's other phases: a row
 *                                      after the layers, "conv1 backward"), and
 *                                      kind 0 GEMM, 1 vector op, 2 a collective
 *                                      (from version 4); once, before
 *                                      the op's first O. Layers come in any
 *                                      order (a training step's backward runs
 *                                      them last to first)
 *   O  op        dc lane op part       the lane begins op; part 1: it has a part
 *                                      of it, 0: it sits it out
 *   E  op end    dc lane               the lane is done with its op
 *   L  load      dc lane op operand where wait ~addr ~bytes ~rep ~r0 ~c0 ~rows ~cols
 *                                      the lane's next load of op (they count
 *                                      from 0 in each op) is issued, and arrives
 *                                      wait cycles later: operand 0 A (a vector
 *                                      op: its input), 1 B; where 0 HBM, 1
 *                                      on-chip storage (no off-chip traffic);
 *                                      bytes at HBM address addr; the tile rows
 *                                      r0 .. r0+rows-1, columns c0 .. c0+cols-1
 *                                      of the operand (A: M x K, B: K x N); a
 *                                      vector op loads chunk by chunk, tile 0
 *   F  fold      dc lane t excess drain ~rep ~m0 ~k0 ~n0 ~m ~k ~n
 *                                      the lane's next fold of its op streams
 *                                      from this cycle: t cycles of compute,
 *                                      the stream ending t + excess cycles
 *                                      after it starts (excess > 0: a slow
 *                                      buffer port, charged by a W record);
 *                                      drain: 0, or for the fold that finishes
 *                                      an output block, 1 + the cycles from the
 *                                      stream's end until the block has left
 *                                      the array;
 *                                      C[m0.., n0..] (m x n) += A[m0.., k0..]
 *                                      (m x k) x B[k0.., n0..] (k x n)
 *   S  store     dc lane op where wait ~addr ~bytes ~rep ~m0 ~n0 ~m ~n
 *                                      the lane's next store of op is issued,
 *                                      and done (in HBM, or on chip) wait
 *                                      cycles later: the C block m x n at
 *                                      (m0, n0), or a vector op's next chunk
 *                                      (tile 0); where as for L
 *   W  charge    dc lane cycles cat cause
 *                                      the lane's cycles [cycle, cycle+cycles)
 *                                      of its op are charged to category cat
 *                                      (cat.h: 1 weights .. 6 fill_drain, not
 *                                      0 compute or 5 vector) for cause
 *                                      (trace_cause_names); a wait shared by
 *                                      several late operands is one W a share,
 *                                      back to back
 *   V  vector    dc lane i chunks cycles
 *                                      the lane's vector unit computes chunk i
 *                                      of chunks for cycles (category vector)
 *   Z  end       dc records            the last record: records before it
 *
 * What the records add up to. The compute of a lane's op is its folds' t, and
 * every other cycle of it is a W or a V: from its O to its E the lane's
 * records tile its time exactly once. Every lane begins a pass's first op
 * where the pass begins and each next op where the last lane ended the one
 * before, so the ops tile the pass. An op's cycles are those of its slowest
 * lane (E - O; the lowest lane among equals), and its categories that lane's.
 * A pass ends at its last E or store done (S plus wait), whichever is later:
 * the stores still draining after the arrays are done are charged to the
 * pass's last op as outputs. Passes follow one another without gaps, and Z
 * is at the end of the last. HBM bytes are the bytes of L and S records with
 * where 0. trace_read recomputes all of this, checks it, and it equals the
 * run's report (the trace suite checks every preset and shipped workload).
 * The version goes up when a record changes; readers refuse other versions.
 *
 * The DRAM trace lists every off-chip request as the bursts a DRAM moves:
 * a request for bytes [a, a+n) touches the hbm.burst_bytes (B) aligned
 * bursts floor(a/B) .. floor((a+n-1)/B), one line each, lowest address first,
 * all at the cycle the engine issued the request (the report's timeline, in
 * array clock cycles), in issue order. A partial first or last burst is a
 * whole line, as the channel model (hbm.h) moves whole bursts; so the lines
 * x B are the report's HBM bytes plus, per request, the unused head
 * (a mod B) and tail ((B - (a+n) mod B) mod B) of its end bursts. Formats:
 *   dramsim3    "0x<hex address> READ|WRITE <cycle>", DRAMsim3's trace
 *               (umd-memsys/DRAMsim3, TraceBasedCPU: address, type, cycle)
 *   ramulator2  "LD|ST 0x<hex address>", Ramulator 2.0's LoadStoreTrace
 *               frontend (CMU-SAFARI/ramulator2,
 *               src/frontend/impl/memory_trace/loadstore_trace.cpp), which has
 *               no cycles: requests in issue order
 */
#ifndef TPUSIM_TRACE_H
#define TPUSIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cat.h"
#include "config.h"
#include "err.h"

/*
 * 2: the category op_fixed and the cause fixed; 3: ops' layers in any order
 * (before, never falling); 4: the category exposed_comm, and kind 2, a
 * collective over the pod's links. Traces of versions 1 to 3 still read.
 */
#define TRACE_VERSION 4

enum trace_kind {
	TR_PASS = 'P', TR_NAME = 'N', TR_OP = 'O', TR_OPEND = 'E', TR_LOAD = 'L', TR_FOLD = 'F', TR_STORE = 'S',
	TR_CHARGE = 'W', TR_VEC = 'V', TR_END = 'Z'
};

/* Why a lane's cycles went to a category (a W record's cause). */
enum trace_cause {
	TC_SHIFT,       /* the stationary tile shifting in while nothing streams */
	TC_DRAIN,       /* the array filling or draining (skew), os drain registers */
	TC_WAIT_A,      /* a tile of A (a vector op's input) not yet arrived */
	TC_WAIT_B,      /* a tile of B not yet arrived (ws: and shifted in) */
	TC_WAIT_ACC,    /* no free accumulator tile: an earlier block's store not done */
	TC_PORT,        /* a buffer port slower than the array's edge stretches the stream */
	TC_DEP,         /* an earlier op's result not yet in HBM (a chip's ops overlapping) */
	TC_MEMORY,      /* the memory held a request back (refused it, or could not yet say when) */
	TC_STORES,      /* layer by layer, the op's stores still draining to HBM */
	TC_FIXED,       /* the op's fixed time before it computes (chip.op_fixed_ns) */
	TC_N
};
extern const char *const trace_cause_names[];   /* "shift", ..., "stores", "fixed" */

/* One record, decoded; which fields mean something depends on kind (above). */
struct trace_rec {
	int kind;                       /* enum trace_kind */
	int64_t cycle;                  /* on the report's timeline */
	int lane;
	int64_t op;                     /* every kind but P and Z (E, F, W, V: the lane's op, not written) */
	int64_t idx;                    /* L, F, S, V: its index among the lane's of the op (L, F, S: not written) */
	int64_t first, ops;             /* P */
	int operand;                    /* L: OPND_A or OPND_B */
	bool onchip;                    /* L, S: where 1 */
	uint64_t addr;                  /* L, S */
	int64_t bytes;                  /* L, S */
	int64_t rep, m0, k0, n0, m, k, n;       /* the tile; L: A (m0, k0, m, k) or B (k0, n0, k, n) */
	int64_t t, end, out;            /* F: compute cycles, stream end, block out (-1 none); W, V: end; L, S: done */
	int64_t chunks;                 /* V */
	int cat, cause;                 /* W */
	bool part;                      /* O */
	int opkind;                     /* N: 0 GEMM, 1 vector, 2 collective (enum op_kind) */
	int64_t layer;                  /* N */
	const char *name, *layer_name;  /* N: borrowed for the call */
	int64_t records;                /* Z */
};

/* What the header line records: the design point of the run. */
struct trace_head {
	const struct config *cfg;       /* borrowed */
	const char *workload;           /* the workload's name */
	int64_t batch;
	int dataflow;                   /* the run's (enum dataflow) */
	bool ideal_memory;
};

/* ---- writing an event trace ---- */

typedef struct trace_writer trace_writer;

/*
 * Creates path and writes the header. Returns owned, or NULL with e set (an
 * input error: the path cannot be written; or out of memory).
 */
trace_writer *trace_writer_open(const char *path, const struct trace_head *h, struct err *e);

/*
 * Appends r (cycles not before the previous record's). Errors are kept and
 * reported by trace_writer_close; after one, records are dropped.
 */
void trace_writer_put(trace_writer *w, const struct trace_rec *r);

/*
 * Appends the Z record at cycle end, ends the stream and closes the file;
 * frees w. Returns 0, or -1 with e set (a write failed: the file is removed).
 */
int trace_writer_close(trace_writer *w, int64_t end, struct err *e);

/* Closes and removes the file, frees w: a failed run leaves no trace. NULL is a no-op. */
void trace_writer_abandon(trace_writer *w);

/* ---- writing a DRAM trace ---- */

enum trace_dram_format { TRACE_DRAMSIM3, TRACE_RAMULATOR2 };
extern const char *const trace_dram_format_names[];     /* "dramsim3", "ramulator2", NULL */

typedef struct trace_dram trace_dram;

/* Creates path for requests in format at bursts of burst_bytes. Returns owned, or NULL with e set. */
trace_dram *trace_dram_open(const char *path, int format, int64_t burst_bytes, struct err *e);

/* Writes the bursts of one request issued at cycle (not before the previous request's). */
void trace_dram_request(trace_dram *d, int64_t cycle, uint64_t addr, int64_t bytes, bool write);

/* Ends the file and frees d. Returns 0, or -1 with e set (the file is removed). */
int trace_dram_close(trace_dram *d, struct err *e);

/* Closes and removes the file, frees d. NULL is a no-op. */
void trace_dram_abandon(trace_dram *d);

/* ---- reading an event trace ---- */

/* What a layer's ops add up to. */
struct trace_layer {
	char *name;                     /* owned; NULL: no op of this layer was in the trace */
	int64_t cycles, hbm_read_bytes, hbm_write_bytes, cat[CAT_N];
};

struct trace_summary {
	int version;
	char *head;                     /* owned: the header line's key=value words, decoded, one space apart */
	int lanes;                      /* cores x arrays_per_core */
	double clock_ghz;
	int64_t records, passes, ops, loads, folds, stores, charges, vector_chunks;
	int64_t cycles, hbm_read_bytes, hbm_write_bytes, cat[CAT_N];
	struct trace_layer *layers;     /* owned; nlayers: 1 + the highest layer index named */
	size_t nlayers;
};

/*
 * Reads the event trace at path, checks every record (its kind and fields,
 * that it refers to what came before, that each lane's records tile its
 * ops' time and the passes the timeline) and recomputes the totals into s.
 * fn, when not NULL, gets every record as it is read (before the checks that
 * need the whole file). A file that cannot be read, is not an event trace,
 * is of another version, is corrupt or truncated is an input error naming the
 * file and the offset: "t.gz: byte 812: ..." (of the trace's bytes after
 * inflating), or "t.gz: compressed byte 95: ..." (of the file, when the gzip
 * stream itself is broken). On error s holds nothing to release.
 */
int trace_read(const char *path, struct trace_summary *s, void (*fn)(void *ctx, const struct trace_rec *r),
	       void *ctx, struct err *e);
void trace_summary_release(struct trace_summary *s);

/*
 * One record as a line of text, as `tpusim trace --records` prints it (for
 * people; the file's format is the binary one above): the cycle, the kind's
 * letter, then its fields, e.g.
 *   4 F lane 0 op 0 #0 rep 0 C[0:10,0:4]+=A[0:10,0:4]*B[0:4,0:4] compute 10 stream ends 14
 */
void trace_rec_print(FILE *f, const struct trace_rec *r);

/* Prints s as `tpusim trace` does: the design point, counts, cycles, bytes, categories, and the layers. */
void trace_summary_print(FILE *f, const char *path, const struct trace_summary *s);

#endif
