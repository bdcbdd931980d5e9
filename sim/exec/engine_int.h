/*
 * engine_int.h - what the engine's two halves share, not outside: the
 * simulation (engine.c: the passes, their lanes and threads) and its report
 * to the timeline (engine_report.c: the events each thread tells its
 * observers, etrace.h). The threads call the er_ functions as they learn
 * what they did; nothing here changes what they simulate.
 */
#ifndef TPUSIM_ENGINE_INT_H
#define TPUSIM_ENGINE_INT_H

#include "array.h"
#include "bus.h"
#include "config.h"
#include "err.h"
#include "lower.h"
#include "etrace.h"
#include "ici.h"
#include "memory.h"
#include "schedule.h"
#include "scw.h"
#include "sram.h"
#include "stats.h"

typedef struct engine engine;       /* as in engine.h, which this does not include: the two halves see its body */

#define RING 16384           /* loads or blocks in flight between two threads: more than the longest
				drain (R + C - 2 < 8192 blocks at one a cycle) with ideal memory */

struct engine {
	const struct config *cfg;   /* borrowed */
	struct sram_params asram;   /* one array's share of its core's buffers (place_array_sram) */
	bool ideal;
	mem *mem;                   /* off-chip memory */
	ici *ici;                   /* the representative chip's links to the others (models/ici.h) */
	int64_t mem_t0;             /* the memory's cycle 0 on the kernel's clock: a layer-by-layer pass's start */
	sram *sram;
	scw_kernel *kernel;         /* owned: this engine's simulation */
	etrace *tr;                 /* owned: the timeline and its observers, or NULL */
	uint32_t want;              /* the kinds of event some observer takes (etrace_wants); 0 without one */
	bool ticks;                 /* some observer takes fold ticks */
	bool tr_failed;             /* a pass failed: the trace is of a failed run */
	bool stopping;              /* a stop was asked for (stop.h): the kernel is stopped once */
};

/* ---- a pass: ops on the load, matrix and store threads ---- */

/* One op of a pass. */
struct opstate {
	const struct op *o;             /* borrowed; NULL: this array has no part of the op */
	const struct sched *s;          /* borrowed; NULL: a vector op */
	struct result *r;               /* its counts and cycles */
	scw_sem *slots[2];              /* one op a pass: free streaming tiles of A and B */
	int64_t oslots;                 /* accumulator tiles */
	int64_t last_store;
};

/*
 * A pass runs ops in program order on one kernel run: the load thread walks
 * their loads, the matrix thread their folds (and a vector op's work), the
 * store thread their stores. One op a pass (engine_op) is layer by layer;
 * several (engine_ops) let the loads run ahead into later ops' tiles and the
 * stores trail into later ops' time, with buffer space shared through pools.
 */
/* What the arrays of a chip share about each op of a pass (the index k is the op's, 0 .. n - 1). */
struct sync {
	int lanes;
	int64_t *finish;                /* when every array is done with op k; valid once fin_left[k] is 0 */
	int *fin_left;                  /* arrays still running op k */
	int64_t *avail;                 /* when op k's results are all where readers find them */
	int *avail_left;                /* parts of op k whose results are not there yet */
	scw_event *ev;                  /* any of these, or a lane's store count, changed */
	int64_t *mark;                  /* tracing: the earliest cycle lane q's matrix thread may still report */
	int64_t *xmark;                 /* tracing: lane q's load (2q) and store (2q + 1) threads, while a transfer
					   keeps them from reporting its issue cycle; INT64_MAX otherwise */
	struct bus bus;                 /* the off-chip bus all lanes share */
	int64_t *bus_bytes;             /* the bytes that crossed it in op k's window; valid once the window closed */
	/* Collectives (the ICI threads), by op k; NULL when the pass has none. */
	struct ici_chain *chains;       /* op k's at chains[k * ICI_NAXES ..] */
	int *nchains, *chains_left;     /* op k's chains, and those still running */
	int64_t *coll_end;              /* when op k's last chain arrived */
	struct icithread *ici_runs;     /* owned: the ICI threads' arguments (engine_ici.c) */
	int ici_alive;                  /* ICI threads not yet finished */
};

struct pass {
	engine *en;
	struct sync *sync;              /* shared by the lanes (arrays) of the run */
	int lane;
	const struct oplist *ops;       /* borrowed: the tensors, for dependencies */
	size_t i0, n;                   /* ops i0 .. i0 + n - 1 of ops */
	struct opstate *st;             /* n */
	bool chip;                      /* several ops: pools and dependencies */
	scw_sem *pool[SRAM_NBUF];       /* chip: free bytes of each buffer's pool (shared pools share one) */
	int64_t pool_cap[SRAM_NBUF];
	scw_sem *issued;                /* loads issued, not yet seen by the matrix unit */
	scw_sem *room;                  /* free entries of done[] */
	scw_sem *finished;              /* output blocks the array has finished */
	int64_t done[RING];             /* arrival cycle of load j, at j % RING */
	int64_t block_ready[RING];      /* cycle block b has left the array */
	int64_t store_done[RING];       /* cycle block b is in HBM (or in on-chip storage) */
	uint64_t store_addr[RING];      /* where block b goes, and its bytes: the program's store, */
	int64_t store_bytes[RING];      /* handed over by the matrix unit */
	int32_t store_op[RING];         /* and its op, in st[] */
	bool store_last[RING];          /* the op's last store */
	int64_t nstores;                /* stores handed over so far */
	int64_t nstored;                /* stores issued so far */
	int64_t blocks;                 /* output blocks begun so far */
	int64_t seen;                   /* loads the matrix unit has taken so far */
	bool matrix_done;               /* no more stores will come */
	int64_t matrix_end, last_store;
	int alive;                      /* threads not yet finished */
	struct etrace_ev *store_tile;   /* tracing: block b's store, at b % RING (RING entries) */
};

/* A part of a wait charged to one category: cat, on whose behalf (enum operand), and its cycles. */
struct piece {
	int cat, opnd;
	int64_t cycles;
};

/* ---- what the threads share (engine.c) ---- */

/* Part k of an op on this lane has put its results where readers find them, at cycle at. */
void en_made_available(struct pass *p, size_t k, int64_t at);

/*
 * chip: waits until tensor t, read by op self of the pass, is there when an
 * earlier op of this pass writes it (only a collective's, when coll). Returns
 * the cycles waited.
 */
int64_t en_wait_tensor(struct pass *p, int32_t t, size_t self, bool coll);

/* Between folds, chunks and steps: a stop asked for (stop.h) ends the kernel's run. */
void en_stop_point(engine *en);

/*
 * The pass's collectives (engine_ici.c), if any: their chains into y and
 * their ICI threads, spawned on en's kernel beside lane p's. Returns the
 * threads spawned, or -1 when memory ran out.
 */
int en_ici_start(engine *en, struct sync *y, struct pass *p);

/* ---- the report (engine_report.c): what each thread does, told as it learns it ---- */

/* Whether some observer takes events of kind. */
static inline bool er_wants(const struct pass *p, int kind)
{
	return p->en->want >> kind & 1;
}

/* This lane's matrix thread will report nothing before cycle c. */
static inline void er_mark(struct pass *p, int64_t c)
{
	p->sync->mark[p->lane] = c;
}

/* An event of kind at cycle about os's op (or none: NULL), arg, idx, with the tile of ins when given. */
void er_trace(struct pass *p, int kind, int64_t cycle, const struct opstate *os, int arg, int64_t idx,
	      const struct tile_ins *ins);

/* The VCD's stall signal: the array's cycles [from, to) go to cat. */
void er_stall(struct pass *p, int cat, int64_t from, int64_t to);

/* The event trace's charges: the lane's cycles [from, to) of op os go to cat, for cause (enum trace_cause). */
void er_charge(struct pass *p, const struct opstate *os, int cat, int cause, int64_t from, int64_t to);

/* Op k of the pass begins at cycle t0 on this lane (os->o NULL: the lane sits it out). */
void er_op(struct pass *p, const struct opstate *os, size_t k, int64_t t0);

/* Load n of op os, the tile of ins, issued at cycle issued and arrived at done; from HBM or (onchip) on-chip storage. */
void er_load(struct pass *p, const struct opstate *os, int64_t n, const struct tile_ins *ins, bool onchip,
	     int64_t issued, int64_t done);

/* Block i's store (at i % RING), store idx of op os, the tile of ins: kept for its issue (er_store). */
void er_store_tile(struct pass *p, const struct opstate *os, int i, int64_t idx, const struct tile_ins *ins);

/* Block i's store (at i % RING), issued at cycle issued, done at p->store_done[i]. */
void er_store(struct pass *p, int i, int64_t issued);

/*
 * Fold nfold of op os, the tile of ins, as the array timer placed it (st,
 * after the previous fold's end prev_end; f the fold it was given): the
 * gap's stalls, the fold, a slow port's stretch, and the event trace's
 * charges of its cycles (its wait's shares pc, np, from charge_stall),
 * which reach *tm_end (the timer's last end) and move it on.
 */
void er_fold(struct pass *p, const struct opstate *os, int64_t nfold, const struct tile_ins *ins, int64_t prev_end,
	     const struct array_step *st, const struct array_fold *f, const struct piece *pc, int np, int64_t *tm_end);

/*
 * A vector op's transfer (kind ET_VLOAD, ET_VSTORE) of bytes at addr, chunk
 * idx, issued at cycle issued (the matrix thread's mark) and done at done.
 */
void er_vxfer(struct pass *p, const struct opstate *os, int kind, int64_t issued, int64_t done, int64_t idx,
	      uint64_t addr, int64_t bytes);

/* Chunk i of n of vector op os computes from now for cyc cycles. */
void er_vec(struct pass *p, const struct opstate *os, int64_t i, int64_t n, int64_t cyc);

#endif
