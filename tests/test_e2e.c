/*
 * test_e2e.c - `tpusim run` on every preset and every shipped workload, and the
 * invariants every report must keep: cycles >= MACs / PEs, utilization in
 * (0, 1], bytes > 0, and the layers' cycles summing to the total's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tests.h"
#include "ydoc.h"

static const char *const presets[] = {
	"tpu_v1", "tpu_v4_mxu", "gemmini", "edge_32x32", "lab_4x4", "tpu_v4", "tpu_v4i", "tpu_v5e", "tpu_v5p", "tpu_v6e",
	"tpu_v7",
};
static const char *const workloads[] = {
	"configs/workloads/resnet50.yaml", "configs/workloads/mobilenet_v2.yaml", "configs/workloads/bert_base.yaml",
	"configs/workloads/llm7b_prefill.yaml", "configs/workloads/llm7b_decode.yaml", "configs/workloads/mlp.yaml",
	"configs/workloads/vit_b16.yaml", "configs/workloads/gpt2_decode.yaml",
	"traces/alexnet.csv", "traces/gemm_example.csv",
};
#define NW (int)(sizeof workloads / sizeof *workloads)

/*
 * The golden totals (tests/golden/presets.csv, written by scripts/golden.py
 * before the middle of the simulator was re-cut): every number a refactoring
 * must keep. A change that moves one on purpose regenerates the file and says
 * which numbers moved and why.
 */
static void check_golden(const char *preset, const char *wl, const char *model, const char *df,
			 const struct ynode *root)
{
	const struct ynode *total = th_json_at(root, "total");
	static const char *const ints[] = { "cycles", "hbm_read_bytes", "hbm_write_bytes", "folds", NULL };
	char key[512], col[64], path[128], *text = th_slurp("tests/golden/presets.csv");
	struct th_csv *g = th_csv("tests/golden/presets.csv", text);
	size_t row = g->rows;
	snprintf(key, sizeof key, "%s,%s,%s,%s", preset, wl, model, df);
	for (size_t r = 0; r < g->rows; r++)
		if (!strcmp(th_csv_get(g, r, "preset"), preset) && !strcmp(th_csv_get(g, r, "workload"), wl) &&
		    !strcmp(th_csv_get(g, r, "model"), model) && !strcmp(th_csv_get(g, r, "dataflow"), df))
			row = r;
	ck_assert_msg(row < g->rows, "no golden row for %s", key);
	/* Every column after the four of the key is checked: none may be left unread. */
	size_t checked = 4;
	for (int i = 0; ints[i]; i++, checked++)
		ck_assert_msg(th_csv_int(g, row, ints[i]) == th_json_int(total, ints[i]), "%s: %s: golden %lld, now %lld",
			      key, ints[i], (long long)th_csv_int(g, row, ints[i]), (long long)th_json_int(total, ints[i]));
	for (int k = 0; cat_names[k]; k++, checked++) {
		snprintf(col, sizeof col, "cycles_%s", cat_names[k]);
		snprintf(path, sizeof path, "cycles_by_category.%s", cat_names[k]);
		ck_assert_msg(th_csv_int(g, row, col) == th_json_int(total, path), "%s: %s: golden %lld, now %lld", key, col,
			      (long long)th_csv_int(g, row, col), (long long)th_json_int(total, path));
	}
	for (int rw = 0; rw < 2; rw++)
		for (int b = 0; b < SRAM_NBUF; b++, checked++) {
			snprintf(col, sizeof col, "sram_%s_%s_bytes", sram_buf_names[b], rw ? "write" : "read");
			snprintf(path, sizeof path, "%s.%s", rw ? "sram_write_bytes" : "sram_read_bytes", sram_buf_names[b]);
			ck_assert_msg(th_csv_int(g, row, col) == th_json_int(total, path), "%s: %s: golden %lld, now %lld",
				      key, col, (long long)th_csv_int(g, row, col), (long long)th_json_int(total, path));
		}
	double energy = th_csv_num(g, row, "energy_pj"), now = th_json_num(total, "energy_pj");
	checked++;
	ck_assert_msg(fabs(energy - now) <= 1e-9 * energy, "%s: energy_pj: golden %.17g, now %.17g", key, energy, now);
	double area = th_csv_num(g, row, "area_mm2"), area_now = th_json_num(root, "area_mm2");
	checked++;
	ck_assert_msg(fabs(area - area_now) <= 1e-9 * area, "%s: area_mm2: golden %.17g, now %.17g", key, area, area_now);
	ck_assert_uint_eq(checked, g->cols);
	th_csv_free(g);
	free(text);
}

/* Runs one model on one pair and checks the report; returns the total folds. */
static long long check_run(const char *preset, const char *wl, const char *model, const char *df)
{
	char cfg[256], *dir = th_tmpdir(), path[4200], *out, *err, *csv, *line, *save = NULL;
	long long folds;
	long long pes, sum = 0, macs_sum = 0, layers = 0;
	struct config c;
	int rc;

	snprintf(cfg, sizeof cfg, "configs/%s.yaml", preset);
	th_config(&c, preset, NULL);
	pes = arch_pes(&c.arch);
	const char *argv[] = { "run", "-c", cfg, "-w", wl, "-o", dir, "--model", model, "--dataflow", df, NULL };
	rc = th_cli(".", argv, &out, &err);
	ck_assert_msg(rc == 0, "%s on %s (%s, %s): exit %d: %s", wl, preset, model, df, rc, err);
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(strstr(out, "total"));

	snprintf(path, sizeof path, "%s/layers.csv", dir);
	csv = th_slurp(path);
	struct th_csv *lc = th_csv("layers.csv", csv);
	line = strtok_r(csv, "\n", &save);
	/* The columns, as README documents them: the fields of stats.c's table, in its order. */
	ck_assert_str_eq(line, "layer,type,phase,macs,cycles,compute_cycles,memory_cycles,utilization,cycles_compute,"
			       "cycles_weights,cycles_weight_shift,cycles_inputs,cycles_outputs,cycles_vector,cycles_fill_drain,"
			       "cycles_op_fixed,cycles_exposed_comm,cycles_bubble,comm_cycles,link_x_bytes,link_y_bytes,link_z_bytes,link_dcn_bytes,"
			       "link_x_utilization,link_y_utilization,link_z_utilization,link_dcn_utilization,"
			       "hbm_read_bytes,"
			       "hbm_write_bytes,spill_bytes,bus_bytes,ops,arithmetic_intensity,achieved_ops_per_s,attainable_ops_per_s,folds,split_m_ops,split_n_ops,"
			       "sram_weights_read_bytes,sram_inputs_read_bytes,sram_outputs_read_bytes,"
			       "sram_weights_write_bytes,sram_inputs_write_bytes,sram_outputs_write_bytes,energy_pj,"
			       "energy_mac_pj,energy_array_pj,energy_sram_weights_pj,energy_sram_inputs_pj,"
			       "energy_sram_outputs_pj,energy_hbm_pj,energy_leakage_pj,pj_per_mac,tops_per_w,"
			       "power_w,tops_per_mm2,edp_joule_seconds");
	/* The columns by name, so that the checks below say what they read. */
	const char *const *cols = (const char *const *)lc->cell;
	int ncols = (int)lc->cols;
	for (size_t r = 0; r < lc->rows; r++) {
		const char *const *fld = cols + (r + 1) * lc->cols;
		const char *name = fld[0];
		long long macs = th_csv_int(lc, r, "macs"), cycles = th_csv_int(lc, r, "cycles");
		long long comp = th_csv_int(lc, r, "compute_cycles"), rd = th_csv_int(lc, r, "hbm_read_bytes");
		long long wr = th_csv_int(lc, r, "hbm_write_bytes"), spill = th_csv_int(lc, r, "spill_bytes");
		double util = th_csv_num(lc, r, "utilization"), ops = th_csv_num(lc, r, "ops");
		double ach = th_csv_num(lc, r, "achieved_ops_per_s"), att = th_csv_num(lc, r, "attainable_ops_per_s");
		ck_assert_msg(cycles > 0, "%s: %s has no cycles", preset, name);
		ck_assert_msg(cycles * pes >= macs, "%s: %s: %lld cycles for %lld MACs on %lld PEs", preset, name, cycles,
			      macs, pes);
		/* The categories (the cycles_* columns) sum to the cycles. */
		long long cat_sum = 0;
		int ncat = 0;
		for (int k = 0; k < ncols; k++)
			if (!strncmp(cols[k], "cycles_", 7))
				cat_sum += th_csv_int(lc, r, cols[k]), ncat++;
		ck_assert_int_eq(ncat, CAT_N);
		ck_assert_msg(cat_sum == cycles, "%s: %s: categories sum to %lld, cycles %lld", preset, name, cat_sum, cycles);
		/* The energy and its components (energy_*_pj), which sum to it. */
		double energy = th_csv_num(lc, r, "energy_pj"), parts = 0;
		for (int k = 0; k < ncols; k++)
			if (!strncmp(cols[k], "energy_", 7) && strcmp(cols[k], "energy_pj"))
				parts += th_csv_num(lc, r, cols[k]);
		ck_assert_msg(energy > 0 && fabs(parts - energy) <= 1e-9 * energy, "%s: %s: energy %.17g, parts %.17g",
			      preset, name, energy, parts);
		/* The cycle model is never faster than the array's own time without memory stalls. */
		ck_assert_msg(cycles >= comp, "%s: %s", preset, name);
		if (macs > 0) {
			ck_assert_msg(util > 0 && util <= 1, "%s: %s: utilization %g", preset, name, util);
			/*
			 * No layer above its roofline bound (1e-9 for rounding), also with
			 * loads running ahead across ops: a layer's point is placed by the
			 * bytes that crossed the bus in its cycles (test_roofline.c).
			 */
			ck_assert_msg(ach <= att * (1 + 1e-9), "%s: %s: %g ops/s above the bound %g", preset, name, ach, att);
		}
		/* Layer by layer every op reads and writes HBM; a chip that keeps activations may not. */
		ck_assert_msg(c.arch.chip.keep_activations || (rd > 0 && wr > 0), "%s: %s moves no bytes", preset, name);
		ck_assert_msg(spill <= rd + wr, "%s: %s: spill %lld of %lld bytes", preset, name, spill, rd + wr);
		ck_assert(ops == 2.0 * (double)macs);
		sum += cycles;
		macs_sum += macs;
		layers++;
	}
	size_t lc_rows = lc->rows;
	th_csv_free(lc);
	ck_assert_int_gt(layers, 0);

	snprintf(path, sizeof path, "%s/summary.json", dir);
	{
		struct ydoc *d = th_json_file(path);
		const struct ynode *total = th_json_at(d->root, "total");
		ck_assert(total && th_json_at(d->root, "layers"));
		ck_assert_int_eq(th_json_int(total, "cycles"), sum);
		ck_assert_int_eq(th_json_int(total, "macs"), macs_sum);
		ck_assert_int_gt(th_json_int(total, "hbm_read_bytes"), 0);
		ck_assert_int_gt(th_json_int(total, "hbm_write_bytes"), 0);
		ck_assert_int_ge(th_json_int(total, "cycles") * pes, macs_sum);
		ck_assert_msg(th_json_num(total, "achieved_ops_per_s") <=
				      th_json_num(total, "attainable_ops_per_s") * (1 + 1e-9),
			      "%s on %s (%s): the run above its roofline", wl, preset, model);
		folds = th_json_int(total, "folds");
		check_golden(preset, wl, model, df, d->root);
		/*
		 * The peak power bounds the run's average, and every layer's where
		 * layers do not overlap (the analytic model: no bytes cross in another
		 * layer's cycles).
		 */
		double peak = th_json_num(d->root, "peak_power_w");
		ck_assert_msg(th_json_num(total, "power_w") <= peak, "%s on %s (%s): %.17g W above the peak %.17g W", wl, preset,
			      model, th_json_num(total, "power_w"), peak);
		const struct ynode *rows = th_json_at(d->root, "layers");
		for (size_t i = 0; !strcmp(model, "analytic") && i < rows->n; i++)
			ck_assert_msg(th_json_num(rows->vals[i], "power_w") <= peak, "%s on %s: layer %zu above the peak", wl,
				      preset, i);
		const struct ynode *cats = th_json_at(total, "cycles_by_category");
		long long sum_cats = 0;
		ck_assert_ptr_nonnull(cats);
		ck_assert_uint_eq(cats->n, CAT_N);
		for (int k = 0; cat_names[k]; k++)
			sum_cats += th_json_int(cats, cat_names[k]);
		ck_assert_int_eq(sum_cats, sum);
		/* One entry per layer, as layers.csv has them. */
		ck_assert_uint_eq(th_json_at(d->root, "layers")->n, lc_rows);
		ydoc_free(d);
	}
	free(csv);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
	return folds;
}

/*
 * Every preset on every shipped workload: the analytic model for ws, os and
 * is, and the cycle engine (ws) where the tile program has at most 20 M folds
 * (all pairs but a 4x4 array on the 2048-token LLM prefill, 577 M folds, which
 * the engine runs in minutes rather than seconds).
 */
START_TEST(preset_by_workload)
{
	const char *preset = presets[_i / NW], *wl = workloads[_i % NW];
	check_run(preset, wl, "analytic", "os");
	check_run(preset, wl, "analytic", "is");
	if (check_run(preset, wl, "analytic", "ws") <= 20000000)
		check_run(preset, wl, "cycle", "ws");
}
END_TEST

/* make run's job: the default config and network print a summary. */
START_TEST(lower_lists_ops)
{
	char *out, *err;
	const char *argv[] = { "lower", "-w", "configs/workloads/resnet50.yaml", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "4089184256 MACs"));
	ck_assert_ptr_nonnull(strstr(out, "layer4.2.conv3"));
	free(out);
	free(err);
}
END_TEST

Suite *e2e_suite(void)
{
	Suite *s = suite_create("e2e");
	TCase *t = tcase_create("e2e");
	tcase_set_timeout(t, 600);
	tcase_add_loop_test(t, preset_by_workload, 0, (int)(sizeof presets / sizeof *presets) * NW);
	tcase_add_test(t, lower_lists_ops);
	suite_add_tcase(s, t);
	return s;
}
