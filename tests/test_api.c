/*
 * test_api.c - the library (tpusim.h): one JSON request in, the text of
 * summary.json out, identical to what `tpusim run -o DIR` writes for the same
 * inputs (a separate process, so an independent path); many calls in one
 * process, before and after calls that fail, give identical answers, also
 * from many threads at once; bad requests get exit 2 and a positioned
 * message, asserted to the byte; a workload is named as a preset is.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "options.h"
#include "scw.h"
#include "lower.h"
#include "stats.h"
#include "tests.h"
#include "ydoc.h"
#include "tpusim.h"

/* A request and the CLI arguments that mean the same run. */
struct pair {
	const char *request;
	const char *argv[16];
};

static const struct pair pairs[] = {
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\"}",
	  { "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", NULL } },
	{ "{\"configs\": [\"configs/tpu_v1.yaml\"], \"workload\": \"configs/workloads/resnet50.yaml\", \"model\": \"analytic\","
	  " \"dataflow\": \"os\", \"batch\": 2}",
	  { "-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/resnet50.yaml", "--model", "analytic", "--dataflow", "os",
	    "--batch", "2", NULL } },
	{ "{\"configs\": [\"configs/tpu_v4_mxu.yaml\", \"configs/memory/hbm3.yaml\"], \"workload\": \"traces/alexnet.csv\","
	  " \"set\": {\"sram.inputs.kib\": 1024, \"array.dataflow\": \"is\"}}",
	  { "-c", "configs/tpu_v4_mxu.yaml", "-c", "configs/memory/hbm3.yaml", "-w", "traces/alexnet.csv", "--set",
	    "sram.inputs.kib=1024", "--set", "array.dataflow=is", NULL } },
	{ "{\"configs\": [\"configs/gemmini.yaml\"], \"workload\": \"configs/workloads/bert_base.yaml\", \"ideal_memory\": true}",
	  { "-c", "configs/gemmini.yaml", "-w", "configs/workloads/bert_base.yaml", "--ideal-memory", NULL } },
	/* The functional model's seed, and reuse off: the run options that came to the request last. */
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"model\": \"functional\","
	  " \"seed\": 7, \"reuse\": false}",
	  { "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--model", "functional", "--seed", "7",
	    "--no-reuse", NULL } },
	/* A port too narrow (a warning on the cycle model only), auto given back. */
	{ "{\"configs\": [\"configs/tpu_v4_mxu.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"model\": \"analytic\","
	  " \"set\": {\"sram.inputs.bytes_per_cycle\": 64, \"sram.weights.bytes_per_cycle\": \"auto\", \"array.rows\": 64}}",
	  { "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/mlp.yaml", "--model", "analytic", "--set",
	    "sram.inputs.bytes_per_cycle=64", "--set", "sram.weights.bytes_per_cycle=auto", "--set", "array.rows=64",
	    NULL } },
};
#define NPAIRS (int)(sizeof pairs / sizeof *pairs)

/* summary.json as the CLI writes it for pair p. */
static char *cli_summary(const struct pair *p)
{
	char *dir = th_tmpdir(), path[4200], *out, *err, *text;
	const char *argv[24] = { "run" };
	int n = 1;
	for (int i = 0; p->argv[i]; i++)
		argv[n++] = p->argv[i];
	argv[n++] = "-o";
	argv[n++] = dir;
	argv[n] = NULL;
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "tpusim run: %s", err);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	text = th_slurp(path);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
	return text;
}

static char *lib_summary(const char *request, int want)
{
	char *result = NULL;
	int rc = tpusim_run_json(request, &result);
	ck_assert_ptr_nonnull(result);
	ck_assert_msg(rc == want, "exit %d, wanted %d: %.300s", rc, want, result);
	return result;
}

START_TEST(same_as_cli)
{
	const struct pair *p = &pairs[_i];
	char *cli = cli_summary(p), *lib = lib_summary(p->request, 0);
	ck_assert_msg(!strcmp(lib, cli), "the library's summary differs from the CLI's for %s", p->request);
	tpusim_free(lib);
	free(cli);
}
END_TEST

/* A thread that overruns the kernel's clock: a simulation error (exit status 1) in this process. */
static void overrun(void *arg)
{
	(void)arg;
	scw_wait(7);
	scw_wait(INT64_MAX);
}

/* A SystemC run that fails in this process, left behind as a failed library call would leave it. */
static void fail_a_kernel(void)
{
	struct err e = { 0 };
	scw_kernel *k = scw_kernel_new(&e);
	ck_assert_ptr_nonnull(k);
	scw_spawn(k, "overrun", overrun, NULL);
	ck_assert_int_eq(scw_run(k, &e), -1);
	ck_assert_int_eq(e.kind, ERR_SIM);
	scw_kernel_free(k);
}

/*
 * Calls that fail with 2 (a bad request, a bad config) and a SystemC run
 * that fails (status 1) do not change later answers: every pair, again after
 * each failure, equals its first answer.
 */
START_TEST(failures_leave_no_trace)
{
	char *first[NPAIRS];
	for (int i = 0; i < NPAIRS; i++)
		first[i] = lib_summary(pairs[i].request, 0);
	for (int round = 0; round < 3; round++) {
		if (round == 2)
			fail_a_kernel();
		else
			tpusim_free(lib_summary(round == 0 ? "{\"configs\": [" :
						"{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": "
						"\"configs/workloads/mlp.yaml\", \"set\": {\"array.rows\": 0}}", 2));
		for (int i = 0; i < NPAIRS; i++) {
			char *again = lib_summary(pairs[i].request, 0);
			ck_assert_msg(!strcmp(again, first[i]), "round %d: %s gave another answer", round, pairs[i].request);
			tpusim_free(again);
		}
	}
	for (int i = 0; i < NPAIRS; i++)
		tpusim_free(first[i]);
}
END_TEST

/*
 * A request's trace path is checked by sim_load, before anything runs: a path
 * that cannot be written is bad input (not a failure inside the SystemC
 * kernel), and one that can leaves no file behind.
 */
START_TEST(vcd_checked_at_load)
{
	struct sim_request *rq = calloc(1, sizeof *rq);
	struct sim *s = calloc(1, sizeof *s);
	struct err e = { 0 };
	char *dir = th_tmpdir(), base[4200], path[4200];
	FILE *f;

	ck_assert(rq && s);
	rq->configs[rq->nconfigs++] = "configs/lab_4x4.yaml";
	rq->workload = "configs/workloads/mlp.yaml";
	rq->dataflow = -1;
	rq->model = MODEL_CYCLE;
	snprintf(base, sizeof base, "%s/nodir/t", dir);
	rq->vcd = base;
	ck_assert_int_eq(sim_load(s, rq, "request", &e), -1);
	ck_assert_int_eq(err_status(&e), 2);
	snprintf(path, sizeof path, "--vcd: expected a writable path, found \"%s/nodir/t.vcd\" (No such file or directory)",
		 dir);
	ck_assert_str_eq(e.msg, path);
	snprintf(base, sizeof base, "%s/t", dir);
	ck_assert_int_eq(sim_load(s, rq, "request", &e), 0);
	sim_release(s);
	snprintf(path, sizeof path, "%s/t.vcd", dir);
	ck_assert_ptr_null(f = fopen(path, "r"));
	free(rq);
	free(s);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Bad requests: exit 2 and the exact message. */
static const struct {
	const char *request;
	const char *message;
} bad[] = {
	{ "", "request: expected a JSON object, found an empty request" },
	{ "[1, 2]", "request:1:1: expected a JSON object, found a sequence" },
	{ "{\"workload\": \"configs/workloads/mlp.yaml\"}", "request: configs: expected at least one config file, found none" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"]}", "request: workload: expected a workload file, found none" },
	{ "{\"configs\": \"configs/lab_4x4.yaml\", \"workload\": \"w\"}",
	  "request:1:13: configs: expected a list of config file paths, found \"configs/lab_4x4.yaml\"" },
	{ "{\"configs\": [[1]], \"workload\": \"w\"}", "request:1:14: configs[0]: expected a string, found a sequence" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"modle\": \"cycle\"}",
	  "request:1:81: modle: expected a request key (configs, set, workload, model, dataflow, batch, ideal_memory, seed, reuse, train), "
	  "found an unknown key" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"model\": \"fast\"}",
	  "request:1:90: model: expected \"analytic\", \"cycle\" or \"functional\", found \"fast\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"dataflow\": \"rs\"}",
	  "request:1:93: dataflow: expected \"ws\", \"os\" or \"is\", found \"rs\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"batch\": 0}",
	  "request:1:90: batch: expected an integer in [1, 1048576], found \"0\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"ideal_memory\": \"yes\"}",
	  "request:1:97: ideal_memory: expected true or false, found \"yes\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\",\n"
	  " \"set\": {\"array.rows\": 0}}",
	  "request:2:24: array.rows: expected an integer in [1, 4096], found \"0\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\",\n"
	  " \"set\": {\"array.rwos\": 8}}",
	  "request:2:24: array.rwos: expected a known key, found an unknown key (did you mean array.rows?)" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\",\n"
	  " \"set\": {\"array.rows\": [8]}}",
	  "request:2:24: set.array.rows: expected a number, boolean or string, found a sequence" },
	{ "{\"configs\": [\"nonexistent.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\"}",
	  "nonexistent.yaml: expected a readable file, found No such file or directory" },
	/* One line, whatever the path holds. */
	{ "{\"configs\": [\"a\\nb\"], \"workload\": \"configs/workloads/mlp.yaml\"}",
	  "a\\x0ab: expected a readable file, found No such file or directory" },
	/* "{... \"workload\": \"configs/workloads/mlp.yaml\", " is 80 characters: the next key is at column 81. */
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"seed\": -1}",
	  "request:1:89: seed: expected an integer in [0, 2^64), found \"-1\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"seed\": \"7\"}",
	  "request:1:89: seed: expected an integer in [0, 2^64), found \"7\"" },
	/* A key for a model the request does not run (the default: cycle), as the command line refuses --seed. */
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"seed\": 7}",
	  "request:1:89: seed: expected model \"functional\" (only it draws operands), found model \"cycle\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"reuse\": 1}",
	  "request:1:90: reuse: expected true or false, found \"1\"" },
	/* The command line's own run options are not request keys. */
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\", \"vcd\": \"t\"}",
	  "request:1:81: vcd: expected a request key (configs, set, workload, model, dataflow, batch, ideal_memory, seed, "
	  "reuse, train), found an unknown key" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": 7}",
	  "request:1:51: workload: expected a string, found \"7\"" },
	{ "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"w\", \"set\": {\"a\\nb\": []}}",
	  "request:1:72: set.a\\x0ab: expected a number, boolean or string, found a sequence" },
};

START_TEST(bad_requests)
{
	char *r = lib_summary(bad[_i].request, 2);
	ck_assert_str_eq(r, bad[_i].message);
	tpusim_free(r);
}
END_TEST

/* A syntax error names its place; the rest of the line is libyaml's own words. */
START_TEST(bad_json)
{
	char *r = lib_summary("{\"configs\": [\"a\"],\n \"workload\" \"w\"}", 2);
	ck_assert_msg(!strncmp(r, "request:2:", 10) && strstr(r, ": expected well-formed JSON, found a syntax error"), "%s", r);
	tpusim_free(r);
	r = NULL;
	ck_assert_int_eq(tpusim_run_json(NULL, &r), 2);
	ck_assert_str_eq(r, "request: expected a JSON object, found an empty request");
	tpusim_free(r);
}
END_TEST

/*
 * A request's set of an hbm key for a run on ideal memory (the functional
 * model's) is refused as --set's is, at the value (column 88 of the line).
 */
START_TEST(memory_key_ideal_memory)
{
	char *r = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"functional\", \"set\": "
			      "{\"hbm.latency_ns\": 1}}", 2);
	ck_assert_str_eq(r, "request:1:94: hbm.latency_ns: expected no hbm key (the functional model runs on ideal memory, "
			 "so it would change nothing), found it set to 1");
	tpusim_free(r);
	/*
	 * hbm.gbps sizes the memory PHYs (area.phy_mm2_per_gbps x GB/s), so on
	 * ideal memory it still moves the area: lab_4x4's custom memory at 0.03
	 * mm2 per GB/s, 8 -> 100 GB/s, is 2.76 mm2 more PHY.
	 */
	char *g8 = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"functional\"}", 0);
	char *g100 = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"functional\", "
				 "\"set\": {\"hbm.gbps\": 100}}", 0);
	struct ydoc *p8 = th_json("g8", g8), *p100 = th_json("g100", g100);
	ck_assert_double_eq_tol(th_json_num(p100->root, "area_mm2_by_component.memory_phy") -
				th_json_num(p8->root, "area_mm2_by_component.memory_phy"), 92 * 0.03, 1e-9);
	ydoc_free(p8);
	ydoc_free(p100);
	tpusim_free(g8);
	tpusim_free(g100);
	/*
	 * hbm.type brings the pJ per bit of the HBM bytes, which ideal memory
	 * still moves: the energy changes, so the type is taken. HBM3's 3.97
	 * pJ/bit (models/memory.c) against lab_4x4's 20: the hbm part scales by
	 * 3.97 / 20.
	 */
	char *d20 = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\", "
				"\"ideal_memory\": true}", 0);
	char *d70 = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\", "
				"\"ideal_memory\": true, \"set\": {\"hbm.type\": \"hbm3\"}}", 0);
	struct ydoc *a = th_json("d20", d20), *b = th_json("d70", d70);
	ck_assert_double_eq_tol(th_json_num(b->root, "total.energy_pj_by_component.hbm") /
				th_json_num(a->root, "total.energy_pj_by_component.hbm"), 3.97 / 20, 1e-9);
	ydoc_free(a);
	ydoc_free(b);
	tpusim_free(d20);
	tpusim_free(d70);
}
END_TEST

/*
 * The memory's capacity: lab_4x4 on the MLP at batch 1 keeps weights, the
 * input and activations in HBM; below what they need the run is refused at
 * the value, with sim.allow_hbm_overflow it runs and says it does not fit,
 * and the bytes are the same either way (the sum of the parts).
 */
START_TEST(hbm_capacity)
{
	char *ok = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\"}", 0);
	struct ydoc *d = th_json("ok", ok);
	double total = th_json_num(d->root, "hbm_bytes_needed.total"), sum = 0;
	for (int k = 0; k < NEED_N; k++) {
		char key[64];
		snprintf(key, sizeof key, "hbm_bytes_needed.%s", hbm_need_names[k]);
		sum += th_json_num(d->root, key);
	}
	ck_assert(total > 0 && sum == total);
	ck_assert_str_eq(th_json_at(d->root, "fits_hbm")->str, "true");
	char req[400];
	snprintf(req, sizeof req, "{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\", "
		 "\"set\": {\"hbm.capacity_gib\": %.17g}}", (total - 1) / 1073741824.0);
	char *r = lib_summary(req, 2);
	ck_assert_msg(strstr(r, ": hbm.capacity_gib: expected room for the run's ") != NULL, "%s", r);
	tpusim_free(r);
	snprintf(req, sizeof req, "{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\", "
		 "\"set\": {\"hbm.capacity_gib\": %.17g, \"sim.allow_hbm_overflow\": true}}", (total - 1) / 1073741824.0);
	char *over = lib_summary(req, 0);
	struct ydoc *o = th_json("over", over);
	ck_assert_str_eq(th_json_at(o->root, "fits_hbm")->str, "false");
	ck_assert(th_json_num(o->root, "hbm_bytes_needed.total") == total);
	snprintf(req, sizeof req, "{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\", "
		 "\"set\": {\"hbm.capacity_gib\": %.17g}}", total / 1073741824.0);
	char *just = lib_summary(req, 0);     /* exactly what it needs: fits */
	ydoc_free(d), ydoc_free(o);
	tpusim_free(ok), tpusim_free(over), tpusim_free(just);
}
END_TEST

/* The design point: two runs that differ in one buffer size differ in config, and say so in set. */
START_TEST(design_point)
{
	char *a = lib_summary("{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\","
			      " \"model\": \"analytic\"}", 0);
	char *b = lib_summary("{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\","
			      " \"model\": \"analytic\", \"set\": {\"sram.inputs.kib\": 128}}", 0);
	struct ydoc *da = th_json("a", a), *db = th_json("b", b);
	/* lab_4x4.yaml gives inputs 256 KiB: the first says so, the second the override. */
	ck_assert_int_eq(th_json_int(da->root, "config.sram.inputs.kib"), 256);
	ck_assert_int_eq(th_json_int(db->root, "config.sram.inputs.kib"), 128);
	ck_assert_uint_eq(th_json_at(da->root, "set")->n, 0);
	ck_assert_uint_eq(th_json_at(db->root, "set")->n, 1);
	ck_assert_int_eq(th_json_int(ynode_get(th_json_at(db->root, "set"), "sram.inputs.kib"), ""), 128);
	ck_assert_str_eq(th_json_str(da->root, "version"), TPUSIM_VERSION);
	ck_assert_str_eq(th_json_str(da->root, "model"), "analytic");
	ck_assert_str_eq(th_json_str(da->root, "workload"), "mlp");
	ydoc_free(da);
	ydoc_free(db);
	ck_assert_str_eq(tpusim_version(), TPUSIM_VERSION);
	tpusim_free(a);
	tpusim_free(b);
}
END_TEST

/*
 * The table of result fields covers struct result: every count is in it once
 * (their sizes add up to the struct's), result_add sums each, and every
 * reported field is a key of summary.json.
 */
START_TEST(result_table_covers_result)
{
	struct result a, b;
	size_t bytes = 0;
	int64_t *pa = (int64_t *)&a, *pb = (int64_t *)&b;
	size_t n = sizeof a / sizeof(int64_t);
	for (const struct result_field *f = result_fields; f->name; f++)
		if (f->kind == RF_COUNT)
			bytes += (size_t)f->n * sizeof(int64_t);
	ck_assert_uint_eq(bytes, sizeof(struct result));
	for (size_t i = 0; i < n; i++)
		pa[i] = (int64_t)i + 1, pb[i] = 1000 * ((int64_t)i + 1);
	result_add(&a, &b);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(pa[i], 1001 * ((int64_t)i + 1));
	char *r = lib_summary("{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\","
			      " \"model\": \"analytic\"}", 0);
	struct ydoc *d = th_json("result", r);
	const struct ynode *total = th_json_at(d->root, "total");
	ck_assert_ptr_nonnull(total);
	for (const struct result_field *f = result_fields; f->name; f++)
		ck_assert_msg((ynode_get(total, f->name) != NULL) == f->reported, "%s", f->name);
	ydoc_free(d);
	tpusim_free(r);
}
END_TEST

/*
 * A port narrower than the array's edge: the cycle model's run says so once
 * on stderr, naming the key and where it was set, and summary.json keeps the
 * line. TPU v4's MXU is 128 rows of bf16: its input port must move 128 x 2 =
 * 256 B a cycle. The analytic model and ideal memory have no port widths
 * (README): no warning that would claim an effect.
 */
START_TEST(narrow_port_warns_once)
{
	static const char line[] = "--set:1:29: sram.inputs.bytes_per_cycle: 64 B/cycle cannot feed the array's "
				   "128-row edge (needs 256); streams will stretch";
	char *dir = th_tmpdir(), path[4200], *out, *err, *json, want[400];
	const char *argv[] = { "run", "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/mlp.yaml", "--set",
			       "sram.inputs.bytes_per_cycle=64", "-o", dir, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	snprintf(want, sizeof want, "warning: %s\n", line);
	ck_assert_str_eq(err, want);
	snprintf(path, sizeof path, "%s/summary.json", dir);
	json = th_slurp(path);
	/* summary.json keeps it without the position, the same however the value was given. */
	snprintf(want, sizeof want, "\"warnings\": [\"%s\"],", strstr(line, "sram.inputs"));
	ck_assert_ptr_nonnull(strstr(json, want));
	free(json);
	free(out);
	free(err);
	/* Auto ports (the preset's) feed the edge: no warning. */
	const char *argv2[] = { "run", "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/mlp.yaml", "--model",
				"analytic", NULL };
	ck_assert_int_eq(th_cli(".", argv2, &out, &err), 0);
	ck_assert_str_eq(err, "");
	free(out);
	free(err);
	/* Models without port widths: not a word, in summary.json neither. */
	const char *noports[][12] = {
		{ "run", "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/mlp.yaml", "--model", "analytic", "--set",
		  "sram.inputs.bytes_per_cycle=64", "-o", dir },
		{ "run", "-c", "configs/tpu_v4_mxu.yaml", "-w", "configs/workloads/mlp.yaml", "--ideal-memory", "--set",
		  "sram.inputs.bytes_per_cycle=64", "-o", dir },
	};
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(th_cli(".", noports[i], &out, &err), 0);
		ck_assert_str_eq(err, "");
		json = th_slurp(path);
		ck_assert_ptr_nonnull(strstr(json, "\"warnings\": [],"));
		free(json);
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A run longer than SystemC's clock (2^64 ps, about 1.8e16 cycles): 40 ops
 * of M = 2^40, K = 512, N = 1 on a 1 x 1 ws array with ideal memory. Each op
 * streams 512 folds of 2^40 rows after a 1-cycle shift, with no drain on a
 * 1 x 1 array: 512 x 2^40 + 1 = 2^49 + 1 cycles; 40 of them, 40 x (2^49 + 1).
 */
START_TEST(run_longer_than_the_kernel_clock)
{
	char *dir = th_tmpdir(), yaml[4096] = "name: long\nbatch: 1\nlayers:\n", request[8192];
	for (int i = 0; i < 40; i++) {
		char l[128];
		snprintf(l, sizeof l, "  - {name: m%d, type: matmul, m: 1099511627776, k: 512, n: 1}\n", i);
		strcat(yaml, l);
	}
	char *cfg = th_write(dir, "c.yaml", "array: {rows: 1, cols: 1}\n"), *wl = th_write(dir, "w.yaml", yaml);
	snprintf(request, sizeof request, "{\"configs\": [\"%s\"], \"workload\": \"%s\", \"ideal_memory\": true}", cfg,
		 wl);
	char *r = lib_summary(request, 0);
	struct ydoc *d = th_json("result", r);
	ck_assert_int_eq(th_json_int(d->root, "total.cycles"), 40 * ((1LL << 49) + 1));
	ydoc_free(d);
	tpusim_free(r);
	free(cfg);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * sim/tpusim.h documents every request key, one line each ("  key   values"
 * in the list after "these keys"), in the table's order, and no other; each
 * line names what the key takes: a choice's every name in quotes, a boolean's
 * true | false, a number's range.
 */
START_TEST(header_lists_request_keys)
{
	char *h = th_slurp("sim/tpusim.h"), *l = strstr(h, "these keys");
	const struct run_option *row[RO_COUNT];
	int n = 0, k = 0;
	ck_assert_ptr_nonnull(l);
	for (int i = 0; i < RO_COUNT; i++)
		if (run_options[i].in & OPT_IN_REQUEST)
			row[n++] = &run_options[i];
	/* The list: from the first line " *   key ..." to the next " *" alone. */
	l = strstr(l, "\n *   ");
	ck_assert_ptr_nonnull(l);
	for (l++; !strncmp(l, " *   ", 5); l = strchr(l, '\n') + 1) {
		char key[64], line[300], want[300];
		int len = (int)strcspn(l, "\n");
		snprintf(line, sizeof line, "%.*s", len, l);
		ck_assert_int_eq(sscanf(line + 5, "%63s", key), 1);
		ck_assert_msg(k < n, "tpusim.h documents %s, which is no request key", key);
		ck_assert_msg(!strcmp(key, row[k]->key), "tpusim.h: %s where the table has %s", key, row[k]->key);
		const struct optval *v = &row[k]->val;
		if (v->kind == OPT_CHOICE)
			for (int c = 0; v->names[c]; c++) {
				snprintf(want, sizeof want, "\"%s\"", v->names[c]);
				ck_assert_msg(strstr(line, want), "tpusim.h: %s without %s", key, want);
			}
		if (v->kind == OPT_BOOL)
			ck_assert_msg(strstr(line, "true | false"), "tpusim.h: %s", line);
		if (v->kind == OPT_INT) {
			snprintf(want, sizeof want, "an integer in [%lld, %lld]", v->lo, v->hi);
			ck_assert_msg(strstr(line, want), "tpusim.h: %s without %s", line, want);
		}
		if (v->kind == OPT_U64)
			ck_assert_msg(strstr(line, "an integer in [0, 2^64)"), "tpusim.h: %s", line);
		k++;
	}
	ck_assert_msg(!strncmp(l, " *\n", 3), "tpusim.h: the list ends at %.40s", l);
	ck_assert_msg(k == n, "tpusim.h documents %d request keys of %d, not %s", k, n, k < n ? row[k]->key : "");
	free(h);
}
END_TEST

/* ---- many threads ---- */

#define THREADS 4
#define THREAD_CALLS 12

/* Requests small enough to run many times: a GEMM on four presets, both models, the three dataflows. */
struct calls {
	char request[8][600];
	char *alone[8];             /* each request's answer, one call at a time */
	int status[8];
};

struct worker {
	const struct calls *c;
	int t;
	char *got[THREAD_CALLS];
	int which[THREAD_CALLS], status[THREAD_CALLS];
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	for (int j = 0; j < THREAD_CALLS; j++) {
		w->which[j] = (j + 3 * w->t) % 8;
		w->status[j] = tpusim_run_json(w->c->request[w->which[j]], &w->got[j]);
	}
	return NULL;
}

/*
 * Calls from 4 threads at once, 12 each over 8 requests (one a bad config,
 * status 2): every answer is the one the same request gets alone. SystemC
 * keeps its kernel in process-wide state, so the calls cannot overlap; they
 * must still all be answered, each with its own result.
 */
START_TEST(threads_get_their_own_answers)
{
	static const char *const presets[] = { "lab_4x4", "edge_32x32", "gemmini", "tpu_v1" };
	static const char *const dataflows[] = { "ws", "os", "is" };
	struct calls c;
	struct worker w[THREADS];
	pthread_t id[THREADS];
	char *dir = th_tmpdir(), *wl = th_write(dir, "g.yaml", "name: g\nlayers:\n  - {name: g, type: matmul, m: 9, k: 13, n: 7}\n");

	for (int i = 0; i < 8; i++) {
		snprintf(c.request[i], sizeof c.request[i],
			 "{\"configs\": [\"%s\"], \"workload\": \"%s\", \"model\": \"%s\", \"dataflow\": \"%s\"%s}", presets[i % 4],
			 wl, i < 4 ? "cycle" : "analytic", dataflows[i % 3],
			 i == 7 ? ", \"set\": {\"array.rows\": 0}" : "");
		c.status[i] = tpusim_run_json(c.request[i], &c.alone[i]);
		ck_assert_int_eq(c.status[i], i == 7 ? 2 : 0);
	}
	for (int t = 0; t < THREADS; t++) {
		w[t] = (struct worker){ .c = &c, .t = t };
		ck_assert_int_eq(pthread_create(&id[t], NULL, worker_run, &w[t]), 0);
	}
	for (int t = 0; t < THREADS; t++) {
		ck_assert_int_eq(pthread_join(id[t], NULL), 0);
		for (int j = 0; j < THREAD_CALLS; j++) {
			int i = w[t].which[j];
			ck_assert_msg(w[t].status[j] == c.status[i] && !strcmp(w[t].got[j], c.alone[i]),
				      "thread %d, call %d (request %d): another answer", t, j, i);
			tpusim_free(w[t].got[j]);
		}
	}
	for (int i = 0; i < 8; i++)
		tpusim_free(c.alone[i]);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- workloads by name ---- */

/* The workloads of the checkout, "bert_base, ..., vit_b16", read from configs/workloads/ here. */
static void workload_names(char *buf, size_t size)
{
	struct dirent **v;
	int n = scandir("configs/workloads", &v, NULL, alphasort);
	ck_assert_int_ge(n, 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t len = strlen(v[i]->d_name);
		if (len > 5 && !strcmp(v[i]->d_name + len - 5, ".yaml"))
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%.*s", buf[0] ? ", " : "", (int)len - 5,
				 v[i]->d_name);
		free(v[i]);
	}
	free(v);
}

/*
 * A workload named without a path ("mlp") is configs/workloads/mlp.yaml beside
 * the running program, from any directory, as a preset is (-c lab_4x4); a file
 * of that name in the working directory comes first; a name that is neither
 * is an error listing the workloads.
 */
START_TEST(workload_by_name)
{
	char *dir = th_tmpdir(), *out, *err, *by_name, *by_path, want[4096], names[2048], full[PATH_MAX];
	struct ydoc *d;

	by_name = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\"}", 0);
	by_path = lib_summary("{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"configs/workloads/mlp.yaml\","
			      " \"model\": \"analytic\"}", 0);
	d = th_json("by_name", by_name);
	ck_assert_ptr_nonnull(realpath("configs/workloads/mlp.yaml", full));
	ck_assert_str_eq(th_json_str(d->root, "workload_file"), full);
	ck_assert_str_eq(th_json_str(d->root, "workload"), "mlp");
	/* mlp: 784-512-256-10 at batch 16. */
	ck_assert_int_eq(th_json_int(d->root, "total.macs"), 16 * (784 * 512 + 512 * 256 + 256 * 10));
	ydoc_free(d);
	ck_assert_ptr_nonnull(strstr(by_path, "\"workload_file\": \"configs/workloads/mlp.yaml\""));
	tpusim_free(by_name);
	tpusim_free(by_path);

	workload_names(names, sizeof names);
	snprintf(want, sizeof want, "mlp5: expected a workload file or a workload name (%s), found neither (did you mean mlp?)",
		 names);
	by_name = lib_summary("{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp5\"}", 2);
	ck_assert_str_eq(by_name, want);
	tpusim_free(by_name);

	/* From another directory, on the command line; then with a file "mlp" there, which wins. */
	const char *run[] = { "run", "-c", "lab_4x4", "-w", "mlp", "--model", "analytic", NULL };
	ck_assert_int_eq(th_cli(dir, run, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "mlp"));
	free(out);
	free(err);
	free(th_write(dir, "mlp", "name: mine\nlayers:\n  - {name: g, type: matmul, m: 4, k: 4, n: 4}\n"));
	const char *lower[] = { "lower", "-w", "mlp", "--csv", NULL };
	ck_assert_int_eq(th_cli(dir, lower, &out, &err), 0);
	ck_assert_msg(strstr(out, ",64,") && !strstr(out, "fc1"), "%s", out);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *t = tcase_create("api");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, same_as_cli, 0, NPAIRS);
	tcase_add_test(t, failures_leave_no_trace);
	tcase_add_test(t, vcd_checked_at_load);
	tcase_add_loop_test(t, bad_requests, 0, (int)(sizeof bad / sizeof *bad));
	tcase_add_test(t, bad_json);
	tcase_add_test(t, memory_key_ideal_memory);
	tcase_add_test(t, header_lists_request_keys);
	tcase_add_test(t, design_point);
	tcase_add_test(t, hbm_capacity);
	tcase_add_test(t, result_table_covers_result);
	tcase_add_test(t, narrow_port_warns_once);
	tcase_add_test(t, run_longer_than_the_kernel_clock);
	tcase_add_test(t, threads_get_their_own_answers);
	tcase_add_test(t, workload_by_name);
	suite_add_tcase(s, t);
	return s;
}
