/*
 * fuzz_npy.c - the .npy reader (npy_head, then npy_read of the values the
 * header describes): a header numpy's format allows or not, any shape and
 * any file size. The contract: accepted, or refused with one line (fz_check_err);
 * nothing is allocated for values the file does not hold.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(".npy", data, size);
	struct pos at = { "w.yaml", 1, 1 };
	struct npy_head h;
	struct err e = { 0 };
	int rc = npy_head(path, at, "layers[0].a_npy", &h, &e);
	fz_check_err(rc, &e, "npy_head");
	if (rc < 0)
		return 0;
	if (h.rows < 1 || h.cols < 1 || h.data + h.rows * h.cols * h.size != (int64_t)size)
		fz_fail("npy_head: took %lld x %lld values of %d bytes at %lld in a file of %zu bytes", (long long)h.rows,
			(long long)h.cols, h.size, (long long)h.data, size);
	double *v = malloc((size_t)(h.rows * h.cols) * sizeof *v);
	if (!v)
		fz_fail("npy_head: took %lld x %lld values", (long long)h.rows, (long long)h.cols);
	rc = npy_read(path, at, "layers[0].a_npy", &h, v, &e);
	fz_check_err(rc, &e, "npy_read");
	if (rc < 0)
		fz_fail("npy_read: refused a file npy_head took: %s", e.msg);
	free(v);
	return 0;
}
