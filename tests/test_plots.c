/*
 * test_plots.c - the roofline and stall charts (compare's chart and table: test_compare.c): the
 * files, and what the roofline's SVG draws (its points against the run's layers.csv, placed on
 * axes read from the chart's own tick labels; its roof, ridge, title and key against hand counts).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests.h"

/* The first bytes of path, or fails. */
static void head_of(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s was not written", path);
	memset(buf, 0, n);
	ck_assert_uint_gt(fread(buf, 1, n - 1, f), 0);
	fclose(f);
}

START_TEST(roofline_png_and_svg)
{
	char *dir = th_tmpdir(), png[4200], svg[4200], bad[4200], buf[64], *out, *err;
	snprintf(png, sizeof png, "%s/r.png", dir);
	snprintf(svg, sizeof svg, "%s/r.svg", dir);
	snprintf(bad, sizeof bad, "%s/r.jpg", dir);
	const char *a1[] = { "roofline", "-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/mlp.yaml", "-o", png, NULL };
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 0);
	head_of(png, buf, sizeof buf);
	ck_assert_int_eq(memcmp(buf, "\x89PNG", 4), 0);
	free(out);
	free(err);
	const char *a2[] = { "roofline", "-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/mlp.yaml", "-o", svg, NULL };
	ck_assert_int_eq(th_cli(".", a2, &out, &err), 0);
	head_of(svg, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "<?xml"));
	free(out);
	free(err);
	const char *a3[] = { "roofline", "-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/mlp.yaml", "-o", bad, NULL };
	ck_assert_int_eq(th_cli(".", a3, &out, &err), 2);
	char want[4300];
	snprintf(want, sizeof want, "-o: expected a file name ending in .png or .svg, found \"%s\"\n", bad);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- what the roofline draws: gnuplot's SVG, read back ---- */

/* The first <g id="gnuplot_plot_N"> of svg (the data; the key repeats the ids later), up to the next group. */
static const char *series(const char *svg, int n, size_t *len)
{
	char id[64];
	snprintf(id, sizeof id, "<g id=\"gnuplot_plot_%d\"", n);
	const char *at = strstr(svg, id), *next;
	ck_assert_msg(at != NULL, "no series %d in the chart", n);
	next = strstr(at + 1, "<g id=\"gnuplot_plot_");
	*len = next ? (size_t)(next - at) : strlen(at);
	return at;
}

/* The points (marks placed by translate) of one series, into x[] and y[]; returns how many. */
static int marks(const char *sec, size_t len, double *x, double *y, int max)
{
	int n = 0;
	for (const char *p = sec; (p = strstr(p, "<use xlink:href='#gpPt")) && p < sec + len; p++) {
		const char *t = strstr(p, "translate(");
		ck_assert_ptr_nonnull(t);
		ck_assert_int_lt(n, max);
		ck_assert_int_eq(sscanf(t, "translate(%lf,%lf)", &x[n], &y[n]), 2);
		n++;
	}
	return n;
}

/* Every text of the SVG with the place it is drawn at (translate before it): n of them. */
struct label {
	double x, y;
	char text[200];
};

static int labels(const char *svg, struct label *l, int max)
{
	int n = 0;
	for (const char *p = svg; (p = strstr(p, "<text>")); p++) {
		const char *tr = NULL, *end = strstr(p, "</text>");
		for (const char *q = svg; (q = strstr(q, "translate(")) && q < p; q++)
			tr = q;
		ck_assert(tr && end && n < max);
		ck_assert_int_eq(sscanf(tr, "translate(%lf,%lf)", &l[n].x, &l[n].y), 2);
		snprintf(l[n].text, sizeof l[n].text, "%.*s", (int)(end - p - 6), p + 6);
		n++;
	}
	return n;
}

/* The text drawn exactly as t, or fails. */
static const struct label *label_of(const struct label *l, int n, const char *t)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(l[i].text, t))
			return &l[i];
	ck_abort_msg("no text \"%s\" in the chart", t);
	return NULL;
}

/*
 * A log axis from its tick labels: pixel = a + b log10(value). The x axis's
 * labels share one y (centred on their ticks: their x is the tick's); the y
 * axis's share one x (their y sits a baseline off the tick, the same for all,
 * so only differences of y are used).
 */
struct axis {
	double a, b;
};

static struct axis log_axis(const struct label *l, int n, bool x)
{
	double v0 = 0, p0 = 0, v1 = 0, p1 = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		char *end;
		double v = strtod(l[i].text, &end);
		if (end == l[i].text || *end || v <= 0)
			continue;
		/* On the x axis when another number label shares its y; on the y axis when one shares its x. */
		bool on_x = false, on_y = false;
		for (int j = 0; j < n; j++) {
			if (j == i || strtod(l[j].text, &end) <= 0 || *end)
				continue;
			on_x |= fabs(l[j].y - l[i].y) < 0.01;
			on_y |= fabs(l[j].x - l[i].x) < 0.01;
		}
		if (x ? !on_x : !on_y)
			continue;
		if (k++ == 0)
			v0 = v, p0 = x ? l[i].x : l[i].y;
		else
			v1 = v, p1 = x ? l[i].x : l[i].y;
	}
	ck_assert_msg(k >= 2, "fewer than two tick labels on the %s axis", x ? "x" : "y");
	struct axis ax;
	ax.b = (p1 - p0) / (log10(v1) - log10(v0));
	ax.a = p0 - ax.b * log10(v0);
	return ax;
}

/*
 * tpusim roofline for mlp on lab_4x4, as SVG, against what is known without
 * the chart: lab_4x4 peaks at 4 x 4 PEs x 2 ops x 1 GHz = 0.032 TOPS and
 * streams 8 GB/s (hbm.gbps 8, one channel), so the ridge is at 4 ops/B; mlp
 * has three fc layers (the two ReLUs have no MACs and no point); each
 * layer's point sits at the intensity and speed the run reports in
 * layers.csv; the roof's flat part is at the peak; two canonical kernels;
 * the title, the axes and the key.
 */
START_TEST(roofline_draws_the_layers)
{
	char *dir = th_tmpdir(), svg_path[4200], run_dir[4200], path[4300], *out, *err;
	snprintf(svg_path, sizeof svg_path, "%s/r.svg", dir);
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	const char *a1[] = { "roofline", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "-o", svg_path,
			     NULL };
	ck_assert_msg(th_cli(".", a1, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	const char *a2[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "-o", run_dir, NULL };
	ck_assert_msg(th_cli(".", a2, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	char *svg = th_slurp(svg_path);
	snprintf(path, sizeof path, "%s/layers.csv", run_dir);
	char *csv_text = th_slurp(path);
	struct th_csv *csv = th_csv("layers.csv", csv_text);

	static struct label l[128];
	int nl = labels(svg, l, 128);
	label_of(l, nl, "Roofline: mlp on lab_4x4 (4x4 ws, 8 GB/s)");
	label_of(l, nl, "performance (TOPS)");
	label_of(l, nl, "layers of mlp");
	label_of(l, nl, "ridge point");
	label_of(l, nl, "ridge 4 ops/B");
	label_of(l, nl, "roofline: min(0.032 TOPS, 8 GB/s x intensity)");
	bool xlabel = false;
	for (int i = 0; i < nl; i++)
		xlabel |= !strncmp(l[i].text, "arithmetic intensity", 20);
	ck_assert_msg(xlabel, "no x-axis label \"arithmetic intensity ...\"");
	struct axis ax = log_axis(l, nl, true), ay = log_axis(l, nl, false);

	/* Series 1: the roof, a path; its flat part (the least y) is the peak. */
	size_t len;
	const char *roof = series(svg, 1, &len), *d = strstr(roof, " d='M");
	ck_assert(d && d < roof + len);
	double roof_y = 1e9, px, py;
	for (const char *p = d + 4; *p == 'M' || *p == 'L'; p = strchr(p, ' ') + 1) {
		ck_assert_int_eq(sscanf(p + 1, "%lf,%lf", &px, &py), 2);
		roof_y = fmin(roof_y, py);
	}

	/* Series 2: one point per layer with MACs, where layers.csv puts it. */
	double x[64], y[64];
	const char *sec = series(svg, 2, &len);
	int n = marks(sec, len, x, y, 64), k = 0;
	ck_assert_int_eq(n, 3);
	for (size_t r = 0; r < csv->rows; r++) {
		if (th_csv_int(csv, r, "macs") == 0)
			continue;
		double ai = th_csv_num(csv, r, "arithmetic_intensity"), tops = th_csv_num(csv, r, "achieved_ops_per_s") / 1e12;
		ck_assert_int_lt(k, n);
		ck_assert_msg(fabs(x[k] - (ax.a + ax.b * log10(ai))) < 1.5, "%s: drawn at x %.2f, its intensity %g is at %.2f",
			      th_csv_get(csv, r, "layer"), x[k], ai, ax.a + ax.b * log10(ai));
		ck_assert_msg(fabs((y[k] - roof_y) - ay.b * (log10(tops) - log10(0.032))) < 1.5,
			      "%s: drawn %.2f px below the roof, its %g TOPS is %.2f below", th_csv_get(csv, r, "layer"),
			      y[k] - roof_y, tops, ay.b * (log10(tops) - log10(0.032)));
		k++;
	}
	ck_assert_int_eq(k, 3);
	/* Series 3: the two canonical kernels; series 4: the ridge, at 4 ops/B on the roof. */
	sec = series(svg, 3, &len);
	ck_assert_int_eq(marks(sec, len, x, y, 64), 2);
	sec = series(svg, 4, &len);
	ck_assert_int_eq(marks(sec, len, x, y, 64), 1);
	ck_assert_msg(fabs(x[0] - (ax.a + ax.b * log10(4))) < 1.5 && fabs(y[0] - roof_y) < 1.5,
		      "the ridge drawn at (%.2f, %.2f), 4 ops/B on the roof is (%.2f, %.2f)", x[0], y[0],
		      ax.a + ax.b * log10(4), roof_y);
	th_csv_free(csv);
	free(csv_text);
	free(svg);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(run_plot_dir)
{
	char *dir = th_tmpdir(), sub[4200], path[4300], buf[8], *out, *err;
	snprintf(sub, sizeof sub, "%s/plots", dir);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--plot", sub, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	snprintf(path, sizeof path, "%s/cycles.png", sub);
	head_of(path, buf, sizeof buf);
	ck_assert_int_eq(memcmp(buf, "\x89PNG", 4), 0);
	snprintf(path, sizeof path, "%s/roofline.png", sub);
	head_of(path, buf, sizeof buf);
	ck_assert_int_eq(memcmp(buf, "\x89PNG", 4), 0);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * With the ideal memory model there is no memory roof: the roof is flat at
 * lab_4x4's peak (0.032 TOPS), and no ridge point or GB/s is drawn.
 */
START_TEST(roofline_ideal_memory_is_flat)
{
	char *dir = th_tmpdir(), svg_path[4200], *out, *err;
	snprintf(svg_path, sizeof svg_path, "%s/r.svg", dir);
	const char *a[] = { "roofline", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--set",
			    "hbm.model=ideal", "-o", svg_path, NULL };
	ck_assert_msg(th_cli(".", a, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	char *svg = th_slurp(svg_path);
	static struct label l[128];
	int nl = labels(svg, l, 128);
	label_of(l, nl, "Roofline: mlp on lab_4x4 (4x4 ws, ideal memory)");
	label_of(l, nl, "roofline: 0.032 TOPS (ideal memory: no memory roof)");
	label_of(l, nl, "layers of mlp");
	for (int i = 0; i < nl; i++) {
		ck_assert_msg(!strstr(l[i].text, "ridge"), "a ridge is drawn: \"%s\"", l[i].text);
		ck_assert_msg(!strstr(l[i].text, "inf"), "an infinite number is drawn: \"%s\"", l[i].text);
	}
	free(svg);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *plots_suite(void)
{
	Suite *s = suite_create("plots");
	TCase *t = tcase_create("plots");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, roofline_png_and_svg);
	tcase_add_test(t, roofline_draws_the_layers);
	tcase_add_test(t, roofline_ideal_memory_is_flat);
	tcase_add_test(t, run_plot_dir);
	suite_add_tcase(s, t);
	return s;
}
