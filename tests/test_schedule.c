/*
 * test_schedule.c - folds, tiles that fit, and HBM re-fetches, worked out by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "engine.h"
#include "plan.h"
#include "schedule.h"
#include "tests.h"

/*
 * The tests of tiling below run with memory so fast (10^6 GB/s, no latency)
 * that no tile size changes the estimated time: the plan is then the one with
 * the least traffic and the largest tiles, worked out by hand.
 */
#define FAST_MEMORY "hbm.gbps=1000000", "hbm.latency_ns=0"

static void plan(struct sched *s, const struct op *o, const struct config *c, int df)
{
	struct err e = { 0 };
	ck_assert_msg(plan_gemm(s, o, c, &c->arch, df, false, &e) == 0, "%s", e.msg);
}

/* M=10, K=6, N=5 on 4x4: ws 2 x 2 folds, os 3 x 2, is 2 x 3. */
START_TEST(fold_counts)
{
	struct config c;
	struct sched s;
	struct op o = th_gemm(10, 6, 5, 3);
	th_config(&c, "lab_4x4", (const char *const[]){ FAST_MEMORY, NULL });
	plan(&s, &o, &c, DF_WS);
	ck_assert_int_eq(s.nr, 2);
	ck_assert_int_eq(s.nc, 2);
	ck_assert_int_eq(s.folds, 4 * 3);
	plan(&s, &o, &c, DF_OS);
	ck_assert_int_eq(s.folds, 6 * 3);
	plan(&s, &o, &c, DF_IS);
	ck_assert_int_eq(s.folds, 6 * 3);
	/* A, B and C once each when everything fits: 10x6, 6x5, 10x5 int8, x 3 repeats */
	ck_assert_int_eq(s.read_bytes[OPND_A], 60 * 3);
	ck_assert_int_eq(s.read_bytes[OPND_B], 30 * 3);
	ck_assert_int_eq(s.write_bytes, 50 * 3);
}
END_TEST

/*
 * ws keeps all of A (M x K) in a 1 KiB input buffer when it fits: M = 64, K = 16
 * is exactly 1024 B, read once. One row more (1040 B) does not fit: then the
 * cheapest plan swaps the loops, keeps A in chunks across both column blocks
 * of N = 8, and keeps all of B (128 B). Chunks of up to 1024 x 65 / 1040 = 64
 * rows fit; 64 + 1 would stream a last chunk of one row behind a 4-cycle
 * shift, so the plan splits 65 evenly: 33 + 32 rows, ceil(1040 x 33 / 65) =
 * 528 bytes of A in the buffer.
 */
START_TEST(inputs_exactly_full)
{
	const char *sets[] = { "sram.inputs.kib=1", FAST_MEMORY, NULL };
	struct config c;
	struct sched s;
	struct op fits = th_gemm(64, 16, 8, 1), over = th_gemm(65, 16, 8, 1);
	th_config(&c, "lab_4x4", sets);
	plan(&s, &fits, &c, DF_WS);
	ck_assert(s.keep_x);
	ck_assert_int_eq(s.read_bytes[OPND_A], 1024);
	ck_assert_int_eq(s.footprint[SRAM_INPUTS], 1024);
	plan(&s, &over, &c, DF_WS);
	ck_assert(s.keep_x);
	ck_assert_int_eq(s.order, ORDER_TC);
	ck_assert_int_eq(s.chunk, 33);
	ck_assert_int_eq(s.read_bytes[OPND_A], 1040);
	ck_assert_int_eq(s.read_bytes[OPND_B], 16 * 8);
	ck_assert_int_eq(s.footprint[SRAM_INPUTS], 528);
}
END_TEST

/*
 * A 1 KiB accumulator buffer holds two tiles of 32 x 4 int32 partial sums, so
 * M = 64 streams in 2 chunks (two instances: more than one output block, so
 * the accumulators are double-buffered). B's column panel (512 x 4 = 2048 B)
 * stays in a 2 KiB weight buffer and is read once per instance; halve the
 * buffer and B is read once per chunk: twice the weight traffic.
 */
START_TEST(weights_halved_refetch)
{
	const char *full[] = { "sram.outputs.kib=1", "sram.weights.kib=2", FAST_MEMORY, NULL };
	const char *half[] = { "sram.outputs.kib=1", "sram.weights.kib=1", FAST_MEMORY, NULL };
	struct config c;
	struct sched s;
	struct op o = th_gemm(64, 512, 4, 2);
	th_config(&c, "lab_4x4", full);
	plan(&s, &o, &c, DF_WS);
	ck_assert_int_eq(s.chunk, 32);
	ck_assert_int_eq(s.nchunks, 2);
	ck_assert_int_eq(s.footprint[SRAM_OUTPUTS], 1024);
	ck_assert(s.keep_s);
	ck_assert_int_eq(s.read_bytes[OPND_B], 2 * 2048);
	th_config(&c, "lab_4x4", half);
	plan(&s, &o, &c, DF_WS);
	ck_assert(!s.keep_s);
	ck_assert_int_eq(s.read_bytes[OPND_B], 2 * 2 * 2048);
	ck_assert_int_eq(s.read_bytes[OPND_A], 2 * 64 * 512);
	ck_assert_int_eq(s.footprint[SRAM_WEIGHTS], 2 * 4 * 4);
}
END_TEST

/*
 * The same GEMM once: one column block (N = 4 on 4 columns), one instance,
 * so its only output block may take the whole 1 KiB accumulator buffer:
 * 64 x 4 x 4 B = 1024 B in one tile, M streams in one chunk, and B is read
 * once (2048 B) even from a 1 KiB weight buffer that cannot keep its panel.
 */
START_TEST(one_output_block_takes_the_accumulators)
{
	const char *half[] = { "sram.outputs.kib=1", "sram.weights.kib=1", FAST_MEMORY, NULL };
	struct config c;
	struct sched s;
	struct op o = th_gemm(64, 512, 4, 1), wide = th_gemm(64, 512, 8, 1);
	th_config(&c, "lab_4x4", half);
	plan(&s, &o, &c, DF_WS);
	ck_assert_int_eq(s.chunk, 64);
	ck_assert_int_eq(s.nchunks, 1);
	ck_assert_int_eq(s.footprint[SRAM_OUTPUTS], 64 * 4 * 4);
	ck_assert_int_eq(s.read_bytes[OPND_B], 512 * 4);
	/* Two column blocks: two output blocks, double-buffered tiles of 32 rows again. */
	plan(&s, &wide, &c, DF_WS);
	ck_assert_int_eq(s.chunk, 32);
	ck_assert_int_eq(s.footprint[SRAM_OUTPUTS], 2 * 32 * 4 * 4);
}
END_TEST

/*
 * os with a 1 KiB input buffer: A is 16 x 128 = 2048 B, so it is kept in chunks
 * of 1024 / 128 = 8 rows (a multiple of the 4 array rows) across both column
 * blocks of N = 8, and read once. B's column panels (128 x 4) stay across the
 * row blocks of a chunk, so B (1024 B) is read once per chunk: twice.
 */
START_TEST(os_chunks)
{
	const char *sets[] = { "sram.inputs.kib=1", FAST_MEMORY, NULL };
	struct config c;
	struct sched s;
	struct op o = th_gemm(16, 128, 8, 1);
	th_config(&c, "lab_4x4", sets);
	plan(&s, &o, &c, DF_OS);
	ck_assert(s.keep_s);
	ck_assert_int_eq(s.chunk, 8);
	ck_assert_int_eq(s.nchunks, 2);
	ck_assert_int_eq(s.read_bytes[OPND_A], 2048);
	ck_assert_int_eq(s.read_bytes[OPND_B], 2 * 1024);
	ck_assert_int_eq(s.footprint[SRAM_INPUTS], 1024);
	ck_assert_int_eq(s.kpart, 128);
}
END_TEST

/*
 * os where nothing can stay: 1 KiB weight and input buffers, K = 1024. Parts
 * of K must fit two 4-row tiles of A (2 x 4 x kpart <= 1024) and two 4-column
 * tiles of B: kpart = 128, 8 parts per fold. A is read once per column block
 * (2), B once per row block (4).
 */
START_TEST(os_parts)
{
	const char *sets[] = { "sram.inputs.kib=1", "sram.weights.kib=1", FAST_MEMORY, NULL };
	struct config c;
	struct sched s;
	struct op o = th_gemm(16, 1024, 8, 1);
	th_config(&c, "lab_4x4", sets);
	plan(&s, &o, &c, DF_OS);
	ck_assert(!s.keep_s && !s.keep_x);
	ck_assert_int_eq(s.kpart, 128);
	ck_assert_int_eq(s.nparts, 8);
	ck_assert_int_eq(s.read_bytes[OPND_A], 2 * 16 * 1024);
	ck_assert_int_eq(s.read_bytes[OPND_B], 4 * 1024 * 8);
	ck_assert_int_eq(s.footprint[SRAM_INPUTS], 1024);
	ck_assert_int_eq(s.footprint[SRAM_WEIGHTS], 1024);
}
END_TEST

/*
 * A 3x3 convolution (padding 1) over an 8 x 8 x 4 input: im2col A is
 * 64 x 36 = 2304 bytes, but memory holds the 256-byte input once, and that
 * is what crosses HBM, in every dataflow.
 */
START_TEST(conv_reads_its_input_once)
{
	struct config c;
	struct sched s;
	struct workload w;
	struct oplist ops;
	th_lower("layers:\n  - {name: c, type: conv2d, in_h: 8, in_w: 8, in_c: 4, out_c: 2, kernel: 3, padding: 1}\n",
		 &w, &ops);
	ck_assert_int_eq(ops.v[0].m * ops.v[0].k, 2304);
	ck_assert_int_eq(ops.v[0].a_elems, 256);
	th_config(&c, "lab_4x4", NULL);
	for (int df = 0; df < 3; df++) {
		plan(&s, &ops.v[0], &c, df);
		ck_assert_int_eq(s.read_bytes[OPND_A], 256);
	}
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* The smallest tiles do not fit: the error names the key to grow, at its line in the file. */
START_TEST(too_small_names_the_key)
{
	const char *sets[] = { "sram.outputs.kib=1", NULL };
	struct config c;
	struct sched s;
	struct err e = { 0 };
	struct op o = th_gemm(64, 512, 512, 1);
	th_config(&c, "tpu_v1", sets);
	ck_assert_int_eq(plan_gemm(&s, &o, &c, &c.arch, DF_WS, false, &e), -1);
	/* two accumulator tiles of one row x 256 columns x 4 B = 2048 B */
	ck_assert_str_eq(e.msg, "--set:1:18: sram.outputs.kib: expected at least 2048 bytes for two tiles of 256 "
				"accumulators for g, found 1024");
	/* ideal memory: unbounded buffers */
	ck_assert_int_eq(plan_gemm(&s, &o, &c, &c.arch, DF_WS, true, &e), 0);
}
END_TEST

static uint64_t rng = 88172645463325252ULL;
/* Random small accelerators and GEMMs; buffers small enough that tiling matters. */
static void random_case(struct config *c, struct op *o, int *df)
{
	char s[9][64];
	const char *sets[10];
	snprintf(s[0], 64, "array.rows=%lld", (long long)th_rnd(&rng, 1, 16));
	snprintf(s[1], 64, "array.cols=%lld", (long long)th_rnd(&rng, 1, 16));
	snprintf(s[2], 64, "sram.weights.kib=%lld", (long long)th_rnd(&rng, 1, 8));
	snprintf(s[3], 64, "sram.inputs.kib=%lld", (long long)th_rnd(&rng, 1, 8));
	snprintf(s[4], 64, "sram.outputs.kib=%lld", (long long)th_rnd(&rng, 2, 8));
	snprintf(s[5], 64, "sram.unified=%s", th_rnd(&rng, 0, 1) ? "true" : "false");
	snprintf(s[6], 64, "array.weight_double_buffer=%s", th_rnd(&rng, 0, 3) ? "true" : "false");
	snprintf(s[7], 64, "array.dtype=%s", th_rnd(&rng, 0, 1) ? "int8" : "bf16");
	snprintf(s[8], 64, "array.scalesim_compat=%s", th_rnd(&rng, 0, 5) ? "false" : "true");
	for (int i = 0; i < 9; i++)
		sets[i] = s[i];
	sets[9] = NULL;
	th_config(c, "lab_4x4", sets);
	*o = th_gemm(th_rnd(&rng, 1, 200), th_rnd(&rng, 1, 200), th_rnd(&rng, 1, 200), th_rnd(&rng, 1, 3));
	if (th_rnd(&rng, 0, 1))
		o->a_elems = th_rnd(&rng, 1, o->m * o->k);   /* a convolution's input, smaller than its im2col matrix */
	*df = (int)th_rnd(&rng, 0, 2);
}

/*
 * For 1,000 random cases: every buffer's footprint fits its capacity, and the
 * tile program's loads, stores and folds add up to the plan's totals.
 */
START_TEST(program_matches_plan)
{
	int checked = 0;
	for (int i = 0; i < 1000; i++) {
		struct config c;
		struct op o;
		struct sched s;
		struct sched_iter it;
		struct tile_ins ins;
		struct err e = { 0 };
		int64_t rd[2] = { 0 }, wr = 0, folds = 0, macs = 0;
		int df;
		random_case(&c, &o, &df);
		if (plan_gemm(&s, &o, &c, &c.arch, df, false, &e) < 0)
			continue;           /* buffers too small for this array: a clean error */
		checked++;
		if (!s.compat) {
			if (c.arch.sram.unified)
				ck_assert_int_le(s.footprint[SRAM_WEIGHTS] + s.footprint[SRAM_INPUTS],
						 sram_bytes(&c.arch.sram, SRAM_WEIGHTS) + sram_bytes(&c.arch.sram, SRAM_INPUTS));
			else {
				ck_assert_int_le(s.footprint[SRAM_WEIGHTS], sram_bytes(&c.arch.sram, SRAM_WEIGHTS));
				ck_assert_int_le(s.footprint[SRAM_INPUTS], sram_bytes(&c.arch.sram, SRAM_INPUTS));
			}
			ck_assert_int_le(s.footprint[SRAM_OUTPUTS], sram_bytes(&c.arch.sram, SRAM_OUTPUTS));
		}
		sched_iter_init(&it, &s);
		while (sched_next(&it, &ins)) {
			if (ins.kind == TI_LOAD)
				rd[ins.operand] += ins.bytes;
			else if (ins.kind == TI_STORE)
				wr += ins.bytes;
			else {
				folds += !ins.cont;         /* os parts continue a fold */
				ck_assert(ins.sr >= 1 && ins.sr <= s.R && ins.sc >= 1 && ins.sc <= s.C);
				macs += ins.sr * ins.sc * ins.t;
			}
		}
		ck_assert_int_eq(rd[OPND_A], s.read_bytes[OPND_A]);
		ck_assert_int_eq(rd[OPND_B], s.read_bytes[OPND_B]);
		ck_assert_int_eq(wr, s.write_bytes);
		ck_assert_int_eq(folds, s.folds);
		/* The folds cover the GEMM exactly once: sum of Sr x Sc x T is M x K x N. */
		ck_assert_int_eq(macs, op_macs(&o));
	}
	ck_assert_int_gt(checked, 800);
}
END_TEST

/*
 * The tile program of ws on 4x4, M = 10, K = 6, N = 5, twice, int8, buffers
 * that hold everything and memory fast enough that the planner takes the
 * largest tiles: one chunk of all 10 rows; A is read once (kept
 * across the two column blocks), B's tiles once each. Instance 0:
 *   column block 0 (n 0-3): B[0:4, 0:4], A[0:10, 0:4], fold 4x4 (first);
 *                           B[4:6, 0:4], A[0:10, 4:6], fold 2x4 (last);
 *                           store C[0:10, 0:4]
 *   column block 1 (n 4):   B[0:4, 4], fold 4x1 (first);
 *                           B[4:6, 4], fold 2x1 (last, end of instance);
 *                           store C[0:10, 4]
 * Addresses, tiled by blocks (block (r0, c0) of h rows at r0 W + h c0):
 *   B (W = 5):  [0:4, 0:4] at 0 (16 B), [4:6, 0:4] at 20 (8 B),
 *               [0:4, 4] at 4 x 4 = 16 (4 B), [4:6, 4] at 20 + 2 x 4 = 28 (2 B)
 *   A (W = 6):  [0:10, 0:4] at 0 (40 B), [0:10, 4:6] at 10 x 4 = 40 (20 B)
 *   C (W = 5):  [0:10, 0:4] at 0 (40 B), [0:10, 4] at 10 x 4 = 40 (10 B)
 * Instance 1 is the same 60, 30 and 50 bytes further on.
 */
START_TEST(tile_program_by_hand)
{
	static const struct want {
		int kind, operand;
		int64_t m0, k0, n0, m, k, n, off, bytes;
		bool first, last, inst_last;
	} want[] = {
		{ TI_LOAD, OPND_B, 0, 0, 0, 10, 4, 4, 0, 16, 0, 0, 0 },
		{ TI_LOAD, OPND_A, 0, 0, 0, 10, 4, 4, 0, 40, 0, 0, 0 },
		{ TI_FOLD, OPND_C, 0, 0, 0, 10, 4, 4, 0, 0, 1, 0, 0 },
		{ TI_LOAD, OPND_B, 0, 4, 0, 10, 2, 4, 20, 8, 0, 0, 0 },
		{ TI_LOAD, OPND_A, 0, 4, 0, 10, 2, 4, 40, 20, 0, 0, 0 },
		{ TI_FOLD, OPND_C, 0, 4, 0, 10, 2, 4, 0, 0, 0, 1, 0 },
		{ TI_STORE, OPND_C, 0, 4, 0, 10, 2, 4, 0, 40, 0, 1, 0 },
		{ TI_LOAD, OPND_B, 0, 0, 4, 10, 4, 1, 16, 4, 0, 0, 0 },
		{ TI_FOLD, OPND_C, 0, 0, 4, 10, 4, 1, 0, 0, 1, 0, 0 },
		{ TI_LOAD, OPND_B, 0, 4, 4, 10, 2, 1, 28, 2, 0, 0, 0 },
		{ TI_FOLD, OPND_C, 0, 4, 4, 10, 2, 1, 0, 0, 0, 1, 1 },
		{ TI_STORE, OPND_C, 0, 4, 4, 10, 2, 1, 40, 10, 0, 1, 1 },
	};
	static const int64_t size[3] = { 60, 30, 50 };
	int n = (int)(sizeof want / sizeof want[0]), i = 0;
	struct config c;
	struct sched s;
	struct sched_iter it;
	struct tile_ins ins;
	struct op o = th_gemm(10, 6, 5, 2);
	th_config(&c, "lab_4x4", (const char *const[]){ FAST_MEMORY, NULL });   /* the largest tiles */
	plan(&s, &o, &c, DF_WS);
	sched_iter_init(&it, &s);
	while (sched_next(&it, &ins)) {
		ck_assert_int_lt(i, 2 * n);
		int64_t rep = i / n;
		const struct want *w = &want[i % n];
		ck_assert_int_eq(ins.kind, w->kind);
		ck_assert_int_eq(ins.operand, w->operand);
		ck_assert_int_eq(ins.rep, rep);
		ck_assert_int_eq(ins.m0, w->m0);
		ck_assert_int_eq(ins.k0, w->k0);
		ck_assert_int_eq(ins.n0, w->n0);
		ck_assert_int_eq(ins.m, w->m);
		ck_assert_int_eq(ins.k, w->k);
		ck_assert_int_eq(ins.n, w->n);
		if (ins.kind == TI_FOLD) {
			ck_assert_int_eq(ins.first, w->first);
			ck_assert_int_eq(ins.last, w->last);
			ck_assert_int_eq(ins.inst_last, w->inst_last);
			ck_assert(!ins.cont);
			ck_assert_int_eq(ins.sr, w->k);     /* ws: Sr of K, Sc of N, T = M */
			ck_assert_int_eq(ins.sc, w->n);
			ck_assert_int_eq(ins.t, w->m);
		} else {
			ck_assert_uint_eq(ins.addr, sched_base(w->operand) + (uint64_t)(rep * size[w->operand] + w->off));
			ck_assert_int_eq(ins.bytes, w->bytes);
		}
		i++;
	}
	ck_assert_int_eq(i, 2 * n);
}
END_TEST

/* Marks bytes [addr - base, + bytes) of a tensor of `size` bytes as block id's; a byte belongs to one block only. */
static void own(int64_t *owner, int64_t size, uint64_t base, const struct tile_ins *ins, int64_t id)
{
	ck_assert_uint_ge(ins->addr, base);
	int64_t from = (int64_t)(ins->addr - base);
	ck_assert_msg(from + ins->bytes <= size, "tile [%lld, +%lld) past the tensor's %lld bytes", (long long)from,
		      (long long)ins->bytes, (long long)size);
	for (int64_t b = from; b < from + ins->bytes; b++) {
		ck_assert_msg(owner[b] == 0 || owner[b] == id, "byte %lld in two tiles", (long long)b);
		owner[b] = id;
	}
}

/*
 * For 200 random plans of small GEMMs: every element of C is stored exactly once, by the
 * store after the last fold into its block; the folds into a block cover K
 * once, in order, from first to last; loads carry their fold's block; the
 * tiles of A, B and C lie within their tensors, the same block always at
 * the same place and different blocks never overlapping, and every byte of
 * each tensor is moved; and the program's folds are sched_fold_ins of it
 * (the cycle model's work, counted before it runs).
 */
START_TEST(tile_program_covers_tensors)
{
	int checked = 0;
	for (int i = 0; i < 200; i++) {
		struct config c;
		struct op o;
		struct sched s;
		struct sched_iter it;
		struct tile_ins ins, fold = { 0 }, loads[2];
		struct err e = { 0 };
		int df, nl = 0;
		random_case(&c, &o, &df);
		/* small tensors, so that every byte can be followed */
		bool conv = o.a_elems != o.m * o.k;
		o.m = th_rnd(&rng, 1, 40), o.k = th_rnd(&rng, 1, 40), o.n = th_rnd(&rng, 1, 40);
		o.a_elems = conv ? th_rnd(&rng, 1, o.m * o.k) : o.m * o.k;
		if (plan_gemm(&s, &o, &c, &c.arch, df, false, &e) < 0)
			continue;
		checked++;
		int64_t size[3] = { s.a_unique * o.repeat, o.k * o.n * s.eb * o.repeat, o.m * o.n * s.eb * o.repeat };
		int64_t *owner[3], *stored = calloc((size_t)(o.m * o.n * o.repeat), sizeof *stored);
		int64_t k_next = 0, insts = 0, nfolds = 0;
		bool open = false, have_fold = false;
		for (int p = 0; p < 3; p++)
			owner[p] = calloc((size_t)size[p] + 1, sizeof *owner[p]);
		sched_iter_init(&it, &s);
		while (sched_next(&it, &ins)) {
			int64_t id;
			if (ins.kind == TI_FOLD) {
				/* its block, as the array sees it */
				int64_t sr = df == DF_OS ? ins.m : ins.k, sc = df == DF_IS ? ins.m : ins.n;
				int64_t t = df == DF_WS ? ins.m : df == DF_IS ? ins.n : ins.k;
				ck_assert(ins.sr == sr && ins.sc == sc && ins.t == t);
				ck_assert_int_eq(ins.first, !open);
				ck_assert_int_eq(ins.k0, ins.first ? 0 : k_next);
				for (int l = 0; l < nl; l++) {
					const struct tile_ins *ld = &loads[l];
					ck_assert(ld->rep == ins.rep && ld->k0 == ins.k0 && ld->k == ins.k);
					if (ld->operand == OPND_A)
						ck_assert(ld->m0 == ins.m0 && ld->m == ins.m);
					else
						ck_assert(ld->n0 == ins.n0 && ld->n == ins.n);
				}
				nl = 0;
				k_next = ins.k0 + ins.k;
				ck_assert_int_eq(ins.last, k_next == o.k);
				open = !ins.last;
				if (ins.inst_last) {
					ck_assert_int_eq(ins.rep, insts);
					insts++;
				}
				ck_assert_int_eq(ins.rep, insts - (ins.inst_last ? 1 : 0));
				fold = ins;
				have_fold = true;
				nfolds++;
				continue;
			}
			if (ins.kind == TI_STORE) {
				ck_assert(have_fold && fold.last);
				ck_assert(ins.rep == fold.rep && ins.m0 == fold.m0 && ins.n0 == fold.n0 && ins.m == fold.m &&
					  ins.n == fold.n);
				ck_assert_int_eq(ins.bytes, ins.m * ins.n * s.eb);
				for (int64_t r = ins.m0; r < ins.m0 + ins.m; r++)
					for (int64_t col = ins.n0; col < ins.n0 + ins.n; col++)
						stored[(ins.rep * o.m + r) * o.n + col]++;
				id = (ins.rep * o.m + ins.m0) * o.n + ins.n0 + 1;
			} else if (ins.operand == OPND_A) {
				ck_assert_int_lt(nl, 2);
				loads[nl++] = ins;
				id = (ins.rep * o.m + ins.m0) * o.k + ins.k0 + 1;
			} else {
				ck_assert_int_lt(nl, 2);
				loads[nl++] = ins;
				ck_assert_int_eq(ins.bytes, ins.k * ins.n * s.eb);
				id = (ins.rep * o.k + ins.k0) * o.n + ins.n0 + 1;
			}
			own(owner[ins.operand], size[ins.operand], sched_base(ins.operand), &ins, id);
		}
		ck_assert(!open);
		ck_assert_int_eq(insts, o.repeat);
		ck_assert_int_eq(nfolds, sched_fold_ins(&s));
		for (int64_t x = 0; x < o.m * o.n * o.repeat; x++)
			ck_assert_int_eq(stored[x], 1);
		for (int p = 0; p < 3; p++) {
			for (int64_t b = 0; b < size[p]; b++)
				ck_assert_msg(owner[p][b] != 0, "operand %d: byte %lld never moved", p, (long long)b);
			free(owner[p]);
		}
		free(stored);
	}
	ck_assert_int_gt(checked, 130);
}
END_TEST

/*
 * A 1x1 convolution 56x56x256 -> 64 on one TPU v4 MXU (128 x 128 bf16, HBM
 * 150 GB/s at 1.05 GHz = 142.857 B/cycle): M = 3136, K = 256, N = 64. HBM
 * moves A 3136 x 256 x 2 = 1,605,632 B, B 256 x 64 x 2 = 32,768 B and C
 * 3136 x 64 x 2 = 401,408 B, 2,039,808 B in all: 14,278.7 -> 14,279 cycles,
 * whatever the plan. With a 1 MiB or a 2 MiB input buffer the plan streams
 * T = 3136 in three chunks of 1046 (1046, 1046, 1044; nr = 2, nc = 1), whose
 * closed form is 128 + 2 x (1046 + 1046) + 1044 + 1044 + (128 + 64 - 2) =
 * 6,590 cycles: memory-bound, 14,279 in the analytic model. The engine must
 * overlap loads, compute and stores to within 1% of that bound, with either
 * buffer, and the larger buffer must not be slower (it used to keep all of T
 * as one chunk, loading 800 KiB tiles before the first fold and storing all
 * of C after the last: 17,815 cycles against 14,588).
 */
START_TEST(larger_input_buffer_not_slower)
{
	struct workload w;
	struct oplist ops;
	struct config c;
	int64_t cycles[2];
	th_lower("name: c\nlayers:\n  - {name: c, type: conv2d, in_h: 56, in_w: 56, in_c: 256, out_c: 64, kernel: 1}\n",
		 &w, &ops);
	for (int i = 0; i < 2; i++) {
		/* the array's and the memory's time alone: without the op's fixed time */
		const char *sets[] = { i ? "sram.inputs.kib=2048" : "sram.inputs.kib=1024", "chip.op_fixed_ns=0", NULL };
		struct sched s;
		struct result r;
		struct err e = { 0 };
		engine *en;
		th_config(&c, "tpu_v4_mxu", sets);
		plan(&s, &ops.v[0], &c, DF_WS);
		ck_assert_int_eq(s.chunk, 1046);
		ck_assert_int_eq(s.nchunks, 3);
		ck_assert_int_eq(analytic_gemm_cycles(&s), 6590);
		ck_assert_int_eq(s.read_bytes[OPND_A] + s.read_bytes[OPND_B] + s.write_bytes, 2039808);
		ck_assert_int_eq(th_analytic(&c, &ops.v[0], DF_WS, false, &r, &e), 0);
		ck_assert_int_eq(r.cycles, 14279);
		en = engine_new(&c, false, &e);
		ck_assert_ptr_nonnull(en);
		ck_assert_msg(th_engine(en, &c, &ops.v[0], DF_WS, false, &r, &e) == 0, "%s", e.msg);
		engine_free(en);
		cycles[i] = r.cycles;
		ck_assert_int_ge(cycles[i], 14279);
		ck_assert_int_le(cycles[i] * 100, 14279 * 101);
	}
	ck_assert_int_le(cycles[1], cycles[0]);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

Suite *schedule_suite(void)
{
	Suite *s = suite_create("schedule");
	TCase *t = tcase_create("schedule");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, fold_counts);
	tcase_add_test(t, inputs_exactly_full);
	tcase_add_test(t, weights_halved_refetch);
	tcase_add_test(t, one_output_block_takes_the_accumulators);
	tcase_add_test(t, os_chunks);
	tcase_add_test(t, os_parts);
	tcase_add_test(t, conv_reads_its_input_once);
	tcase_add_test(t, too_small_names_the_key);
	tcase_add_test(t, program_matches_plan);
	tcase_add_test(t, tile_program_by_hand);
	tcase_add_test(t, tile_program_covers_tensors);
	tcase_add_test(t, larger_input_buffer_not_slower);
	suite_add_tcase(s, t);
	return s;
}
