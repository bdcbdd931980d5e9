/*
 * hbm.c - channels, bursts, interleaving and latency (see hbm.h).
 */
#include "hbm.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz)
{
	return p->gbps / clock_ghz;
}

struct hbm {
	struct hbm_params p;
	bool ideal;
	double per_channel;         /* bytes per cycle of one channel */
	int64_t latency;            /* cycles */
	int64_t read, written;
	double busy[];              /* per channel: the cycle it is free again */
};

hbm *hbm_new(const struct hbm_params *p, double clock_ghz, bool ideal)
{
	hbm *h = calloc(1, sizeof *h + (size_t)p->channels * sizeof h->busy[0]);
	if (!h)
		return NULL;
	h->p = *p;
	h->ideal = ideal;
	h->per_channel = hbm_bytes_per_cycle(p, clock_ghz) / (double)p->channels;
	h->latency = (int64_t)ceil(p->latency_ns * clock_ghz - 1e-9);
	return h;
}

void hbm_free(hbm *h)
{
	free(h);
}

void hbm_reset(hbm *h)
{
	memset(h->busy, 0, (size_t)h->p.channels * sizeof h->busy[0]);
	h->read = h->written = 0;
}

int64_t hbm_transfer(hbm *h, int64_t now, uint64_t addr, int64_t bytes, bool write)
{
	int64_t ch = h->p.channels, il = h->p.interleave_bytes, burst = h->p.burst_bytes;
	double last = (double)now;

	if (write)
		h->written += bytes;
	else
		h->read += bytes;
	if (h->ideal || bytes <= 0)
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
	return (int64_t)ceil(last - 1e-9) + h->latency;
}

int64_t hbm_read_bytes(const hbm *h)
{
	return h->read;
}

int64_t hbm_written_bytes(const hbm *h)
{
	return h->written;
}
