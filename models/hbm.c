/*
 * hbm.c - channels, bursts, interleaving and latency (see hbm.h).
 */
#include "hbm.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


#define F(x) offsetof(struct hbm_params, x)
/* The channel model's own keys (hbm.model channels); the memory's common keys are in memory.c. */
const struct cfg_key mem_channels_keys[] = {
	{ "channels", CFG_INT, F(channels), "", "8", 1, 1024, NULL,
	  "channel model: independent (pseudo-)channels sharing the bandwidth" },
	{ "latency_ns", CFG_DOUBLE, F(latency_ns), "ns", "100", 0, 1e6, NULL, "channel model: time from request to first data" },
	{ "burst_bytes", CFG_INT, F(burst_bytes), "B", "32", 1, 1 << 20, NULL, "channel model: smallest transfer of one channel" },
	{ "interleave_bytes", CFG_INT, F(interleave_bytes), "B", "256", 1, 1 << 30, NULL,
	  "channel model: consecutive bytes mapped to one channel before the next" },
	CFG_END
};
#undef F

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
	int64_t bursts;             /* bursts moved, over the channels */
	int64_t wait_cycles;        /* cycles requests waited for a busy channel (each request's longest wait) */
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
	h->bursts = h->wait_cycles = 0;
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
	double wait = 0;
	int64_t tail = (int64_t)((addr + (uint64_t)bytes) % (uint64_t)il);
	int64_t rounds = n / ch, extra = n % ch, last_i = (n - 1) % ch;
	/*
	 * Most channels take a whole number of blocks, rounds or rounds + 1: their
	 * time is worked out once (the same division, so the same double).
	 */
	int64_t whole[2] = { (rounds * il + burst - 1) / burst, ((rounds + 1) * il + burst - 1) / burst };    /* bursts */
	double span[2] = { (double)(whole[0] * burst) / h->per_channel, (double)(whole[1] * burst) / h->per_channel };
	int64_t c = (int64_t)(first % (uint64_t)ch), bursts = 0;
	for (int64_t i = 0; i < ch && i < n; i++, c = c + 1 == ch ? 0 : c + 1) {
		int more = i < extra;
		double took;
		if (i == 0 || (last_i == i && tail)) {
			int64_t share = (rounds + more) * il;
			if (i == 0)
				share -= head;                              /* the first block starts mid-way */
			if (last_i == i && tail)
				share -= il - tail;                         /* the last block ends early */
			share = (share + burst - 1) / burst * burst;        /* whole bursts */
			took = (double)share / h->per_channel;
			bursts += share / burst;
		} else {
			took = span[more];
			bursts += whole[more];
		}
		double start = h->busy[c] > (double)now ? h->busy[c] : (double)now;
		if (start - (double)now > wait)
			wait = start - (double)now;
		h->busy[c] = start + took;
		if (h->busy[c] > last)
			last = h->busy[c];
	}
	h->bursts = h->bursts > INT64_MAX - bursts ? INT64_MAX : h->bursts + bursts;
	/* Counts saturate: a run whose times pass int64 is refused by its caller, never wrapped here. */
	double w = ceil(wait - 1e-9);
	int64_t wi = w >= 0x1p62 ? INT64_MAX : (int64_t)w;
	h->wait_cycles = h->wait_cycles > INT64_MAX - wi ? INT64_MAX : h->wait_cycles + wi;
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


static const struct mem_counter channels_counters[] = {
	{ "bursts", "burst", "hbm.burst_bytes bursts the channels moved (a request's share of a channel, rounded up)" },
	{ "channel_wait_cycles", "cycle", "cycles requests waited for a busy channel, each request its longest wait" },
	{ NULL, NULL, NULL }
};

static void channels_count(const void *s, int64_t *out)
{
	const struct channels *h = s;
	out[0] = h->bursts;
	out[1] = h->wait_cycles;
}

/* The channel model as a memory.h class: hbm.model "channels" (its row in memory.c). */
const struct mem_ops mem_channels = {
	"channels", channels_create, channels_destroy, channels_reset, channels_issue, channels_done,
	hbm_bytes_per_cycle, hbm_latency_cycles, mem_channels_keys, channels_counters, channels_count
};
