/*
 * test_workload.c - reading workload YAML and SCALE-Sim topology CSVs.
 */
#include <stdlib.h>
#include <string.h>

#include "tests.h"

START_TEST(yaml_defaults_and_types)
{
	struct workload w;
	struct oplist ops;
	th_lower("name: t\nbatch: 3\nlayers:\n"
		 "  - {name: c, type: conv2d, in_h: 8, in_w: 8, in_c: 4, out_c: 2, kernel: 3}\n"
		 "  - {name: a, type: attention, seq: 4, d_model: 8, heads: 2}\n", &w, &ops);
	ck_assert_str_eq(w.name, "t");
	ck_assert_int_eq(w.batch, 3);
	ck_assert_int_eq(w.n, 2);
	ck_assert_int_eq(w.layers[0].type, L_CONV2D);
	ck_assert_int_eq(w.layers[0].stride, 1);
	ck_assert_int_eq(w.layers[0].padding, 0);
	ck_assert_int_eq(w.layers[0].groups, 1);
	ck_assert_int_eq(w.layers[0].repeat, 1);
	ck_assert_int_eq(w.layers[1].kv_heads, 0);
	ck_assert_int_eq(w.layers[1].mode, ATTN_PREFILL);
	/* positions: the layer map starts at line 4, column 5 */
	ck_assert_int_eq(w.layers[0].pos.line, 4);
	ck_assert_int_eq(w.layers[0].pos.col, 5);
	ck_assert_int_eq(workload_key_pos(&w.layers[0], "kernel").line, 4);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* SCALE-Sim conv form: no padding, out = ceil((H - R + s) / s), K = R*S*C, N = filters. */
START_TEST(scalesim_conv_csv)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "t.csv",
		"Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
		"Conv1, 227, 227, 11, 11, 3, 96, 4,\n"
		"\n"
		"Conv2 ,10 ,9 ,3 ,2 ,5 ,7 ,2 ,\n"
		"DP1, 6, 6, 3, 3, 4, 1, 1,\n");
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_str_eq(w.name, "t");
	ck_assert_int_eq(ops.n, 3);
	/* Conv1: ceil((227 - 11 + 4) / 4) = 55 -> M = 3025; K = 11*11*3 = 363 */
	ck_assert_int_eq(ops.v[0].m, 3025);
	ck_assert_int_eq(ops.v[0].k, 363);
	ck_assert_int_eq(ops.v[0].n, 96);
	/* Conv2: ceil((10 - 3 + 2) / 2) = 5, ceil((9 - 2 + 2) / 2) = 5 -> M = 25; K = 3*2*5 = 30 */
	ck_assert_int_eq(ops.v[1].m, 25);
	ck_assert_int_eq(ops.v[1].k, 30);
	ck_assert_int_eq(ops.v[1].n, 7);
	ck_assert_str_eq(ops.v[1].name, "Conv2");
	/* DP rows run one single-channel layer per channel: K = 9, repeat = 4; out = 4 x 4 */
	ck_assert_int_eq(ops.v[2].k, 9);
	ck_assert_int_eq(ops.v[2].repeat, 4);
	ck_assert_int_eq(ops.v[2].m, 16);
	oplist_release(&ops);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* SCALE-Sim GEMM form "Layer, M, N, K": an M x K input times a K x N weight. */
START_TEST(scalesim_gemm_csv)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "g.csv", "Layer,M,N,K\nqk,1024,512,64\nff, 8, 16, 32,\n");
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(&w, &ops, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ops.n, 2);
	ck_assert_int_eq(ops.v[0].m, 1024);
	ck_assert_int_eq(ops.v[0].n, 512);
	ck_assert_int_eq(ops.v[0].k, 64);
	ck_assert(ops.v[0].b_weight && !ops.v[0].a_weight);
	ck_assert_int_eq(ops.v[1].m, 8);
	ck_assert_int_eq(ops.v[1].n, 16);
	ck_assert_int_eq(ops.v[1].k, 32);
	oplist_release(&ops);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* --batch overrides the file's batch. */
START_TEST(batch_override)
{
	struct workload w;
	struct err e = { 0 };
	ck_assert_msg(workload_load(&w, "configs/workloads/mlp.yaml", 5, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(w.batch, 5);
	workload_release(&w);
	ck_assert_msg(workload_load(&w, "configs/workloads/mlp.yaml", 0, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(w.batch, 16);
	workload_release(&w);
}
END_TEST

Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *t = tcase_create("workload");
	tcase_add_test(t, yaml_defaults_and_types);
	tcase_add_test(t, scalesim_conv_csv);
	tcase_add_test(t, scalesim_gemm_csv);
	tcase_add_test(t, batch_override);
	suite_add_tcase(s, t);
	return s;
}
