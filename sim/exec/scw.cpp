/*
 * scw.cpp - SystemC kernels, thread processes, events and semaphores for C (see scw.h).
 *
 * Each kernel owns a sc_simcontext. SystemC keeps the context it works in in
 * a global (sc_curr_simcontext); every entry point that names a kernel makes
 * its context current first. Deleting a context (SystemC 2.3.4) frees its
 * processes, its scheduler and its registries: kernel after kernel, the
 * process does not grow (tests/test_scw.c). One exception: the threads of
 * an engine run that failed inside the kernel stay suspended, and some of
 * their stack mappings outlive the context (a few per failed run). Such a
 * failure is a model violation, which user input should not cause (run.c
 * refuses runs too long to count before they start). What must not outlive
 * a context, because it points into it: events used in it (freed by their
 * owners first, see scw.h).
 *
 * Time: each context's resolution is set to 1 ns as it is created, before
 * any sc_time exists in it (SystemC 2.3 allows it only then), so one cycle
 * is one tick and the 64-bit clock counts 2^64 - 1 cycles, more than
 * int64_t: the last cycle a kernel reaches is INT64_MAX. A wait that would
 * end past it fails the kernel (scw_wait); time never wraps.
 */
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "scw.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

using namespace sc_core;

/*
 * First thing in a handler that catches an exception outside the kernel's
 * threads (make SAN=1 only). Once SystemC has switched stacks, ASan no longer
 * knows which stack is running and skips clearing the frames an exception
 * unwound ("ignoring requested __asan_handle_no_return"); their stale
 * redzones would be reported as overflows by the next calls. The shadow of
 * the 256 KiB below this frame is cleared by hand (only the shadow is
 * written, never the stack itself).
 */
static inline void caught(void)
{
#if defined(__SANITIZE_ADDRESS__)
	char *here = (char *)__builtin_frame_address(0);
	__asan_unpoison_memory_region(here - 262144, 262144);
#endif
}

/* libsystemc's own main() refers to sc_main; tpusim has its own main and never calls this. */
__attribute__((visibility("default"))) int sc_main(int, char **)
{
	return 0;
}

struct scw_kernel {
	sc_simcontext *ctx;
	std::string failure;        /* the first error raised inside one of its threads */
	bool nomem;                 /* that error: memory ran out (failure says where) */
	sc_dt::uint64 tick;         /* one cycle (1 ns) in the context's time resolution: 1 */
};

/* An event binds to the context of the first thread that waits on it or notifies it. */
struct scw_event {
	sc_event *ev;
};

struct scw_sem {
	int64_t count;
	sc_event *changed;          /* NULL until a thread first waits */
};

static scw_kernel *running;      /* the kernel inside scw_run, else NULL */

/* Whether the running kernel has failed: a thread that would wait then parks instead (park), for good. */
static bool failed()
{
	return running && (!running->failure.empty() || running->nomem);
}

static void enter(const scw_kernel *k)
{
	sc_curr_simcontext = k->ctx;
}

/* One cycle in the current context's time resolution: the running kernel's, kept, or worked out. */
static sc_dt::uint64 tick(void)
{
	return running ? running->tick : sc_time(1, SC_NS).value();
}

/* SystemC time to cycles (one cycle is 1 ns), in the current context's resolution; at most INT64_MAX. */
static int64_t cycles(const sc_time &t)
{
	sc_dt::uint64 c = t.value() / tick();
	return c > (sc_dt::uint64)SCW_LAST_CYCLE ? SCW_LAST_CYCLE : (int64_t)c;
}

/*
 * Keeps an exception from unwinding through C frames: record it and stop the
 * kernel. what NULL: memory ran out (the failure is then "cycle N: thread",
 * and scw_run makes it an out-of-memory error). Without the memory to spell
 * the failure out, it is "out of memory" alone.
 */
static void fail_in_thread(const char *what)
{
	SIM_ASSERT(running);
	if (running->failure.empty() && !running->nomem) {
		char buf[64];
		snprintf(buf, sizeof buf, "cycle %lld: ", (long long)cycles(sc_time_stamp()));
		running->nomem = !what;
		try {
			running->failure = std::string(buf) + sc_get_current_process_handle().name() + (what ? ": " : "") +
					   (what ? what : "");
		} catch (const std::bad_alloc &) {
			running->failure.clear();
			running->nomem = true;
		}
	}
	sc_stop();
}

/*
 * A thread of a failed kernel never runs on: where it would wait (or where
 * its wait failed), it waits, for good, for nothing; its kernel is stopped.
 * Only the unwinding of the kernel's end (sc_unwind_exception) takes it
 * out. So no thread acts on state that the failure left half made (a memory
 * request never collected, a token never given).
 */
static void park()
{
	for (;;) {
		try {
			wait();
		} catch (const std::bad_alloc &) {
		}
	}
}

#define GUARD(body) \
	try { \
		body; \
	} catch (const sc_report &r) { \
		fail_in_thread(r.get_msg() && *r.get_msg() ? r.get_msg() : r.get_msg_type()); \
	} catch (const std::bad_alloc &) { \
		fail_in_thread(NULL); \
		park(); \
	} catch (const std::exception &x) { \
		fail_in_thread(x.what()); \
	}

/* Report handling is process-wide configuration, not run state: set once. */
static void quiet_kernel()
{
	static bool done;
	if (done)
		return;
	done = true;
	sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);
	sc_report_handler::set_actions(SC_WARNING, SC_DO_NOTHING);
}

/* An error outside k's threads (spawning): k's next run reports it. what NULL: memory ran out. */
static void fail_outside(scw_kernel *k, const char *where, const char *what)
{
	if (!k->failure.empty() || k->nomem)
		return;
	k->nomem = !what;
	try {
		k->failure = "cycle " + std::to_string(scw_kernel_now(k)) + ": " + where + (what ? ": " : "") +
			     (what ? what : "");
	} catch (const std::bad_alloc &) {
		k->failure.clear();
		k->nomem = true;
	}
}

/* k's failure as an error: out of memory (where known, "cycle N: thread: out of memory"), or a simulation error. */
static int kernel_error(const scw_kernel *k, struct err *e)
{
	if (k->nomem)
		return err_nomem(e, k->failure.empty() ? NULL : k->failure.c_str());
	return err_sim(e, "%s", k->failure.c_str());
}

static void trampoline(scw_fn fn, void *arg)
{
	fn(arg);
}

extern "C" scw_kernel *scw_kernel_new(struct err *e)
{
	scw_kernel *k = new (std::nothrow) scw_kernel;
	if (!k) {
		err_nomem(e, NULL);
		return NULL;
	}
	k->nomem = false;
	try {
		quiet_kernel();
		k->ctx = new sc_simcontext;
	} catch (...) {
		caught();
		delete k;
		err_nomem(e, NULL);
		return NULL;
	}
	enter(k);
	try {
		sc_set_time_resolution(1, SC_NS);
		k->tick = sc_time(1, SC_NS).value();
	} catch (const sc_report &r) {
		/* A context that already holds a time: a bug here, not input. */
		sim_assert_fail(r.get_msg(), __FILE__, __LINE__);
	} catch (const std::bad_alloc &) {
		caught();
		scw_kernel_free(k);
		err_nomem(e, NULL);
		return NULL;
	}
	return k;
}

extern "C" void scw_kernel_free(scw_kernel *k)
{
	if (!k)
		return;
	SIM_ASSERT(running != k);
	enter(k);               /* its objects' destructors may look up the current context */
	delete k->ctx;
	/* Back to the process's default context (created at most once, by SystemC), never a dangling one. */
	sc_curr_simcontext = sc_default_global_context;
	delete k;
}

extern "C" void scw_spawn(scw_kernel *k, const char *name, scw_fn fn, void *arg)
{
	sc_spawn_options o;
	enter(k);
	o.set_stack_size(256 * 1024);
	try {
		sc_spawn(sc_bind(&trampoline, fn, arg), sc_gen_unique_name(name), &o);
	} catch (const sc_report &r) {
		caught();
		fail_outside(k, "spawn", r.get_msg() && *r.get_msg() ? r.get_msg() : r.get_msg_type());
	} catch (const std::bad_alloc &) {
		caught();
		fail_outside(k, "spawn", NULL);
	} catch (const std::exception &x) {
		caught();
		fail_outside(k, "spawn", x.what());
	}
}

extern "C" int scw_run(scw_kernel *k, struct err *e)
{
	int rc = 0;
	if (!k->failure.empty() || k->nomem)
		return kernel_error(k, e);
	enter(k);
	running = k;
	try {
		sc_start();
		if (!k->failure.empty() || k->nomem)
			rc = kernel_error(k, e);
	} catch (const std::bad_alloc &) {
		caught();
		rc = err_nomem(e, "kernel");
	} catch (const sc_report &r) {
		caught();
		rc = err_sim(e, "cycle %lld: %s: %s", (long long)cycles(r.get_time()),
			     r.get_process_name() ? r.get_process_name() : "kernel",
			     r.get_msg() && *r.get_msg() ? r.get_msg() : r.get_msg_type());
	} catch (const std::exception &x) {
		caught();
		rc = err_sim(e, "cycle %lld: kernel: %s", (long long)scw_now(), x.what());
	} catch (...) {
		caught();
		rc = err_sim(e, "cycle %lld: kernel: unknown failure", (long long)scw_now());
	}
	running = NULL;
	return rc;
}

extern "C" void scw_stop(scw_kernel *k)
{
	enter(k);
	sc_stop();
}

extern "C" int64_t scw_kernel_now(const scw_kernel *k)
{
	enter(k);
	return cycles(k->ctx->time_stamp());
}

extern "C" int64_t scw_now(void)
{
	return cycles(sc_time_stamp());
}

/* The last cycle a wait may end at, in the current context: INT64_MAX, or the clock's end. */
static int64_t last_cycle(void)
{
	return cycles(sc_max_time());
}

extern "C" void scw_wait(int64_t n)
{
	int64_t now = scw_now(), last = last_cycle();
	if (failed())
		park();
	if (n <= 0)
		return;
	if (n > last - now) {
		/* SystemC's clock would wrap: a model violation, not a wait. */
		char what[160];
		snprintf(what, sizeof what, "expected a wait that ends by cycle %lld, found one of %lld cycles",
			 (long long)last, (long long)n);
		fail_in_thread(what);
		return;
	}
	GUARD(wait(sc_time::from_value((sc_dt::uint64)n * tick())));
}

extern "C" void scw_wait_until(int64_t c)
{
	int64_t now = scw_now();
	if (failed())
		park();
	if (c > now)                /* c - now cannot overflow: both are in [0, INT64_MAX] */
		scw_wait(c - now);
}

extern "C" scw_event *scw_event_new(void)
{
	scw_event *ev = new (std::nothrow) scw_event;
	if (ev)
		ev->ev = NULL;
	return ev;
}

extern "C" void scw_event_free(scw_event *ev)
{
	if (ev)
		delete ev->ev;
	delete ev;
}

static sc_event *bound(sc_event **ev)
{
	if (!*ev)
		*ev = new sc_event;
	return *ev;
}

extern "C" void scw_event_notify(scw_event *ev)
{
	GUARD(bound(&ev->ev)->notify(SC_ZERO_TIME));
}

extern "C" void scw_event_wait(scw_event *ev)
{
	if (failed())
		park();
	GUARD(wait(*bound(&ev->ev)));
}

extern "C" scw_sem *scw_sem_new(int64_t count)
{
	scw_sem *s = new (std::nothrow) scw_sem;
	if (s) {
		s->count = count;
		s->changed = NULL;
	}
	return s;
}

extern "C" void scw_sem_free(scw_sem *s)
{
	if (s)
		delete s->changed;
	delete s;
}

extern "C" void scw_sem_take(scw_sem *s, int64_t n)
{
	while (s->count < n) {
		if (failed())
			park();
		GUARD(wait(*bound(&s->changed)));
	}
	s->count -= n;
}

extern "C" void scw_sem_give(scw_sem *s, int64_t n)
{
	s->count += n;
	if (s->changed)             /* else no thread has ever waited on it */
		GUARD(s->changed->notify(SC_ZERO_TIME));
}

extern "C" int64_t scw_sem_count(const scw_sem *s)
{
	return s->count;
}
