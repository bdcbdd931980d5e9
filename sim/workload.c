/*
 * workload.c - reading networks from YAML and SCALE-Sim topology CSVs (see workload.h).
 */
#include "workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ydoc.h"

const char *const layer_type_names[] = {
	"conv2d", "fc", "linear", "matmul", "attention", "mlp",
	"add", "mul", "relu", "gelu", "silu", "softmax", "layernorm", "pool", NULL
};
static const char *const role_names[] = { "activation", "weight", NULL };
static const char *const mode_names[] = { "prefill", "decode", NULL };
static const char *const act_names[] = { "relu", "gelu", "silu", NULL };
static const char *const pool_names[] = { "max", "avg", NULL };

#define F(x) offsetof(struct layer, x)
#define DIM "1099511627776"   /* 2^40: any one dimension */
#define KEY_INT(n, def, lo, doc) { #n, CFG_INT, F(n), "", def, lo, 1099511627776.0, NULL, doc }

static const struct cfg_key common_keys[] = {
	{ "name", CFG_STR, F(name), "", NULL, 0, 0, NULL, "layer name, shown in reports" },
	{ "type", CFG_ENUM, F(type), "", NULL, 0, 0, layer_type_names, "layer type" },
	{ "repeat", CFG_INT, F(repeat), "", "1", 1, 1e9, NULL, "identical instances of this layer, one after another" },
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
	KEY_INT(groups, "1", 1, "channel groups; groups = in_c = out_c is depthwise"),
	CFG_END
};

static const struct cfg_key fc_keys[] = {
	KEY_INT(in_features, NULL, 1, "input features (K)"),
	KEY_INT(out_features, NULL, 1, "output features (N)"),
	KEY_INT(tokens, "1", 1, "rows per sample (sequence positions); M = batch x tokens"),
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
#undef F

static const struct cfg_key *type_keys(int type)
{
	switch (type) {
	case L_CONV2D: return conv_keys;
	case L_FC:
	case L_LINEAR: return fc_keys;
	case L_MATMUL: return matmul_keys;
	case L_ATTENTION: return attention_keys;
	case L_MLP: return mlp_keys;
	case L_POOL: return pool_keys;
	default: return elementwise_keys;
	}
}

static const struct cfg_schema *layer_schema(int type)
{
	static struct cfg_schema schemas[L_NTYPES];
	struct cfg_schema *s = &schemas[type];
	if (!s->n) {
		int rc = cfg_schema_add(s, "", common_keys, 0);
		rc |= cfg_schema_add(s, "", type_keys(type), 0);
		SIM_ASSERT(rc == 0 && s->n <= LAYER_MAX_KEYS);
	}
	return s;
}

static const struct cfg_key top_keys[] = {
	{ "name", CFG_STR, offsetof(struct workload, name), "", "workload", 0, 0, NULL, "network name" },
	{ "batch", CFG_INT, offsetof(struct workload, batch), "", "1", 1, 1 << 20, NULL, "samples per inference" },
	CFG_END
};

static const struct cfg_schema *top_schema(void)
{
	static struct cfg_schema s;
	if (!s.n)
		SIM_ASSERT(cfg_schema_add(&s, "", top_keys, 0) == 0);
	return &s;
}

void workload_release(struct workload *w)
{
	free(w->layers);
	w->layers = NULL;
	w->n = w->cap = 0;
}

struct pos workload_key_pos(const struct layer *l, const char *key)
{
	int i = cfg_find(layer_schema(l->type), key);
	if (i >= 0 && l->key_pos[i].line > 0)
		return l->key_pos[i];
	return l->pos;
}

static struct layer *add_layer(struct workload *w, struct err *e)
{
	struct layer *v = w->layers;
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
	return &v[w->n++];
}

/* Positions in nodes point into the document; repoint them at w->file. */
static void own_pos(struct workload *w, struct pos *p)
{
	if (p->line > 0)
		p->file = w->file;
}

static int load_layer(struct workload *w, const struct ynode *m, size_t idx, struct err *e)
{
	char shown[48], buf[96];
	const struct ynode *tn;
	const struct cfg_schema *s;
	bool seen[LAYER_MAX_KEYS] = { 0 };
	struct layer *l;
	int t;

	snprintf(shown, sizeof shown, "layers[%zu].", idx);
	if (m->kind != Y_MAP) {
		snprintf(shown, sizeof shown, "layers[%zu]", idx);
		return err_at(e, m->pos, shown, "expected a mapping with a type, found %s",
			      ynode_describe(m, buf, sizeof buf));
	}
	tn = ynode_get(m, "type");
	if (!tn) {
		snprintf(shown, sizeof shown, "layers[%zu].type", idx);
		return err_at(e, m->pos, shown, "expected one of conv2d, fc, linear, matmul, attention, mlp, add, mul, "
			      "relu, gelu, silu, softmax, layernorm, pool, found no value (the key is required)");
	}
	/* Parse the type with the common schema first, to pick the type's schema. */
	{
		struct layer probe;
		const struct cfg_schema *c = layer_schema(L_ADD);
		if (tn->kind != Y_SCALAR) {
			snprintf(shown, sizeof shown, "layers[%zu].type", idx);
			return err_at(e, tn->pos, shown, "expected a layer type, found %s", ynode_describe(tn, buf, sizeof buf));
		}
		if (cfg_parse(c, cfg_find(c, "type"), &probe, tn->str, tn->quoted, tn->pos, shown, e) < 0)
			return -1;
		t = probe.type;
	}
	s = layer_schema(t);
	l = add_layer(w, e);
	if (!l)
		return -1;
	cfg_defaults(s, l);
	l->pos = m->pos;
	if (cfg_load_map(s, l, m, shown, seen, l->key_pos, e) < 0 ||
	    cfg_check_required(s, seen, m->pos, shown, e) < 0)
		return -1;
	own_pos(w, &l->pos);
	for (size_t i = 0; i < s->n; i++)
		own_pos(w, &l->key_pos[i]);
	return 0;
}

static int load_yaml(struct workload *w, const char *path, struct err *e)
{
	const struct cfg_schema *ts = top_schema();
	struct ydoc *d = ydoc_load(path, e);
	const struct ynode *layers = NULL;
	char buf[96];
	int rc = -1;

	if (!d)
		return -1;
	if (!d->root) {
		err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a workload (name, batch, layers), found an empty file");
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
	if (layers->kind != Y_SEQ || layers->n == 0) {
		err_at(e, layers->pos, "layers", "expected a non-empty list of layers, found %s",
		       layers->kind == Y_SEQ ? "an empty list" : ynode_describe(layers, buf, sizeof buf));
		goto out;
	}
	for (size_t i = 0; i < layers->n; i++)
		if (load_layer(w, layers->vals[i], i, e) < 0)
			goto out;
	own_pos(w, &w->batch_pos);
	rc = 0;
out:
	ydoc_free(d);
	return rc;
}

/* ---- SCALE-Sim topology CSV ---- */

struct field {
	const char *s;      /* trimmed, NUL-terminated inside the line buffer */
	long col;
};

/* Splits line in place at commas; trims spaces; drops one empty trailing field. */
static size_t split_csv(char *line, struct field *f, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		char *start = p, *end;
		while (*p && *p != ',')
			p++;
		end = p;
		while (start < end && isspace((unsigned char)*start))
			start++;
		while (end > start && isspace((unsigned char)end[-1]))
			end--;
		if (n < max) {
			f[n].col = (long)(start - line) + 1;
			f[n].s = start;
		}
		n++;
		if (!*p) {
			*end = '\0';
			break;
		}
		*end = '\0';
		p++;
	}
	if (n > 0 && n <= max && f[n - 1].s[0] == '\0')
		n--;
	return n;
}

static int csv_int(struct workload *w, long line, const struct field *f, const char *what, int64_t *out,
		   struct err *e)
{
	char *end;
	long long v;
	struct pos at = { w->file, line, f->col };
	errno = 0;
	v = strtoll(f->s, &end, 10);
	char q[300];
	if (!isdigit((unsigned char)f->s[0]) || *end || errno == ERANGE || v < 1 || v > (1LL << 40))
		return err_at(e, at, what, "expected an integer in [1, 1099511627776], found \"%s\"",
			      err_quote(q, sizeof q, f->s, 40));
	*out = v;
	return 0;
}

static void set_key_pos(struct layer *l, const char *key, struct pos p)
{
	int i = cfg_find(layer_schema(l->type), key);
	SIM_ASSERT(i >= 0);
	l->key_pos[i] = p;
}

static int load_csv(struct workload *w, const char *path, struct err *e)
{
	static const char *const conv_cols[] = { "ifmap_height", "ifmap_width", "filter_height", "filter_width",
						 "channels", "num_filter", "strides", "stride_width" };
	static const char *const gemm_cols[] = { "m", "n", "k" };
	static const char *const conv_keys_of_col[] = { "", "in_h", "in_w", "kernel_h", "kernel_w", "in_c", "out_c",
							"stride" };
	struct pos whole = { w->file, 0, 0 };
	char line[4096];
	struct field f[16];
	long lineno = 0;
	size_t ncols = 0;
	bool gemm = false, header = true;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
	snprintf(w->name, sizeof w->name, "%.*s", (int)sizeof w->name - 1,
		 strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	if (strrchr(w->name, '.'))
		*strrchr(w->name, '.') = '\0';
	while (fgets(line, sizeof line, fp)) {
		size_t n, len = strlen(line);
		lineno++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			fclose(fp);
			return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL,
				      "expected lines of at most %zu characters, found a longer one", sizeof line - 2);
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		n = split_csv(line, f, 16);
		if (n == 0 || (n == 1 && !f[0].s[0]))
			continue;
		if (header) {
			header = false;
			if (n == 4 && strcasecmp(f[1].s, "M") == 0 && strcasecmp(f[2].s, "N") == 0 &&
			    strcasecmp(f[3].s, "K") == 0) {
				gemm = true;
				ncols = 4;
			} else if (n == 8 || n == 9) {
				ncols = n;
			} else {
				fclose(fp);
				return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL,
					      "expected a SCALE-Sim topology header (Layer name, IFMAP Height, IFMAP Width, "
					      "Filter Height, Filter Width, Channels, Num Filter, Strides, or Layer, M, N, K), "
					      "found %zu columns", n);
			}
			continue;
		}
		if (n != ncols) {
			fclose(fp);
			return err_at(e, (struct pos){ w->file, lineno, n ? f[n < 16 ? n - 1 : 15].col : 1 }, NULL,
				      "expected %zu fields as in the header, found %zu", ncols, n);
		}
		struct layer *l = add_layer(w, e);
		int64_t v[8] = { 0 };
		if (!l) {
			fclose(fp);
			return -1;
		}
		l->pos = (struct pos){ w->file, lineno, 1 };
		snprintf(l->name, sizeof l->name, "%.*s", (int)sizeof l->name - 1, f[0].s);
		for (const char *ch = f[0].s; *ch; ch++) {
			if (*ch < 0x20 || *ch > 0x7e || *ch == '"' || *ch == '\\') {
				char q[300];
				fclose(fp);
				return err_at(e, l->pos, "layer name", "expected printable characters without quotes, found \"%s\"",
					      err_quote(q, sizeof q, f[0].s, 60));
			}
		}
		if (!l->name[0]) {
			fclose(fp);
			return err_at(e, l->pos, "layer name", "expected a name, found an empty field");
		}
		for (size_t c = 1; c < ncols; c++) {
			char what[64];
			snprintf(what, sizeof what, "%s", gemm ? gemm_cols[c - 1] : conv_cols[c - 1]);
			if (csv_int(w, lineno, &f[c], what, &v[c - 1], e) < 0) {
				fclose(fp);
				return -1;
			}
		}
		l->repeat = 1;
		if (gemm) {
			l->type = L_MATMUL;
			l->m = v[0];
			l->n = v[1];
			l->k = v[2];
			l->a = ROLE_ACTIVATION;
			l->b = ROLE_WEIGHT;
			for (size_t c = 1; c < 4; c++)
				set_key_pos(l, gemm_cols[c - 1], (struct pos){ w->file, lineno, f[c].col });
			continue;
		}
		if (ncols == 9 && v[6] != v[7]) {
			fclose(fp);
			return err_at(e, (struct pos){ w->file, lineno, f[8].col }, "stride_width",
				      "expected the same stride as the height, found %lld and %lld",
				      (long long)v[6], (long long)v[7]);
		}
		l->type = L_CONV2D;
		l->in_h = v[0];
		l->in_w = v[1];
		l->kernel_h = v[2];
		l->kernel_w = v[3];
		l->kernel = v[2];
		l->in_c = v[4];
		l->out_c = v[5];
		l->stride = v[6];
		l->dilation = 1;
		l->groups = 1;
		l->scalesim_rounding = true;
		for (size_t c = 1; c < ncols && c <= 7; c++)
			set_key_pos(l, conv_keys_of_col[c], (struct pos){ w->file, lineno, f[c].col });
		set_key_pos(l, "kernel", (struct pos){ w->file, lineno, f[3].col });
		if (strstr(l->name, "DP")) {
			/* SCALE-Sim runs a "DP" (depthwise) row as one single-channel layer per channel. */
			l->repeat = l->in_c;
			l->in_c = 1;
		}
	}
	fclose(fp);
	if (header)
		return err_at(e, whole, NULL, "expected a SCALE-Sim topology header, found an empty file");
	if (w->n == 0)
		return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL, "expected at least one layer, found none");
	return 0;
}

int workload_load(struct workload *w, const char *path, int64_t batch, struct err *e)
{
	struct stat st;
	const char *ext = strrchr(path, '.');
	int rc;

	memset(w, 0, sizeof *w);
	cfg_defaults(top_schema(), w);
	snprintf(w->file, sizeof w->file, "%s", path);
	if (stat(path, &st) != 0)
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a readable file, found %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return err_at(e, (struct pos){ w->file, 0, 0 }, NULL, "expected a file, found a directory");
	if (ext && strcasecmp(ext, ".csv") == 0)
		rc = load_csv(w, path, e);
	else
		rc = load_yaml(w, path, e);
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
