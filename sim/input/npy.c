/*
 * npy.c - .npy files (see npy.h).
 */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

static const struct dtype_row dtypes[] = {
	{ "<i1", 1 }, { "|i1", 1 }, { "<i4", 4 }, { "<f2", 2 }, { "<f4", 4 }, { "<f8", 8 }, { NULL, 0 }
};

static int bad(struct err *e, struct pos at, const char *key, const char *path, const char *what)
{
	char q[LIMIT_QUOTE_BUF];
	return err_at(e, at, key, "expected a .npy file of int8, int32, float16, float32 or float64 values in C order "
		      "with shape (rows, cols), found %s in \"%s\"", what, err_quote(q, sizeof q, path, LIMIT_PATH));
}

/* The text after 'key': in the header dict, or NULL. */
static const char *dict_value(const char *h, const char *key)
{
	char k[32];
	snprintf(k, sizeof k, "'%s'", key);
	const char *p = strstr(h, k);
	if (!p)
		return NULL;
	p += strlen(k);
	while (*p == ' ')
		p++;
	if (*p != ':')
		return NULL;
	for (p++; *p == ' '; p++)
		;
	return p;
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

static double half_to_double(uint16_t h)
{
	int ex = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v = ex == 0 ? ldexp(man, -24) : ex == 31 ? (man ? NAN : INFINITY) : ldexp(man + 1024, ex - 25);
	return h & 0x8000 ? -v : v;
}

int npy_read(const char *path, struct pos at, const char *key, double **data, int64_t *rows, int64_t *cols,
	     struct err *e)
{
	FILE *f = fopen(path, "rb");
	unsigned char pre[12];
	char *h = NULL, what[600], q[LIMIT_QUOTE_BUF], ht[500];
	const struct dtype_row *dt = NULL;
	const char *v;
	int64_t hlen, n;
	unsigned char *raw = NULL;
	int rc = -1;

	*data = NULL;
	if (!f)
		return err_at(e, at, key, "expected a readable .npy file, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
			      strerror(errno));
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
		bad(e, at, key, path, "no .npy magic");
		goto out;
	}
	if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0) {
		snprintf(what, sizeof what, "format version %d.%d", pre[6], pre[7]);
		bad(e, at, key, path, what);
		goto out;
	}
	hlen = pre[8] | pre[9] << 8;
	if (pre[6] == 2) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			bad(e, at, key, path, "a truncated header");
			goto out;
		}
		hlen |= (int64_t)pre[10] << 16 | (int64_t)pre[11] << 24;
	}
	if (hlen > NPY_HEADER_MAX || !(h = calloc(1, (size_t)hlen + 1)) || fread(h, 1, (size_t)hlen, f) != (size_t)hlen) {
		bad(e, at, key, path, h || hlen > NPY_HEADER_MAX ? "a truncated or oversized header" : "a header too large");
		goto out;
	}
	if (!(v = dict_value(h, "descr")) || *v != '\'') {
		bad(e, at, key, path, "a header without descr");
		goto out;
	}
	for (int i = 0; dtypes[i].descr; i++)
		if (!strncmp(v + 1, dtypes[i].descr, 3) && v[4] == '\'')
			dt = &dtypes[i];
	if (!dt) {
		snprintf(what, sizeof what, "dtype %s", header_text(ht, sizeof ht, v, strcspn(v, ",}")));
		bad(e, at, key, path, what);
		goto out;
	}
	if (!(v = dict_value(h, "fortran_order")) || strncmp(v, "False", 5) != 0) {
		bad(e, at, key, path, "Fortran order");
		goto out;
	}
	long long r, c;
	int used = 0;
	if (!(v = dict_value(h, "shape")) || sscanf(v, "(%lld , %lld )%n", &r, &c, &used) != 2 || !used || r < 1 || c < 1 ||
	    r > (1LL << 40) / c) {
		snprintf(what, sizeof what, "shape %s", v ? header_text(ht, sizeof ht, v, strcspn(v, ")") + (v[strcspn(v, ")")] != 0))
							     : "none");
		bad(e, at, key, path, what);
		goto out;
	}
	n = (int64_t)(r * c);
	if (!(raw = malloc((size_t)(n * dt->size))) || !(*data = malloc((size_t)n * sizeof **data))) {
		err_nomem(e, path);
		goto out;
	}
	if (fread(raw, (size_t)dt->size, (size_t)n, f) != (size_t)n || fgetc(f) != EOF) {
		snprintf(what, sizeof what, "data that is not %lld x %lld values of %s", r, c, dt->descr);
		bad(e, at, key, path, what);
		goto out;
	}
	for (int64_t i = 0; i < n; i++) {
		const unsigned char *p = raw + i * dt->size;
		uint64_t u = 0;
		for (int b = dt->size - 1; b >= 0; b--)
			u = u << 8 | p[b];
		switch (dt->descr[1] == 'i' ? dt->size : 10 + dt->size) {
		case 1: (*data)[i] = (int8_t)u; break;
		case 4: (*data)[i] = (int32_t)(uint32_t)u; break;
		case 12: (*data)[i] = half_to_double((uint16_t)u); break;
		case 14: {
			uint32_t w = (uint32_t)u;
			float x;
			memcpy(&x, &w, 4);
			(*data)[i] = x;
			break;
		}
		default: {
			double x;
			memcpy(&x, &u, 8);
			(*data)[i] = x;
		}
		}
	}
	*rows = r;
	*cols = c;
	rc = 0;
out:
	if (rc < 0) {
		free(*data);
		*data = NULL;
	}
	free(raw);
	free(h);
	fclose(f);
	return rc;
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
