/*
 * report.c - summaries, CSV and JSON (see report.h).
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpusim.h"

void report_metrics(const struct arch *a, const struct result *r, bool ideal, struct metrics *m)
{
	double pes = (double)array_pes(&a->array);
	double bytes = (double)(r->hbm_read_bytes + r->hbm_write_bytes);
	double seconds = (double)r->cycles / (a->clock_ghz * 1e9);
	double peak = 2 * arch_peak_macs_per_s(a);

	m->ops = 2.0 * (double)r->macs;
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
	static const char *const models[] = { "analytic", "cycle" };
	static const char *const dtypes[] = { "int8", "bf16", "fp16", "fp32" };

	fprintf(out, "%s (batch %lld) on %s: %lldx%lld %s %s at %.3g GHz, %.4g GB/s; %s model%s\n", w->name,
		(long long)w->batch, a->name, (long long)a->array.rows, (long long)a->array.cols,
		array_dataflow_names[c->opts->dataflow], dtypes[a->array.dtype], a->clock_ghz, a->hbm.gbps,
		models[c->opts->model], c->opts->ideal_memory ? ", ideal memory" : "");
	fprintf(out, "peak %.2f TOPS, HBM %.4g GB/s, ridge point %.1f ops/B\n\n", peak / 1e12, a->hbm.gbps,
		peak / arch_hbm_bytes_per_s(a));
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

static void csv_str(FILE *f, const char *s)
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

static void json_result(FILE *f, const struct arch *a, bool ideal, const char *name, const char *type,
			const struct result *r, const char *indent)
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

void report_json(FILE *f, const struct report_ctx *c)
{
	const struct arch *a = &c->cfg->arch;
	const struct config *cfg = c->cfg;
	static const char *const models[] = { "analytic", "cycle" };
	double peak = 2 * arch_peak_macs_per_s(a);

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
		   "  \"peak_ops_per_s\": %.17g,\n  \"hbm_bytes_per_s\": %.17g,\n  \"ridge_ops_per_byte\": %.17g,\n"
		   "  \"config\": ",
		(long long)c->w->batch, array_dataflow_names[c->opts->dataflow], models[c->opts->model],
		c->opts->ideal_memory ? "true" : "false", (long long)a->array.rows, (long long)a->array.cols,
		a->clock_ghz, peak, arch_hbm_bytes_per_s(a), peak / arch_hbm_bytes_per_s(a));
	json_config(f, cfg);
	fprintf(f, ",\n  \"total\": ");
	json_result(f, a, c->opts->ideal_memory, "total", NULL, &c->run->total, "  ");
	fprintf(f, ",\n  \"layers\": [");
	for (size_t i = 0; i < c->run->n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_result(f, a, c->opts->ideal_memory, c->w->layers[i].name, layer_type(c->w, i), &c->run->layers[i], "    ");
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
		csv_str(f, c->w->layers[l].name);
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

/* Writes one file to a temporary name in dir; *tmp receives the name. */
static int write_tmp(const char *dir, const char *base, void (*fn)(FILE *, const struct report_ctx *),
		     const struct report_ctx *c, char *tmp, size_t size, struct err *e)
{
	int fd;
	FILE *f;
	snprintf(tmp, size, "%s/.%s.XXXXXX", dir, base);
	fd = mkstemp(tmp);
	if (fd < 0)
		return err_input(e, "%s: expected a writable directory, found %s", dir, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return err_input(e, "%s: expected a writable directory, found %s", dir, strerror(errno));
	}
	fn(f, c);
	if (ferror(f) | (fclose(f) != 0)) {
		unlink(tmp);
		return err_input(e, "%s/%s: expected to write the report, found %s", dir, base, strerror(errno));
	}
	chmod(tmp, 0644);
	return 0;
}

int report_write(const char *dir, const struct report_ctx *c, struct err *e)
{
	static const char *const names[2] = { "layers.csv", "summary.json" };
	char tmp[2][8192], dst[2][8192];
	struct stat st;
	bool made = false;

	if (strlen(dir) > 4000)
		return err_input(e, "-o: expected a directory path of at most 4000 bytes, found %zu", strlen(dir));
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return err_input(e, "%s: expected a directory for the reports, found a file", dir);
	} else if (mkdir(dir, 0755) != 0) {
		return err_input(e, "%s: expected a directory that can be created, found %s", dir, strerror(errno));
	} else {
		made = true;
	}
	/* Nothing is renamed unless both files can be. */
	for (int i = 0; i < 2; i++) {
		snprintf(dst[i], sizeof dst[i], "%s/%s", dir, names[i]);
		if (stat(dst[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			err_input(e, "%s: expected a file or nothing there, found a directory", dst[i]);
			goto fail;
		}
	}
	if (write_tmp(dir, names[0], write_csv, c, tmp[0], sizeof tmp[0], e) < 0)
		goto fail;
	if (write_tmp(dir, names[1], report_json, c, tmp[1], sizeof tmp[1], e) < 0) {
		unlink(tmp[0]);
		goto fail;
	}
	if (rename(tmp[0], dst[0]) != 0 || rename(tmp[1], dst[1]) != 0) {
		int err = errno;
		unlink(tmp[0]);
		unlink(tmp[1]);
		err_input(e, "%s: expected to rename the reports into place, found %s", dir, strerror(err));
		goto fail;
	}
	return 0;
fail:
	if (made)
		rmdir(dir);
	return -1;
}

void report_compare(FILE *out, const struct config *cfg, const struct workload *w, const struct run *runs,
		    const int *dataflows, int n, bool csv)
{
	if (csv) {
		fprintf(out, "layer,dataflow,cycles");
		for (int k = 0; k < CAT_N; k++)
			fprintf(out, ",cycles_%s", cat_names[k]);
		for (int b = 0; b < SRAM_NBUF; b++)
			fprintf(out, ",sram_%s_read_bytes", sram_buf_names[b]);
		fprintf(out, ",hbm_read_bytes,hbm_write_bytes,energy_pj\n");
	} else {
		fprintf(out, "%s on %s: %lldx%lld, %s\n\n%-24s %-3s %13s", w->name, cfg->arch.name,
			(long long)cfg->arch.array.rows, (long long)cfg->arch.array.cols, "dataflows compared", "layer", "df",
			"cycles");
		for (int k = 0; k < CAT_N; k++)
			fprintf(out, " %11s", cat_names[k]);
		fprintf(out, " %12s %12s %12s %12s %12s %12s\n", "SRAM W rd B", "SRAM I rd B", "SRAM O rd B", "HBM rd B",
			"HBM wr B", "energy uJ");
	}
	for (size_t i = 0; i <= w->n; i++) {
		for (int j = 0; j < n; j++) {
			const struct result *r = i < w->n ? &runs[j].layers[i] : &runs[j].total;
			const char *name = i < w->n ? w->layers[i].name : "total";
			struct metrics m;
			report_metrics(&cfg->arch, r, false, &m);
			if (csv) {
				csv_str(out, name);
				fprintf(out, ",%s,%lld", array_dataflow_names[dataflows[j]], (long long)r->cycles);
				for (int k = 0; k < CAT_N; k++)
					fprintf(out, ",%lld", (long long)r->cat[k]);
				for (int b = 0; b < SRAM_NBUF; b++)
					fprintf(out, ",%lld", (long long)r->sram_read_bytes[b]);
				fprintf(out, ",%lld,%lld,%.17g\n", (long long)r->hbm_read_bytes, (long long)r->hbm_write_bytes,
					m.energy_pj);
				continue;
			}
			fprintf(out, "%-24.24s %-3s %13lld", j ? "" : name, array_dataflow_names[dataflows[j]],
				(long long)r->cycles);
			for (int k = 0; k < CAT_N; k++)
				fprintf(out, " %11lld", (long long)r->cat[k]);
			fprintf(out, " %12lld %12lld %12lld %12lld %12lld %12.2f\n", (long long)r->sram_read_bytes[0],
				(long long)r->sram_read_bytes[1], (long long)r->sram_read_bytes[2], (long long)r->hbm_read_bytes,
				(long long)r->hbm_write_bytes, m.energy_pj * 1e-6);
		}
	}
}

void report_lower(FILE *out, const struct workload *w, const struct oplist *ops, const struct arch *a, bool csv)
{
	int64_t eb = array_elem_bytes(a->array.dtype);
	int64_t macs = 0, ngemm = 0, nvec = 0, velems = 0, bytes[3] = { 0 };

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
				csv_str(out, o->name);
				fputc(',', out);
				csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",gemm,%lld,%lld,%lld,%lld,%lld,%s,%lld,%s,%lld,%lld,,,\n", (long long)o->m,
					(long long)o->k, (long long)o->n, (long long)o->repeat, (long long)op_macs(o),
					o->a_weight ? "weight" : "activation", (long long)ab,
					o->b_weight ? "weight" : "activation", (long long)bb, (long long)cb);
			} else {
				fprintf(out, "%-28.28s %-9s %9lld %9lld %9lld %7lld %15lld %-4s %12lld %-4s %12lld %12lld\n",
					o->name, "gemm", (long long)o->m, (long long)o->k, (long long)o->n,
					(long long)o->repeat, (long long)op_macs(o), ar, (long long)ab, br, (long long)bb,
					(long long)cb);
			}
		} else {
			nvec++;
			velems += o->out_elems;
			if (csv) {
				csv_str(out, o->name);
				fputc(',', out);
				csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",%s,,,,,0,,,,,,%lld,%lld,%lld\n", vector_kind_names[o->vec],
					(long long)o->in_elems, (long long)o->out_elems, (long long)o->lane_ops);
			} else {
				fprintf(out, "%-28.28s %-9s %9s %9s %9s %7s %15s in %lld elements, out %lld, %lld lane ops\n",
					o->name, vector_kind_names[o->vec], "", "", "", "", "", (long long)o->in_elems,
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
