/*
 * test_compare.c - tpusim compare through the command line: what each
 * dataflow keeps, streams and re-reads, its folds, utilization, cycles and
 * their ratio to ws, energy, the CSV, the chart and the options compare
 * refuses.
 *
 * The hand cases run one matmul on configs/lab_4x4.yaml (R = C = 4, int8:
 * 1 B per element, 4 B per accumulator) with --ideal-memory, so that every
 * plan keeps its operands and streams all of T in one chunk (schedule.h).
 * Folds and re-reads follow from the loop nests of schedule.h:
 *   ws  folds ceil(K/R) ceil(N/C); A read once per column block of N
 *       (ceil(N/C)), B once per chunk (1), partial sums read back once per
 *       row block of K after the first (ceil(K/R) - 1)
 *   os  folds ceil(M/R) ceil(N/C); A once per column block of N, B once per
 *       row block of M (ceil(M/R)), no partial sums read back
 *   is  folds ceil(K/R) ceil(M/C); A once per chunk (1), B once per column
 *       block of M (ceil(M/C)), partial sums as ws
 * Cycles, utilization and energy are checked against separate
 * `tpusim run --dataflow X` runs of the same case.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"
#include "ydoc.h"

static const char *const dfs[3] = { "ws", "os", "is" };

/* The line of text that starts with prefix (at the start of text or after a newline), or fails. */
static const char *line_at(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, n))
			return p;
	ck_abort_msg("no line starting with \"%s\" in:\n%s", prefix, text);
	return NULL;
}

/* text (from NULL: fails) with every line break and the indent after it made one space (owned). */
static char *unwrapped(const char *text)
{
	ck_assert_ptr_nonnull(text);
	char *u = strdup(text), *o = u;
	for (const char *p = text; *p; p++) {
		if (*p == '\n' && p[1] == ' ' && p[2] == ' ' && p[3] == ' ' && p[4] == ' ' && p[5] == ' ' && p[6] == ' ' &&
		    p[7] != ' ') {
			*o++ = ' ';
			p += 6;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return u;
}

/* Cycles and energy (pJ) of the total of `tpusim run` on workload wl with df, from its summary.json. */
static void run_total(const char *dir, const char *wl, const char *df, int64_t *cycles, double *energy)
{
	char out_dir[4200], path[4300], *out, *err;
	snprintf(out_dir, sizeof out_dir, "%s/run_%s", dir, df);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--ideal-memory", "--dataflow", df, "-o",
			       out_dir, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	snprintf(path, sizeof path, "%s/summary.json", out_dir);
	struct ydoc *d = th_json_file(path);
	*cycles = th_json_int(d->root, "total.cycles");
	*energy = th_json_num(d->root, "total.energy_pj");
	ydoc_free(d);
	free(out);
	free(err);
}

/* The CSV of compare (th_csv): rows counts the header too, as csv_get's rows do (the header is row 0). */
struct csv {
	struct th_csv *t;
	int rows;
};

static void csv_parse(struct csv *c, const char *text)
{
	/* No cell of these cases needs quoting: a quote would be a fault. */
	ck_assert_msg(strchr(text, '"') == NULL, "a quoted cell in %s", text);
	c->t = th_csv("compare", text);
	c->rows = (int)c->t->rows + 1;
}

static void csv_free(struct csv *c)
{
	th_csv_free(c->t);
}

/* The cell of row r (1: the first after the header) in the column named name. */
static const char *csv_get(const struct csv *c, int r, const char *name)
{
	ck_assert_int_gt(r, 0);
	return th_csv_get(c->t, (size_t)r - 1, name);
}

/* The row of layer and dataflow df. */
static int csv_row(const struct csv *c, const char *layer, const char *df)
{
	for (int r = 1; r < c->rows; r++)
		if (!strcmp(csv_get(c, r, "layer"), layer) && !strcmp(csv_get(c, r, "dataflow"), df))
			return r;
	ck_abort_msg("no row for %s under %s", layer, df);
	return -1;
}

/*
 * M = 10, K = 6, N = 5: ws folds 2 x 2 = 4, os 3 x 2 = 6, is 2 x 3 = 6;
 * re-reads (A, B, partial sums): ws 2, 1, 1; os 2, 3, 0; is 1, 3, 1. HBM: A
 * 60 B and B 30 B read once, C 50 B written: 140 B. 300 MACs on 16 PEs.
 */
START_TEST(hand_case_table)
{
	static const int64_t folds[3] = { 4, 6, 6 };
	static const double reread[3][3] = { { 2, 1, 1 }, { 2, 3, 0 }, { 1, 3, 1 } };
	static const char *const stays[3] = { "weights B", "outputs C", "inputs A" };
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	char *out, *err, energy[3][32];
	int64_t cycles[3];
	double pj[3];
	const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", NULL };

	for (int d = 0; d < 3; d++)
		run_total(dir, w, dfs[d], &cycles[d], &pj[d]);
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	ck_assert_str_eq(err, "");
	for (int d = 0; d < 3; d++) {
		char prefix[64];
		double f[5], util, ratio;
		long long fo, cy, hbm;
		/* The dataflow table: what stays, then the re-read factors (SRAM A, B, psums; HBM A, B). */
		snprintf(prefix, sizeof prefix, "%s  %s", dfs[d], stays[d]);
		const char *row = line_at(out, prefix);
		const char *nums = strstr(row, "outputs") ? strstr(row, "outputs") + 7 : NULL;
		if (d == 1)
			nums = strstr(row, "weights ") + 8;
		ck_assert_ptr_nonnull(nums);
		ck_assert_int_eq(sscanf(nums, "%lf %lf %lf %lf %lf", &f[0], &f[1], &f[2], &f[3], &f[4]), 5);
		for (int i = 0; i < 3; i++)
			ck_assert_msg(fabs(f[i] - reread[d][i]) < 1e-9, "%s operand %d: %g", dfs[d], i, f[i]);
		ck_assert(f[3] == 1.0 && f[4] == 1.0);
		/* The layer table. */
		snprintf(prefix, sizeof prefix, "%-20s %-2s ", d ? "" : "g", dfs[d]);
		row = line_at(out, prefix);
		ck_assert_int_eq(sscanf(row + strlen(prefix), "%lld %lf %lld %lf %lld %31s", &fo, &util, &cy, &ratio, &hbm,
					energy[d]), 6);
		ck_assert_int_eq(fo, folds[d]);
		ck_assert_int_eq(cy, cycles[d]);
		ck_assert_msg(fabs(util - 100.0 * 300 / (16.0 * (double)cycles[d])) < 0.006, "%s util %g", dfs[d], util);
		ck_assert_msg(fabs(ratio - (double)cycles[d] / (double)cycles[0]) < 0.00006, "%s ratio %g", dfs[d], ratio);
		ck_assert_int_eq(hbm, 140);
		/* Energy in pJ with one decimal, rounded from the run's. */
		const char *dot = strchr(energy[d], '.');
		ck_assert_msg(dot && strlen(dot) == 2 && dot[1] >= '0' && dot[1] <= '9', "%s energy %s", dfs[d], energy[d]);
		ck_assert_msg(fabs(strtod(energy[d], NULL) - pj[d]) <= 0.05 + 1e-9 * pj[d], "%s energy %s, run %.17g", dfs[d],
			      energy[d], pj[d]);
	}
	/* The runs differ, and so must what compare prints of them. */
	ck_assert_int_ne(cycles[1], cycles[0]);
	ck_assert_int_ne(cycles[2], cycles[0]);
	ck_assert_str_ne(energy[0], energy[1]);
	ck_assert_str_ne(energy[0], energy[2]);
	ck_assert_str_ne(energy[1], energy[2]);
	/*
	 * The why lines, unwrapped: ws is the base; it re-reads A most (2 column
	 * blocks of N), os B (3 row blocks of M), is B (3 column blocks of M).
	 */
	char *why = unwrapped(strstr(out, "\nwhy "));
	ck_assert_ptr_nonnull(strstr(why, "\n  ws  47 cycles, the base;"));
	ck_assert_ptr_nonnull(strstr(why, "\n  os  41 cycles, 0.8723x ws;"));
	ck_assert_ptr_nonnull(strstr(why, "\n  is  38 cycles, 0.8085x ws;"));
	ck_assert_ptr_nonnull(strstr(why, "re-read most from SRAM: A 2.00x (once per column block of N);"));
	ck_assert_ptr_nonnull(strstr(why, "re-read most from SRAM: B 3.00x (once per row block of M);"));
	ck_assert_ptr_nonnull(strstr(why, "re-read most from SRAM: B 3.00x (once per column block of M);"));
	/* ws: weight_shift 4 of 47 cycles; os: fill_drain 5 of 41 */
	ck_assert_ptr_nonnull(strstr(why, "largest stall weight_shift (8.5% of cycles)"));
	ck_assert_ptr_nonnull(strstr(why, "largest stall fill_drain (12.2% of cycles)"));
	free(why);
	/* Every line fits in 100 columns. */
	for (const char *p = out; *p; p += strcspn(p, "\n") + 1)
		ck_assert_uint_le(strcspn(p, "\n"), 100);
	free(out);
	free(err);
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * The same case as CSV: the columns a table of pandas needs, one row per
 * layer and dataflow, the same numbers as the runs. What each dataflow reads
 * from SRAM follows from which operand stays:
 *   ws: weights 6x5 shifted once (30), inputs 6x10 streamed per column block
 *       of N (2 blocks: 120), partial sums read back once (2 row blocks of K:
 *       10x5x4 = 200) plus 50 results out: 250
 *   os: inputs 10x6 per column block of N (2: 120), weights 6x5 per row block
 *       of M (3: 90), results out 50
 *   is: inputs 6x10 shifted once (60), weights 6x5 streamed per column block of
 *       M (3: 90), partial sums as ws: 250
 * Cycles by category (tests/test_analytic.c): ws 47, os 41, is 38; compute is
 * the streams: 4 x 10, 6 x 6, 6 x 5; weight_shift the first shift (4; os
 * none), every later one hidden; fill_drain the rest.
 */
START_TEST(hand_case_csv)
{
	static const char *const want[3] = { "47,40,0,4,0,0,0,3,30,120,250", "41,36,0,0,0,0,0,5,90,120,50",
					     "38,30,0,4,0,0,0,4,90,60,250" };
	static const char *const reread[3][3] = { { "2", "1", "1" }, { "2", "3", "0" }, { "1", "3", "1" } };
	static const char *const folds[3] = { "4", "6", "6" };
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	char *out, *err, line[400];
	int64_t cycles[3];
	double pj[3];
	struct csv c;
	const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "--csv", NULL };

	for (int d = 0; d < 3; d++)
		run_total(dir, w, dfs[d], &cycles[d], &pj[d]);
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	static const char head[] = "layer,phase,dataflow,stationary,streams,folds,utilization,cycles,cycles_ratio,ratio_to,"
				   "cycles_compute,cycles_weights,cycles_weight_shift,cycles_inputs,cycles_outputs,"
				   "cycles_vector,cycles_fill_drain,cycles_op_fixed,cycles_exposed_comm,cycles_bubble,sram_weights_read_bytes,sram_inputs_read_bytes,"
				   "sram_outputs_read_bytes,reread_a,reread_b,reread_psums,hbm_reread_a,hbm_reread_b,"
				   "hbm_read_bytes,hbm_write_bytes,energy_pj,largest_stall,most_reread\n";
	ck_assert_msg(!strncmp(out, head, strlen(head)), "%s", out);
	csv_parse(&c, out);
	ck_assert_int_eq(c.rows, 1 + 2 * 3);   /* the header, layer g and the total under 3 dataflows */
	for (int d = 0; d < 3; d++) {
		for (int t = 0; t < 2; t++) {
			int r = csv_row(&c, t ? "total" : "g", dfs[d]);
			/* cycles, the categories and the SRAM reads, in their columns */
			snprintf(line, sizeof line, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", csv_get(&c, r, "cycles"),
				 csv_get(&c, r, "cycles_compute"), csv_get(&c, r, "cycles_weights"),
				 csv_get(&c, r, "cycles_weight_shift"), csv_get(&c, r, "cycles_inputs"),
				 csv_get(&c, r, "cycles_outputs"), csv_get(&c, r, "cycles_vector"),
				 csv_get(&c, r, "cycles_fill_drain"), csv_get(&c, r, "sram_weights_read_bytes"),
				 csv_get(&c, r, "sram_inputs_read_bytes"), csv_get(&c, r, "sram_outputs_read_bytes"));
			ck_assert_str_eq(line, want[d]);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "cycles"), NULL, 10), cycles[d]);
			ck_assert_str_eq(csv_get(&c, r, "folds"), folds[d]);
			ck_assert_str_eq(csv_get(&c, r, "reread_a"), reread[d][0]);
			ck_assert_str_eq(csv_get(&c, r, "reread_b"), reread[d][1]);
			ck_assert_str_eq(csv_get(&c, r, "reread_psums"), reread[d][2]);
			ck_assert_str_eq(csv_get(&c, r, "hbm_reread_a"), "1");
			ck_assert_str_eq(csv_get(&c, r, "hbm_reread_b"), "1");
			ck_assert_str_eq(csv_get(&c, r, "hbm_read_bytes"), "90");
			ck_assert_str_eq(csv_get(&c, r, "hbm_write_bytes"), "50");
			ck_assert_str_eq(csv_get(&c, r, "ratio_to"), "ws");
			ck_assert(strtod(csv_get(&c, r, "cycles_ratio"), NULL) == (double)cycles[d] / (double)cycles[0]);
			ck_assert(strtod(csv_get(&c, r, "utilization"), NULL) == 300.0 / (16.0 * (double)cycles[d]));
			ck_assert_msg(fabs(strtod(csv_get(&c, r, "energy_pj"), NULL) - pj[d]) <= 1e-12 * pj[d], "%s energy",
				      dfs[d]);
		}
	}
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "ws"), "stationary"), "weights B");
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "os"), "stationary"), "outputs C");
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "is"), "stationary"), "inputs A");
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "ws"), "most_reread"), "A");
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "os"), "most_reread"), "B");
	/* ws: the first shift (4) outlasts the fill and drain (3); os: fill and drain (5) only */
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "ws"), "largest_stall"), "weight_shift");
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "os"), "largest_stall"), "fill_drain");
	csv_free(&c);
	free(out);
	free(err);
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * M = 64, K = 16, N = 32, and the brief's square 64^3: folds and re-reads
 * by hand, and each re-read times its operand's bytes equal to the SRAM
 * reads the engine counted (A from the input buffer, B from the weights).
 *   64x16x32: ws folds 4 x 8 = 32, os 16 x 8 = 128, is 4 x 16 = 64;
 *             A, B, psums: ws 8, 1, 3; os 8, 16, 0; is 1, 16, 3
 *   64x64x64: every dataflow 16 x 16 = 256 folds;
 *             ws 16, 1, 15; os 16, 16, 0; is 1, 16, 15
 */
START_TEST(hand_case_rereads)
{
	static const struct {
		int64_t m, k, n;
		int64_t folds[3];
		int64_t reread[3][3];
	} cases[] = {
		{ 64, 16, 32, { 32, 128, 64 }, { { 8, 1, 3 }, { 8, 16, 0 }, { 1, 16, 3 } } },
		{ 64, 64, 64, { 256, 256, 256 }, { { 16, 1, 15 }, { 16, 16, 0 }, { 1, 16, 15 } } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *dir = th_tmpdir(), yaml[200], *out, *err, *w;
		struct csv c;
		snprintf(yaml, sizeof yaml, "layers:\n  - {name: g, type: matmul, m: %lld, k: %lld, n: %lld}\n",
			 (long long)cases[i].m, (long long)cases[i].k, (long long)cases[i].n);
		w = th_write(dir, "w.yaml", yaml);
		const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "--csv", NULL };
		ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
		csv_parse(&c, out);
		for (int d = 0; d < 3; d++) {
			int r = csv_row(&c, "g", dfs[d]);
			int64_t a = cases[i].m * cases[i].k, b = cases[i].k * cases[i].n;
			ck_assert_int_eq(strtoll(csv_get(&c, r, "folds"), NULL, 10), cases[i].folds[d]);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "reread_a"), NULL, 10), cases[i].reread[d][0]);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "reread_b"), NULL, 10), cases[i].reread[d][1]);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "reread_psums"), NULL, 10), cases[i].reread[d][2]);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "sram_inputs_read_bytes"), NULL, 10), cases[i].reread[d][0] * a);
			ck_assert_int_eq(strtoll(csv_get(&c, r, "sram_weights_read_bytes"), NULL, 10),
					 cases[i].reread[d][1] * b);
		}
		csv_free(&c);
		free(out);
		free(err);
		free(w);
		th_rmdir(dir);
		free(dir);
	}
}
END_TEST

/*
 * Buffers too small to keep either operand (1 KiB each; A is 512 x 64 = 32
 * KiB, B 64 x 256 = 16 KiB), real memory: every plan must load one of them
 * more than once, and the HBM re-reads of A and B times their bytes add up
 * to the HBM bytes the run read.
 */
START_TEST(hbm_rereads)
{
	char *dir = th_tmpdir(), *out, *err;
	char *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 512, k: 64, n: 256}\n");
	struct csv c;
	const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--set", "sram.weights.kib=1", "--set",
			       "sram.inputs.kib=1", "--csv", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	csv_parse(&c, out);
	for (int d = 0; d < 3; d++) {
		int r = csv_row(&c, "g", dfs[d]);
		double fa = strtod(csv_get(&c, r, "hbm_reread_a"), NULL), fb = strtod(csv_get(&c, r, "hbm_reread_b"), NULL);
		ck_assert_msg(fa >= 1 && fb >= 1 && (fa > 1 || fb > 1), "%s: A %g, B %g", dfs[d], fa, fb);
		ck_assert_msg(fabs(fa * 32768 + fb * 16384 - strtod(csv_get(&c, r, "hbm_read_bytes"), NULL)) < 1e-6,
			      "%s: A %g, B %g, read %s", dfs[d], fa, fb, csv_get(&c, r, "hbm_read_bytes"));
	}
	csv_free(&c);
	free(out);
	free(err);
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * The chart as SVG: the ratios to ws (47, 41, 38 cycles: 1.000, 0.872, 0.809)
 * printed on the bars, the axis labelled as a ratio with linear ticks, every
 * category in the key. Without ws, ratios are to the first dataflow listed
 * (os: 41; is 38 / 41).
 */
START_TEST(chart_and_base)
{
	static const char *const in_svg[] = { ">1.000x<", ">0.872x<", ">0.809x<", "cycles / cycles under ws", ">0.20<",
					      ">0.40<", ">0.60<", ">0.80<", ">1.00<", "compute", "weight_shift",
					      "fill_drain", "energy / energy under ws", NULL };
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	char svg[4200], *out, *err, *text;
	struct csv c;
	snprintf(svg, sizeof svg, "%s/c.svg", dir);
	const char *a1[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "-o", svg, NULL };
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 0);
	text = th_slurp(svg);
	for (int i = 0; in_svg[i]; i++)
		ck_assert_msg(strstr(text, in_svg[i]) != NULL, "%s not in the chart", in_svg[i]);
	/* a log axis would have ticks at powers of ten, not a 0.00 */
	ck_assert_ptr_nonnull(strstr(text, ">0.00<"));
	free(text);
	free(out);
	free(err);

	const char *a2[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "--dataflows", "os,is",
			     "--csv", NULL };
	ck_assert_int_eq(th_cli(".", a2, &out, &err), 0);
	csv_parse(&c, out);
	ck_assert_int_eq(c.rows, 1 + 2 * 2);
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "g", "is"), "ratio_to"), "os");
	ck_assert(strtod(csv_get(&c, csv_row(&c, "g", "is"), "cycles_ratio"), NULL) == 38.0 / 41.0);
	ck_assert_str_eq(csv_get(&c, csv_row(&c, "total", "os"), "cycles_ratio"), "1");
	csv_free(&c);
	free(out);
	free(err);
	const char *a3[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "--dataflows", "os,is",
			     NULL };
	ck_assert_int_eq(th_cli(".", a3, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(line_at(out, "layer "), " x os "));
	ck_assert_ptr_nonnull(strstr(out, "38 cycles, 0.9268x os;"));
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
	free(w);
}
END_TEST

/*
 * Options that do not apply to compare: refused before anything runs (exit
 * 2, the option named, nothing on stdout, no file made).
 */
#define NOT_OURS "expected an option of tpusim compare (see tpusim --help), found an option of tpusim "
static const struct {
	const char *args[3];
	const char *want;
	const char *made;           /* a path that must not exist afterwards, or NULL */
} refused[] = {
	{ { "--dataflow", "os" }, "--dataflow: " NOT_OURS "run; compare takes --dataflows, e.g. --dataflows ws,os,is", NULL },
	{ { "--dataflow", "ws" }, "--dataflow: " NOT_OURS "run; compare takes --dataflows, e.g. --dataflows ws,os,is", NULL },
	{ { "--vcd", "t" }, "--vcd: " NOT_OURS "run; trace one dataflow with tpusim run --dataflow DF --vcd BASE", "t.vcd" },
	{ { "--plot", "p" }, "--plot: " NOT_OURS "run; compare draws its chart with -o FILE.png or FILE.svg", "p" },
	{ { "--timing", NULL }, "--timing: " NOT_OURS "run; time one dataflow with tpusim run --dataflow DF --timing", NULL },
	{ { "--dump" }, "--dump: " NOT_OURS "config; print the config with tpusim config --dump", NULL },
	{ { "-o", "sub" }, "-o: expected a writable path, found \"sub\" (Is a directory)", NULL },
	{ { "-o", "sub/" }, "-o: expected a writable path, found \"sub/\" (Is a directory)", NULL },
	{ { "-o", "out" }, "-o: expected FILE.png or FILE.svg for compare's chart, found \"out\"", "out" },
	{ { "--out", "c.jpg" }, "-o: expected FILE.png or FILE.svg for compare's chart, found \"c.jpg\"", "c.jpg" },
	{ { "--model", "functional" }, "--model: expected cycle or analytic for tpusim compare, found functional; check "
	  "values with tpusim run --model functional", NULL },
	{ { "--seed", "3" }, "--seed: " NOT_OURS "run; seeds pick the operands of tpusim run --model functional", NULL },
	{ { "--save-outputs", "d" }, "--save-outputs: " NOT_OURS "run; save results with tpusim run --model functional "
	  "--save-outputs DIR", "d" },
	{ { "--dataflows", "ws,ws" }, "--dataflows: expected a list of distinct ws, os, is separated by commas, found "
	  "\"ws,ws\"", NULL },
};

START_TEST(options_refused)
{
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	char cfg[4200], sub[4200], *out, *err;
	const char *argv[12] = { "compare", "-c", cfg, "-w", "w.yaml" };
	int n = 5;
	struct stat st;
	char cwd[4000];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(cfg, sizeof cfg, "%s/configs/lab_4x4.yaml", cwd);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	for (int i = 0; i < 2 && refused[_i].args[i]; i++)
		argv[n++] = refused[_i].args[i];
	argv[n] = NULL;
	ck_assert_int_eq(stat(cfg, &st), 0);
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(out, "");
	ck_assert_msg(strlen(err) > 0 && err[strlen(err) - 1] == '\n', "%s", err);
	err[strlen(err) - 1] = '\0';
	ck_assert_str_eq(err, refused[_i].want);
	if (refused[_i].made) {
		char path[4300];
		snprintf(path, sizeof path, "%s/%s", dir, refused[_i].made);
		ck_assert_msg(stat(path, &st) != 0, "%s was made", path);
	}
	free(out);
	free(err);
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The header names the model compared with, from the one table of model names. */
START_TEST(model_named)
{
	static const char *const models[] = { "cycle", "analytic" };
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	for (int i = 0; i < 2; i++) {
		char *out, *err, want[64];
		const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--model", models[i], NULL };
		ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
		ck_assert_str_eq(err, "");
		snprintf(want, sizeof want, " GB/s; %s model\ndataflows compared: ", models[i]);
		ck_assert_msg(strstr(out, want) != NULL, "%s", out);
		free(out);
		free(err);
	}
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *compare_suite(void)
{
	Suite *s = suite_create("compare");
	TCase *t = tcase_create("compare");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, hand_case_table);
	tcase_add_test(t, hand_case_csv);
	tcase_add_test(t, hand_case_rereads);
	tcase_add_test(t, hbm_rereads);
	tcase_add_test(t, chart_and_base);
	tcase_add_test(t, model_named);
	tcase_add_loop_test(t, options_refused, 0, (int)(sizeof refused / sizeof refused[0]));
	suite_add_tcase(s, t);
	return s;
}
