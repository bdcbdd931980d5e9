/*
 * cfg.h - generic, table-driven loading of keyed values.
 *
 * A schema is a flat list of entries, each one row of a module's key table
 * (cfgkey.h) under a dotted prefix ("array.rows" = prefix "array." + row
 * "rows") and the offset of that module's struct inside the target object.
 * The same code loads accelerator configs and workload layers: it walks a YAML
 * map, rejects unknown keys with a "did you mean" suggestion, checks types and
 * ranges, applies defaults, reports missing required keys, and prints values
 * back in a form that loads to identical values.
 */
#ifndef TPUSIM_CFG_H
#define TPUSIM_CFG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfgkey.h"
#include "err.h"
#include "limit.h"
#include "ydoc.h"

struct cfg_entry {
	char name[CFG_NAME_MAX];        /* full dotted name */
	const struct cfg_key *key;      /* borrowed: a row of a static table */
	size_t base;                    /* offset of the row's struct in the object */
};

struct cfg_schema {
	struct cfg_entry *e;            /* owned */
	size_t n;
	const char *const (*gone)[2];   /* keys there are no more: { name, what replaced it }, ending with { NULL } */
};

/* What replaced key name if it is one there is no more ("area.idle_mw_per_mm2, ..."), or NULL. */
const char *cfg_gone(const struct cfg_schema *s, const char *name);

/* Appends every row of table under prefix ("" or "array."), at offset base. */
int cfg_schema_add(struct cfg_schema *s, const char *prefix, const struct cfg_key *table, size_t base);
void cfg_schema_release(struct cfg_schema *s);

/* Index of the entry named name, or -1. */
int cfg_find(const struct cfg_schema *s, const char *name);

/*
 * The one grammar of numbers in configs, workloads (YAML and CSV) and --set:
 * an optional minus sign, decimal digits without leading zeros ("0" itself
 * is fine), and for a real an optional fraction (".5", "5." too) and exponent
 * ("1e5"). Hex, octal, inf, nan, "+", underscores, spaces and any other
 * character are not numbers. CFG_NUM_RANGE: an integer beyond 64 bits, or a
 * real beyond a double.
 */
enum cfg_num { CFG_NUM_OK, CFG_NUM_BAD, CFG_NUM_RANGE };
enum cfg_num cfg_read_int(const char *text, int64_t *out);
enum cfg_num cfg_read_real(const char *text, double *out);

/* Sets every field to its default; required fields are zeroed. */
void cfg_defaults(const struct cfg_schema *s, void *obj);

/*
 * Parses text into the field of entry i. quoted: the text was quoted in YAML
 * (so it is a string, never a number). at places the error; shown (may be
 * NULL) is put before the key's name in the message, e.g. "layers[3].".
 */
int cfg_parse(const struct cfg_schema *s, int i, void *obj, const char *text, bool quoted,
	      struct pos at, const char *shown, struct err *e);

/*
 * Loads the YAML map m into obj; nested maps spell dotted names ("array:" then
 * "rows:" is array.rows, and so is "array.rows:"). An entry given twice in m,
 * in whatever mix of forms, is an error naming both places. seen[i] and
 * origin[i] (both may be NULL) record which entries were set and where (the
 * value's position). shown as for cfg_parse. An unknown key's "did you
 * mean" names the closest required key m lacks, else the closest of all.
 */
int cfg_load_map(const struct cfg_schema *s, void *obj, const struct ynode *m, const char *shown,
		 bool *seen, struct pos *origin, struct err *e);

/* Checks that every required entry was seen; the error is placed at `at`. */
int cfg_check_required(const struct cfg_schema *s, const bool *seen, struct pos at,
		       const char *shown, struct err *e);

/* Formats the value of entry i as YAML text that cfg_parse reads back identically. */
void cfg_format(const struct cfg_schema *s, int i, const void *obj, char *buf, size_t size);

/* True when every entry of a and b holds the same value. */
bool cfg_equal(const struct cfg_schema *s, const void *a, const void *b);

/* The edit distance from name to cand when close enough to suggest cand for name, else SIZE_MAX. */
size_t cfg_suggest_distance(const char *name, const char *cand);

/*
 * The index of the candidate (of n; NULL ones skipped) closest to name by
 * cfg_suggest_distance, the first of equals, or SIZE_MAX when none is close;
 * dashes: leading dashes of both are not compared ("--fast" is not near
 * "--out"); ties (may be NULL): how many are as close.
 */
size_t cfg_nearest(const char *name, const char *const *cands, size_t n, bool dashes, size_t *ties);

/* " (did you mean X?)" for cfg_nearest's candidate in buf, or "". Returns buf. */
const char *cfg_did_you_mean(const char *name, const char *const *cands, size_t n, bool dashes, char *buf,
			     size_t size);

/* The closest entry name to name, or NULL when none is close. */
const char *cfg_suggest(const struct cfg_schema *s, const char *name);

/* "an integer in [1, 4096]", "one of ws, os, is", ... for error messages and docs. */
void cfg_expected(const struct cfg_key *k, char *buf, size_t size);

/*
 * Prints every entry as nested YAML with "# [unit] doc" comments, in schema
 * order; entries sharing a prefix must be adjacent.
 */
void cfg_dump(const struct cfg_schema *s, const void *obj, FILE *out);

#endif
