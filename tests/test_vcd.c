/*
 * test_vcd.c - the cycle engine's VCD (--vcd), read back by a small parser:
 * its time is the report's, in picoseconds from the clock; it holds every
 * load, fold and store of the tile program; folds start when the closed form
 * says; ops carry their names; a failed run leaves no file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chip.h"
#include "place.h"
#include "run.h"
#include "plan.h"
#include "schedule.h"
#include "tests.h"
#include "ydoc.h"

/* ---- a VCD reader: declarations, times and value changes ---- */

struct vvar {
	char id[16];
	char path[200];             /* scopes and name, joined by '.' */
};

struct vchange {
	int64_t t;                  /* ps */
	int var;
	char *val;                  /* owned: the value as written (bits, or a string's text) */
};

struct vfile {
	char timescale[32];
	struct vvar *v;
	int nv;
	struct vchange *c;
	size_t nc;
	int64_t last;               /* the last time */
	bool ordered;               /* times never went back */
};

static int var_by_id(const struct vfile *f, const char *id)
{
	for (int i = 0; i < f->nv; i++)
		if (!strcmp(f->v[i].id, id))
			return i;
	ck_abort_msg("VCD: value change for undeclared id %s", id);
	return -1;
}

static void vfile_read(struct vfile *f, const char *path)
{
	char line[1024], scope[200] = "";
	int64_t t = 0;
	size_t cap = 0;
	FILE *in = fopen(path, "r");
	ck_assert_msg(in != NULL, "no VCD at %s", path);
	memset(f, 0, sizeof *f);
	f->ordered = true;
	while (fgets(line, sizeof line, in)) {
		char a[64], b[64], c[64], d[200], val[600], id[16];
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "$timescale %63s %63s $end", a, b) == 2) {
			snprintf(f->timescale, sizeof f->timescale, "%s %s", a, b);
		} else if (sscanf(line, "$scope module %63s $end", a) == 1) {
			size_t n = strlen(scope);
			snprintf(scope + n, sizeof scope - n, "%s%s", n ? "." : "", a);
		} else if (!strncmp(line, "$upscope", 8)) {
			char *dot = strrchr(scope, '.');
			*(dot ? dot : scope) = 0;
		} else if (sscanf(line, "$var %63s %63s %63s %199s $end", a, b, c, d) == 4) {
			f->v = realloc(f->v, (size_t)(f->nv + 1) * sizeof *f->v);
			snprintf(f->v[f->nv].id, sizeof f->v[f->nv].id, "%s", c);
			snprintf(f->v[f->nv].path, sizeof f->v[f->nv].path, "%s.%s", scope, d);
			f->nv++;
		} else if (line[0] == '#') {
			int64_t nt = strtoll(line + 1, NULL, 10);
			if (nt < t)
				f->ordered = false;
			t = f->last = nt;
		} else if (line[0] == 'b' || line[0] == 's' || line[0] == 'r' || line[0] == '0' || line[0] == '1' ||
			   line[0] == 'x') {
			if (line[0] == 'b' || line[0] == 's' || line[0] == 'r') {
				/* "s<text> <id>": the text may be empty */
				char *sp = strrchr(line, ' ');
				ck_assert_ptr_nonnull(sp);
				snprintf(id, sizeof id, "%s", sp + 1);
				*sp = 0;
				snprintf(val, sizeof val, "%s", line + 1);
			} else {
				snprintf(id, sizeof id, "%s", line + 1);
				snprintf(val, sizeof val, "%c", line[0]);
			}
			if (f->nc == cap) {
				cap = cap ? 2 * cap : 1024;
				f->c = realloc(f->c, cap * sizeof *f->c);
				ck_assert_ptr_nonnull(f->c);
			}
			f->c[f->nc++] = (struct vchange){ t, var_by_id(f, id), strdup(val) };
		}
	}
	fclose(in);
}

static void vfile_release(struct vfile *f)
{
	for (size_t i = 0; i < f->nc; i++)
		free(f->c[i].val);
	free(f->c);
	free(f->v);
}

static int var(const struct vfile *f, const char *path)
{
	for (int i = 0; i < f->nv; i++)
		if (!strcmp(f->v[i].path, path))
			return i;
	ck_abort_msg("VCD: no signal %s", path);
	return -1;
}

/* The value signal `path` ends with ("" if it never changed). */
static const char *final(const struct vfile *f, const char *path)
{
	int v = var(f, path);
	const char *last = "";
	for (size_t i = 0; i < f->nc; i++)
		if (f->c[i].var == v)
			last = f->c[i].val;
	return last;
}

/* The time of the last change of signal `path`. */
static int64_t last_change(const struct vfile *f, const char *path)
{
	int v = var(f, path);
	int64_t t = -1;
	for (size_t i = 0; i < f->nc; i++)
		if (f->c[i].var == v)
			t = f->c[i].t;
	return t;
}

static int64_t final_int(const struct vfile *f, const char *path)
{
	return strtoll(final(f, path), NULL, 2);
}

/* The sum over the arrays lanes of the final value of their counter `name`. */
static int64_t lanes_sum(const struct vfile *f, int cores, int arrays, const char *name)
{
	char path[200];
	int64_t sum = 0;
	for (int c = 0; c < cores; c++)
		for (int a = 0; a < arrays; a++) {
			snprintf(path, sizeof path, "tpusim.core%d_array%d.%s", c, a, name);
			sum += final_int(f, path);
		}
	return sum;
}

/* ---- runs ---- */

/* A number after `key` in the "total" object of summary.json in dir. */
static int64_t total_of(const char *dir, const char *key)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/summary.json", dir);
	struct ydoc *d = th_json_file(path);
	int64_t v = th_json_int(th_json_at(d->root, "total"), key);
	ydoc_free(d);
	return v;
}

/*
 * tpusim run -c configs/<cfg>.yaml -w <wl> [extra...] -o <dir>/out [--vcd <dir>/t]:
 * the total cycles the run reports; reads the VCD into f when given.
 */
static int64_t run_cli(const char *dir, const char *cfg, const char *wl, const char *const *extra, struct vfile *f)
{
	char cfgpath[256], out[4200], base[4200], vcdpath[4300];
	const char *argv[40];
	char *so, *se;
	int n = 0;
	snprintf(cfgpath, sizeof cfgpath, "configs/%s.yaml", cfg);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(base, sizeof base, "%s/t", dir);
	argv[n++] = "run";
	argv[n++] = "-c";
	argv[n++] = cfgpath;
	argv[n++] = "-w";
	argv[n++] = wl;
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n++] = "-o";
	argv[n++] = out;
	if (f) {
		argv[n++] = "--vcd";
		argv[n++] = base;
	}
	argv[n] = NULL;
	ck_assert_msg(th_cli(".", argv, &so, &se) == 0, "%s", se);
	free(so);
	free(se);
	if (f) {
		snprintf(vcdpath, sizeof vcdpath, "%s.vcd", base);
		vfile_read(f, vcdpath);
		ck_assert_str_eq(f->timescale, "1 ps");
		ck_assert(f->ordered);
	}
	return total_of(out, "cycles");
}

/* A 10 x 6 by 6 x 5 GEMM. */
static const char gemm_10x6x5[] = "name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n";

/* Four ops: fc1; an MLP block's up, gelu (on the vector unit) and down. */
static const char tiny_mlp[] = "name: tiny\nbatch: 2\nlayers:\n"
			       "  - {name: fc1, type: fc, in_features: 12, out_features: 10}\n"
			       "  - {name: blk, type: mlp, d_model: 10, d_ff: 8, tokens: 3}\n";

/*
 * The timeline ends at the reported cycles, in picoseconds from the clock:
 * at 1 GHz cycle c is c x 1000 ps; at 0.7 GHz (tpu_v1, a chip run with loads
 * running ahead across ops) round(c x 10000 / 7), whose fraction is k/7,
 * never a half. The trace changes nothing: the run without it reports the
 * same cycles.
 */
START_TEST(ends_at_reported_cycles)
{
	char *dir = th_tmpdir(), *wl = th_write(dir, "g.yaml", gemm_10x6x5);
	struct vfile f;
	int64_t c = run_cli(dir, "lab_4x4", wl, NULL, &f);
	ck_assert_int_eq(f.last, c * 1000);
	ck_assert_int_eq(run_cli(dir, "lab_4x4", wl, NULL, NULL), c);
	/*
	 * The last store is there: the run ends waiting for it (its cycles after
	 * the array is done are the report's outputs tail), so the store count's
	 * last change is the file's last time.
	 */
	ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.stores_in_flight"), 0);
	ck_assert_int_eq(last_change(&f, "tpusim.core0_array0.stores"), f.last);
	vfile_release(&f);

	c = run_cli(dir, "tpu_v1", "configs/workloads/resnet50.yaml", NULL, &f);
	ck_assert_int_gt(c, 0);
	ck_assert_int_eq(f.last, (c * 10000 * 2 + 7) / 14);
	ck_assert_int_eq(run_cli(dir, "tpu_v1", "configs/workloads/resnet50.yaml", NULL, NULL), c);
	vfile_release(&f);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The tile program's instructions for ws plans of every GEMM op of yaml on cfg (chip placement when it keeps activations). */
static void program_counts(const struct config *cfg, const char *yaml, int64_t n[3])
{
	struct workload w;
	struct oplist ops;
	struct err e = { 0 };
	th_lower(yaml, &w, &ops);
	if (place_keeps(&cfg->arch))
		ck_assert_msg(place_ops(&cfg->arch, &ops, &e) == 0, "%s", e.msg);
	n[0] = n[1] = n[2] = 0;
	for (size_t i = 0; i < ops.n; i++) {
		struct sched s;
		struct sched_iter it;
		struct tile_ins ins;
		if (ops.v[i].kind != OP_GEMM)
			continue;
		ck_assert_msg(plan_gemm(&s, &ops.v[i], cfg, &cfg->arch, DF_WS, false, &e) == 0, "%s", e.msg);
		sched_iter_init(&it, &s);
		while (sched_next(&it, &ins))
			n[ins.kind]++;
	}
	oplist_release(&ops);
	workload_release(&w);
}

/*
 * Every load, fold and store of the tile program is in the trace, layer by
 * layer and as a chip runs (loads running ahead, activations kept on chip:
 * placement makes some operands kept, which changes the program), and none
 * is left in flight at the end.
 */
START_TEST(every_instruction_is_there)
{
	static const char *const chip_sets[] = { "chip.prefetch_across_ops=true", "chip.keep_activations=true", NULL };
	static const char *const chip_args[] = { "--set", "chip.prefetch_across_ops=true", "--set",
						 "chip.keep_activations=true", NULL };
	char *dir = th_tmpdir(), *wl = th_write(dir, "m.yaml", tiny_mlp);
	for (int chip = 0; chip < 2; chip++) {
		struct config c;
		struct vfile f;
		int64_t want[3];
		th_config(&c, "lab_4x4", chip ? chip_sets : NULL);
		program_counts(&c, tiny_mlp, want);
		ck_assert_int_gt(want[TI_LOAD], 0);
		int64_t cycles = run_cli(dir, "lab_4x4", wl, chip ? chip_args : NULL, &f);
		ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.loads"), want[TI_LOAD]);
		ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.folds"), want[TI_FOLD]);
		ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.stores"), want[TI_STORE]);
		ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.loads_in_flight"), 0);
		ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.stores_in_flight"), 0);
		ck_assert_str_eq(final(&f, "tpusim.core0_array0.fold"), "");
		ck_assert_int_eq(f.last, cycles * 1000);
		vfile_release(&f);
	}
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Folds start when the closed form says. The 10x6x5 GEMM on lab_4x4 (4 x 4,
 * ws, pipelined) with ideal memory: B (6 x 5) is two row blocks (K 0:4 and
 * 4:6, Sr 4 and 2) by two column blocks (N 0:4, 4:5), A^T streams T = M = 10.
 * Row blocks are the inner loop. Fold 0 shifts its tile in from cycle 0 and
 * streams at s_0 = Sr_0 = 4 until e_0 = 14; fold 1's tile shifts in behind
 * it from s_0: s_1 = max(e_0, s_0 + Sr_1) = max(14, 6) = 14; then s_2 =
 * max(24, 14 + 4) = 24, s_3 = max(34, 24 + 2) = 34, e_3 = 44; the last
 * partial sums leave R + Sc - 2 = 4 + 1 - 2 = 3 cycles later: 47, with
 * instant HBM the run's end. In between, the stall signal shows
 * weight_shift for [0, 4) and fill_drain for [44, 47).
 */
START_TEST(folds_start_when_the_closed_form_says)
{
	static const char *const ideal[] = { "--ideal-memory", NULL };
	static const struct {
		int64_t t;
		const char *fold;
	} want[] = {
		{ 4000, "0:C[0:10,0:4]+=A[0:10,0:4]*B[0:4,0:4]" },
		{ 14000, "1:C[0:10,0:4]+=A[0:10,4:6]*B[4:6,0:4]" },
		{ 24000, "2:C[0:10,4:5]+=A[0:10,0:4]*B[0:4,4:5]" },
		{ 34000, "3:C[0:10,4:5]+=A[0:10,4:6]*B[4:6,4:5]" },
		{ 44000, "" },
	};
	static const struct {
		int64_t t;
		const char *stall;
	} stalls[] = { { 0, "weight_shift" }, { 4000, "" }, { 44000, "fill_drain" }, { 47000, "" } };
	char *dir = th_tmpdir(), *wl = th_write(dir, "g.yaml", gemm_10x6x5);
	struct vfile f;
	size_t k = 0, j = 0;
	ck_assert_int_eq(run_cli(dir, "lab_4x4", wl, ideal, &f), 47);
	ck_assert_int_eq(f.last, 47000);
	int fold = var(&f, "tpusim.core0_array0.fold"), stall = var(&f, "tpusim.core0_array0.stall");
	for (size_t i = 0; i < f.nc; i++) {
		const struct vchange *c = &f.c[i];
		if (c->var == fold && (k || c->val[0])) {
			ck_assert_uint_lt(k, sizeof want / sizeof *want);
			ck_assert_int_eq(c->t, want[k].t);
			ck_assert_str_eq(c->val, want[k].fold);
			k++;
		}
		if (c->var == stall && (j || c->val[0])) {
			ck_assert_uint_lt(j, sizeof stalls / sizeof *stalls);
			ck_assert_int_eq(c->t, stalls[j].t);
			ck_assert_str_eq(c->val, stalls[j].stall);
			j++;
		}
	}
	ck_assert_uint_eq(k, sizeof want / sizeof *want);
	ck_assert_uint_eq(j, sizeof stalls / sizeof *stalls);
	vfile_release(&f);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Ops by name, as `tpusim lower` and layers.csv name them (lower.h): fc1,
 * then the MLP block's blk.up, blk.gelu and blk.down, with indices 0 .. 3; the
 * vector op runs on the array's lane, its chunks in the vector signal.
 */
START_TEST(ops_by_name)
{
	static const char *const names[] = { "fc1", "blk.up", "blk.gelu", "blk.down" };
	char *dir = th_tmpdir(), *wl = th_write(dir, "m.yaml", tiny_mlp);
	struct vfile f;
	size_t k = 0;
	bool vector_during_gelu = false;
	const char *lane_op = "";
	run_cli(dir, "lab_4x4", wl, NULL, &f);
	int top = var(&f, "tpusim.op"), index = var(&f, "tpusim.op_index"), op = var(&f, "tpusim.core0_array0.op");
	int vec = var(&f, "tpusim.core0_array0.vector");
	for (size_t i = 0; i < f.nc; i++) {
		const struct vchange *c = &f.c[i];
		if (c->var == top && c->val[0]) {
			ck_assert_uint_lt(k, 4);
			ck_assert_str_eq(c->val, names[k]);
			k++;
		}
		if (c->var == index && c->val[0] != 'x')
			ck_assert_int_eq(strtoll(c->val, NULL, 2), (int64_t)k - 1);
		if (c->var == op)
			lane_op = c->val;
		if (c->var == vec && !strcmp(c->val, "chunk_1/1"))
			vector_during_gelu = !strcmp(lane_op, "blk.gelu");
	}
	ck_assert_uint_eq(k, 4);
	ck_assert(vector_during_gelu);
	vfile_release(&f);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A chip of 2 cores x 2 arrays: one scope per array, the timeline ends at the
 * reported cycles, op by op and as a chip runs; the arrays' folds add up to
 * the plans' (ws: one fold instruction a fold).
 */
START_TEST(chip_of_four_arrays)
{
	static const char *const layer[] = { "--set", "chip.cores=2", "--set", "chip.arrays_per_core=2", NULL };
	static const char *const chip[] = { "--set", "chip.cores=2", "--set", "chip.arrays_per_core=2", "--set",
					    "chip.prefetch_across_ops=true", "--set", "chip.keep_activations=true", NULL };
	const char *const *modes[] = { layer, chip };
	char *dir = th_tmpdir(), *wl = th_write(dir, "m.yaml", tiny_mlp);
	for (int m = 0; m < 2; m++) {
		struct vfile f;
		char out[4200];
		int64_t c = run_cli(dir, "lab_4x4", wl, modes[m], &f);
		snprintf(out, sizeof out, "%s/out", dir);
		ck_assert_int_eq(f.last, c * 1000);
		ck_assert_int_eq(lanes_sum(&f, 2, 2, "folds"), total_of(out, "folds"));
		ck_assert_int_eq(lanes_sum(&f, 2, 2, "loads_in_flight"), 0);
		ck_assert_int_eq(lanes_sum(&f, 2, 2, "stores_in_flight"), 0);
		vfile_release(&f);
	}
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * mlp.yaml at batch 16 on lab_4x4 (ws): fc1 784 -> 512 is 196 x 128 folds of
 * T = 16, fc2 512 -> 256 is 128 x 64, fc3 256 -> 10 is 64 x 3; five ops, the
 * last with index 4.
 */
START_TEST(mlp_folds_by_hand)
{
	char *dir = th_tmpdir();
	struct vfile f;
	run_cli(dir, "lab_4x4", "configs/workloads/mlp.yaml", NULL, &f);
	ck_assert_int_eq(final_int(&f, "tpusim.core0_array0.folds"), 196 * 128 + 128 * 64 + 64 * 3);
	ck_assert_int_eq(final_int(&f, "tpusim.op_index"), 4);
	ck_assert_str_eq(final(&f, "tpusim.op"), "fc3");
	vfile_release(&f);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A run that fails inside the kernel leaves no VCD: memory time past int64
 * (test_limits.c's case: an add whose transfers each take about 10^14
 * cycles) fails the vector unit's wait, and the file the engine began is
 * removed.
 */
START_TEST(failed_run_leaves_no_vcd)
{
	char *dir = th_tmpdir(), base[4200], path[4300];
	struct stat st;
	snprintf(base, sizeof base, "%s/t", dir);
	snprintf(path, sizeof path, "%s.vcd", base);
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .vcd = base };
	struct err e = { 0 };
	th_run_past_int64(&o, &e);
	ck_assert_int_ne(stat(path, &st), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *vcd_suite(void)
{
	Suite *s = suite_create("vcd");
	TCase *t = tcase_create("vcd");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, ends_at_reported_cycles);
	tcase_add_test(t, every_instruction_is_there);
	tcase_add_test(t, folds_start_when_the_closed_form_says);
	tcase_add_test(t, ops_by_name);
	tcase_add_test(t, chip_of_four_arrays);
	tcase_add_test(t, mlp_folds_by_hand);
	tcase_add_test(t, failed_run_leaves_no_vcd);
	suite_add_tcase(s, t);
	return s;
}
