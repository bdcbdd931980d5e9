/*
 * bus.c - the bytes that crossed the memory bus in each window (see bus.h).
 */
#include "bus.h"

#include <math.h>

#include "err.h"

void bus_init(struct bus *b, double bpc, int64_t t0)
{
	*b = (struct bus){ .bpc = bpc, .start = t0, .from = t0 };
}

/* Whole bytes placed before cycle x (at or after the current busy period's start). */
static int64_t bus_placed(const struct bus *b, int64_t x)
{
	double moved;
	SIM_ASSERT(x >= b->start);
	if (x == b->start)
		return b->before;
	moved = isinf(b->bpc) ? INFINITY : floor((double)(x - b->start) * b->bpc);
	return b->before + (moved >= (double)b->busy ? b->busy : (int64_t)moved);
}

void bus_accept(struct bus *b, int64_t now, int64_t bytes)
{
	/* The queue has drained: a new busy period. */
	if (b->busy == 0 || (now > b->start && bus_placed(b, now) == b->before + b->busy)) {
		b->before += b->busy;
		b->start = now;
		b->busy = 0;
	}
	b->busy += bytes;
}

int64_t bus_close(struct bus *b, int64_t now)
{
	int64_t in = bus_placed(b, now) - b->closed;
	double cap = floor((double)(now - b->from) * b->bpc);
	if (!isinf(b->bpc) && (double)in > cap)
		in = (int64_t)cap;
	b->closed += in;
	b->from = now;
	return in;
}

int64_t bus_close_last(struct bus *b)
{
	int64_t in = b->before + b->busy - b->closed;
	b->closed += in;
	return in;
}
