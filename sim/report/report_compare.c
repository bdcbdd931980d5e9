/*
 * report_compare.c - the dataflows of a workload compared, as a table or CSV (see report.h).
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* What each dataflow keeps in the PEs, what streams, and how often each operand is re-read (compare.h). */
static const struct {
	const char *name;
	const char *stays;
	const char *streams;
	const char *rule[3];            /* by enum operand: how often the array reads A, B, and partial sums again */
} df_text[3] = {
	[DF_WS] = { "weight-stationary", "weights B", "A from inputs; sums to outputs",
		    { "once per column block of N", "once per chunk of M", "once per row block of K after the first" } },
	[DF_OS] = { "output-stationary", "outputs C", "A from inputs; B from weights",
		    { "once per column block of N", "once per row block of M", "never (they stay in the PEs)" } },
	[DF_IS] = { "input-stationary", "inputs A", "B from weights; sums to outputs",
		    { "once per chunk of N", "once per column block of M", "once per row block of K after the first" } },
};

static const char *const operand_shown[3] = { "A", "B", "psums" };

/* The category other than compute and vector with the most cycles of r, or -1 when none has any. */
static int largest_stall(const struct result *r)
{
	int best = -1;
	for (int k = 0; k < CAT_N; k++)
		if (k != CAT_COMPUTE && k != CAT_VECTOR && r->cat[k] > 0 && (best < 0 || r->cat[k] > r->cat[best]))
			best = k;
	return best;
}

/* The SRAM re-read factors of u (NAN: no such operand), and a bit per operand whose factor is the largest. */
static unsigned most_reread(const struct compare_reuse *u, double f[3])
{
	double top = 0;
	unsigned bits = 0;
	for (int i = 0; i < 3; i++) {
		f[i] = compare_factor(u->sram_read[i], u->unique[i]);
		if (f[i] > top)
			top = f[i];
	}
	for (int i = 0; i < 3; i++)
		if (top > 0 && f[i] >= top * (1 - 1e-12))
			bits |= 1u << i;
	return bits;
}

/* The operands named in bits, joined by sep. */
static const char *operands_named(unsigned bits, const char *sep, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < 3; i++)
		if (bits & (1u << i))
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? sep : "", operand_shown[i]);
	return buf;
}

static double ratio_of(const struct result *r, const struct result *base)
{
	return base->cycles > 0 ? (double)r->cycles / (double)base->cycles : NAN;
}

/* A factor or ratio in a terminal column: "-" when there is none. */
static void term_num(FILE *out, int width, int prec, double v)
{
	if (isnan(v))
		fprintf(out, " %*s", width, "-");
	else
		fprintf(out, " %*.*f", width, prec, v);
}

/* A number in a CSV cell: empty when there is none. */
static void csv_num(FILE *out, double v)
{
	if (isnan(v))
		fputc(',', out);
	else
		fprintf(out, ",%.17g", v);
}

/* text, at column col, its words wrapped at 100 columns, every line after the first indented by indent spaces. */
static void wrapped(FILE *out, const char *text, int col, int indent)
{
	bool first = true;
	while (*text) {
		size_t len = strcspn(text, " ");
		if (!first && col + 1 + (int)len > 100) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, len, out);
		col += (int)len;
		first = false;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

/* Appends to the text in buf (size, *n used) as printf. */
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list ap;
	if (*n >= size)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *n, size - *n, fmt, ap);
	va_end(ap);
	*n += k > 0 ? (size_t)k : 0;
}

/*
 * Why dataflow j takes the cycles it does over the whole run: its ratio to
 * the base, the two categories that moved most against the base, its largest
 * stall, the operand the array re-reads most and the HBM re-reads.
 */
static void compare_why(FILE *out, const struct compare *c, int j)
{
	const struct result *r = &c->runs[j].total, *b = &c->runs[c->base].total;
	const struct compare_reuse *u = &c->total[j];
	const char *base = array_dataflow_names[c->df[c->base]];
	char text[2048];
	size_t n = 0;
	double f[3], hb[2];
	int big = largest_stall(r), top[2] = { -1, -1 };
	unsigned most = most_reread(u, f);

	if (j == c->base)
		append(text, sizeof text, &n, "%lld cycles, the base;", (long long)r->cycles);
	else
		append(text, sizeof text, &n, "%lld cycles, %.4fx %s;", (long long)r->cycles, ratio_of(r, b), base);
	for (int k = 0; j != c->base && k < CAT_N; k++) {
		int64_t d = llabs(r->cat[k] - b->cat[k]);
		if (!d)
			continue;
		if (top[0] < 0 || d > llabs(r->cat[top[0]] - b->cat[top[0]]))
			top[1] = top[0], top[0] = k;
		else if (top[1] < 0 || d > llabs(r->cat[top[1]] - b->cat[top[1]]))
			top[1] = k;
	}
	for (int t = 0; t < 2 && top[t] >= 0; t++)
		append(text, sizeof text, &n, "%s %s %+lld", t ? "," : " against it", cat_names[top[t]],
		       (long long)(r->cat[top[t]] - b->cat[top[t]]));
	if (top[0] >= 0)
		append(text, sizeof text, &n, " cycles;");
	if (big >= 0)
		append(text, sizeof text, &n, " largest stall %s (%.1f%% of cycles);", cat_names[big],
		       100.0 * (double)r->cat[big] / (double)r->cycles);
	else
		append(text, sizeof text, &n, " no stalls;");
	if (!u->gemm_ops) {
		append(text, sizeof text, &n, " no GEMM ops, nothing re-read");
	} else {
		for (int i = 0, first = 1; i < 3; i++) {
			if (!(most & (1u << i)))
				continue;
			append(text, sizeof text, &n, "%s %s %.2fx (%s)", first ? " re-read most from SRAM:" : " and",
			       operand_shown[i], f[i], df_text[c->df[j]].rule[i]);
			first = 0;
		}
		if (most)
			append(text, sizeof text, &n, ";");
		for (int i = 0; i < 2; i++)
			hb[i] = compare_factor(u->hbm_read[i], u->hbm_unique[i]);
		append(text, sizeof text, &n, " from HBM:");
		for (int i = 0; i < 2; i++) {
			if (isnan(hb[i]))
				append(text, sizeof text, &n, " %s on chip%s", operand_shown[i], i ? "" : ",");
			else
				append(text, sizeof text, &n, " %s %.2fx%s", operand_shown[i], hb[i], i ? "" : ",");
		}
	}
	fprintf(out, "  %-3s ", array_dataflow_names[c->df[j]]);
	wrapped(out, text, 6, 6);
}

void report_compare(FILE *out, const struct config *cfg, const struct workload *w, const struct run_opts *o,
		    const struct compare *c, bool csv)
{
	const struct arch *a = &cfg->arch;
	const char *base = array_dataflow_names[c->df[c->base]];

	if (csv) {
		fprintf(out, "layer,phase,dataflow,stationary,streams,folds,utilization,cycles,cycles_ratio,ratio_to");
		for (int k = 0; k < CAT_N; k++)
			fprintf(out, ",cycles_%s", cat_names[k]);
		for (int b = 0; b < SRAM_NBUF; b++)
			fprintf(out, ",sram_%s_read_bytes", sram_buf_names[b]);
		fprintf(out, ",reread_a,reread_b,reread_psums,hbm_reread_a,hbm_reread_b,hbm_read_bytes,hbm_write_bytes,"
			     "energy_pj,largest_stall,most_reread\n");
	} else {
		fprintf(out, "%s (batch %lld) on %s: %lldx%lld array, %s, %.3g GHz, %.4g GB/s; %s model%s\n", w->name,
			(long long)w->batch, a->name, (long long)a->array.rows, (long long)a->array.cols,
			array_dtype_names[a->array.dtype], a->clock_ghz, a->hbm.gbps,
			run_model_names[o->model], o->ideal_memory ? ", ideal memory" : "");
		fprintf(out, "dataflows compared:");
		for (int j = 0; j < c->n; j++)
			fprintf(out, " %s (%s)%s", array_dataflow_names[c->df[j]], df_text[c->df[j]].name,
				j + 1 < c->n ? "," : "\n");
		if (arch_arrays(a) > 1)
			fprintf(out, "re-reads as one array plans each whole op; the run splits ops over %lld arrays\n",
				(long long)arch_arrays(a));
		fprintf(out, "\n    %-14s %-32s %26s %17s\n%-2s  %-14s %-32s %8s %8s %8s %8s %8s\n", "stays in",
			"streams (from or to buffer)", "SRAM reads per byte", "HBM reads/byte", "df", "the PEs", "", "A", "B",
			"psums", "A", "B");
		for (int j = 0; j < c->n; j++) {
			const struct compare_reuse *u = &c->total[j];
			fprintf(out, "%-2s  %-14s %-32s", array_dataflow_names[c->df[j]], df_text[c->df[j]].stays,
				df_text[c->df[j]].streams);
			for (int i = 0; i < 3; i++)
				term_num(out, 8, 2, compare_factor(u->sram_read[i], u->unique[i]));
			for (int i = 0; i < 2; i++)
				term_num(out, 8, 2, compare_factor(u->hbm_read[i], u->hbm_unique[i]));
			fputc('\n', out);
		}
		char ratio[16];
		snprintf(ratio, sizeof ratio, "x %s", base);
		fprintf(out, "\n%-20s %-2s %10s %7s %13s %7s %13s %13s\n", "layer", "df", "folds", "util%", "cycles", ratio,
			"HBM bytes", "energy pJ");
	}
	size_t rows = c->runs[0].n;
	for (size_t i = 0; i <= rows; i++) {
		char label[CFG_STR_MAX + 16] = "total";
		if (i < rows)
			run_row_label(&c->runs[0], w, i, label, sizeof label);
		for (int j = 0; j < c->n; j++) {
			const struct result *r = i < rows ? &c->runs[j].layers[i] : &c->runs[j].total;
			const struct result *b = i < rows ? &c->runs[c->base].layers[i] : &c->runs[c->base].total;
			const struct compare_reuse *u = i < rows ? &c->layers[j][i] : &c->total[j];
			const char *name = label;
			const char *df = array_dataflow_names[c->df[j]];
			struct metrics m;
			report_metrics(a, r, o->ideal_memory, &m);
			if (!csv) {
				fprintf(out, "%-20.20s %-2s %10lld %7.2f %13lld", j ? "" : name, df, (long long)r->folds,
					100 * m.utilization, (long long)r->cycles);
				term_num(out, 7, 4, ratio_of(r, b));
				fprintf(out, " %13lld %13.1f\n", (long long)(r->hbm_read_bytes + r->hbm_write_bytes), m.energy_pj);
				continue;
			}
			double f[3];
			char names[32];
			unsigned most = most_reread(u, f);
			int big = largest_stall(r);
			report_csv_str(out, i < rows ? run_row_layer(&c->runs[0], w, i)->name : "total");
			fprintf(out, ",%s", i < rows ? step_phase_names[run_row_phase(&c->runs[0], i)] : "");
			fprintf(out, ",%s,%s,%s,%lld,%.17g,%lld", df, df_text[c->df[j]].stays, df_text[c->df[j]].streams,
				(long long)r->folds, m.utilization, (long long)r->cycles);
			csv_num(out, ratio_of(r, b));
			fprintf(out, ",%s", base);
			for (int k = 0; k < CAT_N; k++)
				fprintf(out, ",%lld", (long long)r->cat[k]);
			for (int k = 0; k < SRAM_NBUF; k++)
				fprintf(out, ",%lld", (long long)r->sram_read_bytes[k]);
			for (int k = 0; k < 3; k++)
				csv_num(out, f[k]);
			for (int k = 0; k < 2; k++)
				csv_num(out, compare_factor(u->hbm_read[k], u->hbm_unique[k]));
			fprintf(out, ",%lld,%lld,%.17g,%s,%s\n", (long long)r->hbm_read_bytes, (long long)r->hbm_write_bytes,
				m.energy_pj, big >= 0 ? cat_names[big] : "", operands_named(most, "+", names, sizeof names));
		}
	}
	if (csv)
		return;
	fprintf(out, "\nwhy (the whole run; x %s = cycles / cycles under %s):\n", base, base);
	for (int j = 0; j < c->n; j++)
		compare_why(out, c, j);
}
