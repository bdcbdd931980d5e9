/*
 * test_errors.c - bad input through the real command line: the exact message
 * on stderr, exit status 2, nothing on stdout, and no report directory.
 *
 * Every case runs in a fresh directory holding a valid config (c.yaml) and
 * workload (w.yaml) unless it replaces one of them; the expected text is
 * written from the message format (file:line:col: key.path: expected ...,
 * found ...), with line and column counted by hand.
 */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

#define CFG_OK "array:\n  rows: 4\n  cols: 4\n"
#define WL_OK "name: t\nlayers:\n  - {name: f, type: fc, in_features: 8, out_features: 8}\n"
#define CSV_HEAD "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
#define ENUM_TYPES "conv2d, fc, linear, matmul, attention, mlp, add, mul, relu, gelu, silu, softmax, layernorm, pool, " \
	"all_gather, reduce_scatter, all_reduce, all_to_all, send_recv"

struct bad {
	const char *cfg;            /* c.yaml contents; NULL: CFG_OK */
	const char *wl;             /* w.yaml contents; NULL: WL_OK */
	const char *csv;            /* t.csv contents, when the case uses it */
	const char *args[12];       /* after "tpusim"; "-o out" is added to run */
	const char *want;           /* stderr, without the newline */
};

#define RUN "run", "-c", "c.yaml", "-w", "w.yaml"

static const struct bad cases[] = {
	/* YAML itself */
	{ "array:\n  rows: [1, 2\n", NULL, NULL, { RUN },
	  "c.yaml:3:1: expected well-formed YAML, found a syntax error: did not find expected ',' or ']' "
	  "(while parsing a flow sequence)" },
	{ "array:\n  rows: 4\n  rows: 8\n", NULL, NULL, { RUN },
	  "c.yaml:3:3: array.rows: expected each key once, found it again (first at line 2)" },
	{ "array:\n  rows: &r 4\n  cols: *r\n", NULL, NULL, { RUN },
	  "c.yaml:3:9: expected a plain value, found an alias (anchors and aliases are not supported)" },
	{ "", NULL, NULL, { RUN }, "c.yaml: expected a mapping of config keys, found an empty file" },
	/* a key path is quoted like a file name: the message stays one line */
	{ "\"a\\nb\": \"x\\0\"\n", NULL, NULL, { RUN },
	  "c.yaml:1:9: a\\x0ab: expected text, found a NUL character in it" },
	{ "- 1\n", NULL, NULL, { RUN }, "c.yaml:1:1: expected a mapping, found a sequence" },
	/* config values */
	{ "array:\n  rows: abc\n", NULL, NULL, { RUN },
	  "c.yaml:2:9: array.rows: expected an integer in [1, 4096], found \"abc\"" },
	{ "array:\n  rows: 0\n", NULL, NULL, { RUN },
	  "c.yaml:2:9: array.rows: expected an integer in [1, 4096], found \"0\"" },
	{ "hbm:\n  gbps: -5\n", NULL, NULL, { RUN },
	  "c.yaml:2:9: hbm.gbps: expected a number in [0.001, 1e+06], found \"-5\"" },
	{ "array:\n  rows: 99999999999999999999\n", NULL, NULL, { RUN },
	  "c.yaml:2:9: array.rows: expected an integer in [1, 4096], found \"99999999999999999999\" (beyond 64 bits)" },
	{ "array:\n  rwos: 4\n", NULL, NULL, { RUN },
	  "c.yaml:2:3: array.rwos: expected a known key, found an unknown key (did you mean array.rows?)" },
	{ "arary:\n  rows: 4\n", NULL, NULL, { RUN },
	  "c.yaml:1:1: arary: expected a known key, found an unknown key (did you mean array?)" },
	{ "array:\n  dataflow: xs\n", NULL, NULL, { RUN },
	  "c.yaml:2:13: array.dataflow: expected one of ws, os, is, found \"xs\"" },
	{ "array:\n  scalesim_compat: yes\n", NULL, NULL, { RUN },
	  "c.yaml:2:20: array.scalesim_compat: expected true or false, found \"yes\"" },
	{ "clock_ghz: \"0.7\"\n", NULL, NULL, { RUN },
	  "c.yaml:1:12: clock_ghz: expected a number in [0.001, 100], found \"0.7\" (quoted, so a string)" },
	{ "array: 3\n", NULL, NULL, { RUN }, "c.yaml:1:8: array: expected a mapping, found \"3\"" },
	{ "array:\n  rows:\n", NULL, NULL, { RUN },
	  "c.yaml:2:8: array.rows: expected an integer in [1, 4096], found an empty value" },
	/* files */
	{ NULL, NULL, NULL, { "run", "-c", "sub", "-w", "w.yaml" }, "sub: expected a file, found a directory" },
	{ NULL, NULL, NULL, { "run", "-c", "nope.yaml", "-w", "w.yaml" },
	  "nope.yaml: expected a readable file, found No such file or directory" },
	{ NULL, NULL, NULL, { "run", "-c", "c.yaml", "-w", "sub" }, "sub: expected a file, found a directory" },
	/* workloads */
	{ NULL, "", NULL, { RUN }, "w.yaml: expected a workload (name, batch, layers), found an empty file" },
	{ NULL, "name: t\nbach: 2\nlayers: []\n", NULL, { RUN },
	  "w.yaml:2:1: bach: expected a known key, found an unknown key (did you mean batch?)" },
	{ NULL, "name: t\nlayers: []\n", NULL, { RUN },
	  "w.yaml:2:9: layers: expected a non-empty list of layers, found an empty list" },
	{ NULL, "layers:\n  - 3\n", NULL, { RUN }, "w.yaml:2:5: layers[0]: expected a mapping with a type, found \"3\"" },
	{ NULL, "layers:\n  - {name: x, type: conv3d, in_h: 4}\n", NULL, { RUN },
	  "w.yaml:2:21: layers[0].type: expected one of " ENUM_TYPES ", found \"conv3d\"" },
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 4, in_w: 4, in_c: 3, kernel: 3}\n", NULL, { RUN },
	  "w.yaml:2:5: layers[0].out_c: expected an integer in [1, 1099511627776], found no value (the key is required)" },
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 4, in_w: 4, in_c: 3, out_c: 2, kernal: 3}\n", NULL, { RUN },
	  "w.yaml:2:66: layers[0].kernal: expected a known key, found an unknown key (did you mean layers[0].kernel?)" },
	{ NULL, "layers:\n  - {name: c, type: conv2d, in_h: 8, in_w: 8, in_ch: 3, out_c: 4, kernel: 3}\n", NULL, { RUN },
	  "w.yaml:2:47: layers[0].in_ch: expected a known key, found an unknown key (did you mean layers[0].in_c?)" },
	{ NULL, "layers:\n  - {name: c, type: conv2d, in_ch: 3, in_w: 8, in_c: 3, out_c: 4, kernel: 3}\n", NULL, { RUN },
	  "w.yaml:2:29: layers[0].in_ch: expected a known key, found an unknown key (did you mean layers[0].in_h?)" },
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 4, in_w: 4, in_c: 3, out_c: 2, kernel: -3}\n", NULL, { RUN },
	  "w.yaml:2:74: layers[0].kernel: expected an integer in [0, 1099511627776], found \"-3\"" },
	{ NULL, "layers:\n  - {name: x, type: matmul, m: 4, k: 2.5, n: 3}\n", NULL, { RUN },
	  "w.yaml:2:38: layers[0].k: expected an integer in [1, 1099511627776], found \"2.5\"" },
	/* impossible shapes */
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 4, in_w: 4, in_c: 3, out_c: 2, kernel: 7, padding: 1}\n", NULL,
	  { RUN }, "w.yaml:2:74: layers[0].kernel: expected a filter no larger than the padded input (6), found 7" },
	{ NULL, "layers:\n  - {name: x, type: attention, seq: 4, d_model: 10, heads: 3}\n", NULL, { RUN },
	  "w.yaml:2:60: layers[0].heads: expected a divisor of d_model (10), found 3" },
	{ NULL, "layers:\n  - {name: x, type: attention, seq: 4, d_model: 64, heads: 8, kv_heads: 3}\n", NULL, { RUN },
	  "w.yaml:2:73: layers[0].kv_heads: expected a divisor of heads (8), found 3" },
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 4, in_w: 4, in_c: 6, out_c: 4, kernel: 1, groups: 4}\n", NULL,
	  { RUN }, "w.yaml:2:85: layers[0].groups: expected a divisor of in_c (6) and out_c (4), found 4" },
	{ NULL, "layers:\n  - {name: x, type: conv2d, in_h: 1099511627776, in_w: 1099511627776, in_c: 1, out_c: 1, "
	  "kernel: 1}\n", NULL, { RUN },
	  "w.yaml:2:5: layers[0]: expected sizes whose products fit in 58 bits, found a larger product in x" },
	/* SCALE-Sim CSVs */
	{ NULL, NULL, CSV_HEAD "Conv1, 224, 224, 7\n", { "run", "-c", "c.yaml", "-w", "t.csv" },
	  "t.csv:2:18: expected 8 fields as in the header, found 4" },
	{ NULL, NULL, CSV_HEAD "Conv1, 224, x, 7, 7, 3, 64, 2,\n", { "run", "-c", "c.yaml", "-w", "t.csv" },
	  "t.csv:2:13: ifmap_width: expected an integer in [1, 1099511627776], found \"x\"" },
	{ NULL, NULL, "", { "run", "-c", "c.yaml", "-w", "t.csv" },
	  "t.csv: expected a SCALE-Sim topology header, found an empty file" },
	{ NULL, NULL, CSV_HEAD "C, 4, 4, 7, 7, 3, 8, 1,\n", { "run", "-c", "c.yaml", "-w", "t.csv" },
	  "t.csv:2:10: layers[0].kernel_h: expected a filter no larger than the input (4), found 7" },
	/* command line */
	{ NULL, NULL, NULL, { RUN, "--set", "array.rows=x" },
	  "--set:1:12: array.rows: expected an integer in [1, 4096], found \"x\"" },
	{ NULL, NULL, NULL, { RUN, "--set", "array.rowz=4" },
	  "--set:1:1: array.rowz: expected a known key, found an unknown key (did you mean array.rows?)" },
	/* an assignment without its '=', in one argument or two */
	{ NULL, NULL, NULL, { RUN, "--set", "array.rows" }, "--set: expected key.path=value, found \"array.rows\"" },
	{ NULL, NULL, NULL, { RUN, "--set", "=4" }, "--set: expected key.path=value, found \"=4\"" },
	/* Two of them: the form is said, not a repeated (empty) key. */
	{ NULL, NULL, NULL, { RUN, "--set", "=5", "--set", "=6" }, "--set: expected key.path=value, found \"=5\"" },
	{ NULL, NULL, NULL, { RUN, "--set", "array.rows", "64" },
	  "--set: expected key.path=value, found \"array.rows\" (did you mean --set array.rows=64?)" },
	{ NULL, NULL, NULL, { "config", "--dump", "--set", "array.rows", "64" },
	  "--set: expected key.path=value, found \"array.rows\" (did you mean --set array.rows=64?)" },
	/* an option of another model than the one that runs */
	{ NULL, NULL, NULL, { RUN, "--seed", "3" },
	  "--seed: expected --model functional (only it draws operands), found --model cycle" },
	{ NULL, NULL, NULL, { RUN, "--model", "analytic", "--seed", "3" },
	  "--seed: expected --model functional (only it draws operands), found --model analytic" },
	{ NULL, NULL, NULL, { "roofline", "-c", "c.yaml", "-w", "w.yaml", "-o", "r.png", "--seed", "3" },
	  "--seed: expected --model functional (only it draws operands), found --model cycle" },
	/* an option or a key given twice: the second would silently replace the first */
	{ NULL, NULL, NULL, { RUN, "--workload", "x.yaml" },
	  "--workload: expected the option once, found it again (first -w w.yaml)" },
	{ NULL, NULL, NULL, { RUN, "--model", "analytic", "--model", "cycle" },
	  "--model: expected the option once, found it again (first --model analytic)" },
	{ NULL, NULL, NULL, { RUN, "--set", "array.rows=8", "--set", "array.rows=16" },
	  "--set:1:1: array.rows: expected each key once, found it again (first --set array.rows=8)" },
	/* a run that does not fit in the memory: fc 8 -> 8 at int8 keeps 64 B of weights, 8 in, 8 out */
	{ CFG_OK "hbm:\n  capacity_gib: 1e-9\n", NULL, NULL, { RUN }, "c.yaml:5:17: hbm.capacity_gib: expected room for "
	  "the run's 80 B (weights 64 B, caches 0 B, inputs 8 B, activations live at the peak 8 B), found 1e-09 GiB "
	  "(sim.allow_hbm_overflow: true runs it anyway)" },
	/* a memory key that ideal memory ignores */
	{ NULL, NULL, NULL, { RUN, "--ideal-memory", "--set", "hbm.channels=1" }, "--set:1:14: hbm.channels: expected no "
	  "hbm key (--ideal-memory makes memory ideal, so it would change nothing), found it set to 1" },
	{ NULL, NULL, NULL, { RUN, "--model", "functional", "--set", "hbm.latency_ns=5" }, "--set:1:16: hbm.latency_ns: "
	  "expected no hbm key (the functional model runs on ideal memory, so it would change nothing), found it set to 5" },
	{ NULL, NULL, NULL, { "lab", "-c", "c.yaml", "--gemm", "2x2x2", "--set", "hbm.gbps=1" }, "--set:1:10: hbm.gbps: "
	  "expected no hbm key (tpusim lab runs on ideal memory, so it would change nothing), found it set to 1" },
	{ "hbm:\n  gbps: 5\n", NULL, NULL, { "lab", "-c", "lab_4x4", "-c", "c.yaml", "--gemm", "2x2x2" }, "c.yaml:2:9: "
	  "hbm.gbps: expected no hbm key (tpusim lab runs on ideal memory, so it would change nothing), found it set to 5" },
	/* near misses */
	{ NULL, NULL, NULL, { RUN, "--model=analytic" }, "--model=analytic: expected an option of tpusim run (see tpusim "
	  "--help), found an unknown option (did you mean --model analytic?)" },
	{ NULL, NULL, NULL, { RUN, "--dataflow", "wss" }, "--dataflow: expected ws, os or is, found \"wss\" (did you mean ws?)" },
	{ NULL, NULL, NULL, { "sweep", "s.yaml", "-o", "d", "--emit", "pararell" },
	  "--emit: expected parallel or slurm, found \"pararell\" (did you mean parallel?)" },
	{ NULL, NULL, NULL, { RUN, "--dataflow", "xs" }, "--dataflow: expected ws, os or is, found \"xs\"" },
	{ NULL, NULL, NULL, { RUN, "--batch", "0" }, "--batch: expected an integer in [1, 1048576], found \"0\"" },
	{ NULL, NULL, NULL, { "rn" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found \"rn\" (did you mean run?); try tpusim --help" },
	{ NULL, NULL, NULL, { RUN, "--fast" }, "--fast: expected an option of tpusim run (see tpusim --help), "
	  "found an unknown option" },
	/* text that cannot be shown as it is */
	{ "name: \"a\\x01b\"\n", NULL, NULL, { RUN },
	  "c.yaml:1:7: name: expected a name of 1 to 63 printable characters without quotes or backslashes, "
	  "found \"a\\x01b\"" },
	{ "name: x\001y\n", NULL, NULL, { RUN },
	  "c.yaml:1:8: expected well-formed YAML, found a syntax error: control characters are not allowed" },
	{ "array:\n  rows: |\n    a\n    b\n", NULL, NULL, { RUN },
	  "c.yaml:2:9: array.rows: expected an integer in [1, 4096], found \"a\\x0ab\\x0a\"" },
	{ NULL, NULL, NULL, { RUN, "--set", "sram.weights=1" },
	  "--set:1:1: sram.weights: expected a key, found a section (did you mean sram.weights.kib?)" },
	{ NULL, NULL, NULL, { RUN, "--set", "array.rows=+4" },
	  "--set:1:12: array.rows: expected an integer in [1, 4096], found \"+4\"" },
	/* paths: one line whatever bytes they hold; checked before anything is simulated */
	{ NULL, NULL, NULL, { "run", "-c", "a\nb.yaml", "-w", "w.yaml" },
	  "a\\x0ab.yaml: expected a readable file, found No such file or directory" },
	{ NULL, NULL, NULL, { "r\nn", "--x" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, "
	  "trace), found \"r\\x0an\" (did you mean run?); try tpusim --help" },
	{ NULL, NULL, NULL, { RUN, "-o", "" }, "-o: expected a path, found \"\"" },
	{ NULL, NULL, NULL, { "run", "-c", "", "-w", "w.yaml" }, "-c: expected a path, found \"\"" },
	/* (a missing parent directory is made: these are under a file) */
	{ NULL, NULL, NULL, { RUN, "--vcd", "c.yaml/t" },
	  "--vcd: expected a writable path, found \"c.yaml/t.vcd\" (Not a directory)" },
	{ NULL, NULL, NULL, { RUN, "--vcd", "c.yaml/t\nx" },
	  "--vcd: expected a writable path, found \"c.yaml/t\\x0ax.vcd\" (Not a directory)" },
	{ NULL, NULL, NULL, { RUN, "--vcd", "" }, "--vcd: expected a path, found \"\"" },
	{ NULL, NULL, NULL, { RUN, "--model", "analytic", "--vcd", "t" },
	  "--vcd: expected --model cycle or functional (the analytic model has no cycles to trace), found --model analytic" },
	{ NULL, NULL, NULL, { RUN, "--plot", "c.yaml/p" },
	  "--plot: expected a directory that can be created, found \"c.yaml/p\" (Not a directory)" },
	{ NULL, NULL, NULL, { RUN, "--plot", "c.yaml" },
	  "--plot: expected a writable path, found \"c.yaml/cycles.png\" (Not a directory)" },
	{ NULL, NULL, NULL, { "roofline", "-c", "c.yaml", "-w", "w.yaml", "-o", "c.yaml/r.png" },
	  "-o: expected a writable path, found \"c.yaml/r.png\" (Not a directory)" },
	{ NULL, NULL, NULL, { "roofline", "-c", "c.yaml", "-w", "w.yaml", "-o", "r\t.jpg" },
	  "-o: expected a file name ending in .png or .svg, found \"r\\x09.jpg\"" },
	{ NULL, NULL, NULL, { "compare", "-c", "c.yaml", "-w", "w.yaml", "-o", "c.yaml/c.svg" },
	  "-o: expected a writable path, found \"c.yaml/c.svg\" (Not a directory)" },
	/* work that cannot be counted in 64 bits, or would never end */
	{ NULL, "layers:\n  - {name: a, type: attention, seq: 100000, d_model: 8, heads: 1, causal: true, causal_block: 1}\n",
	  NULL, { RUN }, "w.yaml:2:95: layers[0].causal_block: expected at least 25 (at most 4096 blocks of the 100000 "
	  "queries), found 1" },
	{ NULL, "name: t\nbatch: 1048576\nlayers:\n  - {name: m, type: matmul, m: 1, k: 1, n: 1, b: activation, "
	  "repeat: 1000000000}\n", NULL, { RUN, "--set", "array.scalesim_compat=true" },
	  "w.yaml:4:5: layers[0]: expected ops that take at most 2^50 cycles, found m taking more (a larger array, buffer "
	  "or bandwidth would do)" },
	/* rates per dtype: a rate of the list, a dtype the array does not run (said where the dtype came from), a
	 * packed rate where PEs do one MAC a cycle (the functional model, lab), and the per-op fixed time's range */
	{ NULL, NULL, NULL, { RUN, "--set", "array.rate_int8=3" },
	  "--set:1:17: array.rate_int8: expected one of none, 1/8, 1/6, 1/4, 1/3, 1/2, 1, 2, 4, 8, found \"3\"" },
	{ "array:\n  dtype: bf16\n  rate_bf16: none\n", NULL, NULL, { RUN },
	  "c.yaml:3:14: array.rate_bf16: expected a rate for array.dtype bf16, found none (the array does not run bf16) "
	  "(array.dtype at c.yaml:2:10)" },
	{ "array:\n  dtype: bf16\n  rate_bf16: none\n", NULL, NULL, { "config", "-c", "c.yaml", "--dump" },
	  "c.yaml:3:14: array.rate_bf16: expected a rate for array.dtype bf16, found none (the array does not run bf16) "
	  "(array.dtype at c.yaml:2:10)" },
	{ CFG_OK "  rate_int8: 2\n", NULL, NULL, { RUN, "--model", "functional" },
	  "c.yaml:4:14: array.rate_int8: expected 1 for --model functional (its PEs do one MAC a cycle), found 2" },
	{ CFG_OK "  rate_int8: 2\n", NULL, NULL, { "lab", "-c", "c.yaml", "--gemm", "4x8x4" },
	  "c.yaml:4:14: array.rate_int8: expected 1 for the functional model (its PEs do one MAC a cycle), found 2" },
	{ NULL, NULL, NULL, { RUN, "--set", "chip.op_fixed_ns=-1" },
	  "--set:1:18: chip.op_fixed_ns: expected a number in [0, 1e+09], found \"-1\"" },
	/* a buffer too small for the smallest tile */
	{ NULL, "layers:\n  - {name: f, type: fc, in_features: 8, out_features: 512}\n", NULL,
	  { RUN, "--set", "array.rows=256", "--set", "array.cols=256", "--set", "sram.outputs.kib=1" },
	  "--set:1:18: sram.outputs.kib: expected at least 2048 bytes for two tiles of 256 accumulators for f, found 1024" },
};

START_TEST(bad_input)
{
	const struct bad *b = &cases[_i];
	char *dir = th_tmpdir(), *out, *err, *p[3], outdir[4200];
	const char *argv[16];
	int n = 0, rc;
	struct stat st;
	bool is_run = !strcmp(b->args[0], "run");

	p[0] = th_write(dir, "c.yaml", b->cfg ? b->cfg : CFG_OK);
	p[1] = th_write(dir, "w.yaml", b->wl ? b->wl : WL_OK);
	p[2] = th_write(dir, "t.csv", b->csv ? b->csv : "");
	snprintf(outdir, sizeof outdir, "%s/sub", dir);
	mkdir(outdir, 0755);
	for (int i = 0; b->args[i]; i++)
		argv[n++] = b->args[i];
	if (is_run) {
		argv[n++] = "-o";
		argv[n++] = "out";
	}
	argv[n] = NULL;
	rc = th_cli(dir, argv, &out, &err);
	ck_assert_msg(rc == 2, "case %d: exit %d, stderr: %s", _i, rc, err);
	ck_assert_msg(strlen(err) > 0 && err[strlen(err) - 1] == '\n', "case %d: %s", _i, err);
	err[strlen(err) - 1] = '\0';
	ck_assert_str_eq(err, b->want);
	ck_assert_str_eq(out, "");
	snprintf(outdir, sizeof outdir, "%s/out", dir);
	ck_assert_msg(stat(outdir, &st) != 0, "case %d left %s behind", _i, outdir);
	for (int i = 0; i < 3; i++)
		free(p[i]);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A report file that cannot be replaced: neither file is written, and a new directory is removed again. */
START_TEST(report_all_or_nothing)
{
	char *dir = th_tmpdir(), *out, *err, *p[2], path[4200];
	struct stat st;
	const char *argv[] = { RUN, "-o", "out", NULL };
	p[0] = th_write(dir, "c.yaml", CFG_OK);
	p[1] = th_write(dir, "w.yaml", WL_OK);
	snprintf(path, sizeof path, "%s/out", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/out/summary.json", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(err, "out/summary.json: expected a file or nothing there, found a directory\n");
	snprintf(path, sizeof path, "%s/out/layers.csv", dir);
	ck_assert_int_ne(stat(path, &st), 0);
	free(out);
	free(err);
	free(p[0]);
	free(p[1]);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Output that cannot be written is an error for every command that prints, --help and --version too. */
START_TEST(stdout_full)
{
	static const char *const cmds[][8] = {
		{ "--help" }, { "-h" }, { "--version" }, { "config", "--dump", "-c", "configs/lab_4x4.yaml" },
		{ "lower", "-w", "configs/workloads/mlp.yaml" },
		{ "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--model", "analytic" },
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char ef[64], *err;
		int status;
		pid_t pid;
		snprintf(ef, sizeof ef, "/tmp/tpusim-full-err-%d", (int)getpid());
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			const char *args[10] = { th_tpusim() };
			int full = open("/dev/full", O_WRONLY), e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			for (int j = 0; cmds[i][j]; j++)
				args[j + 1] = cmds[i][j];
			dup2(full, 1);
			dup2(e, 2);
			execv(args[0], (char *const *)args);
			_exit(127);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status %#x", cmds[i][0], status);
		err = th_slurp(ef);
		unlink(ef);
		ck_assert_str_eq(err, "standard output: expected to write the results, found No space left on device\n");
		free(err);
	}
}
END_TEST

/*
 * Memory that runs out is its own class: exit status 3 and "out of memory" on
 * one line, not bad input. A workload of 200,000 small layers needs about
 * 120 MB to load and lower; the address space is capped at 64 MB (tpusim
 * starts in under 30). Not under AddressSanitizer, which reserves terabytes.
 */
START_TEST(out_of_memory_class)
{
#if defined(__SANITIZE_ADDRESS__)
	return;
#else
	char *dir = th_tmpdir(), ef[4200], wl[4200], *err;
	FILE *f;
	int status;
	pid_t pid;
	size_t n;

	snprintf(wl, sizeof wl, "%s/big.yaml", dir);
	snprintf(ef, sizeof ef, "%s/err", dir);
	ck_assert_ptr_nonnull(f = fopen(wl, "w"));
	fputs("name: big\nlayers:\n", f);
	for (int i = 0; i < 200000; i++)
		fprintf(f, "  - {name: fc%d, type: fc, in_features: 8, out_features: 8}\n", i);
	ck_assert_int_eq(fclose(f), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 64u << 20, 64u << 20 };
		int null = open("/dev/null", O_WRONLY), e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(null, 1);
		dup2(e, 2);
		setrlimit(RLIMIT_AS, &rl);
		execl(th_tpusim(), th_tpusim(), "lower", "-w", wl, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	err = th_slurp(ef);
	n = strlen(err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %#x: %s", status, err);
	ck_assert_msg(n > 14 && !strcmp(err + n - 14, "out of memory\n") && !memchr(err, '\n', n - 1), "%s", err);
	free(err);
	th_rmdir(dir);
	free(dir);
#endif
}
END_TEST

/* The checks made before a run leave nothing: a trace the analytic model cannot draw is refused, and not there. */
START_TEST(checks_leave_nothing)
{
	char *dir = th_tmpdir(), *out, *err, path[4200];
	const char *argv[] = { RUN, "--model", "analytic", "--vcd", "t", NULL };
	struct stat st;
	free(th_write(dir, "c.yaml", CFG_OK));
	free(th_write(dir, "w.yaml", WL_OK));
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_str_eq(out, "");
	ck_assert_ptr_nonnull(strstr(err, "found --model analytic\n"));
	snprintf(path, sizeof path, "%s/t.vcd", dir);
	ck_assert_int_ne(stat(path, &st), 0);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A FIFO nobody writes reads as nothing: the message says it is a FIFO, not
 * an empty file, for a workload, a config and a sweep spec alike.
 */
START_TEST(fifo_is_said)
{
	static const struct {
		const char *args[8], *want;     /* want follows "<dir>/p.fifo: " */
	} fifos[] = {
		{ { "run", "-c", "c.yaml", "-w", NULL }, "expected a workload (name, batch, layers), found a FIFO that gave "
		  "nothing (not a regular file)" },
		{ { "run", "-w", "w.yaml", "-c", NULL }, "expected a mapping of config keys, found a FIFO that gave nothing "
		  "(not a regular file)" },
		{ { "sweep", "-o", "out", NULL }, "expected a sweep spec (configs, workloads, axes, zip), found a FIFO that "
		  "gave nothing (not a regular file)" },
	};
	char *dir = th_tmpdir(), fifo[4200], want[4400], *out, *err, *p[2];
	p[0] = th_write(dir, "c.yaml", CFG_OK);
	p[1] = th_write(dir, "w.yaml", WL_OK);
	snprintf(fifo, sizeof fifo, "%s/p.fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < sizeof fifos / sizeof *fifos; i++) {
		const char *argv[10];
		int n = 0;
		for (; fifos[i].args[n]; n++)
			argv[n] = fifos[i].args[n];
		argv[n++] = fifo;
		argv[n] = NULL;
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
		snprintf(want, sizeof want, "%s: %s\n", fifo, fifos[i].want);
		ck_assert_str_eq(err, want);
		free(out);
		free(err);
	}
	free(p[0]);
	free(p[1]);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *t = tcase_create("errors");
	tcase_set_timeout(t, 30);
	tcase_add_loop_test(t, bad_input, 0, (int)(sizeof cases / sizeof *cases));
	tcase_add_test(t, report_all_or_nothing);
	tcase_add_test(t, stdout_full);
	tcase_add_test(t, checks_leave_nothing);
	tcase_add_test(t, fifo_is_said);
	tcase_add_test(t, out_of_memory_class);
	suite_add_tcase(s, t);
	return s;
}
