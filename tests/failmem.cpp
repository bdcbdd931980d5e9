/*
 * failmem.cpp - the test binary's allocation hook: fail the nth allocation.
 *
 * Two doors, both only in build/test_tpusim (the CLI and the library allocate
 * as usual):
 *
 *   - C allocations by tpusim's own objects and the tests': the test binary
 *     is linked with -Wl,--wrap= for malloc, calloc, realloc, strdup, strndup,
 *     open_memstream and newlocale (see the Makefile), so each call in those
 *     objects comes here first. Allocations made inside other libraries
 *     (libyaml, zlib, libc's stdio buffers) are not seen.
 *   - C++ new, everywhere in the process (SystemC's kernel included): this
 *     file replaces the global operator new and delete (plain, array and
 *     nothrow forms) with malloc and free; a failed new throws std::bad_alloc,
 *     a failed nothrow new returns NULL.
 *
 * Between th_alloc_arm(n) and th_alloc_disarm() every allocation through
 * either door is counted, and the nth fails: once (the later ones succeed,
 * as after a transient shortage), or with persist it and every later one
 * (memory that stays gone, so that error paths that allocate fail too);
 * n = 0 counts without failing. Outside, nothing
 * is counted or failed. One thread: a SystemC run switches stacks but not
 * threads. FAILMEM_BT=1 in the environment prints the stack of the
 * allocation that fails.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <execinfo.h>
#include <locale.h>
#include <new>

static bool armed, from_on;
static long counted, fail_at;

/*
 * Whether this allocation is the one to fail (counting it when armed). With
 * FAILMEM_BT set in the environment, the stack of the failing one goes to
 * stderr (to find the code behind a failing n).
 */
static bool fail_now(void)
{
	if (!armed)
		return false;
	counted++;
	if (counted != fail_at && !(from_on && fail_at && counted > fail_at))
		return false;
	if (counted == fail_at && getenv("FAILMEM_BT")) {
		void *frames[48];
		armed = false;
		int n = backtrace(frames, 48);
		fprintf(stderr, "failmem: allocation %ld fails here:\n", counted);
		backtrace_symbols_fd(frames, n, 2);
		armed = true;
	}
	return true;
}

extern "C" {

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
FILE *__real_open_memstream(char **buf, size_t *len);
locale_t __real_newlocale(int mask, const char *name, locale_t base);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
FILE *__wrap_open_memstream(char **buf, size_t *len);
locale_t __wrap_newlocale(int mask, const char *name, locale_t base);

/* Declared in tests.h (C). */
void th_alloc_arm(long n, bool persist);
long th_alloc_disarm(void);

void th_alloc_arm(long n, bool persist)
{
	counted = 0;
	fail_at = n;
	from_on = persist;
	armed = true;
}

long th_alloc_disarm(void)
{
	armed = false;
	return counted;
}

void *__wrap_malloc(size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(k, n);
}

/* A failed realloc leaves p as it was. */
void *__wrap_realloc(void *p, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strndup(s, n);
}

FILE *__wrap_open_memstream(char **buf, size_t *len)
{
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_open_memstream(buf, len);
}

locale_t __wrap_newlocale(int mask, const char *name, locale_t base)
{
	if (fail_now()) {
		errno = ENOMEM;
		return (locale_t)0;
	}
	return __real_newlocale(mask, name, base);
}

}

/* ---- C++ new and delete: malloc and free, so that the sanitizers see one pair ---- */

static void *alloc_or_null(std::size_t n)
{
	if (fail_now())
		return NULL;
	return __real_malloc(n ? n : 1);
}

void *operator new(std::size_t n)
{
	void *p = alloc_or_null(n);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void *operator new[](std::size_t n)
{
	void *p = alloc_or_null(n);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
	return alloc_or_null(n);
}

void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
	return alloc_or_null(n);
}

void operator delete(void *p) noexcept
{
	std::free(p);
}

void operator delete[](void *p) noexcept
{
	std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

void operator delete[](void *p, std::size_t) noexcept
{
	std::free(p);
}

void operator delete(void *p, const std::nothrow_t &) noexcept
{
	std::free(p);
}

void operator delete[](void *p, const std::nothrow_t &) noexcept
{
	std::free(p);
}
