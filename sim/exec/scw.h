/*
 * scw.h - the SystemC kernel behind a C API.
 *
 * The one door between tpusim's C and SystemC's C++ (scw.cpp is the only
 * file that includes <systemc>). Time is counted in cycles: one cycle is one
 * nanosecond of SystemC time, whatever the accelerator's clock, so cycle
 * counts never pass through floating point. Each kernel's time resolution is
 * 1 ns, one tick a cycle: a kernel counts to cycle INT64_MAX (SCW_LAST_CYCLE),
 * and a wait that would end past it fails the kernel instead of wrapping.
 *
 * A kernel (scw_kernel) is one simulation: its own SystemC context starting at
 * cycle 0, its threads and its failure. Nothing survives from one kernel to
 * the next, so a run that failed leaves the next kernel unaffected, and one
 * process may run many kernels one after another.
 * scw_run() runs until no thread can make progress, and may be called again
 * after spawning more threads (time keeps counting; measure durations as
 * differences of scw_now()).
 *
 * Threads are C functions run as SystemC thread processes. Inside a thread,
 * scw_wait* suspend it and scw_now() is the running kernel's cycle. Events
 * and semaphores belong to no kernel until a thread first waits on them (or
 * notifies an event); free them before freeing the kernel they were used in.
 * Outside threads, scw_now() is the cycle of the current kernel: the one last
 * created or passed to scw_spawn, scw_run, scw_stop or scw_kernel_now.
 *
 * No C++ exception crosses into C: an error inside the kernel ends scw_run()
 * with -1 and an error naming the cycle and the thread; the kernel keeps that
 * failure (every later scw_run on it returns it again).
 */
#ifndef TPUSIM_SCW_H
#define TPUSIM_SCW_H

#include <stdint.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The last cycle a kernel can reach. */
#define SCW_LAST_CYCLE INT64_MAX

typedef struct scw_kernel scw_kernel;
typedef struct scw_event scw_event;
typedef struct scw_sem scw_sem;
typedef void (*scw_fn)(void *arg);

/* A fresh kernel at cycle 0; it becomes the current kernel. Returns owned, or NULL with e set. */
scw_kernel *scw_kernel_new(struct err *e);

/*
 * Frees the kernel with its context and every thread still waiting in it. NULL is a no-op. Not from inside one of its threads.
 */
void scw_kernel_free(scw_kernel *k);

/* Starts a thread of k running fn(arg) at k's current cycle (when k runs). name is copied. */
void scw_spawn(scw_kernel *k, const char *name, scw_fn fn, void *arg);

/* Runs k until every thread has finished or waits forever. Returns 0, or -1 with e set. */
int scw_run(scw_kernel *k, struct err *e);

/* Ends k's simulation at the end of this delta cycle; k cannot run again. */
void scw_stop(scw_kernel *k);

/* k's current cycle, from anywhere. */
int64_t scw_kernel_now(const scw_kernel *k);

/* The current cycle: in a thread, of the kernel running it; outside, of the current kernel. */
int64_t scw_now(void);

/*
 * In a thread: suspend for n >= 0 cycles; until cycle c (now if c is past).
 * A wait that would end past SCW_LAST_CYCLE fails the kernel ("expected a
 * wait that ends by cycle N, found one of M cycles") and returns at once.
 */
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
void scw_sem_take(scw_sem *s, int64_t n);      /* in a thread, unless count >= n */
void scw_sem_give(scw_sem *s, int64_t n);
int64_t scw_sem_count(const scw_sem *s);

#ifdef __cplusplus
}
#endif

#endif
