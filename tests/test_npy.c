/*
 * test_npy.c - .npy files (sim/input/npy.h): written and read back, headers
 * compared with what numpy itself reads, and the reader's bounds: a shape
 * the file cannot hold refused before anything is allocated for it, and
 * every file of a workload opened and checked when the workload is loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "tests.h"

static char *write_bytes(const char *dir, const char *name, const void *bytes, size_t n)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
	return strdup(path);
}

/*
 * A .npy file of format version major.minor: the header dict, padded with
 * spaces and a '\n' so that the values start at a multiple of 64 bytes, as
 * numpy writes it (format.py, _wrap_header), then n data bytes.
 */
static size_t npy_bytes_v(unsigned char *buf, int major, int minor, const char *dict, const void *data, size_t n)
{
	size_t len = strlen(dict), pre = major == 1 ? 10 : 12, hl = 64 - pre;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = (unsigned char)minor;
	while (hl < len + 1)
		hl += 64;
	for (size_t i = 0; i < pre - 8; i++)
		buf[8 + i] = (unsigned char)(hl >> (8 * i));
	memset(buf + pre, ' ', hl);
	memcpy(buf + pre, dict, len);
	buf[pre + hl - 1] = '\n';
	memcpy(buf + pre + hl, data, n);
	return pre + hl + n;
}

/* The same in version 1.0. */
static size_t npy_bytes(unsigned char *buf, const char *dict, const void *data, size_t n)
{
	return npy_bytes_v(buf, 1, 0, dict, data, n);
}

START_TEST(npy_round_trip_and_errors)
{
	char *dir = th_tmpdir(), path[4200], *p;
	struct err e = { 0 };
	struct pos at = { "w.yaml", 3, 12 };
	double v[6] = { 1, -2, 3, 4, 2147483647, -2147483648.0 }, *got;
	int64_t r, c;
	unsigned char buf[512];
	struct npy_head h;
	snprintf(path, sizeof path, "%s/c.npy", dir);
	ck_assert_int_eq(npy_write(path, v, 2, 3, true, &e), 0);
	ck_assert_ptr_nonnull(got = th_npy(path, &r, &c, &e));
	ck_assert_int_eq(r, 2);
	ck_assert_int_eq(c, 3);
	for (int i = 0; i < 6; i++)
		ck_assert_double_eq(got[i], v[i]);
	free(got);
	v[4] = 0.5, v[5] = -1e30;
	ck_assert_int_eq(npy_write(path, v, 3, 2, false, &e), 0);
	ck_assert_ptr_nonnull(got = th_npy(path, &r, &c, &e));
	ck_assert(r == 3 && c == 2 && got[4] == 0.5 && got[5] == (double)(float)-1e30);
	free(got);
	/* every type numpy writes for these: int8 (|i1), float16 (1.5 = 0x3e00, -2 = 0xc000) */
	const int8_t i8[2] = { -128, 127 };
	p = write_bytes(dir, "i8.npy", buf, npy_bytes(buf, "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 2), }", i8, 2));
	ck_assert_ptr_nonnull(got = th_npy(p, &r, &c, &e));
	ck_assert(got[0] == -128 && got[1] == 127);
	free(got);
	free(p);
	const unsigned char f2[4] = { 0x00, 0x3e, 0x00, 0xc0 };
	p = write_bytes(dir, "f2.npy", buf, npy_bytes(buf, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 1), }", f2, 4));
	ck_assert_ptr_nonnull(got = th_npy(p, &r, &c, &e));
	ck_assert(got[0] == 1.5 && got[1] == -2 && r == 2 && c == 1);
	free(got);
	free(p);
	/* errors, placed where the file was named */
	struct { const char *dict; size_t n; const char *found; } bad[] = {
		{ "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", 16, "dtype '<i8'" },
		{ "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }", 8, "dtype '>f4'" },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", 8, "Fortran order" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, "shape (2,)" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), 'foo': 1, }", 8,
		  "the header key 'foo' besides 'descr', 'fortran_order' and 'shape'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", 8,
		  "8 bytes of values where the header's 1 x 3 values of <f4 are 12 bytes" },
		/* header bytes shown escaped, on one line */
		{ "{'descr': '<i\n\x93', 'fortran_order': False, 'shape': (1, 2), }", 8, "dtype '<i\\x0a\\x93'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,\n\x93\x01), }", 8, "shape (1,\\x0a\\x93\\x01)" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		unsigned char zeros[16] = { 0 };
		char want[600];
		p = write_bytes(dir, "bad.npy", buf, npy_bytes(buf, bad[i].dict, zeros, bad[i].n));
		ck_assert_int_eq(npy_head(p, at, "layers[0].a_npy", &h, &e), -1);
		snprintf(want, sizeof want, "w.yaml:3:12: layers[0].a_npy: expected a .npy file of int8, int32, float16, "
			 "float32 or float64 values in C order with shape (rows, cols), found %s in \"%s\"", bad[i].found, p);
		ck_assert_str_eq(e.msg, want);
		free(p);
	}
	p = write_bytes(dir, "nomagic.npy", "hello world!", 12);
	ck_assert_int_eq(npy_head(p, at, NULL, &h, &e), -1);
	ck_assert(strstr(e.msg, "found no .npy magic in"));
	free(p);
	snprintf(path, sizeof path, "%s/missing.npy", dir);
	ck_assert_int_eq(npy_head(path, at, "layers[0].b_npy", &h, &e), -1);
	char want[600];
	snprintf(want, sizeof want, "w.yaml:3:12: layers[0].b_npy: expected a readable .npy file, found \"%s\" (No such "
		 "file or directory)", path);
	ck_assert_str_eq(e.msg, want);
	th_rmdir(dir);
	free(dir);
}
END_TEST


/* ---- headers as numpy reads them ---- */

/* Headers for 2 x 3 values of <f4 (24 bytes follow each), and whether numpy itself reads each as (2, 3). */
static const struct {
	int major, minor;
	const char *dict;
	bool numpy_reads;
} headers[] = {
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", true },
	{ 2, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", true },
	{ 3, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", true },
	{ 1, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", false },
	{ 4, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", false },
	/* a key given twice: Python's dict keeps the last */
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (7, 7), 'shape': (2, 3), }", true },
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (7, 7), }", false },
	/* exactly the three keys */
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", false },
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'z': \"'shape': (2, 3)\", 'shape': (7, 7)}", false },
	{ 1, 0, "{'descr': '<f4', 'shape': (2, 3), }", false },
	/* a dict literal and nothing else */
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", false },
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", false },
	{ 1, 0, "['descr', '<f4', 'fortran_order', False, 'shape', (2, 3)]", false },
	{ 1, 0, "{'descr': '<f4' 'x', 'fortran_order': False, 'shape': (2, 3)}", false },
	{ 1, 0, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", false },
	/* spellings of the same dict */
	{ 1, 0, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}", true },
	{ 1, 0, "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", true },
	{ 1, 0, "{'descr': '<f4',\n 'fortran_order': False,\n 'shape': (2,\n 3,)}", true },
	{ 1, 0, "\t{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", true },
	/* Python 2's longs, which numpy filters out of headers of versions 1.0 and 2.0 only */
	{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", true },
	{ 3, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", false },
};

/*
 * Each header as numpy reads it (numpy.load, run here on every file) and as
 * tpusim does, for a matmul whose A is 2 x 3: a header numpy reads as (2, 3)
 * runs; one numpy refuses is refused (exit status 2, the file named).
 */
START_TEST(headers_read_as_numpy_reads_them)
{
	enum { N = sizeof headers / sizeof *headers };
	char *dir = th_tmpdir(), *paths[N], wl[4200], cmd[N * 4300 + 300], line[200], *out, *err;
	const unsigned char zeros[24] = { 0 };
	unsigned char buf[1024];
	size_t len = (size_t)snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import sys, numpy\nfor p in sys.argv[1:]:\n"
				      "    try: print(numpy.load(p).shape)\n    except Exception: print(\"refused\")\n'");
	for (size_t i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof name, "h%zu.npy", i);
		paths[i] = write_bytes(dir, name, buf, npy_bytes_v(buf, headers[i].major, headers[i].minor, headers[i].dict,
								      zeros, sizeof zeros));
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, " '%s'", paths[i]);
	}
	FILE *np = popen(cmd, "r");
	ck_assert_ptr_nonnull(np);
	for (size_t i = 0; i < N; i++) {
		ck_assert_ptr_nonnull(fgets(line, sizeof line, np));
		ck_assert_msg(!strcmp(line, headers[i].numpy_reads ? "(2, 3)\n" : "refused\n"), "header %zu: numpy says %s", i,
			      line);
		char yaml[200], want[4400];
		snprintf(yaml, sizeof yaml, "name: g\nlayers:\n  - {name: mm, type: matmul, m: 2, k: 3, n: 2, a_npy: h%zu.npy}\n", i);
		free(th_write(dir, "w.yaml", yaml));
		snprintf(wl, sizeof wl, "%s/w.yaml", dir);
		const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", NULL };
		int rc = th_cli(".", argv, &out, &err);
		if (headers[i].numpy_reads) {
			ck_assert_msg(rc == 0, "header %zu: %s", i, err);
		} else {
			snprintf(want, sizeof want, "layers[0].a_npy: expected a .npy file of int8, int32, float16, float32 or "
				 "float64 values in C order with shape (rows, cols), found ");
			ck_assert_msg(rc == 2 && strstr(err, want) && strstr(err, paths[i]), "header %zu: exit %d: %s", i, rc, err);
			ck_assert_str_eq(out, "");
		}
		free(out);
		free(err);
		free(paths[i]);
	}
	ck_assert_int_eq(pclose(np), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A header of 128 bytes may claim any shape: (1000000, 1000000) of <f8 is
 * 8 x 10^12 bytes, which the file's 8 bytes of values are not. Refused from
 * the header and the file's size, before anything is allocated for the
 * values (exit status 2, not 3).
 */
START_TEST(a_shape_the_file_cannot_hold_is_refused_before_reading)
{
	char *dir = th_tmpdir(), wl[4200], want[4400], *p, *out, *err;
	unsigned char buf[256];
	const unsigned char eight[8] = { 0 };
	p = write_bytes(dir, "a.npy", buf, npy_bytes(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }",
						      eight, sizeof eight));
	ck_assert_int_eq(npy_bytes(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", eight, 8),
			 128 + 8);
	free(th_write(dir, "w.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 2, k: 3, n: 2, a_npy: a.npy}\n"));
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 2);
	snprintf(want, sizeof want, "%s:3:55: layers[0].a_npy: expected a .npy file of int8, int32, float16, float32 or float64 "
		 "values in C order with shape (rows, cols), found 8 bytes of values where the header's 1000000 x 1000000 "
		 "values of <f8 are 8000000000000 bytes in \"%s\"\n", wl, p);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	free(p);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Every .npy file of a workload is opened and checked when the workload is
 * loaded, before any layer runs: `tpusim lower`, which runs nothing, refuses
 * a missing file of the second layer, a file whose shape is not its
 * operand's (M = m x batch when B is the weight, by the workload's batch or
 * --batch), and a FIFO (without waiting for a writer).
 */
START_TEST(files_are_checked_when_the_workload_is_loaded)
{
	char *dir = th_tmpdir(), wl[4200], p[4200], want[4400], *out, *err;
	struct err e = { 0 };
	const double v[6] = { 1, 2, 3, 4, 5, 6 };
	snprintf(p, sizeof p, "%s/a.npy", dir);
	ck_assert_int_eq(npy_write(p, v, 2, 3, true, &e), 0);
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	const char *argv[] = { "lower", "-w", wl, NULL }, *argv2[] = { "lower", "-w", wl, "--batch", "2", NULL };
	/* the layers are on lines 4 and 5, each key's value at column 55 */
	static const struct {
		int batch;                      /* the file's batch */
		bool flag;                      /* --batch 2 */
		const char *layer1, *found;
	} cases[] = {
		{ 1, false, "{name: m1, type: matmul, m: 2, k: 3, n: 2, b_npy: missing.npy}",
		  "5:55: layers[1].b_npy: expected a readable .npy file, found \"%s/missing.npy\" (No such file or directory)\n" },
		{ 1, false, "{name: m1, type: matmul, m: 3, k: 3, n: 2, a_npy: a.npy}",
		  "5:55: layers[1].a_npy: expected a 3 x 3 array (M x K of the layer's GEMM), found 2 x 3 in \"%s/a.npy\"\n" },
		{ 2, false, "{name: m1, type: matmul, m: 1, k: 3, n: 2, a_npy: a.npy}",
		  "4:55: layers[0].a_npy: expected a 4 x 3 array (M x K of the layer's GEMM), found 2 x 3 in \"%s/a.npy\"\n" },
		{ 1, true, "{name: m1, type: matmul, m: 1, k: 3, n: 2, a_npy: a.npy}",
		  "4:55: layers[0].a_npy: expected a 4 x 3 array (M x K of the layer's GEMM), found 2 x 3 in \"%s/a.npy\"\n" },
		{ 1, false, "{name: m1, type: matmul, m: 2, k: 3, n: 2, b_npy: fifo.npy}",
		  "5:55: layers[1].b_npy: expected a .npy file, found \"%s/fifo.npy\" (a FIFO)\n" },
	};
	snprintf(p, sizeof p, "%s/fifo.npy", dir);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char yaml[400], tail[4400];
		snprintf(yaml, sizeof yaml, "name: g\nbatch: %d\nlayers:\n  - {name: m0, type: matmul, m: 2, k: 3, n: 2, a_npy: a.npy}\n"
			 "  - %s\n", cases[i].batch, cases[i].layer1);
		free(th_write(dir, "w.yaml", yaml));
		ck_assert_msg(th_cli(".", cases[i].flag ? argv2 : argv, &out, &err) == 2, "case %zu: %s", i, err);
		snprintf(tail, sizeof tail, cases[i].found, dir);
		snprintf(want, sizeof want, "%s:%s", wl, tail);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(out, "");
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *npy_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *t = tcase_create("npy");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, npy_round_trip_and_errors);
	tcase_add_test(t, headers_read_as_numpy_reads_them);
	tcase_add_test(t, a_shape_the_file_cannot_hold_is_refused_before_reading);
	tcase_add_test(t, files_are_checked_when_the_workload_is_loaded);
	suite_add_tcase(s, t);
	return s;
}
