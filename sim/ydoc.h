/*
 * ydoc.h - a YAML document as a small tree of positioned nodes.
 *
 * The only module that includes <yaml.h>. It turns a file into scalars, maps
 * and sequences, each with the 1-based line and column where it starts, so
 * that every later error can say exactly where the bad value is. Loading
 * rejects what the rest of tpusim never wants: a key given twice in one map,
 * non-scalar keys, aliases, and more than one document.
 */
#ifndef TPUSIM_YDOC_H
#define TPUSIM_YDOC_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum ynode_kind { Y_SCALAR, Y_MAP, Y_SEQ };

struct ynode {
	enum ynode_kind kind;
	struct pos pos;
	char *str;              /* Y_SCALAR: the text; owned by the document */
	bool quoted;            /* Y_SCALAR: written in quotes (so never a number) */
	size_t n;               /* Y_MAP: pairs; Y_SEQ: items */
	struct ynode **keys;    /* Y_MAP: n scalar keys */
	struct ynode **vals;    /* Y_MAP: n values; Y_SEQ: n items */
};

struct ydoc {
	char *file;             /* the path as given; nodes' pos.file points here */
	struct ynode *root;     /* NULL for an empty document */
};

/* Parses path. Returns an owned document, or NULL with e set (file:line:col). */
struct ydoc *ydoc_load(const char *path, struct err *e);

/* Parses text held in memory; name is used in positions. Returns owned, or NULL. */
struct ydoc *ydoc_parse(const char *name, const char *text, size_t len, struct err *e);

/*
 * Parses a JSON text (a library request; JSON is YAML's flow style, so the
 * same parser reads it, and messages call it JSON). Returns owned, or NULL.
 */
struct ydoc *ydoc_parse_json(const char *name, const char *text, struct err *e);

/* Frees the document and every node; NULL is a no-op. */
void ydoc_free(struct ydoc *d);

/* The value of key in map m, or NULL (borrowed). */
const struct ynode *ynode_get(const struct ynode *m, const char *key);

/* "a mapping", "a sequence", or the quoted scalar text, for "found ..." messages. */
const char *ynode_describe(const struct ynode *n, char *buf, size_t size);

#endif
