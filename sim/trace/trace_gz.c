/*
 * trace_gz.c - the trace module's byte streams through zlib (see trace_gz.h).
 * The only file of tpusim that includes <zlib.h>.
 */
#include "trace_gz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fsx.h"
#include "limit.h"

/* ---- writing ---- */

struct tgz_out {
	FILE *f;
	char *path;                     /* owned */
	bool gz;
	z_stream z;
	bool zinit;
	unsigned char buf[TGZ_CHUNK];   /* bytes not yet deflated or written */
	size_t n;
	unsigned char zbuf[TGZ_CHUNK];
	int err;                        /* the first errno of a failed write, or -1: zlib failed */
	bool removable;                 /* a plain file of its own, removed if the stream fails (fsx.h) */
	const char *zmsg;               /* zlib's message for err -1 */
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !strcmp(s + n - m, tail);
}

static void out_free(tgz_out *o)
{
	if (!o)
		return;
	free(o->path);
	free(o);
}

tgz_out *tgz_out_open(const char *path, const char *what, struct err *e)
{
	tgz_out *o = calloc(1, sizeof *o);
	char q[LIMIT_QUOTE_BUF];
	int rc;
	if (!o || !(o->path = strdup(path))) {
		out_free(o);
		err_nomem(e, what);
		return NULL;
	}
	o->gz = ends_with(path, ".gz");
	if (o->gz) {
		rc = deflateInit2(&o->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
		if (rc != Z_OK) {
			if (rc == Z_MEM_ERROR)
				err_nomem(e, what);
			else
				err_sim(e, "%s: zlib could not start a gzip stream (%s)", what, o->z.msg ? o->z.msg : zError(rc));
			out_free(o);
			return NULL;
		}
		o->zinit = true;
	}
	if (!(o->f = fopen(path, "wb"))) {
		err_input(e, "%s: expected a writable path, found \"%s\" (%s)", what,
			  err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
		if (o->zinit && deflateEnd(&o->z) != Z_OK) {
			/* Nothing was written: the stream is dropped either way. */
		}
		out_free(o);
		return NULL;
	}
	o->removable = fsx_removable(o->f, path);
	return o;
}

static void out_fail_errno(tgz_out *o)
{
	if (!o->err)
		o->err = errno ? errno : EIO;
}

static void out_put(tgz_out *o, const void *p, size_t len)
{
	if (o->err || !len)
		return;
	if (fwrite(p, 1, len, o->f) != len)
		out_fail_errno(o);
}

/* Deflates (or writes) the buffered bytes; flush Z_FINISH ends the gzip stream. */
static void out_drain(tgz_out *o, int flush)
{
	if (o->err)
		return;
	if (!o->gz) {
		out_put(o, o->buf, o->n);
		o->n = 0;
		return;
	}
	o->z.next_in = o->buf;
	o->z.avail_in = (uInt)o->n;
	for (;;) {
		o->z.next_out = o->zbuf;
		o->z.avail_out = sizeof o->zbuf;
		int rc = deflate(&o->z, flush);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
			o->err = -1;
			o->zmsg = o->z.msg ? o->z.msg : zError(rc);
			return;
		}
		out_put(o, o->zbuf, sizeof o->zbuf - o->z.avail_out);
		if (o->err)
			return;
		if (flush == Z_FINISH ? rc == Z_STREAM_END : o->z.avail_out != 0)
			break;
		if (rc == Z_BUF_ERROR && o->z.avail_out != 0) {
			/* No progress possible with room to spare: deflate's state is broken. */
			o->err = -1;
			o->zmsg = "deflate made no progress";
			return;
		}
	}
	o->n = 0;
}

void tgz_out_write(tgz_out *o, const void *p, size_t len)
{
	const unsigned char *b = p;
	while (len) {
		size_t k = sizeof o->buf - o->n < len ? sizeof o->buf - o->n : len;
		memcpy(o->buf + o->n, b, k);
		o->n += k;
		b += k;
		len -= k;
		if (o->n == sizeof o->buf)
			out_drain(o, Z_NO_FLUSH);
	}
}

unsigned char *tgz_out_room(tgz_out *o, size_t want)
{
	SIM_ASSERT(want <= TGZ_CHUNK);
	if (sizeof o->buf - o->n < want)
		out_drain(o, Z_NO_FLUSH);
	if (o->err)
		o->n = 0;       /* a failed stream drops what it is given */
	return o->buf + o->n;
}

void tgz_out_commit(tgz_out *o, size_t n)
{
	SIM_ASSERT(n <= sizeof o->buf - o->n);
	o->n += n;
}

int tgz_out_close(tgz_out *o, const char *what, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	int rc = 0;
	out_drain(o, Z_FINISH);
	if (o->zinit) {
		int zr = deflateEnd(&o->z);
		/* Z_DATA_ERROR: the stream was not finished, because a write failed (err says which). */
		if (zr != Z_OK && !o->err) {
			o->err = -1;
			o->zmsg = zError(zr);
		}
	}
	if (fflush(o->f) != 0 || ferror(o->f))
		out_fail_errno(o);
	if (fclose(o->f) != 0)
		out_fail_errno(o);
	if (o->err) {
		if (o->err == -1)
			rc = err_sim(e, "%s: zlib failed while writing \"%s\" (%s)", what,
				     err_quote(q, sizeof q, o->path, LIMIT_PATH), o->zmsg);
		else
			rc = fsx_write_error(e, what, o->path, o->err);
		if (o->removable)
			unlink(o->path);
	}
	out_free(o);
	return rc;
}

void tgz_out_abandon(tgz_out *o)
{
	if (!o)
		return;
	if (o->zinit && deflateEnd(&o->z) != Z_OK) {
		/* Z_DATA_ERROR here means only that the stream was left unfinished, as it is being dropped. */
	}
	fclose(o->f);
	if (o->removable)
		unlink(o->path);
	out_free(o);
}

/* ---- reading ---- */

struct tgz_zin {
	FILE *f;
	bool gz, zinit, zend, eof;
	z_stream z;
	unsigned char zbuf[TGZ_CHUNK];  /* compressed bytes read, not yet inflated */
	int64_t zread;                  /* compressed bytes read from the file */
	unsigned char buf[TGZ_CHUNK];   /* the bytes after inflating */
};

int tgz_in_fail(struct tgz_in *r, const char *fmt, ...)
{
	char q[LIMIT_QUOTE_BUF], msg[ERR_MSG_MAX / 2];
	va_list ap;
	if (r->failed)
		return -1;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return err_input(r->e, "%s: %s", err_quote(q, sizeof q, r->path, LIMIT_PATH), msg);
}

int tgz_in_open(struct tgz_in *r, const char *path, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	struct tgz_zin *z;
	int c1, c2;
	memset(r, 0, sizeof *r);
	r->path = path;
	r->e = e;
	if (!(z = calloc(1, sizeof *z)))
		return err_nomem(e, "trace");
	if (!(z->f = fopen(path, "rb"))) {
		free(z);
		return err_input(e, "trace: expected a readable file, found \"%s\" (%s)",
				 err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
	}
	c1 = getc(z->f);
	c2 = c1 == EOF ? EOF : getc(z->f);
	if (ferror(z->f) || fseek(z->f, 0, SEEK_SET) != 0) {
		int err = errno ? errno : EIO;
		fclose(z->f);
		free(z);
		return err_input(e, "%s: expected a readable file, found %s", err_quote(q, sizeof q, path, LIMIT_PATH),
				 strerror(err));
	}
	z->gz = c1 == 0x1f && c2 == 0x8b;
	if (z->gz) {
		int rc = inflateInit2(&z->z, 15 + 16);
		if (rc != Z_OK) {
			fclose(z->f);
			free(z);
			return rc == Z_MEM_ERROR ? err_nomem(e, "trace")
						 : err_sim(e, "trace: zlib could not start inflating (%s)", zError(rc));
		}
		z->zinit = true;
	}
	r->z = z;
	r->buf = z->buf;
	return 0;
}

void tgz_in_close(struct tgz_in *r)
{
	struct tgz_zin *z = r->z;
	if (!z)
		return;
	if (z->zinit && inflateEnd(&z->z) != Z_OK) {
		/* Only a stream zlib never started fails here: nothing to release then. */
	}
	if (z->f)
		fclose(z->f);
	free(z);
	r->z = NULL;
	r->buf = NULL;
	r->n = r->i = 0;
}

int tgz_in_fill(struct tgz_in *r)
{
	struct tgz_zin *z = r->z;
	r->base += (int64_t)r->n;
	r->n = r->i = 0;
	if (z->eof || r->failed)
		return r->failed ? -1 : 0;
	if (!z->gz) {
		r->n = fread(z->buf, 1, sizeof z->buf, z->f);
		if (ferror(z->f))
			return tgz_in_fail(r, "byte %" PRId64 ": expected to read on, found %s", r->base,
					   strerror(errno ? errno : EIO));
		if (r->n == 0)
			z->eof = true;
		return r->n > 0;
	}
	while (r->n == 0) {
		if (z->zend) {
			/* After the gzip stream: nothing else may follow. */
			if (z->z.avail_in > 0 || getc(z->f) != EOF)
				return tgz_in_fail(r, "compressed byte %" PRId64 ": expected the end of the file after the gzip "
						   "stream, found more bytes", z->zread - (int64_t)z->z.avail_in);
			z->eof = true;
			return 0;
		}
		if (z->z.avail_in == 0) {
			size_t got = fread(z->zbuf, 1, sizeof z->zbuf, z->f);
			if (ferror(z->f))
				return tgz_in_fail(r, "compressed byte %" PRId64 ": expected to read on, found %s", z->zread,
						   strerror(errno ? errno : EIO));
			if (got == 0)
				return tgz_in_fail(r, "compressed byte %" PRId64 ": expected more of the gzip stream, found the "
						   "end of the file (the trace is truncated)", z->zread);
			z->zread += (int64_t)got;
			z->z.next_in = z->zbuf;
			z->z.avail_in = (uInt)got;
		}
		z->z.next_out = z->buf;
		z->z.avail_out = sizeof z->buf;
		int rc = inflate(&z->z, Z_NO_FLUSH);
		r->n = sizeof z->buf - z->z.avail_out;
		if (rc == Z_STREAM_END) {
			z->zend = true;
		} else if (rc == Z_MEM_ERROR) {
			r->failed = true;
			return err_nomem(r->e, "trace");
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z->z.avail_in == 0)) {
			/* Z_DATA_ERROR (a corrupt stream, a wrong check value), Z_NEED_DICT, Z_STREAM_ERROR. */
			return tgz_in_fail(r, "compressed byte %" PRId64 ": expected a gzip stream, found corrupt data (%s)",
					   z->zread - (int64_t)z->z.avail_in, z->z.msg ? z->z.msg : zError(rc));
		}
	}
	return 1;
}
