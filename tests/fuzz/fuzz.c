/*
 * fuzz.c - the harnesses' scratch files and contract checks (see fuzz.h).
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FZ_TAGS 4

static struct {
	char tag[16];
	char path[512];
} files[FZ_TAGS];
static int nfiles;

static void remove_files(void)
{
	for (int i = 0; i < nfiles; i++)
		unlink(files[i].path);
}

void fz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz contract broken: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static const char *scratch_dir(void)
{
	const char *t = getenv("TMPDIR");
	if (access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return t && *t ? t : "/tmp";
}

const char *fz_file(const char *tag, const uint8_t *data, size_t size)
{
	int i, fd;
	for (i = 0; i < nfiles; i++)
		if (!strcmp(files[i].tag, tag))
			break;
	if (i == nfiles) {
		if (nfiles == FZ_TAGS)
			fz_fail("more than %d scratch files", FZ_TAGS);
		if (!nfiles)
			atexit(remove_files);
		snprintf(files[i].tag, sizeof files[i].tag, "%s", tag);
		snprintf(files[i].path, sizeof files[i].path, "%s/tpusim-fuzz-%d%s", scratch_dir(), (int)getpid(), tag);
		nfiles++;
	}
	fd = open(files[i].path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fz_fail("cannot write %s", files[i].path);
	for (size_t done = 0; done < size;) {
		ssize_t w = write(fd, data + done, size - done);
		if (w <= 0)
			fz_fail("cannot write %s", files[i].path);
		done += (size_t)w;
	}
	close(fd);
	return files[i].path;
}

void fz_check_err(int rc, const struct err *e, const char *what)
{
	char q[3 * ERR_MSG_MAX];
	if (rc == 0) {
		if (e->kind != ERR_NONE)
			fz_fail("%s: returned 0 with an error set: %s", what, e->msg);
		return;
	}
	if (rc != -1)
		fz_fail("%s: returned %d", what, rc);
	if (e->kind != ERR_INPUT && e->kind != ERR_NOMEM)
		fz_fail("%s: refused with error kind %d (not bad input or out of memory): %s", what, (int)e->kind, e->msg);
	if (!e->msg[0])
		fz_fail("%s: refused without a message", what);
	if (strchr(e->msg, '\n'))
		fz_fail("%s: a message of more than one line: %s", what, err_quote(q, sizeof q, e->msg, 1000));
}
