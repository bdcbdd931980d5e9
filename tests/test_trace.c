/*
 * test_trace.c - event traces and DRAM traces (sim/trace/trace.h).
 *
 * The event trace's events, added up by trace_read alone, must give the
 * report's totals and layers (summary.json) on every preset and shipped
 * workload that the cycle model runs in a fraction of a second, and tracing
 * must change no result. A small GEMM's records are checked against cycles
 * worked out by hand. The DRAM trace, read back with gzip(1), must hold the
 * bursts of every off-chip request of the event trace, worked out here from
 * each request's address and bytes, and so the report's HBM bytes. Traces
 * that are not the writer's are test_trace_read.c's.
 */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "run.h"
#include "stats.h"
#include "tests.h"
#include "trace.h"
#include "ydoc.h"

/*
 * The pairs that run here: an estimated at most this many fold instructions
 * and vector chunks (run_estimate). The engine runs about 2 million a second
 * on the build machine (lab_4x4 x resnet50, 1.65 million, took 0.7 s), and a
 * trace costs well under as much again: the 96 of 112 pairs below it take
 * about 6 s in all, traced and untraced.
 */
#define ROUNDTRIP_MAX_FOLDS 400000

static int64_t num(const struct ynode *m, const char *key)
{
	const struct ynode *v = ynode_get(m, key);
	ck_assert_msg(v && v->kind == Y_SCALAR, "summary.json: no %s", key);
	return strtoll(v->str, NULL, 10);
}

/* Checks a trace's totals (or a layer's) against summary.json's object o. */
static void same_numbers(const char *what, const struct ynode *o, int64_t cycles, int64_t rd, int64_t wr,
			 const int64_t cat[CAT_N])
{
	const struct ynode *c = ynode_get(o, "cycles_by_category");
	ck_assert_msg(num(o, "cycles") == cycles, "%s: cycles %lld in summary.json, %lld from the trace", what,
		      (long long)num(o, "cycles"), (long long)cycles);
	ck_assert_msg(num(o, "hbm_read_bytes") == rd, "%s: HBM read %lld in summary.json, %lld from the trace", what,
		      (long long)num(o, "hbm_read_bytes"), (long long)rd);
	ck_assert_msg(num(o, "hbm_write_bytes") == wr, "%s: HBM written %lld in summary.json, %lld from the trace", what,
		      (long long)num(o, "hbm_write_bytes"), (long long)wr);
	ck_assert_ptr_nonnull(c);
	for (int k = 0; k < CAT_N; k++)
		ck_assert_msg(num(c, cat_names[k]) == cat[k], "%s: %s %lld in summary.json, %lld from the trace", what,
			      cat_names[k], (long long)num(c, cat_names[k]), (long long)cat[k]);
}

/* summary.json's text against the trace at path: the totals and every layer. */
static void trace_matches(const char *pair, const char *json, const char *path)
{
	struct err e = { 0 };
	struct trace_summary ts;
	struct ydoc *d = ydoc_parse_json("summary.json", json, &e);
	const struct ynode *layers;
	char what[600];
	ck_assert_msg(d, "%s: summary.json: %s", pair, e.msg);
	ck_assert_msg(trace_read(path, &ts, NULL, NULL, &e) == 0, "%s: %s", pair, e.msg);
	same_numbers(pair, ynode_get(d->root, "total"), ts.cycles, ts.hbm_read_bytes, ts.hbm_write_bytes, ts.cat);
	layers = ynode_get(d->root, "layers");
	ck_assert_ptr_nonnull(layers);
	ck_assert_uint_le(ts.nlayers, layers->n);
	for (size_t i = 0; i < layers->n; i++) {
		static const int64_t none[CAT_N];
		const struct trace_layer *l = i < ts.nlayers ? &ts.layers[i] : NULL;
		snprintf(what, sizeof what, "%s: layer %zu (%s)", pair, i, ynode_get(layers->vals[i], "name")->str);
		if (l && l->name)
			ck_assert_str_eq(l->name, ynode_get(layers->vals[i], "name")->str);
		if (l)
			same_numbers(what, layers->vals[i], l->cycles, l->hbm_read_bytes, l->hbm_write_bytes, l->cat);
		else
			same_numbers(what, layers->vals[i], 0, 0, 0, none);
	}
	trace_summary_release(&ts);
	ydoc_free(d);
}

/* Loads config and workload for the cycle model, tracing to trace (NULL: none). */
static void load(struct sim *s, const char *config, const char *workload, const char *trace, const char *dram)
{
	struct sim_request rq = { .configs = { config }, .nconfigs = 1, .workload = workload, .model = MODEL_CYCLE,
				  .dataflow = -1, .trace = trace, .dram_trace = dram, .dram_format = TRACE_DRAMSIM3 };
	struct err e = { 0 };
	ck_assert_msg(sim_load(s, &rq, "run", &e) == 0, "%s x %s: %s", config, workload, e.msg);
}

/*
 * Every preset in configs/ and every workload in configs/workloads/ and
 * traces/ that runs in a fraction of a second: the trace's events add up to
 * summary.json's totals and layers, and the same run without a trace (ops
 * reused, as a plain run does) writes the same summary.json.
 */
START_TEST(every_preset_and_workload_adds_up)
{
	glob_t cg, wg;
	char *dir = th_tmpdir(), path[4200];
	int ran = 0, skipped = 0;
	snprintf(path, sizeof path, "%s/t.gz", dir);
	ck_assert_int_eq(glob("configs/*.yaml", 0, NULL, &cg), 0);
	ck_assert_int_eq(glob("configs/workloads/*.yaml", 0, NULL, &wg), 0);
	ck_assert_int_eq(glob("traces/*.csv", GLOB_APPEND, NULL, &wg), 0);
	for (size_t i = 0; i < cg.gl_pathc; i++) {
		for (size_t j = 0; j < wg.gl_pathc; j++) {
			struct sim *s = calloc(1, sizeof *s), *u = calloc(1, sizeof *u);
			struct err e = { 0 };
			char pair[1000], *traced, *plain;
			ck_assert(s && u);
			snprintf(pair, sizeof pair, "%s x %s", cg.gl_pathv[i], wg.gl_pathv[j]);
			if (th_pod_only(wg.gl_pathv[j])) {
				skipped++;
				free(s);
				free(u);
				continue;
			}
			load(s, cg.gl_pathv[i], wg.gl_pathv[j], path, NULL);
			if (th_sim_folds(s, pair) > ROUNDTRIP_MAX_FOLDS) {
				skipped++;
				sim_release(s);
				free(s);
				free(u);
				continue;
			}
			ck_assert_msg(sim_run(s, &e) == 0, "%s: %s", pair, e.msg);
			ck_assert_ptr_nonnull(traced = sim_summary_json(s));
			trace_matches(pair, traced, path);
			load(u, cg.gl_pathv[i], wg.gl_pathv[j], NULL, NULL);
			ck_assert_msg(sim_run(u, &e) == 0, "%s: %s", pair, e.msg);
			ck_assert_ptr_nonnull(plain = sim_summary_json(u));
			ck_assert_msg(!strcmp(traced, plain), "%s: the traced run's summary.json differs from the plain run's",
				      pair);
			free(traced);
			free(plain);
			sim_release(s);
			sim_release(u);
			free(s);
			free(u);
			ran++;
		}
	}
	/* 8 presets x 14 workloads: most run here; the 4x4 array's big ones, the LLM on Gemmini and the like do not. */
	ck_assert_msg(ran >= 90, "only %d pairs ran (%d skipped)", ran, skipped);
	globfree(&cg);
	globfree(&wg);
	unlink(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * At rates that pack K or take passes (array.rate_*) the trace still adds up:
 * its folds carry the stream as the array times it, and the fixed time per
 * op (the TPU presets') is a charge of its own.
 */
START_TEST(rates_add_up)
{
	static const struct {
		const char *config, *workload, *set[2];
	} runs[] = {
		{ "configs/lab_4x4.yaml", "configs/workloads/mlp.yaml", { "array.rate_int8=1/2", "array.rate_int8=1/3" } },
		{ "configs/lab_4x4.yaml", "traces/gemm_example.csv", { "array.rate_int8=2", "array.rate_int8=4" } },
		{ "configs/tpu_v5e.yaml", "configs/workloads/bert_base.yaml", { "array.dtype=fp32", "array.dtype=int8" } },
	};
	char *dir = th_tmpdir(), path[4200];
	snprintf(path, sizeof path, "%s/t.gz", dir);
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
		for (int k = 0; k < 2; k++) {
			struct sim *s = calloc(1, sizeof *s);
			struct sim_request rq = { .configs = { runs[i].config }, .nconfigs = 1, .workload = runs[i].workload,
						  .model = MODEL_CYCLE, .dataflow = -1, .trace = path,
						  .assignments = { runs[i].set[k] }, .nassignments = 1 };
			struct err e = { 0 };
			char pair[600], *json;
			ck_assert(s);
			snprintf(pair, sizeof pair, "%s x %s, %s", runs[i].config, runs[i].workload, runs[i].set[k]);
			ck_assert_msg(sim_load(s, &rq, "run", &e) == 0, "%s: %s", pair, e.msg);
			ck_assert_msg(sim_run(s, &e) == 0, "%s: %s", pair, e.msg);
			ck_assert_ptr_nonnull(json = sim_summary_json(s));
			trace_matches(pair, json, path);
			free(json);
			sim_release(s);
			free(s);
		}
	unlink(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The records of one run, as trace_read hands them over. */
struct recs {
	struct trace_rec *v;
	size_t n, cap;
};

static void keep(void *ctx, const struct trace_rec *r)
{
	struct recs *rs = ctx;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof *rs->v);
		ck_assert_ptr_nonnull(rs->v);
	}
	rs->v[rs->n] = *r;
	rs->v[rs->n].name = rs->v[rs->n].layer_name = NULL;     /* borrowed for the call only */
	rs->n++;
}

static const char gemm_10x6x5[] = "name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n";

/*
 * The 10x6 by 6x5 GEMM on lab_4x4 (ws) with ideal memory, as the vcd suite
 * works it out: B is two row blocks (K 0:4, 4:6) by two column blocks (N 0:4,
 * 4:5), A^T streams T = M = 10. Fold 0's tile shifts in over [0, 4)
 * (weight_shift), the folds stream at 4, 14, 24, 34 for 10 cycles each
 * (compute 40), the last partial sums leave R + Sc - 2 = 3 cycles after 44:
 * [44, 47) is fill_drain, 47 the end. The block C[0:10, 0:4] is done by fold
 * 1 and leaves the array at 24 + R + Sc - 2 = 24 + 4 + 4 - 2 = 30; C[0:10,
 * 4:5] by fold 3, at 47. With instant HBM every load arrives as it is issued
 * and every store is done as it is issued: block 0 stored at 30, block 1 at 47.
 */
START_TEST(small_gemm_by_hand)
{
	static const struct {
		int64_t start, end, out, k0, k, n0, n;
	} folds[] = { { 4, 14, -1, 0, 4, 0, 4 }, { 14, 24, 30, 4, 2, 0, 4 }, { 24, 34, -1, 0, 4, 4, 1 },
		      { 34, 44, 47, 4, 2, 4, 1 } };
	char *dir = th_tmpdir(), *wl = th_write(dir, "g.yaml", gemm_10x6x5), path[4200], *out, *err;
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--ideal-memory", "--trace", path, NULL };
	struct recs rs = { 0 };
	struct trace_summary ts;
	struct err e = { 0 };
	int nf = 0, ns = 0, nw = 0;
	snprintf(path, sizeof path, "%s/g.gz", dir);
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	ck_assert_msg(trace_read(path, &ts, keep, &rs, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ts.cycles, 47);
	ck_assert_int_eq(ts.cat[CAT_COMPUTE], 40);
	ck_assert_int_eq(ts.cat[CAT_WEIGHT_SHIFT], 4);
	ck_assert_int_eq(ts.cat[CAT_FILL_DRAIN], 3);
	ck_assert_int_eq(ts.passes, 1);
	ck_assert_int_eq(ts.ops, 1);
	ck_assert_int_eq(ts.folds, 4);
	ck_assert_int_eq(ts.stores, 2);
	ck_assert_int_eq(rs.v[0].kind, TR_PASS);
	ck_assert_int_eq(rs.v[rs.n - 1].kind, TR_END);
	ck_assert_int_eq(rs.v[rs.n - 1].cycle, 47);
	for (size_t i = 0; i < rs.n; i++) {
		const struct trace_rec *r = &rs.v[i];
		if (r->kind == TR_FOLD) {
			ck_assert_int_lt(nf, 4);
			ck_assert_int_eq(r->cycle, folds[nf].start);
			ck_assert_int_eq(r->end, folds[nf].end);
			ck_assert_int_eq(r->t, 10);
			ck_assert_int_eq(r->out, folds[nf].out);
			ck_assert_int_eq(r->m0, 0);
			ck_assert_int_eq(r->m, 10);
			ck_assert_int_eq(r->k0, folds[nf].k0);
			ck_assert_int_eq(r->k, folds[nf].k);
			ck_assert_int_eq(r->n0, folds[nf].n0);
			ck_assert_int_eq(r->n, folds[nf].n);
			nf++;
		} else if (r->kind == TR_STORE) {
			ck_assert_int_eq(r->cycle, ns ? 47 : 30);
			ck_assert_int_eq(r->end, r->cycle);
			ck_assert_int_eq(r->n0, ns ? 4 : 0);
			ck_assert_int_eq(r->n, ns ? 1 : 4);
			ck_assert_int_eq(r->m, 10);
			ns++;
		} else if (r->kind == TR_CHARGE) {
			ck_assert_int_eq(r->cycle, nw ? 44 : 0);
			ck_assert_int_eq(r->end, nw ? 47 : 4);
			ck_assert_int_eq(r->cat, nw ? CAT_FILL_DRAIN : CAT_WEIGHT_SHIFT);
			ck_assert_str_eq(trace_cause_names[r->cause], nw ? "drain" : "shift");
			nw++;
		} else if (r->kind == TR_LOAD) {
			ck_assert_int_eq(r->end, r->cycle);
			ck_assert(!r->onchip);
		} else if (r->kind == TR_OPEND) {
			ck_assert_int_eq(r->cycle, 47);
		}
	}
	ck_assert_int_eq(nf, 4);
	ck_assert_int_eq(ns, 2);
	ck_assert_int_eq(nw, 2);
	/* What tpusim trace prints: the same, from the file. */
	const char *targv[] = { "trace", path, NULL };
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 0);
	ck_assert_msg(strstr(out, "\n47 cycles = 4.7e-05 ms at 1 GHz; HBM bytes read "), "%s", out);
	ck_assert_msg(strstr(out, "cycles by category: compute 40 (85.1%), weights 0 (0.0%), weight_shift 4 (8.5%), inputs 0 "
			     "(0.0%), outputs 0 (0.0%), vector 0 (0.0%), fill_drain 3 (6.4%), op_fixed 0 (0.0%), exposed_comm 0 "
			     "(0.0%), bubble 0 (0.0%)\n"), "%s", out);
	ck_assert_msg(strstr(out, "format version 4\nconfig=lab_4x4 workload=g batch=1 model=cycle dataflow=ws "
			     "ideal_memory=1 rows=4 cols=4 cores=1 arrays_per_core=1 dtype=int8 clock_ghz=1 "), "%s", out);
	free(rs.v);
	trace_summary_release(&ts);
	free(out);
	free(err);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The CLI end to end: run -o and --trace, then tpusim trace; its printed totals are summary.json's. */
START_TEST(cli_trace_prints_the_report)
{
	char *dir = th_tmpdir(), path[4200], sum[4300], *out, *err;
	const char *argv[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/tpuv1_cnn0.yaml", "-o", dir,
			       "--trace", path, NULL };
	const char *targv[] = { "trace", path, NULL };
	long long cyc, rd, wr;
	struct err e = { 0 };
	struct ydoc *d;
	snprintf(path, sizeof path, "%s/cnn.gz", dir);
	snprintf(sum, sizeof sum, "%s/summary.json", dir);
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 0);
	const char *line = strstr(out, " cycles = ");
	ck_assert_ptr_nonnull(line);
	while (line > out && line[-1] != '\n')
		line--;
	ck_assert_int_eq(sscanf(line, "%lld cycles = %*s ms at %*s GHz; HBM bytes read %lld, written %lld", &cyc, &rd, &wr),
			 3);
	ck_assert_ptr_nonnull(d = ydoc_load(sum, &e));
	const struct ynode *t = ynode_get(d->root, "total"), *c = ynode_get(t, "cycles_by_category");
	ck_assert_int_eq(cyc, num(t, "cycles"));
	ck_assert_int_eq(rd, num(t, "hbm_read_bytes"));
	ck_assert_int_eq(wr, num(t, "hbm_write_bytes"));
	for (int k = 0; k < CAT_N; k++) {
		char want[100];
		snprintf(want, sizeof want, " %s %lld (", cat_names[k], (long long)num(c, cat_names[k]));
		ck_assert_msg(strstr(out, want), "no \"%s\" in %s", want, out);
	}
	ydoc_free(d);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The bursts of one request: B-aligned, lowest first, at cycle. */
struct burst {
	uint64_t addr;
	int64_t cycle;
	bool write;
};

struct requests {
	struct burst *v;
	size_t n, cap;
	int64_t burst, rd, wr, slack_rd, slack_wr;
};

static void add_bursts(void *ctx, const struct trace_rec *r)
{
	struct requests *q = ctx;
	uint64_t b = (uint64_t)q->burst;
	bool w = r->kind == TR_STORE;
	if ((r->kind != TR_LOAD && r->kind != TR_STORE) || r->onchip || r->bytes == 0)
		return;
	/* Worked out apart from the writer: the first and the last burst, and each one in between. */
	uint64_t first = r->addr - r->addr % b, last = r->addr + (uint64_t)r->bytes - 1;
	last -= last % b;
	*(w ? &q->wr : &q->rd) += r->bytes;
	*(w ? &q->slack_wr : &q->slack_rd) += (int64_t)(r->addr - first) + (int64_t)(last + b - (r->addr + (uint64_t)r->bytes));
	for (uint64_t a = first; a <= last; a += b) {
		if (q->n == q->cap) {
			q->cap = q->cap ? 2 * q->cap : 4096;
			q->v = realloc(q->v, q->cap * sizeof *q->v);
			ck_assert_ptr_nonnull(q->v);
		}
		q->v[q->n++] = (struct burst){ a, r->cycle, w };
	}
}

/* The DRAM trace at path, inflated by gzip(1): its lines, parsed as format says, each one checked. */
static void read_dram(const char *path, int format, struct burst **v, size_t *n)
{
	char cmd[4300], line[200];
	size_t cap = 4096;
	FILE *f;
	snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	*v = malloc(cap * sizeof **v);
	*n = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a;
		long long c = 0;
		char op[8], end;
		int got;
		if (*n == cap) {
			cap *= 2;
			*v = realloc(*v, cap * sizeof **v);
		}
		ck_assert_ptr_nonnull(*v);
		if (format == TRACE_DRAMSIM3) {
			/* "0x<hex> READ|WRITE <cycle>": DRAMsim3 reads address, type and cycle, in that order. */
			got = sscanf(line, "0x%llx %5s %lld%c", &a, op, &c, &end);
			ck_assert_msg(got == 4 && end == '\n' && (!strcmp(op, "READ") || !strcmp(op, "WRITE")), "line %zu: %s",
				      *n + 1, line);
		} else {
			/* "LD|ST 0x<hex>": Ramulator 2.0's LoadStoreTrace, two words a line. */
			got = sscanf(line, "%2s 0x%llx%c", op, &a, &end);
			ck_assert_msg(got == 3 && end == '\n' && (!strcmp(op, "LD") || !strcmp(op, "ST")), "line %zu: %s",
				      *n + 1, line);
		}
		(*v)[(*n)++] = (struct burst){ a, c, op[0] == 'W' || op[0] == 'S' };
	}
	ck_assert_int_eq(pclose(f), 0);
}

/*
 * The DRAM trace holds, in order, the bursts of every off-chip request of
 * the event trace of the same run, at the cycles they were issued (never
 * decreasing); the requests' bytes are the report's HBM bytes, and the
 * trace's lines x burst_bytes are those plus the unused ends of the end
 * bursts (the rule in trace.h). alexnet's convolutions have requests that
 * start and end mid-burst, and so do the MLP's parts on tpu_v4's four arrays;
 * on one array its tiles fit whole bursts. At most 150,000 bursts each.
 */
static const struct {
	const char *config, *workload;
	bool unaligned;         /* some request starts or ends mid-burst */
} dram_pairs[] = {
	{ "configs/lab_4x4.yaml", "configs/workloads/mlp.yaml", false },
	{ "configs/tpu_v1.yaml", "traces/alexnet.csv", true },
	{ "configs/edge_32x32.yaml", "traces/alexnet.csv", true },
	{ "configs/tpu_v4.yaml", "configs/workloads/mlp.yaml", true },
	{ "configs/gemmini.yaml", "configs/workloads/mlp.yaml", false },
};

START_TEST(dram_trace_bytes_are_the_reports)
{
	char *dir = th_tmpdir(), ev[4200], dr[4200], rm[4200];
	struct sim *s = calloc(1, sizeof *s);
	struct err e = { 0 };
	struct requests q = { 0 };
	struct trace_summary ts;
	struct burst *got, *rgot;
	size_t n, rn;
	char *json;
	struct ydoc *d;
	snprintf(ev, sizeof ev, "%s/e.gz", dir);
	snprintf(dr, sizeof dr, "%s/d.gz", dir);
	snprintf(rm, sizeof rm, "%s/r.gz", dir);
	ck_assert_ptr_nonnull(s);
	load(s, dram_pairs[_i].config, dram_pairs[_i].workload, ev, dr);
	q.burst = s->cfg.arch.hbm.burst_bytes;
	ck_assert_msg(sim_run(s, &e) == 0, "%s", e.msg);
	ck_assert_ptr_nonnull(json = sim_summary_json(s));
	ck_assert_ptr_nonnull(d = ydoc_parse_json("summary.json", json, &e));
	ck_assert_msg(trace_read(ev, &ts, add_bursts, &q, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(q.rd, num(ynode_get(d->root, "total"), "hbm_read_bytes"));
	ck_assert_int_eq(q.wr, num(ynode_get(d->root, "total"), "hbm_write_bytes"));
	ck_assert(q.rd > 0 && q.wr > 0);
	read_dram(dr, TRACE_DRAMSIM3, &got, &n);
	ck_assert_uint_eq(n, q.n);
	int64_t lines_rd = 0, lines_wr = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(got[i].addr == q.v[i].addr && got[i].write == q.v[i].write && got[i].cycle == q.v[i].cycle,
			      "line %zu: 0x%" PRIx64 " %s %" PRId64 ", expected 0x%" PRIx64 " %s %" PRId64, i + 1, got[i].addr,
			      got[i].write ? "WRITE" : "READ", got[i].cycle, q.v[i].addr, q.v[i].write ? "WRITE" : "READ",
			      q.v[i].cycle);
		ck_assert_uint_eq(got[i].addr % (uint64_t)q.burst, 0);
		ck_assert(i == 0 || got[i].cycle >= got[i - 1].cycle);
		*(got[i].write ? &lines_wr : &lines_rd) += 1;
	}
	ck_assert_int_eq(lines_rd * q.burst, q.rd + q.slack_rd);
	ck_assert_int_eq(lines_wr * q.burst, q.wr + q.slack_wr);
	ck_assert(dram_pairs[_i].unaligned == (q.slack_rd + q.slack_wr > 0));
	/* Ramulator 2.0's format: the same requests in the same order, without cycles. */
	sim_release(s);
	struct sim_request rq = { .configs = { dram_pairs[_i].config }, .nconfigs = 1, .workload = dram_pairs[_i].workload,
				  .model = MODEL_CYCLE, .dataflow = -1, .dram_trace = rm, .dram_format = TRACE_RAMULATOR2 };
	ck_assert_msg(sim_load(s, &rq, "run", &e) == 0 && sim_run(s, &e) == 0, "%s", e.msg);
	read_dram(rm, TRACE_RAMULATOR2, &rgot, &rn);
	ck_assert_uint_eq(rn, n);
	for (size_t i = 0; i < n; i++)
		ck_assert(rgot[i].addr == got[i].addr && rgot[i].write == got[i].write);
	free(rgot);
	free(got);
	free(q.v);
	free(json);
	ydoc_free(d);
	trace_summary_release(&ts);
	sim_release(s);
	free(s);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Options that cannot work are refused before the run starts (exit status 2), and leave no file. */
START_TEST(bad_options_leave_no_file)
{
	char *dir = th_tmpdir(), path[4200], sub[4200], *out, *err;
	struct stat st;
	snprintf(path, sizeof path, "%s/t.gz", dir);
	char summary[4300];
	snprintf(summary, sizeof summary, "%s/summary.json", dir);
	/* Under a plain file: no directory can be made there (missing parents are made). */
	free(th_write(dir, "plain", ""));
	snprintf(sub, sizeof sub, "%s/plain/t.gz", dir);
	static const char *const wl = "configs/workloads/mlp.yaml", *const cfg = "configs/lab_4x4.yaml";
	const struct {
		const char *argv[14];
		const char *msg;
	} cases[] = {
		{ { "run", "-c", cfg, "-w", wl, "--trace", path, "--model", "analytic", NULL },
		  "--trace: expected --model cycle (only the cycle engine has events to trace), found --model analytic\n" },
		{ { "run", "-c", cfg, "-w", wl, "--dram-trace", path, "--model", "functional", NULL },
		  "--dram-trace: expected --model cycle (only the cycle engine has events to trace), found --model functional\n" },
		{ { "run", "-c", cfg, "-w", wl, "--trace", sub, NULL }, "--trace: expected a writable path, found \"" },
		{ { "run", "-c", cfg, "-w", wl, "--dram-trace", sub, NULL }, "--dram-trace: expected a writable path, found \"" },
		{ { "run", "-c", cfg, "-w", wl, "--dram-trace", path, "--dram-trace-format", "ramulator", NULL },
		  "--dram-trace-format: expected dramsim3 or ramulator2, found \"ramulator\" (did you mean ramulator2?)\n" },
		{ { "run", "-c", cfg, "-w", wl, "--dram-trace-format", "dramsim3", NULL },
		  "--dram-trace-format: expected with --dram-trace FILE, found it alone\n" },
		{ { "compare", "-c", cfg, "-w", wl, "--trace", path, NULL },
		  "--trace: expected an option of tpusim compare (see tpusim --help), found an option of tpusim run\n" },
		{ { "run", "-c", cfg, "-w", wl, "--trace", path, "--set", "sim.max_folds=1", NULL }, "expected at most 1 folds" },
		{ { "run", "-c", cfg, "-w", wl, "--trace", path, "--dram-trace", path, NULL },
		  "--dram-trace: expected a path of its own, found \"" },
		{ { "run", "-c", cfg, "-w", wl, "-o", dir, "--trace", summary, NULL },
		  "--trace: expected a path of its own, found \"" },
		{ { "trace", NULL }, "trace: expected a file, tpusim trace FILE.gz [--records], found none\n" },
		{ { "trace", path, "--all", NULL }, "--all: expected an option of tpusim trace (see tpusim --help), found an "
		  "unknown option\n" },
		{ { "trace", path, path, NULL }, "trace: expected one FILE.gz, found another, \"" },
		{ { "trace", sub, NULL }, "trace: expected a readable file, found \"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ck_assert_msg(th_cli(".", cases[i].argv, &out, &err) == 2, "case %zu: %s", i, err);
		ck_assert_msg(strstr(err, cases[i].msg), "case %zu: %s", i, err);
		ck_assert_msg(stat(path, &st) != 0 && errno == ENOENT, "case %zu left %s", i, path);
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A run that fails inside the kernel leaves no trace: the vcd suite's
 * memory so slow that an add's transfers take time past int64 fails the
 * vector unit's wait, after the engine has begun both files.
 */
START_TEST(failed_run_leaves_no_trace)
{
	char *dir = th_tmpdir(), tr[4200], dr[4200];
	struct stat st;
	snprintf(tr, sizeof tr, "%s/t.gz", dir);
	snprintf(dr, sizeof dr, "%s/d.gz", dir);
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .trace = tr, .dram_trace = dr };
	struct err e = { 0 };
	th_run_past_int64(&o, &e);
	ck_assert_int_ne(stat(tr, &st), 0);
	ck_assert_int_ne(stat(dr, &st), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * What a failed run removes is only a plain file of its own: a trace path
 * that is a symbolic link (as /dev/null or a device would be, other than a
 * file) stays, link and target, whichever writer fails.
 */
START_TEST(failed_run_keeps_what_is_not_its_own)
{
	char *dir = th_tmpdir(), target[4200], link1[4200], link2[4200];
	struct stat st;
	free(th_write(dir, "target.txt", "mine\n"));
	snprintf(target, sizeof target, "%s/target.txt", dir);
	snprintf(link1, sizeof link1, "%s/t.gz", dir);
	snprintf(link2, sizeof link2, "%s/d.gz", dir);
	ck_assert_int_eq(symlink(target, link1), 0);
	ck_assert_int_eq(symlink(target, link2), 0);
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .trace = link1, .dram_trace = link2 };
	struct err e = { 0 };
	th_run_past_int64(&o, &e);
	ck_assert_int_eq(lstat(link1, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(lstat(link2, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(stat(target, &st), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A run that fails after simulating, at its reports (-o DIR whose .tpusim is
 * a plain file), leaves no trace either, nor the directories made for them.
 */
START_TEST(failed_reports_leave_no_trace)
{
	char *dir = th_tmpdir(), o[4200], q[4200], t[4300], d[4300], *out, *err;
	struct stat st;
	snprintf(o, sizeof o, "%s/o", dir);
	snprintf(q, sizeof q, "%s/q", dir);
	snprintf(t, sizeof t, "%s/t.gz", q);
	snprintf(d, sizeof d, "%s/d.gz", q);
	ck_assert_int_eq(mkdir(o, 0755), 0);
	free(th_write(o, ".tpusim", ""));
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "-o", o, "--trace", t,
			       "--dram-trace", d, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	ck_assert_msg(strstr(err, ".tpusim: expected a directory"), "%s", err);
	ck_assert_int_ne(stat(t, &st), 0);
	ck_assert_int_ne(stat(d, &st), 0);
	ck_assert_int_ne(stat(q, &st), 0);
	free(out), free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A VCD, an event trace and a DRAM trace at once: the VCD is the one written alone, and the trace adds up. */
START_TEST(all_three_sinks_at_once)
{
	char *dir = th_tmpdir(), base1[4200], base2[4200], tr[4200], dr[4200], v1[4300], v2[4300], cmd[9000], *out,
	     *err;
	snprintf(base1, sizeof base1, "%s/alone", dir);
	snprintf(base2, sizeof base2, "%s/with", dir);
	snprintf(tr, sizeof tr, "%s/t.gz", dir);
	snprintf(dr, sizeof dr, "%s/d.txt", dir);
	const char *a1[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/mlp.yaml", "--vcd", base1, NULL };
	const char *a2[] = { "run", "-c", "configs/tpu_v4.yaml", "-w", "configs/workloads/mlp.yaml", "--vcd", base2, "--trace",
			     tr, "--dram-trace", dr, "--dram-trace-format", "ramulator2", "-o", dir, NULL };
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 0);
	free(out);
	free(err);
	ck_assert_msg(th_cli(".", a2, &out, &err) == 0, "%s", err);
	snprintf(v1, sizeof v1, "%s.vcd", base1);
	snprintf(v2, sizeof v2, "%s.vcd", base2);
	snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s' && grep -q '^LD 0x' '%s' && grep -q '^ST 0x' '%s'", v1, v2, dr, dr);
	ck_assert_int_eq(system(cmd), 0);
	char sum[4300], *json;
	snprintf(sum, sizeof sum, "%s/summary.json", dir);
	json = th_slurp(sum);
	trace_matches("tpu_v4 x mlp", json, tr);
	free(json);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *t = tcase_create("roundtrip");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, every_preset_and_workload_adds_up);
	tcase_add_test(t, rates_add_up);
	tcase_add_test(t, small_gemm_by_hand);
	tcase_add_test(t, cli_trace_prints_the_report);
	tcase_add_test(t, all_three_sinks_at_once);
	suite_add_tcase(s, t);
	t = tcase_create("dram");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, dram_trace_bytes_are_the_reports, 0, (int)(sizeof dram_pairs / sizeof *dram_pairs));
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, bad_options_leave_no_file);
	tcase_add_test(t, failed_run_leaves_no_trace);
	tcase_add_test(t, failed_run_keeps_what_is_not_its_own);
	tcase_add_test(t, failed_reports_leave_no_trace);
	suite_add_tcase(s, t);
	return s;
}
