/*
 * lab.c - the course lab's views of one GEMM: the terminal grid, the page
 * and the trace.
 *
 * The grid and the page run func_run twice per dataflow: once without an
 * observer, for the counts and the cycles (so that --cycles is checked before
 * anything is printed, and observation stops at the run's last cycle), then
 * with one. The trace runs once, with func_vcd_observe.
 * The page keeps, per cycle, the registers that changed (slot distance,
 * value, fold when it changed) in a text buffer that becomes the page's
 * JSON; a buffer that passes LAB_HTML_MAX stops the run.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytic.h"
#include "fsx.h"
#include "functional.h"
#include "lab.h"
#include "limit.h"
#include "lower.h"
#include "plan.h"
#include "run.h"
#include "schedule.h"
#include "stop.h"

/* ---- parsing ---- */

/* A decimal number at *p in [1, max] (advances *p), or -1. */
static int64_t dim(const char **p, int64_t max)
{
	int64_t v = 0;
	if (!isdigit((unsigned char)**p))
		return -1;
	for (; isdigit((unsigned char)**p); (*p)++) {
		v = v * 10 + (**p - '0');
		if (v > max)
			return -1;
	}
	return v >= 1 ? v : -1;
}

int lab_parse_gemm(const char *text, int64_t *m, int64_t *k, int64_t *n, struct err *e)
{
	const char *p = text;
	int64_t v[3];
	char q[300];
	for (int i = 0; i < 3; i++) {
		v[i] = dim(&p, LAB_GEMM_MAX);
		if (v[i] < 0 || (i < 2 && *p++ != 'x'))
			break;
		if (i == 2 && !*p) {
			*m = v[0], *k = v[1], *n = v[2];
			return 0;
		}
	}
	return err_input(e, "--gemm: expected MxKxN with each in [1, %d], found \"%s\"", LAB_GEMM_MAX,
			 err_quote(q, sizeof q, text, 60));
}

/* A decimal integer at *p in [0, INT64_MAX / 20] (advances *p), or -1. */
static int64_t cycle_at(const char **p)
{
	int64_t v = 0;
	if (!isdigit((unsigned char)**p))
		return -1;
	for (; isdigit((unsigned char)**p); (*p)++) {
		v = v * 10 + (**p - '0');
		if (v > INT64_MAX / 20)
			return -1;
	}
	return v;
}

int lab_parse_cycles(const char *text, int64_t *first, int64_t *last, struct err *e)
{
	const char *p = text;
	char q[300];
	int64_t a = cycle_at(&p), b = -1;
	if (a >= 0 && p[0] == '.' && p[1] == '.') {
		p += 2;
		b = cycle_at(&p);
	}
	if (a < 0 || b < 0 || *p || a > b)
		return err_input(e, "--cycles: expected A..B with 0 <= A <= B, found \"%s\"", err_quote(q, sizeof q, text, 60));
	*first = a, *last = b;
	return 0;
}

int lab_check_array(const struct config *cfg, struct err *e)
{
	const struct array_params *ap = &cfg->arch.array;
	const char *key = ap->rows > LAB_MAX_DIM ? "array.rows" : "array.cols";
	if (ap->rows > LAB_MAX_DIM || ap->cols > LAB_MAX_DIM)
		return err_at(e, config_origin(cfg, key), key,
			      "expected at most %d for the lab's grid (arrays up to %d x %d PEs), found %" PRId64
			      "; configs/lab_4x4.yaml is a 4 x 4 array for labs", LAB_MAX_DIM,
			      LAB_MAX_DIM, LAB_MAX_DIM, ap->rows > LAB_MAX_DIM ? ap->rows : ap->cols);
	return config_memory_unused(cfg, false, "tpusim lab runs on ideal memory", e);
}

/* ---- operands ---- */

void lab_operands(int dtype, uint64_t seed, int64_t m, int64_t k, int64_t n, double *a, double *b)
{
	func_random(dtype, seed, a, m * k);
	func_random(dtype, seed + 1, b, k * n);
}

/* ---- one GEMM, planned ---- */

struct gemm {
	struct op op;
	struct sched s;
	int64_t folds;                  /* TI_FOLD instructions: the folds func_view numbers */
	double *a, *b, *c;              /* owned: operands, and the reference product (double) */
};

static void gemm_release(struct gemm *g)
{
	free(g->a);
	free(g->b);
	free(g->c);
	g->a = g->b = g->c = NULL;
}

/* The operands and reference of o (df not yet planned). */
static int gemm_init(struct gemm *g, const struct config *cfg, const struct lab_opts *o, struct err *e)
{
	memset(g, 0, sizeof *g);
	g->op.layer_name = "lab";
	g->op.suffix = "";
	g->op.block = -1;
	g->op.kind = OP_GEMM;
	g->op.m = o->m, g->op.k = o->k, g->op.n = o->n, g->op.repeat = 1;
	g->op.b_weight = true;
	g->op.a_elems = o->m * o->k;
	g->op.in[0] = g->op.in[1] = g->op.out = TENSOR_NONE;
	g->a = malloc((size_t)(o->m * o->k) * sizeof *g->a);
	g->b = malloc((size_t)(o->k * o->n) * sizeof *g->b);
	g->c = calloc((size_t)(o->m * o->n), sizeof *g->c);
	if (!g->a || !g->b || !g->c) {
		gemm_release(g);
		return err_nomem(e, "lab operands");
	}
	lab_operands(cfg->arch.array.dtype, o->seed, o->m, o->k, o->n, g->a, g->b);
	for (int64_t i = 0; i < o->m; i++)
		for (int64_t kk = 0; kk < o->k; kk++)
			for (int64_t j = 0; j < o->n; j++)
				g->c[i * o->n + j] += g->a[i * o->k + kk] * g->b[kk * o->n + j];
	return 0;
}

static int gemm_plan(struct gemm *g, const struct config *cfg, int df, struct err *e)
{
	if (plan_gemm(&g->s, &g->op, cfg, &cfg->arch, df, true, e) < 0)
		return -1;
	g->folds = sched_fold_ins(&g->s);
	return 0;
}

static int gemm_run(struct gemm *g, const struct config *cfg, func_observer obs, void *ctx, struct func_result *r,
		    struct err *e)
{
	struct func_opts fo;
	memset(&fo, 0, sizeof fo);
	memset(r, 0, sizeof *r);
	fo.a = g->a, fo.b = g->b;
	fo.observe = obs, fo.ctx = ctx;
	return func_run(cfg, &g->op, &g->s, &fo, r, e);
}

static void summary_of(const struct gemm *g, const struct func_result *r, struct lab_summary *s)
{
	s->cycles = r->cycles;
	s->folds = g->folds;
	s->outputs = r->outputs;
	s->mismatches = r->mismatches;
	s->max_abs_error = r->max_abs_error;
}

/* ---- the fold in progress ---- */

/* The TI_FOLD instructions in order, for indices that never decrease. */
struct fold_cursor {
	struct sched_iter it;
	int64_t idx;                    /* of ins; -1 before the first */
	struct tile_ins ins;
};

static void cursor_init(struct fold_cursor *c, const struct sched *s)
{
	sched_iter_init(&c->it, s);
	c->idx = -1;
}

/* Fold f's instruction (f >= every index asked before), or NULL past the end. */
static const struct tile_ins *cursor_get(struct fold_cursor *c, int64_t f)
{
	while (c->idx < f) {
		if (!sched_next(&c->it, &c->ins))
			return NULL;
		if (c->ins.kind == TI_FOLD)
			c->idx++;
	}
	return c->idx == f ? &c->ins : NULL;
}

enum phase_kind { PH_LOADING, PH_STREAMING, PH_DRAINING };
static const char *const phase_names[] = { "loading", "streaming", "draining" };

/* The phase of a cycle: the fold in progress and what it does. */
struct phase {
	int kind;                       /* enum phase_kind */
	int64_t fold;                   /* the fold in progress, or -1 (nothing yet) */
	int64_t t, T;                   /* streaming: the stream's step t of T at row 0 */
	int64_t also;                   /* streaming: a later fold loading at the same time, or -1 */
};

/* Follows view.fold from cycle to cycle: when the current fold started streaming at row 0. */
struct phase_track {
	int64_t fold, start;
};

/*
 * A cycle's phase: streaming while the fold at row 0 has stream steps left
 * (from the cycle view.fold first names it, T of its instruction); otherwise
 * loading when a tile is shifting in, else draining the fold that streamed
 * last. T comes from ins, the instruction of v->fold (NULL when none).
 */
static struct phase phase_of(struct phase_track *pt, const struct func_view *v, const struct tile_ins *ins)
{
	struct phase p = { PH_DRAINING, v->fold, 0, 0, -1 };
	if (v->fold != pt->fold) {
		pt->fold = v->fold;
		pt->start = v->cycle;
	}
	if (v->fold >= 0 && ins && v->cycle < pt->start + ins->t) {
		p.kind = PH_STREAMING;
		p.t = v->cycle - pt->start;
		p.T = ins->t;
		p.also = v->loading >= 0 && v->loading != v->fold ? v->loading : -1;
	} else if (v->loading >= 0) {
		p.kind = PH_LOADING;
		p.fold = v->loading;
	} else if (v->fold < 0) {
		p.kind = PH_LOADING;
	}
	return p;
}

/* ---- values as text ---- */

/* A value in at most 10 characters: an integer (int8) or 4 significant digits. */
static const char *value_text(char *buf, size_t size, double v, bool ints)
{
	if (ints)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.4g", v + 0.0);
	return buf;
}

/* A register as text: its value, or "." when it holds nothing. */
static const char *reg_text(char *buf, size_t size, const struct func_reg *r, bool ints)
{
	if (r->fold < 0)
		return snprintf(buf, size, "."), buf;
	return value_text(buf, size, r->v, ints);
}

/* Width of any value of the run: int8 sums stay below K * 2^14 in magnitude. */
static int value_width(int dtype, int64_t k)
{
	char b[32];
	if (dtype != DT_INT8)
		return 10;
	return (int)strlen(value_text(b, sizeof b, -(double)k * 16384.0, true));
}

/* "M 0..9, K 4..5, N 0..3" */
static const char *block_text(char *buf, size_t size, const struct tile_ins *ins)
{
	snprintf(buf, size, "M %" PRId64 "..%" PRId64 ", K %" PRId64 "..%" PRId64 ", N %" PRId64 "..%" PRId64, ins->m0,
		 ins->m0 + ins->m - 1, ins->k0, ins->k0 + ins->k - 1, ins->n0, ins->n0 + ins->n - 1);
	return buf;
}

static void print_matrix(FILE *out, const char *title, const double *x, int64_t rows, int64_t cols, int w, bool ints)
{
	char b[32];
	fprintf(out, "%s\n", title);
	for (int64_t i = 0; i < rows; i++) {
		fprintf(out, "  ");
		for (int64_t j = 0; j < cols; j++)
			fprintf(out, " %*s", w, value_text(b, sizeof b, x[i * cols + j], ints));
		fprintf(out, "\n");
	}
}

/* ---- JSON text ---- */

/*
 * Where JSON goes: a FILE (f; lab_print) or memory (the page), which stops
 * growing past LAB_HTML_MAX.
 */
struct buf {
	FILE *f;                        /* borrowed, or NULL: into p */
	char *p;
	size_t n, cap;
	bool over;                      /* passed LAB_HTML_MAX, or memory ran out (nomem) */
	bool nomem;
};

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;
	if (b->f) {
		va_start(ap, fmt);
		vfprintf(b->f, fmt, ap);
		va_end(ap);
		return;
	}
	if (b->over)
		return;
	for (;;) {
		va_start(ap, fmt);
		len = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		SIM_ASSERT(len >= 0);
		if (b->p && b->n + (size_t)len < b->cap)
			break;
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap <= b->n + (size_t)len)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->over = b->nomem = true;
			return;
		}
		b->p = q, b->cap = cap;
	}
	b->n += (size_t)len;
	if (b->n > (size_t)LAB_HTML_MAX)
		b->over = true;
}

/* A number for JSON: exact for ints, enough digits for an fp32 value otherwise. */
static void json_num(struct buf *b, double v, bool ints)
{
	if (!isfinite(v))
		buf_printf(b, "null");
	else if (ints)
		buf_printf(b, "%.0f", v);
	else
		buf_printf(b, "%.9g", v + 0.0);
}

/* A rows x cols matrix (row-major) as JSON: an array of rows. */
static void json_matrix(struct buf *b, const double *x, int64_t rows, int64_t cols, bool ints)
{
	buf_printf(b, "[");
	for (int64_t i = 0; i < rows; i++) {
		buf_printf(b, i ? ",[" : "[");
		for (int64_t j = 0; j < cols; j++) {
			if (j)
				buf_printf(b, ",");
			json_num(b, x[i * cols + j], ints);
		}
		buf_printf(b, "]");
	}
	buf_printf(b, "]");
}

/* ---- the terminal ---- */

struct printer {
	FILE *out;
	struct buf json;                /* into out */
	const struct lab_opts *o;
	const struct gemm *g;
	struct fold_cursor cur, next;   /* the fold in progress, the fold loading */
	struct phase_track pt;
	int64_t cycles;
	bool ints;
	int w;                          /* value width */
	int64_t shown;                  /* cycles shown */
	bool quit;                      /* a step line said q, or in ended */
};

static void print_header_line(struct printer *p, const struct func_view *v)
{
	const struct tile_ins *ins = v->fold >= 0 ? cursor_get(&p->cur, v->fold) : NULL;
	struct phase ph = phase_of(&p->pt, v, ins);
	char b[200];
	fprintf(p->out, "cycle %" PRId64 " of %" PRId64 ": ", v->cycle, p->cycles);
	if (ph.fold < 0) {
		fprintf(p->out, "no fold yet\n");
		return;
	}
	const struct tile_ins *fi = ph.fold == v->fold ? ins : cursor_get(&p->next, ph.fold);
	fprintf(p->out, "fold %" PRId64 " of %" PRId64 " (%s) %s", ph.fold, p->g->folds,
		fi ? block_text(b, sizeof b, fi) : "?", phase_names[ph.kind]);
	if (ph.kind == PH_STREAMING)
		fprintf(p->out, ", step %" PRId64 " of %" PRId64, ph.t, ph.T);   /* 0..T-1, as folds and cycles count */
	if (ph.also >= 0) {
		const struct tile_ins *li = cursor_get(&p->next, ph.also);
		fprintf(p->out, "; loading fold %" PRId64 " (%s)", ph.also, li ? block_text(b, sizeof b, li) : "?");
	}
	fprintf(p->out, "\n");
}

static void print_grid(struct printer *p, const struct func_view *v)
{
	bool os = v->df == DF_OS;
	int w = p->w, cw = os ? w + 4 : 2 * w + 5;
	static const char *const ws_lab[] = { "w", "x", "p" }, *const os_lab[] = { "a  ", "b  ", "acc", "out" };
	int lines = os ? 4 : 3;
	char b1[32], b2[32], cell[96];

	fprintf(p->out, "      ");
	for (int64_t j = 0; j < v->C; j++) {
		snprintf(cell, sizeof cell, "col %" PRId64, j);
		fprintf(p->out, "%s%-*s", j ? " | " : "", j + 1 < v->C ? cw : 0, cell);
	}
	fprintf(p->out, "\n");
	for (int64_t i = 0; i < v->R; i++) {
		for (int l = 0; l < lines; l++) {
			if (l == 0)
				fprintf(p->out, "row %-2" PRId64, i);
			else
				fprintf(p->out, "      ");
			for (int64_t j = 0; j < v->C; j++) {
				const struct func_pe *pe = &v->pe[i * v->C + j];
				if (os) {
					const struct func_reg *r = l == 0 ? &pe->x : l == 1 ? &pe->p : l == 2 ? &pe->acc : &pe->out;
					snprintf(cell, sizeof cell, "%s %*s", os_lab[l], w, reg_text(b1, sizeof b1, r, p->ints));
				} else if (l == 0) {
					int s = pe->wsel & 1;
					snprintf(cell, sizeof cell, "w %*s [%*s]", w, reg_text(b1, sizeof b1, &pe->w[s], p->ints),
						 w, reg_text(b2, sizeof b2, &pe->w[1 - s], p->ints));
				} else {
					snprintf(cell, sizeof cell, "%s %*s", ws_lab[l], w,
						 reg_text(b1, sizeof b1, l == 1 ? &pe->x : &pe->p, p->ints));
				}
				fprintf(p->out, "%s%-*s", j ? " | " : "", j + 1 < v->C ? cw : 0, cell);
			}
			fprintf(p->out, "\n");
		}
	}
}

static void print_left(struct printer *p, const struct func_view *v)
{
	char b[32];
	fprintf(p->out, "leaves:");
	if (!v->nleft)
		fprintf(p->out, " nothing");
	for (int i = 0; i < v->nleft; i++) {
		const struct func_out *x = &v->left[i];
		fprintf(p->out, "%s C[%" PRId64 "][%" PRId64 "] %s %s", i ? "," : "", x->m, x->n, v->df == DF_OS ? "=" : "+=",
			value_text(b, sizeof b, x->v, p->ints));
	}
	fprintf(p->out, "\n\n");
}

static void json_reg(struct buf *b, const struct func_reg *r, bool ints)
{
	if (r->fold < 0)
		buf_printf(b, "null");
	else
		json_num(b, r->v, ints);
}

/* One cycle as JSON (see lab.h). */
static void json_cycle(struct printer *p, const struct func_view *v)
{
	static const char *const ws_names[] = { "w", "w_other", "x", "p" }, *const os_names[] = { "a", "b", "acc", "out" };
	const struct tile_ins *ins = v->fold >= 0 ? cursor_get(&p->cur, v->fold) : NULL;
	struct phase ph = phase_of(&p->pt, v, ins);
	const struct tile_ins *fi = ph.fold < 0 ? NULL : ph.fold == v->fold ? ins : cursor_get(&p->next, ph.fold);
	bool os = v->df == DF_OS;
	FILE *out = p->out;

	fprintf(out, "%s\n{\"cycle\":%" PRId64 ",\"fold\":%" PRId64 ",\"phase\":\"%s\",\"t\":%" PRId64 ",\"T\":%" PRId64
		",\"loading\":%" PRId64 ",\"block\":", p->shown++ ? "," : "", v->cycle, ph.fold, phase_names[ph.kind], ph.t,
		ph.T, ph.also >= 0 ? ph.also : ph.kind == PH_LOADING ? ph.fold : -1);
	if (fi)
		fprintf(out, "{\"m0\":%" PRId64 ",\"k0\":%" PRId64 ",\"n0\":%" PRId64 ",\"m\":%" PRId64 ",\"k\":%" PRId64
			",\"n\":%" PRId64 "}", fi->m0, fi->k0, fi->n0, fi->m, fi->k, fi->n);
	else
		fputs("null", out);
	fputs(",\"pe\":[", out);
	for (int64_t i = 0; i < v->R; i++) {
		fputs(i ? ",[" : "[", out);
		for (int64_t j = 0; j < v->C; j++) {
			const struct func_pe *pe = &v->pe[i * v->C + j];
			int s = pe->wsel & 1;
			const struct func_reg *r[4] = { &pe->w[s], &pe->w[1 - s], &pe->x, &pe->p };
			const char *const *names = os ? os_names : ws_names;
			if (os)
				r[0] = &pe->x, r[1] = &pe->p, r[2] = &pe->acc, r[3] = &pe->out;
			fputs(j ? ",{" : "{", out);
			for (int k = 0; k < 4; k++) {
				fprintf(out, "%s\"%s\":", k ? "," : "", names[k]);
				json_reg(&p->json, r[k], p->ints);
			}
			fputs(",\"folds\":{", out);
			for (int k = 0; k < 4; k++) {
				fprintf(out, "%s\"%s\":", k ? "," : "", names[k]);
				if (r[k]->fold < 0)
					fputs("null", out);
				else
					fprintf(out, "%" PRId64, r[k]->fold);
			}
			fputs("}}", out);
		}
		fputc(']', out);
	}
	fputs("],\"leaves\":[", out);
	for (int k = 0; k < v->nleft; k++) {
		fprintf(out, "%s{\"m\":%" PRId64 ",\"n\":%" PRId64 ",\"v\":", k ? "," : "", v->left[k].m, v->left[k].n);
		json_num(&p->json, v->left[k].v, p->ints);
		fputc('}', out);
	}
	fputs("]}", out);
}

static int print_cycle(const struct func_view *v, void *ctx)
{
	struct printer *p = ctx;
	if (v->cycle >= p->cycles)
		return 1;
	if (v->cycle < p->o->first) {
		/* Keep the phase tracker in step with the cycles not shown. */
		phase_of(&p->pt, v, NULL);
		return 0;
	}
	if (p->o->json) {
		json_cycle(p, v);
		return p->o->last >= 0 && v->cycle >= p->o->last;
	}
	print_header_line(p, v);
	print_grid(p, v);
	print_left(p, v);
	if (p->o->last >= 0 && v->cycle >= p->o->last)
		return 1;
	if (p->o->step && v->cycle + 1 < p->cycles) {
		char line[256];
		fflush(p->out);
		if (p->o->prompt)
			fprintf(stderr, "-- Enter: next cycle, q: quit -- ");
		if (!p->o->in || !fgets(line, sizeof line, p->o->in) || line[strspn(line, " \t")] == 'q') {
			p->quit = true;
			return 1;
		}
	}
	return 0;
}

static const char *df_name(int df)
{
	return array_dataflow_names[df];
}

/* What each register holds, per dataflow. */
static const char *const legend[] = {
	"ws: w = weight B[k][n] held (the bank in use, the other bank in brackets), x = input A[m][k] moving right,\n"
	"    p = partial sum moving down; PE(i,j) of a fold holds B[k0+i][n0+j]",
	"os: a = A[m][k] moving right, b = B[k][n] moving down, acc = C[m0+i][n0+j] being summed in PE(i,j),\n"
	"    out = a finished output moving down to leave the array",
	"is: w = input A[m][k] held (A^T: PE(i,j) of a fold holds A[m0+j][k0+i]; the bank in use, the other in brackets),\n"
	"    x = B[k][n] moving right, p = partial sum moving down",
};

static void print_intro(FILE *out, const struct config *cfg, const struct lab_opts *o, const struct gemm *g,
			int64_t cycles, int w, bool ints)
{
	const struct array_params *ap = &cfg->arch.array;
	fprintf(out, "lab: GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (A %" PRId64 " x %" PRId64 " times B %" PRId64
		" x %" PRId64 "), %s, seed %" PRIu64 ", on %s: %" PRId64 " x %" PRId64 " PEs, %s, weight double buffer %s\n",
		o->m, o->k, o->n, o->m, o->k, o->k, o->n, array_dtype_names[ap->dtype], o->seed, cfg->arch.name, ap->rows, ap->cols,
		df_name(o->df), ap->weight_double_buffer ? "on" : "off");
	fprintf(out, "%s\n", legend[o->df]);
	fprintf(out, "folds are numbered 0..%" PRId64 ", cycles 0..%" PRId64 "; \".\" is an empty register; a fold is "
		"loading\n(its tile shifts in), streaming (its operands enter at row 0: step t of T) or draining (all in,\n"
		"the last results on their way out)\n\n", g->folds - 1, cycles - 1);
	if (o->m <= LAB_MAT_MAX && o->k <= LAB_MAT_MAX && o->n <= LAB_MAT_MAX) {
		print_matrix(out, "A =", g->a, o->m, o->k, w, ints);
		print_matrix(out, "B =", g->b, o->k, o->n, w, ints);
		print_matrix(out, "C = A B (the reference) =", g->c, o->m, o->n, w, ints);
		fprintf(out, "\n");
	}
}

void lab_print_counts(FILE *out, const struct lab_summary *s, bool ints)
{
	fprintf(out, "%" PRId64 " cycle%s, %" PRId64 " fold%s, %" PRId64 " output%s checked, %" PRId64 " mismatch%s",
		s->cycles, s->cycles == 1 ? "" : "s", s->folds, s->folds == 1 ? "" : "s", s->outputs,
		s->outputs == 1 ? "" : "s", s->mismatches, s->mismatches == 1 ? "" : "es");
	if (!ints)
		fprintf(out, ", max abs error %.3g", s->max_abs_error);
}

static void print_summary(FILE *out, const struct lab_summary *s, bool ints)
{
	fprintf(out, "summary: ");
	lab_print_counts(out, s, ints);
	fprintf(out, "\n");
}

int lab_print(FILE *out, const struct config *cfg, const struct lab_opts *o, struct lab_summary *s, struct err *e)
{
	struct gemm g;
	struct func_result r;
	struct printer p;
	int rc = -1;
	bool ints = cfg->arch.array.dtype == DT_INT8;

	if (lab_check_array(cfg, e) < 0 || gemm_init(&g, cfg, o, e) < 0)
		return -1;
	if (gemm_plan(&g, cfg, o->df, e) < 0 || gemm_run(&g, cfg, NULL, NULL, &r, e) < 0)
		goto out;
	summary_of(&g, &r, s);
	if (o->first >= r.cycles || o->last >= r.cycles) {
		err_input(e, "--cycles: expected A..B with 0 <= A <= B <= %" PRId64 " (the run's last cycle), found \"%" PRId64
			  "..%" PRId64 "\"", r.cycles - 1, o->first, o->last);
		goto out;
	}
	memset(&p, 0, sizeof p);
	p.out = out, p.json.f = out, p.o = o, p.g = &g, p.cycles = r.cycles, p.ints = ints;
	p.w = value_width(cfg->arch.array.dtype, o->k);
	p.pt.fold = -1;
	cursor_init(&p.cur, &g.s);
	cursor_init(&p.next, &g.s);
	if (o->json) {
		fprintf(out, "{\"dataflow\":\"%s\",\"dtype\":\"%s\",\"seed\":%" PRIu64 ",\"rows\":%" PRId64 ",\"cols\":%" PRId64
			",\"gemm\":{\"m\":%" PRId64 ",\"k\":%" PRId64 ",\"n\":%" PRId64 "},\n\"A\":", df_name(o->df),
			array_dtype_names[cfg->arch.array.dtype], o->seed, cfg->arch.array.rows, cfg->arch.array.cols, o->m, o->k, o->n);
		json_matrix(&p.json, g.a, o->m, o->k, ints);
		fputs(",\n\"B\":", out);
		json_matrix(&p.json, g.b, o->k, o->n, ints);
		fputs(",\n\"C\":", out);
		json_matrix(&p.json, g.c, o->m, o->n, ints);
		fputs(",\n\"cycles\":[", out);
	} else {
		print_intro(out, cfg, o, &g, r.cycles, p.w, ints);
	}
	if (gemm_run(&g, cfg, print_cycle, &p, &r, e) < 0)
		goto out;
	/* Ctrl-C at the step prompt ends its read (no SA_RESTART): a stop, not a q. */
	if (stop_check(e) < 0)
		goto out;
	if (o->json)
		fprintf(out, "],\n\"summary\":{\"cycles\":%" PRId64 ",\"folds\":%" PRId64 ",\"outputs\":%" PRId64
			",\"mismatches\":%" PRId64 ",\"max_abs_error\":%.9g}}\n", s->cycles, s->folds, s->outputs, s->mismatches,
			s->max_abs_error);
	else
		print_summary(out, s, ints);
	rc = 0;
out:
	gemm_release(&g);
	return rc;
}

/* ---- the trace ---- */

int lab_vcd(const char *base, const struct config *cfg, const struct lab_opts *o, struct lab_summary *s, struct err *e)
{
	const struct array_params *ap = &cfg->arch.array;
	struct config *one = NULL;
	struct gemm g;
	struct func_result r;
	func_vcd *fv = NULL;
	char path[LIMIT_PATH_BUF], how[200];
	int rc = -1;

	if (strlen(base) > LIMIT_OUT_PATH)
		return err_input(e, "--vcd: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(base));
	snprintf(path, sizeof path, "%s.vcd", base);
	if (lab_check_array(cfg, e) < 0 || gemm_init(&g, cfg, o, e) < 0)
		return -1;
	if (gemm_plan(&g, cfg, o->df, e) < 0)
		goto out;
	snprintf(how, sizeof how, "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 ": %" PRId64 " cycles x (%" PRId64 " x %" PRId64
		 " PEs x %d signals + 3) x %d bytes", o->m, o->k, o->n, analytic_gemm_cycles(&g.s), ap->rows, ap->cols,
		 FUNC_VCD_SIGNALS, FUNC_VCD_CHANGE_BYTES);
	if (run_check_trace_bytes(cfg, "--vcd", func_vcd_bytes(cfg, analytic_gemm_cycles(&g.s)), how, "try a smaller --gemm",
				  e) < 0)
		goto out;
	/* The lab runs one array, whatever the chip around it. */
	if (!(one = malloc(sizeof *one))) {
		err_nomem(e, "--vcd");
		goto out;
	}
	*one = *cfg;
	one->arch.chip.cores = one->arch.chip.arrays_per_core = 1;
	if (!(fv = func_vcd_open(one, o->df, path, e)))
		goto out;
	func_vcd_set_op(fv, "lab", 0);
	if (gemm_run(&g, cfg, func_vcd_observe, fv, &r, e) < 0) {
		func_vcd_abandon(fv);
		goto out;
	}
	summary_of(&g, &r, s);
	rc = func_vcd_close(fv, s->cycles, e);
out:
	free(one);
	gemm_release(&g);
	return rc;
}

/* ---- the page ---- */

/* A JSON string that is also safe inside a <script> element. */
static void buf_str(struct buf *b, const char *s)
{
	buf_printf(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&')
			buf_printf(b, "\\u%04x", c);
		else
			buf_printf(b, "%c", c);
	}
	buf_printf(b, "\"");
}

/* Register slots of a PE in the page's data: the six registers, then wsel (its value; fold 0). */
enum { SL_W0, SL_W1, SL_X, SL_P, SL_ACC, SL_OUT, SL_WSEL, SL_N };

struct recorder {
	struct buf *b;
	const struct gemm *g;
	struct func_reg *prev;          /* owned: R x C x SL_N, the registers of the cycle before */
	struct phase_track pt;
	struct fold_cursor cur;
	int64_t frames;                 /* cycles recorded */
	int64_t cycles;                 /* the run's: the cycles to record */
	bool ints;
};

static struct func_reg slot(const struct func_pe *pe, int s)
{
	switch (s) {
	case SL_W0: return pe->w[0];
	case SL_W1: return pe->w[1];
	case SL_X: return pe->x;
	case SL_P: return pe->p;
	case SL_ACC: return pe->acc;
	case SL_OUT: return pe->out;
	default: return (struct func_reg){ (double)pe->wsel, 0 };
	}
}

/*
 * One cycle: [phase, fold, t, T, also, loading, [m, n, v, ...], [changes]].
 * Each register that changed since the cycle before is its slot's distance
 * from the previous change's slot (the first's from -1) and its value; the
 * distance negated, and then the new fold, when its fold changed.
 */
static int record_cycle(const struct func_view *v, void *ctx)
{
	struct recorder *rc = ctx;
	struct buf *b = rc->b;
	const struct tile_ins *ins = v->fold >= 0 ? cursor_get(&rc->cur, v->fold) : NULL;
	struct phase ph;
	int64_t last = -1;

	if (v->cycle >= rc->cycles)
		return 1;
	ph = phase_of(&rc->pt, v, ins);

	buf_printf(b, "%s[%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",[", rc->frames++ ? "," : "",
		   ph.kind, ph.fold, ph.t, ph.T, ph.also, v->loading);
	for (int i = 0; i < v->nleft; i++) {
		buf_printf(b, "%s%" PRId64 ",%" PRId64 ",", i ? "," : "", v->left[i].m, v->left[i].n);
		json_num(b, v->left[i].v, rc->ints);
	}
	buf_printf(b, "],[");
	for (int64_t q = 0; q < v->R * v->C; q++)
		for (int s = 0; s < SL_N; s++) {
			struct func_reg r = slot(&v->pe[q], s), *old = &rc->prev[q * SL_N + s];
			if (r.fold < 0)
				r.v = 0;
			bool refold = r.fold != old->fold;
			if (!refold && (r.v == old->v || r.fold < 0))
				continue;
			*old = r;
			buf_printf(b, "%s%" PRId64 ",", last < 0 ? "" : ",", (refold ? -1 : 1) * (q * SL_N + s - last));
			json_num(b, r.v, rc->ints);
			if (refold)
				buf_printf(b, ",%" PRId64, r.fold);
			last = q * SL_N + s;
		}
	buf_printf(b, "]]");
	return b->over ? 1 : 0;
}

/*
 * One dataflow's run into b: {"df", "folds", "frames", then the counts}. A
 * first run without an observer gives the counts and the cycles to record.
 */
static int record_run(struct buf *b, struct gemm *g, const struct config *cfg, int df, struct lab_summary *s,
		      struct err *e)
{
	struct recorder rc;
	struct func_result r;
	struct fold_cursor fc;
	const struct tile_ins *ins;
	int64_t n = cfg->arch.array.rows * cfg->arch.array.cols * SL_N;

	if (gemm_plan(g, cfg, df, e) < 0 || gemm_run(g, cfg, NULL, NULL, &r, e) < 0)
		return -1;
	summary_of(g, &r, s);
	memset(&rc, 0, sizeof rc);
	rc.b = b, rc.g = g, rc.ints = cfg->arch.array.dtype == DT_INT8;
	rc.cycles = r.cycles;
	rc.pt.fold = -1;
	cursor_init(&rc.cur, &g->s);
	if (!(rc.prev = malloc((size_t)n * sizeof *rc.prev)))
		return err_nomem(e, "lab page");
	for (int64_t i = 0; i < n; i++)
		rc.prev[i] = (struct func_reg){ 0, i % SL_N == SL_WSEL ? 0 : -1 };

	buf_printf(b, "{\"df\":\"%s\",\"folds\":[", df_name(df));
	cursor_init(&fc, &g->s);
	for (int64_t f = 0; f < g->folds && !b->over && (ins = cursor_get(&fc, f)); f++)
		buf_printf(b, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", f ? "," : "",
			   ins->m0, ins->k0, ins->n0, ins->m, ins->k, ins->n);
	buf_printf(b, "],\"frames\":[");
	struct func_result r2;
	int st = gemm_run(g, cfg, record_cycle, &rc, &r2, e);
	free(rc.prev);
	if (st < 0)
		return -1;
	buf_printf(b, "],\"cycles\":%" PRId64 ",\"outputs\":%" PRId64 ",\"mismatches\":%" PRId64 ",\"max_abs_error\":%.3g}",
		   s->cycles, s->outputs, s->mismatches, s->max_abs_error);
	return 0;
}

/*
 * The page around the data: sim/lab_page.html, embedded at build time (the
 * Makefile turns it into lab_page.inc, its bytes as a C array, and a NUL).
 * lab_html writes the page with its one LAB_DATA_MARK replaced by the JSON.
 * The script rebuilds each cycle's registers from checkpoints every 64
 * cycles and the changes in between; #cycle=N in the address steps there.
 */
static const char page[] = {
#include "lab_page.inc"
};
#define LAB_DATA_MARK "@LAB_DATA@"

static int check_path(const char *path, struct err *e)
{
	char tmp[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	if (!*path || strlen(path) > LIMIT_OUT_PATH)
		return err_input(e, "--html: expected a writable path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found \"%s\"",
				 err_quote(q, sizeof q, path, LIMIT_PATH));
	if (fsx_tmp_name(tmp, sizeof tmp, path) != 0 || fsx_writable(tmp) != 0)
		return err_input(e, "--html: expected a writable path, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
				 strerror(errno));
	return 0;
}

static int write_page(const char *path, const struct buf *b, struct err *e)
{
	char tmp[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	const char *mark = strstr(page, LAB_DATA_MARK), *rest;
	FILE *f;
	SIM_ASSERT(mark && !strstr(mark + 1, LAB_DATA_MARK));
	rest = mark + strlen(LAB_DATA_MARK);
	if (fsx_tmp_name(tmp, sizeof tmp, path) != 0 || !(f = fopen(tmp, "wx")))
		return err_input(e, "--html: expected a writable path, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
				 strerror(errno));
	fwrite(page, 1, (size_t)(mark - page), f);
	fwrite(b->p, 1, b->n, f);
	fputs(rest, f);
	if (fflush(f) != 0 || ferror(f)) {
		int err = errno;
		fclose(f);
		unlink(tmp);
		return fsx_write_error(e, "--html", path, err);
	}
	if (fclose(f) != 0) {
		int err = errno;
		unlink(tmp);
		return fsx_write_error(e, "--html", path, err);
	}
	if (fsx_commit(tmp, path) != 0)
		return fsx_write_error(e, "--html", path, errno);
	return 0;
}

int lab_html(const char *path, const struct config *cfg, const struct lab_opts *o, struct lab_summary s[3],
	     struct err *e)
{
	const struct array_params *ap = &cfg->arch.array;
	struct gemm g;
	struct buf b = { 0 };
	bool ints = ap->dtype == DT_INT8;
	int rc = -1;

	if (lab_check_array(cfg, e) < 0 || check_path(path, e) < 0)
		return -1;
	if (o->m * o->k * o->n > LAB_HTML_MAX / (3 * LAB_HTML_MAC_BYTES))
		return err_input(e, "--html: expected at most %ld MB of register data for the page, found at least %" PRId64
				 " MB (GEMM %" PRId64 "x%" PRId64 "x%" PRId64 ": %" PRId64 " MACs, %d B each in each of ws, os "
				 "and is); try a smaller --gemm", LAB_HTML_MAX >> 20, 3 * LAB_HTML_MAC_BYTES * o->m * o->k * o->n >> 20,
				 o->m, o->k, o->n, o->m * o->k * o->n, LAB_HTML_MAC_BYTES);
	if (gemm_init(&g, cfg, o, e) < 0)
		return -1;
	buf_printf(&b, "{\"name\":");
	buf_str(&b, cfg->arch.name);
	buf_printf(&b, ",\"dtype\":\"%s\",\"ints\":%s,\"m\":%" PRId64 ",\"k\":%" PRId64 ",\"n\":%" PRId64 ",\"seed\":\"%" PRIu64
		   "\",\"R\":%" PRId64 ",\"C\":%" PRId64 ",\"dbuf\":%s,\"slots\":%d,\"matmax\":%d,\"A\":",
		   array_dtype_names[ap->dtype], ints ? "true" : "false", o->m, o->k, o->n, o->seed, ap->rows, ap->cols,
		   ap->weight_double_buffer ? "true" : "false", SL_N, LAB_MAT_MAX);
	json_matrix(&b, g.a, o->m, o->k, ints);
	buf_printf(&b, ",\"B\":");
	json_matrix(&b, g.b, o->k, o->n, ints);
	buf_printf(&b, ",\"ref\":");
	json_matrix(&b, g.c, o->m, o->n, ints);
	buf_printf(&b, ",\"runs\":[");
	for (int df = DF_WS; df <= DF_IS && !b.over; df++) {
		if (df > DF_WS)
			buf_printf(&b, ",");
		if (record_run(&b, &g, cfg, df, &s[df], e) < 0)
			goto out;
	}
	buf_printf(&b, "]}");
	if (b.nomem) {
		err_nomem(e, "lab page");
		goto out;
	}
	if (b.over) {
		err_input(e, "--html: expected at most %ld MB of register data for the page, found more (GEMM %" PRId64 "x%" PRId64
			  "x%" PRId64 " on %" PRId64 " x %" PRId64 " PEs); try a smaller --gemm", LAB_HTML_MAX >> 20, o->m, o->k,
			  o->n, ap->rows, ap->cols);
		goto out;
	}
	rc = write_page(path, &b, e);
out:
	free(b.p);
	gemm_release(&g);
	return rc;
}
