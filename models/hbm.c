/*
 * hbm.c - channels, bursts, interleaving and latency (see hbm.h).
 */
#include "hbm.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

static const char *const type_names[] = { "ddr3", "lpddr4", "hbm2", "hbm2e", "hbm3", "custom", NULL };

#define F(x) offsetof(struct hbm_params, x)
const struct cfg_key hbm_keys[] = {
	{ "type", CFG_ENUM, F(type), "", "hbm2", 0, 0, type_names, "memory technology; brings its bandwidth, channels, latency, burst and pJ/bit unless set" },
	{ "gbps", CFG_DOUBLE, F(gbps), "GB/s", "256", 0.001, 1e6, NULL, "total bandwidth, 10^9 bytes per second" },
	{ "channels", CFG_INT, F(channels), "", "8", 1, 1024, NULL, "independent (pseudo-)channels sharing the bandwidth" },
	{ "latency_ns", CFG_DOUBLE, F(latency_ns), "ns", "100", 0, 1e6, NULL, "time from request to first data" },
	{ "burst_bytes", CFG_INT, F(burst_bytes), "B", "32", 1, 1 << 20, NULL, "smallest transfer of one channel" },
	{ "interleave_bytes", CFG_INT, F(interleave_bytes), "B", "256", 1, 1 << 30, NULL,
	  "consecutive bytes mapped to one channel before the next" },
	{ "model", CFG_ENUM, F(model), "", "channels", 0, 0, mem_model_names,
	  "memory model: channels (the keys above), or ideal (every request completes at once)" },
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
 *   hbm2e  vendor datasheets: 410-460 GB/s per stack, the low end; 16
 *          pseudo-channels, 32 B; 4.3 pJ/bit as quoted in
 *          shared/reference/HARDWARE.md
 *   hbm3   JEDEC JESD238: 1024 pins x 6.4 Gb/s / 8 = 819 GB/s, 32 pseudo-
 *          channels, BL8 x 32 bit = 32 B; pJ/bit assumed: no vendor figure
 *          found, HBM2's value
 * Latencies (100 ns) and interleaving (ddr3 one line, HBM 256 B) are assumed
 * for every type. lpddr4 and custom: no collected source, the keys' own
 * defaults.
 */
const char *const hbm_type_keys[HBM_TYPE_NKEYS + 1] = {
	"hbm.gbps", "hbm.channels", "hbm.latency_ns", "hbm.burst_bytes", "hbm.interleave_bytes",
	"energy.hbm_pj_per_bit", NULL
};

const char *const hbm_type_defaults[HBM_NTYPES][HBM_TYPE_NKEYS] = {
	/*             gbps   channels latency_ns burst_bytes interleave_bytes hbm_pj_per_bit */
	[HBM_DDR3]   = { "34",  "2",     "100",     "64",       "64",            "20" },
	[HBM_LPDDR4] = { NULL,  NULL,    NULL,      NULL,       NULL,            NULL },
	[HBM_HBM2]   = { "256", "16",    "100",     "32",       "256",           "3.97" },
	[HBM_HBM2E]  = { "410", "16",    "100",     "32",       "256",           "4.3" },
	[HBM_HBM3]   = { "819", "32",    "100",     "32",       "256",           "3.97" },
	[HBM_CUSTOM] = { NULL,  NULL,    NULL,      NULL,       NULL,            NULL },
};

int64_t hbm_latency_cycles(const struct hbm_params *p, double clock_ghz)
{
	return (int64_t)ceil(p->latency_ns * clock_ghz - 1e-9);
}

double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz)
{
	return p->gbps / clock_ghz;
}

struct channels {
	struct hbm_params p;
	double bpc;                 /* bytes per cycle, all channels */
	double per_channel;         /* bytes per cycle of one channel */
	int64_t latency;            /* cycles */
	double busy[];              /* per channel: the cycle it is free again */
};

static void *channels_create(const struct hbm_params *p, double clock_ghz)
{
	struct channels *h = calloc(1, sizeof *h + (size_t)p->channels * sizeof h->busy[0]);
	if (!h)
		return NULL;
	h->p = *p;
	h->bpc = hbm_bytes_per_cycle(p, clock_ghz);
	h->per_channel = h->bpc / (double)p->channels;
	h->latency = hbm_latency_cycles(p, clock_ghz);
	return h;
}

static void channels_destroy(void *s)
{
	free(s);
}

static void channels_reset(void *s)
{
	struct channels *h = s;
	memset(h->busy, 0, (size_t)h->p.channels * sizeof h->busy[0]);
}

/* The cycle at which the last byte of the request has arrived (>= now; INT64_MAX past int64). */
static int64_t transfer(struct channels *h, int64_t now, uint64_t addr, int64_t bytes)
{
	int64_t ch = h->p.channels, il = h->p.interleave_bytes, burst = h->p.burst_bytes;
	double last = (double)now;

	if (bytes <= 0)
		return now;
	/*
	 * The request covers interleave blocks first .. first + n - 1 (the first
	 * and last may be partial). Block b lives on channel b mod ch, so each
	 * channel holds whole rounds plus at most one extra block.
	 */
	uint64_t first = addr / (uint64_t)il, end = (addr + (uint64_t)bytes - 1) / (uint64_t)il;
	int64_t n = (int64_t)(end - first + 1), head = (int64_t)(addr % (uint64_t)il);
	int64_t tail = (int64_t)((addr + (uint64_t)bytes) % (uint64_t)il);
	for (int64_t i = 0; i < ch && i < n; i++) {
		int64_t c = (int64_t)((first + (uint64_t)i) % (uint64_t)ch);
		int64_t blocks = n / ch + (i < n % ch ? 1 : 0);
		int64_t share = blocks * il;
		if (i == 0)
			share -= head;                              /* the first block starts mid-way */
		if ((n - 1) % ch == i && tail)
			share -= il - tail;                         /* the last block ends early */
		share = (share + burst - 1) / burst * burst;        /* whole bursts */
		double start = h->busy[c] > (double)now ? h->busy[c] : (double)now;
		h->busy[c] = start + (double)share / h->per_channel;
		if (h->busy[c] > last)
			last = h->busy[c];
	}
	/* A completion int64 cannot hold (latency is under 2^27 cycles) is INT64_MAX, never a wrapped value. */
	double done = ceil(last - 1e-9);
	return done >= 0x1p63 - 0x1p32 ? INT64_MAX : (int64_t)done + h->latency;
}

/* Never refuses: completion is known at issue, and the ticket is that cycle. */
static bool channels_issue(void *s, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket,
			   int64_t *retry)
{
	(void)write, (void)retry;
	*ticket = (uint64_t)transfer(s, now, addr, bytes);
	return true;
}

static int64_t channels_done(void *s, uint64_t ticket, int64_t now, int64_t *ask)
{
	(void)s, (void)now, (void)ask;
	return (int64_t)ticket;
}


/* The channel model as a memory.h class: hbm.model "channels" (its row in memory.c). */
const struct mem_ops mem_channels = {
	"channels", channels_create, channels_destroy, channels_reset, channels_issue, channels_done,
	hbm_bytes_per_cycle, hbm_latency_cycles
};
