/*
 * vcd.c - value change dump writer (see vcd.h).
 */
#include "vcd.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsx.h"

struct var {
	enum vcd_type type;
	int bits;
	bool set;                   /* a value has been written */
	int64_t i;
	double r;
	char *s;                    /* owned: the last string written, in a buffer of cap bytes */
	size_t cap;
};

struct vcd {
	FILE *f;
	char *path;                 /* owned */
	double clock_ghz;
	int64_t last;               /* the last cycle whose time fits (last_cycle) */
	struct var *v;
	int n, cap;
	int64_t now;                /* the last time written, -1 none */
	int err;                    /* the first errno seen, 0 none */
	bool removable;             /* a plain file of its own, removed if the trace fails (fsx.h) */
};

/*
 * The last cycle whose time fits in int64 picoseconds (at most 100 GHz, so a
 * cycle is at least 10 ps). Times are worked out in long double, whose 64-bit
 * mantissa holds them exactly before rounding.
 */
static int64_t last_cycle(const vcd *v)
{
	return (int64_t)floorl(0x1p63L * (long double)v->clock_ghz / 1000.0L) - 1;
}

vcd *vcd_open(const char *path, double clock_ghz, struct err *e)
{
	vcd *v = calloc(1, sizeof *v);
	if (!v || !(v->path = strdup(path))) {
		free(v);
		err_nomem(e, "vcd");
		return NULL;
	}
	if (!(v->f = fopen(path, "w"))) {
		fsx_open_error(e, "--vcd", path, errno);
		free(v->path);
		free(v);
		return NULL;
	}
	v->removable = fsx_removable(v->f, path);
	v->clock_ghz = clock_ghz;
	v->last = last_cycle(v);
	v->now = -1;
	fprintf(v->f, "$date tpusim $end\n$version tpusim $end\n$timescale 1 ps $end\n");
	return v;
}

/* The identifier code of var i: base 94 over '!' .. '~'. */
static void ident(char *out, int i)
{
	do {
		*out++ = (char)('!' + i % 94);
		i /= 94;
	} while (i);
	*out = 0;
}

/* Text as one VCD token: spaces and control bytes become '_'. */
static void token(FILE *f, const char *s)
{
	while (*s) {
		size_t n = 0;
		while (s[n] && (unsigned char)s[n] > ' ' && s[n] != 127)
			n++;
		fwrite(s, 1, n, f);
		s += n;
		if (*s)
			fputc('_', f), s++;
	}
}

/* A name: a token, "_" when empty. */
static void name_token(FILE *f, const char *s)
{
	if (!*s)
		fputc('_', f);
	token(f, s);
}

void vcd_scope(vcd *v, const char *name)
{
	fprintf(v->f, "$scope module ");
	name_token(v->f, name);
	fprintf(v->f, " $end\n");
}

void vcd_upscope(vcd *v)
{
	fprintf(v->f, "$upscope $end\n");
}

int vcd_var(vcd *v, const char *name, enum vcd_type type, int bits)
{
	char id[8];
	if (v->n == v->cap) {
		int cap = v->cap ? 2 * v->cap : 64;
		struct var *nv = realloc(v->v, (size_t)cap * sizeof *nv);
		if (!nv) {
			v->err = ENOMEM;
			return 0;
		}
		v->v = nv;
		v->cap = cap;
	}
	struct var *x = &v->v[v->n];
	memset(x, 0, sizeof *x);
	x->type = type;
	x->bits = type == VCD_INT ? (bits < 1 ? 1 : bits > 64 ? 64 : bits) : 1;
	ident(id, v->n);
	fprintf(v->f, "$var %s %d %s ", type == VCD_INT ? "wire" : type == VCD_REAL ? "real" : "string", x->bits, id);
	name_token(v->f, name);
	fprintf(v->f, " $end\n");
	return v->n++;
}

void vcd_begin(vcd *v)
{
	char id[8];
	fprintf(v->f, "$enddefinitions $end\n#0\n$dumpvars\n");
	for (int i = 0; i < v->n; i++) {
		ident(id, i);
		if (v->v[i].type == VCD_INT)
			fprintf(v->f, v->v[i].bits == 1 ? "x%s\n" : "bx %s\n", id);
		else if (v->v[i].type == VCD_REAL)
			fprintf(v->f, "r0 %s\n", id);
		else
			fprintf(v->f, "s %s\n", id);
	}
	fprintf(v->f, "$end\n");
	v->now = 0;
}

static void at(vcd *v, int64_t cycle)
{
	if (cycle > v->last) {
		if (!v->err)
			v->err = EOVERFLOW;
		return;
	}
	int64_t t = (int64_t)llroundl((long double)cycle * 1000.0L / (long double)v->clock_ghz);
	if (t > v->now) {
		/* Once a cycle: the errno of the write that failed (EFBIG, ENOSPC) is still the last one. */
		if (!v->err && ferror(v->f))
			v->err = errno ? errno : EIO;
		fprintf(v->f, "#%lld\n", (long long)t);
		v->now = t;
	}
}

void vcd_int(vcd *v, int id, int64_t cycle, int64_t value)
{
	struct var *x = &v->v[id];
	char code[8], bits[65];
	if (x->set && x->i == value)
		return;
	x->set = true;
	x->i = value;
	at(v, cycle);
	ident(code, id);
	if (x->bits == 1) {
		fprintf(v->f, "%d%s\n", value != 0, code);
		return;
	}
	uint64_t u = (uint64_t)value;
	int n = 0;
	for (int b = x->bits - 1; b >= 0; b--)
		if (n || (u >> b & 1) || b == 0)
			bits[n++] = (char)('0' + (u >> b & 1));
	bits[n] = 0;
	fprintf(v->f, "b%s %s\n", bits, code);
}

void vcd_real(vcd *v, int id, int64_t cycle, double value)
{
	struct var *x = &v->v[id];
	char code[8];
	if (x->set && x->r == value)
		return;
	x->set = true;
	x->r = value;
	at(v, cycle);
	ident(code, id);
	fprintf(v->f, "r%.9g %s\n", value, code);
}

void vcd_str(vcd *v, int id, int64_t cycle, const char *value)
{
	struct var *x = &v->v[id];
	char code[8];
	size_t n = strlen(value) + 1;
	if (x->set && x->s && !strcmp(x->s, value))
		return;
	if (n > x->cap) {
		size_t cap = n < 32 ? 32 : 2 * n;
		char *s = realloc(x->s, cap);
		if (!s) {
			v->err = ENOMEM;
			return;
		}
		x->s = s;
		x->cap = cap;
	}
	memcpy(x->s, value, n);
	x->set = true;
	at(v, cycle);
	ident(code, id);
	fputc('s', v->f);
	token(v->f, value);
	fprintf(v->f, " %s\n", code);
}

static void release(vcd *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->v[i].s);
	free(v->v);
	free(v->path);
	free(v);
}

/* The first failure as an error. */
static int failure(const vcd *v, struct err *e)
{
	char q[600];
	err_quote(q, sizeof q, v->path, 400);
	if (v->err == ENOMEM)
		return err_nomem(e, "vcd");
	if (v->err == EOVERFLOW)
		return err_sim(e, "%s: expected a run of at most %lld cycles at %g GHz (times in picoseconds fit "
			       "64 bits), found a longer one", q, (long long)v->last, v->clock_ghz);
	return fsx_write_error(e, "--vcd", v->path, v->err);
}

int vcd_flush(vcd *v, int64_t cycle, struct err *e)
{
	at(v, cycle);
	if (fflush(v->f) != 0 && !v->err)
		v->err = errno ? errno : EIO;
	if (ferror(v->f) && !v->err)
		v->err = EIO;
	return v->err ? failure(v, e) : 0;
}

int vcd_close(vcd *v, int64_t end_cycle, struct err *e)
{
	at(v, end_cycle);
	if (ferror(v->f) && !v->err)
		v->err = EIO;
	if (fclose(v->f) != 0 && !v->err)
		v->err = errno ? errno : EIO;
	int rc = 0;
	if (v->err) {
		rc = failure(v, e);
		if (v->removable)
			remove(v->path);
	}
	release(v);
	return rc;
}

void vcd_abandon(vcd *v)
{
	if (!v)
		return;
	fclose(v->f);
	if (v->removable)
		remove(v->path);
	release(v);
}
