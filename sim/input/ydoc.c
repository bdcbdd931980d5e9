/*
 * ydoc.c - libyaml's event stream folded into a positioned tree (see ydoc.h).
 */
#include "ydoc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "fsx.h"
#include "limit.h"

#define CHUNK_BYTES (64u << 10)     /* arena chunk: thousands of nodes */
#define SMALL_MAP 8                 /* maps up to this many keys are searched; larger ones hashed */

/* ---- the arena: nodes, text and arrays, freed all at once or back to a mark ---- */

struct chunk {
	struct chunk *prev;
	size_t size, used;
	unsigned char data[];
};
_Static_assert(offsetof(struct chunk, data) % 8 == 0, "chunk data must be 8-byte aligned");

struct ydoc_arena {
	struct chunk *top;
	struct chunk *spare;        /* one emptied chunk, kept for the next item of a stream */
};

struct mark {
	struct chunk *c;
	size_t used;
};

static void *arena_alloc(struct ydoc_arena *a, size_t size)
{
	struct chunk *c = a->top;
	void *p;
	size = (size + 7) & ~(size_t)7;
	if (!c || c->size - c->used < size) {
		size_t want = size > CHUNK_BYTES ? size : CHUNK_BYTES;
		if (a->spare && a->spare->size >= want) {
			c = a->spare;
			a->spare = NULL;
		} else if (!(c = malloc(offsetof(struct chunk, data) + want))) {
			return NULL;
		} else {
			c->size = want;
		}
		c->used = 0;
		c->prev = a->top;
		a->top = c;
	}
	p = c->data + c->used;
	c->used += size;
	return p;
}

static struct mark arena_mark(const struct ydoc_arena *a)
{
	return (struct mark){ a->top, a->top ? a->top->used : 0 };
}

static void arena_rewind(struct ydoc_arena *a, struct mark m)
{
	while (a->top != m.c) {
		struct chunk *c = a->top;
		a->top = c->prev;
		if (!a->spare && c->size == CHUNK_BYTES)
			a->spare = c;
		else
			free(c);
	}
	if (a->top)
		a->top->used = m.used;
}

static void arena_free(struct ydoc_arena *a)
{
	if (!a)
		return;
	arena_rewind(a, (struct mark){ NULL, 0 });
	free(a->spare);
	free(a);
}

/* ---- building the tree ---- */

/* A child read but not yet placed: a container's children wait here until it ends. */
struct slot {
	struct ynode *k, *v;
};

/* The keys of one large map: open addressing, each slot 1 + the key's index (0: empty). */
struct keyset {
	uint32_t *slot;
	size_t cap;
};

struct builder {
	struct ydoc *doc;
	struct err *e;
	const char *text;       /* the whole input, for positions of reader errors */
	size_t len;
	const char *lang;       /* "YAML", or "JSON" for a request: what the messages call the input */
	const struct ydoc_stream *st;   /* NULL, or the list to hand out item by item */
	struct slot *stack;     /* children of the containers being read, innermost last */
	size_t top, cap;
	bool stopped;           /* st->stop: the root map ended at st->key */
};

static char empty[1];

static struct pos pos_of(const struct ydoc *d, yaml_mark_t m)
{
	return (struct pos){ d->file, (long)m.line + 1, (long)m.column + 1 };
}

static struct ynode *node_new(struct builder *b, enum ynode_kind kind, yaml_mark_t m)
{
	struct ynode *n = arena_alloc(b->doc->mem, sizeof *n);
	if (!n)
		return NULL;
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->pos = pos_of(b->doc, m);
	n->str = empty;
	return n;
}

static int push(struct builder *b, struct ynode *key, struct ynode *val)
{
	if (b->top == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct slot *s = realloc(b->stack, cap * sizeof *s);
		if (!s)
			return -1;
		b->stack = s;
		b->cap = cap;
	}
	b->stack[b->top++] = (struct slot){ key, val };
	return 0;
}

static uint64_t hash_str(const char *s)
{
	return fsx_fnv(FSX_FNV_INIT, s, strlen(s));
}

/*
 * Finds key among the n keys in keys[] (the map's children so far) and adds
 * it as index n when absent. Returns the index of the equal earlier key, -1
 * when there is none, or -2 when memory ran out.
 */
static long keyset_find_add(struct keyset *ks, const struct slot *keys, size_t n, const char *key)
{
	size_t j;
	if (n < SMALL_MAP) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(keys[i].k->str, key) == 0)
				return (long)i;
		return -1;
	}
	if (2 * (n + 1) > ks->cap) {
		/* Rebuild, twice as large, from every key so far (all distinct). */
		size_t cap = ks->cap ? 2 * ks->cap : 4 * SMALL_MAP;
		uint32_t *t = calloc(cap, sizeof *t);
		if (!t)
			return -2;
		for (size_t i = 0; i < n; i++) {
			for (j = hash_str(keys[i].k->str) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
				;
			t[j] = (uint32_t)i + 1;
		}
		free(ks->slot);
		ks->slot = t;
		ks->cap = cap;
	}
	for (j = hash_str(key) & (ks->cap - 1); ks->slot[j]; j = (j + 1) & (ks->cap - 1))
		if (strcmp(keys[ks->slot[j] - 1].k->str, key) == 0)
			return (long)ks->slot[j] - 1;
	ks->slot[j] = (uint32_t)n + 1;
	return -1;
}

static int parse_error(struct builder *b, yaml_parser_t *p)
{
	struct pos at = { b->doc->file, (long)p->problem_mark.line + 1, (long)p->problem_mark.column + 1 };
	const char *what = p->problem ? p->problem : "malformed input";
	if (p->error == YAML_READER_ERROR) {
		/* The reader reports a byte offset: count lines and columns up to it. */
		at.line = 1, at.col = 1;
		for (size_t i = 0; i < p->problem_offset && i < b->len; i++) {
			if (b->text[i] == '\n')
				at.line++, at.col = 1;
			else
				at.col++;
		}
	}
	if (p->context)
		return err_at(b->e, at, NULL, "expected well-formed %s, found a syntax error: %s (%s)", b->lang, what,
			      p->context);
	return err_at(b->e, at, NULL, "expected well-formed %s, found a syntax error: %s", b->lang, what);
}

/* The tag written on the node of ev, or NULL: "!!str" stands for YAML's own tag:yaml.org,2002:str. */
static const char *tag_of(const yaml_event_t *ev)
{
	const yaml_char_t *t = ev->type == YAML_SCALAR_EVENT ? ev->data.scalar.tag :
			       ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.tag :
			       ev->type == YAML_MAPPING_START_EVENT ? ev->data.mapping_start.tag : NULL;
	return (const char *)t;
}

static int tag_error(struct builder *b, const yaml_event_t *ev, const char *path)
{
	static const char core[] = "tag:yaml.org,2002:";
	const char *tag = tag_of(ev);
	char shown[300], q[300];
	if (strncmp(tag, core, sizeof core - 1) == 0)
		snprintf(shown, sizeof shown, "!!%s", tag + sizeof core - 1);
	else
		snprintf(shown, sizeof shown, "%s", tag);
	return err_at(b->e, pos_of(b->doc, ev->start_mark), path,
		      "expected a plain value, found a tag \"%s\" (tags are not supported)",
		      err_quote(q, sizeof q, shown, 60));
}

static struct ynode *read_node(struct builder *b, yaml_parser_t *p, yaml_event_t *ev, int depth, const char *path);

/* The list of a stream: each item read, handed to the stream's fn, then dropped. */
static struct ynode *read_stream(struct builder *b, yaml_parser_t *p, yaml_event_t *ev, int depth, const char *path)
{
	struct ydoc *d = b->doc;
	struct ynode *n = node_new(b, Y_SEQ, ev->start_mark);
	if (!n) {
		err_nomem(b->e, d->file);
		return NULL;
	}
	for (;;) {
		yaml_event_t iev;
		struct ynode *item;
		struct mark m;
		char sub[256];
		int rc;
		if (!yaml_parser_parse(p, &iev)) {
			parse_error(b, p);
			return NULL;
		}
		if (iev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&iev);
			return n;
		}
		m = arena_mark(d->mem);
		snprintf(sub, sizeof sub, "%s[%zu]", path, d->streamed);
		item = read_node(b, p, &iev, depth + 1, sub);
		yaml_event_delete(&iev);
		if (!item)
			return NULL;
		rc = b->st->fn(b->st->ctx, item, d->streamed, b->e);
		arena_rewind(d->mem, m);
		if (rc)
			return NULL;
		d->streamed++;
	}
}

/* Reads one node whose first event is ev (already taken). */
static struct ynode *read_node(struct builder *b, yaml_parser_t *p, yaml_event_t *ev, int depth, const char *path)
{
	struct ydoc *d = b->doc;
	struct ynode *n = NULL;

	if (depth > YDOC_MAX_DEPTH) {
		err_at(b->e, pos_of(d, ev->start_mark), NULL, "expected at most %d levels of nesting, found more",
		       YDOC_MAX_DEPTH);
		return NULL;
	}
	if (tag_of(ev)) {
		tag_error(b, ev, path);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		size_t len = ev->data.scalar.length;
		n = node_new(b, Y_SCALAR, ev->start_mark);
		if (!n || !(n->str = arena_alloc(d->mem, len + 1)))
			goto oom;
		memcpy(n->str, ev->data.scalar.value, len);
		n->str[len] = '\0';
		if (memchr(n->str, '\0', len)) {
			err_at(b->e, n->pos, path, "expected text, found a NUL character in it");
			return NULL;
		}
		n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		return n;
	}
	case YAML_ALIAS_EVENT:
		err_at(b->e, pos_of(d, ev->start_mark), NULL,
		       "expected a plain value, found an alias (anchors and aliases are not supported)");
		return NULL;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool map = ev->type == YAML_MAPPING_START_EVENT;
		yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
		size_t base = b->top;
		struct keyset ks = { NULL, 0 };
		n = node_new(b, map ? Y_MAP : Y_SEQ, ev->start_mark);
		if (!n)
			goto oom_map;
		for (;;) {
			yaml_event_t kev, vev;
			struct ynode *k = NULL, *v;
			char sub[256];
			if (!yaml_parser_parse(p, &kev)) {
				parse_error(b, p);
				goto fail;
			}
			if (kev.type == end) {
				yaml_event_delete(&kev);
				break;
			}
			if (map) {
				long first;
				if (kev.type != YAML_SCALAR_EVENT) {
					err_at(b->e, pos_of(d, kev.start_mark), NULL, "expected a plain key, found a %s as a key",
					       kev.type == YAML_MAPPING_START_EVENT ? "mapping" :
					       kev.type == YAML_SEQUENCE_START_EVENT ? "sequence" : "non-scalar");
					yaml_event_delete(&kev);
					goto fail;
				}
				k = read_node(b, p, &kev, depth + 1, path);
				yaml_event_delete(&kev);
				if (!k)
					goto fail;
				if (depth == 0 && b->st && b->st->stop && !strcmp(k->str, b->st->key)) {
					b->stopped = true;
					break;
				}
				snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k->str);
				first = keyset_find_add(&ks, b->top > base ? b->stack + base : NULL, b->top - base, k->str);
				if (first == -2)
					goto oom_map;
				if (first >= 0) {
					char q[600];
					err_at(b->e, k->pos, err_quote(q, sizeof q, sub, 200),
					       "expected each key once, found it again (first at line %ld)",
					       b->stack[base + (size_t)first].k->pos.line);
					goto fail;
				}
				if (!yaml_parser_parse(p, &vev)) {
					parse_error(b, p);
					goto fail;
				}
			} else {
				vev = kev;
				snprintf(sub, sizeof sub, "%s[%zu]", path, b->top - base);
			}
			if (map && depth == 0 && b->st && !b->st->stop && vev.type == YAML_SEQUENCE_START_EVENT && !tag_of(&vev) &&
			    strcmp(k->str, b->st->key) == 0)
				v = read_stream(b, p, &vev, depth + 1, sub);
			else
				v = read_node(b, p, &vev, depth + 1, sub);
			yaml_event_delete(&vev);
			if (!v)
				goto fail;
			if (push(b, k, v) < 0)
				goto oom_map;
		}
		/* The container is complete: its children move from the stack into the arena. */
		n->n = b->top - base;
		if (n->n) {
			if (!(n->vals = arena_alloc(d->mem, n->n * sizeof *n->vals)) ||
			    (map && !(n->keys = arena_alloc(d->mem, n->n * sizeof *n->keys))))
				goto oom_map;
			for (size_t i = 0; i < n->n; i++) {
				n->vals[i] = b->stack[base + i].v;
				if (map)
					n->keys[i] = b->stack[base + i].k;
			}
		}
		b->top = base;
		free(ks.slot);
		return n;
oom_map:
		free(ks.slot);
		err_nomem(b->e, d->file);
		return NULL;
fail:
		free(ks.slot);
		return NULL;
	}
	default:
		err_at(b->e, pos_of(d, ev->start_mark), NULL, "expected a value, found an unexpected YAML event");
		return NULL;
	}
oom:
	err_nomem(b->e, d->file);
	return NULL;
}

static struct ydoc *parse(const char *name, yaml_parser_t *p, const char *text, size_t len, const char *lang,
			  const struct ydoc_stream *st, struct err *e)
{
	struct ydoc *d = calloc(1, sizeof *d);
	struct builder b = { d, e, text, len, lang, st, NULL, 0, 0, false };
	yaml_event_t ev;
	int docs = 0;

	if (!d || !(d->file = strdup(name)) || !(d->mem = calloc(1, sizeof *d->mem))) {
		if (d)
			free(d->file);
		free(d);
		err_nomem(e, name);
		return NULL;
	}
	for (;;) {
		if (!yaml_parser_parse(p, &ev)) {
			parse_error(&b, p);
			goto fail;
		}
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
			struct pos at = pos_of(d, ev.start_mark);
			yaml_event_delete(&ev);
			err_at(e, at, NULL, "expected one %s document, found a second", lang);
			goto fail;
		}
		if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_ALIAS_EVENT) {
			struct ynode *r = read_node(&b, p, &ev, 0, "");
			yaml_event_delete(&ev);
			if (!r)
				goto fail;
			d->root = r;
			if (b.stopped)
				break;
			continue;
		}
		yaml_event_delete(&ev);
	}
	free(b.stack);
	return d;
fail:
	free(b.stack);
	ydoc_free(d);
	return NULL;
}

static struct ydoc *parse_text(const char *name, const char *text, size_t len, const char *lang,
			       const struct ydoc_stream *st, struct err *e)
{
	yaml_parser_t p;
	struct ydoc *d;
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		struct pos at = { name, 1, 1 };
		for (const char *c = text; c < nul; c++) {
			if (*c == '\n')
				at.line++, at.col = 1;
			else
				at.col++;
		}
		err_at(e, at, NULL, "expected text, found a NUL byte");
		return NULL;
	}
	if (!yaml_parser_initialize(&p)) {
		err_nomem(e, name);
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	d = parse(name, &p, text, len, lang, st, e);
	yaml_parser_delete(&p);
	return d;
}

struct ydoc *ydoc_parse(const char *name, const char *text, size_t len, struct err *e)
{
	return parse_text(name, text, len, "YAML", NULL, e);
}

struct ydoc *ydoc_parse_json(const char *name, const char *text, struct err *e)
{
	return parse_text(name, text, strlen(text), "JSON", NULL, e);
}

struct ydoc *ydoc_parse_json_stream(const char *name, const char *text, const struct ydoc_stream *st, struct err *e)
{
	return parse_text(name, text, strlen(text), "JSON", st, e);
}

struct ydoc *ydoc_load_stream(const char *path, const struct ydoc_stream *st, struct err *e)
{
	struct pos whole = { path, 0, 0 };
	struct ydoc *d;
	size_t len;
	char *text;

	if (fsx_read(path, YDOC_MAX_BYTES, &text, &len) != 0) {
		if (errno == EISDIR)
			err_at(e, whole, NULL, "expected a file, found a directory");
		else if (errno == EFBIG)
			err_at(e, whole, NULL, "expected a file of at most %u MiB, found a larger one", YDOC_MAX_BYTES >> 20);
		else if (errno == ENOMEM)
			err_nomem(e, path);
		else
			err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
		return NULL;
	}
	d = parse_text(path, text, len, "YAML", st, e);
	free(text);
	return d;
}

const char *ydoc_nothing(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		return "a FIFO that gave nothing (not a regular file)";
	return "an empty file";
}

struct ydoc *ydoc_load(const char *path, struct err *e)
{
	return ydoc_load_stream(path, NULL, e);
}

void ydoc_free(struct ydoc *d)
{
	if (!d)
		return;
	arena_free(d->mem);
	free(d->file);
	free(d);
}

const struct ynode *ynode_get(const struct ynode *m, const char *key)
{
	if (!m || m->kind != Y_MAP)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i]->str, key) == 0)
			return m->vals[i];
	return NULL;
}

const char *ynode_describe(const struct ynode *n, char *buf, size_t size)
{
	if (!n)
		snprintf(buf, size, "nothing");
	else if (n->kind == Y_MAP)
		snprintf(buf, size, "a mapping");
	else if (n->kind == Y_SEQ)
		snprintf(buf, size, "a sequence");
	else if (n->str[0] == '\0')
		snprintf(buf, size, "an empty value");
	else {
		char q[300];
		snprintf(buf, size, "\"%s\"", err_quote(q, sizeof q, n->str, 60));
	}
	return buf;
}
