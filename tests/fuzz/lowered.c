/*
 * lowered.c - a workload loaded and lowered, then checked (see lowered.h):
 * every GEMM op has positive M, K, N and repeat whose product fits in 64
 * bits (lowering promises to refuse the rest), and every vector op counts
 * no negative elements or lane operations; every tensor index is in range,
 * each op reads what it should (GEMM: two, add and mul: two, other vector
 * ops: one) and writes one activation, and each tensor's producer, ready,
 * first and last reader are the ops that name it, every write before every
 * read, with its elements the sum of what its writers write. Then the analytic model (no
 * SystemC) runs its first FZ_RUN_OPS ops (the planner is the slow part) on
 * the default config, with the dataflow and memory picked by the input's
 * length, and the summary.json must read back as JSON.
 */
#include "lowered.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"
#include "lower.h"
#include "report.h"
#include "run.h"
#include "workload.h"
#include "ydoc.h"

static void check_ops(const struct workload *w, const struct oplist *ops)
{
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		char name[OP_NAME_MAX];
		op_name(o, name, sizeof name);
		if (o->layer >= w->n)
			fz_fail("op %s: layer %zu of %zu", name, o->layer, w->n);
		if (o->kind == OP_GEMM) {
			__int128 macs = (__int128)o->m * o->k * o->n * o->repeat;
			if (o->m < 1 || o->k < 1 || o->n < 1 || o->repeat < 1)
				fz_fail("op %s: M %lld, K %lld, N %lld, repeat %lld", name, (long long)o->m,
					(long long)o->k, (long long)o->n, (long long)o->repeat);
			if (macs > INT64_MAX || op_macs(o) != (int64_t)macs)
				fz_fail("op %s: MACs beyond 64 bits", name);
			if (o->a_elems < 1 || o->a_elems > o->m * o->k)
				fz_fail("op %s: A has %lld elements, M x K = %lld", name, (long long)o->a_elems,
					(long long)(o->m * o->k));
		} else if (o->kind == OP_VEC) {
			if (o->in_elems < 0 || o->out_elems < 0 || o->lane_ops < 0)
				fz_fail("op %s: negative vector counts", name);
		} else {
			fz_fail("op %s: kind %d", name, (int)o->kind);
		}
	}
}

/* t is TENSOR_NONE or a tensor of ops; fails naming the op otherwise. */
static void check_index(const struct oplist *ops, const char *name, const char *what, int32_t t, bool needed)
{
	if (t == TENSOR_NONE ? needed : t < 0 || (size_t)t >= ops->nt)
		fz_fail("op %s: %s tensor %d of %zu", name, what, (int)t, ops->nt);
}

static void check_tensors(const struct oplist *ops)
{
	struct seen { int32_t first_w, last_w, first_r, last_r; int64_t written; } *v;
	if (ops->nt > INT32_MAX || ops->n > INT32_MAX)
		fz_fail("%zu tensors for %zu ops", ops->nt, ops->n);
	if (!(v = malloc((ops->nt ? ops->nt : 1) * sizeof *v)))
		fz_fail("out of memory");
	for (size_t j = 0; j < ops->nt; j++)
		v[j] = (struct seen){ TENSOR_NONE, TENSOR_NONE, TENSOR_NONE, TENSOR_NONE, 0 };
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		char name[OP_NAME_MAX];
		bool two = o->kind == OP_GEMM || o->vec == VEC_ADD || o->vec == VEC_MUL;
		op_name(o, name, sizeof name);
		check_index(ops, name, "input", o->in[0], true);
		check_index(ops, name, "second input", o->in[1], two);
		if (!two && o->in[1] != TENSOR_NONE)
			fz_fail("op %s: a second input for a one-input op", name);
		check_index(ops, name, "output", o->out, true);
		if (ops->t[o->out].kind != TK_ACT)
			fz_fail("op %s: writes a tensor of kind %d", name, ops->t[o->out].kind);
		for (int k = 0; k < 2; k++) {
			struct seen *r = o->in[k] == TENSOR_NONE ? NULL : &v[o->in[k]];
			if (o->in[k] == o->out)
				fz_fail("op %s: reads what it writes", name);
			if (r && r->first_r == TENSOR_NONE)
				r->first_r = (int32_t)i;
			if (r)
				r->last_r = (int32_t)i;
		}
		if (v[o->out].first_w == TENSOR_NONE)
			v[o->out].first_w = (int32_t)i;
		v[o->out].last_w = (int32_t)i;
		v[o->out].written += o->kind == OP_GEMM ? o->m * o->n * o->repeat : o->out_elems;
	}
	for (size_t j = 0; j < ops->nt; j++) {
		const struct tensor *t = &ops->t[j];
		char name[OP_NAME_MAX * 2];
		tensor_name(t, name, sizeof name);
		if (t->kind < TK_INPUT || t->kind > TK_ACT || t->elems < 0 || t->elems > (INT64_C(1) << 58))
			fz_fail("tensor %s: kind %d, %lld elements", name, t->kind, (long long)t->elems);
		if (t->kind != TK_CACHE && t->elems < 1)
			fz_fail("tensor %s: no elements", name);
		if (t->producer != v[j].first_w || t->ready != v[j].last_w || t->first_reader != v[j].first_r ||
		    t->last_reader != v[j].last_r)
			fz_fail("tensor %s: producer %d, ready %d, readers %d..%d; its ops say %d, %d, %d..%d", name,
				(int)t->producer, (int)t->ready, (int)t->first_reader, (int)t->last_reader, (int)v[j].first_w,
				(int)v[j].last_w, (int)v[j].first_r, (int)v[j].last_r);
		if ((t->kind == TK_ACT) != (t->producer != TENSOR_NONE))
			fz_fail("tensor %s: kind %d with producer %d", name, t->kind, (int)t->producer);
		if (t->kind == TK_ACT && t->elems != v[j].written)
			fz_fail("tensor %s: %lld elements, its writers write %lld", name, (long long)t->elems,
				(long long)v[j].written);
		if (t->kind != TK_ACT && t->first_reader == TENSOR_NONE)
			fz_fail("tensor %s: an operand nobody reads", name);
		if (t->producer != TENSOR_NONE && t->first_reader != TENSOR_NONE && t->ready >= t->first_reader)
			fz_fail("tensor %s: read by op %d before its last write, op %d", name, (int)t->first_reader,
				(int)t->ready);
	}
	free(v);
}

#define FZ_RUN_OPS 12

static void check_run(const struct workload *w, const struct oplist *all, size_t size)
{
	struct oplist first = { .v = all->v, .n = all->n < FZ_RUN_OPS ? all->n : FZ_RUN_OPS, .t = all->t, .nt = all->nt,
				.rows = all->rows, .nrows = all->nrows };
	const struct oplist *ops = &first;
	static struct config cfg;
	static int ready;
	struct run_opts o = { .dataflow = (int)(size % 3), .model = MODEL_ANALYTIC, .ideal_memory = (size / 3) % 2 == 1 };
	struct run r;
	struct err e = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (!ready) {
		config_init(&cfg);
		ready = 1;
	}
	rc = run_workload(&cfg, w, ops, &o, &r, &e);
	if (rc < 0 && e.kind == ERR_SIM) {
		/* A model's own refusal: one line, like the others. */
		struct err as_input = e;
		as_input.kind = ERR_INPUT;
		fz_check_err(rc, &as_input, "run_workload");
		return;
	}
	fz_check_err(rc, &e, "run_workload");
	if (rc < 0)
		return;
	if (!(f = open_memstream(&text, &len)))
		fz_fail("open_memstream");
	report_json(f, &(struct report_ctx){ &cfg, w, &r, &o, ops });
	if (fclose(f) != 0)
		fz_fail("report_json");
	struct ydoc *d = ydoc_parse_json("summary.json", text, &e);
	if (!d || !d->root || d->root->kind != Y_MAP)
		fz_fail("summary.json does not read back: %s", d ? "not an object" : e.msg);
	ydoc_free(d);
	free(text);
	run_release(&r);
}

void fz_workload(const char *tag, const uint8_t *data, size_t size)
{
	const char *path = fz_file(tag, data, size);
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };
	int rc;

	memset(&ops, 0, sizeof ops);
	rc = workload_load(&w, path, 0, &e);
	fz_check_err(rc, &e, "workload_load");
	if (rc < 0)
		return;
	/* A block's repeat makes a million layers from a few bytes: loading them is the check; running them is not. */
	if (w.n > 100000) {
		workload_release(&w);
		return;
	}
	rc = lower_workload(&w, &ops, &e);
	fz_check_err(rc, &e, "lower_workload");
	if (rc == 0) {
		check_ops(&w, &ops);
		check_tensors(&ops);
		check_run(&w, &ops, size);
	}
	oplist_release(&ops);
	workload_release(&w);
}
