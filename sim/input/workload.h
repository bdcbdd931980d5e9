/*
 * workload.h - a network as a list of layers.
 *
 * Read from a workload YAML file (name, batch, layers: a list of maps with a
 * type and that type's keys) or from a SCALE-Sim topology CSV, conv form
 * (Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width,
 * Channels, Num Filter, Strides) or GEMM form (Layer, M, N, K). The layer
 * types are the rows of layer_types.h; each declares its keys in one table
 * (workload.c) with defaults and ranges;
 * unknown keys, wrong types and missing required keys are errors placed at
 * file:line:col. Shapes are checked later, by lower.c, which knows the math.
 *
 * A key that the layer's mode ignores is an error, not a value dropped in
 * silence: seq, causal and causal_block with mode: decode, causal_block with
 * causal: false, kv_cache with mode: prefill, a pool's kernel, stride and
 * padding with global: true, a convolution's kernel beside kernel_h and
 * kernel_w (the table ignored_keys in workload_yaml.c).
 *
 * Blocks. An item of `layers` may be a block instead of a layer:
 *
 *     - block:
 *         name: enc                 (required)
 *         repeat: 12                (required, 1 to 10^9)
 *         layers: [...]             (required, at least one layer; no blocks)
 *
 * which stands for its layers `repeat` times over, instance i's layer x
 * named "enc.i.x" (i from 0). Blocks do not nest. Every layer of a workload
 * has its own name: a name given twice is an error naming both places.
 *
 * Which tensors a layer reads (lower.h): the optional key `inputs`, a list of
 * names of earlier layers whose outputs it reads, one per activation input
 * in operand order (workload_ninputs). Inside a block a name is, in order:
 * "block.in", the instance's input (the output of the layer before the
 * instance, or a new network input when there is none); a layer of the same
 * instance given before this one, by its name in the block; any earlier
 * layer by its full name ("stem", "enc.2.ln2"). Names are resolved as the
 * layers are read, so a million-layer file is never held whole. Without
 * `inputs` (and always in a SCALE-Sim CSV) lowering applies its default
 * rule: the previous layer's output when it has the size read, else a new
 * network input. A SCALE-Sim CSV may repeat a name, as SCALE-Sim allows.
 */
#ifndef TPUSIM_WORKLOAD_H
#define TPUSIM_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "err.h"
#include "layer_types.h"
#include "limit.h"
#include "npy.h"

/* The layer types, in the order of their rows in layer_types.h. */
#define LAYER_ENUM_ROW(id, ...) L_##id,
enum layer_type { LAYER_TYPES(LAYER_ENUM_ROW) L_NTYPES };
#undef LAYER_ENUM_ROW

enum role { ROLE_ACTIVATION, ROLE_WEIGHT };
enum attn_mode { ATTN_PREFILL, ATTN_DECODE };
enum act_kind { ACT_RELU, ACT_GELU, ACT_SILU };
enum pool_mode { POOL_MAX, POOL_AVG };
enum dense_split { DENSE_WHOLE, DENSE_COLUMNS };

#define WORKLOAD_NEW_INPUT (-1)            /* layer.inputs[i]: a new network input */

/* Where one key of a layer was given: its index in the type's schema, line and column. */
struct key_at {
	uint8_t key;
	uint32_t line, col;
};

/* One layer; which fields mean something depends on type (see workload.c). */
struct layer {
	char name[CFG_STR_MAX];
	int type;                          /* enum layer_type */
	int64_t repeat;                    /* identical instances, one after another */
	/* conv2d, pool */
	int64_t in_h, in_w, in_c, out_c, kernel, kernel_h, kernel_w, stride, padding, dilation, groups;
	bool global;                       /* pool over the whole input */
	int pool_mode;                     /* enum pool_mode */
	bool scalesim_rounding;            /* from a SCALE-Sim CSV: out = ceil((H - R + s) / s) */
	/* fc, linear, mlp */
	int64_t in_features, out_features, tokens, d_ff;
	int split;                         /* fc, linear: enum dense_split, under mesh.tensor */
	bool gated;
	int activation;                    /* enum act_kind */
	/* matmul */
	int64_t m, k, n;
	int a, b;                          /* enum role */
	/* attention */
	int64_t seq, kv_cache, d_model, heads, kv_heads, head_dim, causal_block;
	bool causal;
	int mode;                          /* enum attn_mode */
	/* vector ops */
	int64_t elements;
	/* collectives: the lists as given, comma-separated; the dtype (array_dtype_auto_names) */
	char shape[CFG_STR_MAX], axes[CFG_STR_MAX];
	int coll_dtype;
	/*
	 * inputs: earlier layers (indices) whose outputs this one reads, in
	 * operand order, or WORKLOAD_NEW_INPUT (a block's input where nothing
	 * comes before the block); none given: ninputs 0
	 */
	int32_t inputs[LAYER_MAX_INPUTS];
	uint8_t ninputs;

	struct pos pos;                    /* the layer's map (or CSV row) */
	uint32_t item;                     /* its item in the file's layers list (a CSV: its index) */
	int32_t sub;                       /* in a block: its index in the block's layers; -1 otherwise */
	const struct key_at *keys;         /* the keys given, in the layer's file (owned by the workload) */
	size_t nkeys;
};

struct key_block;

/*
 * A matmul operand given as values (keys a_npy and b_npy: a .npy file, its
 * path relative to the workload file's directory unless absolute). Every
 * file's header is read and checked when the workload is loaded (npy.h),
 * its shape against the layer's GEMM when it is lowered (lower.h); only the
 * functional model reads the values (run.h).
 */
struct layer_file {
	size_t layer;                      /* index into layers */
	int operand;                       /* 0: A (M x K), 1: B (K x N) */
	char *path;                        /* owned; resolved against the workload's directory */
	struct pos at;                     /* where the key's value was given */
	char key[WORKLOAD_PATH_MAX + 8];   /* the key as messages name it: "layers[0].a_npy" */
	struct npy_head head;              /* what its header says */
};

struct workload {
	char name[CFG_STR_MAX];
	char file[LIMIT_PATH];
	int64_t batch;
	struct pos batch_pos;
	struct layer *layers;              /* owned */
	size_t n, cap;
	struct key_block *key_blocks;      /* owned: where the layers' keys point */
	struct layer_file *files;          /* owned: matmul operands from .npy files, in layer order */
	size_t nfiles;
	char note[LIMIT_PATH + 160];       /* what the reader left out, for a warning (a Chakra trace's nodes); "" none */
};

extern const char *const layer_type_names[];   /* by enum layer_type, then NULL */

/* Whether a layer type is a collective's (all_gather ... send_recv: models/ici.h). */
static inline bool layer_is_collective(int type)
{
	return type >= L_ALL_GATHER && type <= L_SEND_RECV;
}

/*
 * The file a -w value names, in path (size bytes): the value itself, or for
 * a name without a path ("resnet50") the shipped workloads/resnet50.yaml of
 * the preset directory (the rule of preset.h). A name that is neither a
 * file nor a shipped workload is an error listing the shipped ones. A
 * relative name's own file is looked for under base (NULL: the working
 * directory).
 */
int workload_find(const char *base, const char *name, char *path, size_t size, struct err *e);

/*
 * Loads a workload from path (.yaml/.yml, or .csv for SCALE-Sim topologies;
 * or a name, workload_find). batch > 0 overrides the file's batch. On error w is released.
 */
int workload_load(struct workload *w, const char *path, int64_t batch, struct err *e);
void workload_release(struct workload *w);

/*
 * Where key of layer l was given; the layer's own position when it was not.
 * "inputs" is where the list starts, "inputs[1]" its second name.
 */
struct pos workload_key_pos(const struct layer *l, const char *key);

/*
 * Where layer l is in its file as a key path, into buf: "layers[3]", or in a
 * block "layers[3].block.layers[1]" (every instance of a block's layer has
 * the same path). Returns buf.
 */
const char *workload_layer_path(const struct layer *l, char *buf, size_t size);

/*
 * The activation inputs layer l reads, which is how many names its `inputs`
 * lists: add and mul 2, matmul one per operand whose role is activation
 * (0 to 2), every other type 1.
 */
int workload_ninputs(const struct layer *l);

/*
 * ---- For the readers only ----
 * What workload_yaml.c and workload_csv.c share with workload.c (which has
 * the bodies) while loading; not for other modules.
 */
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
int workload_read_chakra(struct workload *w, const char *path, struct err *e);      /* a Chakra trace, .et */

#endif
