/*
 * test_ici.c - a pod's links (models/ici.h): collectives worked by hand on
 * rings and lines (bandwidth-bound and latency-bound, one axis and two),
 * the ring steps the engine runs against the closed form, the JAX scaling
 * book's measured all-gather on a v5e {X: 8, Y: 4} slice, overlap and
 * contention in the engine, and the refusals.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "ici.h"
#include "options.h"
#include "plan.h"
#include "train.h"
#include "tests.h"

/* A pod of one axis x of n chips, wrapped or not, links of gbps one way, hops of hop_ns. */
static struct ici_params line(int64_t n, bool wrap, double gbps, double hop_ns)
{
	struct ici_params p = { .dim = { n, 1, 1 }, .wrap = { wrap ? WRAP_TRUE : WRAP_FALSE, WRAP_FALSE, WRAP_FALSE },
				.wrap_step = 1, .link_gbps = gbps, .hop_ns = hop_ns, .slices = 1, .dcn_gbps = 1,
				.dcn_us = 1 };
	return p;
}

/* The group of the whole axes in the set. */
static struct ici_group whole(const struct ici_params *p, unsigned axes)
{
	struct ici_group g;
	ici_group_of(p, axes, &g);
	return g;
}

static double cost(const struct ici_params *p, int coll, double bytes, unsigned axes)
{
	struct ici_cost c;
	struct ici_group g = whole(p, axes);
	ici_cost(p, coll, bytes, &g, &c);
	return c.seconds;
}

#define X (1u << ICI_X)
#define Y (1u << ICI_Y)

/*
 * One ring of 4 at 50 GB/s a link each way, no latency: an all-gather of
 * V = 4 MB sends V (N-1)/N = 3 MB, half each way over the two links: 3e6 /
 * 1e11 = 30 us; a reduce-scatter the same; an all-reduce twice, 60 us; an
 * all-to-all moves each chunk of V/16 its distance, N^2/8 = 2 chunks a link
 * direction: V/8 / 5e10 = 10 us, a quarter of V / (2 W) = 40 us. Without
 * the wraparound the end link carries N - 1 = 3 shards of V/4: 60 us, twice;
 * the line's all-to-all, floor(N/2) ceil(N/2) = 4 chunks, 20 us.
 */
START_TEST(one_axis_by_hand)
{
	struct ici_params ring = line(4, true, 50, 0), ln = line(4, false, 50, 0);
	double v = 4e6;
	ck_assert_double_eq_tol(cost(&ring, COLL_ALL_GATHER, v, X), 30e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ring, COLL_REDUCE_SCATTER, v, X), 30e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ring, COLL_ALL_REDUCE, v, X), 60e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ring, COLL_ALL_TO_ALL, v, X), 10e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ln, COLL_ALL_GATHER, v, X), 60e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ln, COLL_ALL_REDUCE, v, X), 120e-6, 1e-12);
	ck_assert_double_eq_tol(cost(&ln, COLL_ALL_TO_ALL, v, X), 20e-6, 1e-12);
	/* A send: its bytes over one link. */
	ck_assert_double_eq_tol(cost(&ring, COLL_SEND_RECV, v, X), 80e-6, 1e-12);
	/* An odd ring of 5: 2 steps of a shard V/5 each way, 2 V/5 / W = 32 us. */
	struct ici_params five = line(5, true, 50, 0);
	ck_assert_double_eq_tol(cost(&five, COLL_ALL_GATHER, v, X), 32e-6, 1e-12);
	/* An axis of one chip, or no axis of the pod named, moves nothing. */
	ck_assert_double_eq(cost(&ring, COLL_ALL_GATHER, v, Y), 0);
}
END_TEST

/*
 * A small message is latency-bound: 64 bytes on a ring of 8 with 1 us hops
 * takes floor(8/2) = 4 hops, about 4 us; on a line, 7 hops, 7 us; an
 * all-reduce twice the hops.
 */
START_TEST(latency_bound)
{
	struct ici_params ring = line(8, true, 45, 1000), ln = line(8, false, 45, 1000);
	struct ici_cost c;
	struct ici_group gr = whole(&ring, X), gl = whole(&ln, X);
	ici_cost(&ring, COLL_ALL_GATHER, 64, &gr, &c);
	ck_assert_int_eq(c.hops, 4);
	ck_assert_double_eq_tol(c.seconds, 4e-6, 0.01e-6);
	ici_cost(&ln, COLL_ALL_GATHER, 64, &gl, &c);
	ck_assert_int_eq(c.hops, 7);
	ck_assert_double_eq_tol(c.seconds, 7e-6, 0.01e-6);
	ici_cost(&ring, COLL_ALL_REDUCE, 64, &gr, &c);
	ck_assert_int_eq(c.hops, 8);
}
END_TEST

/*
 * Two wrapped axes of 4 (x, y), 50 GB/s, no latency: the array is cut in
 * two, one half gathered x then y, the other y then x. Each axis's links
 * carry, a direction, 1.5 shards of V/32 (the first axis) and 1.5 of 4 V/32
 * (the second): 7.5 V/32; T = 7.5 V / 32 / W. An axis of 16 alone would
 * carry 7.5 shards of V/16, twice that: two axes are about twice the
 * bandwidth, as the scaling book gives.
 */
START_TEST(two_axes_by_hand)
{
	struct ici_params p = line(4, true, 50, 0), one = line(16, true, 50, 0);
	p.dim[1] = 4;
	p.wrap[1] = WRAP_TRUE;
	double v = 32e6;
	ck_assert_double_eq_tol(cost(&p, COLL_ALL_GATHER, v, X | Y), 7.5 * v / 32 / 50e9, 1e-12);
	ck_assert_double_eq_tol(cost(&one, COLL_ALL_GATHER, v, X), 7.5 * v / 16 / 50e9, 1e-12);
	/* All-to-all over both: one axis after the other, each over a chip's V/16 among 4: 2 chunks of V/64. */
	ck_assert_double_eq_tol(cost(&p, COLL_ALL_TO_ALL, v, X | Y), 2 * (2 * v / 64 / 50e9), 1e-12);
	struct ici_group g = whole(&p, X | Y);
	ck_assert_int_eq(ici_group_chips(&g), 16);
	/*
	 * A part of an axis (sharding cuts one among mesh axes) is a line: 8 of a
	 * wrapped 16 gathers as the line of 8 does, 7 shards of V/8 a direction.
	 */
	struct ici_params sixteen = line(16, true, 50, 0);
	struct ici_group part = whole(&sixteen, X);
	struct ici_cost c;
	part.n[ICI_X] = 8;
	ici_cost(&sixteen, COLL_ALL_GATHER, v, &part, &c);
	ck_assert_double_eq_tol(c.seconds, 7 * v / 8 / 50e9, 1e-12);
	ck_assert(!ici_group_wraps(&sixteen, &part, ICI_X));
	char name[80];
	ck_assert_str_eq(ici_group_name(&sixteen, &part, name, sizeof name), "x(8 of 16)");
}
END_TEST

/*
 * The steps the engine runs, walked alone over fresh links (ici_send), take
 * the closed form's time on one axis: every collective, rings and lines,
 * even and odd, with latency.
 */
START_TEST(steps_agree_with_closed_form)
{
	const double ghz = 1.0;
	for (int64_t n = 2; n <= 9; n++)
		for (int wrap = 0; wrap < 2; wrap++)
			for (int coll = 0; coll < COLL_N; coll++) {
				struct ici_params p = line(n, wrap, 40, 700);
				struct ici_chain ch[ICI_NAXES];
				ici *links = ici_new(&p, ghz);
				ck_assert_ptr_nonnull(links);
				struct ici_group grp = whole(&p, X);
				int nc = ici_chains(&p, coll, 3e6, &grp, ch);
				ck_assert_int_eq(nc, 1);
				int64_t t = 0;
				for (int g = 0; g < ch[0].nstages; g++)
					for (int64_t i = 0; i < ch[0].st[g].steps; i++) {
						const struct ici_stage *st = &ch[0].st[g];
						int64_t done = t;
						for (int d = 0; d < 2; d++)
							if (st->bytes[d] > 0) {
								int64_t at = ici_send(links, ICI_X, d, st->bytes[d] / (double)st->steps, t);
								done = at > done ? at : done;
							}
						t = done;
					}
				double want = cost(&p, coll, 3e6, X) * ghz * 1e9;
				/* Each step's arrival is rounded up to a whole cycle. */
				ck_assert_msg(t >= want - 1e-6 && t <= want + 20, "n %lld wrap %d %s: steps %lld, closed form %.1f",
					      (long long)n, wrap, coll_names[coll], (long long)t, want);
				ici_free(links);
			}
}
END_TEST

/* A run of the workload text on the slice config with sets; its total cycles and the config's clock. */
static void run_on(const char *config, const char *yaml, int model, const char *const *sets, struct result *total,
		   double *ghz, struct result *rows, size_t nrows)
{
	struct sim s;
	struct sim_request rq;
	struct err e = { 0 };
	char *dir = th_tmpdir(), *file = th_write(dir, "w.yaml", yaml);
	run_options_default(&rq);
	rq.configs[rq.nconfigs++] = config;
	rq.workload = file;
	rq.model = model;
	for (; sets && *sets; sets++)
		rq.assignments[rq.nassignments++] = *sets;
	ck_assert_msg(sim_load(&s, &rq, "run", &e) == 0 && sim_run(&s, &e) == 0, "%s", e.msg);
	*total = s.run.total;
	*ghz = s.cfg.arch.clock_ghz;
	for (size_t i = 0; i < nrows && i < s.run.n; i++)
		rows[i] = s.run.layers[i];
	ck_assert_int_eq(th_cat_sum(&s.run.total), s.run.total.cycles);
	sim_release(&s);
	th_rmdir(dir);
	free(file);
	free(dir);
}

static const char *const gather_yaml = "layers:\n  - name: g\n    type: all_gather\n    shape: [2048, 8192]\n"
				       "    dtype: bf16\n    axes: [y]\n";

/*
 * J. Austin et al., "How to Scale Your Model" (2025), part 3, pop quiz 2: a
 * v5e {X: 8, Y: 4} slice (no wraparound under 16), an all-gather over Y of
 * bf16[2048, 8192] (V = 33.55 MB, 8.39 MB a chip) is profiled at 680 us. By
 * hand: 3 steps of a hop (1 us) and a shard over a link (8388608 B / 45e9
 * B/s = 186.41 us), and the op's fixed 1 us: 563.2 us, 0.83 of the profile
 * (its own theory 560 us). The same of bf16[256, 256] is latency-bound:
 * 3 (1 + 32768 / 45e9 s) + 1 = 6.18 us against 8 us measured, inside 2x.
 * The engine's ICI threads and the closed form agree.
 */
START_TEST(scaling_book_allgather)
{
	struct result t, r;
	double ghz;
	double want = 3 * (1e-6 + 8388608 / 45e9) + 1e-6;
	run_on("configs/pods/v5e_8x4.yaml", "layers:\n  - {name: g, type: all_gather, shape: [2048, 8192], dtype: bf16, "
	       "axes: [y]}\n", MODEL_ANALYTIC, NULL, &t, &ghz, &r, 1);
	double s = (double)t.cycles / (ghz * 1e9);
	ck_assert_double_eq_tol(s, want, 1e-8);
	ck_assert_double_le(fabs(s / 680e-6 - 1), 0.25);
	ck_assert_int_eq(t.cat[CAT_EXPOSED_COMM], t.cycles);
	ck_assert_int_eq(t.comm_cycles, t.cycles);
	/* The line's end link: 3 shards of 8388608 B one way, the end chip's one back. */
	ck_assert_int_eq(t.link_bytes[ICI_Y], 4 * 8388608);
	ck_assert_int_eq(t.link_bytes[ICI_X], 0);
	struct result te;
	run_on("configs/pods/v5e_8x4.yaml", gather_yaml, MODEL_CYCLE, NULL, &te, &ghz, &r, 1);
	ck_assert_msg(llabs(te.cycles - t.cycles) <= 4, "engine %lld, closed form %lld", (long long)te.cycles,
		      (long long)t.cycles);
	run_on("configs/pods/v5e_8x4.yaml", "layers:\n  - {name: g, type: all_gather, shape: [256, 256], axes: y}\n",
	       MODEL_ANALYTIC, NULL, &t, &ghz, &r, 1);
	s = (double)t.cycles / (ghz * 1e9);
	ck_assert_double_eq_tol(s, 3 * (1e-6 + 32768 / 45e9) + 1e-6, 1e-8);
	ck_assert_double_le(8e-6 / s, 2.0);
}
END_TEST

/*
 * Overlap: an all-gather (563 us) beside an independent 2048^3 bf16 GEMM on
 * v5e (8.6 G MACs at 65,536 MACs a cycle, about 87 us), then an add that
 * reads the gathered array. The cycle model runs the GEMM while the links
 * work: the step is shorter than the closed form's sum, and the add waits
 * for the gather's rest, charged to it as exposed_comm: about the gather less
 * the GEMM's time. Two all-gathers over the same axis queue for its links
 * (about twice one); over x and y they do not, nor three over x, y and z.
 */
START_TEST(overlap_and_contention)
{
	const char *yaml = "layers:\n"
			   "  - {name: g, type: all_gather, shape: [2048, 8192], axes: [y]}\n"
			   "  - {name: mm, type: matmul, m: 2048, k: 2048, n: 2048}\n"
			   "  - {name: use, type: add, elements: 16777216, inputs: [g, g]}\n";
	struct result a, c, rows[3], one, two, apart, ra[3];
	double ghz;
	run_on("configs/pods/v5e_8x4.yaml", yaml, MODEL_ANALYTIC, NULL, &a, &ghz, ra, 3);
	run_on("configs/pods/v5e_8x4.yaml", yaml, MODEL_CYCLE, NULL, &c, &ghz, rows, 3);
	ck_assert_int_lt(c.cycles, a.cycles);
	/* The gather's row: no cycle of its own (the GEMM runs in them), its whole link time. */
	ck_assert_int_eq(rows[0].cycles, 0);
	ck_assert_int_eq(rows[0].collective_ops, 1);
	ck_assert_int_ge(rows[0].comm_cycles, ra[0].comm_cycles - 4);
	int64_t hidden = rows[1].cycles, exposed = rows[2].cat[CAT_EXPOSED_COMM];
	ck_assert_msg(llabs(exposed - (rows[0].comm_cycles - hidden)) <= hidden / 10 + 4,
		      "exposed %lld, gather %lld, GEMM %lld", (long long)exposed, (long long)rows[0].comm_cycles,
		      (long long)hidden);
	ck_assert_int_eq(c.cat[CAT_EXPOSED_COMM], exposed);
	run_on("configs/pods/v5e_8x4.yaml", gather_yaml, MODEL_CYCLE, NULL, &one, &ghz, rows, 1);
	run_on("configs/pods/v5e_8x4.yaml",
	       "layers:\n  - {name: a, type: all_gather, shape: [2048, 8192], axes: [y]}\n"
	       "  - {name: b, type: all_gather, shape: [2048, 8192], axes: [y]}\n", MODEL_CYCLE, NULL, &two, &ghz, rows, 1);
	run_on("configs/pods/v5e_8x4.yaml",
	       "layers:\n  - {name: a, type: all_gather, shape: [2048, 8192], axes: [y]}\n"
	       "  - {name: b, type: all_gather, shape: [8192, 2048], axes: [x]}\n", MODEL_CYCLE,
	       (const char *const[]){ "pod.x=4", NULL }, &apart, &ghz, rows, 1);
	double r2 = (double)two.cycles / (double)one.cycles, ra2 = (double)apart.cycles / (double)one.cycles;
	ck_assert_msg(r2 > 1.9 && r2 < 2.05, "two on y: %.3f x one", r2);
	ck_assert_msg(ra2 < 1.05, "x and y: %.3f x one", ra2);
	/* Three, on x, y and z of a v4 pod: each axis's stream runs its own, all at once. */
	struct result three, alone;
	const char *xyz = "layers:\n  - {name: a, type: all_gather, shape: [2048, 8192], axes: [x]}\n"
			  "  - {name: b, type: all_gather, shape: [2048, 8192], axes: [y]}\n"
			  "  - {name: c, type: all_gather, shape: [2048, 8192], axes: [z]}\n";
	run_on("configs/pods/v4_16x16x16.yaml", xyz, MODEL_CYCLE, NULL, &three, &ghz, rows, 1);
	run_on("configs/pods/v4_16x16x16.yaml", "layers:\n  - {name: a, type: all_gather, shape: [2048, 8192], axes: [x]}\n",
	       MODEL_CYCLE, NULL, &alone, &ghz, rows, 1);
	ck_assert_msg(three.cycles < alone.cycles * 105 / 100, "three %lld, one %lld", (long long)three.cycles,
		      (long long)alone.cycles);
}
END_TEST

/* Bad collectives are refused at their key, with exit status 2 and the file:line:col. */
START_TEST(refusals)
{
	char *dir = th_tmpdir(), *out, *err;
	const struct {
		const char *yaml, *want;
	} bad[] = {
		{ "layers:\n  - {name: g, type: all_gather, shape: [4, 4], axes: [w]}\n",
		  "w.yaml:2:54: layers[0].axes: expected axes of the pod (x, y, z, dcn), found \"w\"" },
		{ "layers:\n  - {name: g, type: all_gather, shape: [4, 0], axes: [x]}\n",
		  "layers[0].shape: expected dimensions that are integers in [1, " },
		{ "layers:\n  - {name: g, type: all_gather, shape: [4, 4], axes: [x, x]}\n",
		  "layers[0].axes: expected each axis once, found x twice" },
		{ "layers:\n  - {name: g, type: send_recv, shape: [4], axes: [x, y]}\n",
		  "layers[0].axes: expected one axis (a send goes to the next chip along it), found 2" },
		{ "layers:\n  - {name: g, type: all_gather, axes: [x]}\n", "shape" },
		{ "layers:\n  - {name: g, type: all_gather, shape: [[4]], axes: [x]}\n",
		  "layers[0].shape[0]: expected a scalar, found" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		free(th_write(dir, "w.yaml", bad[i].yaml));
		char cwd[4096], abs[4400];
		ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
		snprintf(abs, sizeof abs, "%s/configs/pods/v5e_8x4.yaml", cwd);
		const char *argv[] = { "run", "-c", abs, "-w", "w.yaml", "-o", "out", NULL };
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
		ck_assert_msg(strstr(err, bad[i].want), "case %zu: %s", i, err);
		char outdir[4200];
		snprintf(outdir, sizeof outdir, "%s/out", dir);
		ck_assert_msg(access(outdir, F_OK) != 0, "no output for a refused run");
		free(out);
		free(err);
	}
	/* A training step differentiates layers, not collectives. */
	free(th_write(dir, "w.yaml", gather_yaml));
	char cwd[4096], abs[4400];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(abs, sizeof abs, "%s/configs/pods/v5e_8x4.yaml", cwd);
	const char *argv[] = { "run", "-c", abs, "-w", "w.yaml", "--train", "-o", "out", NULL };
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
	ck_assert_msg(strstr(err, "layers[0]: expected a layer a training step differentiates, found a collective"), "%s",
		      err);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A config's base: the slice's file names its chip, and the chip's keys come
 * with it (v5e's clock and arrays), overlaid by the file's own; a base that
 * names its own file is refused, not followed for ever.
 */
START_TEST(config_base)
{
	struct config c;
	struct err e = { 0 };
	ck_assert_msg(config_load(&c, "configs/pods/v5e_16x16.yaml", &e) == 0, "%s", e.msg);
	ck_assert_double_eq_tol(c.arch.clock_ghz, 1.503, 1e-9);
	ck_assert_int_eq(arch_arrays(&c.arch), 4);
	ck_assert_int_eq(c.arch.pod.dim[0], 16);
	ck_assert_int_eq(c.arch.pod.dim[1], 16);
	ck_assert(ici_axis_wraps(&c.arch.pod, ICI_X) && ici_axis_wraps(&c.arch.pod, ICI_Y));
	ck_assert_double_eq_tol(c.arch.pod.link_gbps, 45, 1e-9);       /* from v5e_8x4, its base */
	ck_assert_str_eq(c.file, "configs/pods/v5e_16x16.yaml");
	ck_assert_msg(config_load(&c, "configs/pods/v5e_8x4.yaml", &e) == 0, "%s", e.msg);
	ck_assert(!ici_axis_wraps(&c.arch.pod, ICI_X) && !ici_axis_wraps(&c.arch.pod, ICI_Y));
	/* v4 and v5p: an axis that is a multiple of 4 wraps. */
	ck_assert_msg(config_load(&c, "configs/pods/v4_16x16x16.yaml", &e) == 0, "%s", e.msg);
	c.arch.pod.dim[2] = 2;
	ck_assert(ici_axis_wraps(&c.arch.pod, ICI_X) && !ici_axis_wraps(&c.arch.pod, ICI_Z));
	char *dir = th_tmpdir(), *self = th_write(dir, "self.yaml", "base: self.yaml\n");
	ck_assert_int_eq(config_load(&c, self, &e), -1);
	ck_assert_msg(strstr(e.msg, "base: expected at most"), "%s", e.msg);
	free(self);
	/* A base that is not there is refused at its key. */
	char *missing = th_write(dir, "missing.yaml", "name: x\nbase: nothere.yaml\n");
	ck_assert_int_eq(config_load(&c, missing, &e), -1);
	ck_assert_msg(strstr(e.msg, "missing.yaml:2:7: base: expected a preset's name or a readable config file, found "
			     "\"nothere.yaml\""), "%s", e.msg);
	free(missing);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The ops of the workload text lowered for the slice config with sets, as tpusim lower lowers them. */
static void lower_on(const char *config, const char *yaml, const char *const *sets, struct config *c,
		     struct workload *w, struct oplist *ops)
{
	struct err e = { 0 };
	char *dir = th_tmpdir(), *file = th_write(dir, "w.yaml", yaml);
	ck_assert_msg(config_load(c, config, &e) == 0, "%s", e.msg);
	for (; sets && *sets; sets++)
		ck_assert_msg(config_set(c, *sets, &e) == 0, "%s", e.msg);
	memset(ops, 0, sizeof *ops);
	ck_assert_msg(workload_load(w, file, 0, &e) == 0 && lower_step(c, w, ops, &e) == 0, "%s", e.msg);
	th_rmdir(dir);
	free(file);
	free(dir);
}

static const struct op *op_named(const struct oplist *ops, const char *name)
{
	char buf[OP_NAME_MAX];
	for (size_t i = 0; i < ops->n; i++)
		if (!strcmp(op_name(&ops->v[i], buf, sizeof buf), name))
			return &ops->v[i];
	ck_abort_msg("no op %s", name);
	return NULL;
}

static const char *const block_yaml =
	"batch: 8\nlayers:\n"
	"  - {name: attn, type: attention, d_model: 1024, heads: 16, kv_heads: 8, head_dim: 64, seq: 256}\n"
	"  - {name: mlp, type: mlp, tokens: 256, d_model: 1024, d_ff: 4096}\n";

/*
 * Tensor parallelism of 4 on a 2 x 2 v5e slice: each chip has 16 / 4 = 4
 * query heads and 8 / 4 = 2 key-value heads: q_proj 2048 x 1024 x 256
 * (M = 8 x 256 rows), k_proj and v_proj N = 2 x 64 = 128, o_proj K = 256;
 * the MLP's up 1024 x 1024 (4096 / 4), down K = 1024. o_proj and down write
 * partial sums of the whole 2048 x 1024 output, which an all-reduce over
 * the tensor group (x and y, 4 chips) adds: 2 MiB elements each.
 */
START_TEST(tensor_parallel_by_hand)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	lower_on("configs/pods/v5e_8x4.yaml", block_yaml, (const char *const[]){ "pod.x=2", "pod.y=2", "mesh.tensor=4", NULL },
		 &c, &w, &ops);
	const struct op *q = op_named(&ops, "attn.q_proj"), *k = op_named(&ops, "attn.k_proj");
	const struct op *o = op_named(&ops, "attn.o_proj"), *up = op_named(&ops, "mlp.up"), *dn = op_named(&ops, "mlp.down");
	ck_assert(q->m == 2048 && q->k == 1024 && q->n == 256);
	ck_assert(k->m == 2048 && k->k == 1024 && k->n == 128);
	ck_assert(o->m == 2048 && o->k == 256 && o->n == 1024);
	ck_assert(up->m == 2048 && up->k == 1024 && up->n == 1024);
	ck_assert(dn->m == 2048 && dn->k == 1024 && dn->n == 1024);
	const struct op *ar = op_named(&ops, "attn.o_allreduce"), *ar2 = op_named(&ops, "mlp.down_allreduce");
	ck_assert_int_eq(ar->kind, OP_COLL);
	ck_assert_int_eq(ar->coll, COLL_ALL_REDUCE);
	ck_assert_int_eq(ar->coll_elems, 2048 * 1024);
	ck_assert_int_eq(ar2->coll_elems, 2048 * 1024);
	ck_assert_int_eq(ici_group_chips(&ar->grp), 4);
	/* It reads o_proj's partial sums and writes the layer's output. */
	char name[OP_NAME_MAX];
	ck_assert_str_eq(tensor_name(&ops.t[o->out], name, sizeof name), "attn.o_partial");
	ck_assert_int_eq(ar->in[0], o->out);
	ck_assert_str_eq(tensor_name(&ops.t[ar->out], name, sizeof name), "attn.out");
	/*
	 * Four collectives in all: the two sums, and Megatron's f before q_proj
	 * and up, which moves nothing in the forward; no FSDP gathers.
	 */
	int n = 0, moving = 0;
	for (size_t i = 0; i < ops.n; i++) {
		n += ops.v[i].kind == OP_COLL;
		moving += ops.v[i].kind == OP_COLL && !ops.v[i].identity;
	}
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(moving, 2);
	ck_assert_int_eq(op_named(&ops, "attn.tp_in")[1].kind, OP_GEMM);       /* just before q_proj */
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * FSDP of 4 and data of 2 on 2 x 4: each chip takes 8 / (2 x 4) = 1 sample
 * (M = 256 rows) and holds a quarter of every weight, gathered over the fsdp
 * group before its GEMM: wq's 1024 x 1024 as 262144 elements, gathered to
 * 1048576; the gather is the op before q_proj, which reads what it gathered.
 */
START_TEST(fsdp_by_hand)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	lower_on("configs/pods/v5e_8x4.yaml", block_yaml,
		 (const char *const[]){ "pod.x=2", "pod.y=4", "mesh.fsdp=4", "mesh.data=2", NULL }, &c, &w, &ops);
	const struct op *q = op_named(&ops, "attn.q_proj"), *g = op_named(&ops, "attn.wq.gather");
	ck_assert_int_eq(q->m, 256);
	ck_assert_ptr_eq(g + 1, q);
	ck_assert_int_eq(g->coll, COLL_ALL_GATHER);
	ck_assert_int_eq(g->coll_elems, 1024 * 1024);
	ck_assert_int_eq(ops.t[g->in[0]].elems, 1024 * 1024 / 4);
	ck_assert_int_eq(ops.t[g->in[0]].kind, TK_WEIGHT);
	ck_assert_int_eq(ops.t[g->out].elems, 1024 * 1024);
	ck_assert_int_eq(q->in[1], g->out);
	/* fsdp takes y (4, whole: a ring when it wraps), data x. */
	ck_assert_int_eq(g->grp.n[ICI_Y], 4);
	ck_assert_int_eq(ici_group_chips(&g->grp), 4);
	int n = 0;
	for (size_t i = 0; i < ops.n; i++)
		n += ops.v[i].kind == OP_COLL;
	ck_assert_int_eq(n, 6);         /* wq, wk, wv, wo, w_up, w_down */
	oplist_release(&ops);
	workload_release(&w);
	/*
	 * In the cycle model the gathers of later weights run while earlier GEMMs
	 * compute: the run is shorter than the closed form's sum of its ops.
	 */
	struct result a, cy, rows[2];
	double ghz;
	const char *const sets[] = { "pod.x=2", "pod.y=4", "mesh.fsdp=4", "mesh.data=2", NULL };
	run_on("configs/pods/v5e_8x4.yaml", block_yaml, MODEL_ANALYTIC, sets, &a, &ghz, rows, 2);
	run_on("configs/pods/v5e_8x4.yaml", block_yaml, MODEL_CYCLE, sets, &cy, &ghz, rows, 2);
	ck_assert_int_lt(cy.cycles, a.cycles);
	ck_assert_int_eq(cy.collective_ops, 6);
	ck_assert_int_lt(cy.cat[CAT_EXPOSED_COMM], a.cat[CAT_EXPOSED_COMM]);
}
END_TEST

/* The mesh must be the pod, the slices data parallel, and a chip's batch whole. */
START_TEST(mesh_refusals)
{
	char *dir = th_tmpdir(), *out, *err, cwd[4096], abs[4400];
	free(th_write(dir, "w.yaml", block_yaml));
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(abs, sizeof abs, "%s/configs/pods/v5e_8x4.yaml", cwd);
	const struct {
		const char *set[3], *want;
	} bad[] = {
		{ { "mesh.tensor=4", NULL }, "--set:1:13: mesh.tensor: expected mesh.data x mesh.fsdp x mesh.tensor x mesh.pipeline to "
		  "be the pod's 32 chips (pod.x x pod.y x pod.z x pod.slices), found 1 x 1 x 4 x 1" },
		{ { "pod.slices=2", "mesh.tensor=64", NULL }, "mesh.data: expected a multiple of pod.slices (2: data parallelism "
		  "spans the slices), found 1" },
		{ { "mesh.fsdp=32", NULL }, "mesh.fsdp: expected mesh.data x mesh.fsdp to divide the batch (8), found 32" },
		{ { "mesh.tensor=32", NULL }, "layers[0].kv_heads: expected a multiple of mesh.tensor (32: each chip takes whole key "
		  "and value heads), found 8" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *argv[16] = { "run", "-c", abs, "-w", "w.yaml", "-o", "out" };
		int n = 7;
		for (int j = 0; bad[i].set[j]; j++) {
			argv[n++] = "--set";
			argv[n++] = bad[i].set[j];
		}
		argv[n] = NULL;
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
		ck_assert_msg(strstr(err, bad[i].want), "case %zu: %s", i, err);
		free(out);
		free(err);
	}
	/* A step's microbatches divide a chip's share of the batch: 8 / 4 = 2, not by 4. */
	const char *train[] = { "run", "-c", abs, "-w", "w.yaml", "--set", "mesh.data=4", "--set", "pod.x=2", "--set",
				"pod.y=2", "--train", "--set", "train.microbatches=4", NULL };
	ck_assert_int_eq(th_cli(dir, train, &out, &err), 2);
	ck_assert_msg(strstr(err, "train.microbatches: expected a divisor of the batch per chip (2), found 4"), "%s", err);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Counts of ops of l of kind coll with grad part g (OG_N: any) in phase ph (-1: any). */
static int count_coll(const struct oplist *l, int coll, int g, int ph)
{
	int n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].kind == OP_COLL && l->v[i].coll == coll && (g == OG_N || l->v[i].grad == g) &&
		     (ph < 0 || l->v[i].phase == ph);
	return n;
}

/*
 * A training step of the block on 2 x 2 chips. Data parallel over 4: each
 * chip takes 8 / 4 = 2 samples (q_proj M = 512) and holds every weight;
 * each of the 6 weights' gradients is all-reduced over the 4 chips once
 * (".sync"), with the weight's elements (wq 1024 x 1024), before its update.
 * FSDP over 4: each weight is gathered in the forward, gathered again for
 * the backward (ZeRO stage 3: the recompute phase), and its gradient
 * reduce-scattered to the chip's quarter, which the update reads. Tensor
 * over 4: the backward all-reduces the gradient of each of the two split
 * inputs (Megatron's f: 2048 rows x 1024); the forward's two all-reduces
 * pass their gradients through.
 */
START_TEST(training_step_on_a_mesh)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	const char *const on[] = { "pod.x=2", "pod.y=2", "train.enabled=true", NULL };
	const char *dp[] = { on[0], on[1], on[2], "mesh.data=4", NULL };
	lower_on("configs/pods/v5e_8x4.yaml", block_yaml, dp, &c, &w, &ops);
	ck_assert_int_eq(op_named(&ops, "attn.q_proj")->m, 512);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_SYNC, PH_BACKWARD), 6);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_N, -1), 0);
	const struct op *sync = op_named(&ops, "attn.wq.sync");
	ck_assert_int_eq(sync->coll_elems, 1024 * 1024);
	ck_assert_int_eq(ici_group_chips(&sync->grp), 4);
	/* The update reads the summed gradient. */
	const struct op *up = op_named(&ops, "attn.wq.update");
	ck_assert_int_eq(up->in[1], sync->out);
	oplist_release(&ops);
	workload_release(&w);

	const char *fs[] = { on[0], on[1], on[2], "mesh.fsdp=4", NULL };
	lower_on("configs/pods/v5e_8x4.yaml", block_yaml, fs, &c, &w, &ops);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_GATHER, PH_FORWARD), 6);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_GATHER, PH_RECOMPUTE), 6);
	ck_assert_int_eq(count_coll(&ops, COLL_REDUCE_SCATTER, OG_SCATTER, PH_BACKWARD), 6);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_N, -1), 0);
	const struct op *rs = op_named(&ops, "attn.wq.scatter");
	ck_assert_int_eq(rs->coll_elems, 1024 * 1024);
	ck_assert_int_eq(rs->out_elems, 1024 * 1024 / 4);
	up = op_named(&ops, "attn.wq.update");
	ck_assert_int_eq(up->out_elems - ops.t[up->out].elems, 1024 * 1024 / 4);  /* the shard; its state beside it */
	ck_assert_int_eq(ops.t[up->in[1]].elems, 1024 * 1024 / 4);
	oplist_release(&ops);
	workload_release(&w);

	const char *tp[] = { on[0], on[1], on[2], "mesh.tensor=4", NULL };
	lower_on("configs/pods/v5e_8x4.yaml", block_yaml, tp, &c, &w, &ops);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_DX, PH_BACKWARD), 2);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_N, PH_FORWARD), 4);       /* 2 sums, 2 identities */
	const struct op *f = op_named(&ops, "attn.tp_in");
	ck_assert(f->identity);
	struct ici_cost cost0;
	ck_assert_int_eq(plan_coll_cycles(&c.arch, f, &cost0), 0);
	int64_t n = 0;
	for (size_t i = 0; i < ops.n; i++)
		if (ops.v[i].kind == OP_COLL && ops.v[i].grad == OG_DX)
			n += ops.v[i].coll_elems;
	ck_assert_int_eq(n, 2 * 2048 * 1024);
	oplist_release(&ops);
	workload_release(&w);
	/* The whole step runs, its categories summing to its cycles (run_on checks). */
	struct result r, rows[1];
	double ghz;
	run_on("configs/pods/v5e_8x4.yaml", block_yaml, MODEL_CYCLE, tp, &r, &ghz, rows, 1);
	ck_assert_int_eq(r.collective_ops, 6);
}
END_TEST

static const char *const seq_yaml =
	"batch: 8\nlayers:\n"
	"  - {name: norm1, type: layernorm, elements: 262144}\n"
	"  - {name: attn, type: attention, d_model: 1024, heads: 16, kv_heads: 8, head_dim: 64, seq: 256}\n"
	"  - {name: add1, type: add, elements: 262144, inputs: [attn, norm1]}\n"
	"  - {name: mlp, type: mlp, tokens: 256, d_model: 1024, d_ff: 4096}\n"
	"  - {name: head, type: linear, tokens: 256, in_features: 1024, out_features: 1001, split: columns}\n";

/*
 * Sequence parallelism over tensor 4 on 2 x 2 (Korthikanti et al. 2023,
 * Sec. 4.2.2). The batch's 8 x 256 = 2048 rows of 1024: the norm and the add
 * take a quarter, 524288 elements (the add two of them); attention and the
 * MLP all-gather their input (2048 x 1024 = 2097152 elements, a chip holding
 * 524288 before) just before q_proj and up, and reduce-scatter their output
 * back to a quarter. The head split by columns computes ceil(1001 / 4) =
 * 251 of them for all 2048 rows, after its own gather. Five collectives,
 * none an all-reduce, and an all-gather and a reduce-scatter of V take what
 * an all-reduce of V takes. Without sequence parallelism the norm takes all
 * rows and the head's input goes through Megatron's f.
 */
START_TEST(sequence_parallel_by_hand)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	const char *sets[] = { "pod.x=2", "pod.y=2", "mesh.tensor=4", "mesh.sequence=true", NULL };
	lower_on("configs/pods/v5e_8x4.yaml", seq_yaml, sets, &c, &w, &ops);
	ck_assert_int_eq(op_named(&ops, "norm1")->in_elems, 524288);
	ck_assert_int_eq(op_named(&ops, "add1")->in_elems, 2 * 524288);
	const char *gathers[] = { "attn.seq_gather", "mlp.seq_gather", "head.seq_gather" };
	const char *after[] = { "attn.q_proj", "mlp.up", "head" };
	for (int i = 0; i < 3; i++) {
		const struct op *g = op_named(&ops, gathers[i]), *q = op_named(&ops, after[i]);
		ck_assert_int_eq(g->coll, COLL_ALL_GATHER);
		ck_assert_int_eq(g->coll_elems, 2048 * 1024);
		ck_assert_int_eq(ops.t[g->in[0]].elems, 524288);
		ck_assert_int_eq(ops.t[g->out].elems, 2048 * 1024);
		ck_assert_int_eq(ici_group_chips(&g->grp), 4);
		ck_assert_ptr_eq(g + 1, q);
		ck_assert_int_eq(q->in[0], g->out);
	}
	const char *scatters[] = { "attn.o_scatter", "mlp.down_scatter" };
	for (int i = 0; i < 2; i++) {
		const struct op *r = op_named(&ops, scatters[i]);
		ck_assert_int_eq(r->coll, COLL_REDUCE_SCATTER);
		ck_assert_int_eq(r->coll_elems, 2048 * 1024);
		ck_assert_int_eq(ops.t[r->in[0]].elems, 2048 * 1024);
		ck_assert_int_eq(ops.t[r->out].elems, 524288);
	}
	const struct op *h = op_named(&ops, "head");
	ck_assert(h->m == 2048 && h->k == 1024 && h->n == 251 && h->col_split);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_N, -1), 3);
	ck_assert_int_eq(count_coll(&ops, COLL_REDUCE_SCATTER, OG_N, -1), 2);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_N, -1), 0);
	struct ici_cost k;
	struct op ar = *op_named(&ops, "attn.o_scatter");
	int64_t rs = plan_coll_cycles(&c.arch, &ar, &k), ag = plan_coll_cycles(&c.arch, op_named(&ops, "mlp.seq_gather"), &k);
	ar.coll = COLL_ALL_REDUCE;
	int64_t sum = plan_coll_cycles(&c.arch, &ar, &k);
	ck_assert_int_le(llabs(rs + ag - sum), 1);
	oplist_release(&ops);
	workload_release(&w);

	sets[3] = NULL;
	lower_on("configs/pods/v5e_8x4.yaml", seq_yaml, sets, &c, &w, &ops);
	ck_assert_int_eq(op_named(&ops, "norm1")->in_elems, 2048 * 1024);
	ck_assert(op_named(&ops, "head.tp_in")->identity);
	ck_assert_int_eq(op_named(&ops, "head")->n, 251);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_REDUCE, OG_N, -1), 5);
	oplist_release(&ops);
	workload_release(&w);

	/* Rows that do not split evenly, and a layer that is not split by rows, are refused at their keys. */
	char *dir = th_tmpdir(), *out, *err, cwd[4096], abs[4400];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(abs, sizeof abs, "%s/configs/pods/v5e_8x4.yaml", cwd);
	const struct {
		const char *yaml, *want;
	} bad[] = {
		{ "batch: 1\nlayers:\n  - {name: n, type: layernorm, elements: 1001}\n",
		  "w.yaml:3:42: layers[0].elements: expected a multiple of mesh.tensor (32) under mesh.sequence (each chip "
		  "takes an equal share of the rows), found 1001 elements on a chip" },
		{ "batch: 4\nlayers:\n  - {name: c, type: conv2d, in_h: 8, in_w: 8, in_c: 4, out_c: 4, kernel: 3}\n",
		  "w.yaml:3:21: layers[0].type: expected a layer sequence parallelism splits by its rows under mesh.sequence "
		  "(attention, mlp, fc, linear, an elementwise layer or a collective), found conv2d" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		free(th_write(dir, "w.yaml", bad[i].yaml));
		const char *argv[] = { "run", "-c", abs, "-w", "w.yaml", "-o", "out", "--set", "mesh.tensor=32", "--set",
				       "mesh.sequence=true", NULL };
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
		ck_assert_msg(strstr(err, bad[i].want), "case %zu: %s", i, err);
		snprintf(cwd, sizeof cwd, "%s/out", dir);
		ck_assert_int_ne(access(cwd, F_OK), 0);                 /* no partial output */
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * The training step of the same: the backward swaps the two, each block
 * input's gradient reduce-scattered (2048 x 1024 elements, a chip left with
 * 524288) and each output's all-gathered; the split head's loss first
 * all-reduces 3 fp32 numbers of each of its 2048 rows over the tensor
 * group, 24576 bytes, and reads them beside the logits. In the cycle model
 * the step's vector work is less than without sequence parallelism.
 */
START_TEST(sequence_parallel_training)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	const char *sets[] = { "pod.x=2", "pod.y=2", "mesh.tensor=4", "train.enabled=true", "mesh.sequence=true", NULL };
	lower_on("configs/pods/v5e_8x4.yaml", seq_yaml, sets, &c, &w, &ops);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_N, PH_FORWARD), 3);
	ck_assert_int_eq(count_coll(&ops, COLL_REDUCE_SCATTER, OG_N, PH_FORWARD), 2);
	ck_assert_int_eq(count_coll(&ops, COLL_REDUCE_SCATTER, OG_DX, PH_BACKWARD), 3);
	ck_assert_int_eq(count_coll(&ops, COLL_ALL_GATHER, OG_DX, PH_BACKWARD), 2);
	const struct op *d = op_named(&ops, "attn.seq_gather.dx");
	ck_assert_int_eq(d->coll, COLL_REDUCE_SCATTER);
	ck_assert_int_eq(d->coll_elems, 2048 * 1024);
	ck_assert_int_eq(d->out_elems, 524288);
	const struct op *st = op_named(&ops, "head.loss_stats"), *loss = op_named(&ops, "head.loss");
	ck_assert_int_eq(st->coll, COLL_ALL_REDUCE);
	ck_assert_int_eq(plan_coll_bytes(&c.arch, st), 3 * 2048 * 4);
	ck_assert_int_eq(ici_group_chips(&st->grp), 4);
	ck_assert_int_eq(loss->in[1], st->out);
	ck_assert_int_eq(loss->in_elems, 2048 * 251);
	oplist_release(&ops);
	workload_release(&w);

	struct result with, without, rows[1];
	double ghz;
	run_on("configs/pods/v5e_8x4.yaml", seq_yaml, MODEL_CYCLE, sets, &with, &ghz, rows, 1);
	sets[4] = NULL;
	run_on("configs/pods/v5e_8x4.yaml", seq_yaml, MODEL_CYCLE, sets, &without, &ghz, rows, 1);
	ck_assert_int_lt(with.cat[CAT_VECTOR], without.cat[CAT_VECTOR]);
}
END_TEST

Suite *ici_suite(void)
{
	Suite *s = suite_create("ici");
	TCase *tc = tcase_create("ici");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_axis_by_hand);
	tcase_add_test(tc, latency_bound);
	tcase_add_test(tc, two_axes_by_hand);
	tcase_add_test(tc, steps_agree_with_closed_form);
	tcase_add_test(tc, scaling_book_allgather);
	tcase_add_test(tc, overlap_and_contention);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, config_base);
	tcase_add_test(tc, tensor_parallel_by_hand);
	tcase_add_test(tc, fsdp_by_hand);
	tcase_add_test(tc, mesh_refusals);
	tcase_add_test(tc, training_step_on_a_mesh);
	tcase_add_test(tc, sequence_parallel_by_hand);
	tcase_add_test(tc, sequence_parallel_training);
	suite_add_tcase(s, tc);
	return s;
}
