/*
 * trace_fmt.h - what the writer (trace_write.c) and the reader
 * (trace_read.c) of event traces share: the magic word and the state the ~
 * fields are differences from (trace.h). Internal to the trace module.
 */
#ifndef TPUSIM_TRACE_FMT_H
#define TPUSIM_TRACE_FMT_H

#include <stdint.h>

#define TRACE_MAGIC "tpusim-trace"
#define TRACE_VARINT_MAX 10     /* LEB128 bytes of a 64-bit value (a value below 2^63 takes at most 9) */

/* The fields a lane's records are written as differences of (trace.h's ~ fields): the last L of each operand, S, F. */
enum { TRACE_D_N = 7 };
struct trace_last {
	uint64_t l[2][TRACE_D_N];       /* addr bytes rep r0 c0 rows cols */
	uint64_t s[TRACE_D_N];          /* addr bytes rep m0 n0 m n */
	uint64_t f[TRACE_D_N];          /* rep m0 k0 n0 m k n */
};

#endif
