/*
 * test_memory.c - off-chip memory through its interface: the channel model's
 * completion times by hand, the ideal model, and back-pressure from a
 * test-only model that the engine must wait for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "memory.h"
#include "tests.h"

/* Issues a request that must be accepted, and returns its completion, which must be known at once. */
static int64_t complete_at(mem *m, int64_t now, uint64_t addr, int64_t bytes, bool write)
{
	uint64_t t;
	int64_t retry = -1, ask = -1, done;
	ck_assert(mem_issue(m, now, addr, bytes, write, &t, &retry));
	done = mem_done(m, t, now, &ask);
	ck_assert_int_ne(done, MEM_NOT_YET);
	ck_assert_int_ge(done, now);
	return done;
}

/*
 * TPU v1's DDR3: 34 GB/s at 700 MHz over 2 channels is 24.2857 B per cycle
 * each; 64-byte bursts and interleaving; 100 ns is 70 cycles of latency.
 *  - 64 KiB at 0: 1,024 lines, 512 per channel = 32,768 B in 1,349.27
 *    cycles; the last byte is in at 1,350 + 70 = 1,420.
 *  - 64 KiB more, also issued at 0: each channel is busy until 1,349.27, and
 *    then 1,349.27 more: 2,698.53, so 2,699 + 70 = 2,769 (bandwidth, not a
 *    second latency).
 *  - On idle channels, 100 B at address 32 cover lines 0-2: channel 0 holds
 *    bytes 32-63 and 128-131 (36 B, one burst), channel 1 bytes 64-127 (one
 *    burst): 64 / 24.2857 = 2.64 cycles, so 3 + 70 = 73.
 */
START_TEST(channels_tpu_v1_by_hand)
{
	struct config c;
	mem *m;
	th_config(&c, "tpu_v1", NULL);
	m = mem_new(&c.arch.hbm, c.arch.clock_ghz, false);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(mem_name(m), "channels");
	ck_assert(fabs(mem_bytes_per_cycle(m) - 34.0 / 0.7) < 1e-9);
	ck_assert_int_eq(complete_at(m, 0, 0, 65536, false), 1420);
	ck_assert_int_eq(complete_at(m, 0, 65536, 65536, false), 2769);
	ck_assert_int_eq(mem_read_bytes(m), 131072);
	ck_assert_int_eq(mem_requests(m), 2);
	mem_reset(m);
	ck_assert_int_eq(mem_read_bytes(m), 0);
	ck_assert_int_eq(mem_requests(m), 0);
	ck_assert_int_eq(complete_at(m, 0, 32, 100, false), 73);
	mem_free(m);
}
END_TEST

/*
 * lab_4x4: 8 B per cycle on one channel, 8-byte bursts, 50 cycles of latency.
 * 10 B written at cycle 5 take two bursts (2 cycles): 7 + 50 = 57. One byte
 * more at cycle 5 waits for the channel (free at 7), takes one burst: 58.
 * A zero-byte request completes when issued.
 */
START_TEST(channels_lab_by_hand)
{
	struct config c;
	mem *m;
	th_config(&c, "lab_4x4", NULL);
	m = mem_new(&c.arch.hbm, c.arch.clock_ghz, false);
	ck_assert_int_eq(complete_at(m, 5, 0, 10, true), 57);
	ck_assert_int_eq(complete_at(m, 5, 10, 1, true), 58);
	ck_assert_int_eq(complete_at(m, 9, 0, 0, false), 9);
	ck_assert_int_eq(mem_written_bytes(m), 11);
	ck_assert_int_eq(mem_read_bytes(m), 0);
	ck_assert_int_eq(mem_requests(m), 3);
	mem_free(m);
}
END_TEST

/* The ideal memory completes every request the cycle it is issued, by hbm.model or by --ideal-memory. */
/*
 * The channel model's counters by hand: 128 B a cycle over 2 channels (64
 * each), 64-byte interleaving and bursts, no latency. 1,000 bytes at 0 cover
 * blocks 0..15: channel 0 the even ones (512 B, 8 bursts), channel 1 the odd
 * ones, the last 40 bytes long (488 B, rounded up to 8 bursts); both busy to
 * cycle 8. Then 64 bytes at 0, issued at cycle 0, wait 8 cycles for channel
 * 0 and take 1 burst: 2 requests, 17 bursts, 8 cycles of waiting.
 */
START_TEST(channels_counters_by_hand)
{
	struct config c;
	int64_t v[MEM_MAX_COUNTERS];
	uint64_t ticket;
	int64_t retry;
	th_config(&c, "lab_4x4", (const char *const[]){ "clock_ghz=1", "hbm.gbps=128", "hbm.channels=2",
						       "hbm.interleave_bytes=64", "hbm.burst_bytes=64", "hbm.latency_ns=0",
						       NULL });
	mem *m = mem_new(&c.arch.hbm, c.arch.clock_ghz, false);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(mem_counter_at(mem_class(m), 0)->name, "requests");
	ck_assert_str_eq(mem_counter_at(mem_class(m), 1)->name, "bursts");
	ck_assert_str_eq(mem_counter_at(mem_class(m), 2)->name, "channel_wait_cycles");
	ck_assert_ptr_null(mem_counter_at(mem_class(m), 3));
	ck_assert(mem_issue(m, 0, 0, 1000, false, &ticket, &retry));
	ck_assert_int_eq(mem_done(m, ticket, 0, &retry), 8);
	mem_counts(m, v);
	ck_assert_int_eq(v[0], 1);
	ck_assert_int_eq(v[1], 16);
	ck_assert_int_eq(v[2], 0);
	ck_assert(mem_issue(m, 0, 0, 64, true, &ticket, &retry));
	ck_assert_int_eq(mem_done(m, ticket, 0, &retry), 9);
	mem_counts(m, v);
	ck_assert_int_eq(v[0], 2);
	ck_assert_int_eq(v[1], 17);
	ck_assert_int_eq(v[2], 8);
	mem_reset(m);
	mem_counts(m, v);
	ck_assert_int_eq(v[0] + v[1] + v[2] + v[3], 0);
	mem_free(m);
	/* The ideal memory counts only its requests. */
	ck_assert_ptr_null(mem_counter_at(mem_model(&c.arch.hbm, true), 1));
}
END_TEST

START_TEST(ideal_completes_at_issue)
{
	const char *sets[] = { "hbm.model=ideal", NULL };
	struct config c;
	struct err e = { 0 };
	mem *m[2];
	th_config(&c, "tpu_v1", NULL);
	m[0] = mem_new(&c.arch.hbm, c.arch.clock_ghz, true);
	th_config(&c, "tpu_v1", sets);
	m[1] = mem_new(&c.arch.hbm, c.arch.clock_ghz, false);
	for (int i = 0; i < 2; i++) {
		ck_assert_str_eq(mem_name(m[i]), "ideal");
		ck_assert_int_eq(complete_at(m[i], 123, 0, 1 << 30, false), 123);
		ck_assert_int_eq(complete_at(m[i], 123, 0, 1 << 30, true), 123);
		ck_assert_int_eq(complete_at(m[i], 124, 7, 64, false), 124);
		ck_assert_int_eq(mem_read_bytes(m[i]), (1 << 30) + 64);
		ck_assert_int_eq(mem_written_bytes(m[i]), 1 << 30);
		ck_assert(isinf(mem_bytes_per_cycle(m[i])));
		mem_free(m[i]);
	}
	ck_assert_int_eq(config_set(&c, "hbm.model=queue", &e), -1);
	ck_assert_str_eq(e.msg, "--set:1:11: hbm.model: expected one of channels, ideal, found \"queue\"");
}
END_TEST

/*
 * A test-only model with a queue of one: it serves one request at a time at
 * 4 bytes a cycle (at least one cycle each), refuses a request that comes
 * while another is in service (try again when that one ends), and tells a
 * request's completion only once it has completed. Its ticket is the cycle
 * the request completes.
 */
struct queue1 {
	int64_t busy_until;
};

/* What the last queue created saw (it is freed with its engine): refusals, "not yet" answers, cycles busy. */
static struct {
	int64_t refused, not_yet, busy_cycles;
} seen;

static void *q1_create(const struct hbm_params *p, double clock_ghz)
{
	(void)p, (void)clock_ghz;
	memset(&seen, 0, sizeof seen);
	return calloc(1, sizeof(struct queue1));
}

static void q1_destroy(void *s)
{
	free(s);
}

static void q1_reset(void *s)
{
	((struct queue1 *)s)->busy_until = 0;
}

static bool q1_issue(void *s, int64_t now, uint64_t addr, int64_t bytes, bool write, uint64_t *ticket, int64_t *retry)
{
	struct queue1 *q = s;
	int64_t service = bytes > 4 ? (bytes + 3) / 4 : 1;
	(void)addr, (void)write;
	if (now < q->busy_until) {
		seen.refused++;
		*retry = q->busy_until;
		return false;
	}
	q->busy_until = now + service;
	seen.busy_cycles += service;
	*ticket = (uint64_t)q->busy_until;
	return true;
}

static int64_t q1_done(void *s, uint64_t ticket, int64_t now, int64_t *ask)
{
	(void)s;
	if (now < (int64_t)ticket) {
		seen.not_yet++;
		*ask = (int64_t)ticket;
		return MEM_NOT_YET;
	}
	return (int64_t)ticket;
}

static double q1_bytes_per_cycle(const struct hbm_params *p, double clock_ghz)
{
	(void)p, (void)clock_ghz;
	return 4;
}

static int64_t q1_latency_cycles(const struct hbm_params *p, double clock_ghz)
{
	(void)p, (void)clock_ghz;
	return 0;
}

static const struct mem_ops queue1_ops = {
	"queue1", q1_create, q1_destroy, q1_reset, q1_issue, q1_done, q1_bytes_per_cycle, q1_latency_cycles, NULL, NULL, NULL
};

/* The interface passes refusals and "not yet" through and counts only what was accepted. */
START_TEST(refusal_and_not_yet)
{
	struct config c;
	uint64_t t, t2;
	int64_t retry = -1, ask = -1;
	mem *m;
	th_config(&c, "lab_4x4", NULL);
	m = mem_new_ops(&queue1_ops, &c.arch.hbm, c.arch.clock_ghz);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(mem_name(m), "queue1");
	ck_assert(mem_issue(m, 0, 0, 40, false, &t, &retry));           /* 10 cycles: done at 10 */
	ck_assert(!mem_issue(m, 3, 40, 4, true, &t2, &retry));
	ck_assert_int_eq(retry, 10);
	ck_assert_int_eq(mem_done(m, t, 3, &ask), MEM_NOT_YET);
	ck_assert_int_eq(ask, 10);
	ck_assert_int_eq(mem_done(m, t, 10, &ask), 10);
	ck_assert(mem_issue(m, 10, 40, 4, true, &t2, &retry));
	ck_assert_int_eq(mem_done(m, t2, 11, &ask), 11);
	ck_assert_int_eq(mem_read_bytes(m), 40);
	ck_assert_int_eq(mem_written_bytes(m), 4);
	ck_assert_int_eq(mem_requests(m), 2);
	mem_free(m);
}
END_TEST

/* One op on lab_4x4's engine, with the configured memory or with the queue of one. */
static struct result run_op(const struct op *o, bool queue1)
{
	struct config c;
	struct result r;
	struct err e = { 0 };
	engine *en;
	th_config(&c, "lab_4x4", NULL);
	en = engine_new(&c, false, &e);
	ck_assert_ptr_nonnull(en);
	if (queue1)
		engine_use_memory(en, mem_new_ops(&queue1_ops, &c.arch.hbm, c.arch.clock_ghz));
	ck_assert_msg(th_engine(en, &c, o, DF_WS, false, &r, &e) == 0, "%s", e.msg);
	engine_free(en);
	ck_assert_int_eq(th_cat_sum(&r), r.cycles);
	return r;
}

/*
 * The engine waits out every refusal and every "not yet" and still moves the
 * same bytes as with the channel model; since the queue serves one request at
 * a time, the op takes at least the queue's busy cycles. A GEMM's load and
 * store queues contend for the queue (refusals); the vector unit's single
 * thread waits for each request to complete before it issues the next.
 */
START_TEST(engine_waits_for_refusing_memory)
{
	struct op ops[2];
	ops[0] = th_gemm(64, 48, 40, 1);
	memset(&ops[1], 0, sizeof ops[1]);
	ops[1].kind = OP_VEC;
	ops[1].vec = VEC_SOFTMAX;
	ops[1].in_elems = ops[1].out_elems = 20000;
	ops[1].lane_ops = 5 * ops[1].out_elems;
	for (int i = 0; i < 2; i++) {
		struct result want = run_op(&ops[i], false);
		struct result got = run_op(&ops[i], true);
		ck_assert_int_gt(want.hbm_read_bytes, 0);
		ck_assert_int_gt(want.hbm_write_bytes, 0);
		ck_assert_int_eq(got.hbm_read_bytes, want.hbm_read_bytes);
		ck_assert_int_eq(got.hbm_write_bytes, want.hbm_write_bytes);
		if (i == 0)
			ck_assert_msg(seen.refused > 0, "refused %lld not_yet %lld", (long long)seen.refused, (long long)seen.not_yet);
		ck_assert_int_gt(seen.not_yet, 0);
		ck_assert_int_ge(got.cycles, seen.busy_cycles);
		ck_assert_int_gt(got.cycles, want.cycles);
	}
}
END_TEST

Suite *memory_suite(void)
{
	Suite *s = suite_create("memory");
	TCase *t = tcase_create("memory");
	tcase_add_test(t, channels_tpu_v1_by_hand);
	tcase_add_test(t, channels_lab_by_hand);
	tcase_add_test(t, channels_counters_by_hand);
	tcase_add_test(t, ideal_completes_at_issue);
	tcase_add_test(t, refusal_and_not_yet);
	tcase_add_test(t, engine_waits_for_refusing_memory);
	suite_add_tcase(s, t);
	return s;
}
