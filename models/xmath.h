/*
 * xmath.h - small integer helpers shared by every module.
 *
 * Static inline, so that no module keeps its own copy and none pays a call.
 */
#ifndef TPUSIM_XMATH_H
#define TPUSIM_XMATH_H

#include <stdint.h>

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* a + b and a x b for counts >= 0, INT64_MAX when they pass 64 bits. */
static inline int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static inline int64_t sat_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

#endif
