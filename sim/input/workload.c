/*
 * workload.c - a network's layers: each type's keys, where each key was given,
 * and the loader that picks the reader by the file's name (see workload.h).
 * The readers: workload_yaml.c (a workload YAML file), workload_csv.c (a
 * SCALE-Sim topology CSV).
 */
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "array.h"
#include "limit.h"
#include "preset.h"

#define NAME_ROW(id, name, ...) name,
const char *const layer_type_names[] = { LAYER_TYPES(NAME_ROW) NULL };
#undef NAME_ROW
static const char *const role_names[] = { "activation", "weight", NULL };
static const char *const mode_names[] = { "prefill", "decode", NULL };
static const char *const act_names[] = { "relu", "gelu", "silu", NULL };
static const char *const pool_names[] = { "max", "avg", NULL };
static const char *const split_names[] = { "none", "columns", NULL };

/*
 * The limits of every number a workload gives, whichever format it comes in:
 * the YAML key tables below and the SCALE-Sim column tables (workload_csv.c) both
 * take their ranges from WORKLOAD_DIM_MAX and WORKLOAD_COUNT_MAX (limit.h), and
 * cfg_parse checks them all.
 */
#define F(x) offsetof(struct layer, x)
#define KEY_INT(n, def, lo, doc) { #n, CFG_INT, F(n), "", def, lo, WORKLOAD_DIM_MAX, NULL, doc }
#define KEY_COUNT(n, def, doc) { #n, CFG_INT, F(n), "", def, 1, WORKLOAD_COUNT_MAX, NULL, doc }

static const struct cfg_key common_keys[] = {
	{ "name", CFG_STR, F(name), "", NULL, 0, 0, NULL, "layer name, shown in reports" },
	{ "type", CFG_ENUM, F(type), "", NULL, 0, 0, layer_type_names, "layer type" },
	KEY_COUNT(repeat, "1", "identical instances of this layer, one after another"),
	CFG_END
};

static const struct cfg_key conv_keys[] = {
	KEY_INT(in_h, NULL, 1, "input height"),
	KEY_INT(in_w, NULL, 1, "input width"),
	KEY_INT(in_c, NULL, 1, "input channels"),
	KEY_INT(out_c, NULL, 1, "output channels (filters)"),
	KEY_INT(kernel, "0", 0, "filter height and width (or give kernel_h and kernel_w)"),
	KEY_INT(kernel_h, "0", 0, "filter height; 0 means kernel"),
	KEY_INT(kernel_w, "0", 0, "filter width; 0 means kernel"),
	KEY_INT(stride, "1", 1, "stride in both dimensions"),
	KEY_INT(padding, "0", 0, "zero padding on every side"),
	KEY_INT(dilation, "1", 1, "filter dilation"),
	KEY_COUNT(groups, "1", "channel groups; groups = in_c = out_c is depthwise"),
	CFG_END
};

static const struct cfg_key fc_keys[] = {
	KEY_INT(in_features, NULL, 1, "input features (K)"),
	KEY_INT(out_features, NULL, 1, "output features (N)"),
	KEY_INT(tokens, "1", 1, "rows per sample (sequence positions); M = batch x tokens"),
	{ "split", CFG_ENUM, F(split), "", "none", 0, 0, split_names,
	  "under mesh.tensor: none (every chip computes every column) or columns (each its 1/tensor of N, a "
	  "vocabulary-parallel output layer)" },
	CFG_END
};

static const struct cfg_key matmul_keys[] = {
	KEY_INT(m, NULL, 1, "rows of A and of the result"),
	KEY_INT(k, NULL, 1, "columns of A, rows of B"),
	KEY_INT(n, NULL, 1, "columns of B and of the result"),
	{ "a", CFG_ENUM, F(a), "", "activation", 0, 0, role_names, "what A is: activation or weight" },
	{ "b", CFG_ENUM, F(b), "", "weight", 0, 0, role_names, "what B is: activation or weight" },
	CFG_END
};

static const struct cfg_key attention_keys[] = {
	KEY_INT(seq, "1", 1, "query length (prefill); ignored by decode, which has one query"),
	KEY_INT(d_model, NULL, 1, "model width"),
	KEY_INT(heads, NULL, 1, "query heads"),
	KEY_INT(kv_heads, "0", 0, "key/value heads (grouped-query attention); 0 means heads"),
	KEY_INT(head_dim, "0", 0, "width of one head; 0 means d_model / heads"),
	{ "causal", CFG_BOOL, F(causal), "", "false", 0, 0, NULL, "each query sees only earlier keys" },
	KEY_INT(causal_block, "128", 1, "query rows per block when causal prefill skips masked blocks"),
	{ "mode", CFG_ENUM, F(mode), "", "prefill", 0, 0, mode_names,
	  "prefill: seq queries over seq keys; decode: one query over kv_cache + 1 keys" },
	KEY_INT(kv_cache, "0", 0, "tokens already in the KV cache (decode)"),
	CFG_END
};

static const struct cfg_key mlp_keys[] = {
	KEY_INT(tokens, "1", 1, "rows per sample; M = batch x tokens"),
	KEY_INT(d_model, NULL, 1, "model width"),
	KEY_INT(d_ff, NULL, 1, "hidden width"),
	{ "gated", CFG_BOOL, F(gated), "", "false", 0, 0, NULL, "gated MLP: act(x W_gate) * (x W_up), then W_down" },
	{ "activation", CFG_ENUM, F(activation), "", "gelu", 0, 0, act_names, "activation function" },
	CFG_END
};

static const struct cfg_key elementwise_keys[] = {
	KEY_INT(elements, NULL, 1, "elements per sample"),
	CFG_END
};

static const struct cfg_key pool_keys[] = {
	KEY_INT(in_h, NULL, 1, "input height"),
	KEY_INT(in_w, NULL, 1, "input width"),
	KEY_INT(in_c, NULL, 1, "channels"),
	KEY_INT(kernel, "0", 0, "window height and width"),
	KEY_INT(stride, "1", 1, "stride"),
	KEY_INT(padding, "0", 0, "padding on every side"),
	{ "global", CFG_BOOL, F(global), "", "false", 0, 0, NULL, "pool the whole input to 1 x 1" },
	{ "mode", CFG_ENUM, F(pool_mode), "", "max", 0, 0, pool_names, "max or avg" },
	CFG_END
};

/*
 * A collective (models/ici.h) of an array of shape elements (a list; the
 * workload's batch does not scale it) over mesh axes of the pod (a list of
 * x, y, z, dcn), in dtype (auto: the run's, array.dtype).
 */
static const struct cfg_key coll_keys[] = {
	{ "shape", CFG_STR, F(shape), "", NULL, 0, 0, NULL,
	  "the array's dimensions, a list of integers: the whole (gathered, reduced) array" },
	{ "axes", CFG_STR, F(axes), "", NULL, 0, 0, NULL, "the pod's axes it runs over, a list of x, y, z and dcn" },
	{ "dtype", CFG_ENUM, F(coll_dtype), "", "auto", 0, 0, array_dtype_auto_names,
	  "the array's element type; auto: the run's (array.dtype)" },
	CFG_END
};

#undef F

/* Each type's own keys (layer_types.h). */
#define KEYS_ROW(id, name, keys, ...) [L_##id] = keys,
static const struct cfg_key *const type_keys[L_NTYPES] = { LAYER_TYPES(KEYS_ROW) };
#undef KEYS_ROW

const struct cfg_schema *workload_layer_schema(int type)
{
	static struct cfg_schema schemas[L_NTYPES];
	struct cfg_schema *s = &schemas[type];
	if (!s->n) {
		int rc = cfg_schema_add(s, "", common_keys, 0);
		rc |= cfg_schema_add(s, "", type_keys[type], 0);
		SIM_ASSERT(rc == 0 && s->n <= LAYER_MAX_KEYS);
	}
	return s;
}

static const struct cfg_key top_keys[] = {
	{ "name", CFG_STR, offsetof(struct workload, name), "", "workload", 0, 0, NULL, "network name" },
	{ "batch", CFG_INT, offsetof(struct workload, batch), "", "1", 1, LIMIT_BATCH, NULL, "samples per inference" },
	CFG_END
};

const struct cfg_schema *workload_top_schema(void)
{
	static struct cfg_schema s;
	if (!s.n)
		SIM_ASSERT(cfg_schema_add(&s, "", top_keys, 0) == 0);
	return &s;
}

/*
 * Key positions live in blocks that never move, so that layers can point into
 * them. A key_at names a row of the layer's schema, or one of the slots after
 * them (workload.h, for the readers): where the inputs list starts, and each of its names.
 */
#define KEY_BLOCK 4096
struct key_block {
	struct key_block *next;
	size_t used;
	struct key_at at[KEY_BLOCK];
};

void workload_release(struct workload *w)
{
	free(w->layers);
	w->layers = NULL;
	w->n = w->cap = 0;
	for (size_t i = 0; i < w->nfiles; i++)
		free(w->files[i].path);
	free(w->files);
	w->files = NULL;
	w->nfiles = 0;
	while (w->key_blocks) {
		struct key_block *b = w->key_blocks;
		w->key_blocks = b->next;
		free(b);
	}
}

/* The slot of "inputs" or "inputs[i]", or -1. */
static int input_slot(const char *key)
{
	if (strcmp(key, "inputs") == 0)
		return WORKLOAD_KEY_INPUTS;
	for (int i = 0; i < LAYER_MAX_INPUTS; i++) {
		char name[16];
		snprintf(name, sizeof name, "inputs[%d]", i);
		if (strcmp(key, name) == 0)
			return WORKLOAD_KEY_INPUT(i);
	}
	return -1;
}

struct pos workload_key_pos(const struct layer *l, const char *key)
{
	int i = cfg_find(workload_layer_schema(l->type), key);
	if (i < 0)
		i = input_slot(key);
	for (size_t j = 0; i >= 0 && j < l->nkeys; j++)
		if (l->keys[j].key == i)
			return (struct pos){ l->pos.file, (long)l->keys[j].line, (long)l->keys[j].col };
	return l->pos;
}

const char *workload_layer_path(const struct layer *l, char *buf, size_t size)
{
	if (l->sub >= 0)
		snprintf(buf, size, "layers[%u].block.layers[%d]", (unsigned)l->item, (int)l->sub);
	else
		snprintf(buf, size, "layers[%u]", (unsigned)l->item);
	return buf;
}

int workload_ninputs(const struct layer *l)
{
#define INPUTS_ROW(id, name, keys, inputs, ...) [L_##id] = inputs,
	static const int inputs[L_NTYPES] = { LAYER_TYPES(INPUTS_ROW) };
#undef INPUTS_ROW
	if (inputs[l->type] == LAYER_INPUTS_BY_ROLE)
		return (l->a == ROLE_ACTIVATION) + (l->b == ROLE_ACTIVATION);
	return inputs[l->type];
}

/* A new zeroed layer at `at` (path names it, may be NULL), or NULL with e set. */
struct layer *workload_add_layer(struct workload *w, struct pos at, const char *path, struct err *e)
{
	struct layer *v = w->layers;
	if (w->n == WORKLOAD_MAX_LAYERS) {
		err_at(e, at, path, "expected at most %d layers, found more", WORKLOAD_MAX_LAYERS);
		return NULL;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		v = realloc(w->layers, cap * sizeof *v);
		if (!v) {
			err_nomem(e, w->file);
			return NULL;
		}
		w->layers = v;
		w->cap = cap;
	}
	memset(&v[w->n], 0, sizeof v[w->n]);
	v[w->n].pos = at;
	v[w->n].pos.file = w->file;
	v[w->n].item = (uint32_t)w->n;
	v[w->n].sub = -1;
	return &v[w->n++];
}

/* Records where the keys of l were given (origin[i].line > 0, i < WORKLOAD_KEY_SLOTS) in the workload's blocks. */
int workload_keep_key_pos(struct workload *w, struct layer *l, const struct pos *origin, struct err *e)
{
	struct key_block *b = w->key_blocks;
	size_t n = 0;
	for (size_t i = 0; i < WORKLOAD_KEY_SLOTS; i++)
		n += origin[i].line > 0;
	if (!n)
		return 0;
	if (!b || KEY_BLOCK - b->used < n) {
		if (!(b = malloc(sizeof *b)))
			return err_nomem(e, w->file);
		b->next = w->key_blocks;
		b->used = 0;
		w->key_blocks = b;
	}
	l->keys = &b->at[b->used];
	for (size_t i = 0; i < WORKLOAD_KEY_SLOTS; i++)
		if (origin[i].line > 0)
			b->at[b->used++] = (struct key_at){ (uint8_t)i, (uint32_t)origin[i].line, (uint32_t)origin[i].col };
	l->nkeys = n;
	return 0;
}

int workload_find(const char *base, const char *name, char *path, size_t size, struct err *e)
{
	char list[2048] = "";
	int rc = preset_find(base, "workloads/", name, path, size);
	if (rc == -2)
		return err_at(e, (struct pos){ name, 0, 0 }, NULL, "expected a path of at most %zu bytes, found more",
			      size - 1);
	if (rc >= 0)
		return 0;
	preset_list("workloads/", NULL, list, sizeof list);
	if (!*list)
		return err_at(e, (struct pos){ name, 0, 0 }, NULL,
			      "expected a workload file or a workload name, found neither (no preset directory next to tpusim)");
	char hint[200];
	return err_at(e, (struct pos){ name, 0, 0 }, NULL, "expected a workload file or a workload name (%s), found neither%s",
		      list, preset_hint(list, name, hint, sizeof hint));
}

int workload_load(struct workload *w, const char *path, int64_t batch, struct err *e)
{
	struct stat st;
	const char *ext;
	char found[LIMIT_PATH];
	int rc;

	memset(w, 0, sizeof *w);
	cfg_defaults(workload_top_schema(), w);
	if (workload_find(NULL, path, found, sizeof found, e) < 0)
		return -1;
	path = found;
	ext = strrchr(path, '.');
	snprintf(w->file, sizeof w->file, "%s", path);
	if (stat(path, &st) != 0)
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a readable file, found %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a file, found a directory");
	if (ext && strcasecmp(ext, ".csv") == 0)
		rc = workload_read_csv(w, path, e);
	else if (ext && strcasecmp(ext, ".et") == 0)
		rc = workload_read_chakra(w, path, e);
	else
		rc = workload_read_yaml(w, path, e);
	if (rc < 0) {
		workload_release(w);
		return -1;
	}
	if (batch > 0) {
		w->batch = batch;
		w->batch_pos = (struct pos){ "--batch", 1, 1 };
	}
	return 0;
}
