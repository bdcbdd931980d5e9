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

#include "memory.h"

/* The channel model as a memory.h class (hbm.model channels), and its own keys. */
extern const struct mem_ops mem_channels;
extern const struct cfg_key mem_channels_keys[];

/* Bytes the memory delivers per array clock cycle at clock_ghz. */
double hbm_bytes_per_cycle(const struct hbm_params *p, double clock_ghz);

/* The access latency in whole array clock cycles at clock_ghz (rounded up). */
int64_t hbm_latency_cycles(const struct hbm_params *p, double clock_ghz);

#endif
