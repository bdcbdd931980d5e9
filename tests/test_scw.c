/*
 * test_scw.c - the SystemC wrapper: kernels, threads, waits, events, semaphores, errors.
 * Each test runs in its own process (Check forks); tests that need a fresh
 * kernel make one, as a library caller would.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scw.h"
#include "tests.h"

struct pingpong {
	scw_sem *full, *empty;
	int64_t got[3];
	int n;
};

static void producer(void *arg)
{
	struct pingpong *p = arg;
	for (int i = 0; i < 3; i++) {
		scw_sem_take(p->empty, 1);
		scw_wait(5);                 /* 5 cycles to make each item */
		scw_sem_give(p->full, 1);
	}
}

static void consumer(void *arg)
{
	struct pingpong *p = arg;
	for (int i = 0; i < 3; i++) {
		scw_sem_take(p->full, 1);
		p->got[p->n++] = scw_now();
		scw_wait(2);                 /* 2 cycles to use it */
		scw_sem_give(p->empty, 1);
	}
}

/*
 * Runs the producer and consumer with a buffer of slots in k, from k's
 * current cycle; checks the cycles below relative to it.
 *
 * One slot: item 1 is ready at 5; the slot frees at 7, item 2 is ready at 12,
 * frees at 14, item 3 ready at 19, and the consumer ends at 21. With two slots
 * the producer runs ahead: ready at 5, 10, 15; the end is 17.
 */
static void pingpong_in(scw_kernel *k, int slots)
{
	struct pingpong p = { scw_sem_new(0), scw_sem_new(slots), { 0 }, 0 };
	struct err e = { 0 };
	int64_t t0 = scw_kernel_now(k);
	scw_spawn(k, "producer", producer, &p);
	scw_spawn(k, "consumer", consumer, &p);
	ck_assert_msg(scw_run(k, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(p.n, 3);
	if (slots == 1) {
		ck_assert_int_eq(p.got[0] - t0, 5);
		ck_assert_int_eq(p.got[1] - t0, 12);
		ck_assert_int_eq(p.got[2] - t0, 19);
		ck_assert_int_eq(scw_kernel_now(k) - t0, 21);
	} else {
		ck_assert_int_eq(p.got[1] - t0, 10);
		ck_assert_int_eq(p.got[2] - t0, 15);
		ck_assert_int_eq(scw_kernel_now(k) - t0, 17);
	}
	scw_sem_free(p.full);
	scw_sem_free(p.empty);
}

/* Two runs in one kernel: time keeps counting, durations are differences. */
START_TEST(semaphores_single_and_double_slot)
{
	struct err e = { 0 };
	scw_kernel *k = scw_kernel_new(&e);
	ck_assert_ptr_nonnull(k);
	pingpong_in(k, 1);
	ck_assert_int_eq(scw_kernel_now(k), 21);
	pingpong_in(k, 2);
	ck_assert_int_eq(scw_kernel_now(k), 21 + 17);
	scw_kernel_free(k);
}
END_TEST

struct evt {
	scw_event *ev;
	int64_t woke;
};

static void waiter(void *arg)
{
	struct evt *x = arg;
	scw_event_wait(x->ev);
	x->woke = scw_now();
}

static void notifier(void *arg)
{
	struct evt *x = arg;
	scw_wait_until(7);
	scw_event_notify(x->ev);
}

START_TEST(event_wakes_waiter)
{
	struct evt x = { scw_event_new(), -1 };
	struct err e = { 0 };
	scw_kernel *k = scw_kernel_new(&e);
	scw_spawn(k, "waiter", waiter, &x);
	scw_spawn(k, "notifier", notifier, &x);
	ck_assert_int_eq(scw_run(k, &e), 0);
	ck_assert_int_eq(x.woke, 7);
	scw_event_free(x.ev);
	scw_kernel_free(k);
}
END_TEST

struct count {
	int64_t value, step;
	int n;
};

static void counter(void *arg)
{
	struct count *c = arg;
	for (int i = 1; i <= c->n; i++) {
		scw_wait(c->step);
		c->value = i;
	}
}

/* A kernel error becomes a tpusim error naming the cycle and the component; nothing is thrown into C. */
START_TEST(kernel_error_is_reported)
{
	struct err e = { 0 };
	struct evt x = { scw_event_new(), -1 };
	scw_kernel *k = scw_kernel_new(&e);
	scw_spawn(k, "notifier", notifier, &x);
	ck_assert_int_eq(scw_run(k, &e), 0);
	scw_stop(k);
	ck_assert_int_eq(scw_run(k, &e), -1);
	ck_assert_int_eq(e.kind, ERR_SIM);
	ck_assert_str_eq(e.msg, "cycle 7: kernel: sc_start called after sc_stop has been called");
	scw_event_free(x.ev);
	scw_kernel_free(k);
}
END_TEST

/* Waits 3 cycles, then asks for a wait past the last cycle SystemC's clock can count. */
static void overrun(void *arg)
{
	(void)arg;
	scw_wait(3);
	scw_wait(INT64_MAX);
}

static void overrun_by_one(void *arg)
{
	(void)arg;
	scw_wait(1);
}

/* Waits on a semaphore nobody gives: still waiting when its kernel is freed. */
static void stuck(void *arg)
{
	scw_sem_take(arg, 1);
}

/* A kernel with an overrunning thread and a stuck one: its run fails at cycle 3. */
static void failing_kernel(void)
{
	struct err e = { 0 };
	scw_sem *never = scw_sem_new(0);
	scw_kernel *k = scw_kernel_new(&e);
	ck_assert_ptr_nonnull(k);
	scw_spawn(k, "stuck", stuck, never);
	scw_spawn(k, "overrun", overrun, NULL);
	ck_assert_int_eq(scw_run(k, &e), -1);
	ck_assert_int_eq(e.kind, ERR_SIM);
	/* One tick a cycle: the clock counts to INT64_MAX, and 3 + INT64_MAX is past it. */
	ck_assert_str_eq(e.msg, "cycle 3: overrun_0: expected a wait that ends by cycle 9223372036854775807, "
				"found one of 9223372036854775807 cycles");
	/* The kernel keeps its failure; each kernel numbers its threads from 0. */
	memset(&e, 0, sizeof e);
	ck_assert_int_eq(scw_run(k, &e), -1);
	ck_assert_str_eq(e.msg, "cycle 3: overrun_0: expected a wait that ends by cycle 9223372036854775807, "
				"found one of 9223372036854775807 cycles");
	scw_sem_free(never);
	scw_kernel_free(k);
}

/*
 * A run that fails inside a thread leaves the next kernel unaffected: it
 * starts at cycle 0 and gives the hand-computed cycles.
 */
START_TEST(failed_run_then_fresh_kernel)
{
	struct err e = { 0 };
	scw_kernel *k;
	failing_kernel();
	k = scw_kernel_new(&e);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(scw_kernel_now(k), 0);
	ck_assert_int_eq(scw_now(), 0);
	pingpong_in(k, 1);
	ck_assert_int_eq(scw_kernel_now(k), 21);
	scw_kernel_free(k);
}
END_TEST

/* Kernels one after another (and side by side) each start at cycle 0 and keep their own time. */
START_TEST(kernels_start_at_zero)
{
	struct err e = { 0 };
	struct count c = { 0, 10, 4 };
	struct evt x = { scw_event_new(), -1 };
	scw_kernel *a = scw_kernel_new(&e), *b;
	scw_spawn(a, "counter", counter, &c);
	ck_assert_int_eq(scw_run(a, &e), 0);
	ck_assert_int_eq(scw_kernel_now(a), 40);
	b = scw_kernel_new(&e);
	ck_assert_int_eq(scw_kernel_now(b), 0);
	scw_spawn(b, "waiter", waiter, &x);
	scw_spawn(b, "notifier", notifier, &x);
	ck_assert_int_eq(scw_run(b, &e), 0);
	ck_assert_int_eq(x.woke, 7);                    /* scw_wait_until(7) in b: cycle 7 of b */
	ck_assert_int_eq(scw_kernel_now(a), 40);
	scw_kernel_free(a);
	scw_event_free(x.ev);
	scw_kernel_free(b);
	b = scw_kernel_new(&e);
	ck_assert_int_eq(scw_kernel_now(b), 0);
	pingpong_in(b, 2);
	ck_assert_int_eq(scw_kernel_now(b), 17);
	scw_kernel_free(b);
}
END_TEST

/* Bytes the C heap holds (small blocks and mmap'd ones). */
static int64_t heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();
	return (int64_t)(m.uordblks + m.hblkhd);
}

/* The process's virtual size in bytes: SystemC maps each thread's stack on its own. */
static int64_t mapped_bytes(void)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
	fclose(f);
	return (int64_t)pages * 4096;
}

/*
 * 100 failed kernels in a row, each with a thread still waiting when it is
 * freed, hold no more memory after the 100th than after the 10th. A kernel left behind keeps its context (about
 * 7 KiB of heap: 600 KiB for 90 kernels) and the waiting thread's 256 KiB
 * stack (22 MiB). Under the sanitizers the heap is not glibc's; the mappings
 * still count, and LeakSanitizer checks the heap at exit.
 */
START_TEST(hundred_kernels_do_not_accumulate)
{
	int64_t heap10 = 0, mapped10 = 0;
	for (int i = 1; i <= 100; i++) {
		failing_kernel();
		if (i == 10)
			heap10 = heap_bytes(), mapped10 = mapped_bytes();
	}
	ck_assert_msg(heap_bytes() - heap10 < 256 * 1024, "heap: %lld bytes after 10 kernels, %lld after 100",
		      (long long)heap10, (long long)heap_bytes());
	ck_assert_msg(mapped_bytes() - mapped10 < 4 * 1024 * 1024, "mapped: %lld bytes after 10 kernels, %lld after 100",
		      (long long)mapped10, (long long)mapped_bytes());
}
END_TEST

/* Where a thread's waits got it: arg is the array of cycles to wait until, ending in -1. */
static void wait_untils(void *arg)
{
	int64_t *c = arg;
	for (; *c >= 0; c++) {
		scw_wait_until(*c);
		*c = scw_now();
	}
}

/*
 * The clock does not wrap. At a resolution of 1 ps (SystemC's default), a
 * 1 ns cycle ended the clock at 2^64 ps = 18,446,744,073,709,551 cycles and
 * a longer wait failed. One tick a cycle: a thread waits to 2^62 (past the
 * old end), to INT64_MAX - 1, to INT64_MAX (the last cycle: n passes), and
 * one more cycle (n + 1 fails the kernel, at INT64_MAX, naming the wait).
 */
START_TEST(clock_counts_to_int64_max)
{
	struct err e = { 0 };
	int64_t at[] = { INT64_C(1) << 62, INT64_MAX - 1, INT64_MAX, -1 };
	scw_kernel *k = scw_kernel_new(&e);
	ck_assert_ptr_nonnull(k);
	scw_spawn(k, "edge", wait_untils, at);
	ck_assert_msg(scw_run(k, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(at[0], INT64_C(1) << 62);
	ck_assert_int_eq(at[1], INT64_MAX - 1);
	ck_assert_int_eq(at[2], INT64_MAX);
	ck_assert_int_eq(scw_kernel_now(k), INT64_MAX);
	scw_spawn(k, "over", overrun_by_one, NULL);
	ck_assert_int_eq(scw_run(k, &e), -1);
	ck_assert_str_eq(e.msg, "cycle 9223372036854775807: over_0: expected a wait that ends by cycle "
				"9223372036854775807, found one of 1 cycles");
	scw_kernel_free(k);
}
END_TEST

Suite *scw_suite(void)
{
	Suite *s = suite_create("scw");
	TCase *t = tcase_create("scw");
	tcase_add_test(t, semaphores_single_and_double_slot);
	tcase_add_test(t, event_wakes_waiter);
	tcase_add_test(t, kernel_error_is_reported);
	tcase_add_test(t, failed_run_then_fresh_kernel);
	tcase_add_test(t, kernels_start_at_zero);
	tcase_add_test(t, hundred_kernels_do_not_accumulate);
	tcase_add_test(t, clock_counts_to_int64_max);
	suite_add_tcase(s, t);
	return s;
}
