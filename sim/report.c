/*
 * report.c - summaries, CSV and JSON (see report.h).
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"
#include "tpusim.h"

void report_metrics(const struct arch *a, const struct result *r, bool ideal, struct metrics *m)
{
	double pes = (double)arch_pes(a);
	double bytes = (double)(r->hbm_read_bytes + r->hbm_write_bytes + r->bus_shift_bytes);
	double seconds = (double)r->cycles / (a->clock_ghz * 1e9);
	double peak = 2 * arch_peak_macs_per_s(a);

	m->ops = 2.0 * (double)r->macs;
	m->bus_bytes = bytes;
	m->utilization = r->cycles ? (double)r->macs / ((double)r->cycles * pes) : 0;
	m->intensity = bytes > 0 ? m->ops / bytes : 0;
	m->achieved_ops_per_s = seconds > 0 ? m->ops / seconds : 0;
	m->attainable_ops_per_s = bytes > 0 && !ideal ? fmin(peak, arch_hbm_bytes_per_s(a) * m->intensity) : peak;
	m->energy_pj = result_energy(a, r, m->part);
	m->pj_per_mac = r->macs ? m->energy_pj / (double)r->macs : 0;
	m->tops_per_w = m->energy_pj > 0 ? m->ops / m->energy_pj : 0;
	m->edp_js = m->energy_pj * 1e-12 * seconds;
}

static const char *layer_type(const struct workload *w, size_t i)
{
	return layer_type_names[w->layers[i].type];
}

/* One row of the summary table: the fields with a terminal heading, in table order. */
static void summary_row(FILE *out, const struct report_ctx *c, const char *name, const char *type,
			const struct result *x)
{
	struct metrics m;
	report_metrics(&c->cfg->arch, x, c->opts->ideal_memory, &m);
	fprintf(out, "%-24.24s %-9s", name, type);
	for (const struct result_field *f = result_fields; f->name; f++) {
		if (!f->term)
			continue;
		for (int i = 0; i < f->n; i++) {
			double v = result_field_value(f, i, x, &m);
			if (f->pct_of_cycles)
				v = x->cycles ? v / (double)x->cycles : 0;
			if (f->kind == RF_COUNT && !f->pct_of_cycles)
				fprintf(out, " %*lld", f->width, (long long)result_field_count(f, i, x));
			else
				fprintf(out, " %*.*f", f->width, f->prec, v * f->scale);
		}
	}
	fputc('\n', out);
}

/* The headings of the summary table. */
static void summary_head(FILE *out)
{
	fprintf(out, "%-24s %-9s", "layer", "type");
	for (const struct result_field *f = result_fields; f->name; f++)
		for (int i = 0; f->term && i < f->n; i++)
			fprintf(out, " %*s", f->width, f->term[i]);
	fputc('\n', out);
}

void report_summary(FILE *out, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	const struct workload *w = c->w;
	const struct run *r = c->run;
	double peak = 2 * arch_peak_macs_per_s(a);
	struct metrics m;

	fprintf(out, "%s (batch %lld) on %s: %lldx%lld %s %s at %.3g GHz, %.4g GB/s; %s model%s\n", w->name,
		(long long)w->batch, a->name, (long long)a->array.rows, (long long)a->array.cols,
		array_dataflow_names[c->opts->dataflow], array_dtype_names[a->array.dtype], a->clock_ghz, a->hbm.gbps,
		run_model_names[c->opts->model], c->opts->ideal_memory ? ", ideal memory" : "");
	if (isinf(arch_hbm_bytes_per_s(a)))
		fprintf(out, "peak %.2f TOPS, HBM ideal (hbm.model), no memory roof\n\n", peak / 1e12);
	else
		fprintf(out, "peak %.2f TOPS, HBM %.4g GB/s, ridge point %.1f ops/B\n\n", peak / 1e12,
			arch_hbm_bytes_per_s(a) / 1e9, peak / arch_hbm_bytes_per_s(a));
	summary_head(out);
	for (size_t i = 0; i < r->n; i++)
		summary_row(out, c, w->layers[i].name, layer_type(w, i), &r->layers[i]);
	summary_row(out, c, "total", "", &r->total);
	report_metrics(a, &r->total, c->opts->ideal_memory, &m);
	fprintf(out, "\n%lld cycles = %.4g ms at %.3g GHz; %lld MACs; utilization %.2f%%; %.3f TOPS achieved\n",
		(long long)r->total.cycles, (double)r->total.cycles / (a->clock_ghz * 1e6), a->clock_ghz,
		(long long)r->total.macs, 100 * m.utilization, m.achieved_ops_per_s / 1e12);
	fprintf(out, "cycles by category:");
	for (int k = 0; k < CAT_N; k++)
		fprintf(out, " %s %lld (%.1f%%)%s", cat_names[k], (long long)r->total.cat[k],
			r->total.cycles ? 100.0 * (double)r->total.cat[k] / (double)r->total.cycles : 0.0,
			k + 1 < CAT_N ? "," : "\n");
	fprintf(out, "energy %.4g uJ (%.3g pJ/MAC, %.3g TOPS/W, EDP %.3g J s):", m.energy_pj * 1e-6, m.pj_per_mac,
		m.tops_per_w, m.edp_js);
	for (int k = 0; k < EN_N; k++)
		fprintf(out, " %s %.4g uJ%s", energy_part_names[k], m.part[k] * 1e-6, k + 1 < EN_N ? "," : "\n");
	fprintf(out, "SRAM bytes read/written:");
	for (int b = 0; b < SRAM_NBUF; b++)
		fprintf(out, " %s %lld/%lld%s", sram_buf_names[b], (long long)r->total.sram_read_bytes[b],
			(long long)r->total.sram_write_bytes[b], b + 1 < SRAM_NBUF ? "," : "\n");
	if (r->checks)
		fprintf(out, "functional: %lld outputs checked against a reference GEMM, %lld mismatches, max abs error %.6g "
			"(seed %llu; ideal memory)\n", (long long)r->check.outputs, (long long)r->check.mismatches,
			r->check.max_abs_error, (unsigned long long)c->opts->seed);
}

/* ---- files ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void report_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A number as JSON: counts exactly, metrics to 17 digits. */
static void field_num(FILE *f, const struct result_field *fd, int i, const struct result *r, const struct metrics *m)
{
	if (fd->kind == RF_COUNT)
		fprintf(f, "%lld", (long long)result_field_count(fd, i, r));
	else
		fprintf(f, "%.17g", result_field_value(fd, i, r, m));
}

/* The functional model's check: {"outputs": ..., "mismatches": ..., "max_abs_error": ...}. */
static void json_check(FILE *f, const struct run_check *ck)
{
	fprintf(f, "{\"outputs\": %lld, \"mismatches\": %lld, \"max_abs_error\": %.17g}", (long long)ck->outputs,
		(long long)ck->mismatches, ck->max_abs_error);
}

/* ck: the functional model's check of the layer or total, or NULL. */
static void json_result(FILE *f, const struct arch *a, bool ideal, const char *name, const char *type,
			const struct result *r, const struct run_check *ck, const char *indent)
{
	struct metrics m;
	report_metrics(a, r, ideal, &m);
	fprintf(f, "{\n%s  \"name\": ", indent);
	json_str(f, name);
	if (type) {
		fprintf(f, ",\n%s  \"type\": ", indent);
		json_str(f, type);
	}
	for (const struct result_field *fd = result_fields; fd->name; fd++) {
		if (!fd->reported)
			continue;
		fprintf(f, ",\n%s  \"%s\": ", indent, fd->name);
		if (!fd->parts) {
			field_num(f, fd, 0, r, &m);
			continue;
		}
		fputc('{', f);
		for (int i = 0; i < fd->n; i++) {
			fprintf(f, "%s\"%s\": ", i ? ", " : "", fd->parts[i]);
			field_num(f, fd, i, r, &m);
		}
		fputc('}', f);
	}
	if (ck) {
		fprintf(f, ",\n%s  \"functional\": ", indent);
		json_check(f, ck);
	}
	fprintf(f, "\n%s}", indent);
}

/* The value of config entry i (text as cfg_format gives it): numbers and booleans bare, the rest quoted. */
static void json_config_value(FILE *f, const struct cfg_schema *s, int i, const char *text)
{
	int type = s->e[i].key->type;
	char *end;
	if (type == CFG_BOOL ||
	    ((type == CFG_INT || type == CFG_AUTO || type == CFG_DOUBLE) && (strtod(text, &end), end != text && !*end)))
		fputs(text, f);
	else
		json_str(f, text);
}

/* Every resolved config key, nested like the YAML: {"array": {"rows": 256, ...}, ...}. */
static void json_config(FILE *f, const struct config *c)
{
	const struct cfg_schema *s = config_schema();
	const char *prev = "";
	int depth = 0;

	fputc('{', f);
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->e[i].name, *p, *dot;
		size_t common = 0;
		int keep = 0;
		char val[256];
		/* Close the sections this name leaves, then open the ones it enters. */
		for (size_t j = 0; prev[j] && prev[j] == name[j]; j++)
			if (prev[j] == '.')
				common = j + 1, keep++;
		for (; depth > keep; depth--)
			fprintf(f, "\n  %*s}", 2 * depth, "");
		fputs(i ? "," : "", f);
		for (p = name + common; (dot = strchr(p, '.')); p = dot + 1, depth++)
			fprintf(f, "\n  %*s\"%.*s\": {", 2 * (depth + 1), "", (int)(dot - p), p);
		fprintf(f, "\n  %*s\"%s\": ", 2 * (depth + 1), "", p);
		cfg_format(s, (int)i, &c->arch, val, sizeof val);
		json_config_value(f, s, (int)i, val);
		prev = name;
	}
	for (; depth > 0; depth--)
		fprintf(f, "\n  %*s}", 2 * depth, "");
	fprintf(f, "\n  }");
}

/* The memory's bandwidth in bytes per second as JSON, in buf: null for the ideal memory (unbounded). */
static const char *json_bandwidth(char *buf, size_t size, const struct arch *a)
{
	double bw = arch_hbm_bytes_per_s(a);
	if (isinf(bw))
		snprintf(buf, size, "null");
	else
		snprintf(buf, size, "%.17g", bw);
	return buf;
}

void report_json(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	const struct config *cfg = c->cfg;
	double peak = 2 * arch_peak_macs_per_s(a);
	char bw[40];

	fprintf(f, "{\n  \"version\": ");
	json_str(f, TPUSIM_VERSION);
	fprintf(f, ",\n  \"accelerator\": ");
	json_str(f, a->name);
	fprintf(f, ",\n  \"workload\": ");
	json_str(f, c->w->name);
	fprintf(f, ",\n  \"workload_file\": ");
	json_str(f, c->w->file);
	fprintf(f, ",\n  \"config_files\": [");
	for (int i = 0; i < cfg->nfiles; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, cfg->files[i]);
	}
	fprintf(f, "],\n  \"set\": {");
	for (int i = 0; i < cfg->nsets; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, cfg->sets[i].key);
		fputs(": ", f);
		json_config_value(f, config_schema(), cfg_find(config_schema(), cfg->sets[i].key), cfg->sets[i].value);
	}
	fprintf(f, "},\n  \"warnings\": [");
	{
		char lines[8][CONFIG_WARNING_MAX];
		int n = config_warnings(cfg, false, lines, 8);
		for (int i = 0; i < n; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, lines[i]);
		}
	}
	fprintf(f, "],\n  \"batch\": %lld,\n  \"dataflow\": \"%s\",\n  \"model\": \"%s\",\n  \"ideal_memory\": %s,\n"
		   "  \"array\": {\"rows\": %lld, \"cols\": %lld},\n  \"clock_ghz\": %.17g,\n"
		   "  \"peak_ops_per_s\": %.17g,\n  \"hbm_bytes_per_s\": %s,\n  \"ridge_ops_per_byte\": %.17g,\n"
		   "  \"config\": ",
		(long long)c->w->batch, array_dataflow_names[c->opts->dataflow], run_model_names[c->opts->model],
		c->opts->ideal_memory ? "true" : "false", (long long)a->array.rows, (long long)a->array.cols,
		a->clock_ghz, peak, json_bandwidth(bw, sizeof bw, a), peak / arch_hbm_bytes_per_s(a));
	json_config(f, cfg);
	if (c->run->checks) {
		fprintf(f, ",\n  \"functional\": ");
		json_check(f, &c->run->check);
		fprintf(f, ",\n  \"seed\": %llu", (unsigned long long)c->opts->seed);
	}
	fprintf(f, ",\n  \"total\": ");
	json_result(f, a, c->opts->ideal_memory, "total", NULL, &c->run->total, c->run->checks ? &c->run->check : NULL,
		    "  ");
	fprintf(f, ",\n  \"layers\": [");
	for (size_t i = 0; i < c->run->n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_result(f, a, c->opts->ideal_memory, c->w->layers[i].name, layer_type(c->w, i), &c->run->layers[i],
			    c->run->checks ? &c->run->checks[i] : NULL, "    ");
	}
	fprintf(f, "\n  ]\n}\n");
}

static void write_csv(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	fprintf(f, "layer,type");
	for (const struct result_field *fd = result_fields; fd->name; fd++) {
		for (int i = 0; fd->reported && i < fd->n; i++) {
			fputc(',', f);
			if (fd->parts)
				fprintf(f, fd->csv, fd->parts[i]);
			else
				fputs(fd->name, f);
		}
	}
	fputc('\n', f);
	for (size_t l = 0; l < c->run->n; l++) {
		const struct result *r = &c->run->layers[l];
		struct metrics m;
		report_metrics(a, r, c->opts->ideal_memory, &m);
		report_csv_str(f, c->w->layers[l].name);
		fprintf(f, ",%s", layer_type(c->w, l));
		for (const struct result_field *fd = result_fields; fd->name; fd++) {
			for (int i = 0; fd->reported && i < fd->n; i++) {
				fputc(',', f);
				field_num(f, fd, i, r, &m);
			}
		}
		fputc('\n', f);
	}
}

/* ---- SCALE-Sim's COMPUTE_REPORT.csv ---- */

/* v as Python prints a float (repr): the fewest digits that read back as v, "50.0", "1e-05". */
static const char *py_float(char *buf, size_t size, double v)
{
	char e[40];
	int p, exp10;
	if (!isfinite(v))
		return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
	if (v == 0)
		return signbit(v) ? "-0.0" : "0.0";
	for (p = 1; p < 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	snprintf(e, sizeof e, "%.*e", p - 1, v);
	exp10 = atoi(strchr(e, 'e') + 1);
	if (exp10 < -4 || exp10 >= 16) {
		snprintf(buf, size, "%s", e);
		return buf;
	}
	snprintf(buf, size, "%.*f", p - 1 - exp10 > 0 ? p - 1 - exp10 : 0, v);
	if (!strchr(buf, '.'))
		snprintf(buf + strlen(buf), size - strlen(buf), ".0");
	return buf;
}

/* One layer's folds as SCALE-Sim maps them (report.h): the folds, and the sums of their two ratios. */
struct scalesim_folds {
	double folds, mapped, util;
};

static void scalesim_op(const struct op *o, int df, int64_t R, int64_t C, struct scalesim_folds *f)
{
	int64_t sr = df == DF_OS ? o->m : o->k, sc = df == DF_IS ? o->m : o->n, t = df == DF_OS ? o->k : df == DF_IS ? o->n : o->m;
	double folds = (double)o->repeat * (double)((sr + R - 1) / R) * (double)((sc + C - 1) / C);
	double cycles = df == DF_OS ? (double)(R + C + t - 2) : (double)(2 * R + 2 * C + t - 3);
	double mapped = (double)o->repeat * (double)sr * (double)sc / (double)(R * C);
	f->folds += folds;
	f->mapped += mapped;
	f->util += mapped * (double)t / cycles;
}

void report_scalesim(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	const struct oplist *ops = c->ops;
	double pes = (double)arch_pes(a);
	size_t i = 0;
	SIM_ASSERT(ops);
	fputs("LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n", f);
	for (size_t l = 0; l < c->run->n; l++) {
		const struct result *r = &c->run->layers[l];
		struct scalesim_folds s = { 0, 0, 0 };
		char u[40], m[40], cu[40];
		/* A layer's ops follow the previous layer's (lower.h). */
		for (; i < ops->n && ops->v[i].layer == l; i++)
			if (ops->v[i].kind == OP_GEMM)
				scalesim_op(&ops->v[i], c->opts->dataflow, a->array.rows, a->array.cols, &s);
		fprintf(f, "%zu, %lld, %lld, %s, %s, %s,\n", l, (long long)r->cycles,
			(long long)(r->cycles > r->compute_cycles ? r->cycles - r->compute_cycles : 0),
			py_float(u, sizeof u, r->cycles ? 100.0 * (double)r->macs / ((double)r->cycles * pes) : 0.0),
			py_float(m, sizeof m, s.folds > 0 ? 100.0 * s.mapped / s.folds : 0.0),
			py_float(cu, sizeof cu, s.folds > 0 ? 100.0 * s.util / s.folds : 0.0));
	}
	SIM_ASSERT(i == ops->n);
}

/*
 * ---- the report directory ----
 *
 * DIR/layers.csv and DIR/summary.json must come from one run at every instant,
 * even when a run is killed or several runs write into DIR at once. POSIX
 * cannot replace two names in one step, so the pair lives in a generation
 * directory and one symbolic link says which generation is current:
 *
 *     DIR/layers.csv         -> .tpusim/current/layers.csv     (made once)
 *     DIR/summary.json       -> .tpusim/current/summary.json   (made once)
 *     DIR/.tpusim/current    -> gen-XXXXXX                     (the commit)
 *     DIR/.tpusim/gen-XXXXXX/{layers.csv,summary.json}
 *
 * A run writes its pair into a fresh gen-XXXXXX, holding flock(LOCK_EX) on
 * it while it works, and commits by renaming a new `current` link (made inside
 * its gen directory) over the old one. Every temporary name lives inside a
 * gen directory, so it goes with it. Cleanup removes each gen directory that
 * is not current and whose lock can be taken without waiting; it runs after
 * every run into DIR, so a killed run's leftovers go at the next run.
 */
#define REPORT_META ".tpusim"
#define REPORT_CURRENT "current"
#define REPORT_TMP "link.tmp"

static const char *const report_names[2] = { "layers.csv", "summary.json" };
#define REPORT_SCALESIM "COMPUTE_REPORT.csv"    /* with array.scalesim_compat, a third link like them */

/*
 * Test hook: with TPUSIM_TEST_PAUSE_COMMIT=step in the environment the
 * process stops itself (SIGSTOP) at that step of report_write, so that a test
 * can kill it exactly there. Steps: written (the pair is in its gen directory),
 * unlinked (an old DIR/summary.json was removed), linked (DIR/layers.csv is a
 * link, DIR/summary.json not yet), committed (current names the new gen),
 * cleanup (before old gen directories are removed).
 */
static void pause_at(const char *step)
{
	const char *want = getenv("TPUSIM_TEST_PAUSE_COMMIT");
	if (want && !strcmp(want, step))
		raise(SIGSTOP);
}

/* An input error "<path>: <what>, found <strerror(err)>", the path quoted. */
static int path_err(struct err *e, const char *path, const char *what, int err)
{
	char q[LIMIT_QUOTE_BUF];
	return err_input(e, "%s: %s, found %s", err_quote(q, sizeof q, path, LIMIT_PATH), what, strerror(err));
}

/* Writes fn's text to name in the directory dfd (a new file, mode 0644). */
static int write_file(int dfd, const char *dir, const char *name, void (*fn)(FILE *, const struct report_ctx *),
		      const struct report_ctx *c, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (fd < 0)
		return path_err(e, path, "expected to create the report", errno);
	fchmod(fd, 0644);
	if (!(f = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		return path_err(e, path, "expected to create the report", err);
	}
	fn(f, c);
	if (ferror(f) | (fclose(f) != 0))
		return fsx_write_error(e, "-o", path, errno);
	return 0;
}

/* Whether the link name in dfd reads target. */
static bool link_is(int dfd, const char *name, const char *target)
{
	char buf[256];
	ssize_t n = readlinkat(dfd, name, buf, sizeof buf - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

/* Puts a link name -> target into dfd in one step: made as REPORT_TMP in gfd, then renamed. */
static int put_link(int gfd, int dfd, const char *name, const char *target)
{
	unlinkat(gfd, REPORT_TMP, 0);
	if (symlinkat(target, gfd, REPORT_TMP) != 0)
		return -1;
	return renameat(gfd, REPORT_TMP, dfd, name);
}

/* The name current points at, in buf ("" if none). */
static const char *current_gen(int tfd, char *buf, size_t size)
{
	ssize_t n = readlinkat(tfd, REPORT_CURRENT, buf, size - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* Removes the gen directory name in tfd (its files; it holds no directories), whose lock the caller holds. */
static void remove_gen(int tfd, int gfd, const char *name)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(gfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(gfd, de->d_name, 0);
	closedir(d);
	unlinkat(tfd, name, AT_REMOVEDIR);
}

/*
 * Removes every gen directory that is neither current nor locked. A pass that
 * saw current change may have skipped a directory that a later commit made
 * old, so passes repeat until current stays the same over a whole pass.
 */
static void cleanup(int tfd)
{
	char before[256], after[256];
	for (int pass = 0; pass < 8; pass++) {
		DIR *d;
		struct dirent *de;
		int fd = dup(tfd);
		current_gen(tfd, before, sizeof before);
		if (fd < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			return;
		}
		while ((de = readdir(d))) {
			char cur[256];
			int gfd;
			if (strncmp(de->d_name, "gen-", 4) || !strcmp(de->d_name, before))
				continue;
			gfd = openat(tfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (gfd < 0)
				continue;
			/* Under the lock, current is read again: a gen that became current stays. */
			if (flock(gfd, LOCK_EX | LOCK_NB) == 0 && strcmp(current_gen(tfd, cur, sizeof cur), de->d_name))
				remove_gen(tfd, gfd, de->d_name);
			close(gfd);
		}
		closedir(d);
		if (!strcmp(current_gen(tfd, after, sizeof after), before))
			return;
	}
}

/*
 * A fresh gen directory in tfd, locked: its fd, and its name in name. A
 * cleanup may remove the directory between mkdtemp and flock (it is not yet
 * locked); then it has no links left and another is made.
 */
static int new_gen(const char *meta, int tfd, char *name, size_t size)
{
	char path[LIMIT_PATH_BUF];
	for (int tries = 0; tries < 100; tries++) {
		struct stat st;
		int gfd;
		snprintf(path, sizeof path, "%s/gen-XXXXXX", meta);
		if (!mkdtemp(path))
			return -1;
		snprintf(name, size, "%s", strrchr(path, '/') + 1);
		gfd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0)
			continue;
		if (flock(gfd, LOCK_EX) == 0 && fstat(gfd, &st) == 0 && st.st_nlink > 0) {
			fchmod(gfd, 0755);
			return gfd;
		}
		close(gfd);
	}
	errno = EAGAIN;
	return -1;
}

/*
 * Makes DIR/layers.csv and DIR/summary.json the links into current. Nothing
 * to do in the steady state. Otherwise (missing, files of an older tpusim,
 * other links) the order keeps every instant consistent: summary.json goes
 * first, then layers.csv is put, then summary.json, so that DIR shows the old
 * pair, one old file, one new file or the new pair, never two runs' files.
 */
static int put_links(int gfd, int dfd, const char *dir, struct err *e)
{
	char target[2][64], path[LIMIT_PATH_BUF];
	bool ok[2];
	for (int i = 0; i < 2; i++) {
		snprintf(target[i], sizeof target[i], REPORT_META "/" REPORT_CURRENT "/%s", report_names[i]);
		ok[i] = link_is(dfd, report_names[i], target[i]);
	}
	if (!ok[0]) {
		if (unlinkat(dfd, report_names[1], 0) != 0 && errno != ENOENT)
			goto fail1;
		ok[1] = false;
		pause_at("unlinked");
		if (put_link(gfd, dfd, report_names[0], target[0]) != 0)
			goto fail0;
		pause_at("linked");
	}
	if (!ok[1] && put_link(gfd, dfd, report_names[1], target[1]) != 0)
		goto fail1;
	return 0;
fail0:
	snprintf(path, sizeof path, "%s/%s", dir, report_names[0]);
	return path_err(e, path, "expected to link the report into place", errno);
fail1:
	snprintf(path, sizeof path, "%s/%s", dir, report_names[1]);
	return path_err(e, path, "expected to link the report into place", errno);
}

int report_write(const char *dir, const struct report_ctx *c, struct err *e)
{
	char path[8192], meta[8192], gen[64], link[128];
	int dfd = -1, tfd = -1, gfd = -1, rc = -1;
	bool made_dir = false, made_meta = false, committed = false;
	bool scalesim = c->cfg->arch.array.scalesim_compat;
	struct stat st;

	if (!*dir)
		return err_input(e, "-o: expected a directory path, found \"\"");
	if (strlen(dir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a directory path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(dir));
	snprintf(path, sizeof path, "%s", dir);
	if (fsx_mkdirs(path, &made_dir) != 0) {
		if (errno == ENOTDIR && stat(dir, &st) == 0)
			return err_input(e, "%s: expected a directory for the reports, found a file",
					 err_quote(meta, sizeof meta, dir, LIMIT_PATH));
		return path_err(e, dir, "expected a directory that can be created", errno);
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		path_err(e, dir, "expected a directory that can be opened", errno);
		goto out;
	}
	/* Nothing changes unless every name can be a link. */
	for (int i = 0; i < 2 + scalesim; i++) {
		const char *name = i < 2 ? report_names[i] : REPORT_SCALESIM;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(path, sizeof path, "%s/%s", dir, name);
			err_input(e, "%s: expected a file or nothing there, found a directory",
				  err_quote(meta, sizeof meta, path, LIMIT_PATH));
			goto out;
		}
	}
	snprintf(meta, sizeof meta, "%s/" REPORT_META, dir);
	if (mkdirat(dfd, REPORT_META, 0755) == 0)
		made_meta = true;
	else if (errno != EEXIST) {
		path_err(e, meta, "expected a directory that can be created", errno);
		goto out;
	}
	if ((tfd = openat(dfd, REPORT_META, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		path_err(e, meta, "expected a directory of tpusim's reports", errno);
		goto out;
	}
	if ((gfd = new_gen(meta, tfd, gen, sizeof gen)) < 0) {
		path_err(e, meta, "expected a writable directory", errno);
		goto out;
	}
	snprintf(path, sizeof path, "%s/%s", meta, gen);
	if (write_file(gfd, path, report_names[0], write_csv, c, e) < 0 ||
	    write_file(gfd, path, report_names[1], report_json, c, e) < 0 ||
	    (scalesim && write_file(gfd, path, REPORT_SCALESIM, report_scalesim, c, e) < 0))
		goto out;
	pause_at("written");
	/*
	 * The links first, still showing the old current (or nothing), so that a
	 * summary.json that is not a link cannot sit beside the new layers.csv.
	 * COMPUTE_REPORT.csv: a link into current with array.scalesim_compat;
	 * without, an old link goes before the commit, so that it never shows
	 * another run's report beside this run's pair.
	 */
	if (put_links(gfd, dfd, dir, e) < 0)
		goto out;
	if (scalesim != link_is(dfd, REPORT_SCALESIM, REPORT_META "/" REPORT_CURRENT "/" REPORT_SCALESIM) &&
	    (scalesim ? put_link(gfd, dfd, REPORT_SCALESIM, REPORT_META "/" REPORT_CURRENT "/" REPORT_SCALESIM)
		      : unlinkat(dfd, REPORT_SCALESIM, 0)) != 0) {
		snprintf(path, sizeof path, "%s/" REPORT_SCALESIM, dir);
		path_err(e, path, "expected to link the report into place", errno);
		goto out;
	}
	/* The commit: one rename of a link made inside the gen directory. */
	snprintf(link, sizeof link, "%s", gen);
	if (symlinkat(link, gfd, REPORT_TMP) != 0) {
		int err = errno;
		if (err == EPERM || err == EOPNOTSUPP)
			err_input(e, "%s: expected a file system that supports symbolic links (the reports are links), found %s",
				  err_quote(path, sizeof path, dir, LIMIT_PATH), strerror(err));
		else
			path_err(e, meta, "expected to link the report", err);
		goto out;
	}
	if (renameat(gfd, REPORT_TMP, tfd, REPORT_CURRENT) != 0) {
		snprintf(path, sizeof path, "%s/" REPORT_CURRENT, meta);
		path_err(e, path, "expected to commit the report", errno);
		goto out;
	}
	committed = true;
	pause_at("committed");
	rc = 0;
out:
	if (gfd >= 0) {
		if (!committed)
			remove_gen(tfd, gfd, gen);
		close(gfd);
	}
	if (tfd >= 0) {
		pause_at("cleanup");
		cleanup(tfd);
		close(tfd);
	}
	/* A failed run leaves no directory it made (unless another run now uses it). */
	if (rc < 0 && !committed) {
		if (made_meta)
			unlinkat(dfd, REPORT_META, AT_REMOVEDIR);
		if (made_dir)
			rmdir(dir);
	}
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* ---- compare ---- */

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
		fprintf(out, "layer,dataflow,stationary,streams,folds,utilization,cycles,cycles_ratio,ratio_to");
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
	for (size_t i = 0; i <= w->n; i++) {
		for (int j = 0; j < c->n; j++) {
			const struct result *r = i < w->n ? &c->runs[j].layers[i] : &c->runs[j].total;
			const struct result *b = i < w->n ? &c->runs[c->base].layers[i] : &c->runs[c->base].total;
			const struct compare_reuse *u = i < w->n ? &c->layers[j][i] : &c->total[j];
			const char *name = i < w->n ? w->layers[i].name : "total";
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
			report_csv_str(out, name);
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

void report_lower(FILE *out, const struct workload *w, const struct oplist *ops, const struct arch *a, bool csv)
{
	int64_t eb = array_elem_bytes(a->array.dtype);
	int64_t macs = 0, ngemm = 0, nvec = 0, velems = 0, bytes[3] = { 0 };
	char name[OP_NAME_MAX];

	if (csv)
		fprintf(out, "op,layer,kind,m,k,n,repeat,macs,a_role,a_bytes,b_role,b_bytes,c_bytes,vector_in_elements,"
			     "vector_out_elements,vector_lane_ops\n");
	else
		fprintf(out, "%s (batch %lld), %zu layers -> %zu ops; bytes at %lld B per element\n\n"
			     "%-28s %-9s %9s %9s %9s %7s %15s %-4s %12s %-4s %12s %12s\n",
			w->name, (long long)w->batch, w->n, ops->n, (long long)eb, "op", "kind", "M", "K", "N", "repeat",
			"MACs", "A", "A bytes", "B", "B bytes", "C bytes");
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		if (o->kind == OP_GEMM) {
			int64_t ab = o->a_elems * o->repeat * eb, bb = o->k * o->n * o->repeat * eb;
			int64_t cb = o->m * o->n * o->repeat * eb;
			const char *ar = o->a_weight ? "wt" : "act", *br = o->b_weight ? "wt" : "act";
			macs += op_macs(o);
			ngemm++;
			bytes[0] += ab, bytes[1] += bb, bytes[2] += cb;
			if (csv) {
				report_csv_str(out, op_name(o, name, sizeof name));
				fputc(',', out);
				report_csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",gemm,%lld,%lld,%lld,%lld,%lld,%s,%lld,%s,%lld,%lld,,,\n", (long long)o->m,
					(long long)o->k, (long long)o->n, (long long)o->repeat, (long long)op_macs(o),
					o->a_weight ? "weight" : "activation", (long long)ab,
					o->b_weight ? "weight" : "activation", (long long)bb, (long long)cb);
			} else {
				fprintf(out, "%-28.28s %-9s %9lld %9lld %9lld %7lld %15lld %-4s %12lld %-4s %12lld %12lld\n",
					op_name(o, name, sizeof name), "gemm", (long long)o->m, (long long)o->k, (long long)o->n,
					(long long)o->repeat, (long long)op_macs(o), ar, (long long)ab, br, (long long)bb,
					(long long)cb);
			}
		} else {
			nvec++;
			velems += o->out_elems;
			if (csv) {
				report_csv_str(out, op_name(o, name, sizeof name));
				fputc(',', out);
				report_csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",%s,,,,,0,,,,,,%lld,%lld,%lld\n", vector_kind_names[o->vec],
					(long long)o->in_elems, (long long)o->out_elems, (long long)o->lane_ops);
			} else {
				fprintf(out, "%-28.28s %-9s %9s %9s %9s %7s %15s in %lld elements, out %lld, %lld lane ops\n",
					op_name(o, name, sizeof name), vector_kind_names[o->vec], "", "", "", "", "", (long long)o->in_elems,
					(long long)o->out_elems, (long long)o->lane_ops);
			}
		}
	}
	if (!csv)
		fprintf(out, "\ntotal: %lld GEMM ops, %lld MACs (%.4g G); A %lld B, B %lld B, C %lld B; "
			     "%lld vector ops, %lld elements out\n",
			(long long)ngemm, (long long)macs, (double)macs / 1e9, (long long)bytes[0], (long long)bytes[1],
			(long long)bytes[2], (long long)nvec, (long long)velems);
}
