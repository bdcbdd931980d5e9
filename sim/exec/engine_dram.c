/*
 * engine_dram.c - the engine's off-chip requests as a DRAM trace (trace.h:
 * in bursts of hbm.burst_bytes, at the cycle each is issued): an observer of
 * the timeline (etrace.h), behind engine_trace_dram.
 *
 * It takes the loads and stores (ET_LOAD, ET_STORE, ET_VLOAD, ET_VSTORE) and
 * writes those that go to HBM (where 0), in timeline order.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "etrace.h"
#include "trace.h"

struct dsink {
	struct etrace_obs obs;
	trace_dram *d;                  /* owned until closed */
	char *path;                     /* owned */
};

static void on_request(struct etrace_obs *o, const struct etrace_ev *ev, int64_t c)
{
	if (!ev->where)
		trace_dram_request(((struct dsink *)o)->d, c, ev->addr, ev->bytes,
				   ev->kind == ET_STORE || ev->kind == ET_VSTORE);
}

static int dsink_close(struct etrace_obs *o, int64_t c, struct err *e)
{
	struct dsink *t = (struct dsink *)o;
	trace_dram *d = t->d;
	(void)c;
	t->d = NULL;
	return trace_dram_close(d, e);
}

static void dsink_abandon(struct etrace_obs *o)
{
	struct dsink *t = (struct dsink *)o;
	trace_dram_abandon(t->d);
	t->d = NULL;
}

static void dsink_free(struct etrace_obs *o)
{
	struct dsink *t = (struct dsink *)o;
	dsink_abandon(o);
	free(t->path);
	free(t);
}

static const struct etrace_obs_ops dsink_ops = {
	.on = { [ET_LOAD] = on_request, [ET_STORE] = on_request, [ET_VLOAD] = on_request, [ET_VSTORE] = on_request },
	.close = dsink_close,
	.abandon = dsink_abandon,
	.free = dsink_free,
};

int engine_trace_dram(engine *en, const char *path, int format, struct err *e)
{
	struct dsink *t = calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(path))) {
		free(t);
		return err_nomem(e, "--dram-trace");
	}
	t->obs.ops = &dsink_ops;
	t->obs.path = t->path;
	if (!(t->d = trace_dram_open(path, format, engine_config(en)->arch.hbm.burst_bytes, e))) {
		dsink_free(&t->obs);
		return -1;
	}
	return engine_observe(en, &t->obs, e);
}

int64_t engine_dram_bytes(int64_t hbm_bytes, int64_t burst_bytes)
{
	int64_t bursts = hbm_bytes / burst_bytes + (hbm_bytes % burst_bytes != 0);
	return bursts > INT64_MAX / ENGINE_DRAM_LINE_BYTES ? INT64_MAX : bursts * ENGINE_DRAM_LINE_BYTES;
}
