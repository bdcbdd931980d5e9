/*
 * fsx.h - the file plumbing every output and input shares: whole-file
 * reads, atomic writes, mkdir -p, writability checks, the one hash, and the
 * one class of a failed write.
 *
 * Atomic writes. A file is written to a temporary name beside it,
 * "<dir>/.<name>.tmp.<host>.<pid>" (unique among the processes of all hosts
 * that share the directory, as a sweep's nodes do), then fsync'ed, then
 * renamed over the path: a reader sees the old file or the whole new one,
 * and a crash never leaves an empty new one. The directory itself is not
 * fsync'ed (after a crash the rename may be lost; the old state is whole).
 * fsx_clean_tmp removes the temporary files a killed writer of this host left.
 *
 * A path that is not a regular file of its own -- a symbolic link, a FIFO, a
 * device (fsx_replaceable) -- is never replaced: the finished temporary file
 * is written through it (into the link's target, the FIFO's reader, the
 * device) and removed, as the traces write through, so --html /dev/null
 * stays /dev/null. That write is not atomic.
 *
 * A failed write. A path that cannot be created or opened (a missing
 * directory, no permission, a directory in the way) is bad input: exit 2,
 * checked before the run where it can be. A write that fails once the file is
 * open (ENOSPC, EIO, EFBIG, EDQUOT: in write, flush, fsync, close or rename)
 * is exit status 1, the class of every failure that is not the input's:
 * fsx_write_error builds that error, for every writer of outputs.
 *
 * Functions that return -1 set errno; none prints.
 */
#ifndef TPUSIM_FSX_H
#define TPUSIM_FSX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

/* ---- files of their own ---- */

/*
 * Whether path, just opened for writing as f, is a plain file of its own:
 * a regular file (not a device, a pipe or a symbolic link) that is the very
 * file f writes. Only such a file may be removed when its writer fails;
 * /dev/null, a FIFO or a link the user named is never removed.
 */
bool fsx_removable(FILE *f, const char *path);

/* Whether path is a regular file itself (lstat: not a link, a device or a pipe). */
bool fsx_regular(const char *path);

/* Whether an atomic write may rename over path: nothing is there, or a regular file itself (the rule above). */
bool fsx_replaceable(const char *path);

/*
 * Whether path can name a file an output is written to: it does not end in
 * '/' and is not a directory (after its links). Returns 0, or -1 with errno
 * EISDIR. The one rule of "a directory where a file goes" (fsx_writable
 * applies it too).
 */
int fsx_file_path(const char *path);

/*
 * Whether paths a and b name one file, however spelled: two files that are
 * there are compared by device and inode after their links (a character
 * device, a stream like /dev/null or a terminal, only by its name), others
 * by their parent directory's realpath and their name, links followed.
 */
bool fsx_same_file(const char *a, const char *b);

/* ---- reading ---- */

/*
 * Reads the whole file at path into *text (returns owned, NUL-terminated; *len
 * bytes before the NUL). The file is opened non-blocking, so that a FIFO
 * without a writer does not hang the open; a regular file is read at its
 * size, a pipe or a device to its end. Returns 0, or -1 with errno: open's
 * (ENOENT, EACCES, ...), EISDIR for a directory, EFBIG for more than max
 * bytes, ENOMEM, or read's (EIO).
 */
int fsx_read(const char *path, size_t max, char **text, size_t *len);

/* ---- writing ---- */

/* The temporary name beside path (above) into buf. Returns 0, or -1 (ENAMETOOLONG) when it does not fit. */
int fsx_tmp_name(char *buf, size_t size, const char *path);

/*
 * Puts the written temporary file tmp in place as path: fsync, then rename.
 * On failure tmp is removed. Returns 0, or -1 with errno.
 */
int fsx_commit(const char *tmp, const char *path);

/* Writes len bytes at data to path atomically (above), mode 0644. Returns 0, or -1 with errno (nothing changed at path). */
int fsx_write_atomic(const char *path, const void *data, size_t len);

/*
 * As fsx_write_atomic, but path is always replaced, whatever is there: for
 * the files a command keeps in a directory of its own (a sweep's point
 * files), where a link or a FIFO is nothing the user named as an output
 * (and a FIFO without a reader would hold the write for good).
 */
int fsx_write_own(const char *path, const void *data, size_t len);

/* Removes from dir the temporary files of this host's writers that no longer run (a writer killed mid-write). */
void fsx_clean_tmp(const char *dir);

/*
 * mkdir -p: makes path and its missing parents (mode 0755); *made says
 * whether path itself was made. Returns 0, or -1 with errno (ENOTDIR: path or
 * a parent is a file).
 */
int fsx_mkdirs(const char *path, bool *made);

/*
 * Whether a file can be written at path, before anything is: not a
 * directory (fsx_file_path); one that is not
 * there is created (non-blocking) and removed again, a regular file that is
 * there is opened for writing without being changed; a FIFO or a device is
 * only checked for permission (access W_OK), never opened, so that its
 * reader sees one stream, the run's. Returns 0, or -1 with errno.
 */
int fsx_writable(const char *path);

/*
 * The error of a write that failed once the file was open (err: its errno):
 * "<what>: expected to write \"<path>\", found <strerror(err)>", exit status 1
 * (above). what names the option or the output ("--trace", "-o"). Returns -1.
 */
int fsx_write_error(struct err *e, const char *what, const char *path, int err);

/*
 * The error of an output that cannot be created or opened (err: its errno):
 * "<what>: expected a writable path, found \"<path>\" (<strerror(err)>)",
 * bad input, exit status 2 (above). Returns -1.
 */
int fsx_open_error(struct err *e, const char *what, const char *path, int err);

/* ---- hashing ---- */

/*
 * FNV-1a, 64 bits: h for the n bytes at data after h (start with
 * FSX_FNV_INIT). For cache keys and file names, not for security.
 */
#define FSX_FNV_INIT UINT64_C(14695981039346656037)
uint64_t fsx_fnv(uint64_t h, const void *data, size_t n);

#endif
