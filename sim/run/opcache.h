/*
 * opcache.h - results of ops already simulated, reused for identical ops.
 *
 * An op that runs alone from a quiet machine (layer by layer: no chip
 * prefetch across ops, no trace) has a result that is a function of the op's
 * shape and placement and of the machine: BERT's twelve encoder layers are
 * one layer run twelve times, a ResNet stage repeats its block. run.c looks
 * each such op up here before simulating it and stores what it simulated.
 *
 * The key is everything the result depends on: the model, the dataflow,
 * ideal memory, every config key that shapes timing or traffic (all but
 * name, energy.* and sim.*: energy is computed from the counts afterwards,
 * the sim.* limits are checked before the run), and the op's fields that
 * planning and the engine read (kind, M, K, N, repeat, operand roles, the
 * input's distinct elements, the vector op's kind and sizes, the on-chip and
 * spill placement). Names, layer indices and tensors are not in it: an op
 * run layer by layer reads and writes at fixed HBM bases (schedule.h) and
 * waits for no other op. Keys are compared whole, the config as its 64-bit
 * FNV-1a hash (two configs that differ in a timing key and hash alike are
 * the one case that could mix; at 2^-64 a pair, not guarded against).
 *
 * A cache may outlive runs (a sweep worker keeps one for all its points);
 * it holds at most OPCACHE_MAX entries and forgets them all when full.
 */
#ifndef TPUSIM_OPCACHE_H
#define TPUSIM_OPCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "limit.h"
#include "lower.h"
#include "stats.h"

struct opkey {
	uint64_t cfg;                   /* opcache_config_hash */
	int32_t model, dataflow, ideal;
	int32_t kind, vec;
	uint8_t a_weight, b_weight, onchip, spill;
	int64_t m, k, n, repeat, a_elems, c_elems;
	int64_t in_elems, out_elems, lane_ops, onchip_elems, spill_elems;
	int64_t coll_elems;             /* a collective's */
	int32_t coll;
	struct ici_group grp;
	uint8_t coll_eb, identity;
};

struct opcache_stats {
	int64_t hits, misses;           /* lookups that found a result, and that did not */
	int64_t forgotten;              /* entries dropped when the cache was full */
};

struct opcache;

struct opcache *opcache_new(void);      /* NULL when memory ran out */
void opcache_free(struct opcache *c);   /* NULL is a no-op */

/* FNV-1a 64 over "key=value" of every config key the result depends on (above). */
uint64_t opcache_config_hash(const struct config *cfg);

/* The key of op under cfg_hash (opcache_config_hash) for a run of model, dataflow, ideal. */
void opcache_key(struct opkey *k, uint64_t cfg_hash, int model, int dataflow, bool ideal, const struct op *op);

/* The result stored under k, or NULL; counts a hit or a miss. */
const struct result *opcache_get(struct opcache *c, const struct opkey *k);

/* Stores r under k (a copy). Returns 0, or -1 when out of memory (nothing stored). */
int opcache_put(struct opcache *c, const struct opkey *k, const struct result *r);

struct opcache_stats opcache_stats(const struct opcache *c);

#endif
