/*
 * test_nomem.c - a library run under allocation failure. One small GEMM
 * workload through tpusim_run_json, once counting its allocations (the hook
 * of tests/failmem.cpp: tpusim's C allocations and every C++ new, SystemC's
 * included), then once for every n of that count with the nth allocation
 * failing (once; then again with it and every later one failing, so that
 * error paths that allocate are tried too): each run returns 3 (out of
 * memory) with the one error line
 * "... out of memory" (or no text at all, when even that could not be
 * allocated), never crashes, and, under ASan (make SAN=1), leaves no block
 * unreachable after it returns (a leak check after every n). No failure is
 * shrugged off, the reuse cache's included.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

#include "tests.h"
#include "tpusim.h"

static const char workload[] = "name: g\nbatch: 1\nlayers:\n"
			       "  - {name: mm, type: matmul, m: 10, k: 6, n: 5, a: activation, b: weight}\n"
			       "  - {name: act, type: relu, elements: 50}\n";

static const char *const models[] = { "cycle", "analytic", "functional" };
#define NMODELS (int)(sizeof models / sizeof *models)

/* The request for model (in buf), with the workload written under dir. */
static void request(char *buf, size_t size, const char *dir, const char *model)
{
	char *w = th_write(dir, "g.yaml", workload);
	snprintf(buf, size, "{\"configs\": [\"configs/lab_4x4.yaml\"], \"workload\": \"%s\", \"model\": \"%s\"}", w,
		 model);
	free(w);
}

/* Appends one line to buf (while it fits); returns 1. */
__attribute__((format(printf, 3, 4))) static int note(char *buf, size_t *used, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (*used < 8000) {
		int w = vsnprintf(buf + *used, 8192 - *used, fmt, ap);
		if (w > 0)
			*used += (size_t)w < 8192 - *used ? (size_t)w : 8191 - *used;
	}
	va_end(ap);
	return 1;
}

/*
 * The test's own blocks, held where LeakSanitizer looks: once SystemC has
 * switched stacks, the main stack is not scanned, and what only it points to
 * would be reported.
 */
static char *dir, *want;

/* Loop index _i: the model (_i % NMODELS); the nth allocation failing once, or for good from then on. */
START_TEST(every_allocation_fails)
{
	const char *model = models[_i % NMODELS];
	bool persist = _i >= NMODELS;
	char req[4400], *result = NULL, bad[8192] = "";
	size_t used = 0;
	long total, got;
	int rc, nfail = 0;

	dir = th_tmpdir();
	request(req, sizeof req, dir, model);
	/* The same run twice untouched, so that whatever SystemC sets up once per process is set up. */
	for (int i = 0; i < 2; i++) {
		th_alloc_arm(0, false);
		rc = tpusim_run_json(req, &result);
		total = th_alloc_disarm();
		ck_assert_msg(rc == 0, "%s: exit %d: %s", model, rc, result ? result : "(no text)");
		if (i == 0)
			want = result;
		else {
			ck_assert_str_eq(result, want);
			tpusim_free(result);
		}
	}
	ck_assert_int_eq(LEAK_CHECK(), 0);
	/* A count too small to mean the hook sees the run (the config's document alone takes more). */
	ck_assert_msg(total > 20, "%s: only %ld allocations counted", model, total);

	for (long n = 1; n <= total; n++) {
		result = NULL;
		th_alloc_arm(n, persist);
		rc = tpusim_run_json(req, &result);
		got = th_alloc_disarm();
		size_t len = result ? strlen(result) : 0;
		if (got < n)
			nfail += note(bad, &used, "allocation %ld was never reached (%ld counted)\n", n, got);
		else if (rc != 3 || (result && (len < 13 || strcmp(result + len - 13, "out of memory") ||
						strchr(result, '\n'))))
			nfail += note(bad, &used, "allocation %ld: exit %d: %.120s\n", n, rc,
				      result ? result : "(no text)");
		tpusim_free(result);
		if (LEAK_CHECK())
			nfail += note(bad, &used, "allocation %ld: leaks (above)\n", n);
	}
	ck_assert_msg(!nfail, "%s: %d of %ld runs with allocations failing (%s) went wrong (wanted exit 3, \"... out of "
		      "memory\", no leak):\n%s", model, nfail, total, persist ? "the nth and every later one" : "the nth once",
		      bad);
	/* The process is whole after all that: the run gives its answer again. */
	rc = tpusim_run_json(req, &result);
	ck_assert_msg(rc == 0, "%s: after the failures: exit %d: %s", model, rc, result ? result : "(no text)");
	ck_assert_str_eq(result, want);
	fprintf(stderr, "nomem: %s: %ld allocations, each failing %s: exit 3 for every one\n", model, total,
		persist ? "for good" : "once");
	tpusim_free(result);
	tpusim_free(want);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *nomem_suite(void)
{
	Suite *s = suite_create("nomem");
	TCase *t = tcase_create("nomem");
	tcase_set_timeout(t, 900);
	tcase_add_loop_test(t, every_allocation_fails, 0, 2 * NMODELS);
	suite_add_tcase(s, t);
	return s;
}
