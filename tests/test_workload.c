/*
 * test_workload.c - reading workload YAML and SCALE-Sim topology CSVs.
 */
#include <stdio.h>
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
	ck_assert_ptr_eq(th_op(&ops, "Conv2"), &ops.v[1]);
	/* DP rows run one single-channel layer per channel: K = 9, repeat = 4; out = 4 x 4 */
	ck_assert_int_eq(ops.v[2].k, 9);
	ck_assert_int_eq(ops.v[2].repeat, 4);
	ck_assert_int_eq(ops.v[2].m, 16);
	/* A topology names no inputs: its layers chain by size alone (lower.h) */
	ck_assert_int_eq(w.layers[1].ninputs, 0);
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

/* Loads text as dir/name and expects the error "name:" + want (file:line:col added by the path). */
static void expect_load_error(const char *name, const char *text, size_t len, const char *want)
{
	struct workload w;
	struct err e = { 0 };
	char *dir = th_tmpdir(), path[512], full[1024];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	ck_assert_int_eq(workload_load(&w, path, 0, &e), -1);
	ck_assert_int_eq(err_status(&e), ERR_INPUT);
	snprintf(full, sizeof full, "%s%s", path, want);
	ck_assert_str_eq(e.msg, full);
	th_rmdir(dir);
	free(dir);
}

#define CSV_HEAD "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
#define HEADER_WANT ":1:1: expected the header line (Layer name, IFMAP Height, IFMAP Width, Filter Height, " \
	"Filter Width, Channels, Num Filter, Strides, or Layer, M, N, K), found a data row"

/* A NUL or control byte inside a CSV row is an error at its column, not the end of the row. */
START_TEST(csv_control_bytes)
{
	static const char nul[] = CSV_HEAD "Conv1, 22\0" "7, 227, 11, 11, 3, 96, 4,\n";
	expect_load_error("t.csv", nul, sizeof nul - 1, ":2:10: expected text, found a NUL byte");
	expect_load_error("t.csv", CSV_HEAD "Conv1, 227\001, 227, 11, 11, 3, 96, 4,\n", strlen(CSV_HEAD) + 36,
			  ":2:11: expected text, found the control byte \\x01");
	expect_load_error("t.csv", "Layer,M,N,K\nqk,1,2,3\x7f\n", 21, ":2:9: expected text, found the control byte \\x7f");
}
END_TEST

/* SCALE-Sim skips its first line: a first line that is a layer is an error, not a lost layer. */
START_TEST(csv_first_line_is_header)
{
	const char *conv = "Conv1, 227, 227, 11, 11, 3, 96, 4,\nConv2, 27, 27, 5, 5, 96, 256, 1,\n";
	expect_load_error("t.csv", conv, strlen(conv), HEADER_WANT);
	expect_load_error("g.csv", "qk,1024,1024,64\n", 16, HEADER_WANT);
}
END_TEST

/*
 * A count has one limit whichever format gives it: repeat in YAML, groups
 * (each group is an instance), and a DP row's channels (SCALE-Sim runs one
 * layer per channel) all stop at 10^9; 10^9 itself loads.
 */
START_TEST(counts_share_limits)
{
	struct workload w;
	struct err e = { 0 };
	const char *dp = CSV_HEAD "DP1, 6, 6, 3, 3, 2000000000, 1, 1,\n";
	const char *yrep = "layers:\n  - {name: x, type: fc, in_features: 4, out_features: 4, repeat: 2000000000}\n";
	const char *ygroups = "layers:\n  - {name: d, type: conv2d, in_h: 6, in_w: 6, in_c: 2000000000, "
			      "out_c: 2000000000, kernel: 3, groups: 2000000000}\n";
	char *dir = th_tmpdir(), *path = th_write(dir, "ok.csv", CSV_HEAD "DP1, 6, 6, 3, 3, 1000000000, 1, 1,\n");
	expect_load_error("t.csv", dp, strlen(dp),
			  ":2:18: channels: expected an integer in [1, 1000000000], found \"2000000000\"");
	expect_load_error("w.yaml", yrep, strlen(yrep),
			  ":2:66: layers[0].repeat: expected an integer in [1, 1000000000], found \"2000000000\"");
	expect_load_error("w.yaml", ygroups, strlen(ygroups),
			  ":2:103: layers[0].groups: expected an integer in [1, 1000000000], found \"2000000000\"");
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(w.layers[0].repeat, 1000000000);
	ck_assert_int_eq(w.layers[0].in_c, 1);
	/* The channels' place is kept for later errors. */
	ck_assert_int_eq(workload_key_pos(&w.layers[0], "in_c").col, 18);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Hex, inf, leading zeros and junk are not numbers, in YAML layers and CSV columns alike. */
START_TEST(numbers_one_grammar)
{
	const char *csv = CSV_HEAD "C1, 0x10, 6, 3, 3, 2, 1, 1,\n";
	const char *gemm = "Layer,M,N,K\nqk,1e3,2,3\n";
	const char *y = "layers:\n  - {name: x, type: fc, in_features: 017, out_features: 4}\n";
	const char *tag = "layers:\n  - {name: x, type: fc, in_features: !!int 17, out_features: 4}\n";
	expect_load_error("t.csv", csv, strlen(csv),
			  ":2:5: ifmap_height: expected an integer in [1, 1099511627776], found \"0x10\"");
	expect_load_error("g.csv", gemm, strlen(gemm), ":2:4: m: expected an integer in [1, 1099511627776], found \"1e3\"");
	expect_load_error("w.yaml", y, strlen(y),
			  ":2:38: layers[0].in_features: expected an integer in [1, 1099511627776], found \"017\"");
	expect_load_error("w.yaml", tag, strlen(tag),
			  ":2:38: layers[0].in_features: expected a plain value, found a tag \"!!int\" (tags are not supported)");
}
END_TEST

/* A map of 80,000 keys finds its duplicate at once (a hash set, not a scan per key). */
START_TEST(many_keys_duplicate)
{
	size_t cap = 80000 * 16 + 256, n = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	n += (size_t)snprintf(text + n, cap - n, "name: d\nlayers:\n  - name: x\n    type: fc\n");
	for (int i = 0; i < 80000; i++)
		n += (size_t)snprintf(text + n, cap - n, "    k%d: 1\n", i);
	n += (size_t)snprintf(text + n, cap - n, "    k79999: 2\n    k0: 2\n");
	/* k79999 is on line 4 + 80,000; its second copy on the line after the last. */
	expect_load_error("w.yaml", text, n, ":80005:5: layers[0].k79999: expected each key once, found it again "
			  "(first at line 80004)");
	free(text);
}
END_TEST

/* At most 1,000,000 layers, in either format; the error is at the first layer too many. */
START_TEST(layer_limit)
{
	size_t rows = WORKLOAD_MAX_LAYERS + 1, cap = 16 + rows * 10, n = 0;
	char *text = malloc(cap), want[128];
	ck_assert_ptr_nonnull(text);
	n += (size_t)snprintf(text + n, cap - n, "Layer,M,N,K\n");
	for (size_t i = 0; i < rows; i++)
		n += (size_t)snprintf(text + n, cap - n, "a,1,2,3\n");
	snprintf(want, sizeof want, ":%zu:1: expected at most 1000000 layers, found more", rows + 1);
	expect_load_error("g.csv", text, n, want);
	/* Exactly the limit loads. */
	{
		struct workload w;
		struct err e = { 0 };
		char *dir = th_tmpdir(), *path;
		text[n - 8] = '\0';
		path = th_write(dir, "ok.csv", text);
		ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
		ck_assert_uint_eq(w.n, WORKLOAD_MAX_LAYERS);
		workload_release(&w);
		free(path);
		th_rmdir(dir);
		free(dir);
	}
	free(text);
}
END_TEST

/*
 * inputs names earlier layers, each the latest of its name before this one:
 * the third layer, itself named a, reads the first.
 */
START_TEST(inputs_resolve)
{
	struct workload w;
	struct oplist ops;
	th_lower("name: t\nlayers:\n"
		 "  - {name: a, type: relu, elements: 4}\n"
		 "  - {name: b, type: relu, elements: 4}\n"
		 "  - {name: a, type: relu, elements: 4, inputs: [a]}\n"
		 "  - {name: s, type: add, elements: 4, inputs: [a, b]}\n"
		 "  - {name: w, type: matmul, m: 1, k: 2, n: 2, a: weight, b: weight, inputs: []}\n"
		 "  - name: m\n    type: matmul\n    m: 2\n    k: 2\n    n: 2\n    b: activation\n"
		 "    inputs:\n      - s\n      - a\n", &w, &ops);
	ck_assert_uint_eq(w.n, 6);
	ck_assert_int_eq(w.layers[0].ninputs, 0);
	ck_assert_int_eq(w.layers[1].ninputs, 0);
	ck_assert_int_eq(w.layers[2].ninputs, 1);
	ck_assert_int_eq(w.layers[2].inputs[0], 0);
	ck_assert_int_eq(w.layers[3].ninputs, 2);
	ck_assert_int_eq(w.layers[3].inputs[0], 2);
	ck_assert_int_eq(w.layers[3].inputs[1], 1);
	ck_assert_int_eq(w.layers[4].ninputs, 0);
	ck_assert_int_eq(w.layers[5].ninputs, 2);
	ck_assert_int_eq(w.layers[5].inputs[0], 3);
	ck_assert_int_eq(w.layers[5].inputs[1], 2);
	/* One activation input per type, add 2, matmul one per activation operand */
	ck_assert_int_eq(workload_ninputs(&w.layers[0]), 1);
	ck_assert_int_eq(workload_ninputs(&w.layers[3]), 2);
	ck_assert_int_eq(workload_ninputs(&w.layers[4]), 0);
	ck_assert_int_eq(workload_ninputs(&w.layers[5]), 2);
	/* Line 6, "  - {name: s, type: add, elements: 4, inputs: [a, b]}": the list at column 47, b at 51 */
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs").line, 6);
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs").col, 47);
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs[1]").col, 51);
	/* The block list: its names on lines 15 and 16, column 9 */
	ck_assert_int_eq(workload_key_pos(&w.layers[5], "inputs[0]").line, 15);
	ck_assert_int_eq(workload_key_pos(&w.layers[5], "inputs[1]").line, 16);
	ck_assert_int_eq(workload_key_pos(&w.layers[5], "inputs[1]").col, 9);
	/* Not given: the layer's own place */
	ck_assert_int_eq(workload_key_pos(&w.layers[0], "inputs").line, 3);
	ck_assert_int_eq(workload_key_pos(&w.layers[0], "inputs").col, 5);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

#define LAYER_A "layers:\n  - {name: a, type: relu, elements: 4}\n"

/* Every way inputs can be wrong, each at its place. */
START_TEST(inputs_errors)
{
	static const struct { const char *text, *want; } cases[] = {
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a, foo]}\n",
		  ":3:51: layers[1].inputs[1]: expected the name of an earlier layer, found \"foo\"" },
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a, c]}\n  - {name: c, type: relu, elements: 4}\n",
		  ":3:51: layers[1].inputs[1]: expected the name of an earlier layer, found \"c\" (layers[2], a later layer)" },
		/* The name is looked for past layers that are wrong themselves: this error comes first. */
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a, c]}\n  - {name: x, type: bogus}\n"
			  "  - {name: c, type: relu, elements: 4}\n",
		  ":3:51: layers[1].inputs[1]: expected the name of an earlier layer, found \"c\" (layers[3], a later layer)" },
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a, zz]}\n  - {name: x, type: bogus}\n",
		  ":3:51: layers[1].inputs[1]: expected the name of an earlier layer, found \"zz\"" },
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [b, a]}\n",
		  ":3:48: layers[1].inputs[0]: expected the name of an earlier layer, found \"b\" (this layer)" },
		{ "layers:\n  - {name: a, type: relu, elements: 4, inputs: [a]}\n",
		  ":2:49: layers[0].inputs[0]: expected the name of an earlier layer, found \"a\" (this layer)" },
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a]}\n",
		  ":3:47: layers[1].inputs: expected 2 names, one per activation input of add, found 1" },
		{ LAYER_A "  - {name: b, type: relu, elements: 4, inputs: [a, a]}\n",
		  ":3:48: layers[1].inputs: expected 1 name, one per activation input of relu, found 2" },
		{ LAYER_A "  - {name: b, type: relu, elements: 4, inputs: []}\n",
		  ":3:48: layers[1].inputs: expected 1 name, one per activation input of relu, found 0" },
		{ LAYER_A "  - {name: w, type: matmul, m: 1, k: 2, n: 2, a: weight, b: weight, inputs: [a]}\n",
		  ":3:77: layers[1].inputs: expected 0 names, one per activation input of matmul, found 1" },
		{ LAYER_A "  - {name: b, type: relu, elements: 4, inputs: a}\n",
		  ":3:48: layers[1].inputs: expected a list of names of earlier layers, found \"a\"" },
		{ LAYER_A "  - {name: b, type: relu, elements: 4, inputs: [[a]]}\n",
		  ":3:49: layers[1].inputs[0]: expected the name of an earlier layer, found a sequence" },
		{ LAYER_A "  - {name: b, type: relu, elements: 4, input: [a]}\n",
		  ":3:40: layers[1].input: expected a known key, found an unknown key (did you mean layers[1].inputs?)" },
		/* A key before the misspelt one is checked first. */
		{ LAYER_A "  - {name: b, type: relu, elements: x, input: [a]}\n",
		  ":3:37: layers[1].elements: expected an integer in [1, 1099511627776], found \"x\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_load_error("w.yaml", cases[i].text, strlen(cases[i].text), cases[i].want);
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
	tcase_add_test(t, csv_control_bytes);
	tcase_add_test(t, csv_first_line_is_header);
	tcase_add_test(t, counts_share_limits);
	tcase_add_test(t, numbers_one_grammar);
	tcase_add_test(t, inputs_resolve);
	tcase_add_test(t, inputs_errors);
	suite_add_tcase(s, t);
	/* Large inputs: linear loading keeps these to a second or two, more under the sanitizers. */
	t = tcase_create("large");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, many_keys_duplicate);
	tcase_add_test(t, layer_limit);
	suite_add_tcase(s, t);
	return s;
}
