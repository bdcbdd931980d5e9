/*
 * test_plots.c - roofline, stall and comparison charts, and the compare table.
 */
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
	ck_assert_ptr_nonnull(strstr(err, "r.jpg: expected a file name ending in .png or .svg, found another"));
	free(out);
	free(err);
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
 * compare --csv on a 4x4 array, M = 10, K = 6, N = 5, ideal memory. What each
 * dataflow reads from SRAM follows from which operand stays:
 *   ws: weights 6x5 shifted once (30), inputs 6x10 streamed per column block
 *       of N (2 blocks: 120), partial sums read back once (2 row blocks of K:
 *       10x5x4 = 200) plus 50 results out: 250
 *   os: inputs 10x6 per column block of N (2: 120), weights 6x5 per row block
 *       of M (3: 90), results out 50
 *   is: inputs 6x10 shifted once (60), weights 6x5 streamed per column block of
 *       M (3: 90), partial sums as ws: 250
 */
START_TEST(compare_differs_by_model)
{
	char *dir = th_tmpdir(), *w = th_write(dir, "w.yaml", "layers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	char *out, *err;
	const char *argv[] = { "compare", "-c", "configs/lab_4x4.yaml", "-w", w, "--ideal-memory", "--csv", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "layer,dataflow,cycles,cycles_compute,cycles_weights,cycles_weight_shift,"
					  "cycles_inputs,cycles_outputs,cycles_vector,cycles_fill_drain,sram_weights_read_bytes,"
					  "sram_inputs_read_bytes,sram_outputs_read_bytes,hbm_read_bytes,hbm_write_bytes,"
					  "energy_pj\n"));
	/*
	 * cycles from tests/test_analytic.c: ws 47, os 41, is 38; compute is the streams: 4 x 10, 6 x 6, 6 x 5;
	 * weight_shift the first shift (4; os none), every later one hidden; fill_drain the rest
	 */
	ck_assert_ptr_nonnull(strstr(out, "\ng,ws,47,40,0,4,0,0,0,3,30,120,250,90,50,"));
	ck_assert_ptr_nonnull(strstr(out, "\ng,os,41,36,0,0,0,0,0,5,90,120,50,90,50,"));
	ck_assert_ptr_nonnull(strstr(out, "\ng,is,38,30,0,4,0,0,0,4,90,60,250,90,50,"));
	free(out);
	free(err);
	free(w);
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
	tcase_add_test(t, run_plot_dir);
	tcase_add_test(t, compare_differs_by_model);
	suite_add_tcase(s, t);
	return s;
}
