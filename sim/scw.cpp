/*
 * scw.cpp - SystemC thread processes, events and semaphores for C (see scw.h).
 */
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <cstdio>
#include <exception>
#include <string>

#include "scw.h"

using namespace sc_core;

/* libsystemc's own main() refers to sc_main; tpusim has its own main and never calls this. */
__attribute__((visibility("default"))) int sc_main(int, char **)
{
	return 0;
}

struct scw_event {
	sc_event ev;
};

struct scw_sem {
	int64_t count;
	sc_event changed;
};

static const sc_time cycle(1, SC_NS);
static sc_trace_file *trace;
static std::string failure;      /* the first error raised inside a thread */

/* Keeps an exception from unwinding through C frames: record it and stop the kernel. */
static void fail_in_thread(const char *what)
{
	if (failure.empty()) {
		char buf[64];
		snprintf(buf, sizeof buf, "cycle %lld: ", (long long)(sc_time_stamp().value() / cycle.value()));
		failure = std::string(buf) + sc_get_current_process_handle().name() + ": " + what;
	}
	sc_stop();
}

#define GUARD(body) \
	try { \
		body; \
	} catch (const sc_report &r) { \
		fail_in_thread(r.get_msg() && *r.get_msg() ? r.get_msg() : r.get_msg_type()); \
	} catch (const std::exception &x) { \
		fail_in_thread(x.what()); \
	}

static void quiet_kernel()
{
	static bool done;
	if (done)
		return;
	done = true;
	sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);
	sc_report_handler::set_actions(SC_WARNING, SC_DO_NOTHING);
}

static void trampoline(scw_fn fn, void *arg)
{
	fn(arg);
}


extern "C" void scw_spawn(const char *name, scw_fn fn, void *arg)
{
	quiet_kernel();
	sc_spawn_options o;
	o.set_stack_size(256 * 1024);
	sc_spawn(sc_bind(&trampoline, fn, arg), sc_gen_unique_name(name), &o);
}

extern "C" int scw_run(struct err *e)
{
	quiet_kernel();
	if (!failure.empty())
		return err_sim(e, "%s", failure.c_str());
	try {
		sc_start();
		if (!failure.empty())
			return err_sim(e, "%s", failure.c_str());
	} catch (const sc_report &r) {
		return err_sim(e, "cycle %lld: %s: %s", (long long)(r.get_time().value() / cycle.value()),
			       r.get_process_name() ? r.get_process_name() : "kernel",
			       r.get_msg() && *r.get_msg() ? r.get_msg() : r.get_msg_type());
	} catch (const std::exception &x) {
		return err_sim(e, "cycle %lld: kernel: %s", (long long)scw_now(), x.what());
	} catch (...) {
		return err_sim(e, "cycle %lld: kernel: unknown failure", (long long)scw_now());
	}
	return 0;
}

extern "C" void scw_stop(void)
{
	sc_stop();
}

extern "C" int64_t scw_now(void)
{
	return (int64_t)(sc_time_stamp().value() / cycle.value());
}

extern "C" void scw_wait(int64_t n)
{
	if (n > 0)
		GUARD(wait((double)n, SC_NS));
}

extern "C" void scw_wait_until(int64_t c)
{
	scw_wait(c - scw_now());
}

extern "C" scw_event *scw_event_new(void)
{
	quiet_kernel();
	return new (std::nothrow) scw_event;
}

extern "C" void scw_event_free(scw_event *ev)
{
	delete ev;
}

extern "C" void scw_event_notify(scw_event *ev)
{
	ev->ev.notify(SC_ZERO_TIME);
}

extern "C" void scw_event_wait(scw_event *ev)
{
	GUARD(wait(ev->ev));
}

extern "C" scw_sem *scw_sem_new(int64_t count)
{
	quiet_kernel();
	scw_sem *s = new (std::nothrow) scw_sem;
	if (s)
		s->count = count;
	return s;
}

extern "C" void scw_sem_free(scw_sem *s)
{
	delete s;
}

extern "C" void scw_sem_take(scw_sem *s, int64_t n)
{
	while (s->count < n && failure.empty())
		GUARD(wait(s->changed));
	s->count -= n;
}

extern "C" void scw_sem_give(scw_sem *s, int64_t n)
{
	s->count += n;
	s->changed.notify(SC_ZERO_TIME);
}

extern "C" int64_t scw_sem_count(const scw_sem *s)
{
	return s->count;
}

extern "C" int scw_trace_open(const char *path, struct err *e)
{
	quiet_kernel();
	try {
		trace = sc_create_vcd_trace_file(path);
	} catch (...) {
		trace = NULL;
	}
	if (!trace)
		return err_input(e, "%s.vcd: expected a writable trace file, found an error opening it", path);
	trace->set_time_unit(1, SC_NS);
	return 0;
}

extern "C" void scw_trace_i64(const int64_t *var, const char *name)
{
	if (trace)
		sc_trace(trace, *reinterpret_cast<const sc_dt::int64 *>(var), name);
}

extern "C" void scw_trace_close(void)
{
	if (trace)
		sc_close_vcd_trace_file(trace);
	trace = NULL;
}
