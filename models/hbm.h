/*
 * hbm.h - off-chip memory: DDR3 or HBM behind a number of channels.
 *
 * hbm.gbps is the total bandwidth in GB/s (10^9 bytes per second), spread over
 * hbm.channels (pseudo-)channels; a request also pays hbm.latency_ns and moves
 * whole bursts of hbm.burst_bytes. Addresses interleave across channels every
 * hbm.interleave_bytes.
 */
#ifndef TPUSIM_HBM_H
#define TPUSIM_HBM_H

#include <stdint.h>

#include "cfgkey.h"

enum hbm_type { HBM_DDR3, HBM_LPDDR4, HBM_HBM2, HBM_HBM2E, HBM_HBM3, HBM_CUSTOM };

struct hbm_params {
	int type;                   /* enum hbm_type; a label */
	double gbps;
	int64_t channels;
	double latency_ns;
	int64_t burst_bytes;
	int64_t interleave_bytes;
};

extern const struct cfg_key hbm_keys[];

/* Bytes the memory delivers per array clock cycle at clock_ghz. */
double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz);

#endif
