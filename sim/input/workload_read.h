/*
 * workload_read.h - what the workload readers share (workload_yaml.c,
 * workload_csv.c; workload.c has the bodies). Not part of the public API:
 * workload.h is.
 */
#ifndef TPUSIM_WORKLOAD_READ_H
#define TPUSIM_WORKLOAD_READ_H

#include "workload.h"

/*
 * The slots of a layer's key positions (struct key_at.key): the rows of its
 * schema, then where the inputs list starts, then each of its names.
 */
#define WORKLOAD_KEY_INPUTS LAYER_MAX_KEYS
#define WORKLOAD_KEY_INPUT(i) (LAYER_MAX_KEYS + 1 + (i))
#define WORKLOAD_KEY_SLOTS (LAYER_MAX_KEYS + 1 + LAYER_MAX_INPUTS)

/* The keys of a layer of type t: name, type, repeat, then the type's own. Built once. */
const struct cfg_schema *workload_layer_schema(int type);

/* The workload's own keys: name and batch. */
const struct cfg_schema *workload_top_schema(void);

/* A new zeroed layer at `at` (path names it, may be NULL), or NULL with e set. */
struct layer *workload_add_layer(struct workload *w, struct pos at, const char *path, struct err *e);

/*
 * Records where the keys of l were given (origin[i].line > 0, i <
 * WORKLOAD_KEY_SLOTS) in the workload's blocks.
 */
int workload_keep_key_pos(struct workload *w, struct layer *l, const struct pos *origin, struct err *e);

/* The readers: fill w (its file, defaults set) from path; on error the caller releases w. */
int workload_read_yaml(struct workload *w, const char *path, struct err *e);
int workload_read_csv(struct workload *w, const char *path, struct err *e);

#endif
