/*
 * report_text.c - the terminal summary of a run (see report.h).
 */
#include "report.h"
#include "fold.h"
#include "train.h"

#include <math.h>

/* One row of the summary table: the fields with a terminal heading, in table order. */
static void summary_row(FILE *out, const struct report_ctx *c, const char *name, const char *type,
			const char *phase, const struct result *x)
{
	struct metrics m;
	report_metrics(&c->cfg->arch, x, c->opts->ideal_memory, &m);
	fprintf(out, "%-24.24s %-9s", name, type);
	if (phase)
		fprintf(out, " %-9s", phase);
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

/* The headings of the summary table; a training step's rows say their phase. */
static void summary_head(FILE *out, bool phase)
{
	fprintf(out, "%-24s %-9s", "layer", "type");
	if (phase)
		fprintf(out, " %-9s", "phase");
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
	bool train = a->train.enabled;
	summary_head(out, train);
	for (size_t i = 0; i < r->n; i++) {
		const struct layer *ly = run_row_layer(r, w, i);
		summary_row(out, c, ly->name, layer_type_names[ly->type],
			    train ? step_phase_names[run_row_phase(c->run, i)] : NULL, &r->layers[i]);
	}
	summary_row(out, c, "total", "", train ? "" : NULL, &r->total);
	report_metrics(a, &r->total, c->opts->ideal_memory, &m);
	int64_t stages = run_stages(r);
	if (stages > 1)
		fprintf(out, "\n%lld cycles of %lld stages' chips = %.4g ms a step at %.3g GHz; %lld MACs; utilization "
			"%.2f%%; %.3f TOPS achieved a chip\n", (long long)r->total.cycles, (long long)stages,
			(double)r->total.cycles / (double)stages / (a->clock_ghz * 1e6), a->clock_ghz,
			(long long)r->total.macs, 100 * m.utilization, m.achieved_ops_per_s / 1e12);
	else
		fprintf(out, "\n%lld cycles = %.4g ms at %.3g GHz; %lld MACs; utilization %.2f%%; %.3f TOPS achieved\n",
			(long long)r->total.cycles, (double)r->total.cycles / (a->clock_ghz * 1e6), a->clock_ghz,
			(long long)r->total.macs, 100 * m.utilization, m.achieved_ops_per_s / 1e12);
	if (train) {
		struct run_step st;
		run_step_of(r, c->cfg, w, &st);
		fprintf(out, "training step (%s, remat %s, %lld microbatch%s): %.4g ms;", train_optimizer_names[a->train.optimizer],
			train_remat_names[a->train.remat], (long long)a->train.microbatches,
			a->train.microbatches == 1 ? "" : "es", st.seconds * 1e3);
		int phases = stages > 1 ? PH_N : PH_BUBBLE;     /* a bubble only in a pipeline */
		for (int k = 0; k < phases; k++)
			fprintf(out, " %s %.1f%%%s", step_phase_names[k],
				r->total.cycles ? 100.0 * (double)st.cycles[k] / (double)r->total.cycles : 0.0, k + 1 < phases ? "," : "\n");
		fprintf(out, "%.4g samples/s", st.samples_per_s);
		if (st.tokens_per_sample)
			fprintf(out, ", %.4g tokens/s", st.tokens_per_s);
		fprintf(out, "; MFU %.2f%%, HFU %.2f%% (of the %s peak); model FLOPs %.4g, recomputed %.4g\n", 100 * st.mfu,
			100 * st.hfu, array_dtype_names[a->array.dtype], st.model_flops, st.hardware_flops - st.model_flops);
		int64_t losses = c->ops ? train_losses(c->ops, a->train.microbatches) : 1;
		if (losses > 1)
			fprintf(out, "note: the workload has %lld outputs (activations nobody reads); each gets a loss, and its "
				"gradient flows back from there\n", (long long)losses);
	}
	if (r->folded_keep)
		fprintf(out, "folded: each block of %lld or more alike instances ran its first %lld and its last; the rest took "
			"the %lldth's results, steady within %g%% of the one before (--no-reuse runs every one)\n",
			(long long)(2 * r->folded_keep), (long long)(r->folded_keep - 1), (long long)(r->folded_keep - 1),
			100 * FOLD_TOL);
	fprintf(out, "cycles by category:");
	for (int k = 0; k < CAT_N; k++)
		fprintf(out, " %s %lld (%.1f%%)%s", cat_names[k], (long long)r->total.cat[k],
			r->total.cycles ? 100.0 * (double)r->total.cat[k] / (double)r->total.cycles : 0.0,
			k + 1 < CAT_N ? "," : "\n");
	if (r->total.collective_ops || ici_chips(&a->pod) > 1) {
		/* The pod: one representative chip's view of its links. */
		double ms = 1e3 / (a->clock_ghz * 1e9) / (double)stages;    /* a chip's */
		fprintf(out, "pod: %lld x %lld x %lld", (long long)a->pod.dim[0], (long long)a->pod.dim[1],
			(long long)a->pod.dim[2]);
		if (a->pod.slices > 1)
			fprintf(out, " x %lld slices", (long long)a->pod.slices);
		fprintf(out, " (%lld chips); collectives %lld, on the links %.4g ms, exposed %.4g ms; links busy:",
			(long long)ici_chips(&a->pod), (long long)r->total.collective_ops, (double)r->total.comm_cycles * ms,
			(double)r->total.cat[CAT_EXPOSED_COMM] * ms);
		for (int x = 0; x < ICI_NAXES; x++)
			fprintf(out, " %s %.1f%%%s", ici_axis_names[x], 100 * m.link_utilization[x], x + 1 < ICI_NAXES ? "," : "\n");
	}
	if (stages > 1) {
		/* The bubble rows are the last, one a stage, each at its stage's first layer. */
		fprintf(out, "pipeline: %lld stages (%s, %lld microbatches), bubble %.1f%% of the chips' time; a stage's "
			"bubble and first layer:", (long long)stages, pipe_schedule_names[a->mesh.schedule],
			(long long)(a->train.enabled ? a->train.microbatches : a->mesh.microbatches),
			r->total.cycles ? 100.0 * (double)r->total.cat[CAT_BUBBLE] / (double)r->total.cycles : 0.0);
		for (int64_t s = 0; s < stages; s++) {
			size_t i = r->n - (size_t)stages + (size_t)s;
			fprintf(out, " %.1f%% %s%s", r->total.cycles ? 100.0 * (double)stages * (double)r->layers[i].cycles /
				(double)r->total.cycles : 0.0, run_row_layer(r, w, i)->name, s + 1 < stages ? "," : "\n");
		}
	}
	fprintf(out, "energy %.4g uJ (%.3g pJ/MAC, %.3g TOPS/W, EDP %.3g J s):", m.energy_pj * 1e-6, m.pj_per_mac,
		m.tops_per_w, m.edp_js);
	for (int k = 0; k < EN_N; k++)
		fprintf(out, " %s %.4g uJ%s", energy_part_names[k], m.part[k] * 1e-6, k + 1 < EN_N ? "," : "\n");
	fprintf(out, "power %.4g W average; %.4g TOPS/mm2\n", m.power_w, m.tops_per_mm2);
	report_area(out, a, "");
	if (r->hbm.capacity > 0) {
		char parts[400], t[40], cap[40];
		fprintf(out, "HBM: the run keeps %s (%s) of %s%s\n", run_bytes_text(r->hbm.total, t, sizeof t),
			run_hbm_parts(&r->hbm, parts, sizeof parts), run_bytes_text(r->hbm.capacity, cap, sizeof cap),
			r->hbm.fits ? "" : ": it does not fit (run anyway: sim.allow_hbm_overflow)");
	}
	fprintf(out, "SRAM bytes read/written:");
	for (int b = 0; b < SRAM_NBUF; b++)
		fprintf(out, " %s %lld/%lld%s", sram_buf_names[b], (long long)r->total.sram_read_bytes[b],
			(long long)r->total.sram_write_bytes[b], b + 1 < SRAM_NBUF ? "," : "\n");
	if (r->checks) {
		char seed[80] = "every operand from a .npy file: the seed draws nothing";
		if (r->drew)
			snprintf(seed, sizeof seed, "seed %llu", (unsigned long long)c->opts->seed);
		fprintf(out, "functional: %lld outputs checked against a reference GEMM, %lld mismatches, max abs error %.6g "
			"(%s; ideal memory)\n", (long long)r->check.outputs, (long long)r->check.mismatches,
			r->check.max_abs_error, seed);
	}
}
