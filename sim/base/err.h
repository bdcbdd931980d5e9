/*
 * err.h - error values that carry a position.
 *
 * Library code never prints and never exits: it fills a struct err and returns
 * -1 (or NULL). Only main prints the message and picks the exit status. The
 * message format is fixed, because tests assert it byte for byte:
 *
 *     file:line:col: key.path: expected ..., found ...
 *
 * Lowercase, no trailing period, the problem first.
 */
#ifndef TPUSIM_ERR_H
#define TPUSIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#include "limit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum err_kind {
	ERR_NONE = 0,
	ERR_INPUT = 2,   /* bad config, workload or command line: exit status 2 */
	ERR_SIM = 1,     /* a model violation found while simulating: exit status 1 */
	ERR_NOMEM = 3    /* memory ran out: exit status 3 (the input may be fine) */
};

struct err {
	enum err_kind kind;
	char msg[ERR_MSG_MAX];
};

/* A place in an input file; line and col are 1-based, line 0 means "whole file". */
struct pos {
	const char *file;   /* borrowed */
	long line, col;
};

/* Sets an input error "file:line:col: path: <fmt>"; path may be NULL or "". Returns -1. */
int err_at(struct err *e, struct pos p, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Sets an input error with a free-form message. Returns -1. */
int err_input(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets an out-of-memory error "what: out of memory"; what may be NULL. Returns -1. */
int err_nomem(struct err *e, const char *what);

/* The exit status for e: 0 none, 1 simulation error, 2 bad input, 3 out of memory. */
int err_status(const struct err *e);

/* Sets a simulation error. Returns -1. */
int err_sim(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Writes text into buf as it may appear in a message: bytes outside printable
 * ASCII become \xNN, and text longer than max bytes ends in "...". Returns buf.
 */
const char *err_quote(char *buf, size_t size, const char *text, size_t max);

/* Programmer bugs: abort with file:line. Never used for user input. */
#define SIM_ASSERT(c) ((c) ? (void)0 : sim_assert_fail(#c, __FILE__, __LINE__))
void sim_assert_fail(const char *what, const char *file, int line) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
