/*
 * memory.c - the table of memory models, the ideal model, and the checks and
 * counts every model shares (see memory.h).
 */
#include "memory.h"

#include <math.h>
#include <stddef.h>
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

static const char *const type_names[] = { "ddr3", "lpddr4", "hbm2", "hbm2e", "hbm3", "custom", NULL };

#define F(x) offsetof(struct hbm_params, x)
/* The keys every memory model reads; each model's own keys are in its table (mem_ops.keys). */
const struct cfg_key hbm_keys[] = {
	{ "type", CFG_ENUM, F(type), "", "hbm2", 0, 0, type_names, "memory technology; brings its bandwidth, channels, latency, burst, interleaving, pJ/bit and PHY area, but for those its own file (or --set) sets" },
	{ "gbps", CFG_DOUBLE, F(gbps), "GB/s", "256", 0.001, 1e6, NULL, "total bandwidth, 10^9 bytes per second" },
	{ "model", CFG_ENUM, F(model), "", "channels", 0, 0, mem_model_names,
	  "memory model: channels (the hbm.channels, latency_ns, burst_bytes and interleave_bytes keys), or ideal (every request completes at once)" },
	{ "capacity_gib", CFG_DOUBLE, F(capacity_gib), "GiB", "0", 0, 1e9, NULL,
	  "what the memory holds, 2^30 bytes; a run whose weights, caches, inputs and live activations need more is "
	  "refused before it starts (sim.allow_hbm_overflow runs it anyway); 0: not checked" },
	CFG_END
};
#undef F

/*
 * One device of each type, as in configs/memory/<type>.yaml (the overlays
 * that set every key). Sources:
 *   ddr3   Jouppi et al., "In-Datacenter Performance Analysis of a Tensor
 *          Processing Unit", ISCA 2017, Sec. 2 and Table 2: 34 GB/s; two
 *          channels of 17 GB/s assumed; a 64-byte line is BL8 x 64 bit;
 *          20 pJ/bit is the low end of DRAM's 1.3-2.6 nJ per 64 bits
 *          (Horowitz, ISSCC 2014)
 *   hbm2   JEDEC JESD235A: 1024 pins x 2 Gb/s / 8 = 256 GB/s, 16 pseudo-
 *          channels, BL4 x 64 bit = 32 B; 3.97 pJ/bit (O'Connor et al.,
 *          MICRO 2017)
 *   hbm2e  vendor announcements (Samsung, SK hynix): 410-460 GB/s per
 *          stack, the low end; 16 pseudo-channels, 32 B; 4.3 pJ/bit as
 *          third parties quote it (no vendor figure checked)
 *   hbm3   JEDEC JESD238: 1024 pins x 6.4 Gb/s / 8 = 819 GB/s, 32 pseudo-
 *          channels, BL8 x 32 bit = 32 B; pJ/bit assumed: no vendor figure
 *          found, HBM2's value
 * Latencies (100 ns) and interleaving (ddr3 one line, HBM 256 B) are assumed
 * for every type. PHY area (area.phy_mm2_per_gbps, the controllers with
 * their PHYs): ddr3 is TPU v1's, its I/O 10% of the die (Jouppi et al.,
 * ISCA 2017, Fig. 2) of which the two DDR3 ports are taken as 6% (assumed),
 * 17.3 mm2 of its modelled 291 for 34 GB/s; HBM assumed: about 8 mm2 for
 * one stack's 1,024-bit interface (its microbumps alone, some 1,700 at
 * 55 um pitch, take 5 mm2), so 0.03 per GB/s at HBM2's 256 GB/s a stack,
 * 0.02 at HBM2E's 410, 0.0098 at HBM3's 819 (the same interface, faster
 * pins); lpddr4 assumed 0.1, a narrow interface's PHY per GB/s between
 * DDR3's and HBM's. custom: the key's default, HBM2's 0.03. lpddr4 and custom: no collected source, the keys' own
 * defaults.
 */
const char *const hbm_type_keys[HBM_TYPE_NKEYS + 1] = {
	"hbm.gbps", "hbm.channels", "hbm.latency_ns", "hbm.burst_bytes", "hbm.interleave_bytes",
	"energy.hbm_pj_per_bit", "area.phy_mm2_per_gbps", NULL
};

const char *const hbm_type_defaults[HBM_NTYPES][HBM_TYPE_NKEYS] = {
	/*             gbps   channels latency_ns burst_bytes interleave_bytes hbm_pj_per_bit phy_mm2_per_gbps */
	[HBM_DDR3]   = { "34",  "2",     "100",     "64",       "64",            "20",          "0.51" },
	[HBM_LPDDR4] = { NULL,  NULL,    NULL,      NULL,       NULL,            NULL,          "0.1" },
	[HBM_HBM2]   = { "256", "16",    "100",     "32",       "256",           "3.97",        "0.03" },
	[HBM_HBM2E]  = { "410", "16",    "100",     "32",       "256",           "4.3",         "0.02" },
	[HBM_HBM3]   = { "819", "32",    "100",     "32",       "256",           "3.97",        "0.0098" },
	[HBM_CUSTOM] = { NULL,  NULL,    NULL,      NULL,       NULL,            NULL,          NULL },
};

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
	ideal_latency_cycles, NULL, NULL, NULL
};

static const struct mem_counter requests = { "requests", "request", "requests the memory accepted" };

const struct mem_counter *mem_counter_at(const struct mem_ops *ops, int i)
{
	if (i == 0)
		return &requests;
	for (int j = 0; ops->counters && ops->counters[j].name; j++)
		if (j == i - 1)
			return i < MEM_MAX_COUNTERS ? &ops->counters[j] : NULL;
	return NULL;
}

const struct mem_ops *mem_model_at(int i)
{
	return i >= 0 && (size_t)i < sizeof models / sizeof models[0] ? models[i] : NULL;
}

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

void mem_counts(const mem *m, int64_t out[MEM_MAX_COUNTERS])
{
	for (int i = 0; i < MEM_MAX_COUNTERS; i++)
		out[i] = 0;
	out[0] = m->requests;
	if (m->ops->count)
		m->ops->count(m->s, out + 1);
}

const struct mem_ops *mem_class(const mem *m)
{
	return m->ops;
}
