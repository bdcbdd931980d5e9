/*
 * workload_chakra.c - a Chakra execution trace (one rank's .et file: a
 * GlobalMetadata, then Nodes, each message after its length as a varint;
 * sim/input/chakra.proto) read as a workload, node by node in file order:
 *   COMP_NODE    a GEMM where its shapes are known: tpusim's own attributes
 *                (tpusim.m, .k, .n, .repeat, as tpusim --chakra writes
 *                them), else inputs.shapes of two matrices [[M,K],[K,N]]
 *                (or batched, [[B,M,K],[B,K,N]]); a vector op of tpusim's
 *                (tpusim.layer_type, tpusim.elements) whose type is a layer
 *                type; any other compute node is left out, and the
 *                workload's note says how many and their traced time
 *   COMM_COLL_NODE  all_reduce, all_gather, reduce_scatter or all_to_all
 *                (comm_type) of comm_size bytes (an int8 array of that many
 *                elements) over the axes involved_dim marks (x, y, z, dcn
 *                in order; none: x)
 *   COMM_SEND_NODE  send_recv of comm_size bytes over x
 *   others (COMM_RECV_NODE, memory and metadata nodes): left out
 * Dependencies are not read: the layers run in the file's order, each
 * reading what lowering's default rule gives it. Batch 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra.pb-c.h"
#include "fsx.h"
#include "workload.h"

/* The largest trace read, in bytes. */
#define CHAKRA_MAX_BYTES ((size_t)1 << 31)

typedef ChakraProtoMsg__AttributeProto Attr;

static const Attr *find_attr(const ChakraProtoMsg__Node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (n->attr[i]->name && !strcmp(n->attr[i]->name, name))
			return n->attr[i];
	return NULL;
}

/* An integer attribute of any integer kind into *v: true when there is one. */
static bool attr_int(const ChakraProtoMsg__Node *n, const char *name, int64_t *v)
{
	const Attr *a = find_attr(n, name);
	if (!a)
		return false;
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		*v = a->uint64_val > INT64_MAX ? INT64_MAX : (int64_t)a->uint64_val;
		return true;
	default: return false;
	}
}

static const char *attr_text(const ChakraProtoMsg__Node *n, const char *name)
{
	const Attr *a = find_attr(n, name);
	return a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ? a->string_val : NULL;
}

/*
 * Two matrices' shapes as a trace gives them, "[[M,K],[K,N]]" or
 * "[[B,M,K],[B,K,N]]" (spaces allowed), into m, k, n, rep: true when they
 * are that and K agrees.
 */
static bool gemm_shapes(const char *s, int64_t *m, int64_t *k, int64_t *n, int64_t *rep)
{
	long long d[2][3];
	int nd[2] = { 0, 0 };
	if (!s)
		return false;
	const char *p = s;
	while (*p == ' ')
		p++;
	if (*p++ != '[')
		return false;
	for (int t = 0; t < 2; t++) {
		while (*p == ' ' || (t && *p == ','))
			p++;
		if (*p++ != '[')
			return false;
		for (;;) {
			char *end;
			while (*p == ' ')
				p++;
			long long v = strtoll(p, &end, 10);
			if (end == p || nd[t] == 3 || v < 1)
				return false;
			d[t][nd[t]++] = v;
			p = end;
			while (*p == ' ')
				p++;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != ']')
				return false;
			break;
		}
	}
	while (*p == ' ')
		p++;
	if (*p != ']' || nd[0] != nd[1] || nd[0] < 2)
		return false;
	int b = nd[0] == 3;
	if (b && d[0][0] != d[1][0])
		return false;
	if (d[0][b + 1] != d[1][b])
		return false;
	*rep = b ? d[0][0] : 1;
	*m = d[0][b];
	*k = d[0][b + 1];
	*n = d[1][b + 1];
	return true;
}

/* Sets key of l (a layer of type t) from text, checked as the YAML reader checks it, placed at node i. */
static int set_key(struct workload *w, struct layer *l, const char *key, const char *text, size_t i, struct err *e)
{
	const struct cfg_schema *s = workload_layer_schema(l->type);
	char shown[96];
	(void)w;
	snprintf(shown, sizeof shown, "nodes[%zu].%s", i, key);
	return cfg_parse(s, cfg_find(s, key), l, text, false, l->pos, shown, e);
}

static int set_int(struct workload *w, struct layer *l, const char *key, int64_t v, size_t i, struct err *e)
{
	char t[32];
	snprintf(t, sizeof t, "%lld", (long long)v);
	return set_key(w, l, key, t, i, e);
}

/* A new layer of type t for node i (its name the node's, made unique by the node's id where needed). */
static struct layer *new_layer(struct workload *w, const ChakraProtoMsg__Node *n, size_t i, int t, struct err *e)
{
	struct layer *l = workload_add_layer(w, (struct pos){ w->file, (long)i + 1, 0 }, NULL, e);
	if (!l)
		return NULL;
	cfg_defaults(workload_layer_schema(t), l);
	l->type = t;
	l->repeat = 1;
	l->sub = -1;
	l->item = (uint32_t)i;
	l->pos = (struct pos){ w->file, (long)i + 1, 0 };
	if (n->name && n->name[0])
		snprintf(l->name, sizeof l->name, "%.*s", (int)sizeof l->name - 1, n->name);
	else
		snprintf(l->name, sizeof l->name, "node%llu", (unsigned long long)n->id);
	return l;
}

/* Node i as a layer (or none: *skipped, its traced microseconds into *us). */
static int read_node(struct workload *w, const ChakraProtoMsg__Node *n, size_t i, int64_t *skipped, double *us,
		     struct err *e)
{
	struct layer *l;
	int64_t m, k, nn, rep = 1, v;
	if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE) {
		bool ours = attr_int(n, "tpusim.m", &m) && attr_int(n, "tpusim.k", &k) && attr_int(n, "tpusim.n", &nn);
		if (ours)
			attr_int(n, "tpusim.repeat", &rep);
		if (ours || gemm_shapes(n->inputs ? n->inputs->shapes : NULL, &m, &k, &nn, &rep)) {
			if (!(l = new_layer(w, n, i, L_MATMUL, e)))
				return -1;
			l->a = ROLE_ACTIVATION;
			l->b = ROLE_WEIGHT;
			return set_int(w, l, "m", m, i, e) < 0 || set_int(w, l, "k", k, i, e) < 0 || set_int(w, l, "n", nn, i, e) < 0 ||
			       set_int(w, l, "repeat", rep, i, e) < 0 ? -1 : 0;
		}
		const char *lt = attr_text(n, "tpusim.layer_type");
		int t = -1;
		for (int j = 0; lt && layer_type_names[j]; j++)
			if (!strcmp(layer_type_names[j], lt))
				t = j;
		const struct cfg_schema *s = t >= 0 ? workload_layer_schema(t) : NULL;
		if (s && cfg_find(s, "elements") >= 0 && attr_int(n, "tpusim.elements", &v)) {
			if (!(l = new_layer(w, n, i, t, e)))
				return -1;
			return set_int(w, l, "elements", v, i, e);
		}
		(*skipped)++;
		*us += (double)n->duration_micros;
		return 0;
	}
	int t = -1;
	if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE) {
		t = L_SEND_RECV;
	} else if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE && attr_int(n, "comm_type", &v)) {
		t = v == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE ? L_ALL_REDUCE :
		    v == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER ? L_ALL_GATHER :
		    v == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER ? L_REDUCE_SCATTER :
		    v == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL ? L_ALL_TO_ALL : -1;
	}
	if (t < 0 || !attr_int(n, "comm_size", &v) || v < 1) {
		(*skipped) += n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
		return 0;
	}
	static const char *const axis[] = { "x", "y", "z", "dcn" };
	char axes[32] = "";
	const Attr *d = find_attr(n, "involved_dim");
	if (t != L_SEND_RECV && d && d->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST)
		for (size_t j = 0; j < d->bool_list->n_values && j < 4; j++)
			if (d->bool_list->values[j])
				snprintf(axes + strlen(axes), sizeof axes - strlen(axes), "%s%s", *axes ? "," : "", axis[j]);
	if (!*axes)
		strcpy(axes, "x");
	if (!(l = new_layer(w, n, i, t, e)))
		return -1;
	return set_int(w, l, "shape", v, i, e) < 0 || set_key(w, l, "axes", axes, i, e) < 0 ||
	       set_key(w, l, "dtype", "int8", i, e) < 0 ? -1 : 0;
}

/* The varint at *p (of end - *p bytes) into *v: false when it is cut short or longer than 10 bytes. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 70 && *p < end; s += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

int workload_read_chakra(struct workload *w, const char *path, struct err *e)
{
	struct pos whole = { w->file, 0, 0 };
	char *text;
	size_t len;
	int64_t skipped = 0;
	double us = 0;
	int rc = 0;
	if (fsx_read(path, CHAKRA_MAX_BYTES, &text, &len) < 0)
		return err_at(e, whole, NULL, "expected a readable Chakra trace of at most 2 GiB, found %s", strerror(errno));
	snprintf(w->name, sizeof w->name, "%.*s", (int)sizeof w->name - 1, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	if (strrchr(w->name, '.'))
		*strrchr(w->name, '.') = '\0';
	w->batch = 1;
	const uint8_t *p = (const uint8_t *)text, *end = p + len;
	for (size_t i = 0; p < end && rc == 0; i++) {
		uint64_t size;
		size_t at = (size_t)(p - (const uint8_t *)text);
		if (!varint(&p, end, &size) || size > (uint64_t)(end - p)) {
			rc = err_at(e, whole, NULL, "expected a Chakra execution trace (messages after their lengths), found a "
				    "message at byte %zu that runs past the end of the file (%zu bytes)", at, len);
			break;
		}
		if (i == 0) {
			ChakraProtoMsg__GlobalMetadata *g = chakra_proto_msg__global_metadata__unpack(NULL, (size_t)size, p);
			if (!g)
				rc = err_at(e, whole, NULL, "expected a Chakra execution trace, found a first message at byte %zu that "
					    "is not its GlobalMetadata", at);
			chakra_proto_msg__global_metadata__free_unpacked(g, NULL);
		} else {
			ChakraProtoMsg__Node *n = chakra_proto_msg__node__unpack(NULL, (size_t)size, p);
			if (!n)
				rc = err_at(e, whole, NULL, "expected a Chakra execution trace, found message %zu at byte %zu that is "
					    "not a Node", i, at);
			else if (w->n >= WORKLOAD_MAX_LAYERS)
				rc = err_at(e, whole, NULL, "expected at most %d layers, found more nodes", WORKLOAD_MAX_LAYERS);
			else
				rc = read_node(w, n, i - 1, &skipped, &us, e);
			chakra_proto_msg__node__free_unpacked(n, NULL);
		}
		p += size;
	}
	free(text);
	if (rc == 0 && !w->n)
		rc = err_at(e, whole, NULL, "expected a Chakra trace with a node tpusim can simulate (a GEMM of known shape or "
			    "a collective), found none%s", skipped ? " (every compute node's shape is unknown)" : "");
	if (rc == 0 && skipped)
		snprintf(w->note, sizeof w->note, "%s: %lld node%s of unknown shape left out (their traced time %.6g us)",
			 w->file, (long long)skipped, skipped == 1 ? "" : "s", us);
	return rc;
}
