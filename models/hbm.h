/*
 * hbm.h - off-chip memory: DDR3 or HBM behind a number of channels; the
 * parameters of every memory model (hbm.*) and the channel model itself,
 * used through memory.h.
 *
 * hbm.gbps is the total bandwidth in GB/s (10^9 bytes per second), shared
 * equally by hbm.channels (pseudo-)channels. Addresses interleave across the
 * channels every hbm.interleave_bytes; each channel moves whole bursts of
 * hbm.burst_bytes and serves its requests in order. A request of B bytes is
 * split over the channels arithmetically, in O(channels), never per byte or
 * per burst: each channel's share starts when that channel is free, takes
 * share / (bandwidth per channel) cycles, and the request completes when the
 * last share has arrived plus the access latency (hbm.latency_ns). Requests
 * in flight overlap their latencies; bandwidth is what they contend for.
 *
 * hbm.type names the technology and brings its defaults: the bandwidth,
 * channels, latency, burst, interleaving and energy per bit of one device of
 * that type (hbm_type_defaults, with sources). Keys a config file or --set
 * gives win over the type's defaults; custom keeps the keys' own defaults.
 *
 * Time is in array clock cycles; the clock converts ns and GB/s once.
 */
#ifndef TPUSIM_HBM_H
#define TPUSIM_HBM_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"
#include "err.h"

enum hbm_type { HBM_DDR3, HBM_LPDDR4, HBM_HBM2, HBM_HBM2E, HBM_HBM3, HBM_CUSTOM, HBM_NTYPES };

struct hbm_params {
	int type;                   /* enum hbm_type */
	double gbps;
	int64_t channels;
	double latency_ns;
	int64_t burst_bytes;
	int64_t interleave_bytes;
	int model;                  /* index into mem_model_names (memory.h) */
};

extern const struct cfg_key hbm_keys[];

/*
 * What hbm.type brings: hbm_type_keys names the config keys (full dotted
 * names, NULL-terminated) and hbm_type_defaults[type][j] gives the value of
 * key j for that type as config text, or NULL for the key's own default.
 */
#define HBM_TYPE_NKEYS 6
extern const char *const hbm_type_keys[HBM_TYPE_NKEYS + 1];
extern const char *const hbm_type_defaults[HBM_NTYPES][HBM_TYPE_NKEYS];

/* Bytes the memory delivers per array clock cycle at clock_ghz. */
double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz);

/* The access latency in whole array clock cycles at clock_ghz (rounded up). */
int64_t hbm_latency_cycles(const struct hbm_params *p, double clock_ghz);

#endif
