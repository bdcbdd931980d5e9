/*
 * stop.c - the request to stop (see stop.h).
 */
#include "stop.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* The signal asked for, 0 none. Lock-free (checked below), so a handler may store it. */
static atomic_int asked;

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may store only a lock-free atomic");

void stop_request(int sig)
{
	atomic_store_explicit(&asked, sig, memory_order_relaxed);
}

static void on_signal(int sig)
{
	/* The second: the user insists; the default action, now. */
	if (atomic_exchange_explicit(&asked, sig, memory_order_relaxed)) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

void stop_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool stop_requested(void)
{
	return atomic_load_explicit(&asked, memory_order_relaxed) != 0;
}

void stop_clear(void)
{
	atomic_store_explicit(&asked, 0, memory_order_relaxed);
}

int stop_status(void)
{
	int sig = atomic_load_explicit(&asked, memory_order_relaxed);
	return sig ? 128 + sig : 0;
}

int stop_error(struct err *e)
{
	int sig = atomic_load_explicit(&asked, memory_order_relaxed);
	return err_sim(e, "interrupted by %s", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal");
}

int stop_check(struct err *e)
{
	return stop_requested() ? stop_error(e) : 0;
}
