/*
 * trace_read.c - reading an event trace back (see trace.h): every record
 * checked against what came before, the totals recomputed; and printing
 * records and summaries for `tpusim trace`.
 */
#include "trace.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"
#include "stats.h"
#include "trace_fmt.h"
#include "trace_gz.h"

/* ---- reading: records ---- */

/* A lane's part of an op of the current pass. */
struct cell {
	int64_t start, end;             /* O and E cycles; -1 not yet */
	int64_t cursor;                 /* where the next piece of the lane's time must start */
	int64_t cat[CAT_N];
	int64_t loads, folds, stores;   /* records so far: the next one's index */
};

struct reader {
	struct tgz_in in;
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
	int64_t *op_open, *op_done;     /* per op: lanes that have not ended it, and its latest E */
	int64_t *lane_op;               /* per lane: the op it is in (O seen, E not yet), -1 none */
	struct trace_last *last;              /* per lane: what the ~ fields are differences from */
	int64_t last_layer;             /* the layer of the last op named */
	int64_t next_op;                /* the ops of a pass come after those of the last */
	char name[TRACE_MAX_NAME + 1], layer_name[TRACE_MAX_NAME + 1];
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
	return tgz_in_fail(&d->in, "byte %" PRId64 ": %s", d->at, msg);
}

/* A field: an unsigned LEB128 of at most 64 bits. */
static int ufield(struct reader *d, uint64_t *v)
{
	uint64_t x = 0;
	int64_t at = tgz_in_pos(&d->in);
	for (int i = 0; i < TRACE_VARINT_MAX; i++) {
		int c = tgz_in_byte(&d->in);
		if (c < 0) {
			if (d->in.failed)
				return -1;
			return bad(d, "expected the rest of the record, found the end of the trace (it is truncated at byte %"
				   PRId64 ")", tgz_in_pos(&d->in));
		}
		if (i == TRACE_VARINT_MAX - 1 && c > 1)
			break;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return tgz_in_fail(&d->in, "byte %" PRId64 ": expected a field of at most 64 bits (%d bytes), found a longer one", at,
		       TRACE_VARINT_MAX);
}

/* A field below 2^63. */
static int field(struct reader *d, int64_t *v)
{
	uint64_t x;
	int64_t at = tgz_in_pos(&d->in);
	if (ufield(d, &x) < 0)
		return -1;
	if (x > (uint64_t)INT64_MAX)
		return tgz_in_fail(&d->in, "byte %" PRId64 ": expected a field below 2^63, found %" PRIu64, at, x);
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
	int64_t at = tgz_in_pos(&d->in);
	for (int i = 0; i < n; i++)
		if (dfield(d, &prev[i]) < 0)
			return -1;
	for (int i = skip; i < n; i++)
		if (prev[i] > (uint64_t)RUN_MAX_CYCLES)
			return tgz_in_fail(&d->in, "byte %" PRId64 ": expected tile sizes and coordinates below 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) ", found %" PRIu64
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
	char line[TRACE_MAX_HEAD], *p, *save = NULL, q[LIMIT_QUOTE_BUF];
	size_t n = 0;
	int c;
	int64_t cores = -1, apc = -1;
	struct trace_summary *s = d->s;
	while ((c = tgz_in_byte(&d->in)) >= 0 && c != '\n' && n + 1 < sizeof line)
		line[n++] = (char)c;
	line[n] = 0;
	if (d->in.failed)
		return -1;
	if (strncmp(line, TRACE_MAGIC " ", sizeof TRACE_MAGIC) != 0)
		return bad(d, "expected a tpusim event trace (a first line \"" TRACE_MAGIC " <version> ...\"), found %s",
			   n == 0 ? "an empty file" : "other data");
	if (c != '\n')
		return bad(d, "expected a header line of at most %d bytes, found %s", TRACE_MAX_HEAD - 1,
			   c < 0 ? "the end of the trace" : "a longer one");
	p = line + sizeof TRACE_MAGIC;
	char *end;
	long v = strtol(p, &end, 10);
	if (end == p || (*end && *end != ' ') || v < 0) {
		d->at = (int64_t)(p - line);
		return bad(d, "expected the format version, a number, found \"%s\"", err_quote(q, sizeof q, p, 20));
	}
	if (v < 1 || v > TRACE_VERSION) {
		d->at = (int64_t)(p - line);
		return bad(d, "expected format version 1 to %d, found %ld (written by another tpusim)", TRACE_VERSION, v);
	}
	s->version = (int)v;
	if (!(s->head = malloc(n + 1)))
		return err_nomem(d->in.e, "trace");
	s->head[0] = 0;
	size_t hn = 0;
	for (char *w = strtok_r(end, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), val[TRACE_MAX_HEAD];
		size_t k = 0;
		d->at = (int64_t)(w - line);
		if (!eq || eq == w)
			return bad(d, "expected key=value in the header line, found \"%s\"", err_quote(q, sizeof q, w, 40));
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
			if (e2 == val || *e2 || x < 1 || x > TRACE_MAX_LANES)
				return bad(d, "expected %s to be an integer in [1, %d], found \"%s\"", w, TRACE_MAX_LANES,
					   err_quote(q, sizeof q, val, 20));
			*(w[0] == 'c' ? &cores : &apc) = x;
		} else if (!strcmp(w, "clock_ghz")) {
			s->clock_ghz = strtod(val, NULL);
		}
	}
	d->at = 0;
	if (cores < 0 || apc < 0)
		return bad(d, "expected the header line to name cores and arrays_per_core, found %s missing",
			   cores < 0 ? "cores" : "arrays_per_core");
	if (cores * apc > TRACE_MAX_LANES)
		return bad(d, "expected at most %d arrays (cores x arrays_per_core), found %lld", TRACE_MAX_LANES,
			   (long long)(cores * apc));
	s->lanes = (int)(cores * apc);
	if (!(d->lane_op = malloc((size_t)s->lanes * sizeof *d->lane_op)) ||
	    !(d->last = calloc((size_t)s->lanes, sizeof *d->last)))
		return err_nomem(d->in.e, "trace");
	for (int i = 0; i < s->lanes; i++)
		d->lane_op[i] = -1;
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
		return bad(d, "expected at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " cycles, found %" PRId64 " more at cycle %" PRId64, len, d->cycle);
	c->cursor += len;
	c->cat[cat] += len;
	return 0;
}

/* A load or store done at cycle end: the pass lasts at least until its stores are done. */
static int done_at(struct reader *d, int64_t wait, int64_t *end)
{
	if (wait > RUN_MAX_CYCLES - d->cycle)
		return bad(d, "expected at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " cycles, found %" PRId64 " more at cycle %" PRId64, wait, d->cycle);
	*end = d->cycle + wait;
	return 0;
}

/* *to += add, refused (with the offset) when the sum would pass 2^62: no count of a hostile trace wraps. */
static int sum_into(struct reader *d, int64_t *to, int64_t add, const char *what)
{
	if (add < 0 || *to > RUN_MAX_CYCLES - add)
		return bad(d, "expected %s that sum to at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) ", found more", what);
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
	if (ops < 1 || ops > TRACE_MAX_PASS_CELLS / lanes)
		return bad(d, "expected a pass of 1 to %d ops, found %" PRId64, TRACE_MAX_PASS_CELLS / lanes, ops);
	if (d->cycle != d->timeline)
		return bad(d, "expected the pass to begin at cycle %" PRId64 " (where the last ended), found cycle %" PRId64,
			   d->timeline, d->cycle);
	free(d->cells);
	free(d->op_layer);
	free(d->op_rd);
	free(d->op_wr);
	free(d->op_open);
	free(d->op_done);
	d->cells = calloc((size_t)ops * (size_t)lanes, sizeof *d->cells);
	d->op_layer = malloc((size_t)ops * sizeof *d->op_layer);
	d->op_rd = calloc((size_t)ops, sizeof *d->op_rd);
	d->op_wr = calloc((size_t)ops, sizeof *d->op_wr);
	d->op_open = malloc((size_t)ops * sizeof *d->op_open);
	d->op_done = calloc((size_t)ops, sizeof *d->op_done);
	if (!d->cells || !d->op_layer || !d->op_rd || !d->op_wr || !d->op_open || !d->op_done)
		return err_nomem(d->in.e, "trace");
	for (int64_t k = 0; k < ops; k++) {
		d->op_layer[k] = -1;
		d->op_open[k] = lanes;
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

#define UNTILED " (a corrupt trace: its records do not tile the pass)"

/*
 * Lane begins op at this cycle: where the pass begins (its first op), or
 * where the last lane ended the op before. Every array starts an op when
 * all are done with the last (the engine's passes), so a pass's ops follow
 * one another without gap or overlap, and their categories sum to its cycles.
 */
static int tiles(struct reader *d, int64_t lane, int64_t op)
{
	int64_t k = op - d->first;
	if (k == 0) {
		if (d->cycle != d->pass_start)
			return bad(d, "expected lane %" PRId64 " to begin op %" PRId64 " at cycle %" PRId64 ", where its pass "
				   "begins, found cycle %" PRId64 UNTILED, lane, op, d->pass_start, d->cycle);
		return 0;
	}
	if (d->op_open[k - 1] > 0) {
		int q = 0;
		while (cell_of(d, op - 1, q)->end >= 0)
			q++;
		return bad(d, "expected lane %" PRId64 " to begin op %" PRId64 " when every lane has ended op %" PRId64
			   ", found lane %d still in it at cycle %" PRId64 UNTILED, lane, op, op - 1, q, d->cycle);
	}
	if (d->cycle != d->op_done[k - 1])
		return bad(d, "expected lane %" PRId64 " to begin op %" PRId64 " at cycle %" PRId64 ", where the last lane "
			   "ended op %" PRId64 ", found cycle %" PRId64 UNTILED, lane, op, d->op_done[k - 1], op - 1, d->cycle);
	return 0;
}

static int read_string(struct reader *d, char *buf, const char *what)
{
	int64_t len;
	if (field(d, &len) < 0 || check_max(d, what, len, TRACE_MAX_NAME) < 0)
		return -1;
	for (int64_t i = 0; i < len; i++) {
		int c = tgz_in_byte(&d->in);
		if (c < 0)
			return d->in.failed ? -1 : bad(d, "expected %s of %" PRId64 " bytes, found the end of the trace (it is "
						       "truncated at byte %" PRId64 ")", what, len, tgz_in_pos(&d->in));
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
		return bad(d, "expected at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " cycles, found %" PRId64 " more at cycle %" PRId64, dc, d->cycle);
	d->cycle += dc;
	r.cycle = d->cycle;
	switch (kind) {
	case TR_PASS:
		if (fields(d, &r.first, &r.ops, NULL) < 0 || pass_begin(d, r.first, r.ops) < 0)
			return -1;
		break;
	case TR_NAME:
		if (fields(d, &op, &r.layer, &a, NULL) < 0 || check_max(d, "an op kind", a, 2) < 0 ||
		    check_max(d, "a layer index", r.layer, WORKLOAD_MAX_LAYERS - 1) < 0 ||
		    read_string(d, d->name, "an op name") < 0 ||
		    read_string(d, d->layer_name, "a layer name") < 0 || lane_op(d, 0, op) < 0)
			return -1;
		r.opkind = (int)a;
		r.name = d->name;
		r.layer_name = d->layer_name;
		if (d->op_layer[op - d->first] >= 0)
			return bad(d, "expected one name record (N) for op %" PRId64 ", found another", op);
		/* Before version 3, ops came layer by layer. */
		if (s->version < 3 && r.layer < d->last_layer)
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
		if (tiles(d, lane, op) < 0)
			return -1;
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
		d->op_open[op - d->first]--;
		d->op_done[op - d->first] = d->cycle;
		if (d->cycle > d->pass_end)
			d->pass_end = d->cycle;
		break;
	case TR_LOAD:
		if (fields(d, &lane, &op, &a, &b, &w, NULL) < 0 || check_max(d, "an operand", a, 1) < 0 ||
		    check_max(d, "a where flag", b, 1) < 0 || lane_op(d, lane, op) < 0 || done_at(d, w, &r.end) < 0 ||
		    dfields(d, v = d->last[lane].l[a], TRACE_D_N, 1) < 0)
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
		    dfields(d, v = d->last[lane].f, TRACE_D_N, 0) < 0)
			return -1;
		r.rep = (int64_t)v[0], r.m0 = (int64_t)v[1], r.k0 = (int64_t)v[2], r.n0 = (int64_t)v[3];
		r.m = (int64_t)v[4], r.k = (int64_t)v[5], r.n = (int64_t)v[6];
		if (r.t < 1 || r.t > RUN_MAX_CYCLES || a > RUN_MAX_CYCLES - r.t || b > RUN_MAX_CYCLES - r.t - a)
			return bad(d, "expected a fold of 1 to 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " compute cycles, with its stream and drain at most 2^" LIMIT_STR(RUN_MAX_CYCLES_LOG2) " in "
				   "all, found %" PRId64 ", %" PRId64 " and %" PRId64, r.t, a, b);
		if (piece(d, lane, r.t, CAT_COMPUTE, &op) < 0 || done_at(d, r.t + a, &r.end) < 0 ||
		    (b && done_at(d, r.t + a + b - 1, &r.out) < 0))
			return -1;
		r.idx = cell_of(d, op, lane)->folds++;
		s->folds++;
		break;
	case TR_STORE:
		if (fields(d, &lane, &op, &b, &w, NULL) < 0 || check_max(d, "a where flag", b, 1) < 0 ||
		    lane_op(d, lane, op) < 0 || done_at(d, w, &r.end) < 0 || dfields(d, v = d->last[lane].s, TRACE_D_N, 1) < 0)
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
	if (tgz_in_open(&d->in, path, e) < 0) {
		free(d);
		return -1;
	}
	if (read_head(d) < 0)
		goto out;
	for (;;) {
		d->at = tgz_in_pos(&d->in);
		int kind = tgz_in_byte(&d->in);
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
			d->at = tgz_in_pos(&d->in);
			int more = tgz_in_byte(&d->in);
			if (more >= 0)
				bad(d, "expected the end of the trace after its end record, found more bytes");
			if (more >= 0 || d->in.failed)
				goto out;
			rc = 0;
			goto out;
		}
	}
out:
	tgz_in_close(&d->in);
	free(d->cells);
	free(d->op_layer);
	free(d->op_rd);
	free(d->op_wr);
	free(d->op_open);
	free(d->op_done);
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
	/* the decoded header may hold any byte: quoted, every byte of it (at most 4 characters each) */
	char head[4 * TRACE_MAX_HEAD + 8];
	char q[LIMIT_QUOTE_BUF];
	double c = (double)s->cycles;
	fprintf(f, "%s: tpusim event trace, format version %d\n%s\n", err_quote(q, sizeof q, path, LIMIT_PATH), s->version,
		err_quote(head, sizeof head, s->head, TRACE_MAX_HEAD));
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
	char a[100], b[100], c[100], q[2 * LIMIT_QUOTE_BUF];
	fprintf(f, "%lld %c", (long long)r->cycle, r->kind);
	switch (r->kind) {
	case TR_PASS:
		fprintf(f, " ops %lld..%lld\n", (long long)r->first, (long long)(r->first + r->ops - 1));
		break;
	case TR_NAME:
		fprintf(f, " op %lld %s %s layer %lld %s\n", (long long)r->op, r->opkind == 2 ? "collective" : r->opkind ? "vector" : "gemm",
			err_quote(q, LIMIT_QUOTE_BUF, r->name, TRACE_MAX_NAME), (long long)r->layer,
			err_quote(q + LIMIT_QUOTE_BUF, LIMIT_QUOTE_BUF, r->layer_name, TRACE_MAX_NAME));
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
