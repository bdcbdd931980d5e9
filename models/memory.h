/*
 * memory.h - off-chip memory behind one interface.
 *
 * A request moves bytes at an address, read or write, issued at a cycle. The
 * memory accepts it and names it with a ticket, or refuses it (back-pressure:
 * its queues are full) and names the cycle at which to try again. The ticket
 * then tells when the request completes (its last byte has arrived or been
 * written), or, if the memory cannot say yet (it is still queued), the cycle
 * at which to ask again. A model that knows completion times at issue answers
 * at once; a queueing model answers once the request is scheduled.
 *
 * Implementations are chosen by name (hbm.model): "channels", the channel
 * model of hbm.h (bandwidth shared by channels, bursts, interleaving,
 * latency), and "ideal" (every request completes the cycle it is issued:
 * what --ideal-memory selects). A new model is one file that defines a struct
 * mem_ops and one row in MEM_MODELS (memory.c).
 *
 * Time is in array clock cycles. Every model counts the same way: an accepted
 * request counts once, its bytes as read or written; a refused one not at all.
 */
#ifndef TPUSIM_MEMORY_H
#define TPUSIM_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"
#include "err.h"

enum hbm_type { HBM_DDR3, HBM_LPDDR4, HBM_HBM2, HBM_HBM2E, HBM_HBM3, HBM_CUSTOM, HBM_NTYPES };

/*
 * The parameters of the off-chip memory, keys hbm.*: the common ones and
 * those of every model (a model reads its own and the common ones).
 */
struct hbm_params {
	int type;                   /* enum hbm_type */
	double gbps;
	int64_t channels;
	double latency_ns;
	int64_t burst_bytes;
	int64_t interleave_bytes;
	int model;                  /* index into mem_model_names */
	double capacity_gib;        /* what the memory holds, GiB; 0: not checked */
};

/* The keys every memory model reads (hbm.type, hbm.gbps, hbm.model); each model declares its own (mem_ops.keys). */
extern const struct cfg_key hbm_keys[];

/*
 * What hbm.type brings: hbm_type_keys names the config keys (full dotted
 * names, NULL-terminated) and hbm_type_defaults[type][j] gives the value of
 * key j for that type as config text, or NULL for the key's own default.
 */
#define HBM_TYPE_NKEYS 7
extern const char *const hbm_type_keys[HBM_TYPE_NKEYS + 1];
extern const char *const hbm_type_defaults[HBM_NTYPES][HBM_TYPE_NKEYS];


/* mem_done: the memory cannot say yet when the request completes. */
#define MEM_NOT_YET INT64_C(-1)

/* The models hbm.model may name, NULL-terminated, in the order of its enum values. */
extern const char *const mem_model_names[];

/*
 * A model's class: its name and its verbs on its own state. Called only
 * through the mem_ functions below, which keep the counts and check the
 * contract (a refusal or a "not yet" names a later cycle).
 */
struct mem_ops {
	const char *name;
	/* Returns owned state at clock_ghz for p (borrowed), or NULL when out of memory. */
	void *(*create)(const struct hbm_params *p, double clock_ghz);
	void (*destroy)(void *s);
	void (*reset)(void *s);                         /* idle, nothing in flight */
	/* Accepts (true, *ticket set) or refuses (false, *retry set to a cycle > now). */
	bool (*issue)(void *s, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket,
		      int64_t *retry);
	/* The cycle the request completes, or MEM_NOT_YET with *ask set to a cycle > now. */
	int64_t (*done)(void *s, uint64_t ticket, int64_t now, int64_t *ask);
	/*
	 * Class facts, known without making one: peak bytes per array clock
	 * cycle (INFINITY when unbounded) and the latency of one request in
	 * whole cycles, for p at clock_ghz. Everyone who needs the memory's
	 * bandwidth or latency (the planner, the closed form, the roofline,
	 * traces) asks these, through mem_model_bytes_per_cycle and
	 * mem_model_latency_cycles.
	 */
	double (*bytes_per_cycle)(const struct hbm_params *p, double clock_ghz);
	int64_t (*latency_cycles)(const struct hbm_params *p, double clock_ghz);
	/* The model's own keys (under hbm., into struct hbm_params), shown by config --dump; NULL: none. */
	const struct cfg_key *keys;
	/*
	 * The model's own counters (at most MEM_MAX_COUNTERS - 1, ending with
	 * name NULL; NULL: none) and their values since creation or the last
	 * reset, into out[] in that order.
	 */
	const struct mem_counter *counters;
	void (*count)(const void *s, int64_t *out);
};

/* Model i of the table (the value i of hbm.model), or NULL past the last. */
const struct mem_ops *mem_model_at(int i);

/* The class p->model names, or the ideal one when ideal is set (--ideal-memory). Borrowed, static. */
const struct mem_ops *mem_model(const struct hbm_params *p, bool ideal);

/*
 * The peak bytes per array clock cycle and the latency in cycles of the
 * memory mem_new(p, clock_ghz, ideal) would make: INFINITY and 0 for the
 * ideal memory.
 */
double mem_model_bytes_per_cycle(const struct hbm_params *p, double clock_ghz, bool ideal);
int64_t mem_model_latency_cycles(const struct hbm_params *p, double clock_ghz, bool ideal);

typedef struct mem mem;

/*
 * The counters of a memory: "requests" (every model: requests accepted), then
 * the model's own (mem_ops.counters), at most MEM_MAX_COUNTERS in all. The
 * cycle engine adds each request's share to its op's result
 * (result.mem_counts), so that they reach summary.json under "memory".
 */
#define MEM_MAX_COUNTERS 4
struct mem_counter {
	const char *name;               /* its key in summary.json: "requests", "bursts", ... */
	const char *unit;
	const char *doc;
};

/* Counter i of the memory the class names (0: requests), or NULL past its last. */
const struct mem_counter *mem_counter_at(const struct mem_ops *ops, int i);

/* The values of m's counters since creation or the last reset, in mem_counter_at's order, into out[MEM_MAX_COUNTERS]. */
void mem_counts(const mem *m, int64_t out[MEM_MAX_COUNTERS]);

/* The class of m. */
const struct mem_ops *mem_class(const mem *m);

/*
 * The model p->model names (the ideal one if ideal is set, whatever p says),
 * at clock_ghz, for p (borrowed, copied where needed). Returns owned, or NULL
 * (out of memory).
 */
mem *mem_new(const struct hbm_params *p, double clock_ghz, bool ideal);

/* The same for a model outside the table (ops borrowed; must outlive the memory). */
mem *mem_new_ops(const struct mem_ops *ops, const struct hbm_params *p, double clock_ghz);

void mem_free(mem *m);                  /* NULL is a no-op */
void mem_reset(mem *m);                 /* idle, zero counts */
const char *mem_name(const mem *m);

/*
 * Issues a request for bytes at addr at cycle now. Returns true and sets
 * *ticket when accepted; returns false and sets *retry (> now) when refused.
 * write: counts as written, not read.
 */
bool mem_issue(mem *m, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket, int64_t *retry);

/*
 * When the request of ticket completes, asked at cycle now: the cycle (at or
 * after its issue), or MEM_NOT_YET with *ask (> now) the cycle to ask again.
 */
int64_t mem_done(mem *m, uint64_t ticket, int64_t now, int64_t *ask);

/* Peak bytes per array clock cycle (INFINITY for the ideal memory), as mem_model_bytes_per_cycle. */
double mem_bytes_per_cycle(const mem *m);

/* Since creation or the last reset: bytes read, bytes written, requests accepted. */
int64_t mem_read_bytes(const mem *m);
int64_t mem_written_bytes(const mem *m);
int64_t mem_requests(const mem *m);

#endif
