/*
 * fsx.c - file plumbing (see fsx.h).
 */
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "limit.h"
#include "stop.h"

bool fsx_removable(FILE *f, const char *path)
{
	struct stat a, b;
	return fstat(fileno(f), &a) == 0 && lstat(path, &b) == 0 && S_ISREG(a.st_mode) && S_ISREG(b.st_mode) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool fsx_regular(const char *path)
{
	struct stat b;
	return lstat(path, &b) == 0 && S_ISREG(b.st_mode);
}

int fsx_file_path(const char *path)
{
	struct stat st;
	size_t n = strlen(path);
	if ((n && path[n - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		errno = EISDIR;
		return -1;
	}
	return 0;
}

/*
 * path's file as one name in buf: its links followed (at most 40, as the
 * kernel does), then its parent directory's realpath and its name. Returns
 * false when the parent cannot be resolved (it is not there).
 */
static bool canonical(const char *path, char *buf, size_t size)
{
	char p[LIMIT_PATH_BUF], link[LIMIT_PATH_BUF], dir[PATH_MAX], t[2 * LIMIT_PATH_BUF];
	const char *slash, *name;
	snprintf(p, sizeof p, "%s", path);
	for (int hops = 0; hops < 40; hops++) {
		ssize_t n = readlink(p, link, sizeof link - 1);
		if (n < 0)
			break;
		link[n] = '\0';
		slash = strrchr(p, '/');
		if (link[0] == '/' || !slash)
			snprintf(t, sizeof t, "%s", link);
		else
			snprintf(t, sizeof t, "%.*s/%s", (int)(slash - p), p, link);
		snprintf(p, sizeof p, "%s", t);
	}
	slash = strrchr(p, '/');
	name = slash ? slash + 1 : p;
	if (slash)
		snprintf(t, sizeof t, "%.*s", slash == p ? 1 : (int)(slash - p), p);
	else
		snprintf(t, sizeof t, ".");
	if (!realpath(t, dir))
		return false;
	snprintf(buf, size, "%s/%s", dir, name);
	return true;
}

bool fsx_same_file(const char *a, const char *b)
{
	char ca[2 * LIMIT_PATH_BUF], cb[2 * LIMIT_PATH_BUF];
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && !S_ISCHR(sa.st_mode) && !S_ISCHR(sb.st_mode))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (canonical(a, ca, sizeof ca) && canonical(b, cb, sizeof cb))
		return !strcmp(ca, cb);
	return !strcmp(a, b);
}

/* ---- reading ---- */

int fsx_read(const char *path, size_t max, char **text, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), er;
	*text = NULL;
	*len = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	/* Blocking from here: a pipe is read to its end, as its writer writes. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		goto fail;
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max) {
		errno = EFBIG;
		goto fail;
	}
	/* Room for the whole file at once when its size is known (and one byte to see its end); doubling otherwise. */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 65536;
	if (!(buf = malloc(cap)))
		goto fail;
	for (;;) {
		if (n + 1 == cap) {
			char *nb = cap > max ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				errno = cap > max ? EFBIG : ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		/* A signal: read on, unless it asked to stop (stop.h); a FIFO's writer may never come. */
		if (got < 0 && errno == EINTR && !stop_requested())
			continue;
		if (got < 0) {
			free(buf);
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max) {
			free(buf);
			errno = EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
fail:
	er = errno;
	close(fd);
	errno = er;
	return -1;
}

/* ---- writing ---- */

/* This host's name as it appears in temporary file names: [A-Za-z0-9._-], at most 64 bytes. */
static const char *host_tag(void)
{
	static char tag[65];
	if (!tag[0]) {
		char h[256] = "";
		if (gethostname(h, sizeof h - 1) != 0 || !h[0])
			snprintf(h, sizeof h, "localhost");
		for (size_t i = 0; h[i] && i < sizeof tag - 1; i++) {
			char c = h[i];
			tag[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
				 c == '-' || c == '_' ? c : '_';
		}
	}
	return tag;
}

int fsx_tmp_name(char *buf, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int n = snprintf(buf, size, "%.*s.%s.tmp.%s.%ld", (int)(name - path), path, name, host_tag(), (long)getpid());
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Removes tmp and returns -1 with errno er: a failed write leaves no temporary file. */
static int drop_tmp(const char *tmp, int er)
{
	unlink(tmp);
	errno = er;
	return -1;
}

bool fsx_replaceable(const char *path)
{
	struct stat b;
	return lstat(path, &b) != 0 ? errno == ENOENT : S_ISREG(b.st_mode);
}

/* Copies tmp (open as fd) into path, which is not replaceable: through the link, into the FIFO or the device. */
static int write_through(int fd, const char *tmp, const char *path)
{
	char buf[65536];
	int out, er = 0;
	if (lseek(fd, 0, SEEK_SET) != 0 || (out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		er = errno;
		close(fd);
		return drop_tmp(tmp, er);
	}
	for (;;) {
		ssize_t got = read(fd, buf, sizeof buf), off = 0;
		if (got < 0 && errno == EINTR && !stop_requested())
			continue;
		if (got <= 0) {
			er = got < 0 ? errno : 0;
			break;
		}
		while (off < got && !er) {
			ssize_t w = write(out, buf + off, (size_t)(got - off));
			if (w < 0 && errno == EINTR && !stop_requested())
				continue;
			if (w <= 0)
				er = w < 0 ? errno : EIO;
			else
				off += w;
		}
		if (er)
			break;
	}
	if (close(out) != 0 && !er)
		er = errno;
	close(fd);
	if (er)
		return drop_tmp(tmp, er);
	unlink(tmp);
	return 0;
}

/*
 * The one fsync policy: tmp's data reaches the disk, then tmp (fd, closed
 * here) replaces path; a path that is not replaceable is written through,
 * unless own (a file of the command's own directory: always replaced).
 */
static int sync_rename(int fd, const char *tmp, const char *path, bool own)
{
	int er;
	if (!own && !fsx_replaceable(path))
		return write_through(fd, tmp, path);
	if (fsync(fd) != 0) {
		er = errno;
		close(fd);
		return drop_tmp(tmp, er);
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		return drop_tmp(tmp, errno);
	return 0;
}

int fsx_commit(const char *tmp, const char *path)
{
	int fd = open(tmp, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return drop_tmp(tmp, errno);
	return sync_rename(fd, tmp, path, false);
}

static int write_atomic(const char *path, const void *data, size_t len, bool own)
{
	char tmp[LIMIT_PATH_BUF];
	const char *p = data;
	int fd, er;
	if (fsx_tmp_name(tmp, sizeof tmp, path) != 0)
		return -1;
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -1;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			er = w < 0 ? errno : EIO;
			close(fd);
			return drop_tmp(tmp, er);
		}
		off += (size_t)w;
	}
	return sync_rename(fd, tmp, path, own);
}

int fsx_write_atomic(const char *path, const void *data, size_t len)
{
	return write_atomic(path, data, len, false);
}

int fsx_write_own(const char *path, const void *data, size_t len)
{
	return write_atomic(path, data, len, true);
}

void fsx_clean_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	size_t hl = strlen(host_tag());
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *t = strstr(de->d_name, ".tmp."), *dot = strrchr(de->d_name, '.');
		char *end, path[LIMIT_PATH_BUF];
		long pid;
		if (de->d_name[0] != '.' || !t || dot != t + 5 + hl || strncmp(t + 5, host_tag(), hl))
			continue;
		pid = strtol(dot + 1, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

int fsx_mkdirs(const char *path, bool *made)
{
	char p[LIMIT_PATH_BUF];
	struct stat st;
	*made = false;
	size_t n = (size_t)snprintf(p, sizeof p, "%s", path);
	if (n >= sizeof p) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	for (char *s = p + 1; *s; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = '\0';
		int rc = mkdir(p, 0755);
		*s = '/';
		if (rc != 0 && errno != EEXIST)
			return -1;
	}
	if (mkdir(p, 0755) == 0)
		*made = true;
	else if (errno != EEXIST)
		return -1;
	if (stat(p, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int fsx_writable(const char *path)
{
	struct stat st;
	int fd;
	if (fsx_file_path(path) != 0)
		return -1;
	/* A FIFO or a device is not opened: its reader would see the stream end, and the real open could then wait for good. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return access(path, W_OK);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (errno == EEXIST && (fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
		close(fd);
		return 0;
	}
	return -1;
}

int fsx_write_error(struct err *e, const char *what, const char *path, int err)
{
	char q[LIMIT_QUOTE_BUF];
	return err_sim(e, "%s: expected to write \"%s\", found %s", what, err_quote(q, sizeof q, path, LIMIT_PATH),
		       strerror(err ? err : EIO));
}

int fsx_open_error(struct err *e, const char *what, const char *path, int err)
{
	char q[LIMIT_QUOTE_BUF];
	return err_input(e, "%s: expected a writable path, found \"%s\" (%s)", what, err_quote(q, sizeof q, path, LIMIT_PATH),
			 strerror(err ? err : EIO));
}

/* ---- hashing ---- */

uint64_t fsx_fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}
