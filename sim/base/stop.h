/*
 * stop.h - the request to stop: Ctrl-C (SIGINT), SIGTERM, or the library's
 * tpusim_interrupt.
 *
 * A signal handler may do almost nothing safely, so it only records the
 * request (stop_request: one lock-free atomic store); the long loops look at
 * it (stop_requested) at O(tiles) granularity -- between the engine's folds
 * and vector chunks, the functional model's folds, the analytic model's ops,
 * compare's runs, the lab's steps -- and fail with stop_error, "interrupted
 * by SIGINT", through the normal error path. So the normal cleanup removes
 * what the command made, as after any failure, and main exits with
 * 128 + the signal (130 SIGINT, 143 SIGTERM; stop_status).
 *
 * One flag a process: a library call clears it when it starts (stop_clear),
 * so an interrupt stops the call that runs when it comes.
 */
#ifndef TPUSIM_STOP_H
#define TPUSIM_STOP_H

#include <stdbool.h>

#include "err.h"

/*
 * Installs the handlers of SIGINT and SIGTERM (no SA_RESTART: a blocking
 * open or read returns EINTR, so a run waiting on a FIFO stops too). A
 * second signal while the first is being handled ends the process at once,
 * the signal's default action (nothing is cleaned up then).
 */
void stop_install(void);

/* Records a request to stop for signal sig (SIGINT for tpusim_interrupt). Async-signal-safe. */
void stop_request(int sig);

/* Whether a stop was requested since the last stop_clear. */
bool stop_requested(void);

/* Forgets a request (a library call starts). */
void stop_clear(void);

/* The exit status of a stopped command: 128 + the signal; 0 when none was requested. */
int stop_status(void);

/* Sets the error "interrupted by SIGINT" (or SIGTERM), a simulation error. Returns -1. */
int stop_error(struct err *e);

/* stop_error when a stop was requested: -1; else 0. For the loops' checks. */
int stop_check(struct err *e);

#endif
