/*
 * bus.h - the memory bus as the roofline sees it: when the bytes of the
 * accepted requests crossed it, so that each op's window (its cycles) can be
 * given the bytes that crossed in it, whichever op they belong to
 * (bus_bytes, stats.h). The engine tells it each request it issues and when
 * each op's window closes. Layer by layer an op's window holds all its own
 * transfers and no other's; in a chip pass the load queues run ahead into
 * later ops' tiles and the stores trail into later ops' time, so an op's own
 * HBM bytes may cross in earlier or later windows.
 *
 * The memory interface tells when a request is accepted and when it
 * completes (memory.h), not when its bytes are on the wire, so they are
 * placed by one rule: in acceptance order, at the memory's peak rate
 * (mem_bytes_per_cycle, P bytes a cycle), none before its request was
 * accepted. Request i, accepted at cycle a_i with B_i bytes, crosses in
 * [s_i, s_i + B_i / P), s_i = max(a_i, where request i - 1's ends). That is
 * the channel model's own timing up to its interleaving (each channel starts
 * its share of a request when it is free and moves it at its share of the
 * peak, hbm.h), without the access latency, which holds no bus. A window
 * takes the bytes placed in it: a request that straddles two windows is
 * split in proportion to its time on each side, in whole bytes (a byte
 * counts where it has finished crossing), and no window but a pass's last
 * takes more than floor(P c) bytes for its c cycles: a byte the rounding
 * would put over goes to the next window.
 *
 * Why no point is above its roof. The intervals [s_i, s_i + B_i / P) do
 * not overlap and each moves P bytes a cycle, so c cycles hold at most P c
 * bytes, and the cap keeps the whole bytes within that. A window of c cycles
 * at clock f with bus_bytes <= P c has achieved = ops f / c and
 * attainable = min(peak, P f x ops / bus_bytes) (the bandwidth is P f), and
 * P f ops / bus_bytes >= P f ops / (P c) = ops f / c = achieved, while
 * achieved <= peak as no PE does more than one MAC a cycle.
 *
 * Why the windows take every byte. A pass's windows tile its cycles, from
 * its start to its last store, and every request completes within them. The
 * queue at rate P has moved every byte by then if the memory moves at most
 * P bytes a cycle: in the queue's last busy period, from cycle u to F, it
 * moves P (F - u) bytes, all accepted at u or later, so such a memory
 * completes the last of them no earlier than F. The pass's last window takes
 * whatever is left (a memory faster than its own peak would leave some past
 * the end; the bytes deferred by the cap, under one per window, land there
 * too): it alone is not capped, and the test that runs every shipped preset
 * and workload (tests/test_roofline.c) holds it to its roof as well.
 *
 * State: the current busy period (from cycle start, busy bytes accepted in
 * it, at rate P), the bytes of the pass's earlier periods (all placed before
 * start), the open window's start and the bytes given to closed windows.
 * O(1) a request.
 */
#ifndef TPUSIM_BUS_H
#define TPUSIM_BUS_H

#include <stdint.h>

struct bus {
	double bpc;                     /* P; INFINITY for the ideal memory: bytes cross the cycle they are accepted */
	int64_t start, busy;            /* the current busy period */
	int64_t before;                 /* bytes of the earlier busy periods */
	int64_t from;                   /* the open window's first cycle */
	int64_t closed;                 /* bytes given to closed windows */
};

/* An empty bus from cycle t0 at bpc bytes a cycle (INFINITY: the ideal memory, bytes cross the cycle they are accepted). */
void bus_init(struct bus *b, double bpc, int64_t t0);

/* A request of bytes accepted at cycle now (at or after every earlier one). */
void bus_accept(struct bus *b, int64_t now, int64_t bytes);

/* Closes the window that ends at cycle now (not a pass's last): returns the bytes that crossed in it. */
int64_t bus_close(struct bus *b, int64_t now);

/* The pass's last window, to its end: every byte not yet given. */
int64_t bus_close_last(struct bus *b);

#endif
