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

#endif
