/*
 * etrace.h - the cycle engine's observers, and the timeline that hands them
 * what each array does in the report's cycles.
 *
 * An observer is a struct of function pointers (struct etrace_obs_ops), each
 * NULL when the observer needs none of it: the engine's trace sinks
 * (engine_vcd.c, engine_events.c, engine_dram.c) and its progress ticks
 * (engine_progress.c) each implement the ones they need. The engine knows
 * none of them: it reports to the timeline, which calls its observers.
 *
 * The engine's threads report what each array (a lane) does, as events at
 * kernel cycles: an op begins or ends, a load is issued or arrives, a fold
 * starts or ends streaming, a store is issued or done, the array waits (in a
 * category of cat.h), its cycles are charged to a category, the vector unit
 * computes a chunk or moves one. The engine reports an event only when some
 * observer takes its kind (etrace_wants). Threads learn of events out of
 * order (a load's arrival when it is issued, a wait only when the fold after
 * it is timed), so events are buffered, sorted stably by cycle (events of one
 * cycle keep the order they were reported in) and handed on once no thread
 * can report an earlier one: before the frontier the engine names
 * (etrace_flush), and all of them when a pass ends. The buffer holds the
 * events not yet handed on: memory is O(events in flight), at most O(events
 * of a pass); each event is 136 bytes. Fold ticks are not in the timeline:
 * they are handed on at once, from the thread that runs the folds.
 *
 * Time: the timeline is the report's. A pass (one engine_run) starting at
 * kernel cycle t0 puts kernel cycle c at base + c - t0, where base is the
 * cycles the earlier passes reported; the pass then adds the cycles its ops
 * report (the last op's stores draining included). The kernel's own clock
 * can stop before the last store completes, or run on after the run's end
 * (a load thread's last steps), so it is not the timeline.
 */
#ifndef TPUSIM_ETRACE_H
#define TPUSIM_ETRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "lower.h"

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
	ET_VSTORE,      /* the vector unit issues chunk idx's store to HBM (addr, bytes; end: done) */
	ET_N
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

struct etrace_obs;

/*
 * What an observer does; a NULL member is one it does not need. Timeline
 * cycles are int64 (saturating at INT64_MAX, as the kernel's clock does).
 */
struct etrace_obs_ops {
	/*
	 * on[kind]: an event of that kind at timeline cycle c, in timeline
	 * order (c never before the last call's). One function may serve
	 * several kinds.
	 */
	void (*on[ET_N])(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c);
	/* Every event at timeline cycle c has been handed on. */
	void (*on_cycle)(struct etrace_obs *o, int64_t c);
	/* A pass of ops first .. first + n - 1 begins at timeline cycle c. */
	void (*on_pass)(struct etrace_obs *o, int64_t c, size_t first, size_t n);
	/* A pass has ended: the timeline reaches c. Returns 0, or -1 with e set (a write failed). */
	int (*on_pass_end)(struct etrace_obs *o, int64_t c, struct err *e);
	/* At once, from the first array's matrix thread: op (its index in the pass's oplist) has run folds. */
	void (*on_folds)(struct etrace_obs *o, size_t op, int64_t folds);
	/* Ends the observer's file at timeline cycle c. Returns 0, or -1 with e set (the file is removed). */
	int (*close)(struct etrace_obs *o, int64_t c, struct err *e);
	/* Removes the observer's unfinished file: a failed run leaves none. */
	void (*abandon)(struct etrace_obs *o);
	/* Frees o (after close or abandon, or in their place). Required. */
	void (*free)(struct etrace_obs *o);
};

/* An observer: embed it first in the observer's own struct. */
struct etrace_obs {
	const struct etrace_obs_ops *ops;
	const char *path;               /* its file (borrowed from the observer), removed when another's close fails; or NULL */
	struct etrace_obs *next;        /* the timeline's */
};

/* A timeline with no observer yet. NULL: out of memory. */
etrace *etrace_new(void);

/* Adds o (takes ownership), after the observers added before it. Call before the first pass. */
void etrace_attach(etrace *t, struct etrace_obs *o);

/* Removes and frees the observers whose ops are ops (none: a no-op). */
void etrace_detach(etrace *t, const struct etrace_obs_ops *ops);

/* The kinds some observer takes: bit kind (enum etrace_kind). The engine reports no others. */
uint32_t etrace_wants(const etrace *t);

/* Whether some observer takes fold ticks. */
bool etrace_ticks(const etrace *t);

/* Hands a fold tick to every observer that takes them. */
void etrace_folds(etrace *t, size_t op, int64_t folds);

/* A pass of ops first .. first + n - 1 starts at kernel cycle t0: its events are at base + cycle - t0. */
void etrace_pass(etrace *t, int64_t t0, size_t first, size_t n);

/* Buffers a copy of ev. Returns true when the buffer is due for etrace_flush. */
bool etrace_add(etrace *t, const struct etrace_ev *ev);

/* Hands on the buffered events at kernel cycles before `before` (no thread will report an earlier one). */
void etrace_flush(etrace *t, int64_t before);

/*
 * The pass has ended and its ops reported `cycles` in all: hands on every
 * event left, moves base on by cycles and tells the observers. Returns 0, or
 * -1 with e set when an observer's write has failed or memory ran out.
 */
int etrace_pass_end(etrace *t, int64_t cycles, struct err *e);

/* The timeline so far: the cycles of the passes ended. */
int64_t etrace_cycles(const etrace *t);

/*
 * Closes every observer at etrace_cycles, in the order they were added, and
 * frees t. Returns 0, or -1 with e set (the first failure: the observers
 * after it are abandoned, and every file is removed then).
 */
int etrace_close(etrace *t, struct err *e);

/* Abandons every observer (their files are removed) and frees t: a failed run leaves no trace. NULL is a no-op. */
void etrace_abandon(etrace *t);

/* Kernel cycle x (never before ev's) on the timeline, as event ev is at timeline cycle c: saturating. */
static inline int64_t etrace_later(const struct etrace_ev *ev, int64_t c, int64_t x)
{
	int64_t d = x - ev->cycle;
	return d > INT64_MAX - c ? INT64_MAX : c + d;
}

#endif
