/*
 * trace_gz.h - the trace module's byte streams: a file written or read as it
 * is, or deflated to / inflated from one gzip stream. Internal to the trace
 * module (trace_write.c, trace_read.c); trace_gz.c is the only file of tpusim
 * that includes <zlib.h>, and it checks every zlib return.
 *
 * Writing. A path that ends in ".gz" gets one gzip stream (deflate level 1:
 * a trace is written while the engine runs, and must not slow it much); any
 * other path the bytes as they are. Bytes are buffered TGZ_CHUNK at a time.
 * A failed write is kept, later bytes are dropped, and tgz_out_close reports
 * it and removes the file (when it is a plain file of its own, fsx.h).
 *
 * Reading. A file that starts with gzip's magic bytes (1f 8b) is inflated,
 * any other is read as it is. tgz_in_byte is the hot path (inline); a failure
 * is kept in the stream (failed), and its message names the file and the
 * offset: "path: byte N: ..." of the bytes after inflating, or
 * "path: compressed byte N: ..." of the file.
 */
#ifndef TPUSIM_TRACE_GZ_H
#define TPUSIM_TRACE_GZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TGZ_CHUNK 65536         /* bytes buffered before deflate, deflate's output and inflate's input at a time */

/* ---- writing ---- */

typedef struct tgz_out tgz_out;

/* Creates path; what names the option in messages ("--trace"). Returns owned, or NULL with e set. */
tgz_out *tgz_out_open(const char *path, const char *what, struct err *e);

/* Appends len bytes at p. */
void tgz_out_write(tgz_out *o, const void *p, size_t len);

/*
 * Room for at least want (<= TGZ_CHUNK) more bytes; returns where they go.
 * The caller writes there, then tgz_out_commit's the bytes it wrote.
 */
unsigned char *tgz_out_room(tgz_out *o, size_t want);
void tgz_out_commit(tgz_out *o, size_t n);

/*
 * Ends the stream and closes the file; frees o. Returns 0, or -1 with e set:
 * a failed write (fsx_write_error's class, fsx.h) or a zlib failure (a
 * simulation error); the file is then removed.
 */
int tgz_out_close(tgz_out *o, const char *what, struct err *e);

/* Closes and removes the file, frees o: a failed run leaves no trace. NULL is a no-op. */
void tgz_out_abandon(tgz_out *o);

/* ---- reading ---- */

struct tgz_zin;

struct tgz_in {
	const unsigned char *buf;       /* the bytes after inflating, n of them; the next is buf[i] */
	size_t n, i;
	int64_t base;                   /* the offset of buf[0] in the bytes after inflating */
	bool failed;                    /* an error is in e: every later read ends */
	const char *path;               /* borrowed */
	struct err *e;                  /* borrowed: where the first error goes */
	struct tgz_zin *z;              /* owned: the file and the inflate state */
};

/* Opens path for reading into r. Returns 0, or -1 with e set (nothing to close then). */
int tgz_in_open(struct tgz_in *r, const char *path, struct err *e);

/* Closes the file. */
void tgz_in_close(struct tgz_in *r);

/* Refills buf. Returns 1 when bytes came, 0 at the end of the bytes, -1 on error (r->failed). */
int tgz_in_fill(struct tgz_in *r);

/* An input error "path: <fmt>"; only the first is kept. Returns -1. */
int tgz_in_fail(struct tgz_in *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The next byte, or -1 at the end or on error (r->failed). */
static inline int tgz_in_byte(struct tgz_in *r)
{
	if (r->i == r->n && tgz_in_fill(r) <= 0)
		return -1;
	return r->buf[r->i++];
}

/* The offset of the next byte, in the bytes after inflating. */
static inline int64_t tgz_in_pos(const struct tgz_in *r)
{
	return r->base + (int64_t)r->i;
}

#endif
