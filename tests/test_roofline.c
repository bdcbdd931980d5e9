/*
 * test_roofline.c - no layer above its roof (the bus bytes of sim/exec/engine.c,
 * struct bus).
 *
 * Every preset in configs/ with every workload in configs/workloads/ that the
 * cycle model runs in well under a second: each layer's bus bytes are at most
 * the bandwidth times its time, its achieved ops/s at most its attainable
 * ops/s; the layers' bus bytes add up to the run's HBM bytes, and where loads
 * run ahead across ops (chip.prefetch_across_ops) also to the bytes of the
 * event trace's loads and stores as trace_read adds them up, a count kept
 * apart from the results. Layer by layer, and in the analytic model, a
 * layer's bus bytes are its own HBM bytes. Two small layers on lab_4x4, the
 * second's weights fetched during the first, have their bus bytes worked out
 * by hand, with a request that straddles the two.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "report.h"
#include "run.h"
#include "stats.h"
#include "tests.h"
#include "trace.h"

/*
 * The pairs that run here: an estimated at most this many fold instructions
 * and vector chunks (run_estimate). 98 of the 112 pairs are below it, and
 * all take about 10 s on the build machine, the chip presets' traced twice.
 */
#define ROOF_MAX_FOLDS 1000000

/*
 * ach <= att x (1 + ROOF_ULPS): the doubles' rounding (clock, bandwidth and
 * ops/s are each a few roundings from the counts). The bytes themselves are
 * whole and capped at floor(bandwidth x cycles), so no byte of slack.
 */
#define ROOF_ULPS 1e-12

static int64_t own_bytes(const struct result *r)
{
	return r->hbm_read_bytes + r->hbm_write_bytes;
}

/* Loads config and workload for model, tracing the cycle model to trace (NULL: none). */
static void load(struct sim *s, const char *config, const char *workload, int model, const char *trace)
{
	struct sim_request rq = { .configs = { config }, .nconfigs = 1, .workload = workload, .model = model,
				  .dataflow = -1, .trace = trace };
	struct err e = { 0 };
	ck_assert_msg(sim_load(s, &rq, "run", &e) == 0, "%s x %s: %s", config, workload, e.msg);
}

/*
 * Every layer of run r of pair under its roof, by bytes and by ops/s;
 * returns the sum of the layers' bus bytes, which must be the total's.
 */
static int64_t under_roofs(const char *pair, const struct config *c, const struct run *r)
{
	const struct arch *a = &c->arch;
	double hz = a->clock_ghz * 1e9, per_cycle = arch_hbm_bytes_per_s(a) / hz;
	int64_t sum = 0;
	struct metrics m;
	for (size_t i = 0; i < r->n; i++) {
		const struct result *l = &r->layers[i];
		report_metrics(a, l, false, &m);
		ck_assert_msg(m.bus_bytes == (double)(own_bytes(l) + l->bus_shift_bytes), "%s: layer %zu", pair, i);
		ck_assert_msg(m.bus_bytes >= 0 && m.bus_bytes <= per_cycle * (double)l->cycles * (1 + ROOF_ULPS),
			      "%s: layer %zu: %.0f bytes on the bus in %lld cycles, more than %.17g a cycle", pair, i,
			      m.bus_bytes, (long long)l->cycles, per_cycle);
		ck_assert_msg(m.achieved_ops_per_s <= m.attainable_ops_per_s * (1 + ROOF_ULPS),
			      "%s: layer %zu: %.17g ops/s above its roof %.17g", pair, i, m.achieved_ops_per_s,
			      m.attainable_ops_per_s);
		sum += own_bytes(l) + l->bus_shift_bytes;
	}
	report_metrics(a, &r->total, false, &m);
	ck_assert_msg(r->total.bus_shift_bytes == 0 && m.bus_bytes == (double)own_bytes(&r->total),
		      "%s: the run's bus bytes %.0f, its HBM bytes %lld", pair, m.bus_bytes, (long long)own_bytes(&r->total));
	ck_assert_msg(sum == own_bytes(&r->total), "%s: the layers' bus bytes sum to %lld, the run moved %lld", pair,
		      (long long)sum, (long long)own_bytes(&r->total));
	return sum;
}

/* Where ops do not overlap, a layer's window holds its own bytes and no other's. */
static void own_windows(const char *pair, const char *model, const struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		ck_assert_msg(r->layers[i].bus_shift_bytes == 0, "%s (%s): layer %zu: %lld bytes shifted", pair, model, i,
			      (long long)r->layers[i].bus_shift_bytes);
}

START_TEST(every_layer_under_its_roof)
{
	glob_t cg, wg;
	char *dir = th_tmpdir(), path[4200];
	int ran = 0, skipped = 0, chips = 0, shifted = 0;
	snprintf(path, sizeof path, "%s/t.gz", dir);
	ck_assert_int_eq(glob("configs/*.yaml", 0, NULL, &cg), 0);
	ck_assert_int_eq(glob("configs/workloads/*.yaml", 0, NULL, &wg), 0);
	for (size_t i = 0; i < cg.gl_pathc; i++) {
		for (size_t j = 0; j < wg.gl_pathc; j++) {
			struct sim *s = calloc(1, sizeof *s);
			struct err e = { 0 };
			char pair[1000];
			ck_assert(s);
			snprintf(pair, sizeof pair, "%s x %s", cg.gl_pathv[i], wg.gl_pathv[j]);
			if (th_pod_only(wg.gl_pathv[j])) {
				skipped++;
				free(s);
				continue;
			}
			load(s, cg.gl_pathv[i], wg.gl_pathv[j], MODEL_ANALYTIC, NULL);
			ck_assert_msg(sim_run(s, &e) == 0, "%s: %s", pair, e.msg);
			under_roofs(pair, &s->cfg, &s->run);
			own_windows(pair, "analytic", &s->run);
			sim_release(s);

			load(s, cg.gl_pathv[i], wg.gl_pathv[j], MODEL_CYCLE, NULL);
			if (th_sim_folds(s, pair) > ROOF_MAX_FOLDS) {
				skipped++;
				sim_release(s);
				free(s);
				continue;
			}
			bool chip = s->cfg.arch.chip.prefetch_across_ops;
			if (chip) {
				/* Again, traced: the trace's loads and stores are the independent count. */
				sim_release(s);
				load(s, cg.gl_pathv[i], wg.gl_pathv[j], MODEL_CYCLE, path);
			}
			ck_assert_msg(sim_run(s, &e) == 0, "%s: %s", pair, e.msg);
			int64_t sum = under_roofs(pair, &s->cfg, &s->run);
			if (!chip) {
				own_windows(pair, "cycle", &s->run);
			} else {
				struct trace_summary ts;
				ck_assert_msg(trace_read(path, &ts, NULL, NULL, &e) == 0, "%s: %s", pair, e.msg);
				ck_assert_msg(sum == ts.hbm_read_bytes + ts.hbm_write_bytes,
					      "%s: the layers' bus bytes sum to %lld, the trace's transfers to %lld", pair,
					      (long long)sum, (long long)(ts.hbm_read_bytes + ts.hbm_write_bytes));
				trace_summary_release(&ts);
				for (size_t l = 0; l < s->run.n; l++)
					shifted += s->run.layers[l].bus_shift_bytes != 0;
				chips++;
			}
			sim_release(s);
			free(s);
			ran++;
		}
	}
	/*
	 * 11 presets x 16 workloads: all but lab_4x4's big ones, the LLM prefill
	 * on the small arrays, and the pod's (GPT-3 at its global batch, past one
	 * chip's work); every other pair of the 7 whole-chip TPU presets (v1, v4,
	 * v4i, v5e, v5p, v6e, v7: chip.prefetch_across_ops).
	 */
	int pods = 0;
	for (size_t j = 0; j < wg.gl_pathc; j++)
		pods += th_pod_only(wg.gl_pathv[j]);
	ck_assert_msg(ran >= 140, "only %d pairs ran (%d skipped)", ran, skipped);
	ck_assert_int_eq(pods, 1);
	ck_assert_int_eq(chips, 7 * ((int)wg.gl_pathc - pods));
	/* The case this is about: with loads running ahead, layers' windows do hold others' bytes. */
	ck_assert_int_gt(shifted, 100);
	globfree(&cg);
	globfree(&wg);
	unlink(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Two layers on lab_4x4 (4 x 4 int8 PEs at 1 GHz) with loads running ahead,
 * activations kept on chip, and a bus of 1 B a cycle (hbm.gbps 1, no latency,
 * 1-byte bursts), batch 4:
 *   fc1 8 -> 4: A 4 x 8 = 32 B (the network's input, in HBM), B 8 x 4 = 32 B
 *               as two 4 x 4 tiles of 16 B, C on chip: 64 B of its own,
 *               256 ops;
 *   fc2 4 -> 8: A on chip, B 4 x 8 = 32 B as two tiles, C 4 x 8 = 32 B to HBM
 *               (the network's output) as two blocks: 64 B of its own,
 *               256 ops.
 * The load queue takes fc1's tiles B0 A0 B0' A0' and fc2's B1 B1' at cycle 0
 * (16 loads may wait, the buffers hold them all): they cross in [0, 16),
 * [16, 32), [32, 48), [48, 64), [64, 80), [80, 96). fc1: B0 is in at 16 and
 * shifts in 4 cycles (16-20), streams its 4 rows once A0 is in (32-36); B0'
 * is in at 48, shifts (48-52), streams once A0' is in (64-68), and the array
 * drains in R + C - 2 = 6: fc1 ends at 74. Its window [0, 74) holds 74
 * bytes: its own 64 and 10 of B1, which straddles (10 of its 16 cycles
 * before 74). fc2's blocks are ready at 94 and 110 (B1 in at 80, shift,
 * stream, drain; B1' in at 96, the same), each while the bus is still busy,
 * so the bus never rests: its 128 bytes end at 128, and so does fc2. Its
 * window [74, 128) holds the other 54 bytes: 6 of B1, B1', and its stores.
 * Both layers are on their roofs (as many bytes as cycles). Drawn by its own
 * 64 bytes, fc2 was above its roof: 256 ops in 54 ns = 4.74 GOPS against
 * 1 GB/s x 256 / 64 = 4 GOPS.
 */
START_TEST(prefetched_weights_by_hand)
{
	char *dir = th_tmpdir();
	char *wl = th_write(dir, "two.yaml",
			    "name: two\nbatch: 4\nlayers:\n"
			    "  - {name: fc1, type: fc, in_features: 8, out_features: 4}\n"
			    "  - {name: fc2, type: fc, in_features: 4, out_features: 8}\n");
	static const struct {
		int model;
		int64_t cycles[2], own[2], bus[2];
	} want[] = {
		{ MODEL_CYCLE, { 74, 54 }, { 64, 64 }, { 74, 54 } },
		/* The analytic model overlaps no ops: each layer's window holds its own bytes. */
		{ MODEL_ANALYTIC, { -1, -1 }, { 64, 64 }, { 64, 64 } },
	};
	for (size_t t = 0; t < sizeof want / sizeof *want; t++) {
		struct sim s = { 0 };
		struct err e = { 0 };
		struct metrics m;
		struct sim_request rq = { .configs = { "configs/lab_4x4.yaml" }, .nconfigs = 1, .workload = wl,
					  .model = want[t].model, .dataflow = -1,
					  .assignments = { "chip.prefetch_across_ops=true", "chip.keep_activations=true",
							   "hbm.gbps=1", "hbm.latency_ns=0", "hbm.burst_bytes=1" },
					  .nassignments = 5 };
		ck_assert_msg(sim_load(&s, &rq, "run", &e) == 0, "%s", e.msg);
		ck_assert_msg(sim_run(&s, &e) == 0, "%s", e.msg);
		ck_assert_uint_eq(s.run.n, 2);
		for (int l = 0; l < 2; l++) {
			const struct result *r = &s.run.layers[l];
			report_metrics(&s.cfg.arch, r, false, &m);
			if (want[t].cycles[l] >= 0)
				ck_assert_int_eq(r->cycles, want[t].cycles[l]);
			ck_assert_int_eq(own_bytes(r), want[t].own[l]);
			ck_assert(m.bus_bytes == (double)want[t].bus[l]);
			ck_assert_double_eq_tol(m.intensity, 2.0 * (double)r->macs / (double)want[t].bus[l], 1e-12);
			ck_assert(m.achieved_ops_per_s <= m.attainable_ops_per_s * (1 + ROOF_ULPS));
		}
		if (want[t].model == MODEL_CYCLE) {
			/* fc2: 256 ops / 54 B x 1 GB/s = 4.74 GOPS, as achieved in 54 ns: on the roof. */
			report_metrics(&s.cfg.arch, &s.run.layers[1], false, &m);
			ck_assert_double_eq_tol(m.attainable_ops_per_s, 256.0 / 54 * 1e9, 1e-3);
			ck_assert_double_eq_tol(m.achieved_ops_per_s, 256.0 / 54e-9, 1e-3);
			ck_assert(m.achieved_ops_per_s > 256.0 / 64 * 1e9 * 1.18);
		}
		ck_assert_int_eq(own_bytes(&s.run.total), 128);
		ck_assert_int_eq(s.run.total.bus_shift_bytes, 0);
		sim_release(&s);
	}
	unlink(wl);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *roofline_suite(void)
{
	Suite *s = suite_create("roofline");
	TCase *t = tcase_create("roofline");
	tcase_set_timeout(t, 240);
	tcase_add_test(t, prefetched_weights_by_hand);
	tcase_add_test(t, every_layer_under_its_roof);
	suite_add_tcase(s, t);
	return s;
}
