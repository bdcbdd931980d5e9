/*
 * lowered.c - a workload loaded and lowered, then checked (see lowered.h):
 * every GEMM op has positive M, K, N and repeat whose product fits in 64
 * bits (lowering promises to refuse the rest), and every vector op counts
 * no negative elements or lane operations. Then the analytic model (no
 * SystemC) runs its first FZ_RUN_OPS ops (the planner is the slow part) on
 * the default config, with the dataflow and memory picked by the input's
 * length, and the summary.json must read back as JSON.
 */
#include "lowered.h"

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

#define FZ_RUN_OPS 12

static void check_run(const struct workload *w, const struct oplist *all, size_t size)
{
	struct oplist first = { all->v, all->n < FZ_RUN_OPS ? all->n : FZ_RUN_OPS, 0, all->t, all->nt, 0 };
	const struct oplist *ops = &first;
	static struct config cfg;
	static int ready;
	struct run_opts o = { (int)(size % 3), MODEL_ANALYTIC, (size / 3) % 2 == 1, NULL };
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
	report_json(f, &(struct report_ctx){ &cfg, w, &r, &o });
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
	rc = lower_workload(&w, &ops, &e);
	fz_check_err(rc, &e, "lower_workload");
	if (rc == 0) {
		check_ops(&w, &ops);
		check_run(&w, &ops, size);
	}
	oplist_release(&ops);
	workload_release(&w);
}
