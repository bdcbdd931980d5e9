/*
 * hbm.c - off-chip memory parameters (see hbm.h).
 */
#include "hbm.h"

#include <stddef.h>

static const char *const type_names[] = { "ddr3", "lpddr4", "hbm2", "hbm2e", "hbm3", "custom", NULL };

#define F(x) offsetof(struct hbm_params, x)
const struct cfg_key hbm_keys[] = {
	{ "type", CFG_ENUM, F(type), "", "hbm2", 0, 0, type_names, "memory technology (a label for reports)" },
	{ "gbps", CFG_DOUBLE, F(gbps), "GB/s", "256", 0.001, 1e6, NULL, "total bandwidth, 10^9 bytes per second" },
	{ "channels", CFG_INT, F(channels), "", "8", 1, 1024, NULL, "independent (pseudo-)channels sharing the bandwidth" },
	{ "latency_ns", CFG_DOUBLE, F(latency_ns), "ns", "100", 0, 1e6, NULL, "time from request to first data" },
	{ "burst_bytes", CFG_INT, F(burst_bytes), "B", "32", 1, 1 << 20, NULL, "smallest transfer of one channel" },
	{ "interleave_bytes", CFG_INT, F(interleave_bytes), "B", "256", 1, 1 << 30, NULL,
	  "consecutive bytes mapped to one channel before the next" },
	CFG_END
};
#undef F

double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz)
{
	return p->gbps / clock_ghz;
}
