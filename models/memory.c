/*
 * memory.c - the table of memory models, the ideal model, and the checks and
 * counts every model shares (see memory.h).
 */
#include "memory.h"

#include <math.h>
#include <stdlib.h>

#include "err.h"

/*
 * The models hbm.model may name: one row each, the name and its class. The
 * row's position is its value of hbm.model.
 */
#define MEM_MODELS(X) \
	X("channels", mem_channels)     /* hbm.c */ \
	X("ideal", mem_ideal)

#define DECLARE(name, ops) extern const struct mem_ops ops;
MEM_MODELS(DECLARE)
#undef DECLARE

#define NAME(name, ops) name,
#define OPS(name, ops) &ops,
const char *const mem_model_names[] = { MEM_MODELS(NAME) NULL };
static const struct mem_ops *const models[] = { MEM_MODELS(OPS) };
#undef NAME
#undef OPS

/* The ideal memory: every request completes the cycle it is issued; its ticket is that cycle. */
static void *ideal_create(const struct hbm_params *p, double clock_ghz)
{
	static char state;             /* no state: any non-NULL pointer */
	(void)p, (void)clock_ghz;
	return &state;
}

static void ideal_destroy(void *s)
{
	(void)s;
}

static void ideal_reset(void *s)
{
	(void)s;
}

static bool ideal_issue(void *s, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket,
			int64_t *retry)
{
	(void)s, (void)addr, (void)bytes, (void)write, (void)retry;
	*ticket = (uint64_t)now;
	return true;
}

static int64_t ideal_done(void *s, uint64_t ticket, int64_t now, int64_t *ask)
{
	(void)s, (void)now, (void)ask;
	return (int64_t)ticket;
}

static double ideal_bytes_per_cycle(const struct hbm_params *p, double clock_ghz)
{
	(void)p, (void)clock_ghz;
	return INFINITY;
}

static int64_t ideal_latency_cycles(const struct hbm_params *p, double clock_ghz)
{
	(void)p, (void)clock_ghz;
	return 0;
}

const struct mem_ops mem_ideal = {
	"ideal", ideal_create, ideal_destroy, ideal_reset, ideal_issue, ideal_done, ideal_bytes_per_cycle,
	ideal_latency_cycles
};

const struct mem_ops *mem_model(const struct hbm_params *p, bool ideal)
{
	size_t n = sizeof models / sizeof models[0];
	if (ideal)
		return &mem_ideal;
	SIM_ASSERT(p->model >= 0 && (size_t)p->model < n);
	return models[p->model];
}

double mem_model_bytes_per_cycle(const struct hbm_params *p, double clock_ghz, bool ideal)
{
	return mem_model(p, ideal)->bytes_per_cycle(p, clock_ghz);
}

int64_t mem_model_latency_cycles(const struct hbm_params *p, double clock_ghz, bool ideal)
{
	return mem_model(p, ideal)->latency_cycles(p, clock_ghz);
}

struct mem {
	const struct mem_ops *ops;
	void *s;
	struct hbm_params p;
	double clock_ghz;
	int64_t read, written, requests;
};

mem *mem_new_ops(const struct mem_ops *ops, const struct hbm_params *p, double clock_ghz)
{
	mem *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->ops = ops;
	m->p = *p;
	m->clock_ghz = clock_ghz;
	if (!(m->s = ops->create(p, clock_ghz))) {
		free(m);
		return NULL;
	}
	return m;
}

mem *mem_new(const struct hbm_params *p, double clock_ghz, bool ideal)
{
	return mem_new_ops(mem_model(p, ideal), p, clock_ghz);
}

void mem_free(mem *m)
{
	if (!m)
		return;
	m->ops->destroy(m->s);
	free(m);
}

void mem_reset(mem *m)
{
	m->ops->reset(m->s);
	m->read = m->written = m->requests = 0;
}

const char *mem_name(const mem *m)
{
	return m->ops->name;
}

bool mem_issue(mem *m, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket, int64_t *retry)
{
	if (!m->ops->issue(m->s, now, addr, bytes, write, ticket, retry)) {
		SIM_ASSERT(*retry > now);
		return false;
	}
	if (write)
		m->written += bytes;
	else
		m->read += bytes;
	m->requests++;
	return true;
}

int64_t mem_done(mem *m, uint64_t ticket, int64_t now, int64_t *ask)
{
	int64_t c = m->ops->done(m->s, ticket, now, ask);
	SIM_ASSERT(c != MEM_NOT_YET ? c >= 0 : *ask > now);
	return c;
}

double mem_bytes_per_cycle(const mem *m)
{
	return m->ops->bytes_per_cycle(&m->p, m->clock_ghz);
}

int64_t mem_read_bytes(const mem *m)
{
	return m->read;
}

int64_t mem_written_bytes(const mem *m)
{
	return m->written;
}

int64_t mem_requests(const mem *m)
{
	return m->requests;
}
