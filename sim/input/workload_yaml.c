/*
 * workload_yaml.c - a network from a workload YAML file: its keys, its layers
 * and blocks, read as the file streams, and the names `inputs` gives (see
 * workload.h).
 */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsx.h"
#include "limit.h"
#include "ydoc.h"

/*
 * Keys that a layer's mode ignores: giving one is an error (the value would
 * change nothing), found after the layer's keys load. A row: the type, the
 * key, when it is ignored, that condition as messages name it (and the key
 * that sets it, to say "(the default)" when it was not given), and why.
 */
static bool attn_decode(const struct layer *l)
{
	return l->mode == ATTN_DECODE;
}

static bool attn_prefill(const struct layer *l)
{
	return l->mode == ATTN_PREFILL;
}

static bool attn_not_causal(const struct layer *l)
{
	return !l->causal;
}

static bool pool_global(const struct layer *l)
{
	return l->global;
}

static bool conv_hw(const struct layer *l)
{
	return l->kernel_h && l->kernel_w;
}

static const struct ignored_key {
	int type;
	const char *key;
	bool (*ignores)(const struct layer *l);
	const char *when, *by, *why;
} ignored_keys[] = {
	{ L_ATTENTION, "seq", attn_decode, "mode: decode", "mode", "one query, over kv_cache + 1 keys" },
	{ L_ATTENTION, "causal", attn_decode, "mode: decode", "mode", "its one query sees every key" },
	{ L_ATTENTION, "causal_block", attn_decode, "mode: decode", "mode", "only causal prefill has query blocks" },
	{ L_ATTENTION, "causal_block", attn_not_causal, "causal: false", "causal", "only causal prefill has query blocks" },
	{ L_ATTENTION, "kv_cache", attn_prefill, "mode: prefill", "mode", "prefill's keys are its own seq tokens" },
	{ L_POOL, "kernel", pool_global, "global: true", "global", "the window is the whole input" },
	{ L_POOL, "stride", pool_global, "global: true", "global", "the window is the whole input" },
	{ L_POOL, "padding", pool_global, "global: true", "global", "the window is the whole input" },
	{ L_CONV2D, "kernel", conv_hw, "kernel_h and kernel_w", NULL, "they give the filter's height and width" },
};

/*
 * A key of every layer type that is a list, not a value: the key table's
 * loader reads scalars only, so load_inputs reads it. The row documents it
 * and lets a misspelt key be told "did you mean ...inputs?".
 */
static const struct cfg_key list_keys[] = {
	{ "inputs", CFG_STR, 0, "", "[]", 0, 0, NULL,
	  "names of earlier layers whose outputs this layer reads, one per activation input in operand order; "
	  "default: the previous layer's output when it has the size read, else a new network input" },
	CFG_END
};

static const struct cfg_schema *list_schema(void)
{
	static struct cfg_schema s;
	if (!s.n)
		SIM_ASSERT(cfg_schema_add(&s, "", list_keys, 0) == 0);
	return &s;
}

/*
 * The names of the layers read so far, for `inputs`: an open-addressing table
 * of layer indices (the names live in the layers), one layer per name, since
 * a name given twice is an error. A name that is not there may be a later
 * layer's: the load then reads on through the later layers' names alone
 * (pending), to say which it is. Inside a block the loader knows the block
 * and the instance being read, for the names local to it (workload.h).
 */
#define BLOCK_IN "block.in"         /* inside a block: the instance's input */

struct loader {
	struct workload *w;
	int32_t *slot;                  /* owned: layer indices, -1 empty */
	size_t nslot, used;             /* nslot a power of two, at least twice used */
	bool pending;                   /* an inputs name was not found: the later layers are searched for it */
	char want[CFG_STR_MAX];         /* that name ("" when too long to name a layer) */
	char found[300];                /* that name as messages show it */
	char path[96];                  /* "layers[7].inputs[1]" */
	struct pos at;                  /* where it was given */
	const struct ynode *block;      /* the block being read (the map under "block"), or NULL */
	const char *bname;              /* its name */
	struct local *locals;           /* owned: its layers' names in the block, sorted */
	size_t nlocals;
	int64_t inst;                   /* the instance being read */
	size_t first;                   /* that instance's first layer */
};

/* A name a block gives one of its layers, and that layer's index in the block. */
struct local {
	const char *name;               /* borrowed from the block's nodes */
	int sub;
};

static int local_cmp(const void *a, const void *b)
{
	return strcmp(((const struct local *)a)->name, ((const struct local *)b)->name);
}

/* The index in the block being read of its layer named name, or -1. */
static int local_find(const struct loader *ld, const char *name)
{
	struct local key = { name, 0 };
	const struct local *f = bsearch(&key, ld->locals, ld->nlocals, sizeof key, local_cmp);
	return f ? f->sub : -1;
}

static uint64_t name_hash(const char *s)
{
	return fsx_fnv(FSX_FNV_INIT, s, strlen(s));
}

/* The slot of name: its entry, or the empty slot where it would go. */
static size_t names_find(const struct loader *ld, const char *name)
{
	size_t mask = ld->nslot - 1, i = (size_t)name_hash(name) & mask;
	while (ld->slot[i] >= 0 && strcmp(ld->w->layers[ld->slot[i]].name, name) != 0)
		i = (i + 1) & mask;
	return i;
}

/* The layer read so far that is named name, or -1. */
static int32_t names_get(const struct loader *ld, const char *name)
{
	return ld->nslot ? ld->slot[names_find(ld, name)] : -1;
}

/* Adds layer idx under its name; a name an earlier layer has is an error that names both places. */
static int names_put(struct loader *ld, int32_t idx, struct err *e)
{
	const struct layer *l = &ld->w->layers[idx];
	size_t i;
	if (2 * (ld->used + 1) > ld->nslot) {
		size_t n = ld->nslot ? 2 * ld->nslot : 64, old_n = ld->nslot;
		int32_t *old = ld->slot, *v = malloc(n * sizeof *v);
		if (!v)
			return err_nomem(e, ld->w->file);
		memset(v, 0xff, n * sizeof *v);
		ld->slot = v;
		ld->nslot = n;
		for (i = 0; i < old_n; i++)
			if (old[i] >= 0)
				ld->slot[names_find(ld, ld->w->layers[old[i]].name)] = old[i];
		free(old);
	}
	i = names_find(ld, l->name);
	if (ld->slot[i] >= 0) {
		const struct layer *o = &ld->w->layers[ld->slot[i]];
		struct pos first = workload_key_pos(o, "name");
		char path[WORKLOAD_PATH_MAX + 8], other[WORKLOAD_PATH_MAX], inst[CFG_STR_MAX + 48] = "";
		snprintf(path, sizeof path, "%s.name", workload_layer_path(l, other, sizeof other));
		if (l->sub >= 0)
			snprintf(inst, sizeof inst, " (instance %lld of block %s)", (long long)ld->inst, ld->bname);
		return err_at(e, workload_key_pos(l, "name"), path, "expected a name no earlier layer has, found \"%s\"%s, "
			      "the name of %s at line %ld, column %ld", l->name, inst,
			      workload_layer_path(o, other, sizeof other), first.line, first.col);
	}
	ld->used++;
	ld->slot[i] = idx;
	return 0;
}

/* The index in block b's layers (b: the map under "block") of the layer named local, or -1. */
static int block_local(const struct ynode *b, const char *local)
{
	const struct ynode *layers = ynode_get(b, "layers");
	for (size_t j = 0; layers && layers->kind == Y_SEQ && j < layers->n; j++) {
		const struct ynode *m = layers->vals[j], *n = m->kind == Y_MAP ? ynode_get(m, "name") : NULL;
		if (n && n->kind == Y_SCALAR && strcmp(n->str, local) == 0)
			return (int)j;
	}
	return -1;
}

/*
 * Whether name is one that block b (the map under "block", as the file gives
 * it) gives a layer, "b.i.x": the index of x in b's layers, with *inst = i;
 * -1 when it is not.
 */
static int block_find(const struct ynode *b, const char *name, int64_t *inst)
{
	const struct ynode *bn, *rep;
	char num[24];
	const char *p, *dot;
	int64_t n;
	size_t len;
	if (b->kind != Y_MAP || !(bn = ynode_get(b, "name")) || bn->kind != Y_SCALAR || !(rep = ynode_get(b, "repeat")) ||
	    rep->kind != Y_SCALAR || cfg_read_int(rep->str, &n) != CFG_NUM_OK)
		return -1;
	len = strlen(bn->str);
	if (strncmp(name, bn->str, len) != 0 || name[len] != '.')
		return -1;
	p = name + len + 1;
	if (!(dot = strchr(p, '.')) || dot == p || (size_t)(dot - p) >= sizeof num)
		return -1;
	snprintf(num, sizeof num, "%.*s", (int)(dot - p), p);
	if (cfg_read_int(num, inst) != CFG_NUM_OK || *inst < 0 || *inst >= n)
		return -1;
	return block_local(b, dot + 1);
}

/*
 * The layer that name means to a layer being read (workload.h): true with
 * *at set (a layer, or WORKLOAD_NEW_INPUT: block.in with nothing before the
 * block), or false when no layer read so far is meant.
 */
static bool names_resolve(const struct loader *ld, const char *name, int32_t *at)
{
	if (ld->block) {
		char full[2 * CFG_STR_MAX + 32];
		if (strcmp(name, BLOCK_IN) == 0) {
			*at = ld->first ? (int32_t)(ld->first - 1) : WORKLOAD_NEW_INPUT;
			return true;
		}
		snprintf(full, sizeof full, "%s.%lld.%s", ld->bname, (long long)ld->inst, name);
		if ((*at = names_get(ld, full)) >= 0 && (size_t)*at >= ld->first)
			return true;
		if (local_find(ld, name) >= 0)
			return false;           /* the block's own later layer: never one outside it */
	}
	return (*at = names_get(ld, name)) >= 0;
}

/*
 * Loads the scalar keys of map m into l by the type's schema s: every key but
 * inputs, whose value is returned in *inputs (NULL when not given). An unknown
 * key that reads like inputs is told so, after the keys before it load.
 */
/*
 * The keys whose value is a list (a collective's shape and axes): a flow or
 * block sequence of scalars is read as the scalar of its items joined by
 * ", " (lowering reads the list); the text lives in buf (size bytes).
 */
static bool list_key(const char *k)
{
	return !strcmp(k, "shape") || !strcmp(k, "axes");
}

static int join_list(const struct ynode *v, struct ynode *out, char *buf, size_t size, const char *shown,
		     const char *key, struct err *e)
{
	size_t k = 0;
	*out = *v;
	out->kind = Y_SCALAR;
	out->quoted = false;
	out->n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < v->n; i++) {
		char d[80], path[400];
		snprintf(path, sizeof path, "%s%s[%zu]", shown, key, i);
		if (v->vals[i]->kind != Y_SCALAR)
			return err_at(e, v->vals[i]->pos, path, "expected a scalar, found %s",
				      ynode_describe(v->vals[i], d, sizeof d));
		int w = snprintf(buf + k, size - k, "%s%s", i ? ", " : "", v->vals[i]->str);
		if (w < 0 || (size_t)w >= size - k) {
			snprintf(path, sizeof path, "%s%s", shown, key);
			return err_at(e, v->pos, path, "expected a list of at most %zu characters, found more", size - 1);
		}
		k += (size_t)w;
	}
	out->str = buf;
	return 0;
}

static int load_keys(const struct workload *w, struct layer *l, const struct cfg_schema *s, const struct ynode *m,
		     const char *shown, bool *seen, struct pos *origin, const struct ynode **inputs, struct err *e)
{
	size_t cut = m->n, skip = m->n, n = 0;
	struct ynode part = *m, joined[2];
	char text[2][CFG_STR_MAX];
	int rc, nj = 0;
	bool lists = false;

	*inputs = NULL;
	for (size_t j = 0; j < m->n; j++)
		lists |= list_key(m->keys[j]->str) && m->vals[j]->kind == Y_SEQ;
	for (size_t j = 0; j < m->n; j++) {
		const char *k = m->keys[j]->str;
		if (strcmp(k, "inputs") == 0) {
			*inputs = m->vals[j];
			skip = j;
		} else if (cfg_find(s, k) < 0) {
			if (!cfg_suggest(s, k) && cfg_suggest(list_schema(), k))
				cut = j;
			break;
		}
	}
	if (cut == m->n && skip == m->n && !lists)
		return cfg_load_map(s, l, m, shown, seen, origin, e);
	part.keys = malloc((cut + 1) * sizeof *part.keys);
	part.vals = malloc((cut + 1) * sizeof *part.vals);
	if (!part.keys || !part.vals) {
		free(part.keys);
		free(part.vals);
		return err_nomem(e, w->file);
	}
	for (size_t j = 0; j < cut; j++) {
		if (j == skip)
			continue;
		part.keys[n] = m->keys[j];
		part.vals[n] = m->vals[j];
		if (list_key(m->keys[j]->str) && m->vals[j]->kind == Y_SEQ && nj < 2) {
			if (join_list(m->vals[j], &joined[nj], text[nj], sizeof text[nj], shown, m->keys[j]->str, e) < 0) {
				free(part.keys);
				free(part.vals);
				return -1;
			}
			part.vals[n] = &joined[nj++];
		}
		n++;
	}
	part.n = n;
	rc = cfg_load_map(s, l, &part, shown, seen, origin, e);
	free(part.keys);
	free(part.vals);
	if (rc == 0 && cut < m->n) {
		char path[400], q[300];
		snprintf(path, sizeof path, "%s%s", shown, err_quote(q, sizeof q, m->keys[cut]->str, 60));
		rc = err_at(e, m->keys[cut]->pos, path, "expected a known key, found an unknown key (did you mean %sinputs?)",
			    shown);
	}
	return rc;
}

/*
 * Reads v, the inputs list of layer l (at: its path; local: its name as its
 * map gives it), resolving each name (names_resolve). Returns 0, -1 with e
 * set, or 1 when a name is no layer's so far (ld->pending: the caller reads
 * on for it).
 */
static int load_inputs(struct loader *ld, struct layer *l, const char *at, const char *local, const struct ynode *v,
		       struct pos *origin, struct err *e)
{
	char path[96], buf[300];
	int want = workload_ninputs(l);

	snprintf(path, sizeof path, "%s.inputs", at);
	if (v->kind != Y_SEQ)
		return err_at(e, v->pos, path, "expected a list of names of earlier layers, found %s",
			      ynode_describe(v, buf, sizeof buf));
	if (v->n != (size_t)want)
		return err_at(e, v->pos, path, "expected %d name%s, one per activation input of %s, found %zu", want,
			      want == 1 ? "" : "s", layer_type_names[l->type], v->n);
	origin[WORKLOAD_KEY_INPUTS] = v->pos;
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->vals[i];
		int32_t src;
		int64_t k;
		int j;
		snprintf(path, sizeof path, "%s.inputs[%zu]", at, i);
		ynode_describe(it, buf, sizeof buf);
		if (it->kind != Y_SCALAR)
			return err_at(e, it->pos, path, "expected the name of an earlier layer, found %s", buf);
		origin[WORKLOAD_KEY_INPUT(i)] = it->pos;
		if (names_resolve(ld, it->str, &src)) {
			l->inputs[i] = src;
			continue;
		}
		if (strcmp(it->str, local) == 0 || strcmp(it->str, l->name) == 0)
			return err_at(e, it->pos, path, "expected the name of an earlier layer, found %s (this layer)", buf);
		if (ld->block && (j = local_find(ld, it->str)) >= 0)
			return err_at(e, it->pos, path, "expected the name of an earlier layer, found %s (layers[%u].block."
				      "layers[%d], a later layer of the block; " BLOCK_IN " is the instance's input)", buf,
				      (unsigned)l->item, j);
		if (ld->block && (j = block_find(ld->block, it->str, &k)) >= 0 && k >= ld->inst)
			return err_at(e, it->pos, path, "expected the name of an earlier layer, found %s (layers[%u].block."
				      "layers[%d] of instance %lld, a later layer)", buf, (unsigned)l->item, j, (long long)k);
		ld->pending = true;
		snprintf(ld->want, sizeof ld->want, "%s", strlen(it->str) < CFG_STR_MAX ? it->str : "");
		snprintf(ld->found, sizeof ld->found, "%s", buf);
		snprintf(ld->path, sizeof ld->path, "%s", path);
		ld->at = it->pos;
		ld->at.file = ld->w->file;           /* the document may be gone when the error is made */
		return 1;
	}
	l->ninputs = (uint8_t)v->n;
	return 0;
}

/*
 * The header of f, the workload's last file, read and checked now, before
 * anything runs. A block's instances name the same files over again: a file
 * that one of the last two named is not read again.
 */
static int file_head(struct workload *w, struct layer_file *f, struct err *e)
{
	for (size_t j = w->nfiles - 1; j-- > 0 && j + 4 > w->nfiles;)
		if (!strcmp(w->files[j].path, f->path)) {
			f->head = w->files[j].head;
			return 0;
		}
	return npy_head(f->path, f->at, f->key, &f->head, e);
}

/*
 * A matmul's a_npy and b_npy keys (struct layer_file): taken out of m (into
 * *rest, whose arrays the caller frees) and kept in the workload with the
 * path resolved against the workload file's directory. idx is the layer's
 * index in the workload, at its path in the file.
 */
static int load_files(struct workload *w, const struct ynode *m, size_t idx, const char *at, struct ynode *rest,
		      struct err *e)
{
	*rest = *m;
	rest->keys = malloc((m->n + 1) * sizeof *rest->keys);
	rest->vals = malloc((m->n + 1) * sizeof *rest->vals);
	if (!rest->keys || !rest->vals)
		return err_nomem(e, w->file);
	rest->n = 0;
	for (size_t j = 0; j < m->n; j++) {
		const char *k = m->keys[j]->str;
		const struct ynode *v = m->vals[j];
		int opnd = !strcmp(k, "a_npy") ? 0 : !strcmp(k, "b_npy") ? 1 : -1;
		char path[96], buf[300];
		if (opnd < 0) {
			rest->keys[rest->n] = m->keys[j];
			rest->vals[rest->n++] = m->vals[j];
			continue;
		}
		snprintf(path, sizeof path, "%s.%s", at, k);
		struct pos p = v->pos;
		p.file = w->file;
		if (v->kind != Y_SCALAR || !*v->str)
			return err_at(e, p, path, "expected the path of a .npy file, found %s", ynode_describe(v, buf, sizeof buf));
		struct layer_file *f = realloc(w->files, (w->nfiles + 1) * sizeof *f);
		if (!f)
			return err_nomem(e, w->file);
		w->files = f;
		f = &w->files[w->nfiles];
		const char *slash = strrchr(w->file, '/');
		int dir = v->str[0] == '/' || !slash ? 0 : (int)(slash - w->file + 1);
		size_t len = (size_t)dir + strlen(v->str) + 1;
		if (!(f->path = malloc(len)))
			return err_nomem(e, w->file);
		snprintf(f->path, len, "%.*s%s", dir, w->file, v->str);
		f->layer = idx;
		f->operand = opnd;
		f->at = p;
		snprintf(f->key, sizeof f->key, "%s", path);
		w->nfiles++;
		if (file_head(w, f, e) < 0)
			return -1;
	}
	return 0;
}

/* A key given that l's mode ignores (ignored_keys): an error at its value. */
static int check_ignored(const struct layer *l, const struct cfg_schema *s, const struct ynode *m, const bool *seen,
			 const struct pos *origin, const char *shown, struct err *e)
{
	for (size_t r = 0; r < sizeof ignored_keys / sizeof *ignored_keys; r++) {
		const struct ignored_key *k = &ignored_keys[r];
		int i, by;
		char path[WORKLOAD_PATH_MAX + 32], buf[300];
		if (k->type != l->type || !seen[i = cfg_find(s, k->key)] || !k->ignores(l))
			continue;
		by = k->by ? cfg_find(s, k->by) : -1;
		snprintf(path, sizeof path, "%s%s", shown, k->key);
		return err_at(e, origin[i], path, "expected no %s with %s%s, which %s it (%s), found %s", k->key, k->when,
			      by >= 0 && !seen[by] ? " (the default)" : "", k->by ? "ignores" : "override", k->why,
			      ynode_describe(ynode_get(m, k->key), buf, sizeof buf));
	}
	return 0;
}

/*
 * Loads layer m, the file's layers[item] or, in a block (sub >= 0), that
 * block's layers[sub] for the instance ld is at. Returns 0, -1 with e set,
 * or 1 (see load_inputs).
 */
static int load_layer(struct loader *ld, const struct ynode *m, size_t item, int sub, struct err *e)
{
	struct workload *w = ld->w;
	char at[WORKLOAD_PATH_MAX], shown[WORKLOAD_PATH_MAX + 8], buf[96], local[CFG_STR_MAX];
	const struct ynode *tn, *inputs;
	const struct cfg_schema *s;
	bool seen[LAYER_MAX_KEYS] = { 0 };
	struct pos origin[WORKLOAD_KEY_SLOTS] = { 0 };
	struct layer *l;
	int t, rc;

	if (sub >= 0)
		snprintf(at, sizeof at, "layers[%zu].block.layers[%d]", item, sub);
	else
		snprintf(at, sizeof at, "layers[%zu]", item);
	if (!(l = workload_add_layer(w, m->pos, at, e)))
		return -1;
	l->item = (uint32_t)item;
	l->sub = sub;
	if (m->kind != Y_MAP)
		return err_at(e, m->pos, at, "expected a mapping with a type, found %s", ynode_describe(m, buf, sizeof buf));
	/* shown: "at." (messages put a key's name after it); "at.key" where a message needs it */
	snprintf(shown, sizeof shown, "%s.", at);
	for (size_t j = 0; sub >= 0 && j < m->n; j++) {
		if (strcmp(m->keys[j]->str, "block") == 0) {
			snprintf(shown, sizeof shown, "%s.block", at);
			return err_at(e, m->keys[j]->pos, shown, "expected a layer (blocks do not nest), found a block");
		}
	}
	tn = ynode_get(m, "type");
	if (!tn || tn->kind != Y_SCALAR)
		snprintf(shown, sizeof shown, "%s.type", at);
	/* Parse the type with the common schema first, to pick the type's schema. */
	{
		struct layer probe;
		const struct cfg_schema *c = workload_layer_schema(L_ADD);
		if (!tn) {
			char exp[512];
			cfg_expected(c->e[cfg_find(c, "type")].key, exp, sizeof exp);
			return err_at(e, m->pos, shown, "expected %s, found no value (the key is required)", exp);
		}
		if (tn->kind != Y_SCALAR)
			return err_at(e, tn->pos, shown, "expected a layer type, found %s", ynode_describe(tn, buf, sizeof buf));
		if (cfg_parse(c, cfg_find(c, "type"), &probe, tn->str, tn->quoted, tn->pos, shown, e) < 0)
			return -1;
		t = probe.type;
	}
	s = workload_layer_schema(t);
	cfg_defaults(s, l);
	l->pos = m->pos;
	l->pos.file = w->file;
	if (t == L_MATMUL) {
		struct ynode rest;
		rc = load_files(w, m, w->n - 1, at, &rest, e);
		if (rc == 0)
			rc = load_keys(w, l, s, &rest, shown, seen, origin, &inputs, e);
		free(rest.keys);
		free(rest.vals);
		if (rc < 0)
			return -1;
	} else if (load_keys(w, l, s, m, shown, seen, origin, &inputs, e) < 0) {
		return -1;
	}
	if (cfg_check_required(s, seen, m->pos, shown, e) < 0)
		return -1;
	memcpy(local, l->name, sizeof local);
	if (ld->block) {
		/* Instance i of block b calls its layer x "b.i.x". */
		int i = cfg_find(s, "name");
		char full[2 * CFG_STR_MAX + 32], path[WORKLOAD_PATH_MAX + 8];
		int n = snprintf(full, sizeof full, "%s.%lld.%s", ld->bname, (long long)ld->inst, local);
		if (strcmp(local, BLOCK_IN) == 0 || n >= CFG_STR_MAX)
			snprintf(path, sizeof path, "%s.name", at);
		if (strcmp(local, BLOCK_IN) == 0)
			return err_at(e, origin[i], path, "expected a name other than " BLOCK_IN " (in a block it means "
				      "the instance's input), found \"%s\"", local);
		if (n >= CFG_STR_MAX)
			return err_at(e, origin[i], path, "expected a name that is at most %d characters with its "
				      "block's prefix, found \"%s\"", CFG_STR_MAX - 1, full);
		memcpy(l->name, full, (size_t)n + 1);
	}
	if (check_ignored(l, s, m, seen, origin, shown, e) < 0)
		return -1;
	if (inputs && (rc = load_inputs(ld, l, at, local, inputs, origin, e)) != 0)
		return rc;
	return workload_keep_key_pos(w, l, origin, e);
}

/* A block's keys (workload.h); layers is a list, read by load_block, and its row documents it. */
struct block_spec {
	char name[CFG_STR_MAX];
	int64_t repeat;
};

static const struct cfg_key block_keys[] = {
	{ "name", CFG_STR, offsetof(struct block_spec, name), "", NULL, 0, 0, NULL,
	  "the block's name: instance i of its layer x is named name.i.x" },
	{ "repeat", CFG_INT, offsetof(struct block_spec, repeat), "", NULL, 1, WORKLOAD_COUNT_MAX, NULL,
	  "instances of the block's layers, one after another" },
	{ "layers", CFG_STR, 0, "", "[]", 0, 0, NULL, "the block's layers: at least one, and no blocks" },
	CFG_END
};

static const struct cfg_schema *block_schema(void)
{
	static struct cfg_schema s;
	if (!s.n)
		SIM_ASSERT(cfg_schema_add(&s, "", block_keys, 0) == 0);
	return &s;
}

/*
 * Loads the file's layers[idx], the map item holding b, a block: its layers
 * repeat times over. Returns 0, -1 with e set, or 1 (see load_inputs).
 */
static int load_block(struct loader *ld, const struct ynode *item, const struct ynode *b, size_t idx, struct err *e)
{
	const struct cfg_schema *bs = block_schema();
	struct workload *w = ld->w;
	struct block_spec spec = { "", 0 };
	bool seen[3] = { false, false, false };
	const struct ynode *layers = NULL;
	struct pos rep_at = b->pos;
	char shown[WORKLOAD_PATH_MAX], path[WORKLOAD_PATH_MAX + 80], q[300], buf[300];
	int rc = 0;

	SIM_ASSERT(bs->n == sizeof seen / sizeof *seen);
	for (size_t j = 0; j < item->n; j++) {
		if (strcmp(item->keys[j]->str, "block") != 0) {
			snprintf(path, sizeof path, "layers[%zu].%s", idx, err_quote(q, sizeof q, item->keys[j]->str, 60));
			return err_at(e, item->keys[j]->pos, path, "expected a block alone in its item (its name, repeat and "
				      "layers go inside block), found a key beside it");
		}
	}
	snprintf(shown, sizeof shown, "layers[%zu].block", idx);
	if (b->kind != Y_MAP)
		return err_at(e, b->pos, shown, "expected a mapping with name, repeat and layers, found %s",
			      ynode_describe(b, buf, sizeof buf));
	snprintf(shown, sizeof shown, "layers[%zu].block.", idx);
	for (size_t j = 0; j < b->n; j++) {
		const struct ynode *k = b->keys[j], *v = b->vals[j];
		int i;
		if (strcmp(k->str, "layers") == 0) {
			layers = v;
			continue;
		}
		snprintf(path, sizeof path, "%s%s", shown, err_quote(q, sizeof q, k->str, 60));
		if ((i = cfg_find(bs, k->str)) < 0) {
			const char *hint = cfg_suggest(bs, k->str);
			if (hint)
				return err_at(e, k->pos, path, "expected a known key, found an unknown key (did you mean %s%s?)",
					      shown, hint);
			return err_at(e, k->pos, path, "expected a known key (name, repeat, layers), found an unknown key");
		}
		if (v->kind != Y_SCALAR) {
			char exp[128];
			cfg_expected(bs->e[i].key, exp, sizeof exp);
			return err_at(e, v->pos, path, "expected %s, found %s", exp, ynode_describe(v, buf, sizeof buf));
		}
		if (cfg_parse(bs, i, &spec, v->str, v->quoted, v->pos, shown, e) < 0)
			return -1;
		seen[i] = true;
		if (strcmp(k->str, "repeat") == 0)
			rep_at = v->pos;
	}
	if (cfg_check_required(bs, seen, b->pos, shown, e) < 0)
		return -1;
	snprintf(path, sizeof path, "%slayers", shown);
	if (!layers)
		return err_at(e, b->pos, path, "expected a non-empty list of layers, found no value (the key is required)");
	if (layers->kind != Y_SEQ || layers->n == 0)
		return err_at(e, layers->pos, path, "expected a non-empty list of layers, found %s",
			      layers->kind == Y_SEQ ? "an empty list" : ynode_describe(layers, buf, sizeof buf));
	if ((int64_t)((WORKLOAD_MAX_LAYERS - w->n) / layers->n) < spec.repeat) {
		snprintf(path, sizeof path, "%srepeat", shown);
		return err_at(e, rep_at, path, "expected at most %d layers in all, found %zu before the block and "
			      "%lld x %zu in it", WORKLOAD_MAX_LAYERS, w->n, (long long)spec.repeat, layers->n);
	}
	/* The block's own names, sorted once: a lookup per name in inputs stays O(log n) in a large block. */
	if (!(ld->locals = malloc(layers->n * sizeof *ld->locals)))
		return err_nomem(e, w->file);
	ld->nlocals = 0;
	for (size_t j = 0; j < layers->n; j++) {
		const struct ynode *m = layers->vals[j], *n = m->kind == Y_MAP ? ynode_get(m, "name") : NULL;
		if (n && n->kind == Y_SCALAR)
			ld->locals[ld->nlocals++] = (struct local){ n->str, (int)j };
	}
	qsort(ld->locals, ld->nlocals, sizeof *ld->locals, local_cmp);
	ld->block = b;
	ld->bname = spec.name;
	for (int64_t i = 0; i < spec.repeat && rc == 0; i++) {
		ld->inst = i;
		ld->first = w->n;
		for (size_t j = 0; j < layers->n && rc == 0; j++)
			if ((rc = load_layer(ld, layers->vals[j], idx, (int)j, e)) == 0)
				rc = names_put(ld, (int32_t)(w->n - 1), e);
	}
	free(ld->locals);
	ld->locals = NULL;
	ld->nlocals = 0;
	ld->block = NULL;
	ld->bname = NULL;
	return rc;
}

static int stream_layer(void *ctx, const struct ynode *item, size_t idx, struct err *e)
{
	struct loader *ld = ctx;
	const struct ynode *b = item->kind == Y_MAP ? ynode_get(item, "block") : NULL;
	int rc;
	if (ld->pending) {
		/* Only the names matter now: is the one not found a later layer's? */
		const struct ynode *n = item->kind == Y_MAP ? ynode_get(item, "name") : NULL;
		int64_t k;
		int j;
		if (ld->want[0] && b && (j = block_find(b, ld->want, &k)) >= 0) {
			ld->pending = false;
			return err_at(e, ld->at, ld->path, "expected the name of an earlier layer, found %s (layers[%zu].block."
				      "layers[%d] of instance %lld, a later layer)", ld->found, idx, j, (long long)k);
		}
		if (ld->want[0] && !b && n && n->kind == Y_SCALAR && strcmp(n->str, ld->want) == 0) {
			ld->pending = false;
			return err_at(e, ld->at, ld->path, "expected the name of an earlier layer, found %s (layers[%zu], a "
				      "later layer)", ld->found, idx);
		}
		return 0;
	}
	if (b)
		rc = load_block(ld, item, b, idx, e);
	else if ((rc = load_layer(ld, item, idx, -1, e)) == 0)
		rc = names_put(ld, (int32_t)(ld->w->n - 1), e);
	return rc < 0 ? -1 : 0;
}

/*
 * The layers are loaded as the file is read, each layer's nodes freed right
 * after: a million-layer file never holds its whole tree.
 */
int workload_read_yaml(struct workload *w, const char *path, struct err *e)
{
	const struct cfg_schema *ts = workload_top_schema();
	struct loader ld = { .w = w };
	const struct ydoc_stream st = { "layers", stream_layer, &ld, false };
	struct ydoc *d = ydoc_load_stream(path, &st, e);
	const struct ynode *layers = NULL;
	char buf[96];
	int rc = -1;

	free(ld.slot);
	if (ld.pending) {
		/* No later layer has the name: this error comes before anything found after it. */
		err_at(e, ld.at, ld.path, "expected the name of an earlier layer, found %s%s", ld.found,
		       strcmp(ld.want, BLOCK_IN) ? "" : " (" BLOCK_IN " names an instance's input inside a block only)");
		goto out;
	}
	if (!d)
		return -1;
	if (!d->root) {
		err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a workload (name, batch, layers), found %s",
		       ydoc_nothing(w->file));
		goto out;
	}
	if (d->root->kind != Y_MAP) {
		err_at(e, d->root->pos, NULL, "expected a mapping with name, batch and layers, found %s",
		       ynode_describe(d->root, buf, sizeof buf));
		goto out;
	}
	for (size_t j = 0; j < d->root->n; j++) {
		const struct ynode *k = d->root->keys[j], *v = d->root->vals[j];
		int i;
		if (strcmp(k->str, "layers") == 0) {
			layers = v;
			continue;
		}
		i = cfg_find(ts, k->str);
		if (i < 0) {
			char q[300];
			const char *hint = cfg_suggest(ts, k->str), *key = err_quote(q, sizeof q, k->str, 60);
			if (!hint && strlen(k->str) > 3 && strncmp(k->str, "layer", 5) == 0)
				hint = "layers";
			if (hint)
				err_at(e, k->pos, key, "expected a known key, found an unknown key (did you mean %s?)", hint);
			else
				err_at(e, k->pos, key, "expected a known key (name, batch, layers), found an unknown key");
			goto out;
		}
		if (v->kind != Y_SCALAR) {
			char exp[128];
			cfg_expected(ts->e[i].key, exp, sizeof exp);
			err_at(e, v->pos, k->str, "expected %s, found %s", exp, ynode_describe(v, buf, sizeof buf));
			goto out;
		}
		if (cfg_parse(ts, i, w, v->str, v->quoted, v->pos, NULL, e) < 0)
			goto out;
		if (strcmp(k->str, "batch") == 0)
			w->batch_pos = v->pos;
	}
	if (!layers) {
		err_at(e, d->root->pos, "layers", "expected a list of layers, found no value (the key is required)");
		goto out;
	}
	if (layers->kind != Y_SEQ || d->streamed == 0) {
		err_at(e, layers->pos, "layers", "expected a non-empty list of layers, found %s",
		       layers->kind == Y_SEQ ? "an empty list" : ynode_describe(layers, buf, sizeof buf));
		goto out;
	}
	if (w->batch_pos.line > 0)
		w->batch_pos.file = w->file;
	rc = 0;
out:
	ydoc_free(d);
	return rc;
}
