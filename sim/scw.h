/*
 * scw.h - the SystemC kernel behind a C API.
 *
 * The one door between tpusim's C and SystemC's C++ (scw.cpp is the only
 * file that includes <systemc>). Time is counted in cycles: one cycle is one
 * nanosecond of SystemC time, whatever the accelerator's clock, so cycle
 * counts never pass through floating point.
 *
 * Threads are C functions run as SystemC thread processes. Inside a thread,
 * scw_wait* suspend it; everything else may be called from anywhere. The
 * kernel lives for the whole process: scw_run() runs until no thread can
 * make progress, and may be called again after spawning more threads (time
 * keeps counting; measure durations as differences of scw_now()).
 *
 * No C++ exception crosses into C: an error inside the kernel ends scw_run()
 * with -1 and an error naming the cycle and the thread.
 */
#ifndef TPUSIM_SCW_H
#define TPUSIM_SCW_H

#include <stdint.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scw_event scw_event;
typedef struct scw_sem scw_sem;
typedef void (*scw_fn)(void *arg);

/* Starts a thread running fn(arg) at the current cycle (when the kernel runs). name is copied. */
void scw_spawn(const char *name, scw_fn fn, void *arg);

/* Runs until every thread has finished or waits forever. Returns 0, or -1 with e set. */
int scw_run(struct err *e);

/* Ends the simulation at the end of this delta cycle; the kernel cannot run again. */
void scw_stop(void);

/* The current cycle. */
int64_t scw_now(void);

/* In a thread: suspend for n >= 0 cycles; until cycle c (now if c is past). */
void scw_wait(int64_t n);
void scw_wait_until(int64_t c);

/* Events: a thread waits until the event is notified. */
scw_event *scw_event_new(void);
void scw_event_free(scw_event *ev);            /* NULL is a no-op */
void scw_event_notify(scw_event *ev);          /* wakes waiters in the next delta cycle */
void scw_event_wait(scw_event *ev);            /* in a thread */

/* Counting semaphores: scw_sem_take blocks until count >= n, then subtracts n. */
scw_sem *scw_sem_new(int64_t count);
void scw_sem_free(scw_sem *s);                 /* NULL is a no-op */
void scw_sem_take(scw_sem *s, int64_t n);      /* in a thread */
void scw_sem_give(scw_sem *s, int64_t n);
int64_t scw_sem_count(const scw_sem *s);

/*
 * VCD tracing of C variables (read at every change of time). Open before the
 * first scw_run; variables must outlive the trace. Returns 0 or -1 with e set.
 */
int scw_trace_open(const char *path_without_vcd, struct err *e);
void scw_trace_i64(const int64_t *var, const char *name);
void scw_trace_close(void);

#ifdef __cplusplus
}
#endif

#endif
