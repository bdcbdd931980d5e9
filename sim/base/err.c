/* err.c - building positioned error messages (see err.h). */
#include "err.h"

#include <stdio.h>
#include <stdlib.h>

static int vset(struct err *e, enum err_kind kind, const char *prefix, const char *fmt, va_list ap)
{
	size_t n = 0;
	if (!e)
		return -1;
	e->kind = kind;
	if (prefix) {
		int w = snprintf(e->msg, sizeof e->msg, "%s", prefix);
		n = w < 0 ? 0 : (size_t)w < sizeof e->msg ? (size_t)w : sizeof e->msg - 1;
	}
	vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
	return -1;
}

int err_at(struct err *e, struct pos p, const char *path, const char *fmt, ...)
{
	char prefix[ERR_MSG_MAX];
	va_list ap;
	char file[LIMIT_QUOTE_BUF];
	err_quote(file, sizeof file, p.file ? p.file : "<input>", LIMIT_PATH);

	if (p.line > 0)
		snprintf(prefix, sizeof prefix, "%s:%ld:%ld: ", file, p.line, p.col);
	else
		snprintf(prefix, sizeof prefix, "%s: ", file);
	if (path && *path) {
		size_t n = 0;
		while (prefix[n])
			n++;
		char q[1200];
		snprintf(prefix + n, sizeof prefix - n, "%s: ", err_quote(q, sizeof q, path, 1000));
	}
	va_start(ap, fmt);
	vset(e, ERR_INPUT, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

int err_input(struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(e, ERR_INPUT, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int err_sim(struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(e, ERR_SIM, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int err_nomem(struct err *e, const char *what)
{
	char q[300];
	if (what)
		err_input(e, "%s: out of memory", err_quote(q, sizeof q, what, 200));
	else
		err_input(e, "out of memory");
	if (e)
		e->kind = ERR_NOMEM;
	return -1;
}

int err_status(const struct err *e)
{
	return e->kind;
}

const char *err_quote(char *buf, size_t size, const char *text, size_t max)
{
	size_t n = 0, i;
	for (i = 0; text[i] && i < max && n + 5 < size; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c >= 0x20 && c < 0x7f)
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
	}
	if (text[i] && n + 4 < size)
		n += (size_t)snprintf(buf + n, size - n, "...");
	buf[n < size ? n : size - 1] = '\0';
	return buf;
}

void sim_assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: internal error: assertion '%s' failed\n", file, line, what);
	abort();
}
