/*
 * test_sweepplot.c - tpusim sweep --plot: the Pareto set against a front
 * worked out by hand and against a brute-force check of every pair, axes
 * that move together found as one group, the csv reader (quotes, CRLF,
 * positioned errors), and the charts drawn from a sweep.csv written by hand:
 * the files, the lines in each chart (gnuplot's SVG has one <g
 * id="gnuplot_plot_N"> per plotted item and one <text> per legend entry and
 * label), the labels of the Pareto points and none of the dominated ones.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweepplot.h"
#include "tests.h"

/*
 * The fixtures below write sweep.csv's first 7 numbers by hand and mark the
 * rest, which grows with the result table: "%T" in a header stands for the
 * columns after pj_per_mac up to point, "%R" in an ok row for their values
 * (each 1, the point "points/p.json") after its 7, "%E" in another row for
 * them empty. fixture() expands the marks (owned).
 */
static char *fixture(const char *text)
{
	char names[2000], *tail;
	size_t cap = strlen(text) * 8 + 4096, n = 0;
	char *out = malloc(cap);
	int extra = sweep_csv_ncols() - 7;
	sweep_csv_names(",", names, sizeof names);
	tail = strstr(names, "pj_per_mac,") + strlen("pj_per_mac,");
	*strrchr(tail, ',') = 0;                /* up to point: status is the fixture's */
	for (const char *s = text; *s; s++) {
		ck_assert(n + 3000 < cap);
		if (s[0] == '%' && (s[1] == 'T' || s[1] == 'R' || s[1] == 'E')) {
			for (int k = 0; s[1] != 'T' && k < extra; k++)
				n += (size_t)snprintf(out + n, cap - n, ",%s", s[1] == 'R' ? "1" : "");
			if (s[1] == 'T')
				n += (size_t)snprintf(out + n, cap - n, "%s", tail);
			else
				n += (size_t)snprintf(out + n, cap - n, ",%s", s[1] == 'R' ? "points/p.json" : "");
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = 0;
	return out;
}

/* th_write of a fixture. */
static char *write_fixture(const char *dir, const char *name, const char *text)
{
	char *t = fixture(text), *p = th_write(dir, name, t);
	free(t);
	return p;
}

static const char header[] = "workload,array.rows,array.cols,hbm.gbps,dataflow,batch,cycles,utilization,tops,"
			     "hbm_read_bytes,hbm_write_bytes,energy_pj,pj_per_mac,%T,status\n";

/*
 * The fixtures of this file spell sweep.csv's columns as sweep.h declares
 * them: a reader fed the writer's header, and header's tail the same.
 */
START_TEST(header_is_sweeps)
{
	char names[2000], csv[4000];
	sweep_csv_names(",", names, sizeof names);
	char *hd = fixture(header), *tail = hd + strlen("workload,array.rows,array.cols,hbm.gbps,dataflow,batch,");
	ck_assert_uint_eq(strlen(tail), strlen(names) + 1);
	ck_assert_int_eq(strncmp(tail, names, strlen(names)), 0);
	free(hd);
	snprintf(csv, sizeof csv, "%s,x,%s\nw.yaml,4,1,1,1,1,1,1,1%%R,ok\n", SWEEP_CSV_WORKLOAD, names);
	char *dir = th_tmpdir(), *path = write_fixture(dir, "sweep.csv", csv);
	struct sweepplot_table t;
	struct err e = { 0 };
	ck_assert_msg(sweepplot_read(&t, path, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t.naxes, 1);
	ck_assert_uint_eq(t.nok, 1);
	/* Every metric read: hbm_bytes the sum of two columns of 1. */
	for (int m = 0; m < SWEEPPLOT_NMETRICS; m++)
		ck_assert(t.rows[0].m[m] == (m == SWEEPPLOT_HBM_BYTES ? 2 : 1));
	sweepplot_release(&t);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Workload alpha: the size (array.rows and array.cols zipped) x hbm.gbps x
 * dataflow; batch is the same everywhere. Cycles and energy are chosen so
 * that the front, worked out by hand, is:
 *
 *   32x32 400 ws  (1000, 400)   least cycles; 32x32 400 os (1000, 500) has equal cycles, more energy
 *   32x32 100 ws  (2500, 200)   no point of fewer cycles has energy <= 200
 *   16x16 100 ws  (4000, 150)   and 16x16 100 os (4000, 150): equal points, both on the front
 *   8x8 400 ws    (7000, 100)   8x8 400 os (7000, 110): equal cycles, more energy
 *
 * Dominated: 8x8 100 ws (8000, 100) by 8x8 400 ws (fewer cycles, equal
 * energy); 8x8 100 os (8000, 130); 16x16 400 ws (3000, 220) and 32x32 100 os
 * (2600, 260) by 32x32 100 ws; 16x16 400 os (3600, 300).
 */
static const struct {
	const char *size, *gbps, *df;
	double cycles, energy, util;
	bool front;
} alpha[12] = {
	{ "8", "100", "ws", 8000, 100, 0.91, false },   { "8", "100", "os", 8000, 130, 0.90, false },
	{ "8", "400", "ws", 7000, 100, 0.93, true },    { "8", "400", "os", 7000, 110, 0.92, false },
	{ "16", "100", "ws", 4000, 150, 0.81, true },   { "16", "100", "os", 4000, 150, 0.80, true },
	{ "16", "400", "ws", 3000, 220, 0.83, false },  { "16", "400", "os", 3600, 300, 0.82, false },
	{ "32", "100", "ws", 2500, 200, 0.71, true },   { "32", "100", "os", 2600, 260, 0.70, false },
	{ "32", "400", "ws", 1000, 400, 0.4321, true }, { "32", "400", "os", 1000, 500, 0.72, false },
};

/*
 * The label tpusim gives point i of alpha: the values of each group that
 * varies along the front (all three do), a zip group's joined by x, the
 * groups by ", "; a line of the title names them ("labels: rows x cols,
 * gbps, dataflow").
 */
static void label_of(int i, char *buf, size_t size)
{
	snprintf(buf, size, "%sx%s, %s, %s", alpha[i].size, alpha[i].size, alpha[i].gbps, alpha[i].df);
}

/* The held row when nothing is held: the fewest cycles of all (beta's are alpha's doubled), the first of equals. */
static int best_alpha(void)
{
	int best = 0;
	for (int i = 1; i < 12; i++)
		if (alpha[i].cycles < alpha[best].cycles)
			best = i;
	return best;
}

/*
 * dir/sweep.csv: alpha's 12 rows (lines 2-13), then beta's: alpha's cycles
 * and energy doubled (so the same front), but its 8th row (16x16 400 os,
 * line 21) failed.
 */
static void write_csv(const char *dir)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	fputs(header, f);
	for (int w = 0; w < 2; w++)
		for (int i = 0; i < 12; i++) {
			double k = w ? 2 : 1;
			fprintf(f, "nets/%s.yaml,%s,%s,%s,%s,1,", w ? "beta" : "alpha", alpha[i].size, alpha[i].size,
				alpha[i].gbps, alpha[i].df);
			if (w && i == 7)
				fputs(",,,,,,%E,\"s.yaml:4:19: array.rows: expected an integer in [1, 4096], found \"\"0\"\"\"\n", f);
			else
				fprintf(f, "%g,%g,0.5,1000,500,%g,0.25%%R,ok\n", alpha[i].cycles * k, alpha[i].util,
					alpha[i].energy * k);
		}
	ck_assert_int_eq(fclose(f), 0);
	free(write_fixture(dir, "sweep.csv", text));
	free(text);
}

static char *svg(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/plots/%s.svg", dir, name);
	char *s = th_slurp(path);
	ck_assert_msg(!strncmp(s, "<?xml", 5) && strstr(s, "<svg") && strstr(s, "</svg>"), "%s is not an SVG", path);
	return s;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Whether the SVG has a text element of exactly t. */
static bool has_text(const char *s, const char *t)
{
	char want[300];
	snprintf(want, sizeof want, "<text>%s</text>", t);
	return strstr(s, want) != NULL;
}

/*
 * Whether the SVG s has the title t, whose lines a chart may break at a space
 * (plot.c's gp_title): the texts of s joined by spaces hold t.
 */
static bool has_title(const char *s, const char *t)
{
	char *all = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	ck_assert_ptr_nonnull(f);
	for (const char *p = s; (p = strstr(p, "<text>")); p += 6) {
		const char *end = strstr(p + 6, "</text>");
		if (!end)
			break;
		fprintf(f, " %.*s", (int)(end - p - 6), p + 6);
	}
	fclose(f);
	bool found = strstr(all, t) != NULL;
	free(all);
	return found;
}

/* The x of the translate() that places the text t, or fails. */
static double text_at(const char *s, const char *t, bool y)
{
	char want[300], *end;
	snprintf(want, sizeof want, "<text>%s</text>", t);
	const char *at = strstr(s, want), *tr = NULL;
	ck_assert_msg(at != NULL, "no text %s", t);
	for (const char *p = s; (p = strstr(p, "translate(")) && p < at; p++)
		tr = p;
	ck_assert_ptr_nonnull(tr);
	double x = strtod(tr + 10, &end);
	return y ? strtod(end + 1, NULL) : x;
}

static double text_x(const char *s, const char *t)
{
	return text_at(s, t, false);
}

/* Its y (down the picture). */
static double text_y(const char *s, const char *t)
{
	return text_at(s, t, true);
}

/* The names in dir, sorted, one per line (owned). */
static char *listing(const char *dir)
{
	return th_listing(dir, true, '\n');
}

START_TEST(pareto_by_hand)
{
	double x[12], y[12];
	bool front[12];
	size_t want = 0;
	for (int i = 0; i < 12; i++) {
		x[i] = alpha[i].cycles;
		y[i] = alpha[i].energy;
		want += alpha[i].front;
	}
	ck_assert_uint_eq(sweepplot_pareto(x, y, 12, front), 5);
	ck_assert_uint_eq(want, 5);
	for (int i = 0; i < 12; i++)
		ck_assert_msg(front[i] == alpha[i].front, "point %d", i);
	/* One point; two equal points; a point dominated only through equal energy. */
	double a[3] = { 5, 5, 6 }, b[3] = { 7, 7, 7 };
	ck_assert_uint_eq(sweepplot_pareto(a, b, 1, front), 1);
	ck_assert_uint_eq(sweepplot_pareto(a, b, 2, front), 2);
	ck_assert_uint_eq(sweepplot_pareto(a, b, 3, front), 2);
	ck_assert(front[0] && front[1] && !front[2]);
}
END_TEST

/* Against the definition, pair by pair, on small integers (many ties). */
START_TEST(pareto_against_pairs)
{
	uint64_t seed = 12345;
	for (int trial = 0; trial < 300; trial++) {
		size_t n = (size_t)th_rnd(&seed, 1, 40);
		double x[40], y[40];
		bool front[40];
		size_t want = 0;
		for (size_t i = 0; i < n; i++) {
			x[i] = (double)th_rnd(&seed, 0, 6);
			y[i] = (double)th_rnd(&seed, 0, 6);
		}
		size_t got = sweepplot_pareto(x, y, n, front);
		for (size_t i = 0; i < n; i++) {
			bool dominated = false;
			for (size_t j = 0; j < n; j++)
				dominated |= x[j] <= x[i] && y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i]);
			ck_assert_msg(front[i] == !dominated, "trial %d point %zu", trial, i);
			want += !dominated;
		}
		ck_assert_uint_eq(got, want);
	}
}
END_TEST

/*
 * a and b change together (1-30, 2-20, 3-10): one group. c is crossed with
 * them. d never changes. e follows a in five rows of six (3 goes with r,
 * then with q); f is a function of a but joins 2 and 3: neither moves
 * with a.
 */
START_TEST(groups)
{
	static const char csv[] = "workload,a,b,c,d,e,f,cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,"
				  "energy_pj,pj_per_mac,%T,status\n"
				  "w,1,30,x,7,p,p,1,1,1,1,1,1,1%R,ok\n"
				  "w,1,30,y,7,p,p,1,1,1,1,1,1,1%R,ok\n"
				  "w,2,20,x,7,q,q,1,1,1,1,1,1,1%R,ok\n"
				  "w,2,20,y,7,q,q,1,1,1,1,1,1,1%R,ok\n"
				  "w,3,10,x,7,r,q,1,1,1,1,1,1,1%R,ok\n"
				  "w,3,10,y,7,q,q,,,,,,,%E,failed\n";
	char *dir = th_tmpdir(), *path = write_fixture(dir, "sweep.csv", csv);
	struct sweepplot_table t;
	struct err e = { 0 };
	int g[SWEEP_MAX_AXES];
	ck_assert_msg(sweepplot_read(&t, path, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t.naxes, 6);
	ck_assert_uint_eq(t.nrows, 6);
	ck_assert_uint_eq(t.nok, 5);
	ck_assert_int_eq(sweepplot_groups(&t, g), 4);
	static const int want[6] = { 0, 0, 2, -1, 4, 5 };
	for (int i = 0; i < 6; i++)
		ck_assert_msg(g[i] == want[i], "axis %d: group %d", i, g[i]);
	sweepplot_release(&t);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Quoted fields (a comma, a doubled quote, a line break), CRLF, a blank line; the numbers; hbm bytes summed. */
START_TEST(reader)
{
	static const char csv[] = "workload,dataflow,cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,"
				  "energy_pj,pj_per_mac,%T,status\r\n"
				  "\"a,b.yaml\",ws,100,0.5,1.5,30,12,7e3,2.5%R,ok\r\n"
				  "\r\n"
				  "w.yaml,\"o\"\"s\",,,,,,,%E,\"bad, \"\"very\"\"\nbad\"\n"
				  "w.yaml,is,1,0,0,0,0,0,0%R,ok";
	char *dir = th_tmpdir(), *path = write_fixture(dir, "sweep.csv", csv);
	struct sweepplot_table t;
	struct err e = { 0 };
	ck_assert_msg(sweepplot_read(&t, path, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(t.naxes, 1);
	ck_assert_str_eq(t.axis[0], "dataflow");
	ck_assert_uint_eq(t.nrows, 3);
	ck_assert_uint_eq(t.nok, 2);
	ck_assert_str_eq(t.rows[0].workload, "a,b.yaml");
	ck_assert_str_eq(t.rows[0].val[0], "ws");
	ck_assert_int_eq(t.rows[0].line, 2);
	ck_assert(t.rows[0].m[SWEEPPLOT_CYCLES] == 100 && t.rows[0].m[SWEEPPLOT_UTILIZATION] == 0.5 &&
		  t.rows[0].m[SWEEPPLOT_TOPS] == 1.5 && t.rows[0].m[SWEEPPLOT_HBM_BYTES] == 42 &&
		  t.rows[0].m[SWEEPPLOT_ENERGY] == 7000 && t.rows[0].m[SWEEPPLOT_PJ_PER_MAC] == 2.5);
	ck_assert_str_eq(t.rows[1].val[0], "o\"s");
	ck_assert_str_eq(t.rows[1].status, "bad, \"very\"\nbad");
	ck_assert(!t.rows[1].ok);
	ck_assert_int_eq(t.rows[1].line, 4);
	ck_assert_int_eq(t.rows[2].line, 6);
	ck_assert_str_eq(t.rows[2].val[0], "is");
	sweepplot_release(&t);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(charts)
{
	char *dir = th_tmpdir(), *out, *err, *s, want[4400], label[64];
	write_csv(dir);
	/* The fronts by hand are of energy against cycles (the fixture's areas are all 1). */
	const char *argv[] = { "sweep", "--plot", dir, "--pareto", "latency,energy", NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	ck_assert_str_eq(err, "");
	snprintf(want, sizeof want, "skipped 1 of 24 rows whose status is not ok (the first: %s/sweep.csv:21: s.yaml:4:19: "
		 "array.rows: expected an integer in [1, 4096], found \"0\")\n", dir);
	ck_assert_msg(!strncmp(out, want, strlen(want)), "%s", out);
	ck_assert_int_eq(count(out, "\nwrote "), 2 * 36 + 5);

	/*
	 * Every file: 10 metrics x 3 groups (the size is one: no chart against
	 * array.cols), 4 heatmaps, 2 fronts (batch has one value: one per
	 * workload), as pictures; the fronts and the 3 slices as csv.
	 */
	static const char *const metrics[10] = { "cycles", "utilization", "tops", "hbm_bytes", "energy_pj", "pj_per_mac",
						 "tops_per_w", "area_mm2", "power_w", "tops_per_mm2" };
	static const char *const others[6] = { "heatmap_alpha_os", "heatmap_alpha_ws", "heatmap_beta_os",
					       "heatmap_beta_ws", "pareto_alpha", "pareto_beta" };
	static const char *const csvs[5] = { "pareto_alpha", "pareto_beta", "slice_array.rows", "slice_dataflow",
					     "slice_hbm.gbps" };
	static const char *const axes[3] = { "array.rows", "dataflow", "hbm.gbps" };
	char names[77][64], expect[4096] = "", plots[4200];
	int n = 0;
	for (int m = 0; m < 10; m++)
		for (int a = 0; a < 3; a++)
			for (int x = 0; x < 2; x++)
				snprintf(names[n++], 64, "%s_vs_%s.%s", metrics[m], axes[a], x ? "svg" : "png");
	for (int k = 0; k < 6; k++)
		for (int x = 0; x < 2; x++)
			snprintf(names[n++], 64, "%s.%s", others[k], x ? "svg" : "png");
	for (int k = 0; k < 5; k++)
		snprintf(names[n++], 64, "%s.csv", csvs[k]);
	ck_assert_int_eq(n, 77);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char t[64];
				memcpy(t, names[i], 64);
				memcpy(names[i], names[j], 64);
				memcpy(names[j], t, 64);
			}
	for (int i = 0; i < n; i++) {
		strcat(expect, names[i]);
		strcat(expect, "\n");
		snprintf(want, sizeof want, "wrote %s/plots/%s\n", dir, names[i]);
		ck_assert_msg(strstr(out, want) != NULL, "%s not listed", want);
	}
	snprintf(plots, sizeof plots, "%s/plots", dir);
	char *got = listing(plots);
	ck_assert_str_eq(got, expect);
	free(got);
	/* Nothing else left beside the csv. */
	got = listing(dir);
	ck_assert_str_eq(got, "plots\nsweep.csv\n");
	free(got);
	for (int i = 0; i < n; i++) {
		char p[4400], head[8] = { 0 }, *dot = strrchr(names[i], '.');
		if (strcmp(dot, ".png"))
			continue;
		snprintf(p, sizeof p, "%s/%s", plots, names[i]);
		FILE *f = fopen(p, "rb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fread(head, 1, 4, f), 4);
		fclose(f);
		ck_assert_int_eq(memcmp(head, "\x89PNG", 4), 0);
		*dot = 0;
		free(svg(dir, names[i]));
	}

	/* Against the size: a line per workload x dataflow, 8, 16, 32 evenly spaced (log2). */
	s = svg(dir, "cycles_vs_array.rows");
	ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 4);
	ck_assert(has_text(s, "alpha ws") && has_text(s, "alpha os") && has_text(s, "beta ws") && has_text(s, "beta os"));
	int b0 = best_alpha();
	char title[300];
	snprintf(title, sizeof title, "cycles vs array.rows x array.cols; held at hbm.gbps=%s (best by cycles)", alpha[b0].gbps);
	ck_assert_msg(has_title(s, title), "%s", title);
	double x8 = text_x(s, "8x8"), x16 = text_x(s, "16x16"), x32 = text_x(s, "32x32");
	ck_assert_msg(x16 - x8 > 50 && fabs((x16 - x8) - (x32 - x16)) < 1, "%g %g %g", x8, x16, x32);
	free(s);
	/* Against the dataflow: bars, a series per workload, the size held at the best row's. */
	s = svg(dir, "utilization_vs_dataflow");
	ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 2);
	ck_assert(has_text(s, "alpha") && has_text(s, "beta") && has_text(s, "ws") && has_text(s, "os"));
	snprintf(title, sizeof title, "utilization vs dataflow; held at array.rows x array.cols=%sx%s, hbm.gbps=%s (best by "
		 "cycles)", alpha[b0].size, alpha[b0].size, alpha[b0].gbps);
	ck_assert_msg(has_title(s, title), "%s", title);
	free(s);
	s = svg(dir, "energy_pj_vs_hbm.gbps");
	ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 4);
	snprintf(title, sizeof title, "energy vs hbm.gbps; held at array.rows x array.cols=%sx%s (best by cycles)",
		 alpha[b0].size, alpha[b0].size);
	ck_assert_msg(has_title(s, title), "%s", title);
	free(s);

	/* The fronts: the five points by hand, labelled; no dominated point labelled. */
	for (int w = 0; w < 2; w++) {
		s = svg(dir, w ? "pareto_beta" : "pareto_alpha");
		/*
		 * ws, os, the step line, its markers, the labels to the right of
		 * their points, and those to the left: 8x8 400 ws at 7000 cycles,
		 * past 60% of the span 1000..8000.
		 */
		ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 6);
		ck_assert(has_text(s, "ws") && has_text(s, "os"));
		ck_assert(has_text(s, w ? "Pareto front (5 of 11 points)" : "Pareto front (5 of 12 points)"));
		/*
		 * 16x16 ws and os at 100 GB/s are the same point: their labels
		 * stacked a line apart (the first in the csv's order, ws, lower),
		 * not one over the other; and each label at least as high as its
		 * point's, so none sits beside a lower neighbour's point.
		 */
		char ws16[64], os16[64], w32[64];
		label_of(4, ws16, sizeof ws16);
		label_of(5, os16, sizeof os16);
		label_of(8, w32, sizeof w32);
		ck_assert_msg(text_y(s, ws16) - text_y(s, os16) >= 10, "%g %g", text_y(s, ws16), text_y(s, os16));
		ck_assert(text_y(s, w32) < text_y(s, os16));
		for (int i = 0; i < 12; i++) {
			label_of(i, label, sizeof label);
			ck_assert_msg(has_text(s, label) == alpha[i].front, "%s: %s", w ? "beta" : "alpha", label);
		}
		free(s);
	}
	/* A heatmap cell: alpha ws at 32x32 and 400 GB/s, 43.21% utilization. */
	s = svg(dir, "heatmap_alpha_ws");
	ck_assert(has_text(s, "43.2"));
	ck_assert(has_text(s, "alpha ws: utilization and energy over array.rows x array.cols and hbm.gbps"));
	free(s);
	s = svg(dir, "heatmap_alpha_os");
	ck_assert(!has_text(s, "43.2"));
	free(s);
	free(out);
	free(err);

	/* Again, into the plots there: the files are replaced, a file of the user's stays. */
	char *mine = th_write(plots, "notes.txt", "mine\n");
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	got = listing(plots);
	ck_assert_int_eq(count(got, "\n"), n + 1);
	ck_assert_ptr_nonnull(strstr(got, "notes.txt\n"));
	free(got);
	got = listing(dir);
	ck_assert_str_eq(got, "plots\nsweep.csv\n");
	free(got);
	free(mine);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Bad input: exit 2, the message, and nothing written beside the csv. The
 * columns before the tail's are counted by hand; those in or after it (a
 * fixture's mark grows with the result table) are where find is in the
 * expanded line, plus off.
 */
START_TEST(errors)
{
	static const char tail[] = "cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,energy_pj,pj_per_mac,%T,status\n";
	static const char row[] = "w.yaml,4,1,1,1,1,1,1,1%R,ok\n";
	static const struct {
		const char *line1, *rest, *msg;     /* msg follows "<dir>/sweep.csv"; %ld: the column found */
		long line;                          /* the line find is on, or 0: msg has no %ld */
		const char *find;
		long off;
	} cases[] = {
		{ "workload,x,cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,energy_pj,pj_per_mac,%T,state\n", "",
		  ":1:%ld: expected the column status, found \"state\"", 1, "state", 0 },
		{ "wl,x,", NULL, ":1:1: expected the column workload, found \"wl\"", 0, NULL, 0 },
		{ "workload,x,", "w.yaml,4,1,1,1,1,1,1,1%R,ok\nw.yaml,4,1,1,1,1,1,1%R,ok\n",
		  ":3:1: expected %ld fields as the header has, found %ld", 0, NULL, 0 },
		{ "workload,x,", "w.yaml,4,12x,1,1,1,1,1,1%R,ok\n", ":2:10: cycles: expected a number in [0, 1e200], found \"12x\"",
		  0, NULL, 0 },
		{ "workload,x,", "w.yaml,4,1,1,1,1,1,-2,1%R,ok\n", ":2:20: energy_pj: expected a number in [0, 1e200], found \"-2\"",
		  0, NULL, 0 },
		{ "workload,x,", "w.yaml,4,1,1,1,1,1,1,1%R,ok\nw.yaml,4,,,,,,,%E,\"oops\n",
		  ":3:%ld: expected the quote that closes this field, found the end of the file", 3, "\"oops", 0 },
		{ "workload,x,", "w.yaml,4\"x,1,1,1,1,1,1,1%R,ok\n", ":2:9: expected a quote only at the start of a field, "
								 "found one inside", 0, NULL, 0 },
		{ "workload,x,", "w.yaml,4,1,1,1,1,1,1,1%R,\"ok\"x\n", ":2:%ld: expected a comma or the end of the line after a "
								  "quoted field, found \"x\"", 2, "\"ok\"x", 4 },
		{ "workload,x,x,", "w.yaml,4,1,1,1,1,1,1,1,1%R,ok\n", ":1:12: expected each column once, found \"x\" again", 0,
		  NULL, 0 },
		{ "workload,a b,", "w.yaml,4,1,1,1,1,1,1,1%R,ok\n", ":1:10: expected an axis name of letters, digits, '.', '_' "
								  "and '-', found \"a b\"", 0, NULL, 0 },
		{ "workload,x,", ",4,1,1,1,1,1,1,1%R,ok\n", ":2:1: workload: expected a workload path, found an empty field", 0,
		  NULL, 0 },
		{ "workload,x,", "w.yaml,4,,,,,,,%E,failed\nw.yaml,8,,,,,,,%E,failed\n",
		  ": expected at least one row with status ok, found none in 2 rows", 0, NULL, 0 },
		{ "", NULL, ": expected a header line (workload, the axes, cycles, ..., status), found an empty file", 0, NULL, 0 },
	};
	char *out, *err, want[4400], text[8000], msg[1000];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *dir = th_tmpdir();
		if (cases[i].rest && !*cases[i].rest)
			snprintf(text, sizeof text, "%s", cases[i].line1);
		else if (cases[i].rest)
			snprintf(text, sizeof text, "%s%s%s", cases[i].line1, tail, cases[i].rest);
		else if (*cases[i].line1)
			snprintf(text, sizeof text, "%s%s%s", cases[i].line1, tail, row);
		else
			text[0] = '\0';
		char *full = fixture(text);
		snprintf(msg, sizeof msg, "%s", cases[i].msg);
		if (cases[i].line) {
			const char *l = full;
			for (long k = 1; k < cases[i].line; k++)
				l = strchr(l, '\n') + 1;
			ck_assert_ptr_nonnull(strstr(l, cases[i].find));
			snprintf(msg, sizeof msg, cases[i].msg, (long)(strstr(l, cases[i].find) - l) + 1 + cases[i].off);
		} else if (strstr(cases[i].msg, "%ld")) {
			/* workload, x, the numbers, point, status; the second row has one number fewer */
			long n = 2 + sweep_csv_ncols() + 2;
			snprintf(msg, sizeof msg, cases[i].msg, n, n - 1);
		}
		free(th_write(dir, "sweep.csv", full));
		free(full);
		const char *argv[] = { "sweep", "--plot", dir, NULL };
		ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
		snprintf(want, sizeof want, "%s/sweep.csv%s\n", dir, msg);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(out, "");
		char *got = listing(dir);
		ck_assert_str_eq(got, "sweep.csv\n");
		free(got);
		free(out);
		free(err);
		th_rmdir(dir);
		free(dir);
	}
}
END_TEST

/* No csv, plots a file, no gnuplot, the command line: exit 2 and nothing left behind. */
START_TEST(errors_around)
{
	char *dir = th_tmpdir(), *out, *err, want[4400], path[4200];
	const char *argv[] = { "sweep", "--plot", dir, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	snprintf(want, sizeof want, "%s/sweep.csv: expected a sweep's table (tpusim sweep SPEC.yaml -o DIR writes "
		 "DIR/sweep.csv), found none (No such file or directory)\n", dir);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	char *got = listing(dir);
	ck_assert_str_eq(got, "");
	free(got);

	write_csv(dir);
	free(th_write(dir, "plots", "a file\n"));
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	snprintf(want, sizeof want, "%s/plots: expected a directory for the plots, found a file\n", dir);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	snprintf(path, sizeof path, "%s/plots", dir);
	got = th_slurp(path);
	ck_assert_str_eq(got, "a file\n");
	free(got);
	unlink(path);

	/* gnuplot missing from the PATH: the charts drawn so far are removed again. */
	char *empty = th_tmpdir(), *keep = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", empty, 1);
	int rc = th_cli(".", argv, &out, &err);
	setenv("PATH", keep, 1);
	free(keep);
	ck_assert_msg(rc == 2, "%d: %s", rc, err);
	snprintf(want, sizeof want, "%s/plots/cycles_vs_array.rows.png: expected gnuplot on the PATH (Debian package "
		 "gnuplot-nox), found none\n", dir);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	got = listing(dir);
	ck_assert_str_eq(got, "sweep.csv\n");
	free(got);
	th_rmdir(empty);
	free(empty);

	const char *a1[] = { "sweep", "--plot", NULL };
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 2);
	ck_assert_str_eq(err, "--plot: expected a value after it, found the end of the command line\n");
	free(out);
	free(err);
	const char *a2[] = { "sweep", "--plot", dir, "more", NULL };
	ck_assert_int_eq(th_cli(".", a2, &out, &err), 2);
	ck_assert_str_eq(err, "sweep --plot: expected only DIR, found another, \"more\"\n");
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* tpusim sweep SPEC -o DIR --plot: the sweep, then its charts (one group, dataflow: no heatmap). */
START_TEST(run_then_plot)
{
	char *dir = th_tmpdir(), *out, *err, o[4200], plots[4300];
	char *spec = th_write(dir, "s.yaml", "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n"
					     "axes:\n  dataflow: [ws, os]\n");
	snprintf(o, sizeof o, "%s/out", dir);
	const char *argv[] = { "sweep", spec, "-o", o, "--plot", NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	ck_assert_int_eq(count(out, "wrote "), 1 + 20 + 2 + 2);
	snprintf(plots, sizeof plots, "%s/plots", o);
	char *got = listing(plots);
	ck_assert_str_eq(got, "area_mm2_vs_dataflow.png\narea_mm2_vs_dataflow.svg\n"
			      "cycles_vs_dataflow.png\ncycles_vs_dataflow.svg\nenergy_pj_vs_dataflow.png\n"
			      "energy_pj_vs_dataflow.svg\nhbm_bytes_vs_dataflow.png\nhbm_bytes_vs_dataflow.svg\n"
			      "pareto_mlp.csv\npareto_mlp.png\npareto_mlp.svg\npj_per_mac_vs_dataflow.png\n"
			      "pj_per_mac_vs_dataflow.svg\npower_w_vs_dataflow.png\npower_w_vs_dataflow.svg\n"
			      "slice_dataflow.csv\ntops_per_mm2_vs_dataflow.png\ntops_per_mm2_vs_dataflow.svg\n"
			      "tops_per_w_vs_dataflow.png\n"
			      "tops_per_w_vs_dataflow.svg\ntops_vs_dataflow.png\ntops_vs_dataflow.svg\n"
			      "utilization_vs_dataflow.png\nutilization_vs_dataflow.svg\n");
	free(got);
	char *s = svg(o, "cycles_vs_dataflow");
	/* One workload: one line, named in the title. */
	ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 1);
	ck_assert(has_text(s, "cycles vs dataflow: mlp"));
	free(s);
	free(spec);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A sweep whose fronts are not one point: a wider memory bus is faster and
 * costs more per bit (hbm.gbps zipped with energy.hbm_pj_per_bit), crossed
 * with two sizes, two dataflows and two batches: 32 points, analytic.
 */
static const char views_spec[] = "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\naxes:\n"
				 "  array.rows: [8, 16]\n  array.cols: [8, 16]\n  hbm.gbps: [1, 2, 4, 8]\n"
				 "  energy.hbm_pj_per_bit: [1, 4, 16, 64]\n  dataflow: [ws, os]\n  batch: [1, 8]\n"
				 "  model: [analytic]\nzip: [[array.rows, array.cols], [hbm.gbps, energy.hbm_pj_per_bit]]\n";

/* Runs views_spec into dir/out with --plot and the options given (NULL-terminated, at most 8); returns dir/out's csv. */
static struct th_csv *views_sweep(const char *dir, char **text, ...)
{
	char o[4200], *out, *err;
	char *spec = th_write(dir, "s.yaml", views_spec);
	const char *argv[16] = { "sweep", spec, "-o", o, "--plot" };
	int n = 5;
	va_list ap;
	va_start(ap, text);
	for (const char *a; n < 14 && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	snprintf(o, sizeof o, "%s/out", dir);
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	free(out), free(err), free(spec);
	snprintf(o, sizeof o, "%s/out/sweep.csv", dir);
	*text = th_slurp(o);
	return th_csv("sweep.csv", *text);
}

/* dir/out/plots/name.svg (owned). */
static char *svg_of(const char *dir, const char *name)
{
	char o[4200];
	snprintf(o, sizeof o, "%s/out", dir);
	return svg(o, name);
}

/* dir/out/plots/name as a table (owned, with its text in *text). */
static struct th_csv *plot_csv(const char *dir, const char *name, char **text)
{
	char p[4400];
	snprintf(p, sizeof p, "%s/out/plots/%s", dir, name);
	*text = th_slurp(p);
	return th_csv(name, *text);
}

/*
 * The fronts drawn: per batch (a chart each, not pooled), the rows of
 * sweep.csv (those keep says, or all) that no other such row of that batch
 * dominates in (x, y), found here pair by pair, are the rows of the chart's
 * csv (at least least of them), in order of x; and each is labelled in the
 * picture by its axes' names and values.
 */
static void fronts_match(const char *dir, const struct th_csv *t, const char *xcol, const char *ycol,
			 bool (*keep)(const struct th_csv *, size_t), size_t least)
{
	static const char *const batches[2] = { "1", "8" };
	for (int b = 0; b < 2; b++) {
		char name[100], *ftext, label[400];
		size_t want[64], nw = 0;
		for (size_t i = 0; i < t->rows; i++) {
			bool dominated = false;
			if (strcmp(th_csv_get(t, i, "batch"), batches[b]) || strcmp(th_csv_get(t, i, "status"), "ok") ||
			    (keep && !keep(t, i)))
				continue;
			double xi = th_csv_num(t, i, xcol), yi = th_csv_num(t, i, ycol);
			for (size_t j = 0; j < t->rows; j++) {
				if (strcmp(th_csv_get(t, j, "batch"), batches[b]) || (keep && !keep(t, j)))
					continue;
				double xj = th_csv_num(t, j, xcol), yj = th_csv_num(t, j, ycol);
				dominated |= xj <= xi && yj <= yi && (xj < xi || yj < yi);
			}
			if (!dominated)
				want[nw++] = i;
		}
		ck_assert_uint_ge(nw, least);   /* the test means something: a front, not one best point */
		snprintf(name, sizeof name, "pareto_mlp_batch%s.csv", batches[b]);
		struct th_csv *f = plot_csv(dir, name, &ftext);
		ck_assert_uint_eq(f->rows, nw);
		ck_assert_str_eq(f->cell[f->cols - 1], "point");
		ck_assert_str_eq(f->cell[t->cols - sweep_csv_ncols() - 2], xcol);     /* after workload and the axes */
		snprintf(name, sizeof name, "pareto_mlp_batch%s", batches[b]);
		char *s = svg_of(dir, name);
		for (size_t k = 0; k < nw; k++) {
			bool found = false;
			for (size_t i = 0; i < nw; i++)
				found |= !strcmp(th_csv_get(f, k, "point"), th_csv_get(t, want[i], "point"));
			ck_assert_msg(found, "%s: %s is not on the front", name, th_csv_get(f, k, "point"));
			if (k)
				ck_assert(th_csv_num(f, k - 1, xcol) <= th_csv_num(f, k, xcol));
			/* each zip group that varies along the front, its values joined by x, named in the title; the rest there too */
			static const char *const zips[3][2] = { { "array.rows", "array.cols" },
								  { "hbm.gbps", "energy.hbm_pj_per_bit" }, { "dataflow", NULL } };
			static const char *const names[3] = { "rows x cols", "gbps x hbm_pj_per_bit", "dataflow" };
			size_t n = 0;
			char key[400] = "labels:";
			label[0] = '\0';
			for (int g = 0; g < 3; g++) {
				bool varies = false;
				for (size_t j = 1; j < nw; j++)
					varies |= strcmp(th_csv_get(f, j, zips[g][0]), th_csv_get(f, 0, zips[g][0])) != 0;
				if (!varies)
					continue;
				snprintf(key + strlen(key), sizeof key - strlen(key), "%s %s", n ? "," : "", names[g]);
				n += (size_t)snprintf(label + n, sizeof label - n, "%s%s%s%s", n ? ", " : "",
						      th_csv_get(f, k, zips[g][0]), zips[g][1] ? "x" : "",
						      zips[g][1] ? th_csv_get(f, k, zips[g][1]) : "");
			}
			ck_assert_msg(has_text(s, label), "%s: no label %s", name, label);
			ck_assert_msg(!n || has_title(s, key), "%s: no title line %s", name, key);
			/* the groups the front's points share, once, in a line of the title */
			char same[400] = "the same at every point of the front:";
			bool any = false;
			for (int g = 0; g < 3 && k == 0; g++) {
				bool varies = false;
				for (size_t j = 1; j < nw; j++)
					varies |= strcmp(th_csv_get(f, j, zips[g][0]), th_csv_get(f, 0, zips[g][0])) != 0;
				if (varies)
					continue;
				any = true;
				snprintf(same + strlen(same), sizeof same - strlen(same), " %s=%s%s%s", names[g],
					 th_csv_get(f, 0, zips[g][0]), zips[g][1] ? "x" : "", zips[g][1] ? th_csv_get(f, 0, zips[g][1]) : "");
			}
			ck_assert_msg(!any || has_text(s, same), "%s: no title line %s", name, same);
		}
		free(s);
		th_csv_free(f);
		free(ftext);
	}
}


/*
 * slice's rows (what the charts against an axis draw) are exactly the ok rows
 * of sweep.csv that have the values held: want(t, i) says which.
 */
static void slice_is(const char *dir, const struct th_csv *t, const char *slice, bool (*want)(const struct th_csv *, size_t))
{
	char *stext;
	struct th_csv *s = plot_csv(dir, slice, &stext);
	size_t n = 0;
	for (size_t i = 0; i < t->rows; i++) {
		if (!want(t, i))
			continue;
		bool found = false;
		for (size_t k = 0; k < s->rows; k++)
			if (!strcmp(th_csv_get(s, k, "point"), th_csv_get(t, i, "point"))) {
				found = true;
				ck_assert_str_eq(th_csv_get(s, k, "cycles"), th_csv_get(t, i, "cycles"));
				ck_assert(th_csv_num(s, k, "hbm_bytes") ==
					  th_csv_num(t, i, "hbm_read_bytes") + th_csv_num(t, i, "hbm_write_bytes"));
			}
		ck_assert_msg(found, "%s: row %zu not drawn", slice, i);
		n++;
	}
	ck_assert_msg(s->rows == n, "%s: %zu rows drawn, %zu held", slice, s->rows, n);
	th_csv_free(s);
	free(stext);
}

/* The batch the hold test's charts hold, found here: that of the ok row with the fewest cycles among gbps 2, ws. */
static const char *held_batch;

static bool gbps2_ws_any_batch(const struct th_csv *t, size_t i)
{
	return !strcmp(th_csv_get(t, i, "hbm.gbps"), "2") && !strcmp(th_csv_get(t, i, "dataflow"), "ws");
}

static bool gbps2_ws(const struct th_csv *t, size_t i)
{
	return gbps2_ws_any_batch(t, i) && !strcmp(th_csv_get(t, i, "batch"), held_batch);
}

/* Without --hold: the best row of all by cycles (the first of equals) holds the size and the batch. */
static size_t best_all;
static const struct th_csv *best_t;

static bool at_best(const struct th_csv *t, size_t i)
{
	return !strcmp(th_csv_get(t, i, "array.rows"), th_csv_get(best_t, best_all, "array.rows")) &&
	       !strcmp(th_csv_get(t, i, "batch"), th_csv_get(best_t, best_all, "batch"));
}

/*
 * A bad --hold on dir's plotted sweep: exit 2, what there is listed, and the
 * plots there as they were (with the sweep's run, --merge, --plot).
 */
static void hold_errors(const char *dir)
{
	char *out, *err, o[4200], p[4400];
	snprintf(o, sizeof o, "%s/out", dir);
	snprintf(p, sizeof p, "%s/plots", o);
	/* The plots' names and one file's bytes, made different from what a plot writes so that a rewrite shows. */
	char *before = listing(p), *keep;
	snprintf(p, sizeof p, "%s/plots/slice_dataflow.csv", o);
	free(th_write(o, "plots/slice_dataflow.csv", "mine\n"));
	static const struct {
		const char *hold, *msg;
	} cases[] = {
		{ "hbm.gbps=3", "--hold: hbm.gbps: expected one of its values in the sweep (1, 2, 4, 8), found \"3\"\n" },
		{ "hbm.gps=2", "--hold: expected an axis of the sweep (array.rows, array.cols, hbm.gbps, energy.hbm_pj_per_bit, "
			       "dataflow, batch, model), found \"hbm.gps\" (did you mean hbm.gbps?)\n" },
		{ "dataflow", "--hold: expected axis=value (an axis of the sweep: array.rows, array.cols, hbm.gbps, "
			      "energy.hbm_pj_per_bit, dataflow, batch, model), found \"dataflow\"\n" },
		{ "array.cols=16", NULL },      /* with array.rows=8 (zipped): no row has both */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (int how = 0; how < 2; how++) {
			const char *a1[] = { "sweep", "--plot", o, "--hold", "array.rows=8", "--hold", cases[i].hold, NULL };
			const char *a2[] = { "sweep", "--merge", o, "--plot", "--hold", cases[i].hold, "--hold", "array.rows=8", NULL };
			int rc = th_cli(".", how ? a2 : a1, &out, &err);
			ck_assert_msg(rc == 2, "%d: %s", rc, err);
			ck_assert_str_eq(err, cases[i].msg ? cases[i].msg : how ? "--hold: expected an ok row with array.cols=16 "
					 "and array.rows=8, found none\n" : "--hold: expected an ok row with array.rows=8 and "
					 "array.cols=16, found none\n");
			free(out), free(err);
		}
	snprintf(p, sizeof p, "%s/plots", o);
	char *after = listing(p);
	ck_assert_str_eq(after, before);
	snprintf(p, sizeof p, "%s/plots/slice_dataflow.csv", o);
	keep = th_slurp(p);
	ck_assert_str_eq(keep, "mine\n");
	/* The same axis twice; --hold without --plot. */
	const char *a3[] = { "sweep", "--plot", o, "--hold", "batch=1", "--hold", "batch=8", NULL };
	ck_assert_int_eq(th_cli(".", a3, &out, &err), 2);
	ck_assert_str_eq(err, "--hold: expected each axis once, found batch again\n");
	free(out), free(err);
	const char *a4[] = { "sweep", "--merge", o, "--hold", "batch=1", NULL };
	ck_assert_int_eq(th_cli(".", a4, &out, &err), 2);
	ck_assert_str_eq(err, "--hold: expected --plot with it (it says what the charts show), found none\n");
	free(out), free(err);
	/* With the spec: refused before anything runs, no directory made. */
	char *spec = th_write(dir, "s.yaml", views_spec), o2[4300];
	snprintf(o2, sizeof o2, "%s/fresh", dir);
	const char *a6[] = { "sweep", spec, "-o", o2, "--plot", "--hold", "hbm.gbps=3", NULL };
	ck_assert_int_eq(th_cli(".", a6, &out, &err), 2);
	ck_assert_str_eq(err, cases[0].msg);
	ck_assert_int_ne(access(o2, F_OK), 0);
	free(out), free(err), free(spec);
	const char *a5[] = { "sweep", "--plot", o, "--pareto", "latency,cost", NULL };
	ck_assert_int_eq(th_cli(".", a5, &out, &err), 2);
	ck_assert_str_eq(err, "--pareto: expected two of latency, energy, area, joined by a comma (e.g. latency,area), "
			      "found \"latency,cost\"\n");
	free(out), free(err);
	free(before), free(after), free(keep);
}

START_TEST(pareto_of_a_sweep)
{
	char *dir = th_tmpdir(), *text;
	/* By default latency against area (the area grows with the array, the cycles fall). */
	struct th_csv *t = views_sweep(dir, &text, NULL);
	ck_assert_uint_eq(t->rows, 32);
	fronts_match(dir, t, "cycles", "area_mm2", NULL, 2);
	/* Nothing held: against hbm.gbps, every dataflow's line, the size and batch of the best row of all. */
	best_all = 0;
	for (size_t i = 1; i < t->rows; i++)
		if (th_csv_int(t, i, "cycles") < th_csv_int(t, best_all, "cycles"))
			best_all = i;
	best_t = t;
	slice_is(dir, t, "slice_hbm.gbps.csv", at_best);
	char *s = svg_of(dir, "cycles_vs_hbm.gbps"), title[600];
	snprintf(title, sizeof title, "cycles vs hbm.gbps x energy.hbm_pj_per_bit: mlp; held at array.rows x array.cols=%sx%s, "
		 "batch=%s (best by cycles)", th_csv_get(t, best_all, "array.rows"), th_csv_get(t, best_all, "array.cols"),
		 th_csv_get(t, best_all, "batch"));
	ck_assert_msg(has_title(s, title), "%s", title);
	free(s);
	th_csv_free(t);
	free(text);
	/* Energy, the other way round: energy on x. */
	t = views_sweep(dir, &text, "--pareto", "energy,latency", NULL);
	fronts_match(dir, t, "energy_pj", "cycles", NULL, 2);
	th_csv_free(t);
	free(text);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(hold_picks_the_slice)
{
	char *dir = th_tmpdir(), *text, title[600], *s;
	struct th_csv *t = views_sweep(dir, &text, "--hold", "hbm.gbps=2", "--hold", "dataflow=ws", NULL);
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < t->rows; i++)
		if (!strcmp(th_csv_get(t, i, "hbm.gbps"), "2") && !strcmp(th_csv_get(t, i, "dataflow"), "ws") &&
		    (best == SIZE_MAX || th_csv_int(t, i, "cycles") < th_csv_int(t, best, "cycles")))
			best = i;
	held_batch = th_csv_get(t, best, "batch");
	slice_is(dir, t, "slice_array.rows.csv", gbps2_ws);
	s = svg_of(dir, "cycles_vs_array.rows");
	snprintf(title, sizeof title, "cycles vs array.rows x array.cols: mlp; held at hbm.gbps x energy.hbm_pj_per_bit=2x4, "
		 "dataflow=ws (--hold); batch=%s (best by cycles)", held_batch);
	ck_assert_msg(has_title(s, title), "%s", title);
	/* dataflow held: one line, not one per dataflow */
	ck_assert_int_eq(count(s, "<g id=\"gnuplot_plot_"), 1);
	free(s);
	/* The fronts of the points with the values held (at 2 GB/s the larger array is no faster: one point each). */
	fronts_match(dir, t, "cycles", "area_mm2", gbps2_ws_any_batch, 1);
	s = svg_of(dir, "pareto_mlp_batch1");
	/* the title's lines: what is drawn and held, what the points are, and what the front's points share */
	ck_assert(has_text(s, "area vs cycles: mlp, batch=1; held at hbm.gbps x energy.hbm_pj_per_bit=2x4, dataflow=ws "
			      "(--hold)"));
	ck_assert(has_text(s, "every design point coloured by energy; the Pareto-optimal ones labelled"));
	free(s);
	th_csv_free(t);
	free(text);
	hold_errors(dir);
	th_rmdir(dir);
	free(dir);
}
END_TEST


/*
 * Three workloads x three dataflows are nine heatmaps, one more than
 * SWEEPPLOT_MAX_HEATMAPS (8): the note names the one left out (the last
 * workload's last dataflow, in the csv's order) and how to ask for it;
 * --heatmaps all draws the nine.
 */
START_TEST(heatmaps_left_out)
{
	static const char *const dfs[3] = { "ws", "os", "is" };
	char *dir = th_tmpdir(), *text = NULL, *out, *err, p[4300];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fputs("workload,array.rows,hbm.gbps,dataflow,cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,energy_pj,"
	      "pj_per_mac,%T,status\n", f);
	for (int w = 1; w <= 3; w++)
		for (int r = 8; r <= 16; r += 8)
			for (int g = 100; g <= 400; g += 300)
				for (int d = 0; d < 3; d++)
					fprintf(f, "n/w%d.yaml,%d,%d,%s,%d,0.5,1,1,1,%d,1%%R,ok\n", w, r, g, dfs[d],
						1000 * w + r + g, 10 * r + d);
	fclose(f);
	free(write_fixture(dir, "sweep.csv", text));
	free(text);
	const char *a1[] = { "sweep", "--plot", dir, NULL };
	ck_assert_msg(th_cli(".", a1, &out, &err) == 0, "%s", err);
	ck_assert_msg(strstr(out, "heatmaps: drew the first 8 of 9 workload x dataflow pairs (at most 8); left out: w3 is "
				  "(--heatmaps all draws every one, --hold dataflow=... one dataflow's)\n") != NULL, "%s", out);
	ck_assert_int_eq(count(out, "/plots/heatmap_"), 2 * 8);
	snprintf(p, sizeof p, "%s/plots/heatmap_w3_is.png", dir);
	ck_assert_int_ne(access(p, F_OK), 0);
	free(out), free(err);
	const char *a2[] = { "sweep", "--plot", dir, "--heatmaps", "all", NULL };
	ck_assert_msg(th_cli(".", a2, &out, &err) == 0, "%s", err);
	ck_assert_ptr_null(strstr(out, "left out"));
	ck_assert_int_eq(count(out, "/plots/heatmap_"), 2 * 9);
	ck_assert_int_eq(access(p, F_OK), 0);
	free(out), free(err);
	/* Drawn again without it: the ninth of the earlier draw goes; files of other names stay. */
	char mine[4300], notes[4300];
	snprintf(mine, sizeof mine, "%s/plots", dir);
	free(th_write(mine, "mine.png", "not a chart of tpusim's"));
	free(th_write(mine, "heatmap_notes.txt", "nor this"));
	snprintf(mine, sizeof mine, "%s/plots/mine.png", dir);
	snprintf(notes, sizeof notes, "%s/plots/heatmap_notes.txt", dir);
	ck_assert_msg(th_cli(".", a1, &out, &err) == 0, "%s", err);
	ck_assert_int_ne(access(p, F_OK), 0);
	p[strlen(p) - 3] = 0;
	strcat(p, "svg");
	ck_assert_int_ne(access(p, F_OK), 0);
	ck_assert_int_eq(access(mine, F_OK), 0);
	ck_assert_int_eq(access(notes, F_OK), 0);
	free(out), free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Text from the user reaches gnuplot's double-quoted strings, in which
 * gnuplot would run a command between backquotes: an axis value in the
 * sweep's charts, and a config's name in run --plot's. Neither may run.
 */
START_TEST(no_command_from_text)
{
	char *dir = th_tmpdir(), *out, *err, o[4200], mark[4300], spec_text[9000], name[4400];
	snprintf(mark, sizeof mark, "%s/ran", dir);
	snprintf(name, sizeof name, "`touch %s`", mark);
	snprintf(spec_text, sizeof spec_text, "configs: [configs/lab_4x4.yaml]\nworkloads: [configs/workloads/mlp.yaml]\n"
		 "axes:\n  name: [\"%s\", b]\n  array.rows: [4, 8]\n  model: [analytic]\n", name);
	char *spec = th_write(dir, "s.yaml", spec_text);
	snprintf(o, sizeof o, "%s/out", dir);
	const char *argv[] = { "sweep", spec, "-o", o, "--plot", NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	ck_assert_msg(access(mark, F_OK) != 0, "a backquoted axis value ran");
	free(out), free(err);

	char *cfg_text = th_slurp("configs/lab_4x4.yaml"), cfg2[9000];
	snprintf(cfg2, sizeof cfg2, "%s\nname: \"%s\"\n", strstr(cfg_text, "\nclock_ghz"), name);
	char *cfg = th_write(dir, "c.yaml", cfg2), p[4300];
	snprintf(p, sizeof p, "%s/p", dir);
	const char *argv2[] = { "run", "-c", cfg, "-w", "configs/workloads/mlp.yaml", "--plot", p, NULL };
	ck_assert_msg(th_cli(".", argv2, &out, &err) == 0, "%s", err);
	ck_assert_msg(access(mark, F_OK) != 0, "a backquoted config name ran");
	free(out), free(err), free(cfg_text), free(cfg), free(spec);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *sweepplot_suite(void)
{
	Suite *s = suite_create("sweepplot");
	TCase *t = tcase_create("sweepplot");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, header_is_sweeps);
	tcase_add_test(t, pareto_by_hand);
	tcase_add_test(t, pareto_against_pairs);
	tcase_add_test(t, groups);
	tcase_add_test(t, reader);
	tcase_add_test(t, charts);
	tcase_add_test(t, errors);
	tcase_add_test(t, errors_around);
	tcase_add_test(t, run_then_plot);
	tcase_add_test(t, no_command_from_text);
	tcase_add_test(t, pareto_of_a_sweep);
	tcase_add_test(t, hold_picks_the_slice);
	tcase_add_test(t, heatmaps_left_out);
	suite_add_tcase(s, t);
	return s;
}
