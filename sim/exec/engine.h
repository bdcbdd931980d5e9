/*
 * engine.h - the cycle-level machine: a tile program executed by concurrent
 * SystemC threads, decoupled access and execute as in the TPU.
 *
 *   load queue    walks the program's loads in order; a streaming tile waits
 *                 for a free slot in its buffer (slots = what the buffer holds
 *                 beyond what the plan keeps resident: TPU v1's 256 KiB weight
 *                 buffer holds four 64 KiB tiles, its weight FIFO); then
 *                 off-chip memory (models/memory) says when the tile has
 *                 arrived. A memory that refuses a request (its queues are
 *                 full) makes the thread wait until the cycle it names and
 *                 issue it again; one that cannot yet say when a request
 *                 completes makes it wait until it can.
 *   matrix unit   runs each fold when its operands have arrived, its shadow
 *                 tile is free and an accumulator tile is free, with the fold
 *                 timing of models/array; streaming from a buffer whose port
 *                 cannot feed the array's edge stretches the stream.
 *   store queue   writes each finished output block to HBM; its accumulator
 *                 tile is free again once the write has completed.
 *   vector unit   vector ops in chunks: load, compute, store, overlapped.
 *
 * Each array of the chip has its three threads (a lane); the vector work of
 * a core runs on its first array's matrix thread. Threads hand each other
 * counts through semaphores (loads issued, blocks finished) and events
 * (blocks stored, ops done) and completion cycles through small rings; each
 * thread waits in multi-cycle steps (a fold, a transfer), so the cost is
 * O(tiles), not O(cycles x PEs). The matrix unit asks models/array when each
 * fold starts and ends and how its cycles split into categories, and shares
 * out the waits for late data by the bytes each operand moved. Loads and
 * stores move the tiles at the addresses the plan gives them. With ideal
 * memory (unbounded buffers, instant HBM) the engine's cycles equal the
 * analytic model's.
 *
 * engine_op runs one op alone on one array: its first loads start when the
 * previous op has finished, stores included (layer by layer). engine_run
 * runs ops over the chip's arrays, one at a time or as a chip runs them
 * (below).
 */
#ifndef TPUSIM_ENGINE_H
#define TPUSIM_ENGINE_H

#include <stdbool.h>

#include "config.h"
#include "err.h"
#include "lower.h"
#include "memory.h"
#include "schedule.h"
#include "stats.h"
#include "trace.h"

typedef struct engine engine;

/*
 * An engine for cfg (borrowed; must outlive it). ideal: unbounded buffers,
 * instant HBM. Each engine is its own simulation kernel, from cycle 0: an op
 * that failed in one engine leaves other engines unaffected.
 */
engine *engine_new(const struct config *cfg, bool ideal, struct err *e);
void engine_free(engine *en);                /* NULL is a no-op */

/*
 * The engine reports to observers (etrace.h) and knows none of them: each
 * sink below is an observer in its own file, and so are the fold ticks.
 *
 * Writes a VCD trace (path + ".vcd") of what follows, in the timeline the
 * results report (each array's op, loads, folds, stores and stalls, the
 * signals listed in engine_vcd.c; cycle c at round(c * 1000 / clock_ghz)
 * ps): each engine_op or engine_run pass goes on where the last ended, by
 * the cycles its ops report. Call before the first op; tracing changes no
 * result. A pass that fails, or passes RUN_MAX_CYCLES in all, fails the
 * trace; the file is complete once the engine is freed, and removed then if
 * the trace failed. Returns 0, or -1 with e set (an input error: the file
 * cannot be created).
 */
int engine_trace(engine *en, const char *path, struct err *e);

/*
 * The size of engine_trace's VCD, estimated for a run of `folds` folds and
 * vector chunks (run_plan_folds) on a chip of `arrays` arrays: a header of
 * ENGINE_VCD_HEAD_BYTES an array, and ENGINE_VCD_FOLD_BYTES a fold, about
 * the most a fold's loads, stream, store and stalls write (measured: 157 to
 * 247 bytes a fold over lab_4x4 mlp and resnet50, tpu_v1 mlp, edge_32x32
 * mobilenet_v2, tpu_v4 bert_base, gemmini tpuv1_lstm0). Saturates at
 * INT64_MAX.
 */
#define ENGINE_VCD_HEAD_BYTES 2048
#define ENGINE_VCD_FOLD_BYTES 256
int64_t engine_vcd_bytes(int64_t arrays, int64_t folds);

/*
 * The size of engine_trace_dram's file, estimated from the run's HBM bytes
 * (the closed form's) in bursts of burst_bytes: a line of
 * ENGINE_DRAM_LINE_BYTES a burst (a dramsim3 line is "0x<address> READ
 * <cycle>": 21 to 27 bytes measured on the same runs). Saturates at INT64_MAX.
 */
#define ENGINE_DRAM_LINE_BYTES 32
int64_t engine_dram_bytes(int64_t hbm_bytes, int64_t burst_bytes);

/*
 * The same for an event trace at path with header h (engine_events.c), and
 * a DRAM trace at path in format (engine_dram.c; trace.h: every off-chip
 * request, in bursts of hbm.burst_bytes, at the cycle it is issued). Any of
 * the three may be asked for; each is one more observer of the same
 * timeline. Tracing changes no result.
 */
int engine_trace_events(engine *en, const char *path, const struct trace_head *h, struct err *e);
int engine_trace_dram(engine *en, const char *path, int format, struct err *e);

/*
 * Ends every trace file of a run that succeeded, reporting a write that
 * failed (-1 with e set; the files are removed). engine_trace_abandon removes
 * them instead: a run that failed leaves none. Either leaves the engine
 * without observers; engine_free also closes what is left, silently.
 */
int engine_trace_close(engine *en, struct err *e);
void engine_trace_abandon(engine *en);

/*
 * For observers (etrace.h): attaches o (takes ownership: freed at once on
 * failure, else with the traces), after those attached before it. Call
 * before the first op. Returns 0, or -1 with e set (out of memory).
 * engine_unobserve detaches and frees those whose ops are ops.
 */
struct etrace_obs;
struct etrace_obs_ops;
int engine_observe(engine *en, struct etrace_obs *o, struct err *e);
void engine_unobserve(engine *en, const struct etrace_obs_ops *ops);

/* The configuration the engine was made for (borrowed). */
const struct config *engine_config(const engine *en);

/*
 * Keeps the configured buffer capacities (and so the schedule) but makes HBM
 * instant and SRAM ports unbounded: the array's own timing under a real
 * plan, which must equal the closed form's (a test oracle).
 */
int engine_instant_memory(engine *en, struct err *e);

/*
 * Simulates one op as planned by s (a plan's part, planned with this engine's config and
 * ideal flag; NULL for a vector op; borrowed) and fills r, all but
 * r->compute_cycles: the array's own time without waits is the plan's closed
 * form, which analytic_check gives. Check the op first (analytic_check), and
 * the run (run.c's limits): a wait past the kernel's last cycle fails the op.
 */
int engine_op(engine *en, const struct op *o, const struct sched *s, struct result *r, struct err *e);

/*
 * Simulates ops i0 .. i0 + n - 1 of ops on the chip's arrays (arch_arrays:
 * the arrays of a core share its buffers, all share the off-chip memory):
 * op k's part on array q is parts[k * arrays + q]. Every array starts op k
 * when all are done with op k - 1; an op's cycles are from there until the
 * slowest array is done, and its categories are that array's. res[k]
 * receives op k's result (its counts summed over the arrays).
 *
 * chip false: n is 1, and the op runs alone from a quiet machine (layer by
 * layer). chip true, as a chip runs a network (chip.prefetch_across_ops):
 * the load queues run on into later ops' tiles while buffer space allows
 * (a core's buffers are pools of bytes shared by its arrays and by the ops:
 * a streaming tile holds its bytes from its load until its fold is done, a
 * kept operand its bytes through its op); an op's stores trail into the
 * next ops' time; loads of an activation that an earlier op writes to HBM
 * wait until it is there; the last op also waits for every store, so the
 * ops' cycles sum to the run. A load queue is in order: an activation tile
 * that must wait for its producer's stores holds up the weights behind it.
 */
int engine_run(engine *en, const struct oplist *ops, size_t i0, size_t n, const struct chip_part *parts, bool chip,
	       struct result *res, struct err *e);

/*
 * The engine's work for op o planned as s (NULL for a vector op; borrowed):
 * the folds the matrix unit runs (sched_fold_ins), or the chunks of
 * vector.lanes x ENGINE_VEC_CHUNK_ROWS lane operations the vector unit runs
 * (at least one). Each costs a few waits of a thread, so an engine runs a
 * few million a second whatever the cycles. O(1), from the plan.
 */
#define ENGINE_VEC_CHUNK_ROWS 1024
int64_t engine_op_folds(const struct config *cfg, const struct op *o, const struct sched *s);

/*
 * Calls fn(ctx, op, folds) from the first array's matrix thread every
 * ENGINE_FOLDS_TICK folds of a GEMM op: op is its index in the pass's
 * oplist, folds the fold instructions it has run so far. For progress
 * reports of long runs; fn must not touch the engine. NULL turns it off.
 * An observer (engine_progress.c); out of memory, there are no ticks.
 */
#define ENGINE_FOLDS_TICK 65536
void engine_on_folds(engine *en, void (*fn)(void *ctx, size_t op, int64_t folds), void *ctx);

/* Replaces the engine's off-chip memory with m (takes ownership): a model outside hbm.model's table. */
void engine_use_memory(engine *en, mem *m);

#endif
