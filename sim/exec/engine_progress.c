/*
 * engine_progress.c - fold ticks for progress reports of long runs: an
 * observer of the engine (etrace.h) that takes only on_folds, behind
 * engine_on_folds.
 */
#include <stdlib.h>

#include "engine.h"
#include "etrace.h"

struct ticks {
	struct etrace_obs obs;
	void (*fn)(void *ctx, size_t op, int64_t folds);
	void *ctx;
};

static void on_folds(struct etrace_obs *o, size_t op, int64_t folds)
{
	struct ticks *t = (struct ticks *)o;
	t->fn(t->ctx, op, folds);
}

static void ticks_free(struct etrace_obs *o)
{
	free(o);
}

static const struct etrace_obs_ops ticks_ops = {
	.on_folds = on_folds,
	.free = ticks_free,
};

void engine_on_folds(engine *en, void (*fn)(void *ctx, size_t op, int64_t folds), void *ctx)
{
	struct ticks *t;
	engine_unobserve(en, &ticks_ops);
	if (!fn || !(t = calloc(1, sizeof *t)))
		return;
	t->obs.ops = &ticks_ops;
	t->fn = fn;
	t->ctx = ctx;
	struct err e;
	engine_observe(en, &t->obs, &e);     /* out of memory: no ticks (no result depends on them) */
}
