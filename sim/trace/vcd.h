/*
 * vcd.h - a value change dump (IEEE 1364 VCD) writer in the clock's time.
 *
 * Signals are declared in scopes, then values change at cycles in
 * non-decreasing order. Times are written in picoseconds from the clock:
 * cycle c is at round(c * 1000 / clock_ghz) ps (worked out in long double,
 * halves away from zero), so that a viewer shows real time (timescale 1 ps)
 * and the file's last time is the run's last cycle. A cycle whose time
 * passes 2^63 - 1 ps is a failure (EOVERFLOW, reported by vcd_flush and
 * vcd_close). Integer signals are bit vectors of up to 64 bits (two's
 * complement), real signals print with %.9g, and string signals use
 * GTKWave's "string" type, which GTKWave shows as text (one token: spaces
 * and control bytes become '_'; the empty string is an empty token).
 *
 * Writes go through stdio; the first failure is kept and returned by
 * vcd_flush and vcd_close. Nothing here allocates per value, except a
 * string signal's buffer growing to its longest value.
 */
#ifndef TPUSIM_VCD_H
#define TPUSIM_VCD_H

#include <stdint.h>

#include "err.h"

typedef struct vcd vcd;

enum vcd_type { VCD_INT, VCD_REAL, VCD_STRING };

/* Creates path for writing (returns owned; NULL with e set, an input error, when it cannot be created). */
vcd *vcd_open(const char *path, double clock_ghz, struct err *e);

/* Opens and closes a scope ($scope module name). Before vcd_begin. */
void vcd_scope(vcd *v, const char *name);
void vcd_upscope(vcd *v);

/* Declares a signal (bits: 1..64 for VCD_INT, ignored otherwise) and returns its id. Before vcd_begin. */
int vcd_var(vcd *v, const char *name, enum vcd_type type, int bits);

/* Ends the declarations; every signal starts as x (strings: empty) at time 0. */
void vcd_begin(vcd *v);

/* Value changes at cycle (>= the previous change's cycle); a value equal to the signal's last is not written. */
void vcd_int(vcd *v, int id, int64_t cycle, int64_t value);
void vcd_real(vcd *v, int id, int64_t cycle, double value);
void vcd_str(vcd *v, int id, int64_t cycle, const char *value);

/*
 * Writes time `cycle` when it is later than the last change, and flushes the
 * file. Returns 0, or -1 with e set when any write so far has failed (the
 * file is then incomplete: vcd_abandon it).
 */
int vcd_flush(vcd *v, int64_t cycle, struct err *e);

/* Writes the final time (end_cycle) and closes the file; returns 0, or -1 with e set when any write failed. */
int vcd_close(vcd *v, int64_t end_cycle, struct err *e);

/* Closes and removes the file without finishing it (a failed run). NULL is a no-op. */
void vcd_abandon(vcd *v);

#endif
