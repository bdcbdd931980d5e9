/*
 * test_plots.c - the roofline and stall charts (compare's chart and table: test_compare.c).
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

Suite *plots_suite(void)
{
	Suite *s = suite_create("plots");
	TCase *t = tcase_create("plots");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, roofline_png_and_svg);
	tcase_add_test(t, run_plot_dir);
	suite_add_tcase(s, t);
	return s;
}
