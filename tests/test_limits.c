/*
 * test_limits.c - the run's limits (run.h): the cycle model's work
 * (sim.max_folds) and the closed form's cycles, each checked before any op
 * is simulated, at n (passes) and n + 1 (refused); estimates that saturate
 * instead of wrapping; and runs longer than SystemC's old 2^64 ps clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"
#include "tests.h"

/* Runs w's ops with cfg; returns run_workload's status, results in *r (released when it fails). */
static int run(const struct config *cfg, const struct workload *w, const struct oplist *ops, int model, bool ideal,
	       struct run *r, struct err *e)
{
	struct run_opts o = { .dataflow = cfg->arch.array.dataflow, .model = model, .ideal_memory = ideal };
	memset(e, 0, sizeof *e);
	return run_workload(cfg, w, ops, &o, r, e);
}

/* The error text for a workload file that asks for more folds than max. */
static void folds_msg(char *buf, size_t size, const char *file, const char *max, const char *found)
{
	snprintf(buf, size, "%s: expected at most %s folds for the cycle model (sim.max_folds), found %s; "
		 "use --model analytic, a bigger array, or raise sim.max_folds", file, max, found);
}

/*
 * On the 4x4 ws lab array, a 1x8x8 matmul is K = 8 rows in 2 row blocks and
 * N = 8 columns in 2 column blocks, each pair streaming M's single row: 4
 * folds. An add of 4,097 elements on 4 lanes runs in chunks of 4 x 1,024
 * lane operations: 2. In all, 6: sim.max_folds = 6 runs, 5 is refused before
 * anything runs. The analytic model has no fold limit.
 */
static const char *const six_folds = "name: six\nbatch: 1\nlayers:\n"
				     "  - {name: mm, type: matmul, m: 1, k: 8, n: 8}\n"
				     "  - {name: sum, type: add, elements: 4097}\n";

START_TEST(fold_limit_n_passes_n_minus_1_fails)
{
	static const char *const at6[] = { "sim.max_folds=6", NULL }, *const at5[] = { "sim.max_folds=5", NULL };
	struct config c6, c5;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE, .ideal_memory = false };
	int64_t folds, cycles;
	char want[1024];

	th_lower(six_folds, &w, &ops);
	th_config(&c6, "lab_4x4", at6);
	th_config(&c5, "lab_4x4", at5);
	ck_assert_int_eq(run_estimate(&c6, &ops, &o, &folds, &cycles, &e), 0);
	ck_assert_int_eq(folds, 6);
	ck_assert_msg(run(&c6, &w, &ops, MODEL_CYCLE, false, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.total.folds, 4);          /* the matmul's; the add is a vector op */
	ck_assert_int_eq(r.total.gemm_ops + r.total.vector_ops, 2);
	run_release(&r);
	ck_assert_int_eq(run(&c5, &w, &ops, MODEL_CYCLE, false, &r, &e), -1);
	ck_assert_int_eq(e.kind, ERR_INPUT);
	folds_msg(want, sizeof want, w.file, "5", "6");
	ck_assert_str_eq(e.msg, want);
	ck_assert_msg(run(&c5, &w, &ops, MODEL_ANALYTIC, false, &r, &e) == 0, "%s", e.msg);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * The CLI and the library share the check: `tpusim run --set
 * sim.max_folds=5` exits 2 with the same line, before writing anything.
 */
START_TEST(fold_limit_from_the_command_line)
{
	char *dir = th_tmpdir(), *wl = th_write(dir, "six.yaml", six_folds), *out, *err, want[1024];
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--set", "sim.max_folds=5", "-o", dir, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	folds_msg(want, sizeof want, wl, "5", "6");
	ck_assert_msg(strstr(err, want) != NULL, "stderr: %s", err);
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	argv[6] = "sim.max_folds=6";
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 0);
	free(out);
	free(err);
	free(wl);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Unbounded work on valid input, refused at once with the default limit
 * (10^10 folds). A matmul of M = 1, K = N = 2^20 on a 1x1 ws array: K x N
 * = 2^40 one-weight blocks, each streaming M's single row: 2^40 =
 * 1,099,511,627,776 folds of one cycle each (2^40 + 1 cycles, within the
 * per-op limit of 2^50). It would take days; the check takes no time.
 */
START_TEST(huge_gemm_on_tiny_array_refused_at_once)
{
	static const char *const tiny[] = { "array.rows=1", "array.cols=1", NULL };
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;
	char want[1024];
	time_t t0 = time(NULL);

	th_lower("name: big\nbatch: 1\nlayers:\n  - {name: mm, type: matmul, m: 1, k: 1048576, n: 1048576}\n", &w,
		 &ops);
	th_config(&c, "lab_4x4", tiny);
	ck_assert_int_eq(run(&c, &w, &ops, MODEL_CYCLE, true, &r, &e), -1);
	folds_msg(want, sizeof want, w.file, "10000000000", "1099511627776");
	ck_assert_str_eq(e.msg, want);
	ck_assert_int_le(time(NULL) - t0, 5);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/* YAML for count add layers of `elements` each. */
static char *adds(int count, const char *elements)
{
	size_t size = 64 + (size_t)count * 96;
	char *y = malloc(size), *p = y;
	ck_assert_ptr_nonnull(y);
	p += sprintf(p, "name: many\nbatch: 1\nlayers:\n");
	for (int i = 0; i < count; i++)
		p += sprintf(p, "  - {name: a%d, type: add, elements: %s}\n", i, elements);
	return y;
}

/*
 * Slow memory: at 64 GHz and 2^-8 GB/s HBM moves 2^-14 bytes a cycle. An add
 * of 2^34 int8 elements moves 3 x 2^34 bytes (two operands in, one out):
 * 3 x 2^48 cycles by the closed form (its 2^34 / 2^20 = 2^14 cycles on the
 * vector unit hide under that), within the per-op limit of 2^50.
 */
static const char *const slow_adds[] = { "clock_ghz=64", "hbm.gbps=0.00390625", "hbm.channels=1",
					 "hbm.latency_ns=0", "vector.lanes=1048576", NULL };

/* The message for a workload whose closed form takes `found` cycles. */
static void cycles_msg(char *buf, size_t size, const char *file, const char *found)
{
	snprintf(buf, size, "%s: expected a workload that takes at most 2^58 cycles by the closed form (room for "
		 "the cycle model's stalls within the 2^62 a run counts), found %s; use a bigger array, more "
		 "bandwidth or a smaller workload", file, found);
}

/*
 * The closed form's limit, 2^58 cycles, for both models. 341 of those adds
 * take 1,023 x 2^48 = 2^58 - 2^48 = 287,948,901,175,001,088 cycles: the
 * analytic model gives exactly that, and the cycle engine runs it in one
 * kernel (16 times SystemC's old 2^64 ps clock, which the engine used to
 * get past by starting a fresh kernel), its categories summing to its
 * cycles. 342 adds take 1,026 x 2^48 = 2^58 + 2^49 = 288,793,326,105,133,056:
 * refused by either model before any op runs.
 */
START_TEST(cycle_limit_n_passes_n_plus_1_fails)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;
	char *y, want[1024];

	th_config(&c, "lab_4x4", slow_adds);
	y = adds(341, "17179869184");
	th_lower(y, &w, &ops);
	free(y);
	ck_assert_msg(run(&c, &w, &ops, MODEL_ANALYTIC, false, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.total.cycles, INT64_C(287948901175001088));
	ck_assert_int_eq(r.layers[340].cycles, 3 * (INT64_C(1) << 48));
	run_release(&r);
	ck_assert_msg(run(&c, &w, &ops, MODEL_CYCLE, false, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_ge(r.total.cycles, INT64_C(287948901175001088));
	ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);

	y = adds(342, "17179869184");
	th_lower(y, &w, &ops);
	free(y);
	cycles_msg(want, sizeof want, w.file, "288793326105133056");
	for (int model = MODEL_ANALYTIC; model <= MODEL_CYCLE; model++) {
		ck_assert_int_eq(run(&c, &w, &ops, model, false, &r, &e), -1);
		ck_assert_int_eq(e.kind, ERR_INPUT);
		ck_assert_str_eq(e.msg, want);
	}
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * Estimates saturate. 11,000 of those adds take 33,000 x 2^48 cycles by the
 * closed form, more than 2^63 (32,768 x 2^48): an int64 sum would wrap
 * negative. Both models refuse the run, "2^63 or more".
 */
START_TEST(estimates_saturate)
{
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;
	char *y = adds(11000, "17179869184"), want[1024];

	th_config(&c, "lab_4x4", slow_adds);
	th_lower(y, &w, &ops);
	free(y);
	cycles_msg(want, sizeof want, w.file, "2^63 or more");
	for (int model = MODEL_ANALYTIC; model <= MODEL_CYCLE; model++) {
		ck_assert_int_eq(run(&c, &w, &ops, model, false, &r, &e), -1);
		ck_assert_str_eq(e.msg, want);
	}
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * One op longer than SystemC's old clock (2^64 ps = 18,446,744,073,709,551
 * cycles of 1 ns), from memory stalls the closed form does not see. At
 * 64 GHz and 2^-8 GB/s, HBM moves 2^-14 B a cycle over 1,024 channels of
 * 2^-24 B/cycle each, with no latency and 2^30-byte interleaving. An add of
 * 2^29 elements on 2^20 lanes is one chunk: its 2^30 input bytes (two
 * operands) lie in one interleave block at address 0, on one channel: 2^54
 * cycles; 512 cycles on the vector unit; the 2^29 output bytes at 2^41,
 * again one channel: 2^53. In all 2^54 + 512 + 2^53 =
 * 27,021,597,764,223,488 cycles, inputs 2^54, vector 512, outputs 2^53. The
 * closed form, 1.5 x 2^30 B / 2^-14 B/cycle = 1.5 x 2^44, is well inside
 * the limits. (At 1 ps a tick the kernel failed when the output started.)
 */
START_TEST(stalls_past_the_old_clock_end)
{
	static const char *const slow[] = { "clock_ghz=64", "hbm.gbps=0.00390625", "hbm.channels=1024",
					    "hbm.latency_ns=0", "hbm.interleave_bytes=1073741824",
					    "vector.lanes=1048576", NULL };
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;

	th_config(&c, "lab_4x4", slow);
	th_lower("name: v\nbatch: 1\nlayers:\n  - {name: big, type: add, elements: 536870912}\n", &w, &ops);
	ck_assert_msg(run(&c, &w, &ops, MODEL_CYCLE, false, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.total.cycles, INT64_C(27021597764223488));
	ck_assert_int_eq(r.total.cat[CAT_INPUTS], INT64_C(1) << 54);
	ck_assert_int_eq(r.total.cat[CAT_VECTOR], 512);
	ck_assert_int_eq(r.total.cat[CAT_OUTPUTS], INT64_C(1) << 53);
	ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * Stalls past the margin: the run's sums stop at 2^62 cycles. At 64 GHz and
 * 2^-9 GB/s (2^-15 B/cycle over 1,024 channels of 2^-25 each, as above),
 * one add of 2^29 elements takes 2^55 (inputs) + 512 + 2^54 (outputs) =
 * 3 x 2^54 + 512 cycles in the engine, 1.5 x 2^45 by the closed form (85 of
 * them: about 2^52, inside 2^58). 85 adds: 255 x 2^54 + 85 x 512 =
 * 4,593,671,619,917,949,440 cycles, under 2^62 = 256 x 2^54; 86 adds pass
 * it, refused at the 86th op.
 */
START_TEST(stalls_past_the_run_limit)
{
	static const char *const slower[] = { "clock_ghz=64", "hbm.gbps=0.001953125", "hbm.channels=1024",
					      "hbm.latency_ns=0", "hbm.interleave_bytes=1073741824",
					      "vector.lanes=1048576", NULL };
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	struct err e;
	char *y = adds(85, "536870912"), want[1024];

	th_config(&c, "lab_4x4", slower);
	th_lower(y, &w, &ops);
	free(y);
	ck_assert_msg(run(&c, &w, &ops, MODEL_CYCLE, false, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.total.cycles, INT64_C(4593671619917949440));
	ck_assert_int_eq(th_cat_sum(&r.total), r.total.cycles);
	run_release(&r);
	oplist_release(&ops);
	workload_release(&w);

	y = adds(86, "536870912");
	th_lower(y, &w, &ops);
	free(y);
	ck_assert_int_eq(run(&c, &w, &ops, MODEL_CYCLE, false, &r, &e), -1);
	ck_assert_msg(e.kind == ERR_INPUT, "%s", e.msg);
	snprintf(want, sizeof want, "%s: expected a workload that takes at most 2^62 cycles in all, found more", w.file);
	ck_assert_str_eq(e.msg, want);
	oplist_release(&ops);
	workload_release(&w);
}
END_TEST

/*
 * Memory time past int64 in one op is a kernel failure, not a wrap. At
 * 100 GHz and 0.001 GB/s (10^-5 B/cycle over 1,024 channels) with 1 MiB
 * bursts, every transfer of an add on one lane (chunks of 1,024 elements:
 * 2 KiB in, 1 KiB out) is a whole burst on channel 0 (the inputs at 0 and
 * the outputs at 2^41 both map there with 2^30-byte interleaving):
 * 2^30 / 10^-5, about 1.07 x 10^14 cycles each, one after another. The
 * closed form (6 x 10^8 bytes: 6 x 10^13 cycles) is inside every limit, but
 * after about 86,000 transfers the channel's time passes 2^63: the memory
 * model answers INT64_MAX (a converted double would be undefined), the
 * vector unit waits to the kernel's last cycle, and its next wait fails.
 */
START_TEST(memory_past_int64_fails_the_kernel)
{
	struct run_opts o = { .dataflow = DF_WS, .model = MODEL_CYCLE };
	struct err e = { 0 };
	th_run_past_int64(&o, &e);
	ck_assert_str_eq(e.msg, "cycle 9223372036854775807: vector_0: expected a wait that ends by cycle "
				"9223372036854775807, found one of 1024 cycles");
}
END_TEST

Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *t = tcase_create("limits");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, fold_limit_n_passes_n_minus_1_fails);
	tcase_add_test(t, fold_limit_from_the_command_line);
	tcase_add_test(t, huge_gemm_on_tiny_array_refused_at_once);
	tcase_add_test(t, cycle_limit_n_passes_n_plus_1_fails);
	tcase_add_test(t, estimates_saturate);
	tcase_add_test(t, stalls_past_the_old_clock_end);
	tcase_add_test(t, stalls_past_the_run_limit);
	tcase_add_test(t, memory_past_int64_fails_the_kernel);
	suite_add_tcase(s, t);
	return s;
}
