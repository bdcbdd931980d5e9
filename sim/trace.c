/*
 * trace.c - event traces and DRAM traces, written and read through zlib (see
 * trace.h). The byte streams below are the only code that calls zlib.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fsx.h"
#include "run.h"
#include "stats.h"
#include "workload.h"
#include "xmath.h"

const char *const trace_cause_names[] = { "shift", "drain", "wait_a", "wait_b", "wait_acc", "port", "dep", "memory",
					  "stores", NULL };
const char *const trace_dram_format_names[] = { "dramsim3", "ramulator2", NULL };

#define MAGIC "tpusim-trace"
#define HEAD_MAX 4096           /* the header line, '\n' included */
#define NAME_MAX_BYTES 4096     /* an N record's names */
#define CHUNK 65536             /* bytes buffered before deflate, and deflate's output at a time */
#define VARINT_MAX 10           /* LEB128 bytes of a 64-bit value (a value below 2^63 takes at most 9) */
#define PASS_CELLS_MAX RUN_KEEP_PLANS   /* a pass's ops x lanes: the engine runs at most that many at once */

/* ---- an output byte stream: a file, deflated to gzip when its name ends in ".gz" ---- */

struct out {
	FILE *f;
	char *path;                     /* owned */
	bool gz;
	z_stream z;
	bool zinit;
	unsigned char buf[CHUNK];       /* bytes not yet deflated or written */
	size_t n;
	unsigned char zbuf[CHUNK];
	int err;                        /* the first errno of a failed write, or -1: zlib failed */
	bool removable;                 /* a plain file of its own, removed if the trace fails (fsx.h) */
	const char *zmsg;               /* zlib's message for err -1 */
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !strcmp(s + n - m, tail);
}

static void out_free(struct out *o)
{
	if (!o)
		return;
	free(o->path);
	free(o);
}

/* Creates path; "what" names the option in messages ("--trace"). Returns owned, or NULL with e set. */
static struct out *out_open(const char *path, const char *what, struct err *e)
{
	struct out *o = calloc(1, sizeof *o);
	char q[4200];
	int rc;
	if (!o || !(o->path = strdup(path))) {
		out_free(o);
		err_nomem(e, what);
		return NULL;
	}
	o->gz = ends_with(path, ".gz");
	if (o->gz) {
		/* Level 1: a trace is written while the engine runs, and must not slow it much. */
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
		err_input(e, "%s: expected a writable path, found \"%s\" (%s)", what, err_quote(q, sizeof q, path, 4096),
			  strerror(errno));
		if (o->zinit && deflateEnd(&o->z) != Z_OK) {
			/* Nothing was written: the stream is dropped either way. */
		}
		out_free(o);
		return NULL;
	}
	o->removable = fsx_removable(o->f, path);
	return o;
}

static void out_fail_errno(struct out *o)
{
	if (!o->err)
		o->err = errno ? errno : EIO;
}

static void out_put(struct out *o, const void *p, size_t len)
{
	if (o->err || !len)
		return;
	if (fwrite(p, 1, len, o->f) != len)
		out_fail_errno(o);
}

/* Deflates (or writes) the buffered bytes; flush Z_FINISH ends the gzip stream. */
static void out_drain(struct out *o, int flush)
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

static void out_write(struct out *o, const void *p, size_t len)
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

/* Room for at least want more bytes in the buffer (want <= CHUNK); returns where they go. */
static unsigned char *out_room(struct out *o, size_t want)
{
	if (sizeof o->buf - o->n < want)
		out_drain(o, Z_NO_FLUSH);
	if (o->err)
		o->n = 0;       /* a failed stream drops what it is given */
	return o->buf + o->n;
}

/* Ends the stream and closes the file; on any failure removes it. Frees o. */
static int out_close(struct out *o, const char *what, struct err *e)
{
	char q[4200];
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
			rc = err_sim(e, "%s: zlib failed while writing \"%s\" (%s)", what, err_quote(q, sizeof q, o->path, 4096),
				     o->zmsg);
		else
			rc = err_input(e, "%s: expected to write \"%s\", found %s", what,
				       err_quote(q, sizeof q, o->path, 4096), strerror(o->err));
		if (o->removable)
			unlink(o->path);
	}
	out_free(o);
	return rc;
}

static void out_abandon(struct out *o)
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

/* ---- the event trace ---- */

/* The fields a lane's records are written as differences of (trace.h's ~ fields): the last L of each operand, S, F. */
enum { D_N = 7 };
struct last {
	uint64_t l[2][D_N];             /* addr bytes rep r0 c0 rows cols */
	uint64_t s[D_N];                /* addr bytes rep m0 n0 m n */
	uint64_t f[D_N];                /* rep m0 k0 n0 m k n */
};

struct trace_writer {
	struct out *o;
	int64_t last;                   /* the previous record's cycle */
	int64_t records;
	int lanes;
	struct last *lane;              /* lanes */
};

/* x as the zigzag-encoded difference from *prev (modulo 2^64), which becomes x. */
static uint64_t delta(uint64_t *prev, uint64_t x)
{
	int64_t d = (int64_t)(x - *prev);
	*prev = x;
	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

/* Appends v in LEB128 at p; returns the bytes written. */
static size_t uleb(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* A header value: bytes that are not printable ASCII, or are ' ', '%' or '=', as %XX. */
static void head_value(char *buf, size_t size, const char *v)
{
	size_t n = 0;
	for (; *v && n + 4 < size; v++) {
		unsigned char c = (unsigned char)*v;
		if (c <= ' ' || c >= 0x7f || c == '%' || c == '=')
			n += (size_t)snprintf(buf + n, size - n, "%%%02X", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = 0;
}

trace_writer *trace_writer_open(const char *path, const struct trace_head *h, struct err *e)
{
	const struct arch *a = &h->cfg->arch;
	trace_writer *w = calloc(1, sizeof *w);
	char head[HEAD_MAX], cname[3 * CFG_STR_MAX + 1], wname[3 * CFG_STR_MAX + 1];
	int n;
	if (!w || !(w->lane = calloc((size_t)arch_arrays(a), sizeof *w->lane))) {
		free(w);
		err_nomem(e, "--trace");
		return NULL;
	}
	w->lanes = (int)arch_arrays(a);
	head_value(cname, sizeof cname, a->name);
	head_value(wname, sizeof wname, h->workload);
	n = snprintf(head, sizeof head,
		     MAGIC " %d config=%s workload=%s batch=%lld model=cycle dataflow=%s ideal_memory=%d rows=%lld cols=%lld "
		     "cores=%lld arrays_per_core=%lld dtype=%s clock_ghz=%.15g hbm_gbps=%.15g hbm_burst_bytes=%lld "
		     "scalesim_compat=%d prefetch_across_ops=%d\n",
		     TRACE_VERSION, cname, wname, (long long)h->batch, array_dataflow_names[h->dataflow], h->ideal_memory,
		     (long long)a->array.rows, (long long)a->array.cols, (long long)a->chip.cores,
		     (long long)a->chip.arrays_per_core, array_dtype_names[a->array.dtype], a->clock_ghz, a->hbm.gbps,
		     (long long)a->hbm.burst_bytes, a->array.scalesim_compat, a->chip.prefetch_across_ops);
	SIM_ASSERT(n > 0 && n < (int)sizeof head);
	if (!(w->o = out_open(path, "--trace", e))) {
		free(w->lane);
		free(w);
		return NULL;
	}
	out_write(w->o, head, (size_t)n);
	return w;
}

void trace_writer_put(trace_writer *w, const struct trace_rec *r)
{
	/* The longest record: a kind, 14 fields of at most 9 bytes, and an N record's names on their own. */
	unsigned char *p = out_room(w->o, 1 + 14 * VARINT_MAX), *q = p;
	struct last *ls = &w->lane[r->lane];
	uint64_t *v;
	SIM_ASSERT(r->cycle >= w->last && r->lane >= 0 && r->lane < w->lanes);
	*q++ = (unsigned char)r->kind;
	q += uleb(q, (uint64_t)(r->cycle - w->last));
	w->last = r->cycle;
	w->records++;
	switch (r->kind) {
	case TR_PASS:
		q += uleb(q, (uint64_t)r->first);
		q += uleb(q, (uint64_t)r->ops);
		break;
	case TR_NAME: {
		size_t ln = strlen(r->name), ll = strlen(r->layer_name);
		ln = ln > NAME_MAX_BYTES ? NAME_MAX_BYTES : ln;
		ll = ll > NAME_MAX_BYTES ? NAME_MAX_BYTES : ll;
		q += uleb(q, (uint64_t)r->op);
		q += uleb(q, (uint64_t)r->layer);
		q += uleb(q, (uint64_t)r->opkind);
		q += uleb(q, ln);
		w->o->n += (size_t)(q - p);
		out_write(w->o, r->name, ln);
		q = p = out_room(w->o, VARINT_MAX);
		q += uleb(q, ll);
		w->o->n += (size_t)(q - p);
		out_write(w->o, r->layer_name, ll);
		return;
	}
	case TR_OP:
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)r->op);
		q += uleb(q, r->part);
		break;
	case TR_OPEND:
		q += uleb(q, (uint64_t)r->lane);
		break;
	case TR_LOAD:
		v = ls->l[r->operand];
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)r->op);
		q += uleb(q, (uint64_t)r->operand);
		q += uleb(q, r->onchip);
		q += uleb(q, (uint64_t)(r->end - r->cycle));
		q += uleb(q, delta(&v[0], r->addr));
		q += uleb(q, delta(&v[1], (uint64_t)r->bytes));
		q += uleb(q, delta(&v[2], (uint64_t)r->rep));
		if (r->operand == OPND_A) {
			q += uleb(q, delta(&v[3], (uint64_t)r->m0));
			q += uleb(q, delta(&v[4], (uint64_t)r->k0));
			q += uleb(q, delta(&v[5], (uint64_t)r->m));
			q += uleb(q, delta(&v[6], (uint64_t)r->k));
		} else {
			q += uleb(q, delta(&v[3], (uint64_t)r->k0));
			q += uleb(q, delta(&v[4], (uint64_t)r->n0));
			q += uleb(q, delta(&v[5], (uint64_t)r->k));
			q += uleb(q, delta(&v[6], (uint64_t)r->n));
		}
		break;
	case TR_FOLD:
		/* Times past int64 (saturated) belong to a run that fails: its trace is removed, but written safely. */
		v = ls->f;
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)r->t);
		q += uleb(q, (uint64_t)max64(r->end - r->cycle - r->t, 0));
		q += uleb(q, r->out < 0 ? 0 : (uint64_t)max64(r->out - r->end, 0) + 1);
		q += uleb(q, delta(&v[0], (uint64_t)r->rep));
		q += uleb(q, delta(&v[1], (uint64_t)r->m0));
		q += uleb(q, delta(&v[2], (uint64_t)r->k0));
		q += uleb(q, delta(&v[3], (uint64_t)r->n0));
		q += uleb(q, delta(&v[4], (uint64_t)r->m));
		q += uleb(q, delta(&v[5], (uint64_t)r->k));
		q += uleb(q, delta(&v[6], (uint64_t)r->n));
		break;
	case TR_STORE:
		v = ls->s;
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)r->op);
		q += uleb(q, r->onchip);
		q += uleb(q, (uint64_t)(r->end - r->cycle));
		q += uleb(q, delta(&v[0], r->addr));
		q += uleb(q, delta(&v[1], (uint64_t)r->bytes));
		q += uleb(q, delta(&v[2], (uint64_t)r->rep));
		q += uleb(q, delta(&v[3], (uint64_t)r->m0));
		q += uleb(q, delta(&v[4], (uint64_t)r->n0));
		q += uleb(q, delta(&v[5], (uint64_t)r->m));
		q += uleb(q, delta(&v[6], (uint64_t)r->n));
		break;
	case TR_CHARGE:
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)(r->end - r->cycle));
		q += uleb(q, (uint64_t)r->cat);
		q += uleb(q, (uint64_t)r->cause);
		break;
	case TR_VEC:
		q += uleb(q, (uint64_t)r->lane);
		q += uleb(q, (uint64_t)r->idx);
		q += uleb(q, (uint64_t)r->chunks);
		q += uleb(q, (uint64_t)(r->end - r->cycle));
		break;
	default:
		SIM_ASSERT(!"a record kind trace_writer_put does not know");
	}
	w->o->n += (size_t)(q - p);
}

int trace_writer_close(trace_writer *w, int64_t end, struct err *e)
{
	unsigned char *p = out_room(w->o, 1 + 2 * VARINT_MAX), *q = p;
	int rc;
	SIM_ASSERT(end >= w->last);
	*q++ = TR_END;
	q += uleb(q, (uint64_t)(end - w->last));
	q += uleb(q, (uint64_t)w->records);
	w->o->n += (size_t)(q - p);
	rc = out_close(w->o, "--trace", e);
	free(w->lane);
	free(w);
	return rc;
}

void trace_writer_abandon(trace_writer *w)
{
	if (!w)
		return;
	out_abandon(w->o);
	free(w->lane);
	free(w);
}

/* ---- the DRAM trace ---- */

struct trace_dram {
	struct out *o;
	int format;
	int64_t burst;
};

trace_dram *trace_dram_open(const char *path, int format, int64_t burst_bytes, struct err *e)
{
	trace_dram *d = calloc(1, sizeof *d);
	if (!d) {
		err_nomem(e, "--dram-trace");
		return NULL;
	}
	SIM_ASSERT(burst_bytes >= 1 && (format == TRACE_DRAMSIM3 || format == TRACE_RAMULATOR2));
	d->format = format;
	d->burst = burst_bytes;
	if (!(d->o = out_open(path, "--dram-trace", e))) {
		free(d);
		return NULL;
	}
	return d;
}

/* Writes v in hex (no prefix) at p; returns the bytes written. */
static size_t hex(char *p, uint64_t v)
{
	char t[16];
	size_t n = 0, k = 0;
	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		p[k++] = t[--n];
	return k;
}

static size_t dec(char *p, uint64_t v)
{
	char t[20];
	size_t n = 0, k = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		p[k++] = t[--n];
	return k;
}

void trace_dram_request(trace_dram *d, int64_t cycle, uint64_t addr, int64_t bytes, bool write)
{
	uint64_t b = (uint64_t)d->burst, first = addr / b, last;
	if (bytes <= 0)
		return;
	last = (addr + (uint64_t)bytes - 1) / b;
	for (uint64_t j = first; j <= last; j++) {
		/* "0x<16 hex> WRITE <20 digits>\n": at most 46 bytes. */
		char *p = (char *)out_room(d->o, 64), *q = p;
		if (d->format == TRACE_DRAMSIM3) {
			*q++ = '0', *q++ = 'x';
			q += hex(q, j * b);
			memcpy(q, write ? " WRITE " : " READ ", write ? 7 : 6);
			q += write ? 7 : 6;
			q += dec(q, (uint64_t)cycle);
		} else {
			memcpy(q, write ? "ST 0x" : "LD 0x", 5);
			q += 5;
			q += hex(q, j * b);
		}
		*q++ = '\n';
		d->o->n += (size_t)(q - p);
	}
}

int trace_dram_close(trace_dram *d, struct err *e)
{
	int rc = out_close(d->o, "--dram-trace", e);
	free(d);
	return rc;
}

void trace_dram_abandon(trace_dram *d)
{
	if (!d)
		return;
	out_abandon(d->o);
	free(d);
}

/* ---- reading: an input byte stream, inflated when it is gzip ---- */

struct in {
	FILE *f;
	const char *path;               /* borrowed */
	bool gz, zinit, zend, eof;
	z_stream z;
	unsigned char zbuf[CHUNK];      /* compressed bytes read, not yet inflated */
	int64_t zread;                  /* compressed bytes read from the file */
	unsigned char buf[CHUNK];       /* the trace's bytes */
	size_t n, i;
	int64_t base;                   /* the offset of buf[0] in the trace's bytes */
	struct err *e;
	bool failed;
};

static int in_fail(struct in *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An input error "path: <fmt>"; only the first is kept. Returns -1. */
static int in_fail(struct in *r, const char *fmt, ...)
{
	char q[4200], msg[ERR_MSG_MAX / 2];
	va_list ap;
	if (r->failed)
		return -1;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return err_input(r->e, "%s: %s", err_quote(q, sizeof q, r->path, 4096), msg);
}

static int in_open(struct in *r, const char *path, struct err *e)
{
	char q[4200];
	int c1, c2;
	memset(r, 0, sizeof *r);
	r->path = path;
	r->e = e;
	if (!(r->f = fopen(path, "rb")))
		return err_input(e, "trace: expected a readable file, found \"%s\" (%s)", err_quote(q, sizeof q, path, 4096),
				 strerror(errno));
	c1 = getc(r->f);
	c2 = c1 == EOF ? EOF : getc(r->f);
	if (ferror(r->f) || fseek(r->f, 0, SEEK_SET) != 0) {
		fclose(r->f);
		return err_input(e, "%s: expected a readable file, found %s", err_quote(q, sizeof q, path, 4096),
				 strerror(errno ? errno : EIO));
	}
	r->gz = c1 == 0x1f && c2 == 0x8b;
	if (r->gz) {
		int rc = inflateInit2(&r->z, 15 + 16);
		if (rc != Z_OK) {
			fclose(r->f);
			return rc == Z_MEM_ERROR ? err_nomem(e, "trace")
						 : err_sim(e, "trace: zlib could not start inflating (%s)", zError(rc));
		}
		r->zinit = true;
	}
	return 0;
}

static void in_close(struct in *r)
{
	if (r->zinit && inflateEnd(&r->z) != Z_OK) {
		/* Only a stream zlib never started fails here: nothing to release then. */
	}
	if (r->f)
		fclose(r->f);
	r->f = NULL;
}

/* Refills buf. Returns 1 when bytes came, 0 at the end of the trace's bytes, -1 on error. */
static int in_fill(struct in *r)
{
	r->base += (int64_t)r->n;
	r->n = r->i = 0;
	if (r->eof || r->failed)
		return r->failed ? -1 : 0;
	if (!r->gz) {
		r->n = fread(r->buf, 1, sizeof r->buf, r->f);
		if (ferror(r->f))
			return in_fail(r, "byte %" PRId64 ": expected to read on, found %s", r->base, strerror(errno ? errno : EIO));
		if (r->n == 0)
			r->eof = true;
		return r->n > 0;
	}
	while (r->n == 0) {
		if (r->zend) {
			/* After the gzip stream: nothing else may follow. */
			if (r->z.avail_in > 0 || getc(r->f) != EOF)
				return in_fail(r, "compressed byte %" PRId64 ": expected the end of the file after the gzip stream, "
					       "found more bytes", r->zread - (int64_t)r->z.avail_in);
			r->eof = true;
			return 0;
		}
		if (r->z.avail_in == 0) {
			size_t got = fread(r->zbuf, 1, sizeof r->zbuf, r->f);
			if (ferror(r->f))
				return in_fail(r, "compressed byte %" PRId64 ": expected to read on, found %s", r->zread,
					       strerror(errno ? errno : EIO));
			if (got == 0)
				return in_fail(r, "compressed byte %" PRId64 ": expected more of the gzip stream, found the end of "
					       "the file (the trace is truncated)", r->zread);
			r->zread += (int64_t)got;
			r->z.next_in = r->zbuf;
			r->z.avail_in = (uInt)got;
		}
		r->z.next_out = r->buf;
		r->z.avail_out = sizeof r->buf;
		int rc = inflate(&r->z, Z_NO_FLUSH);
		r->n = sizeof r->buf - r->z.avail_out;
		if (rc == Z_STREAM_END) {
			r->zend = true;
		} else if (rc == Z_MEM_ERROR) {
			r->failed = true;
			return err_nomem(r->e, "trace");
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && r->z.avail_in == 0)) {
			/* Z_DATA_ERROR (a corrupt stream, a wrong check value), Z_NEED_DICT, Z_STREAM_ERROR. */
			return in_fail(r, "compressed byte %" PRId64 ": expected a gzip stream, found corrupt data (%s)",
				       r->zread - (int64_t)r->z.avail_in, r->z.msg ? r->z.msg : zError(rc));
		}
	}
	return 1;
}

/* The next byte of the trace, or -1 at its end or on error (r->failed). */
static int in_byte(struct in *r)
{
	if (r->i == r->n && in_fill(r) <= 0)
		return -1;
	return r->buf[r->i++];
}

/* The offset of the next byte. */
static int64_t in_pos(const struct in *r)
{
	return r->base + (int64_t)r->i;
}

/* ---- reading: records ---- */

/* A lane's part of an op of the current pass. */
struct cell {
	int64_t start, end;             /* O and E cycles; -1 not yet */
	int64_t cursor;                 /* where the next piece of the lane's time must start */
	int64_t cat[CAT_N];
	int64_t loads, folds, stores;   /* records so far: the next one's index */
};

struct reader {
	struct in in;
	struct trace_summary *s;
	void (*fn)(void *ctx, const struct trace_rec *r);
	void *ctx;
	int64_t at;                     /* the offset of the record being read */
	int64_t cycle;
	/* the current pass */
	bool in_pass;
	int64_t first, ops, pass_start, pass_end, timeline;
	struct cell *cells;             /* ops x lanes */
	int64_t *op_layer;              /* per op: its layer (from N), -1 not named */
	int64_t *op_rd, *op_wr;         /* per op: HBM bytes */
	int64_t *lane_op;               /* per lane: the op it is in (O seen, E not yet), -1 none */
	struct last *last;              /* per lane: what the ~ fields are differences from */
	int64_t last_layer;             /* the layer of the last op named */
	int64_t next_op;                /* the ops of a pass come after those of the last */
	char name[NAME_MAX_BYTES + 1], layer_name[NAME_MAX_BYTES + 1];
};

static int bad(struct reader *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "path: byte <at>: <fmt>", at the record being read. */
static int bad(struct reader *d, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return in_fail(&d->in, "byte %" PRId64 ": %s", d->at, msg);
}

/* A field: an unsigned LEB128 of at most 64 bits. */
static int ufield(struct reader *d, uint64_t *v)
{
	uint64_t x = 0;
	int64_t at = in_pos(&d->in);
	for (int i = 0; i < VARINT_MAX; i++) {
		int c = in_byte(&d->in);
		if (c < 0) {
			if (d->in.failed)
				return -1;
			return bad(d, "expected the rest of the record, found the end of the trace (it is truncated at byte %"
				   PRId64 ")", in_pos(&d->in));
		}
		if (i == VARINT_MAX - 1 && c > 1)
			break;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return in_fail(&d->in, "byte %" PRId64 ": expected a field of at most 64 bits (%d bytes), found a longer one", at,
		       VARINT_MAX);
}

/* A field below 2^63. */
static int field(struct reader *d, int64_t *v)
{
	uint64_t x;
	int64_t at = in_pos(&d->in);
	if (ufield(d, &x) < 0)
		return -1;
	if (x > (uint64_t)INT64_MAX)
		return in_fail(&d->in, "byte %" PRId64 ": expected a field below 2^63, found %" PRIu64, at, x);
	*v = (int64_t)x;
	return 0;
}

/* A ~ field: *prev plus the zigzag-encoded difference, modulo 2^64; the value becomes *prev. */
static int dfield(struct reader *d, uint64_t *prev)
{
	uint64_t z;
	if (ufield(d, &z) < 0)
		return -1;
	*prev += (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
	return 0;
}

/* ~ fields into prev[0 .. n), then each but the first (skip) checked to be a count or coordinate: below 2^62. */
static int dfields(struct reader *d, uint64_t *prev, int n, int skip)
{
	int64_t at = in_pos(&d->in);
	for (int i = 0; i < n; i++)
		if (dfield(d, &prev[i]) < 0)
			return -1;
	for (int i = skip; i < n; i++)
		if (prev[i] > (uint64_t)RUN_MAX_CYCLES)
			return in_fail(&d->in, "byte %" PRId64 ": expected tile sizes and coordinates below 2^62, found %" PRIu64
				       " (a corrupt difference)", at, prev[i]);
	return 0;
}

/* Fields into the pointers given, NULL-terminated. */
static int fields(struct reader *d, ...)
{
	va_list ap;
	int64_t *v;
	int rc = 0;
	va_start(ap, d);
	while (rc == 0 && (v = va_arg(ap, int64_t *)))
		rc = field(d, v);
	va_end(ap);
	return rc;
}

static int check_max(struct reader *d, const char *what, int64_t v, int64_t max)
{
	if (v > max)
		return bad(d, "expected %s of at most %" PRId64 ", found %" PRId64, what, max, v);
	return 0;
}

/* The header line: magic, version, and the key=value words. */
static int read_head(struct reader *d)
{
	char line[HEAD_MAX], *p, *save = NULL;
	size_t n = 0;
	int c;
	int64_t cores = -1, apc = -1;
	struct trace_summary *s = d->s;
	while ((c = in_byte(&d->in)) >= 0 && c != '\n' && n + 1 < sizeof line)
		line[n++] = (char)c;
	line[n] = 0;
	if (d->in.failed)
		return -1;
	if (strncmp(line, MAGIC " ", sizeof MAGIC) != 0)
		return bad(d, "expected a tpusim event trace (a first line \"" MAGIC " <version> ...\"), found %s",
			   n == 0 ? "an empty file" : "other data");
	if (c != '\n')
		return bad(d, "expected a header line of at most %d bytes, found %s", HEAD_MAX - 1,
			   c < 0 ? "the end of the trace" : "a longer one");
	p = line + sizeof MAGIC;
	char *end;
	long v = strtol(p, &end, 10);
	if (end == p || (*end && *end != ' ') || v < 0) {
		d->at = (int64_t)(p - line);
		return bad(d, "expected the format version, a number, found \"%.20s\"", p);
	}
	if (v != TRACE_VERSION) {
		d->at = (int64_t)(p - line);
		return bad(d, "expected format version %d, found %ld (written by another tpusim)", TRACE_VERSION, v);
	}
	s->version = (int)v;
	if (!(s->head = malloc(n + 1)))
		return err_nomem(d->in.e, "trace");
	s->head[0] = 0;
	size_t hn = 0;
	for (char *w = strtok_r(end, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), val[HEAD_MAX];
		size_t k = 0;
		d->at = (int64_t)(w - line);
		if (!eq || eq == w)
			return bad(d, "expected key=value in the header line, found \"%.40s\"", w);
		for (const char *x = eq + 1; *x; x++) {
			unsigned hx;
			if (*x == '%' && sscanf(x + 1, "%2x", &hx) == 1 && x[1] && x[2]) {
				val[k++] = (char)hx;
				x += 2;
			} else {
				val[k++] = *x;
			}
		}
		val[k] = 0;
		*eq = 0;
		hn += (size_t)snprintf(s->head + hn, n + 1 - hn, "%s%s=%s", hn ? " " : "", w, val);
		if (!strcmp(w, "cores") || !strcmp(w, "arrays_per_core")) {
			char *e2;
			long long x = strtoll(val, &e2, 10);
			if (e2 == val || *e2 || x < 1 || x > 65536)
				return bad(d, "expected %s to be an integer in [1, 65536], found \"%.20s\"", w, val);
			*(w[0] == 'c' ? &cores : &apc) = x;
		} else if (!strcmp(w, "clock_ghz")) {
			s->clock_ghz = strtod(val, NULL);
		}
	}
	d->at = 0;
	if (cores < 0 || apc < 0)
		return bad(d, "expected the header line to name cores and arrays_per_core, found %s missing",
			   cores < 0 ? "cores" : "arrays_per_core");
	if (cores * apc > 65536)
		return bad(d, "expected at most 65536 arrays (cores x arrays_per_core), found %lld", (long long)(cores * apc));
	s->lanes = (int)(cores * apc);
	if (!(d->lane_op = malloc((size_t)s->lanes * sizeof *d->lane_op)) ||
	    !(d->last = calloc((size_t)s->lanes, sizeof *d->last)))
		return err_nomem(d->in.e, "trace");
	for (int q = 0; q < s->lanes; q++)
		d->lane_op[q] = -1;
	return 0;
}

static struct cell *cell_of(struct reader *d, int64_t op, int64_t lane)
{
	return &d->cells[(size_t)(op - d->first) * (size_t)d->s->lanes + (size_t)lane];
}

/* Checks lane and op of a record against the pass: the lane exists, the op is in the pass. */
static int lane_op(struct reader *d, int64_t lane, int64_t op)
{
	if (lane >= d->s->lanes)
		return bad(d, "expected a lane below %d (cores x arrays_per_core), found %" PRId64, d->s->lanes, lane);
	if (!d->in_pass)
		return bad(d, "expected a pass record (P) before the pass's records, found none");
	if (op < d->first || op - d->first >= d->ops)
		return bad(d, "expected an op of the pass (%" PRId64 " .. %" PRId64 "), found op %" PRId64, d->first,
			   d->first + d->ops - 1, op);
	return 0;
}

static int check_lane(struct reader *d, int64_t lane)
{
	if (lane >= d->s->lanes)
		return bad(d, "expected a lane below %d (cores x arrays_per_core), found %" PRId64, d->s->lanes, lane);
	return 0;
}

/* The lane's op: the one it is running (O seen, E not yet), into *op; none is an error. */
static int running(struct reader *d, int64_t lane, int64_t *op)
{
	if (check_lane(d, lane) < 0)
		return -1;
	if (d->lane_op[lane] < 0)
		return bad(d, "expected lane %" PRId64 " to be running an op (between its O and E), found it idle", lane);
	*op = d->lane_op[lane];
	return 0;
}

/* A piece of the lane's time in its op, [cycle, cycle + len) to cat: it must start where the last ended. */
static int piece(struct reader *d, int64_t lane, int64_t len, int cat, int64_t *op)
{
	struct cell *c;
	if (running(d, lane, op) < 0)
		return -1;
	c = cell_of(d, *op, lane);
	if (d->cycle != c->cursor)
		return bad(d, "expected lane %" PRId64 "'s next cycles of op %" PRId64 " to start at cycle %" PRId64
			   " (where the last ended), found cycle %" PRId64, lane, *op, c->cursor, d->cycle);
	if (len > RUN_MAX_CYCLES - d->cycle)
		return bad(d, "expected at most 2^62 cycles, found %" PRId64 " more at cycle %" PRId64, len, d->cycle);
	c->cursor += len;
	c->cat[cat] += len;
	return 0;
}

/* A load or store done at cycle end: the pass lasts at least until its stores are done. */
static int done_at(struct reader *d, int64_t wait, int64_t *end)
{
	if (wait > RUN_MAX_CYCLES - d->cycle)
		return bad(d, "expected at most 2^62 cycles, found %" PRId64 " more at cycle %" PRId64, wait, d->cycle);
	*end = d->cycle + wait;
	return 0;
}

/* *to += add, refused (with the offset) when the sum would pass 2^62: no count of a hostile trace wraps. */
static int sum_into(struct reader *d, int64_t *to, int64_t add, const char *what)
{
	if (add < 0 || *to > RUN_MAX_CYCLES - add)
		return bad(d, "expected %s that sum to at most 2^62, found more", what);
	*to += add;
	return 0;
}

/* The pass has ended: adds its ops to the layers and totals. */
static int pass_end(struct reader *d)
{
	struct trace_summary *s = d->s;
	int lanes = s->lanes;
	if (!d->in_pass)
		return 0;
	for (int64_t k = 0; k < d->ops; k++) {
		int64_t op = d->first + k, slow = 0;
		size_t L;
		for (int q = 0; q < lanes; q++) {
			struct cell *c = cell_of(d, op, q);
			if (c->end < 0)
				return bad(d, "expected lane %d to %s op %" PRId64 " before the pass ends, found no %s", q,
					   c->start < 0 ? "begin" : "end", op, c->start < 0 ? "O record" : "E record");
			if (c->end - c->start > cell_of(d, op, slow)->end - cell_of(d, op, slow)->start)
				slow = q;
		}
		struct cell *c = cell_of(d, op, slow);
		if (d->op_layer[k] < 0)
			return bad(d, "expected a name record (N) for op %" PRId64 ", found none", op);
		L = (size_t)d->op_layer[k];
		int64_t cyc = c->end - c->start, cat[CAT_N];
		memcpy(cat, c->cat, sizeof cat);
		/* The stores still draining when every array is done end the pass: its last op waits for them. */
		if (k == d->ops - 1) {
			cyc += d->pass_end - c->end;
			cat[CAT_OUTPUTS] += d->pass_end - c->end;
		}
		if (sum_into(d, &s->layers[L].cycles, cyc, "a layer's cycles") < 0 ||
		    sum_into(d, &s->layers[L].hbm_read_bytes, d->op_rd[k], "HBM bytes") < 0 ||
		    sum_into(d, &s->layers[L].hbm_write_bytes, d->op_wr[k], "HBM bytes") < 0 ||
		    sum_into(d, &s->hbm_read_bytes, d->op_rd[k], "HBM bytes") < 0 ||
		    sum_into(d, &s->hbm_write_bytes, d->op_wr[k], "HBM bytes") < 0)
			return -1;
		for (int j = 0; j < CAT_N; j++) {
			if (sum_into(d, &s->layers[L].cat[j], cat[j], "cycles of a category") < 0 ||
			    sum_into(d, &s->cat[j], cat[j], "cycles of a category") < 0)
				return -1;
		}
	}
	if (sum_into(d, &s->cycles, d->pass_end - d->pass_start, "the passes' cycles") < 0)
		return -1;
	d->timeline = d->pass_end;
	d->in_pass = false;
	return 0;
}

static int pass_begin(struct reader *d, int64_t first, int64_t ops)
{
	int lanes = d->s->lanes;
	if (pass_end(d) < 0)
		return -1;
	if (first != d->next_op)
		return bad(d, "expected the pass to begin with op %" PRId64 " (after the last pass's), found op %" PRId64,
			   d->next_op, first);
	if (ops < 1 || ops > PASS_CELLS_MAX / lanes)
		return bad(d, "expected a pass of 1 to %d ops, found %" PRId64, PASS_CELLS_MAX / lanes, ops);
	if (d->cycle != d->timeline)
		return bad(d, "expected the pass to begin at cycle %" PRId64 " (where the last ended), found cycle %" PRId64,
			   d->timeline, d->cycle);
	free(d->cells);
	free(d->op_layer);
	free(d->op_rd);
	free(d->op_wr);
	d->cells = calloc((size_t)ops * (size_t)lanes, sizeof *d->cells);
	d->op_layer = malloc((size_t)ops * sizeof *d->op_layer);
	d->op_rd = calloc((size_t)ops, sizeof *d->op_rd);
	d->op_wr = calloc((size_t)ops, sizeof *d->op_wr);
	if (!d->cells || !d->op_layer || !d->op_rd || !d->op_wr)
		return err_nomem(d->in.e, "trace");
	for (int64_t k = 0; k < ops; k++) {
		d->op_layer[k] = -1;
		for (int q = 0; q < lanes; q++) {
			struct cell *c = &d->cells[(size_t)k * (size_t)lanes + (size_t)q];
			c->start = c->end = -1;
		}
	}
	d->in_pass = true;
	d->first = first;
	d->ops = ops;
	d->next_op = first + ops;
	d->pass_start = d->pass_end = d->cycle;
	d->s->passes++;
	d->s->ops += ops;
	return 0;
}

static int read_string(struct reader *d, char *buf, const char *what)
{
	int64_t len;
	if (field(d, &len) < 0 || check_max(d, what, len, NAME_MAX_BYTES) < 0)
		return -1;
	for (int64_t i = 0; i < len; i++) {
		int c = in_byte(&d->in);
		if (c < 0)
			return d->in.failed ? -1 : bad(d, "expected %s of %" PRId64 " bytes, found the end of the trace (it is "
						       "truncated at byte %" PRId64 ")", what, len, in_pos(&d->in));
		buf[i] = (char)c;
	}
	buf[len] = 0;
	if (memchr(buf, 0, (size_t)len))
		return bad(d, "expected %s without NUL bytes, found one", what);
	return 0;
}

static int grow_layers(struct reader *d, int64_t layer)
{
	struct trace_summary *s = d->s;
	if ((size_t)layer < s->nlayers)
		return 0;
	size_t n = (size_t)layer + 1;
	struct trace_layer *v = realloc(s->layers, n * sizeof *v);
	if (!v)
		return err_nomem(d->in.e, "trace");
	memset(v + s->nlayers, 0, (n - s->nlayers) * sizeof *v);
	s->layers = v;
	s->nlayers = n;
	return 0;
}

/* One record after its kind byte; *done at the end record. */
static int read_record(struct reader *d, int kind, bool *done)
{
	struct trace_rec r = { .kind = kind, .out = -1 };
	struct trace_summary *s = d->s;
	int64_t dc = 0, lane = 0, op = 0, a = 0, b = 0, c = 0, w = 0;
	uint64_t *v;
	struct cell *cl;
	if (field(d, &dc) < 0)
		return -1;
	if (dc > RUN_MAX_CYCLES - d->cycle)
		return bad(d, "expected at most 2^62 cycles, found %" PRId64 " more at cycle %" PRId64, dc, d->cycle);
	d->cycle += dc;
	r.cycle = d->cycle;
	switch (kind) {
	case TR_PASS:
		if (fields(d, &r.first, &r.ops, NULL) < 0 || pass_begin(d, r.first, r.ops) < 0)
			return -1;
		break;
	case TR_NAME:
		if (fields(d, &op, &r.layer, &a, NULL) < 0 || check_max(d, "an op kind", a, 1) < 0 ||
		    check_max(d, "a layer index", r.layer, WORKLOAD_MAX_LAYERS - 1) < 0 ||
		    read_string(d, d->name, "an op name") < 0 ||
		    read_string(d, d->layer_name, "a layer name") < 0 || lane_op(d, 0, op) < 0)
			return -1;
		r.opkind = (int)a;
		r.name = d->name;
		r.layer_name = d->layer_name;
		if (d->op_layer[op - d->first] >= 0)
			return bad(d, "expected one name record (N) for op %" PRId64 ", found another", op);
		/* Ops come layer by layer. */
		if (r.layer < d->last_layer)
			return bad(d, "expected op %" PRId64 "'s layer to be at least the last op's, %" PRId64 ", found %" PRId64,
				   op, d->last_layer, r.layer);
		d->last_layer = r.layer;
		if (grow_layers(d, r.layer) < 0)
			return -1;
		d->op_layer[op - d->first] = r.layer;
		if (!s->layers[r.layer].name && !(s->layers[r.layer].name = strdup(d->layer_name)))
			return err_nomem(d->in.e, "trace");
		break;
	case TR_OP:
		if (fields(d, &lane, &op, &a, NULL) < 0 || check_max(d, "a part flag", a, 1) < 0 || lane_op(d, lane, op) < 0)
			return -1;
		cl = cell_of(d, op, lane);
		if (d->op_layer[op - d->first] < 0)
			return bad(d, "expected a name record (N) for op %" PRId64 " before its first O, found none", op);
		if (cl->start >= 0 || d->lane_op[lane] >= 0)
			return bad(d, "expected lane %" PRId64 " to begin op %" PRId64 " once, after ending the last, found %s",
				   lane, op, cl->start >= 0 ? "it begun again" : "the last not ended");
		if (op > d->first && cell_of(d, op - 1, lane)->end < 0)
			return bad(d, "expected lane %" PRId64 " to end op %" PRId64 " before beginning op %" PRId64
				   ", found it did not", lane, op - 1, op);
		cl->start = cl->cursor = d->cycle;
		d->lane_op[lane] = op;
		r.part = a;
		break;
	case TR_OPEND:
		if (field(d, &lane) < 0 || running(d, lane, &op) < 0)
			return -1;
		cl = cell_of(d, op, lane);
		if (cl->cursor != d->cycle)
			return bad(d, "expected lane %" PRId64 "'s records of op %" PRId64 " to account for its cycles %" PRId64
				   " .. %" PRId64 ", found them ending at cycle %" PRId64, lane, op, cl->start, d->cycle,
				   cl->cursor);
		cl->end = d->cycle;
		d->lane_op[lane] = -1;
		if (d->cycle > d->pass_end)
			d->pass_end = d->cycle;
		break;
	case TR_LOAD:
		if (fields(d, &lane, &op, &a, &b, &w, NULL) < 0 || check_max(d, "an operand", a, 1) < 0 ||
		    check_max(d, "a where flag", b, 1) < 0 || lane_op(d, lane, op) < 0 || done_at(d, w, &r.end) < 0 ||
		    dfields(d, v = d->last[lane].l[a], D_N, 1) < 0)
			return -1;
		r.operand = (int)a;
		r.onchip = b;
		r.addr = v[0];
		r.bytes = (int64_t)v[1];
		r.rep = (int64_t)v[2];
		if (a == OPND_A)
			r.m0 = (int64_t)v[3], r.k0 = (int64_t)v[4], r.m = (int64_t)v[5], r.k = (int64_t)v[6];
		else
			r.k0 = (int64_t)v[3], r.n0 = (int64_t)v[4], r.k = (int64_t)v[5], r.n = (int64_t)v[6];
		cl = cell_of(d, op, lane);
		r.idx = cl->loads++;
		s->loads++;
		if (!r.onchip && sum_into(d, &d->op_rd[op - d->first], r.bytes, "an op's loaded bytes") < 0)
			return -1;
		break;
	case TR_FOLD:
		if (fields(d, &lane, &r.t, &a, &b, NULL) < 0 || check_lane(d, lane) < 0 ||
		    dfields(d, v = d->last[lane].f, D_N, 0) < 0)
			return -1;
		r.rep = (int64_t)v[0], r.m0 = (int64_t)v[1], r.k0 = (int64_t)v[2], r.n0 = (int64_t)v[3];
		r.m = (int64_t)v[4], r.k = (int64_t)v[5], r.n = (int64_t)v[6];
		if (r.t < 1 || r.t > RUN_MAX_CYCLES || a > RUN_MAX_CYCLES - r.t || b > RUN_MAX_CYCLES - r.t - a)
			return bad(d, "expected a fold of 1 to 2^62 compute cycles, with its stream and drain at most 2^62 in "
				   "all, found %" PRId64 ", %" PRId64 " and %" PRId64, r.t, a, b);
		if (piece(d, lane, r.t, CAT_COMPUTE, &op) < 0 || done_at(d, r.t + a, &r.end) < 0 ||
		    (b && done_at(d, r.t + a + b - 1, &r.out) < 0))
			return -1;
		r.idx = cell_of(d, op, lane)->folds++;
		s->folds++;
		break;
	case TR_STORE:
		if (fields(d, &lane, &op, &b, &w, NULL) < 0 || check_max(d, "a where flag", b, 1) < 0 ||
		    lane_op(d, lane, op) < 0 || done_at(d, w, &r.end) < 0 || dfields(d, v = d->last[lane].s, D_N, 1) < 0)
			return -1;
		r.onchip = b;
		r.addr = v[0];
		r.bytes = (int64_t)v[1];
		r.rep = (int64_t)v[2], r.m0 = (int64_t)v[3], r.n0 = (int64_t)v[4], r.m = (int64_t)v[5], r.n = (int64_t)v[6];
		cl = cell_of(d, op, lane);
		r.idx = cl->stores++;
		s->stores++;
		if (!r.onchip && sum_into(d, &d->op_wr[op - d->first], r.bytes, "an op's stored bytes") < 0)
			return -1;
		if (r.end > d->pass_end)
			d->pass_end = r.end;
		break;
	case TR_CHARGE:
		if (fields(d, &lane, &a, &b, &c, NULL) < 0 || check_max(d, "a category", b, CAT_N - 1) < 0 ||
		    check_max(d, "a cause", c, TC_N - 1) < 0)
			return -1;
		if (a < 1 || b == CAT_COMPUTE || b == CAT_VECTOR)
			return bad(d, "expected a charge of 1 or more cycles to a stall category, found %" PRId64 " to %s", a,
				   cat_names[b]);
		if (piece(d, lane, a, (int)b, &op) < 0)
			return -1;
		r.end = d->cycle + a;
		r.cat = (int)b;
		r.cause = (int)c;
		s->charges++;
		break;
	case TR_VEC:
		if (fields(d, &lane, &r.idx, &r.chunks, &a, NULL) < 0)
			return -1;
		if (r.idx >= r.chunks || a < 1)
			return bad(d, "expected chunk i of n (i < n) for 1 or more cycles, found chunk %" PRId64 " of %" PRId64
				   " for %" PRId64, r.idx, r.chunks, a);
		if (piece(d, lane, a, CAT_VECTOR, &op) < 0)
			return -1;
		r.end = d->cycle + a;
		s->vector_chunks++;
		break;
	case TR_END:
		if (field(d, &r.records) < 0 || pass_end(d) < 0)
			return -1;
		if (r.records != s->records)
			return bad(d, "expected the end record to count the %" PRId64 " records before it, found %" PRId64,
				   s->records, r.records);
		if (d->cycle != d->timeline)
			return bad(d, "expected the trace to end where its last pass ended, cycle %" PRId64 ", found cycle %"
				   PRId64, d->timeline, d->cycle);
		*done = true;
		break;
	default:
		return bad(d, "expected a record kind (one of P N O E L F S W V Z), found byte 0x%02x", kind);
	}
	r.lane = (int)lane;
	r.op = op;
	if (kind != TR_END)
		s->records++;
	if (d->fn)
		d->fn(d->ctx, &r);
	return 0;
}

int trace_read(const char *path, struct trace_summary *s, void (*fn)(void *ctx, const struct trace_rec *r),
	       void *ctx, struct err *e)
{
	struct reader *d = calloc(1, sizeof *d);
	bool done = false;
	int rc = -1;
	memset(s, 0, sizeof *s);
	if (!d)
		return err_nomem(e, "trace");
	d->s = s;
	d->fn = fn;
	d->ctx = ctx;
	if (in_open(&d->in, path, e) < 0) {
		free(d);
		return -1;
	}
	if (read_head(d) < 0)
		goto out;
	for (;;) {
		d->at = in_pos(&d->in);
		int kind = in_byte(&d->in);
		if (kind < 0) {
			if (!d->in.failed)
				bad(d, "expected more records, found the end of the trace (it is truncated: no end record)");
			goto out;
		}
		if (done) {
			bad(d, "expected the end of the trace after its end record, found more bytes");
			goto out;
		}
		if (read_record(d, kind, &done) < 0)
			goto out;
		if (done) {
			/* Nothing may follow the end record: read on to the end (of the gzip stream too). */
			d->at = in_pos(&d->in);
			int more = in_byte(&d->in);
			if (more >= 0)
				bad(d, "expected the end of the trace after its end record, found more bytes");
			if (more >= 0 || d->in.failed)
				goto out;
			rc = 0;
			goto out;
		}
	}
out:
	in_close(&d->in);
	free(d->cells);
	free(d->op_layer);
	free(d->op_rd);
	free(d->op_wr);
	free(d->lane_op);
	free(d->last);
	free(d);
	if (rc < 0)
		trace_summary_release(s);
	return rc;
}

void trace_summary_release(struct trace_summary *s)
{
	for (size_t i = 0; i < s->nlayers; i++)
		free(s->layers[i].name);
	free(s->layers);
	free(s->head);
	memset(s, 0, sizeof *s);
}

void trace_summary_print(FILE *f, const char *path, const struct trace_summary *s)
{
	char q[4200];
	double c = (double)s->cycles;
	fprintf(f, "%s: tpusim event trace, format version %d\n%s\n", err_quote(q, sizeof q, path, 4096), s->version,
		s->head);
	fprintf(f, "%lld records: %lld passes, %lld ops, %lld loads, %lld folds, %lld stores, %lld stall charges, %lld "
		"vector chunks\n", (long long)s->records, (long long)s->passes, (long long)s->ops, (long long)s->loads,
		(long long)s->folds, (long long)s->stores, (long long)s->charges, (long long)s->vector_chunks);
	fprintf(f, "%lld cycles", (long long)s->cycles);
	if (s->clock_ghz > 0)
		fprintf(f, " = %.4g ms at %.3g GHz", c / (s->clock_ghz * 1e6), s->clock_ghz);
	fprintf(f, "; HBM bytes read %lld, written %lld\n", (long long)s->hbm_read_bytes, (long long)s->hbm_write_bytes);
	fprintf(f, "cycles by category:");
	for (int k = 0; k < CAT_N; k++)
		fprintf(f, " %s %lld (%.1f%%)%s", cat_names[k], (long long)s->cat[k], c > 0 ? 100.0 * (double)s->cat[k] / c : 0.0,
			k + 1 < CAT_N ? "," : "\n");
	fprintf(f, "\n%-24s %14s %14s %14s\n", "layer", "cycles", "HBM rd B", "HBM wr B");
	for (size_t i = 0; i < s->nlayers; i++) {
		const struct trace_layer *l = &s->layers[i];
		if (!l->name)
			continue;
		fprintf(f, "%-24s %14lld %14lld %14lld\n", err_quote(q, sizeof q, l->name, 200), (long long)l->cycles,
			(long long)l->hbm_read_bytes, (long long)l->hbm_write_bytes);
	}
}

/* "A[r0:r1,c0:c1]" into buf. */
static const char *tile_text(char *buf, size_t size, char name, int64_t r0, int64_t rn, int64_t c0, int64_t cn)
{
	snprintf(buf, size, "%c[%lld:%lld,%lld:%lld]", name, (long long)r0, (long long)(r0 + rn), (long long)c0,
		 (long long)(c0 + cn));
	return buf;
}

void trace_rec_print(FILE *f, const struct trace_rec *r)
{
	char a[100], b[100], c[100], q[9000];
	fprintf(f, "%lld %c", (long long)r->cycle, r->kind);
	switch (r->kind) {
	case TR_PASS:
		fprintf(f, " ops %lld..%lld\n", (long long)r->first, (long long)(r->first + r->ops - 1));
		break;
	case TR_NAME:
		fprintf(f, " op %lld %s %s layer %lld %s\n", (long long)r->op, r->opkind ? "vector" : "gemm",
			err_quote(q, 4200, r->name, 4096), (long long)r->layer, err_quote(q + 4200, 4200, r->layer_name, 4096));
		break;
	case TR_OP:
		fprintf(f, " lane %d op %lld%s\n", r->lane, (long long)r->op, r->part ? "" : " (sits it out)");
		break;
	case TR_OPEND:
		fprintf(f, " lane %d op %lld\n", r->lane, (long long)r->op);
		break;
	case TR_LOAD:
		fprintf(f, " lane %d op %lld #%lld %s rep %lld %s 0x%llx %lld B arrives %lld\n", r->lane, (long long)r->op,
			(long long)r->idx,
			r->operand == OPND_A ? tile_text(a, sizeof a, 'A', r->m0, r->m, r->k0, r->k)
					     : tile_text(a, sizeof a, 'B', r->k0, r->k, r->n0, r->n),
			(long long)r->rep, r->onchip ? "on-chip" : "HBM", (unsigned long long)r->addr, (long long)r->bytes,
			(long long)r->end);
		break;
	case TR_FOLD:
		fprintf(f, " lane %d op %lld #%lld rep %lld %s+=%s*%s compute %lld stream ends %lld", r->lane, (long long)r->op,
			(long long)r->idx, (long long)r->rep, tile_text(a, sizeof a, 'C', r->m0, r->m, r->n0, r->n),
			tile_text(b, sizeof b, 'A', r->m0, r->m, r->k0, r->k),
			tile_text(c, sizeof c, 'B', r->k0, r->k, r->n0, r->n), (long long)r->t, (long long)r->end);
		if (r->out >= 0)
			fprintf(f, " block out %lld", (long long)r->out);
		fputc('\n', f);
		break;
	case TR_STORE:
		fprintf(f, " lane %d op %lld #%lld rep %lld %s %s 0x%llx %lld B done %lld\n", r->lane, (long long)r->op,
			(long long)r->idx, (long long)r->rep, tile_text(a, sizeof a, 'C', r->m0, r->m, r->n0, r->n),
			r->onchip ? "on-chip" : "HBM", (unsigned long long)r->addr, (long long)r->bytes, (long long)r->end);
		break;
	case TR_CHARGE:
		fprintf(f, " lane %d op %lld until %lld %s (%s)\n", r->lane, (long long)r->op, (long long)r->end,
			cat_names[r->cat], trace_cause_names[r->cause]);
		break;
	case TR_VEC:
		fprintf(f, " lane %d op %lld chunk %lld/%lld until %lld\n", r->lane, (long long)r->op, (long long)r->idx + 1,
			(long long)r->chunks, (long long)r->end);
		break;
	case TR_END:
		fprintf(f, " %lld records\n", (long long)r->records);
		break;
	}
}
