/*
 * test_scw.c - the SystemC wrapper: threads, waits, events, semaphores, errors.
 * Each test runs in its own process (Check forks), so each has a fresh kernel.
 */
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
 * One slot: item 1 is ready at 5; the slot frees at 7, item 2 is ready at 12,
 * frees at 14, item 3 ready at 19, and the consumer ends at 21. With two slots
 * the producer runs ahead: ready at 5, 10, 15; the end is 17.
 */
START_TEST(semaphores_single_and_double_slot)
{
	for (int slots = 1; slots <= 2; slots++) {
		struct pingpong p = { scw_sem_new(0), scw_sem_new(slots), { 0 }, 0 };
		struct err e = { 0 };
		int64_t t0 = scw_now();
		scw_spawn("producer", producer, &p);
		scw_spawn("consumer", consumer, &p);
		ck_assert_int_eq(scw_run(&e), 0);
		ck_assert_int_eq(p.n, 3);
		if (slots == 1) {
			ck_assert_int_eq(p.got[0] - t0, 5);
			ck_assert_int_eq(p.got[1] - t0, 12);
			ck_assert_int_eq(p.got[2] - t0, 19);
			ck_assert_int_eq(scw_now() - t0, 21);
		} else {
			ck_assert_int_eq(p.got[1] - t0, 10);
			ck_assert_int_eq(p.got[2] - t0, 15);
			ck_assert_int_eq(scw_now() - t0, 17);
		}
		scw_sem_free(p.full);
		scw_sem_free(p.empty);
	}
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
	scw_spawn("waiter", waiter, &x);
	scw_spawn("notifier", notifier, &x);
	ck_assert_int_eq(scw_run(&e), 0);
	ck_assert_int_eq(x.woke, 7);
	scw_event_free(x.ev);
}
END_TEST

static int64_t traced;

static void counter(void *arg)
{
	(void)arg;
	for (int i = 1; i <= 4; i++) {
		scw_wait(10);
		traced = i;
	}
}

/* A traced variable shows up in the VCD with each of its values. */
START_TEST(vcd_traces_c_variable)
{
	struct err e = { 0 };
	char *dir = th_tmpdir(), base[4200], path[4300], line[256];
	int values = 0;
	FILE *f;
	snprintf(base, sizeof base, "%s/trace", dir);
	ck_assert_int_eq(scw_trace_open(base, &e), 0);
	scw_trace_i64(&traced, "traced");
	scw_spawn("counter", counter, NULL);
	ck_assert_int_eq(scw_run(&e), 0);
	scw_trace_close();
	ck_assert_int_eq(scw_now(), 40);
	snprintf(path, sizeof path, "%s.vcd", base);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f))
		if (line[0] == 'b')          /* a binary value change */
			values++;
	fclose(f);
	ck_assert_int_ge(values, 4);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A kernel error becomes a tpusim error naming the cycle and the component; nothing is thrown into C. */
START_TEST(kernel_error_is_reported)
{
	struct err e = { 0 };
	struct evt x = { scw_event_new(), -1 };
	scw_spawn("notifier", notifier, &x);
	ck_assert_int_eq(scw_run(&e), 0);
	scw_stop();
	ck_assert_int_eq(scw_run(&e), -1);
	ck_assert_int_eq(e.kind, ERR_SIM);
	ck_assert_str_eq(e.msg, "cycle 7: kernel: sc_start called after sc_stop has been called");
	scw_event_free(x.ev);
}
END_TEST

Suite *scw_suite(void)
{
	Suite *s = suite_create("scw");
	TCase *t = tcase_create("scw");
	tcase_add_test(t, semaphores_single_and_double_slot);
	tcase_add_test(t, event_wakes_waiter);
	tcase_add_test(t, vcd_traces_c_variable);
	tcase_add_test(t, kernel_error_is_reported);
	suite_add_tcase(s, t);
	return s;
}
