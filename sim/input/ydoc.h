/*
 * ydoc.h - a YAML document as a small tree of positioned nodes.
 *
 * The only module that includes <yaml.h>. It turns a file into scalars, maps
 * and sequences, each with the 1-based line and column where it starts, so
 * that every later error can say exactly where the bad value is. Loading
 * rejects what the rest of tpusim never wants: a key given twice in one map,
 * non-scalar keys, aliases, tags (so "!!str 8" is never quietly the number 8),
 * and more than one document.
 *
 * Tuned for workloads of a million layers as well as for small configs:
 * loading is linear in the input (a hash set per large map finds duplicate
 * keys), nodes and their text live in one arena per document, and a caller
 * may take the items of one big list one at a time (ydoc_load_stream), so
 * that they are never all held at once.
 */
#ifndef TPUSIM_YDOC_H
#define TPUSIM_YDOC_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum ynode_kind { Y_SCALAR, Y_MAP, Y_SEQ };

/* Every node, string and array belongs to its document (allocated in its arena). */
struct ynode {
	struct pos pos;
	char *str;              /* Y_SCALAR: the text (no NUL inside); "" otherwise */
	size_t n;               /* Y_MAP: pairs; Y_SEQ: items */
	struct ynode **keys;    /* Y_MAP: n scalar keys */
	struct ynode **vals;    /* Y_MAP: n values; Y_SEQ: n items */
	enum ynode_kind kind;
	bool quoted;            /* Y_SCALAR: written in quotes (so never a number) */
};

struct ydoc_arena;

struct ydoc {
	char *file;             /* the path as given; nodes' pos.file points here */
	struct ynode *root;     /* NULL for an empty document */
	size_t streamed;        /* items handed to a stream's fn (see ydoc_load_stream) */
	struct ydoc_arena *mem; /* private: where the nodes live */
};

/* Parses path. Returns an owned document, or NULL with e set (file:line:col). */
struct ydoc *ydoc_load(const char *path, struct err *e);

/*
 * What a file that held nothing is, as a message says after "found ": "an
 * empty file", or for a FIFO (which reads as nothing when no one writes to
 * it) "a FIFO that gave nothing (not a regular file)".
 */
const char *ydoc_nothing(const char *path);

/* Parses text held in memory; name is used in positions. Returns owned, or NULL. */
struct ydoc *ydoc_parse(const char *name, const char *text, size_t len, struct err *e);

/*
 * Parses a JSON text (a library request; JSON is YAML's flow style, so the
 * same parser reads it, and messages call it JSON). Returns owned, or NULL.
 */
struct ydoc *ydoc_parse_json(const char *name, const char *text, struct err *e);

/*
 * The items of the list under the root map's key `key`, one at a time: fn
 * gets each item (borrowed, with idx counting from 0) as soon as it is read,
 * and the item is freed when fn returns. A nonzero return from fn stops the
 * load with fn's error in e. In the returned document that list is an empty
 * Y_SEQ; d->streamed says how many items fn saw. Any other shape (no such
 * key, a value that is not a list) loads as ydoc_load does.
 */
struct ydoc_stream {
	const char *key;
	int (*fn)(void *ctx, const struct ynode *item, size_t idx, struct err *e);
	void *ctx;
	bool stop;              /* instead: the load ends at the root map's key `key`, whatever its value; the
				   document holds the keys before it (a summary's totals without its layers) */
};

/* As ydoc_load, handing the items of one list to st (borrowed). */
struct ydoc *ydoc_load_stream(const char *path, const struct ydoc_stream *st, struct err *e);

/* As ydoc_parse_json, with st (borrowed) as ydoc_load_stream takes it. */
struct ydoc *ydoc_parse_json_stream(const char *name, const char *text, const struct ydoc_stream *st, struct err *e);

/* Frees the document and every node; NULL is a no-op. */
void ydoc_free(struct ydoc *d);

/* The value of key in map m, or NULL (borrowed). */
const struct ynode *ynode_get(const struct ynode *m, const char *key);

/* "a mapping", "a sequence", or the quoted scalar text, for "found ..." messages. */
const char *ynode_describe(const struct ynode *n, char *buf, size_t size);

#endif
