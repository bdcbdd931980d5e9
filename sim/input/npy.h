/*
 * npy.h - NumPy's .npy files: 2-D arrays in and out.
 *
 * Read: the format as numpy defines it (numpy/lib/format.py, "The .npy
 * format"; versions 1.0, 2.0 and 3.0): the magic "\x93NUMPY", the version,
 * the header's length (2 bytes little-endian in 1.0, 4 in 2.0 and 3.0), and
 * the header, a Python dict literal with exactly the keys 'descr',
 * 'fortran_order' and 'shape' (a key given twice counts as its last value,
 * as Python reads a dict), padded with spaces and ending in '\n'. Taken:
 * C order, little-endian (or byte-order free) int8, int32, float16, float32,
 * float64 ('<i1' or '|i1', '<i4', '<f2', '<f4', '<f8'), shape (rows, cols),
 * and a file that holds exactly rows x cols values after the header. A
 * header numpy refuses is refused; so are spellings of it numpy would take
 * that no writer uses (escapes, comments, string prefixes, a Python 2 long
 * other than "1L"). The file is opened without blocking and must be a
 * regular file; nothing is allocated for its values before its size is
 * known to hold them. Anything else is an input error placed where the file
 * was named (at, key), with the file's name and what was found.
 *
 * Write: version 1.0, '<i4' or '<f4', atomically (a temporary file in the
 * same directory, then a rename), so a reader never sees half a file and a
 * failed write leaves nothing; the file's mode is 0666 less the umask, as
 * fopen would make it.
 */
#ifndef TPUSIM_NPY_H
#define TPUSIM_NPY_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* What a .npy file's header says. */
struct npy_head {
	int64_t rows, cols;
	char descr[4];                  /* "<f4", ... */
	int size;                       /* bytes a value */
	int64_t data;                   /* the offset of the first value */
};

/*
 * Reads and checks path's header (not its values) into h: the format, a
 * dtype and shape taken here, and a file size of exactly the header and its
 * rows x cols values. at and key place errors (key may be NULL). Returns 0,
 * or -1 with e set.
 */
int npy_head(const char *path, struct pos at, const char *key, struct npy_head *h, struct err *e);

/*
 * Reads the values of path, whose header npy_head gave as h, into data
 * (borrowed: h->rows x h->cols doubles, row-major; every value of those
 * types is exact in a double). A file whose header is no longer h is an
 * error. Returns 0, or -1 with e set.
 */
int npy_read(const char *path, struct pos at, const char *key, const struct npy_head *h, double *data, struct err *e);

/*
 * Writes rows x cols values (row-major) to path as '<i4' (int32: each value
 * is an integer in int32's range) or '<f4' (each rounded to float). Returns
 * 0, or -1 with e set (an input error naming path).
 */
int npy_write(const char *path, const double *data, int64_t rows, int64_t cols, bool int32, struct err *e);

#endif
