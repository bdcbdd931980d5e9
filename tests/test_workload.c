/*
 * test_workload.c - reading workload YAML and SCALE-Sim topology CSVs.
 */
#include <dirent.h>
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

/* inputs names earlier layers: the third layer, a2, reads the first, a. */
START_TEST(inputs_resolve)
{
	struct workload w;
	struct oplist ops;
	th_lower("name: t\nlayers:\n"
		 "  - {name: a, type: relu, elements: 4}\n"
		 "  - {name: b, type: relu, elements: 4}\n"
		 "  - {name: a2, type: relu, elements: 4, inputs: [a]}\n"
		 "  - {name: s, type: add, elements: 4, inputs: [a2, b]}\n"
		 "  - {name: w, type: matmul, m: 1, k: 2, n: 2, a: weight, b: weight, inputs: []}\n"
		 "  - name: m\n    type: matmul\n    m: 2\n    k: 2\n    n: 2\n    b: activation\n"
		 "    inputs:\n      - s\n      - a2\n", &w, &ops);
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
	/* Line 6, "  - {name: s, type: add, elements: 4, inputs: [a2, b]}": the list at column 47, b at 52 */
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs").line, 6);
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs").col, 47);
	ck_assert_int_eq(workload_key_pos(&w.layers[3], "inputs[1]").col, 52);
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
		/* ... and before a YAML error after it, which ends the document whose place it had */
		{ LAYER_A "  - {name: b, type: add, elements: 4, inputs: [a, zz]}\n  - {name: x\n",
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

/* Every layer has its own name: the second of a name is an error at it, naming the first's place. */
START_TEST(duplicate_names)
{
	static const struct { const char *text, *want; } cases[] = {
		{ LAYER_A "  - {name: a, type: relu, elements: 4}\n",
		  ":3:12: layers[1].name: expected a name no earlier layer has, found \"a\", the name of layers[0] at "
		  "line 2, column 12" },
		/* An instance's name, met by a layer before the block: instance 1 of x is enc.1.x */
		{ "layers:\n  - {name: enc.1.x, type: relu, elements: 4}\n"
		  "  - block:\n      name: enc\n      repeat: 2\n      layers:\n        - {name: x, type: relu, elements: 4}\n",
		  ":7:18: layers[1].block.layers[0].name: expected a name no earlier layer has, found \"enc.1.x\" "
		  "(instance 1 of block enc), the name of layers[0] at line 2, column 12" },
		/* Twice in one block */
		{ "layers:\n  - block:\n      name: b\n      repeat: 1\n      layers:\n"
		  "        - {name: x, type: relu, elements: 4}\n        - {name: x, type: relu, elements: 4}\n",
		  ":7:18: layers[0].block.layers[1].name: expected a name no earlier layer has, found \"b.0.x\" "
		  "(instance 0 of block b), the name of layers[0].block.layers[0] at line 6, column 18" },
		/* A layer after the block, named as an instance's layer */
		{ "layers:\n  - block:\n      name: b\n      repeat: 1\n      layers:\n"
		  "        - {name: x, type: relu, elements: 4}\n  - {name: b.0.x, type: relu, elements: 4}\n",
		  ":7:12: layers[1].name: expected a name no earlier layer has, found \"b.0.x\", the name of "
		  "layers[0].block.layers[0] at line 6, column 18" },
		/* Two blocks of one name */
		{ "layers:\n  - block: {name: e, repeat: 1, layers: [{name: x, type: relu, elements: 4}]}\n"
		  "  - block: {name: e, repeat: 1, layers: [{name: x, type: relu, elements: 4}]}\n",
		  ":3:49: layers[1].block.layers[0].name: expected a name no earlier layer has, found \"e.0.x\" "
		  "(instance 0 of block e), the name of layers[0].block.layers[0] at line 2, column 49" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_load_error("w.yaml", cases[i].text, strlen(cases[i].text), cases[i].want);
}
END_TEST

/*
 * A block: its layers repeat times over, instance i's x named enc.i.x. In a
 * block, inputs name block.in (the instance's input: the layer before it),
 * the instance's own earlier layers by their names in the block, and any
 * earlier layer by its full name; after the block its layers go by full name.
 */
START_TEST(blocks_expand)
{
	static const char *const names[] = { "stem", "enc.0.x", "enc.0.y", "enc.0.z", "enc.1.x", "enc.1.y", "enc.1.z",
					     "enc.2.x", "enc.2.y", "enc.2.z", "out" };
	struct workload w;
	struct oplist ops;
	char buf[WORKLOAD_PATH_MAX], tn[OP_NAME_MAX];
	th_lower("name: t\nlayers:\n"
		 "  - {name: stem, type: relu, elements: 4}\n"
		 "  - block:\n"
		 "      name: enc\n"
		 "      repeat: 3\n"
		 "      layers:\n"
		 "        - {name: x, type: relu, elements: 4}\n"
		 "        - {name: y, type: add, elements: 4, inputs: [x, block.in]}\n"
		 "        - {name: z, type: add, elements: 4, inputs: [y, stem]}\n"
		 "  - {name: out, type: add, elements: 4, inputs: [enc.2.z, enc.0.x]}\n", &w, &ops);
	ck_assert_uint_eq(w.n, 11);
	for (size_t i = 0; i < w.n; i++)
		ck_assert_str_eq(w.layers[i].name, names[i]);
	/* y reads its instance's x, then the layer before the instance: stem, then enc.0.z, enc.1.z */
	for (int k = 0; k < 3; k++) {
		const struct layer *y = &w.layers[2 + 3 * k], *z = &w.layers[3 + 3 * k];
		ck_assert_int_eq(y->ninputs, 2);
		ck_assert_int_eq(y->inputs[0], 1 + 3 * k);
		ck_assert_int_eq(y->inputs[1], (k ? 3 * k : 0));
		ck_assert_int_eq(z->inputs[0], 2 + 3 * k);
		ck_assert_int_eq(z->inputs[1], 0);
		ck_assert_int_eq(w.layers[1 + 3 * k].ninputs, 0);
	}
	ck_assert_int_eq(w.layers[10].inputs[0], 9);
	ck_assert_int_eq(w.layers[10].inputs[1], 1);
	/* Places: every instance of y at line 9 of the file, its block.in at column 57 */
	ck_assert_str_eq(workload_layer_path(&w.layers[5], buf, sizeof buf), "layers[1].block.layers[1]");
	ck_assert_str_eq(workload_layer_path(&w.layers[10], buf, sizeof buf), "layers[2]");
	ck_assert_str_eq(workload_layer_path(&w.layers[0], buf, sizeof buf), "layers[0]");
	ck_assert_int_eq(w.layers[8].pos.line, 9);
	ck_assert_int_eq(w.layers[8].pos.col, 11);
	ck_assert_int_eq(workload_key_pos(&w.layers[8], "inputs[1]").line, 9);
	ck_assert_int_eq(workload_key_pos(&w.layers[8], "inputs[1]").col, 57);
	/* Lowered: enc.1.x reads enc.0.z by the default rule, enc.1.y's second operand is enc.0.z's output */
	ck_assert_str_eq(tensor_name(&ops.t[th_op(&ops, "enc.1.x")->in[0]], tn, sizeof tn), "enc.0.z.out");
	ck_assert_str_eq(tensor_name(&ops.t[th_op(&ops, "enc.1.y")->in[1]], tn, sizeof tn), "enc.0.z.out");
	ck_assert_str_eq(tensor_name(&ops.t[th_op(&ops, "enc.0.y")->in[1]], tn, sizeof tn), "stem.out");
	ck_assert_str_eq(tensor_name(&ops.t[th_op(&ops, "out")->in[0]], tn, sizeof tn), "enc.2.z.out");
	oplist_release(&ops);
	workload_release(&w);

	/* A block first in the file: instance 0's block.in is a new network input, instance 1's is instance 0's s */
	th_lower("layers:\n  - block: {name: b, repeat: 2, layers: [{name: s, type: add, elements: 4, "
		 "inputs: [block.in, block.in]}]}\n", &w, &ops);
	ck_assert_uint_eq(w.n, 2);
	ck_assert_int_eq(w.layers[0].inputs[0], WORKLOAD_NEW_INPUT);
	ck_assert_int_eq(w.layers[0].inputs[1], WORKLOAD_NEW_INPUT);
	ck_assert_int_eq(w.layers[1].inputs[0], 0);
	ck_assert_int_eq(w.layers[1].inputs[1], 0);
	ck_assert_int_eq(ops.t[ops.v[0].in[0]].kind, TK_INPUT);
	ck_assert_str_eq(tensor_name(&ops.t[ops.v[0].in[0]], tn, sizeof tn), "b.0.s.in0");
	ck_assert_str_eq(tensor_name(&ops.t[ops.v[0].in[1]], tn, sizeof tn), "b.0.s.in1");
	ck_assert_int_eq(ops.v[1].in[0], ops.v[0].out);
	ck_assert_int_eq(ops.v[1].in[1], ops.v[0].out);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

#define BLK_X "[{name: x, type: relu, elements: 4}]"

/* Every way a block can be wrong, each at its place. */
START_TEST(block_errors)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "layers:\n  - block: {name: e, repeat: 0, layers: " BLK_X "}\n",
		  ":2:30: layers[0].block.repeat: expected an integer in [1, 1000000000], found \"0\"" },
		{ "layers:\n  - block: {name: e, repeat: -1, layers: " BLK_X "}\n",
		  ":2:30: layers[0].block.repeat: expected an integer in [1, 1000000000], found \"-1\"" },
		{ "layers:\n  - block: {name: e, repeat: 2.5, layers: " BLK_X "}\n",
		  ":2:30: layers[0].block.repeat: expected an integer in [1, 1000000000], found \"2.5\"" },
		{ "layers:\n  - block: {name: e, repeat: [2], layers: " BLK_X "}\n",
		  ":2:30: layers[0].block.repeat: expected an integer in [1, 1000000000], found a sequence" },
		{ "layers:\n  - block: {name: e, layers: " BLK_X "}\n",
		  ":2:12: layers[0].block.repeat: expected an integer in [1, 1000000000], found no value (the key is "
		  "required)" },
		{ "layers:\n  - block: {repeat: 2, layers: " BLK_X "}\n",
		  ":2:12: layers[0].block.name: expected a name of 1 to 63 printable characters without quotes or "
		  "backslashes, found no value (the key is required)" },
		{ "layers:\n  - block: {name: e, repeat: 2}\n",
		  ":2:12: layers[0].block.layers: expected a non-empty list of layers, found no value (the key is required)" },
		{ "layers:\n  - block: {name: e, repeat: 2, layers: []}\n",
		  ":2:41: layers[0].block.layers: expected a non-empty list of layers, found an empty list" },
		{ "layers:\n  - block: {name: e, repeat: 2, layers: x}\n",
		  ":2:41: layers[0].block.layers: expected a non-empty list of layers, found \"x\"" },
		{ "layers:\n  - block: {name: e, repet: 2, layers: " BLK_X "}\n",
		  ":2:22: layers[0].block.repet: expected a known key, found an unknown key (did you mean "
		  "layers[0].block.repeat?)" },
		{ "layers:\n  - block: {name: e, repeat: 2, type: relu, layers: " BLK_X "}\n",
		  ":2:33: layers[0].block.type: expected a known key (name, repeat, layers), found an unknown key" },
		{ "layers:\n  - block: enc\n",
		  ":2:12: layers[0].block: expected a mapping with name, repeat and layers, found \"enc\"" },
		{ "layers:\n  - {block: {name: e, repeat: 1, layers: " BLK_X "}, name: y}\n",
		  ":2:81: layers[0].name: expected a block alone in its item (its name, repeat and layers go inside "
		  "block), found a key beside it" },
		/* Blocks do not nest */
		{ "layers:\n  - block: {name: e, repeat: 1, layers: [{block: {name: f, repeat: 1, layers: []}}]}\n",
		  ":2:43: layers[0].block.layers[0].block: expected a layer (blocks do not nest), found a block" },
		{ "layers:\n  - block: {name: e, repeat: 1, layers: [{name: block.in, type: relu, elements: 4}]}\n",
		  ":2:49: layers[0].block.layers[0].name: expected a name other than block.in (in a block it means the "
		  "instance's input), found \"block.in\"" },
		/* 30 + ".0." + 33 = 66 characters */
		{ "layers:\n  - block: {name: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, repeat: 1, layers: [{name: "
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, type: relu, elements: 4}]}\n",
		  ":2:78: layers[0].block.layers[0].name: expected a name that is at most 63 characters with its block's "
		  "prefix, found \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.0.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"" },
		/* Names that are the block's later layers */
		{ "layers:\n  - block: {name: e, repeat: 1, layers: [{name: x, type: add, elements: 4, inputs: [x2, block.in]}, "
		  "{name: x2, type: relu, elements: 4}]}\n",
		  ":2:85: layers[0].block.layers[0].inputs[0]: expected the name of an earlier layer, found \"x2\" "
		  "(layers[0].block.layers[1], a later layer of the block; block.in is the instance's input)" },
		{ "layers:\n  - block: {name: e, repeat: 3, layers: [{name: x, type: relu, elements: 4, inputs: [e.1.x]}]}\n",
		  ":2:86: layers[0].block.layers[0].inputs[0]: expected the name of an earlier layer, found \"e.1.x\" "
		  "(layers[0].block.layers[0] of instance 1, a later layer)" },
		{ "layers:\n  - block: {name: e, repeat: 3, layers: [{name: x, type: relu, elements: 4, inputs: [e.0.x]}]}\n",
		  ":2:86: layers[0].block.layers[0].inputs[0]: expected the name of an earlier layer, found \"e.0.x\" "
		  "(this layer)" },
		/* A later block's layer, found by reading on */
		{ "layers:\n  - {name: a, type: relu, elements: 4, inputs: [f.0.y]}\n"
		  "  - block: {name: f, repeat: 1, layers: [{name: y, type: relu, elements: 4}]}\n",
		  ":2:49: layers[0].inputs[0]: expected the name of an earlier layer, found \"f.0.y\" "
		  "(layers[1].block.layers[0] of instance 0, a later layer)" },
		{ "layers:\n  - {name: a, type: relu, elements: 4, inputs: [block.in]}\n",
		  ":2:49: layers[0].inputs[0]: expected the name of an earlier layer, found \"block.in\" (block.in names "
		  "an instance's input inside a block only)" },
		/* A block's layers are checked as any layer, at their place */
		{ "layers:\n  - block: {name: e, repeat: 1, layers: [{name: x, type: bogus}]}\n",
		  ":2:58: layers[0].block.layers[0].type: expected one of conv2d, fc, linear, matmul, attention, mlp, add, "
		  "mul, relu, gelu, silu, softmax, layernorm, pool, all_gather, reduce_scatter, all_reduce, all_to_all, send_recv, found \"bogus\"" },
		{ "layers:\n  - block: {name: e, repeat: 1000000000, layers: [{name: x, type: relu, elements: 4}, "
		  "{name: y, type: relu, elements: 4}]}\n",
		  ":2:30: layers[0].block.repeat: expected at most 1000000 layers in all, found 0 before the block and "
		  "1000000000 x 2 in it" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_load_error("w.yaml", cases[i].text, strlen(cases[i].text), cases[i].want);
}
END_TEST

/* Lowering places a block's layer's error at its place in the block; its path is the same for every instance. */
START_TEST(block_lowering_error)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "w.yaml",
		"layers:\n  - block: {name: e, repeat: 2, layers: [{name: a, type: attention, seq: 2, d_model: 8, heads: 3}]}\n"),
		want[600];
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(lower_workload(&w, &ops, &e), -1);
	snprintf(want, sizeof want, "%s:2:96: layers[0].block.layers[0].heads: expected a divisor of d_model (8), found 3",
		 path);
	ck_assert_str_eq(e.msg, want);
	oplist_release(&ops);
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The block's limit is the workload's: 1 layer and a block of 999,999 x 1 loads; 1,000,000 x 1 does not. */
START_TEST(block_layer_limit)
{
	struct workload w;
	struct err e = { 0 };
	const char *over = "layers:\n  - {name: a, type: relu, elements: 4}\n"
			   "  - block: {name: e, repeat: 1000000, layers: [{name: x, type: relu, elements: 4}]}\n";
	char *dir = th_tmpdir(), *path = th_write(dir, "ok.yaml", "layers:\n  - {name: a, type: relu, elements: 4}\n"
		"  - block: {name: e, repeat: 999999, layers: [{name: x, type: relu, elements: 4}]}\n");
	expect_load_error("w.yaml", over, strlen(over), ":3:30: layers[1].block.repeat: expected at most 1000000 layers "
			  "in all, found 1 before the block and 1000000 x 1 in it");
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(w.n, WORKLOAD_MAX_LAYERS);
	ck_assert_str_eq(w.layers[WORKLOAD_MAX_LAYERS - 1].name, "e.999998.x");
	workload_release(&w);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

#define ATT "  - {name: a, type: attention, d_model: 8, heads: 2, "
#define POOL "  - {name: p, type: pool, in_h: 4, in_w: 4, in_c: 2, "

/*
 * A key the layer's mode ignores is an error at its value, saying which mode
 * ignores it: each row of the table in workload.c. The same keys where their
 * mode reads them load.
 */
START_TEST(ignored_keys)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "layers:\n" ATT "mode: decode, seq: 4}\n",
		  ":2:73: layers[0].seq: expected no seq with mode: decode, which ignores it (one query, over kv_cache + 1 "
		  "keys), found \"4\"" },
		{ "layers:\n" ATT "seq: 4, kv_cache: 16}\n",
		  ":2:72: layers[0].kv_cache: expected no kv_cache with mode: prefill (the default), which ignores it "
		  "(prefill's keys are its own seq tokens), found \"16\"" },
		{ "layers:\n" ATT "mode: prefill, kv_cache: 16}\n",
		  ":2:79: layers[0].kv_cache: expected no kv_cache with mode: prefill, which ignores it (prefill's keys are "
		  "its own seq tokens), found \"16\"" },
		{ "layers:\n" ATT "seq: 4, causal_block: 2}\n",
		  ":2:76: layers[0].causal_block: expected no causal_block with causal: false (the default), which ignores "
		  "it (only causal prefill has query blocks), found \"2\"" },
		{ "layers:\n" ATT "seq: 4, causal: false, causal_block: 2}\n",
		  ":2:91: layers[0].causal_block: expected no causal_block with causal: false, which ignores it (only causal "
		  "prefill has query blocks), found \"2\"" },
		{ "layers:\n" ATT "mode: decode, causal: true}\n",
		  ":2:76: layers[0].causal: expected no causal with mode: decode, which ignores it (its one query sees every "
		  "key), found \"true\"" },
		{ "layers:\n" ATT "mode: decode, kv_cache: 4, causal_block: 2}\n",
		  ":2:95: layers[0].causal_block: expected no causal_block with mode: decode, which ignores it (only causal "
		  "prefill has query blocks), found \"2\"" },
		{ "layers:\n" POOL "global: true, kernel: 3}\n",
		  ":2:76: layers[0].kernel: expected no kernel with global: true, which ignores it (the window is the whole "
		  "input), found \"3\"" },
		{ "layers:\n" POOL "stride: 2, global: true}\n",
		  ":2:62: layers[0].stride: expected no stride with global: true, which ignores it (the window is the whole "
		  "input), found \"2\"" },
		{ "layers:\n" POOL "global: true, padding: 1}\n",
		  ":2:77: layers[0].padding: expected no padding with global: true, which ignores it (the window is the "
		  "whole input), found \"1\"" },
		{ "layers:\n  - {name: c, type: conv2d, in_h: 4, in_w: 4, in_c: 2, out_c: 2, kernel_h: 3, kernel_w: 1, "
		  "kernel: 3}\n",
		  ":2:100: layers[0].kernel: expected no kernel with kernel_h and kernel_w, which override it (they give the "
		  "filter's height and width), found \"3\"" },
		{ "layers:\n  - block: {name: e, repeat: 2, layers: [{name: a, type: attention, d_model: 8, heads: 2, "
		  "mode: decode, seq: 4}]}\n",
		  ":2:110: layers[0].block.layers[0].seq: expected no seq with mode: decode, which ignores it (one query, "
		  "over kv_cache + 1 keys), found \"4\"" },
	};
	struct workload w;
	struct oplist ops;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_load_error("w.yaml", cases[i].text, strlen(cases[i].text), cases[i].want);
	th_lower("layers:\n"
		 ATT "mode: decode, kv_cache: 4, kv_heads: 1, head_dim: 4}\n"
		 "  - {name: b, type: attention, d_model: 8, heads: 2, seq: 4, causal: true, causal_block: 2, mode: prefill}\n"
		 "  - {name: c, type: attention, d_model: 8, heads: 2, seq: 4, causal: false}\n"
		 POOL "global: true, mode: avg}\n"
		 "  - {name: q, type: pool, in_h: 4, in_w: 4, in_c: 2, kernel: 2, stride: 2, padding: 0, global: false}\n"
		 "  - {name: d, type: conv2d, in_h: 4, in_w: 4, in_c: 2, out_c: 2, kernel: 3, kernel_h: 1}\n", &w, &ops);
	ck_assert_uint_eq(w.n, 6);
	ck_assert_int_eq(w.layers[0].kv_cache, 4);
	ck_assert_int_eq(w.layers[1].causal_block, 2);
	/* d: kernel_h 1 with kernel 3 as the width: M = 4 x 2 outputs, K = 1 x 3 x 2 */
	ck_assert_int_eq(th_op(&ops, "d")->m, 8);
	ck_assert_int_eq(th_op(&ops, "d")->k, 6);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* The MACs of the GEMM ops of layers whose names end in suffix (NULL: every GEMM op), and how many there are. */
static int64_t macs_of(const struct oplist *ops, const char *suffix, int *count)
{
	int64_t sum = 0;
	*count = 0;
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		if (o->kind != OP_GEMM || (suffix && strcmp(o->suffix, suffix) != 0))
			continue;
		sum += op_macs(o);
		(*count)++;
	}
	return sum;
}

/* Loads and lowers a shipped workload. */
static void load_shipped(const char *path, struct workload *w, struct oplist *ops)
{
	struct err e = { 0 };
	memset(ops, 0, sizeof *ops);
	ck_assert_msg(workload_load(w, path, 0, &e) == 0, "%s", e.msg);
	ck_assert_msg(lower_workload(w, ops, &e) == 0, "%s", e.msg);
}

/*
 * ViT-B/16 at 224 x 224 (configs/workloads/vit_b16.yaml), MACs by hand:
 *   patch embedding: 14 x 14 = 196 patches, each 16 x 16 x 3 = 768 values, to 768:
 *       196 x 768 x 768                                       =    115,605,504
 *   per encoder layer, 197 tokens (196 patches + the class token):
 *       q, k, v, o projections: 4 x 197 x 768 x 768           =    464,781,312
 *       q.k^T and p.v: 2 x 12 heads x 197 x 197 x 64          =     59,610,624
 *       MLP up and down: 2 x 197 x 768 x 3072                 =    929,562,624
 *   12 layers: 12 x (464,781,312 + 59,610,624 + 929,562,624)  = 17,447,454,720
 *   head, the class token to 1000 classes: 768 x 1000         =        768,000
 *   total: 115,605,504 + 17,447,454,720 + 768,000             = 17,563,828,224
 */
START_TEST(vit_b16_macs)
{
	struct workload w;
	struct oplist ops;
	int n;
	load_shipped("configs/workloads/vit_b16.yaml", &w, &ops);
	ck_assert_str_eq(w.name, "vit_b16");
	ck_assert_uint_eq(w.n, 2 + 12 * 6 + 2);
	ck_assert_int_eq(op_macs(th_op(&ops, "patch_embed")), INT64_C(115605504));
	ck_assert_int_eq(macs_of(&ops, "q_proj", &n) + macs_of(&ops, "k_proj", &n) + macs_of(&ops, "v_proj", &n) +
			 macs_of(&ops, "o_proj", &n), 12 * INT64_C(464781312));
	ck_assert_int_eq(macs_of(&ops, "q_proj", &n), 12 * INT64_C(116195328));
	ck_assert_int_eq(n, 12);
	ck_assert_int_eq(macs_of(&ops, "qk", &n) + macs_of(&ops, "pv", &n), 12 * INT64_C(59610624));
	ck_assert_int_eq(n, 12);
	ck_assert_int_eq(macs_of(&ops, "up", &n) + macs_of(&ops, "down", &n), 12 * INT64_C(929562624));
	ck_assert_int_eq(op_macs(th_op(&ops, "head")), 768000);
	ck_assert_int_eq(macs_of(&ops, NULL, &n), INT64_C(17563828224));
	/* 1 + 12 x (4 projections + qk + pv + up + down) + 1 */
	ck_assert_int_eq(n, 1 + 12 * 8 + 1);
	/* The encoder reads pos_embed's output, each layer the one before it */
	ck_assert_int_eq(w.layers[w.n - 3].name[0], 'e');
	ck_assert_int_eq(th_op(&ops, "enc.0.attn.q_proj")->in[0], th_op(&ops, "enc.0.ln1")->out);
	ck_assert_int_eq(th_op(&ops, "enc.0.ln1")->in[0], th_op(&ops, "pos_embed")->out);
	ck_assert_int_eq(th_op(&ops, "enc.5.add1")->in[1], th_op(&ops, "enc.4.add2")->out);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * GPT-2 small, one decode step (configs/workloads/gpt2_decode.yaml): one
 * token against a KV cache of 1023, so 1024 keys per head. MACs by hand:
 *   per decoder layer:
 *       q, k, v, o projections: 4 x 1 x 768 x 768             =      2,359,296
 *       q.k^T and p.v: 2 x 12 heads x 1 x 1024 x 64           =      1,572,864
 *       MLP up and down: 2 x 1 x 768 x 3072                   =      4,718,592
 *   12 layers: 12 x (2,359,296 + 1,572,864 + 4,718,592)       =    103,809,024
 *   LM head: 768 x 50257                                      =     38,597,376
 *   total: 103,809,024 + 38,597,376                           =    142,406,400
 * Each layer's KV cache: 1023 tokens x 12 heads x 64 = 785,664 elements per K and V.
 */
START_TEST(gpt2_decode_macs)
{
	struct workload w;
	struct oplist ops;
	int n;
	char tn[OP_NAME_MAX];
	load_shipped("configs/workloads/gpt2_decode.yaml", &w, &ops);
	ck_assert_str_eq(w.name, "gpt2_decode");
	ck_assert_uint_eq(w.n, 1 + 12 * 6 + 2);
	ck_assert_int_eq(macs_of(&ops, "q_proj", &n) + macs_of(&ops, "k_proj", &n) + macs_of(&ops, "v_proj", &n) +
			 macs_of(&ops, "o_proj", &n), 12 * INT64_C(2359296));
	ck_assert_int_eq(macs_of(&ops, "qk", &n) + macs_of(&ops, "pv", &n), 12 * INT64_C(1572864));
	ck_assert_int_eq(n, 12);
	ck_assert_int_eq(th_op(&ops, "h.7.attn.qk")->n, 1024);
	ck_assert_int_eq(macs_of(&ops, "up", &n) + macs_of(&ops, "down", &n), 12 * INT64_C(4718592));
	ck_assert_int_eq(op_macs(th_op(&ops, "lm_head")), INT64_C(38597376));
	ck_assert_int_eq(macs_of(&ops, NULL, &n), INT64_C(142406400));
	ck_assert_int_eq(n, 12 * 8 + 1);
	{
		const struct tensor *t = &ops.t[th_op(&ops, "h.0.attn.qk")->in[1]];
		ck_assert_str_eq(tensor_name(t, tn, sizeof tn), "h.0.attn.k_cache");
		ck_assert_int_eq(t->kind, TK_CACHE);
		ck_assert_int_eq(t->elems, 785664);
	}
	ck_assert_int_eq(th_op(&ops, "h.3.add1")->in[1], th_op(&ops, "h.2.add2")->out);
	ck_assert_int_eq(th_op(&ops, "h.0.add1")->in[1], th_op(&ops, "embed")->out);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * bert_base.yaml is one block of 12: it lowers op for op and tensor for
 * tensor as the 12 encoder layers written out one by one (built here, as the
 * file was before it had a block), names aside (enc.3.attn for enc3.attn).
 */
START_TEST(bert_block_equals_flat)
{
	static const char *const layer[] = {
		"{name: enc%d.attn, type: attention, seq: 128, d_model: 768, heads: 12}",
		"{name: enc%d.add1, type: add, elements: 98304%s}",
		"{name: enc%d.ln1, type: layernorm, elements: 98304}",
		"{name: enc%d.mlp, type: mlp, tokens: 128, d_model: 768, d_ff: 3072, activation: gelu}",
		"{name: enc%d.add2, type: add, elements: 98304, inputs: [enc%d.mlp, enc%d.ln1]}",
		"{name: enc%d.ln2, type: layernorm, elements: 98304}",
	};
	char text[16384], extra[64], line[256], na[OP_NAME_MAX], nb[OP_NAME_MAX];
	size_t len = (size_t)snprintf(text, sizeof text, "name: bert_base\nbatch: 1\nlayers:\n");
	struct workload fw, bw;
	struct oplist fo, bo;
	for (int i = 0; i < 12; i++) {
		/* enc0.add1 reads attn and a new input; the others attn and the previous ln2 */
		snprintf(extra, sizeof extra, i ? ", inputs: [enc%d.attn, enc%d.ln2]" : "", i, i - 1);
		for (int j = 0; j < 6; j++) {
			if (j == 1)
				snprintf(line, sizeof line, layer[j], i, extra);
			else
				snprintf(line, sizeof line, layer[j], i, i, i);
			len += (size_t)snprintf(text + len, sizeof text - len, "  - %s\n", line);
		}
	}
	ck_assert_uint_lt(len, sizeof text);
	th_lower(text, &fw, &fo);
	load_shipped("configs/workloads/bert_base.yaml", &bw, &bo);
	ck_assert_uint_eq(bw.n, 72);
	ck_assert_uint_eq(fo.n, bo.n);
	ck_assert_uint_eq(fo.nt, bo.nt);
	for (size_t i = 0; i < fo.n; i++) {
		const struct op *a = &fo.v[i], *b = &bo.v[i];
		char want[OP_NAME_MAX];
		int k;
		ck_assert(a->kind == b->kind && a->m == b->m && a->k == b->k && a->n == b->n && a->repeat == b->repeat);
		ck_assert(a->a_weight == b->a_weight && a->b_weight == b->b_weight && a->a_elems == b->a_elems);
		ck_assert(a->vec == b->vec && a->in_elems == b->in_elems && a->out_elems == b->out_elems &&
			  a->lane_ops == b->lane_ops);
		ck_assert(a->in[0] == b->in[0] && a->in[1] == b->in[1] && a->out == b->out && a->layer == b->layer);
		op_name(a, na, sizeof na);
		ck_assert_int_eq(sscanf(na, "enc%d.", &k), 1);
		snprintf(want, sizeof want, "enc.%d.%s", k, strchr(na, '.') + 1);
		ck_assert_str_eq(op_name(b, nb, sizeof nb), want);
	}
	for (size_t i = 0; i < fo.nt; i++) {
		const struct tensor *a = &fo.t[i], *b = &bo.t[i];
		ck_assert(a->kind == b->kind && a->elems == b->elems && a->producer == b->producer && a->ready == b->ready);
		ck_assert(a->first_reader == b->first_reader && a->last_reader == b->last_reader);
		ck_assert_str_eq(a->suffix, b->suffix);
	}
	oplist_release(&fo);
	oplist_release(&bo);
	workload_release(&fw);
	workload_release(&bw);
}
END_TEST

/* Every shipped workload loads and lowers under the stricter rules, named as its file. */
START_TEST(shipped_workloads_load)
{
	DIR *d = opendir("configs/workloads");
	struct dirent *de;
	int files = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		char path[512], stem[256];
		size_t n = strlen(de->d_name);
		struct workload w;
		struct oplist ops;
		if (n < 6 || strcmp(de->d_name + n - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof path, "configs/workloads/%s", de->d_name);
		snprintf(stem, sizeof stem, "%.*s", (int)(n - 5), de->d_name);
		if (th_pod_only(path)) {
			/* A pod's workload (GPT-3 at its global batch): one sample of it on one chip. */
			struct err e = { 0 };
			memset(&ops, 0, sizeof ops);
			ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
			ck_assert_msg(lower_batch(&w, 1, 0, NULL, &ops, &e) == 0, "%s", e.msg);
		} else {
			load_shipped(path, &w, &ops);
		}
		ck_assert_str_eq(w.name, stem);
		ck_assert_uint_gt(ops.n, 0);
		oplist_release(&ops);
		workload_release(&w);
		files++;
	}
	closedir(d);
	ck_assert_int_ge(files, 14);
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
	tcase_add_test(t, duplicate_names);
	tcase_add_test(t, blocks_expand);
	tcase_add_test(t, block_errors);
	tcase_add_test(t, block_lowering_error);
	tcase_add_test(t, ignored_keys);
	tcase_add_test(t, vit_b16_macs);
	tcase_add_test(t, gpt2_decode_macs);
	tcase_add_test(t, bert_block_equals_flat);
	tcase_add_test(t, shipped_workloads_load);
	suite_add_tcase(s, t);
	/* Large inputs: linear loading keeps these to a second or two, more under the sanitizers. */
	t = tcase_create("large");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, many_keys_duplicate);
	tcase_add_test(t, layer_limit);
	tcase_add_test(t, block_layer_limit);
	suite_add_tcase(s, t);
	return s;
}
