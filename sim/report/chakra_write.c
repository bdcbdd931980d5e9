/* chakra_write.c - a run as Chakra execution traces (chakra_write.h). */
#include "chakra_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra.pb-c.h"
#include "fsx.h"
#include "ici.h"
#include "layer_types.h"
#include "limit.h"
#include "pipeline.h"
#include "plan.h"
#include "shard.h"
#include "vector.h"
#include "xmath.h"

typedef ChakraProtoMsg__AttributeProto Attr;

/* A growing byte buffer: the file being made. */
struct buf {
	uint8_t *p;
	size_t n, cap;
	bool failed;
};

/* Room for len more bytes in b: false (b failed) when memory ran out. */
static bool reserve(struct buf *b, size_t len)
{
	if (b->failed)
		return false;
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap < b->n + len)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return false;
		}
		b->p = p;
		b->cap = cap;
	}
	return true;
}

/* A message as Chakra's files hold it: its length as a varint, then its bytes. */
static void put_message(struct buf *b, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t v[10];
	size_t k = 0;
	uint64_t x = len;
	do {
		v[k++] = (uint8_t)((x & 0x7f) | (x >> 7 ? 0x80 : 0));
		x >>= 7;
	} while (x);
	if (!reserve(b, k + len))
		return;
	memcpy(b->p + b->n, v, k);
	b->n += k;
	b->n += protobuf_c_message_pack(m, b->p + b->n);
}

/* The attributes of one node: at most this many, their strings in the node's own buffers. */
#define NODE_ATTRS 16

struct node {
	ChakraProtoMsg__Node n;
	ChakraProtoMsg__IOInfo in, out;
	Attr a[NODE_ATTRS], *ap[NODE_ATTRS];
	ChakraProtoMsg__BoolList dims;
	protobuf_c_boolean dim[ICI_NAXES];
	uint64_t data[3], ctrl[1];
	char name[OP_NAME_MAX], shapes[128], oshape[96], group[96], ltype[32];
};

static Attr *attr(struct node *x, const char *name)
{
	Attr *a = &x->a[x->n.n_attr];
	SIM_ASSERT(x->n.n_attr < NODE_ATTRS);
	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	x->ap[x->n.n_attr++] = a;
	return a;
}

static void attr_i64(struct node *x, const char *name, int64_t v)
{
	Attr *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

static void attr_u64(struct node *x, const char *name, uint64_t v)
{
	Attr *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
	a->uint64_val = v;
}

static void attr_i32(struct node *x, const char *name, int32_t v)
{
	Attr *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
	a->int32_val = v;
}

static void attr_bool(struct node *x, const char *name, bool v)
{
	Attr *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
	a->bool_val = v;
}

static void attr_str(struct node *x, const char *name, char *v)
{
	Attr *a = attr(x, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
	a->string_val = v;
}

/* Chakra's CollectiveCommType of a collective (enum coll_kind). */
static int comm_type(int coll)
{
	switch (coll) {
	case COLL_ALL_GATHER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER;
	case COLL_REDUCE_SCATTER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER;
	case COLL_ALL_TO_ALL: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL;
	default: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
	}
}

/* The microseconds of cycles at the clock, to the nearest. */
static uint64_t micros(int64_t cycles, double clock_ghz)
{
	double us = (double)cycles / (clock_ghz * 1e3);
	return us >= 0x1p63 ? UINT64_MAX : (uint64_t)(us + 0.5);
}

/*
 * Node `id` of op o into x; rank and ranks: the file's (send_recv's peers);
 * recv: the receiving half of a send_recv. dep: the op whose output it
 * reads, per input (-1 none); ctrl: the op before it in its stream, or -1.
 */
static void node_of(struct node *x, uint64_t id, uint64_t dep_base, const struct config *cfg, const struct oplist *ops,
		    size_t i, const struct result *r, int64_t rank, int64_t ranks, bool recv, int64_t ctrl)
{
	const struct op *o = &ops->v[i];
	const struct arch *a = &cfg->arch;
	memset(x, 0, sizeof *x);
	chakra_proto_msg__node__init(&x->n);
	chakra_proto_msg__ioinfo__init(&x->in);
	chakra_proto_msg__ioinfo__init(&x->out);
	chakra_proto_msg__bool_list__init(&x->dims);
	x->n.id = id;
	op_name(o, x->name, sizeof x->name);
	x->n.name = x->name;
	x->n.attr = x->ap;
	x->n.duration_micros = micros(r ? r->cycles : 0, a->clock_ghz);
	for (int j = 0; j < 2; j++) {
		int32_t t = o->in[j];
		if (t != TENSOR_NONE && ops->t[t].ready != TENSOR_NONE && (size_t)ops->t[t].ready < i)
			x->data[x->n.n_data_deps++] = dep_base + (uint64_t)ops->t[t].ready;
	}
	if (x->n.n_data_deps == 2 && x->data[0] == x->data[1])
		x->n.n_data_deps = 1;
	x->n.data_deps = x->data;
	if (ctrl >= 0) {
		x->ctrl[0] = (uint64_t)ctrl;
		x->n.n_ctrl_deps = 1;
		x->n.ctrl_deps = x->ctrl;
	}
	attr_bool(x, "is_cpu_op", false);
	attr_i64(x, "tpusim.cycles", r ? r->cycles : 0);
	if (o->kind == OP_COLL) {
		int64_t bytes = plan_coll_bytes(a, o);
		x->n.type = o->coll != COLL_SEND_RECV ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE :
			    recv ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
		if (o->coll != COLL_SEND_RECV)
			attr_i64(x, "comm_type", comm_type(o->coll));
		attr_i64(x, "comm_size", bytes);
		if (o->coll == COLL_SEND_RECV) {
			attr_i32(x, recv ? "comm_src" : "comm_dst", (int32_t)((rank + (recv ? ranks - 1 : 1)) % ranks));
			attr_i32(x, "comm_tag", (int32_t)(i & 0x7fffffff));
		}
		for (int k = 0; k < ICI_NAXES; k++)
			x->dim[k] = o->grp.n[k] > 1;
		x->dims.n_values = ICI_NAXES;
		x->dims.values = x->dim;
		Attr *d = attr(x, "involved_dim");
		d->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST;
		d->bool_list = &x->dims;
		ici_group_name(&a->pod, &o->grp, x->group, sizeof x->group);
		attr_str(x, "tpusim.group", x->group);
		attr_str(x, "tpusim.kind", (char *)coll_names[o->coll]);
		return;
	}
	x->n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
	attr_i64(x, "num_ops", o->kind == OP_GEMM ? 2 * op_macs(o) : o->lane_ops);
	attr_u64(x, "tensor_size", r ? (uint64_t)(r->hbm_read_bytes + r->hbm_write_bytes) : 0);
	if (o->kind == OP_GEMM) {
		attr_str(x, "tpusim.kind", "gemm");
		attr_i64(x, "tpusim.m", o->m);
		attr_i64(x, "tpusim.k", o->k);
		attr_i64(x, "tpusim.n", o->n);
		attr_i64(x, "tpusim.repeat", o->repeat);
		attr_bool(x, "tpusim.b_weight", o->b_weight);
		if (o->repeat > 1) {
			snprintf(x->shapes, sizeof x->shapes, "[[%lld,%lld,%lld],[%lld,%lld,%lld]]", (long long)o->repeat,
				 (long long)o->m, (long long)o->k, (long long)o->repeat, (long long)o->k, (long long)o->n);
			snprintf(x->oshape, sizeof x->oshape, "[[%lld,%lld,%lld]]", (long long)o->repeat, (long long)o->m,
				 (long long)o->n);
		} else {
			snprintf(x->shapes, sizeof x->shapes, "[[%lld,%lld],[%lld,%lld]]", (long long)o->m, (long long)o->k,
				 (long long)o->k, (long long)o->n);
			snprintf(x->oshape, sizeof x->oshape, "[[%lld,%lld]]", (long long)o->m, (long long)o->n);
		}
		x->in.shapes = x->shapes;
		x->out.shapes = x->oshape;
		x->n.inputs = &x->in;
		x->n.outputs = &x->out;
		return;
	}
	attr_str(x, "tpusim.kind", "vector");
	snprintf(x->ltype, sizeof x->ltype, "%s", vector_kind_names[o->vec]);
	attr_str(x, "tpusim.layer_type", x->ltype);
	attr_i64(x, "tpusim.elements", o->out_elems);
}

int chakra_check(const char *prefix, const struct config *cfg, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	int64_t chips = ici_chips(&cfg->arch.pod);
	if (chips > CHAKRA_MAX_RANKS)
		return err_input(e, "--chakra: expected a pod of at most %d chips (a file each), found %lld", CHAKRA_MAX_RANKS,
				 (long long)chips);
	if (snprintf(path, sizeof path, "%s.0.et", prefix) >= (int)sizeof path)
		return err_input(e, "--chakra: expected a shorter prefix, found one of %zu characters", strlen(prefix));
	if (fsx_writable(path) < 0)
		return fsx_open_error(e, "--chakra", path, errno);
	return 0;
}

/* The stream an op's node follows in program order: the compute's (ICI_NAXES), or its group's first axis's. */
static int op_stream(const struct op *o)
{
	int stream = ICI_NAXES;
	if (o->kind == OP_COLL)
		for (stream = 0; stream < ICI_NAXES - 1 && o->grp.n[stream] <= 1; stream++)
			;
	return stream;
}

/* Rank's file into b: the metadata, then a node per op (send_recv: two). */
static void one_file(struct buf *b, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		     const struct run *r, int64_t rank, int64_t ranks)
{
	ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	struct node *x = malloc(sizeof *x);
	int64_t *last_on = NULL;
	if (!x || !(last_on = malloc((ICI_NAXES + 1) * sizeof *last_on))) {
		b->failed = true;
		free(x);
		return;
	}
	memset(x, 0, sizeof *x);
	x->n.attr = x->ap;
	g.version = CHAKRA_VERSION;
	g.attr = x->ap;
	attr_str(x, "schema", "tpusim");
	attr_str(x, "tpusim.config", (char *)cfg->arch.name);
	attr_str(x, "tpusim.workload", (char *)w->name);
	attr_i64(x, "tpusim.rank", rank);
	attr_i64(x, "tpusim.ranks", ranks);
	Attr *clk = attr(x, "tpusim.clock_ghz");
	clk->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
	clk->double_val = cfg->arch.clock_ghz;
	g.n_attr = x->n.n_attr;
	put_message(b, &g.base);
	/* The last node of each stream: compute (slot ICI_NAXES), and each axis's collectives. */
	for (int k = 0; k <= ICI_NAXES; k++)
		last_on[k] = -1;
	uint64_t extra = ops->n;        /* ids for the receiving halves of send_recv, after the ops' */
	for (size_t i = 0; i < ops->n && !b->failed; i++) {
		const struct op *o = &ops->v[i];
		const struct result *res = r->op_results && i < r->nops ? &r->op_results[i] : NULL;
		int stream = op_stream(o);
		node_of(x, i, 0, cfg, ops, i, res, rank, ranks, false, last_on[stream]);
		last_on[stream] = (int64_t)i;
		put_message(b, &x->n.base);
		if (o->kind == OP_COLL && o->coll == COLL_SEND_RECV) {
			node_of(x, extra++, 0, cfg, ops, i, res, rank, ranks, true, -1);
			put_message(b, &x->n.base);
		}
	}
	free(x);
	free(last_on);
}

/* A send (or receive) of bytes to (from) peer, tag, after node dep (-1: none), as node id. */
static void p2p_node(struct node *x, uint64_t id, bool send, int64_t peer, double bytes, int32_t tag, int64_t dep,
		     const char *what)
{
	memset(x, 0, sizeof *x);
	chakra_proto_msg__node__init(&x->n);
	x->n.id = id;
	snprintf(x->name, sizeof x->name, "%s", what);
	x->n.name = x->name;
	x->n.attr = x->ap;
	x->n.type = send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
	if (dep >= 0) {
		x->data[0] = (uint64_t)dep;
		x->n.n_data_deps = 1;
		x->n.data_deps = x->data;
	}
	attr_bool(x, "is_cpu_op", false);
	attr_i64(x, "comm_size", (int64_t)bytes);
	attr_i32(x, send ? "comm_dst" : "comm_src", (int32_t)peer);
	attr_i32(x, "comm_tag", tag);
}

/*
 * A rank's stage in the pipeline and its neighbours' ranks (-1: none). The
 * mesh axes take the pod's axes in the order shard.h places them, tensor,
 * fsdp, pipeline, data, each the inner part of what is left: along axis a a
 * chip's index is t + T (f + F (p + P d)), and the stage is the pipeline's
 * digits p over x, y, z, x the lowest.
 */
static int64_t stage_of(const struct ici_params *pod, const struct lower_pod *lp, int64_t rank, int64_t *prev,
			int64_t *next)
{
	int64_t stride = 1, stage = 0, scale = 1, inner[3], pd[3], digit[3], strides[3];
	for (int a = 0; a < 3; a++) {
		int64_t c = rank / stride % pod->dim[a];
		inner[a] = (int64_t)lp->g_tensor.n[a] * lp->g_fsdp.n[a];
		pd[a] = lp->g_pipeline.n[a];
		digit[a] = c / inner[a] % pd[a];
		strides[a] = stride;
		stage += digit[a] * scale;
		scale *= pd[a];
		stride *= pod->dim[a];
	}
	for (int dir = 0; dir < 2; dir++) {
		int64_t to = stage + (dir ? 1 : -1), peer = rank, rest = to;
		if (to < 0 || to >= scale) {
			*(dir ? next : prev) = -1;
			continue;
		}
		for (int a = 0; a < 3; a++) {
			peer += (rest % pd[a] - digit[a]) * inner[a] * strides[a];
			rest /= pd[a];
		}
		*(dir ? next : prev) = peer;
	}
	return stage;
}

/*
 * A pipeline rank's file into b (chakra_write.h): its stage's forwards and
 * backwards of M microbatches in the schedule's order, each forward after a
 * receive of its activations from the stage before and followed by a send
 * to the next, each backward after a receive of the gradient from the next
 * and followed by a send to the one before, then the optimizer's ops.
 */
static void pipe_file(struct buf *b, const struct config *cfg, const struct workload *w, const struct run *r,
		      const struct lower_pod *lp, int64_t rank, int64_t ranks)
{
	const struct arch *a = &cfg->arch;
	int64_t prev, next, s = stage_of(&a->pod, lp, rank, &prev, &next), P = a->mesh.pipeline;
	int64_t M = a->train.enabled ? a->train.microbatches : a->mesh.microbatches;
	bool train = a->train.enabled;
	const struct result *res, *pres;
	double out_bytes, in_bytes = 0;
	const struct oplist *ops = run_pipe_ops(r->pipe, s, &res, &out_bytes);
	if (s > 0)
		run_pipe_ops(r->pipe, s - 1, &pres, &in_bytes);
	ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	struct node *x = malloc(sizeof *x);
	if (!x) {
		b->failed = true;
		return;
	}
	memset(x, 0, sizeof *x);
	x->n.attr = x->ap;
	g.version = CHAKRA_VERSION;
	g.attr = x->ap;
	attr_str(x, "schema", "tpusim");
	attr_str(x, "tpusim.config", (char *)a->name);
	attr_str(x, "tpusim.workload", (char *)w->name);
	attr_i64(x, "tpusim.rank", rank);
	attr_i64(x, "tpusim.ranks", ranks);
	attr_i64(x, "tpusim.stage", s);
	Attr *clk = attr(x, "tpusim.clock_ghz");
	clk->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
	clk->double_val = a->clock_ghz;
	g.n_attr = x->n.n_attr;
	put_message(b, &g.base);
	/* Op i of microbatch m is node 1 + m n + i; the sends and receives follow, four a microbatch. */
	uint64_t n = ops->n, p2p = 1 + (uint64_t)M * n;
	int64_t last_on[ICI_NAXES + 1];         /* the last node of each stream, as one_file's */
	for (int q = 0; q <= ICI_NAXES; q++)
		last_on[q] = -1;
	int64_t per = train ? 2 * M : M;
	for (int64_t k = 0; k <= per && !b->failed; k++) {
		int64_t m = M - 1;
		bool back = k < per && pipe_task(a->mesh.schedule, s, P, M, train, k, &m);
		int64_t recv = -1;
		if (k < per && !back && s > 0) {
			recv = (int64_t)(p2p + 4 * (uint64_t)m);
			p2p_node(x, (uint64_t)recv, false, prev, in_bytes, (int32_t)(2 * m), -1, "pipeline.recv");
			put_message(b, &x->n.base);
		} else if (back && s + 1 < P) {
			recv = (int64_t)(p2p + 4 * (uint64_t)m + 2);
			p2p_node(x, (uint64_t)recv, false, next, out_bytes, (int32_t)(2 * m + 1), -1, "pipeline.grad_recv");
			put_message(b, &x->n.base);
		}
		int64_t done = -1;
		for (size_t i = 0; i < ops->n && !b->failed; i++) {
			int ph = ops->v[i].phase;
			if (k == per ? ph != PH_OPTIMIZER : back ? ph != PH_BACKWARD && ph != PH_RECOMPUTE : ph != PH_FORWARD)
				continue;
			uint64_t id = 1 + (uint64_t)m * n + i;
			int stream = op_stream(&ops->v[i]);
			node_of(x, id, 1 + (uint64_t)m * n, cfg, ops, i, res ? &res[i] : NULL, rank, ranks, false,
				last_on[stream]);
			last_on[stream] = (int64_t)id;
			if (recv >= 0) {
				x->data[x->n.n_data_deps++] = (uint64_t)recv;
				x->n.data_deps = x->data;
				recv = -1;
			}
			put_message(b, &x->n.base);
			done = (int64_t)id;
		}
		if (k < per && !back && s + 1 < P) {
			p2p_node(x, p2p + 4 * (uint64_t)m + 1, true, next, out_bytes, (int32_t)(2 * m), done, "pipeline.send");
			put_message(b, &x->n.base);
		} else if (back && s > 0) {
			p2p_node(x, p2p + 4 * (uint64_t)m + 3, true, prev, in_bytes, (int32_t)(2 * m + 1), done,
				 "pipeline.grad_send");
			put_message(b, &x->n.base);
		}
	}
	free(x);
}

int chakra_write(const char *prefix, const struct config *cfg, const struct workload *w, const struct oplist *ops,
		 const struct run *r, int64_t *ranks, struct err *e)
{
	char path[LIMIT_PATH_BUF], first[LIMIT_PATH_BUF];
	int64_t n = ici_chips(&cfg->arch.pod), done = 0;
	bool each = r->pipe != NULL;    /* a pipeline's ranks have peers of their own */
	struct buf b = { 0 };
	struct lower_pod lp;
	if (r->pipe && shard_place(cfg, &lp, e) < 0)
		return -1;
	for (size_t i = 0; i < ops->n && !each; i++)
		each = ops->v[i].kind == OP_COLL && ops->v[i].coll == COLL_SEND_RECV;
	*ranks = 0;
	snprintf(first, sizeof first, "%s.0.et", prefix);
	for (int64_t k = 0; k < n; k++) {
		snprintf(path, sizeof path, "%s.%lld.et", prefix, (long long)k);
		if (k == 0 || each) {
			b.n = 0;
			if (r->pipe)
				pipe_file(&b, cfg, w, r, &lp, k, n);
			else
				one_file(&b, cfg, w, ops, r, k, n);
			if (b.failed) {
				err_nomem(e, NULL);
				goto fail;
			}
			/* Files of their own, about rank 0's each: held to sim.max_trace_bytes in all, before any is written. */
			char how[96];
			snprintf(how, sizeof how, "%lld files of about %zu bytes", (long long)n, b.n);
			if (k == 0 && each && run_check_trace_bytes(cfg, "--chakra", sat_mul((int64_t)b.n, n), how,
								   "use fewer chips or microbatches", e) < 0)
				goto fail;
		}
		/* Rank k's file is rank 0's: a hard link to it, unless the path is not a file of its own (written through). */
		if (k > 0 && !each && fsx_replaceable(path) && fsx_regular(first)) {
			if ((unlink(path) < 0 && errno != ENOENT) || link(first, path) < 0) {
				fsx_write_error(e, "--chakra", path, errno);
				goto fail;
			}
		} else if (fsx_write_atomic(path, b.p, b.n) < 0) {
			fsx_write_error(e, "--chakra", path, errno);
			goto fail;
		}
		done = k + 1;
	}
	free(b.p);
	*ranks = n;
	return 0;
fail:
	free(b.p);
	for (int64_t k = 0; k < done; k++)
		if (snprintf(path, sizeof path, "%s.%lld.et", prefix, (long long)k) < (int)sizeof path && fsx_regular(path))
			unlink(path);
	return -1;
}
