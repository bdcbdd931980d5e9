/*
 * npy.h - NumPy's .npy files: 2-D arrays in and out.
 *
 * Read: format versions 1.0 and 2.0, C order, little-endian (or byte-order
 * free) int8, int32, float16, float32, float64 ('<i1' or '|i1', '<i4',
 * '<f2', '<f4', '<f8'), shape (rows, cols). Anything else is an input error
 * placed where the file was named (at, key), with the file's name and what
 * was found. Write: version 1.0, '<i4' or '<f4', atomically (a temporary
 * file in the same directory, then a rename), so a reader never sees half
 * a file and a failed write leaves nothing; the file's mode is 0666 less
 * the umask, as fopen would make it.
 */
#ifndef TPUSIM_NPY_H
#define TPUSIM_NPY_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/*
 * Reads path into *data (returns owned, rows x cols row-major, as doubles:
 * every value of those types is exact in a double). at and key place errors
 * (key may be NULL). Returns 0, or -1 with e set.
 */
int npy_read(const char *path, struct pos at, const char *key, double **data, int64_t *rows, int64_t *cols,
	     struct err *e);

/*
 * Writes rows x cols values (row-major) to path as '<i4' (int32: each value
 * is an integer in int32's range) or '<f4' (each rounded to float). Returns
 * 0, or -1 with e set (an input error naming path).
 */
int npy_write(const char *path, const double *data, int64_t rows, int64_t cols, bool int32, struct err *e);

#endif
