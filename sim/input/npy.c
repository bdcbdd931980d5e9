/*
 * npy.c - .npy files (see npy.h).
 */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"
#include "limit.h"

struct dtype_row {
	const char *descr;
	int size;
};

/* No operand of a layer has more rows, columns or values than a layer's dimension may be. */
#define NPY_MAX ((int64_t)WORKLOAD_DIM_MAX)

static const struct dtype_row dtypes[] = {
	{ "<i1", 1 }, { "|i1", 1 }, { "<i4", 4 }, { "<f2", 2 }, { "<f4", 4 }, { "<f8", 8 }, { NULL, 0 }
};

static int bad(struct err *e, struct pos at, const char *key, const char *path, const char *what)
{
	char q[LIMIT_QUOTE_BUF];
	return err_at(e, at, key, "expected a .npy file of int8, int32, float16, float32 or float64 values in C order "
		      "with shape (rows, cols), found %s in \"%s\"", what, err_quote(q, sizeof q, path, LIMIT_PATH));
}

/* The n bytes of header text at v as a message shows them: one line, at most 100 bytes, \xNN escapes. */
static const char *header_text(char *buf, size_t size, const char *v, size_t n)
{
	char raw[104];
	if (n > 101)
		n = 101;        /* err_quote shows 100 and "..." */
	memcpy(raw, v, n);
	raw[n] = 0;
	return err_quote(buf, size, raw, 100);
}

/* ---- the header dict: the Python literal numpy writes (format.py, _write_array_header) ---- */

struct lex {
	const char *p, *end;
	int major;                      /* the format's version: 1 and 2 allow Python 2's long suffix */
};

/* Spaces, tabs and line ends: what may stand between tokens inside a Python dict display. */
static void ws(struct lex *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n'))
		x->p++;
}

static bool eat(struct lex *x, char c)
{
	ws(x);
	if (x->p < x->end && *x->p == c) {
		x->p++;
		return true;
	}
	return false;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

/* A string literal without prefix or escapes ('...' or "..."), its text into buf. */
static bool string(struct lex *x, char *buf, size_t size)
{
	size_t n = 0;
	ws(x);
	if (x->p >= x->end || (*x->p != '\'' && *x->p != '"'))
		return false;
	char q = *x->p++;
	for (; x->p < x->end && *x->p != q; x->p++) {
		if (*x->p == '\\' || *x->p == '\n' || n + 1 >= size)
			return false;
		buf[n++] = *x->p;
	}
	if (x->p >= x->end)
		return false;
	x->p++;
	buf[n] = 0;
	return true;
}

/* A word (True, False) not followed by more of a name. */
static bool word(struct lex *x, const char *w)
{
	size_t n = strlen(w);
	ws(x);
	if ((size_t)(x->end - x->p) < n || memcmp(x->p, w, n) != 0 || (x->p + n < x->end && ident_char(x->p[n])))
		return false;
	x->p += n;
	return true;
}

/* A dimension: a decimal integer in [1, NPY_MAX] as Python writes it (no leading zero), in 1.0 and 2.0 maybe "L" after it. */
static bool dim(struct lex *x, int64_t *v)
{
	int64_t r = 0;
	ws(x);
	if (x->p >= x->end || *x->p < '1' || *x->p > '9')
		return false;
	for (; x->p < x->end && *x->p >= '0' && *x->p <= '9'; x->p++) {
		r = r * 10 + (*x->p - '0');
		if (r > NPY_MAX)
			return false;
	}
	if (x->p < x->end && ident_char(*x->p)) {
		/* numpy drops a Python 2 long's L from headers of versions 1.0 and 2.0 (format.py, _filter_header) */
		if (*x->p != 'L' || x->major > 2 || (x->p + 1 < x->end && ident_char(x->p[1])))
			return false;
		x->p++;
	}
	*v = r;
	return true;
}

/* (rows, cols) or (rows, cols,). */
static bool shape(struct lex *x, int64_t *r, int64_t *c)
{
	return eat(x, '(') && dim(x, r) && eat(x, ',') && dim(x, c) && (eat(x, ','), eat(x, ')'));
}

/* The text of a value that does not parse, from v to its end (a ')' included) or the next ',' or '}'. */
static const char *value_text(char *buf, size_t size, const struct lex *x, const char *v, bool paren)
{
	const char *p = v;
	while (p < x->end && *p == ' ')
		p++;
	const char *q = p;
	while (q < x->end && (paren ? *q != ')' : *q != ',' && *q != '}'))
		q++;
	if (paren && q < x->end)
		q++;
	return header_text(buf, size, p, (size_t)(q - p));
}

static int said(char *what, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What was found, into what; returns -1. */
static int said(char *what, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, size, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * The header dict at h[0 .. n) into out (rows, cols, descr and size), as
 * numpy's safe_eval reads it: a key given twice takes its last value.
 * Returns 0, or -1 with what said into what.
 */
static int parse_dict(const char *h, size_t n, int major, struct npy_head *out, char *what, size_t wsize)
{
	struct lex x = { h, h + n, major };
	bool seen[3] = { false, false, false };
	char k[32], ht[500];
	const char *v;

	while (x.p < x.end && (*x.p == ' ' || *x.p == '\t'))
		x.p++;
	if (!eat(&x, '{'))
		return said(what, wsize, "a header that is not a Python dict, %s", value_text(ht, sizeof ht, &x, h, false));
	while (!eat(&x, '}')) {
		v = x.p;
		if (!string(&x, k, sizeof k) || !eat(&x, ':'))
			return said(what, wsize, "a header dict whose key is not a string and ':', %s",
					value_text(ht, sizeof ht, &x, v, false));
		v = x.p;
		if (!strcmp(k, "descr")) {
			char d[8];
			const struct dtype_row *dt = NULL;
			if (string(&x, d, sizeof d))
				for (int i = 0; dtypes[i].descr; i++)
					if (!strcmp(d, dtypes[i].descr))
						dt = &dtypes[i];
			if (!dt)
				return said(what, wsize, "dtype %s", value_text(ht, sizeof ht, &x, v, false));
			memcpy(out->descr, dt->descr, 4);
			out->size = dt->size;
			seen[0] = true;
		} else if (!strcmp(k, "fortran_order")) {
			if (word(&x, "True"))
				return said(what, wsize, "Fortran order");
			if (!word(&x, "False"))
				return said(what, wsize, "fortran_order %s (not True or False)",
						value_text(ht, sizeof ht, &x, v, false));
			seen[1] = true;
		} else if (!strcmp(k, "shape")) {
			if (!shape(&x, &out->rows, &out->cols) || out->rows > NPY_MAX / out->cols)
				return said(what, wsize, "shape %s", value_text(ht, sizeof ht, &x, v, true));
			seen[2] = true;
		} else {
			return said(what, wsize, "the header key '%s' besides 'descr', 'fortran_order' and 'shape'",
					err_quote(ht, sizeof ht, k, 30));
		}
		if (!eat(&x, ',') && (ws(&x), x.p >= x.end || *x.p != '}'))
			return said(what, wsize, "a header dict without ',' or '}' after '%s', %s", k,
					value_text(ht, sizeof ht, &x, x.p, false));
	}
	ws(&x);
	if (x.p < x.end)
		return said(what, wsize, "more than a dict in the header, %s", header_text(ht, sizeof ht, x.p,
											(size_t)(x.end - x.p)));
	for (int i = 0; i < 3; i++)
		if (!seen[i])
			return said(what, wsize, "a header without '%s'",
					(const char *[]){ "descr", "fortran_order", "shape" }[i]);
	return 0;
}

/* Opens path without blocking (a FIFO must not hang the open) and checks that it is a regular file. Returns the fd or -1. */
static int open_regular(const char *path, struct pos at, const char *key, off_t *size, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err_at(e, at, key, "expected a readable .npy file, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
			      strerror(errno));
	int rc = fstat(fd, &st);
	if (rc != 0 || !S_ISREG(st.st_mode)) {
		const char *why = rc != 0 ? strerror(errno) : S_ISDIR(st.st_mode) ? "a directory" :
				  S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file";
		close(fd);
		return err_at(e, at, key, "expected a .npy file, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
			      why);
	}
	*size = st.st_size;
	return fd;
}

/* Reads exactly n bytes at the file's position. */
static bool read_all(int fd, void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* The header of the file open as fd (size bytes) into h. Returns 0, or -1 with e set. */
static int read_head(int fd, off_t size, const char *path, struct pos at, const char *key, struct npy_head *h,
		     struct err *e)
{
	unsigned char pre[12];
	char what[700], *text;
	int64_t hlen, need;
	int lenb;

	memset(h, 0, sizeof *h);
	if (size < 10 || !read_all(fd, pre, 10) || memcmp(pre, "\x93NUMPY", 6) != 0)
		return bad(e, at, key, path, "no .npy magic");
	if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0) {
		snprintf(what, sizeof what, "format version %d.%d (numpy writes 1.0, 2.0 and 3.0)", pre[6], pre[7]);
		return bad(e, at, key, path, what);
	}
	lenb = pre[6] == 1 ? 2 : 4;
	if (lenb == 4 && (size < 12 || !read_all(fd, pre + 10, 2)))
		return bad(e, at, key, path, "a truncated header");
	hlen = pre[8] | pre[9] << 8;
	if (lenb == 4)
		hlen |= (int64_t)pre[10] << 16 | (int64_t)pre[11] << 24;
	if (hlen > NPY_HEADER_MAX) {
		snprintf(what, sizeof what, "a header of %lld bytes (numpy reads at most " LIMIT_STR(NPY_HEADER_MAX) ")",
			 (long long)hlen);
		return bad(e, at, key, path, what);
	}
	h->data = 8 + lenb + hlen;
	if (size < h->data)
		return bad(e, at, key, path, "a truncated header");
	if (!(text = malloc((size_t)hlen + 1)))
		return err_nomem(e, path);
	if (!read_all(fd, text, (size_t)hlen)) {
		free(text);
		return bad(e, at, key, path, "a truncated header");
	}
	int rc = parse_dict(text, (size_t)hlen, pre[6], h, what, sizeof what);
	free(text);
	if (rc < 0)
		return bad(e, at, key, path, what);
	/* nothing is allocated for the values before the file is known to hold them */
	need = h->rows * h->cols * h->size;
	if (size - h->data != need) {
		snprintf(what, sizeof what, "%lld bytes of values where the header's %lld x %lld values of %s are %lld bytes",
			 (long long)(size - h->data), (long long)h->rows, (long long)h->cols, h->descr, (long long)need);
		return bad(e, at, key, path, what);
	}
	return 0;
}

int npy_head(const char *path, struct pos at, const char *key, struct npy_head *h, struct err *e)
{
	off_t size;
	int fd = open_regular(path, at, key, &size, e);
	if (fd < 0)
		return -1;
	int rc = read_head(fd, size, path, at, key, h, e);
	close(fd);
	return rc;
}

static double half_to_double(uint16_t h)
{
	int ex = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v = ex == 0 ? ldexp(man, -24) : ex == 31 ? (man ? NAN : INFINITY) : ldexp(man + 1024, ex - 25);
	return h & 0x8000 ? -v : v;
}

/* The little-endian value of type descr at p. */
static double value(const char *descr, int size, const unsigned char *p)
{
	uint64_t u = 0;
	for (int b = size - 1; b >= 0; b--)
		u = u << 8 | p[b];
	switch (descr[1] == 'i' ? size : 10 + size) {
	case 1: return (int8_t)u;
	case 4: return (int32_t)(uint32_t)u;
	case 12: return half_to_double((uint16_t)u);
	case 14: {
		uint32_t w = (uint32_t)u;
		float x;
		memcpy(&x, &w, 4);
		return x;
	}
	default: {
		double x;
		memcpy(&x, &u, 8);
		return x;
	}
	}
}

int npy_read(const char *path, struct pos at, const char *key, const struct npy_head *h, double *data, struct err *e)
{
	struct npy_head now;
	unsigned char buf[1 << 16];
	char q[LIMIT_QUOTE_BUF];
	off_t size;
	int fd = open_regular(path, at, key, &size, e);
	int64_t n = h->rows * h->cols, per = (int64_t)sizeof buf / h->size;

	if (fd < 0)
		return -1;
	if (read_head(fd, size, path, at, key, &now, e) < 0) {
		close(fd);
		return -1;
	}
	if (now.rows != h->rows || now.cols != h->cols || now.size != h->size || strcmp(now.descr, h->descr) != 0 ||
	    now.data != h->data) {
		close(fd);
		return err_at(e, at, key, "expected the .npy file read before the run, found \"%s\" changed since (%lld x %lld "
			      "values of %s, now %lld x %lld of %s)", err_quote(q, sizeof q, path, LIMIT_PATH),
			      (long long)h->rows, (long long)h->cols, h->descr, (long long)now.rows, (long long)now.cols,
			      now.descr);
	}
	for (int64_t i = 0; i < n; i += per) {
		int64_t k = n - i < per ? n - i : per;
		errno = 0;
		if (!read_all(fd, buf, (size_t)(k * h->size))) {
			close(fd);
			return err_at(e, at, key, "expected %lld values of %s, found \"%s\" shorter (%s)", (long long)n, h->descr,
				      err_quote(q, sizeof q, path, LIMIT_PATH), errno ? strerror(errno) : "changed since it was checked");
		}
		for (int64_t j = 0; j < k; j++)
			data[i + j] = value(h->descr, h->size, buf + j * h->size);
	}
	close(fd);
	return 0;
}

int npy_write(const char *path, const double *data, int64_t rows, int64_t cols, bool int32, struct err *e)
{
	char hdr[256], tmp[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	int len, fd;
	FILE *f;
	bool ok;

	len = snprintf(hdr, sizeof hdr, "{'descr': '<%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
		       int32 ? "i4" : "f4", (long long)rows, (long long)cols);
	/* pad with spaces so that the data starts at a multiple of 64 bytes, and end with a newline */
	while ((10 + len + 1) % 64)
		hdr[len++] = ' ';
	hdr[len++] = '\n';
	if (fsx_tmp_name(tmp, sizeof tmp, path) != 0)
		return err_input(e, "--save-outputs: expected a shorter path, found \"%s\"", err_quote(q, sizeof q, path, LIMIT_PATH));
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 || !(f = fdopen(fd, "wb"))) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return err_input(e, "--save-outputs: expected a writable file, found \"%s\" (%s)",
				 err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
	}
	ok = fwrite("\x93NUMPY\x01\x00", 1, 8, f) == 8 && fputc(len & 0xff, f) != EOF && fputc(len >> 8, f) != EOF &&
	     fwrite(hdr, 1, (size_t)len, f) == (size_t)len;
	for (int64_t i = 0; ok && i < rows * cols; i++) {
		unsigned char b[4];
		uint32_t u;
		if (int32) {
			u = (uint32_t)(int32_t)data[i];
		} else {
			float x = (float)data[i];
			memcpy(&u, &x, 4);
		}
		for (int k = 0; k < 4; k++)
			b[k] = (unsigned char)(u >> (8 * k));
		ok = fwrite(b, 1, 4, f) == 4;
	}
	ok = (fflush(f) == 0) & ok;
	ok = (fclose(f) == 0) & ok;
	if (!ok) {
		int er = errno;
		unlink(tmp);
		return fsx_write_error(e, "--save-outputs", path, er);
	}
	if (fsx_commit(tmp, path) != 0)
		return fsx_write_error(e, "--save-outputs", path, errno);
	return 0;
}
