/*
 * ydoc.c - libyaml's event stream folded into a positioned tree (see ydoc.h).
 */
#include "ydoc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define YDOC_MAX_DEPTH 64

struct builder {
	struct ydoc *doc;
	struct err *e;
	const char *text;       /* the whole input, for positions of reader errors */
	size_t len;
	const char *lang;       /* "YAML", or "JSON" for a request: what the messages call the input */
};

static struct ynode *node_new(struct ydoc *d, enum ynode_kind kind, yaml_mark_t m)
{
	struct ynode *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	n->kind = kind;
	n->pos.file = d->file;
	n->pos.line = (long)m.line + 1;
	n->pos.col = (long)m.column + 1;
	return n;
}

static void node_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			node_free(n->keys[i]);
		node_free(n->vals[i]);
	}
	free(n->keys);
	free(n->vals);
	free(n->str);
	free(n);
}

static int push(struct ynode *parent, struct ynode *key, struct ynode *val)
{
	size_t cap = parent->n + 1;
	struct ynode **v = realloc(parent->vals, cap * sizeof *v);
	if (!v)
		return -1;
	parent->vals = v;
	if (parent->kind == Y_MAP) {
		struct ynode **k = realloc(parent->keys, cap * sizeof *k);
		if (!k)
			return -1;
		parent->keys = k;
		parent->keys[parent->n] = key;
	}
	parent->vals[parent->n++] = val;
	return 0;
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

/* Reads one node whose first event is ev (already taken). */
static struct ynode *read_node(struct builder *b, yaml_parser_t *p, yaml_event_t *ev, int depth, const char *path)
{
	struct ydoc *d = b->doc;
	struct ynode *n = NULL;

	if (depth > YDOC_MAX_DEPTH) {
		struct pos at = { d->file, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1 };
		err_at(b->e, at, NULL, "expected at most %d levels of nesting, found more", YDOC_MAX_DEPTH);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = node_new(d, Y_SCALAR, ev->start_mark);
		if (!n || !(n->str = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length)))
			goto oom;
		if (strlen(n->str) != ev->data.scalar.length) {
			err_at(b->e, n->pos, path, "expected text, found a NUL character in it");
			goto fail;
		}
		n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		return n;
	case YAML_ALIAS_EVENT: {
		struct pos at = { d->file, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1 };
		err_at(b->e, at, NULL, "expected a plain value, found an alias (anchors and aliases are not supported)");
		return NULL;
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool map = ev->type == YAML_MAPPING_START_EVENT;
		yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
		n = node_new(d, map ? Y_MAP : Y_SEQ, ev->start_mark);
		if (!n)
			goto oom;
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
				return n;
			}
			if (map) {
				if (kev.type != YAML_SCALAR_EVENT) {
					struct pos at = { d->file, (long)kev.start_mark.line + 1, (long)kev.start_mark.column + 1 };
					err_at(b->e, at, NULL, "expected a plain key, found a %s as a key",
					       kev.type == YAML_MAPPING_START_EVENT ? "mapping" :
					       kev.type == YAML_SEQUENCE_START_EVENT ? "sequence" : "non-scalar");
					yaml_event_delete(&kev);
					goto fail;
				}
				k = read_node(b, p, &kev, depth + 1, path);
				yaml_event_delete(&kev);
				if (!k)
					goto fail;
				snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k->str);
				for (size_t i = 0; i < n->n; i++) {
					if (strcmp(n->keys[i]->str, k->str) == 0) {
						char q[600];
						err_at(b->e, k->pos, err_quote(q, sizeof q, sub, 200),
						       "expected each key once, found it again (first at line %ld)",
						       n->keys[i]->pos.line);
						node_free(k);
						goto fail;
					}
				}
				if (!yaml_parser_parse(p, &vev)) {
					node_free(k);
					parse_error(b, p);
					goto fail;
				}
			} else {
				vev = kev;
				snprintf(sub, sizeof sub, "%s[%zu]", path, n->n);
			}
			v = read_node(b, p, &vev, depth + 1, sub);
			yaml_event_delete(&vev);
			if (!v || push(n, k, v) < 0) {
				node_free(k);
				node_free(v);
				if (!v)
					goto fail;
				goto oom;
			}
		}
	}
	default: {
		struct pos at = { d->file, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1 };
		err_at(b->e, at, NULL, "expected a value, found an unexpected YAML event");
		return NULL;
	}
	}
oom:
	err_nomem(b->e, d->file);
fail:
	node_free(n);
	return NULL;
}

static struct ydoc *parse(const char *name, yaml_parser_t *p, const char *text, size_t len, const char *lang,
			  struct err *e)
{
	struct ydoc *d = calloc(1, sizeof *d);
	struct builder b = { d, e, text, len, lang };
	yaml_event_t ev;
	int docs = 0;

	if (!d || !(d->file = strdup(name))) {
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
			struct pos at = { d->file, (long)ev.start_mark.line + 1, (long)ev.start_mark.column + 1 };
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
			continue;
		}
		yaml_event_delete(&ev);
	}
	return d;
fail:
	ydoc_free(d);
	return NULL;
}

static struct ydoc *parse_text(const char *name, const char *text, size_t len, const char *lang, struct err *e)
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
	d = parse(name, &p, text, len, lang, e);
	yaml_parser_delete(&p);
	return d;
}

struct ydoc *ydoc_parse(const char *name, const char *text, size_t len, struct err *e)
{
	return parse_text(name, text, len, "YAML", e);
}

struct ydoc *ydoc_parse_json(const char *name, const char *text, struct err *e)
{
	return parse_text(name, text, strlen(text), "JSON", e);
}

/* Inputs larger than this are not configs or workloads. */
#define YDOC_MAX_BYTES (64u << 20)

struct ydoc *ydoc_load(const char *path, struct err *e)
{
	struct stat st;
	struct pos whole = { path, 0, 0 };
	struct ydoc *d;
	size_t len = 0, cap = 65536;
	char *text;
	FILE *f;

	if (stat(path, &st) != 0) {
		err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		err_at(e, whole, NULL, "expected a file, found a directory");
		return NULL;
	}
	f = fopen(path, "rb");
	if (!f) {
		err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
		return NULL;
	}
	text = malloc(cap);
	while (text) {
		size_t r = fread(text + len, 1, cap - len, f);
		len += r;
		if (len < cap)
			break;
		if (cap >= YDOC_MAX_BYTES) {
			free(text);
			fclose(f);
			err_at(e, whole, NULL, "expected a file of at most %u MiB, found a larger one", YDOC_MAX_BYTES >> 20);
			return NULL;
		}
		char *t = realloc(text, cap *= 2);
		if (!t)
			free(text);
		text = t;
	}
	if (!text || ferror(f)) {
		free(text);
		fclose(f);
		err_at(e, whole, NULL, "expected a readable file, found %s", text ? strerror(errno) : "no memory");
		return NULL;
	}
	fclose(f);
	d = ydoc_parse(path, text, len, e);
	free(text);
	return d;
}

void ydoc_free(struct ydoc *d)
{
	if (!d)
		return;
	node_free(d->root);
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
