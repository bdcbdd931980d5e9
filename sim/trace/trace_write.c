/*
 * trace_write.c - writing event traces and DRAM traces (see trace.h), through
 * the trace module's byte streams (trace_gz.h).
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "limit.h"
#include "trace_fmt.h"
#include "trace_gz.h"
#include "xmath.h"

const char *const trace_cause_names[] = { "shift", "drain", "wait_a", "wait_b", "wait_acc", "port", "dep", "memory",
					  "stores", "fixed", NULL };
const char *const trace_dram_format_names[] = { "dramsim3", "ramulator2", NULL };

/* ---- the event trace ---- */

struct trace_writer {
	tgz_out *o;
	int64_t last;                   /* the previous record's cycle */
	int64_t records;
	int lanes;
	struct trace_last *lane;        /* lanes */
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
	char head[TRACE_MAX_HEAD], cname[3 * CFG_STR_MAX + 1], wname[3 * CFG_STR_MAX + 1];
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
		     TRACE_MAGIC " %d config=%s workload=%s batch=%lld model=cycle dataflow=%s ideal_memory=%d rows=%lld cols=%lld "
		     "cores=%lld arrays_per_core=%lld dtype=%s clock_ghz=%.15g hbm_gbps=%.15g hbm_burst_bytes=%lld "
		     "scalesim_compat=%d prefetch_across_ops=%d\n",
		     TRACE_VERSION, cname, wname, (long long)h->batch, array_dataflow_names[h->dataflow], h->ideal_memory,
		     (long long)a->array.rows, (long long)a->array.cols, (long long)a->chip.cores,
		     (long long)a->chip.arrays_per_core, array_dtype_names[a->array.dtype], a->clock_ghz, a->hbm.gbps,
		     (long long)a->hbm.burst_bytes, a->array.scalesim_compat, a->chip.prefetch_across_ops);
	SIM_ASSERT(n > 0 && n < (int)sizeof head);
	if (!(w->o = tgz_out_open(path, "--trace", e))) {
		free(w->lane);
		free(w);
		return NULL;
	}
	tgz_out_write(w->o, head, (size_t)n);
	return w;
}

void trace_writer_put(trace_writer *w, const struct trace_rec *r)
{
	/* The longest record: a kind, 14 fields of at most 9 bytes, and an N record's names on their own. */
	unsigned char *p = tgz_out_room(w->o, 1 + 14 * TRACE_VARINT_MAX), *q = p;
	struct trace_last *ls = &w->lane[r->lane];
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
		ln = ln > TRACE_MAX_NAME ? TRACE_MAX_NAME : ln;
		ll = ll > TRACE_MAX_NAME ? TRACE_MAX_NAME : ll;
		q += uleb(q, (uint64_t)r->op);
		q += uleb(q, (uint64_t)r->layer);
		q += uleb(q, (uint64_t)r->opkind);
		q += uleb(q, ln);
		tgz_out_commit(w->o, (size_t)(q - p));
		tgz_out_write(w->o, r->name, ln);
		q = p = tgz_out_room(w->o, TRACE_VARINT_MAX);
		q += uleb(q, ll);
		tgz_out_commit(w->o, (size_t)(q - p));
		tgz_out_write(w->o, r->layer_name, ll);
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
	tgz_out_commit(w->o, (size_t)(q - p));
}

int trace_writer_close(trace_writer *w, int64_t end, struct err *e)
{
	unsigned char *p = tgz_out_room(w->o, 1 + 2 * TRACE_VARINT_MAX), *q = p;
	int rc;
	SIM_ASSERT(end >= w->last);
	*q++ = TR_END;
	q += uleb(q, (uint64_t)(end - w->last));
	q += uleb(q, (uint64_t)w->records);
	tgz_out_commit(w->o, (size_t)(q - p));
	rc = tgz_out_close(w->o, "--trace", e);
	free(w->lane);
	free(w);
	return rc;
}

void trace_writer_abandon(trace_writer *w)
{
	if (!w)
		return;
	tgz_out_abandon(w->o);
	free(w->lane);
	free(w);
}

/* ---- the DRAM trace ---- */

struct trace_dram {
	tgz_out *o;
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
	if (!(d->o = tgz_out_open(path, "--dram-trace", e))) {
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
		char *p = (char *)tgz_out_room(d->o, 64), *q = p;
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
		tgz_out_commit(d->o, (size_t)(q - p));
	}
}

int trace_dram_close(trace_dram *d, struct err *e)
{
	int rc = tgz_out_close(d->o, "--dram-trace", e);
	free(d);
	return rc;
}

void trace_dram_abandon(trace_dram *d)
{
	if (!d)
		return;
	tgz_out_abandon(d->o);
	free(d);
}

