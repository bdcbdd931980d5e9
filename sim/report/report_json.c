/*
 * report_json.c - summary.json (see report.h).
 */
#include "report.h"
#include "train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpusim.h"

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

/* The functional model's check: {"outputs": ..., "mismatches": ..., "max_abs_error": ...}. */
static void json_check(FILE *f, const struct run_check *ck)
{
	fprintf(f, "{\"outputs\": %lld, \"mismatches\": %lld, \"max_abs_error\": %.17g}", (long long)ck->outputs,
		(long long)ck->mismatches, ck->max_abs_error);
}

/*
 * ck: the functional model's check of the layer or total, or NULL. mc: the
 * class of the memory the cycle engine ran, whose counters r holds, or NULL
 * (no memory was simulated).
 */
static void json_result(FILE *f, const struct arch *a, bool ideal, const char *name, const char *type,
			const char *phase, const struct result *r, const struct run_check *ck, const struct mem_ops *mc,
			const char *indent)
{
	struct metrics m;
	report_metrics(a, r, ideal, &m);
	fprintf(f, "{\n%s  \"name\": ", indent);
	json_str(f, name);
	if (type) {
		fprintf(f, ",\n%s  \"type\": ", indent);
		json_str(f, type);
	}
	if (phase)
		fprintf(f, ",\n%s  \"phase\": \"%s\"", indent, phase);
	for (const struct result_field *fd = result_fields; fd->name; fd++) {
		if (!fd->reported)
			continue;
		fprintf(f, ",\n%s  \"%s\": ", indent, fd->name);
		if (!fd->parts) {
			report_field_num(f, fd, 0, r, &m);
			continue;
		}
		fputc('{', f);
		for (int i = 0; i < fd->n; i++) {
			fprintf(f, "%s\"%s\": ", i ? ", " : "", fd->parts[i]);
			report_field_num(f, fd, i, r, &m);
		}
		fputc('}', f);
	}
	if (ck) {
		fprintf(f, ",\n%s  \"functional\": ", indent);
		json_check(f, ck);
	}
	if (mc) {
		fprintf(f, ",\n%s  \"memory\": {\"model\": ", indent);
		json_str(f, mc->name);
		for (int i = 0; mem_counter_at(mc, i); i++)
			fprintf(f, ", \"%s\": %lld", mem_counter_at(mc, i)->name, (long long)r->mem_counts[i]);
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
		int n = config_warnings(cfg, run_has_ports(c->opts), false, lines, 8);
		for (int i = 0; i < n; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, lines[i]);
		}
	}
	fprintf(f, "],\n  \"batch\": %lld,\n  \"dataflow\": \"%s\",\n  \"model\": \"%s\",\n  \"folded_instances\": %lld,\n"
		   "  \"ideal_memory\": %s,\n"
		   "  \"array\": {\"rows\": %lld, \"cols\": %lld},\n  \"clock_ghz\": %.17g,\n"
		   "  \"peak_ops_per_s\": %.17g,\n  \"hbm_bytes_per_s\": %s,\n  \"ridge_ops_per_byte\": %.17g,\n"
		   "  \"config\": ",
		(long long)c->w->batch, array_dataflow_names[c->opts->dataflow], run_model_names[c->opts->model],
		(long long)(c->run->folded_keep ? c->run->folded_keep - 1 : 0), c->opts->ideal_memory ? "true" : "false", (long long)a->array.rows, (long long)a->array.cols,
		a->clock_ghz, peak, json_bandwidth(bw, sizeof bw, a), peak / arch_hbm_bytes_per_s(a));
	json_config(f, cfg);
	{
		double part[AR_N], die = arch_area_mm2(a, part);
		fprintf(f, ",\n  \"area_mm2\": %.17g,\n  \"area_mm2_by_component\": {", die);
		for (int k = 0; k < AR_N; k++)
			fprintf(f, "%s\"%s\": %.17g", k ? ", " : "", area_part_names[k], part[k]);
		fprintf(f, "},\n  \"peak_power_w\": %.17g,\n  \"idle_power_w\": %.17g", result_peak_power_w(a),
			arch_idle_w(a));
	}
	{
		const struct run_hbm *h = &c->run->hbm;
		fprintf(f, ",\n  \"hbm_bytes_needed\": {");
		for (int k = 0; k < NEED_N; k++)
			fprintf(f, "%s\"%s\": %.17g", k ? ", " : "", hbm_need_names[k], h->bytes[k]);
		fprintf(f, ", \"total\": %.17g},\n  \"hbm_capacity_bytes\": %.17g,\n  \"fits_hbm\": %s", h->total,
			h->capacity, h->fits ? "true" : "false");
	}
	{
		const struct train_params *tp = &a->train;
		struct run_step st;
		run_step_of(c->run, cfg, c->w, &st);
		fprintf(f, ",\n  \"train\": %s,\n  \"step_time_s\": %.17g,\n  \"samples_per_s\": %.17g,\n"
			   "  \"tokens_per_sample\": %lld,\n  \"tokens_per_s\": %.17g,\n  \"model_flops\": %.17g,\n"
			   "  \"hardware_flops\": %.17g,\n  \"mfu\": %.17g,\n  \"hfu\": %.17g,\n  \"mfu_dtype\": \"%s\",\n"
			   "  \"cycles_by_phase\": {", tp->enabled ? "true" : "false", st.seconds, st.samples_per_s,
			(long long)st.tokens_per_sample, st.tokens_per_s, st.model_flops, st.hardware_flops, st.mfu, st.hfu,
			array_dtype_names[a->array.dtype]);
		for (int k = 0; k < PH_N; k++)
			fprintf(f, "%s\"%s\": %lld", k ? ", " : "", step_phase_names[k], (long long)st.cycles[k]);
		fprintf(f, "},\n  \"macs_by_phase\": {");
		for (int k = 0; k < PH_N; k++)
			fprintf(f, "%s\"%s\": %lld", k ? ", " : "", step_phase_names[k], (long long)st.macs[k]);
		fputc('}', f);
		if (tp->enabled && c->ops)
			fprintf(f, ",\n  \"saved_activation_bytes\": %.17g,\n  \"optimizer_state_bytes_per_param\": %d,\n"
				   "  \"losses\": %lld",
				(double)train_saved_elems(c->ops, tp->microbatches) * array_elem_bytes(a->array.dtype),
				train_state_bytes(tp, array_elem_bytes(a->array.dtype)),
				(long long)train_losses(c->ops, tp->microbatches));
	}
	if (c->run->checks) {
		fprintf(f, ",\n  \"functional\": ");
		json_check(f, &c->run->check);
		fprintf(f, ",\n  \"seed\": %llu", (unsigned long long)c->opts->seed);
	}
	const struct mem_ops *mc = c->opts->model == MODEL_CYCLE ? mem_model(&a->hbm, c->opts->ideal_memory) : NULL;
	fprintf(f, ",\n  \"total\": ");
	json_result(f, a, c->opts->ideal_memory, "total", NULL, NULL, &c->run->total, c->run->checks ? &c->run->check : NULL,
		    mc, "  ");
	fprintf(f, ",\n  \"layers\": [");
	for (size_t i = 0; i < c->run->n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		const struct layer *ly = run_row_layer(c->run, c->w, i);
		json_result(f, a, c->opts->ideal_memory, ly->name, layer_type_names[ly->type],
			    step_phase_names[run_row_phase(c->run, i)], &c->run->layers[i],
			    c->run->checks ? &c->run->checks[i] : NULL, mc, "    ");
	}
	fprintf(f, "\n  ]\n}\n");
}
