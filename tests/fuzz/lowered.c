/*
 * lowered.c - a workload loaded and lowered, then checked (see lowered.h):
 * every GEMM op has positive M, K, N and repeat whose product fits in 64
 * bits (lowering promises to refuse the rest), and every vector op counts
 * no negative elements or lane operations.
 */
#include "lowered.h"

#include <string.h>

#include "fuzz.h"
#include "lower.h"
#include "workload.h"

static void check_ops(const struct workload *w, const struct oplist *ops)
{
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		if (o->layer >= w->n)
			fz_fail("op %s: layer %zu of %zu", o->name, o->layer, w->n);
		if (o->kind == OP_GEMM) {
			__int128 macs = (__int128)o->m * o->k * o->n * o->repeat;
			if (o->m < 1 || o->k < 1 || o->n < 1 || o->repeat < 1)
				fz_fail("op %s: M %lld, K %lld, N %lld, repeat %lld", o->name, (long long)o->m,
					(long long)o->k, (long long)o->n, (long long)o->repeat);
			if (macs > INT64_MAX || op_macs(o) != (int64_t)macs)
				fz_fail("op %s: MACs beyond 64 bits", o->name);
			if (o->a_elems < 1 || o->a_elems > o->m * o->k)
				fz_fail("op %s: A has %lld elements, M x K = %lld", o->name, (long long)o->a_elems,
					(long long)(o->m * o->k));
		} else if (o->kind == OP_VEC) {
			if (o->in_elems < 0 || o->out_elems < 0 || o->lane_ops < 0)
				fz_fail("op %s: negative vector counts", o->name);
		} else {
			fz_fail("op %s: kind %d", o->name, (int)o->kind);
		}
	}
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
	if (rc == 0)
		check_ops(&w, &ops);
	oplist_release(&ops);
	workload_release(&w);
}
