/*
 * test_lab.c - tpusim lab: the terminal grid against the placement rules of
 * functional.h, its cycles against the analytic model, and its errors.
 *
 * The case is the README's lab GEMM, 10x6x5 (A 10 x 6, B 6 x 5) on lab_4x4
 * (4 x 4 int8, weight double buffer), with ideal memory. By hand:
 *
 *   ws  B is K x N = 6 x 5: row blocks K 0..3 (Sr 4), K 4..5 (Sr 2); column
 *       blocks N 0..3 (Sc 4), N 4..4 (Sc 1); T = M = 10 in one chunk. Folds,
 *       columns outside rows: 0 (K 0..3, N 0..3), 1 (K 4..5, N 0..3),
 *       2 (K 0..3, N 4), 3 (K 4..5, N 4). Timing (pipelined): L_0 = 0,
 *       s_0 = L_0 + Sr_0 = 4; L_{f+1} = max(L_f + Sr_f, e_{f-1} - 1) (the
 *       tile before is in, and fold f-1's last input has read the bank),
 *       s_{f+1} = max(e_f, L_{f+1} + Sr_{f+1}): L_1 = 4, s_1 = 14;
 *       L_2 = max(6, 13) = 13, s_2 = 24; L_3 = max(17, 23) = 23, s_3 = 34.
 *       The last partial sum (fold 3, t = 9, column 0) leaves at the end of
 *       34 + 9 + 4 - 1 + 0 = 46: 47 cycles (the closed form:
 *       4 + 3 x max(10, Sr) + 10 + (4 + 1 - 2) = 47).
 *       Fold 2's tile enters column j from L_2 + j = 13 + j and is in place
 *       from 13 + j + 4: at cycle 22 every column of fold 2 (only column 0,
 *       Sc 1) holds it in the shadow bank, B[i][4] in PE(i, 0).
 *       At cycle 22 fold 1 streams (step 22 - 14 = 8 of 10; steps count from 0), and its
 *       first input reached PE(i, j) at 14 + i + j <= 22 for every PE, so each
 *       PE's bank in use is fold 1's: B[4 + i][j] for i < 2, j < 4.
 *   is  A^T is K x M = 6 x 10: folds M 0..3 (K 0..3, K 4..5), M 4..7, M 8..9;
 *       T = N = 5; s = 4, 9, 14, 19, 24, 29; the last output (fold 5, t = 4,
 *       column 1) leaves at the end of 29 + 4 + 3 + 1 = 37: 38 cycles. At
 *       cycle 17, fold 2 (K 0..3, M 4..7) streams, started at 14; its first
 *       input reached PE(i, j) at 14 + i + j, so PEs with i + j <= 3 hold
 *       A[4 + j][i].
 *   os  blocks M 0..3, 4..7, 8..9 for N 0..3, then for N 4; T = K = 6; each
 *       block needs s' >= e + Sr - T', so s = 0, 6, ..., 30; the last block
 *       (Sr 2, Sc 1) is in at X = 36 + 2 - 1 = 37 and leaves at the end of
 *       37 + 4 - 1 = 40: 41 cycles.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "functional.h"
#include "lab.h"
#include "plan.h"
#include "xmath.h"
#include "tests.h"

/* The text of cell (i, j) on line l (0: w or a, 1: x or b, 2: p or acc, 3: out) of PE row i at cycle c, or NULL. */
static char *grid_cell(const char *out, int64_t c, int i, int j, int l, char *buf, size_t size)
{
	char head[64];
	const char *p;
	int lines = strstr(out, "acc ") ? 4 : 3;
	snprintf(head, sizeof head, "\ncycle %lld of ", (long long)c);
	if (!(p = strstr(out, head)))
		return NULL;
	p = strchr(p + 1, '\n') + 1;            /* the column header */
	p = strchr(p, '\n') + 1;                /* row 0, line 0 */
	for (int k = 0; k < i * lines + l; k++)
		p = strchr(p, '\n') + 1;
	p += 6;
	for (int k = 0; k < j; k++) {
		p = strstr(p, " | ");
		ck_assert_ptr_nonnull(p);
		p += 3;
	}
	size_t n = strcspn(p, "|\n");
	ck_assert_uint_lt(n, size);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* The bank in use and the other bank of a ws/is cell "w V [S]", as text. */
static void weights(const char *cell, char *w, char *s)
{
	ck_assert_msg(sscanf(cell, "w %31s [ %31[^] ]", w, s) == 2, "not a weight cell: \"%s\"", cell);
}

/* Runs tpusim with argv in dir and checks its status; *out and *err receive stdout and stderr (owned). */
static void lab(const char *dir, const char *const *argv, int want, char **out, char **err)
{
	int st = th_cli(dir, argv, out, err);
	ck_assert_msg(st == want, "status %d, stderr: %s", st, *err);
}

static int count(const char *text, const char *what);

static char cwd[4096];

static const char *preset(void)
{
	static char p[4200];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(p, sizeof p, "%s/configs/lab_4x4.yaml", cwd);
	return p;
}

START_TEST(ws_grid_holds_b_by_the_rule)
{
	double a[60], b[30];
	char *err, cell[128], w[32], s[32], want[32];
	const char *argv[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--dataflow", "ws", "--seed", "3", "--cycles",
			       "16..22", NULL };
	char *out;
	lab(".", argv, 0, &out, &err);

	lab_operands(DT_INT8, 3, 10, 6, 5, a, b);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			weights(grid_cell(out, 22, i, j, 0, cell, sizeof cell), w, s);
			snprintf(want, sizeof want, "%.0f", b[(4 + i) * 5 + j]);
			ck_assert_msg(!strcmp(w, want), "cycle 22 PE(%d,%d): weight %s, B[%d][%d] = %s", i, j, w, 4 + i, j, want);
		}
	/*
	 * Fold 2's tile in column 0, in bank 2 mod 2 = 0: the other bank in rows 0
	 * and 1, whose last input was fold 1's (bank 1); the bank shown first in
	 * rows 2 and 3, whose last input was fold 0's (bank 0; fold 1 has 2 rows).
	 */
	for (int i = 0; i < 4; i++) {
		weights(grid_cell(out, 22, i, 0, 0, cell, sizeof cell), w, s);
		snprintf(want, sizeof want, "%.0f", b[i * 5 + 4]);
		ck_assert_msg(!strcmp(i < 2 ? s : w, want), "cycle 22 PE(%d,0): banks %s [%s], B[%d][4] = %s", i, w, s, i,
			      want);
	}
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 22 of 47: fold 1 of 4 (M 0..9, K 4..5, N 0..3) streaming, step 8 of 10\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 16 of 47: fold 1 of 4 (M 0..9, K 4..5, N 0..3) streaming, step 2 of 10; "
				     "loading fold 2 (M 0..9, K 0..3, N 4..4)\n"));
	ck_assert_ptr_null(strstr(out, "\ncycle 15 of"));
	ck_assert_ptr_null(strstr(out, "\ncycle 23 of"));
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 47 cycles, 4 folds, 50 outputs checked, 0 mismatches\n"));
	free(out);
	free(err);
}
END_TEST

START_TEST(is_grid_holds_a_transposed)
{
	double a[60], b[30];
	char *err, cell[128], w[32], s[32], want[32];
	const char *argv[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--dataflow", "is", "--seed", "5", "--cycles",
			       "17..17", NULL };
	char *out;
	lab(".", argv, 0, &out, &err);

	lab_operands(DT_INT8, 5, 10, 6, 5, a, b);
	for (int i = 0; i < 4; i++)
		for (int j = 0; i + j <= 3; j++) {
			weights(grid_cell(out, 17, i, j, 0, cell, sizeof cell), w, s);
			snprintf(want, sizeof want, "%.0f", a[(4 + j) * 6 + i]);
			ck_assert_msg(!strcmp(w, want), "cycle 17 PE(%d,%d): weight %s, A[%d][%d] = %s", i, j, w, 4 + j, i, want);
		}
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 17 of 38: fold 2 of 6 (M 4..7, K 0..3, N 0..4) streaming, step 3 of 5"));
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 38 cycles, 6 folds, 50 outputs checked, 0 mismatches\n"));
	free(out);
	free(err);
}
END_TEST

/* The summary's cycles equal the analytic model's with ideal memory on a matmul workload of the same shape. */
START_TEST(cycles_equal_analytic)
{
	static const char *const dfs[] = { "ws", "os", "is" };
	static const long hand[] = { 47, 41, 38 };
	char *dir = th_tmpdir();
	char *w = th_write(dir, "w.yaml", "name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 10, k: 6, n: 5}\n");
	const char *run[] = { "run", "-c", preset(), "-w", w, "--model", "analytic", "--ideal-memory", "--dataflow",
			      NULL, NULL };
	const char *lb[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--dataflow", NULL, NULL };
	for (int d = 0; d < 3; d++) {
		char *err, *out, want[128];
		long analytic = -1;
		run[9] = lb[6] = dfs[d];
		lab(dir, run, 0, &out, &err);
		ck_assert_ptr_nonnull(strstr(out, "\ntotal "));
		ck_assert_int_eq(sscanf(strstr(out, "\ntotal "), "\ntotal %*d %ld", &analytic), 1);
		ck_assert_int_eq(analytic, hand[d]);
		free(out);
		free(err);
		lab(dir, lb, 0, &out, &err);
		snprintf(want, sizeof want, "\nsummary: %ld cycles, ", analytic);
		ck_assert_msg(strstr(out, want) != NULL, "%s: no \"%s\" in the lab's output", dfs[d], want + 1);
		/* Every cycle printed once: 0 .. analytic - 1. */
		ck_assert_int_eq(count(out, "\ncycle "), analytic);
		snprintf(want, sizeof want, "\ncycle %ld of %ld: ", analytic - 1, analytic);
		ck_assert_ptr_nonnull(strstr(out, want));
		free(out);
		free(err);
	}
	free(w);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Floats print with 4 significant digits and are the operands' values. */
START_TEST(bf16_values)
{
	double a[60], b[30];
	char *err, cell[128], w[32], s[32];
	const char *argv[] = { "lab", "-c", preset(), "--set", "array.dtype=bf16", "--gemm", "10x6x5", "--seed", "9",
			       "--cycles", "22..22", NULL };
	char *out;
	lab(".", argv, 0, &out, &err);
	lab_operands(DT_BF16, 9, 10, 6, 5, a, b);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			double x, want = b[(4 + i) * 5 + j];
			weights(grid_cell(out, 22, i, j, 0, cell, sizeof cell), w, s);
			x = strtod(w, NULL);
			/* 4 significant digits: within 5e-4 of it, relative. */
			ck_assert_msg(fabs(x - want) <= 5e-4 * fabs(want) && want >= -1 && want < 1 && x != 0,
				      "PE(%d,%d): %s for %g", i, j, w, want);
		}
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 47 cycles, 4 folds, 50 outputs checked, 0 mismatches, max abs error "));
	free(out);
	free(err);
}
END_TEST

/* Runs lab with the given stdin text (through sh) and returns stdout (owned). */
static char *with_stdin(const char *input, const char *args)
{
	char cmd[8192], *s;
	FILE *p;
	size_t n = 0;
	snprintf(cmd, sizeof cmd, "printf '%s' | %s lab -c %s --gemm 10x6x5 %s", input, th_tpusim(), preset(), args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	s = calloc(1, 1 << 20);
	ck_assert_ptr_nonnull(s);
	n = fread(s, 1, (1 << 20) - 1, p);
	s[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	return s;
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

START_TEST(step_reads_lines)
{
	char *out = with_stdin("\\n\\nq\\n", "--step --cycles 5..40");
	/* Cycles 5 and 6 go on; after 7, "q". */
	ck_assert_int_eq(count(out, "\ncycle "), 3);
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 7 of 47"));
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 47 cycles"));
	free(out);
	out = with_stdin("\\n", "--step");
	/* Cycle 0 goes on; after cycle 1, the end of the input. */
	ck_assert_int_eq(count(out, "\ncycle "), 2);
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 1 of 47"));
	free(out);
}
END_TEST

struct bad {
	const char *args[8];
	const char *msg;
};

START_TEST(errors)
{
	static const struct bad cases[] = {
		{ { "--gemm", "10x6", NULL }, "--gemm: expected MxKxN with each in [1, 1024], found \"10x6\"\n" },
		{ { "--gemm", "0x6x5", NULL }, "--gemm: expected MxKxN with each in [1, 1024], found \"0x6x5\"\n" },
		{ { "--gemm", "10x6x1025", NULL }, "--gemm: expected MxKxN with each in [1, 1024], found \"10x6x1025\"\n" },
		{ { "--gemm", "10x6x5x", NULL }, "--gemm: expected MxKxN with each in [1, 1024], found \"10x6x5x\"\n" },
		{ { "--gemm", "10X6X5", NULL }, "--gemm: expected MxKxN with each in [1, 1024], found \"10X6X5\"\n" },
		{ { "--gemm", "10x6x5", "--set", "array.rows=17", NULL },
		  "--set:1:12: array.rows: expected at most 16 for the lab's grid (arrays up to 16 x 16 PEs), found 17; "
		  "configs/lab_4x4.yaml is a 4 x 4 array for labs\n" },
		{ { "--gemm", "10x6x5", "-c", "big.yaml", NULL },
		  "big.yaml:1:24: array.cols: expected at most 16 for the lab's grid (arrays up to 16 x 16 PEs), found 32; "
		  "configs/lab_4x4.yaml is a 4 x 4 array for labs\n" },
		{ { "--gemm", "10x6x5", "--cycles", "5..3", NULL }, "--cycles: expected A..B with 0 <= A <= B, found \"5..3\"\n" },
		{ { "--gemm", "10x6x5", "--cycles", "5", NULL }, "--cycles: expected A..B with 0 <= A <= B, found \"5\"\n" },
		/* 47 cycles: the last is 46. */
		{ { "--gemm", "10x6x5", "--cycles", "40..47", NULL },
		  "--cycles: expected A..B with 0 <= A <= B <= 46 (the run's last cycle), found \"40..47\"\n" },
		{ { "--gemm", "10x6x5", "--seed", "-1", NULL },
		  "--seed: expected an integer in [0, 2^64), found \"-1\"\n" },
		{ { "--cycles", "1..2", NULL }, "lab: expected --gemm MxKxN, found none\n" },
		{ { "--gemm", "10x6x5", "--format", "xml", NULL }, "--format: expected text or json, found \"xml\"\n" },
		{ { "--gemm", "10x6x5", "--format", "json", "--step", NULL },
		  "--step: expected with --format text, found --format json\n" },
		/* Options of other commands, each named; --model even at run's default. */
		{ { "--gemm", "10x6x5", "--model", "cycle", NULL }, "--model: expected an option of tpusim lab (see tpusim "
		  "--help), found an option of tpusim run; lab runs one GEMM on the functional model with ideal memory\n" },
		{ { "--gemm", "10x6x5", "-w", "w.yaml", NULL }, "-w: expected an option of tpusim lab (see tpusim --help), found "
		  "an option of tpusim run; lab runs one GEMM on the functional model with ideal memory\n" },
		{ { "--gemm", "10x6x5", "--dataflows", "ws,os", NULL }, "--dataflows: expected an option of tpusim lab (see "
		  "tpusim --help), found an option of tpusim compare; lab runs one GEMM on the functional model with ideal "
		  "memory\n" },
		{ { "--gemm", "10x6x5", "--dataflow", "os", "--html", "p.html", NULL },
		  "--dataflow: expected without --html (the page shows ws, os and is side by side), found --dataflow os; drop "
		  "--dataflow with --html\n" },
	};
	char *dir = th_tmpdir(), *big = th_write(dir, "big.yaml", "array: {rows: 4, cols: 32}\n");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *argv[16] = { "lab", "-c", preset() };
		int n = 3;
		char *out, *err;
		for (int k = 0; cases[c].args[k]; k++)
			argv[n++] = cases[c].args[k];
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
		ck_assert_str_eq(err, cases[c].msg);
		ck_assert_str_eq(out, "");
		free(out);
		free(err);
	}
	free(big);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(html_page)
{
	char *dir = th_tmpdir(), path[4200], bad[4200], *out, *err, *page;
	struct stat st;
	snprintf(path, sizeof path, "%s/lab.html", dir);
	/* A missing parent directory is made; one under a file cannot be. */
	char *afile = th_write(dir, "afile", "a file\n");
	snprintf(bad, sizeof bad, "%s/afile/lab.html", dir);
	const char *ok[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--html", path, NULL };
	const char *nodir[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--html", bad, NULL };
	const char *big[] = { "lab", "-c", preset(), "--set", "array.rows=16", "--set", "array.cols=16", "--gemm",
			      "1024x1024x1024", "--html", path, NULL };
	const char *fp32[] = { "lab", "-c", preset(), "--set", "array.rows=16", "--set", "array.cols=16", "--set",
			       "array.dtype=fp32", "--gemm", "64x64x64", "--html", path, NULL };
	struct timespec t0, t1;

	lab(".", nodir, 2, &out, &err);
	ck_assert_ptr_nonnull(strstr(err, "--html: expected a writable path, found \""));
	ck_assert_int_ne(stat(bad, &st), 0);
	free(out);
	free(err);
	unlink(afile);
	free(afile);

	/* 2^30 MACs, at least 4 B each per dataflow: 12 GB, refused before anything runs. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	lab(".", big, 2, &out, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_str_eq(err, "--html: expected at most 20 MB of register data for the page, found at least 12288 MB (GEMM "
			      "1024x1024x1024: 1073741824 MACs, 4 B each in each of ws, os and is); try a smaller --gemm\n");
	ck_assert_msg((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) < 1.0, "refused late");
	ck_assert_int_ne(stat(path, &st), 0);
	free(out);
	free(err);

	/* 64^3 MACs pass the estimate (3 MB); fp32 values make more than 20 MB, refused while recording. */
	lab(".", fp32, 2, &out, &err);
	ck_assert_str_eq(err, "--html: expected at most 20 MB of register data for the page, found more (GEMM "
			      "64x64x64 on 16 x 16 PEs); try a smaller --gemm\n");
	ck_assert_int_ne(stat(path, &st), 0);
	free(out);
	free(err);

	lab(".", ok, 0, &out, &err);
	ck_assert_ptr_nonnull(strstr(out, "lab.html: ws 47 cycles, 50 outputs checked, 0 mismatches; os 41 cycles, 50 "
				     "outputs checked, 0 mismatches; is 38 cycles, 50 outputs checked, 0 mismatches\n"));
	free(out);
	free(err);
	page = th_slurp(path);
	/* Self-contained: nothing fetched from elsewhere. */
	ck_assert_ptr_null(strstr(page, "http:"));
	ck_assert_ptr_null(strstr(page, "https:"));
	ck_assert_ptr_null(strstr(page, " src="));
	ck_assert_ptr_null(strstr(page, "<link"));
	ck_assert_ptr_null(strstr(page, "@import"));
	ck_assert_uint_lt(strlen(page), 200000);
	free(page);
	/* Only the page in the directory: no temporary file left behind. */
	DIR *d = opendir(dir);
	struct dirent *de;
	int files = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			ck_assert_str_eq(de->d_name, "lab.html");
			files++;
		}
	closedir(d);
	ck_assert_int_eq(files, 1);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * One of each: 1x1x1 on the 4 x 4 array is one fold of one row of K (Sr = 1),
 * one step (T = 1) and one column (Sc = 1): ws and is take Sr + T + (R + Sc
 * - 2) = 1 + 1 + 3 = 5 cycles; os T + (Sr + Sc - 2 + R) = 1 + 4 = 5.
 */
START_TEST(singular_counts)
{
	char *dir = th_tmpdir(), path[4200], *out, *err;
	snprintf(path, sizeof path, "%s/one.html", dir);
	const char *term[] = { "lab", "-c", preset(), "--gemm", "1x1x1", NULL };
	const char *page[] = { "lab", "-c", preset(), "--gemm", "1x1x1", "--html", path, NULL };
	lab(".", term, 0, &out, &err);
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 5 cycles, 1 fold, 1 output checked, 0 mismatches\n"));
	free(out);
	free(err);
	lab(".", page, 0, &out, &err);
	ck_assert_ptr_nonnull(strstr(out, "one.html: ws 5 cycles, 1 output checked, 0 mismatches; os 5 cycles, 1 output "
				     "checked, 0 mismatches; is 5 cycles, 1 output checked, 0 mismatches\n"));
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The id of signal scope.name in VCD text (the scope the innermost, e.g. "pe_0_1", "weight"), or "" when absent. */
static void vcd_id(const char *text, const char *scope, const char *name, char *id, size_t size)
{
	char cur[64] = "", sc[64], nm[64], code[16];
	const char *p = text;
	id[0] = '\0';
	while ((p = strchr(p, '$'))) {
		if (sscanf(p, "$scope module %63s $end", sc) == 1)
			snprintf(cur, sizeof cur, "%s", sc);
		else if (sscanf(p, "$var %*s %*d %15s %63s $end", code, nm) == 2 && !strcmp(cur, scope) && !strcmp(nm, name))
			snprintf(id, size, "%s", code);
		else if (!strncmp(p, "$enddefinitions", 15))
			return;
		p++;
	}
}

/*
 * The value of integer signal id at time t (ps): its last change at or before
 * t, read as a bits-wide two's complement number. *last receives the file's
 * last time.
 */
static int64_t vcd_value_at(const char *text, const char *id, int bits, int64_t t, int64_t *last)
{
	const char *p = strstr(text, "$enddefinitions");
	int64_t now = 0, v = 0;
	bool seen = false;
	ck_assert_ptr_nonnull(p);
	for (p = strchr(p, '\n'); p && *++p; p = strchr(p, '\n')) {
		if (*p == '#') {
			now = strtoll(p + 1, NULL, 10);
			*last = now;
		} else if (*p == 'b' && now <= t) {
			const char *sp = strchr(p, ' ');
			size_t n = strcspn(sp + 1, "\n");
			if (strlen(id) == n && !strncmp(sp + 1, id, n)) {
				uint64_t u = 0;
				int nb = (int)(sp - p - 1);
				for (const char *q = p + 1; q < sp; q++)
					u = u << 1 | (uint64_t)(*q == '1');
				/* Sign from the leftmost bit of a full-width vector (VCD drops leading zeros). */
				if (nb == bits && bits < 64 && (u >> (bits - 1) & 1))
					u |= ~UINT64_C(0) << bits;
				v = (int64_t)u;
				seen = true;
			}
		}
	}
	ck_assert_msg(seen, "no value of %s by %lld ps", id, (long long)t);
	return v;
}

/*
 * --vcd BASE: the ws run of the hand case (seed 3) at 0.8 GHz, 1250 ps a
 * cycle. The file ends at 47 cycles x 1250 = 58750 ps. At cycle 22 (27500
 * ps) the header's derivation holds: PE(i, j) uses fold 1's weight B[4 + i][j]
 * (i < 2, j < 4); column 0 holds fold 2's tile B[i][4], in the other bank in
 * rows 0 and 1 (their inputs use fold 1's) and in the bank in use in rows 2
 * and 3 (their last input was fold 0's, bank 0 = fold 2's).
 */
START_TEST(vcd_trace)
{
	char *dir = th_tmpdir(), base[4200], path[4300], bad[4200], *out, *err, *text, id[16], scope[32];
	double a[60], b[30];
	int64_t last = -1;
	struct stat st;
	snprintf(base, sizeof base, "%s/t", dir);
	snprintf(path, sizeof path, "%s.vcd", base);
	free(th_write(dir, "afile", "a file\n"));
	snprintf(bad, sizeof bad, "%s/afile/t", dir);
	const char *argv[] = { "lab", "-c", preset(), "--set", "clock_ghz=0.8", "--gemm", "10x6x5", "--dataflow", "ws",
			       "--seed", "3", "--vcd", base, NULL };
	const char *nodir[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--vcd", bad, NULL };
	const char *html[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--vcd", base, "--html", "p.html", NULL };
	const char *cycles[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--vcd", base, "--cycles", "1..2", NULL };
	const char *big[] = { "lab", "-c", preset(), "--set", "array.rows=16", "--set", "array.cols=16", "--gemm",
			      "1024x1024x1024", "--vcd", base, NULL };

	lab(".", argv, 0, &out, &err);
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(strstr(out, "t.vcd (ws): 47 cycles, 4 folds, 50 outputs checked, 0 mismatches\n"));
	free(out);
	free(err);
	text = th_slurp(path);
	lab_operands(DT_INT8, 3, 10, 6, 5, a, b);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			const char *sig = j == 0 && i < 2 ? "shadow" : "weight";
			int kk = j == 0 ? i : 4 + i;
			int n = j == 0 ? 4 : j;
			if (j > 0 && i >= 2)
				continue;
			snprintf(scope, sizeof scope, "pe_%d_%d", i, j);
			vcd_id(text, scope, sig, id, sizeof id);
			ck_assert_msg(id[0], "no %s.%s", scope, sig);
			int64_t v = vcd_value_at(text, id, 32, 22 * 1250, &last);
			ck_assert_msg(v == (int64_t)b[kk * 5 + n], "%s.%s at 27500 ps: %lld, B[%d][%d] = %.0f", scope, sig,
				      (long long)v, kk, n, b[kk * 5 + n]);
			if (j == 1 && i == 0) {
				/* Fold 1 until cycle 22 at least: its weight there since it was in place (cycle 14 + 0 + 2). */
				ck_assert_int_eq(vcd_value_at(text, id, 32, 16 * 1250, &last), (int64_t)b[4 * 5 + 1]);
			}
		}
	ck_assert_int_eq(last, 47 * 1250);
	free(text);

	lab(".", nodir, 2, &out, &err);
	ck_assert_ptr_nonnull(strstr(err, "/afile/t.vcd\" (Not a directory)\n"));
	ck_assert(!strncmp(err, "--vcd: expected a writable path, found \"", 40));
	free(out);
	free(err);
	lab(".", html, 2, &out, &err);
	ck_assert_str_eq(err, "--vcd: expected without --html (a trace holds one dataflow, the page all three), found "
			      "--html; write them with two commands\n");
	free(out);
	free(err);
	lab(".", cycles, 2, &out, &err);
	ck_assert_str_eq(err, "--vcd: expected without --cycles, --step and --format (the trace holds every cycle), "
			      "found them\n");
	free(out);
	free(err);
	ck_assert_int_eq(unlink(path), 0);
	/*
	 * 1024^3 on 16 x 16, ws: 64 x 64 folds of T = 1024, 16 rows each:
	 * 16 + 4096 x 1024 + (16 + 16 - 2) = 4194350 cycles, each up to
	 * 256 x 5 + 3 changes of FUNC_VCD_CHANGE_BYTES: refused before the run.
	 */
	char want[512];
	long long bytes = INT64_C(4194350) * (256 * 5 + 3) * FUNC_VCD_CHANGE_BYTES;
	snprintf(want, sizeof want, "--vcd: expected a file of at most 1073741824 bytes (sim.max_trace_bytes), found an "
		 "estimated %lld bytes (GEMM 1024x1024x1024: 4194350 cycles x (16 x 16 PEs x 5 signals + 3) x 16 bytes); "
		 "try a smaller --gemm, or raise sim.max_trace_bytes (--set sim.max_trace_bytes=%lld)\n", bytes, bytes);
	lab(".", big, 2, &out, &err);
	ck_assert_str_eq(err, want);
	ck_assert_int_ne(stat(path, &st), 0);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- the timing the lab shows: each rule from what a register must hold ---- */

/* func_run of an M x K x N GEMM on lab_4x4 in df, pipelined or serial, with opt; its status. */
static int run_timed(int df, bool dbuf, int64_t m, int64_t k, int64_t n, const struct func_opts *opt,
		     struct func_result *r, struct err *e)
{
	static const char *const dfs[] = { "array.dataflow=ws", "array.dataflow=os", "array.dataflow=is" };
	const char *sets[] = { dfs[df], dbuf ? "array.weight_double_buffer=true" : "array.weight_double_buffer=false", NULL };
	struct config c;
	struct sched s;
	struct op o = th_gemm(m, k, n, 1);
	th_config(&c, "lab_4x4", sets);
	ck_assert_int_eq(plan_gemm(&s, &o, &c, &c.arch, df, true, e), 0);
	return func_run(&c, &o, &s, opt, r, e);
}

/*
 * Serial ws and is: the next tile shifts into the weight registers
 * themselves. PE (k, j)'s weight is read for the last time by fold f's last
 * input in cycle e_f - 1 + k + j, and fold f+1's chain first writes it in
 * cycle L_{f+1} + k + j; a register written in a cycle holds the new value
 * from the next, so that write may come in the cycle of the last read:
 * L_{f+1} = e_f - 1, one edge before the last input has passed.
 *
 * ws 3x8x4 (is 4x8x3, A^T is 8 x 4 and T = N = 3): two folds of 4 x 4,
 * T = 3. L_0 = 0, s_0 = L_0 + 4 = 4, e_0 = 7; L_1 = e_0 - 1 = 6,
 * s_1 = max(e_0, L_1 + 4) = 10, e_1 = 13; the last partial sum (t = 2,
 * column 3) leaves at the end of 10 + 2 + (4 - 1) + 3 = 18: 19 cycles,
 * 6 compute, 4 + 3 = 7 weight_shift, 19 - 13 = 6 fill_drain (one edge
 * later, L_1 = e_0, gave 20). One cycle earlier still, L_1 = 5: fold 1's
 * chain writes PE (0, 0) in cycle 5, and fold 0's last input reads it in
 * cycle 6: the registers object there.
 */
START_TEST(serial_tile_shifts_in_on_the_last_read)
{
	for (int df = DF_WS; df <= DF_IS; df += DF_IS - DF_WS) {
		struct func_result r;
		struct err e = { 0 };
		struct func_opts on_time = { .seed = 3 };
		struct func_opts early = { .seed = 3, .early = 1, .early_fold = 1, .early_what = FUNC_EARLY_LOAD };
		int64_t m = df == DF_WS ? 3 : 4, n = df == DF_WS ? 4 : 3;
		ck_assert_msg(run_timed(df, false, m, 8, n, &on_time, &r, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(r.mismatches, 0);
		ck_assert_int_eq(r.cycles, 19);
		ck_assert_int_eq(r.cat[CAT_COMPUTE], 6);
		ck_assert_int_eq(r.cat[CAT_WEIGHT_SHIFT], 7);
		ck_assert_int_eq(r.cat[CAT_FILL_DRAIN], 6);
		ck_assert_int_lt(run_timed(df, false, m, 8, n, &early, &r, &e), 0);
		ck_assert_int_eq(e.kind, ERR_SIM);
		ck_assert_str_eq(e.msg, "functional model: cycle 6, PE (0, 0): fold 0's input met a weight still shifting "
			       "into bank 0");
	}
}
END_TEST

/*
 * The lab's 10x6x5 (docs/labs/1-dataflows.md, question 3) without the second
 * bank. ws folds (Sr, T): (4, 10), (2, 10), (4, 10), (2, 10): s_0 = 4,
 * e_0 = 14; s_1 = max(14, 13 + 2) = 15, e_1 = 25; s_2 = max(25, 24 + 4) = 28,
 * e_2 = 38; s_3 = max(38, 37 + 2) = 39, e_3 = 49; the last partial sum
 * (column 0 of a 1-column fold) leaves at the end of 49 + 4 - 1 - 1 = 51:
 * 52 cycles. is: (4, 5), (2, 5) for each of M 0..3, 4..7, 8..9: gaps
 * 4, 1, 3, 1, 3, 1 before the streams, 6 x 5 streaming, and the last fold's
 * 2 columns drain 4 + 2 - 2: 13 + 30 + 4 = 47 cycles.
 */
START_TEST(serial_lab_gemm)
{
	static const struct { const char *df; const char *want; } cases[] = {
		{ "ws", "\nsummary: 52 cycles, 4 folds, 50 outputs checked, 0 mismatches\n" },
		{ "is", "\nsummary: 47 cycles, 6 folds, 50 outputs checked, 0 mismatches\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[] = { "lab", "-c", preset(), "--gemm", "10x6x5", "--dataflow", cases[i].df, "--set",
				       "array.weight_double_buffer=false", "--cycles", "0..0", NULL };
		char *out, *err;
		lab(".", argv, 0, &out, &err);
		ck_assert_msg(strstr(out, cases[i].want), "%s: %s", cases[i].df, out);
		free(out);
		free(err);
	}
}
END_TEST

/*
 * Pipelined ws: fold f+1's tile goes into the bank fold f-1 used, so its
 * chain needs only that f-1's last input has read it (cycle e_{f-1} - 1 at
 * PE (0, 0); the write may share the cycle) and that fold f's tile is in
 * (the top ports): L_{f+1} = max(L_f + Sr_f, e_{f-1} - 1), one cycle before
 * fold f's swap wave when fold f waited for the stream before it.
 *
 * 3x9x8 on 4 x 4: K = 9 is row blocks of 4, 4, 1, N = 8 two column blocks;
 * six folds (Sr 4, 4, 1, 4, 4, 1), T = 3. L_0 = 0, s_0 = 4, e_0 = 7.
 * L_1 = L_0 + 4 = 4 (bank 1 unused), s_1 = max(7, 8) = 8, e_1 = 11.
 * L_2 = max(8, e_0 - 1 = 6) = 8, s_2 = max(11, 9) = 11 (fold 2 waited for
 * fold 1's stream), e_2 = 14. L_3 = max(8 + 1, e_1 - 1 = 10) = 10 (the swap
 * wave of fold 2 is at 11), s_3 = max(14, 10 + 4) = 14, e_3 = 17.
 * L_4 = max(14, 13) = 14, s_4 = 18, e_4 = 21; L_5 = 18, s_5 = max(21, 19)
 * = 21, e_5 = 24; the last partial sums (4 columns) leave at the end of
 * 24 - 1 + 3 + 3 = 29: 30 cycles (at the swap wave, L_3 = 11, 31). One cycle
 * earlier, L_3 = 9: fold 3's chain writes bank 1 at PE (0, 0) in cycle 9,
 * and fold 1's last input reads it there in cycle 10.
 */
START_TEST(pipelined_tile_shifts_in_before_the_swap_wave)
{
	struct func_result r;
	struct err e = { 0 };
	struct func_opts on_time = { .seed = 3 };
	struct func_opts early = { .seed = 3, .early = 1, .early_fold = 3, .early_what = FUNC_EARLY_LOAD };
	ck_assert_msg(run_timed(DF_WS, true, 3, 9, 8, &on_time, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.mismatches, 0);
	ck_assert_int_eq(r.cycles, 30);
	ck_assert_int_lt(run_timed(DF_WS, true, 3, 9, 8, &early, &r, &e), 0);
	ck_assert_int_eq(e.kind, ERR_SIM);
	ck_assert_str_eq(e.msg, "functional model: cycle 10, PE (0, 0): fold 1's input met a weight still shifting into bank 1");

	/* The lab shows it: at cycle 10 fold 1 streams its last step and fold 3 loads. */
	const char *argv[] = { "lab", "-c", preset(), "--gemm", "3x9x8", "--cycles", "10..10", NULL };
	char *out, *err;
	lab(".", argv, 0, &out, &err);
	ck_assert_ptr_nonnull(strstr(out, "\ncycle 10 of 30: fold 1 of 6 (M 0..2, K 4..7, N 0..3) streaming, step 2 of 3; "
				     "loading fold 3 (M 0..2, K 0..3, N 4..7)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nsummary: 30 cycles, 6 folds, 24 outputs checked, 0 mismatches\n"));
	free(out);
	free(err);
}
END_TEST

/*
 * os: the drain rules are what the registers need already (the rules do
 * not change here; the registers object one cycle earlier). A block's
 * results drain as a column, row i moving when the rows below it do, which
 * is once the block's last row is in: fold g's results leave row i of
 * column j in cycle X_j + i, X_j = e_g + Sr_g - 1 + j.
 *
 * Pipelined, heights alternating: 5x2x8 on 4 x 4, blocks (Sr 4, 1) for each
 * of two column blocks, T = K = 2. Fold f+1 writes row i's result into out
 * in cycle e_{f+1} - 1 + i + j, which fold f's leaves in X_j + i: e_{f+1} >=
 * e_f + Sr_f, whatever Sr_{f+1} (row 0 binds). e = 2, 6 (2 + 4), 8 (6 + 2),
 * 12 (8 + 4); the last block leaves 12 + 1 + 4 - 2 + 4 = 19: 19 cycles. One
 * earlier, e_1 = 5: fold 1 writes out(0, 0) in cycle 4, fold 0's result
 * leaves it in cycle 5.
 *
 * Serial, the next block with fewer rows: 5x2x4, blocks (Sr 4, 1). The drain
 * runs through acc, and fold 1's first MAC at PE (0, j) in cycle s_1 + j
 * writes acc(0, j), which fold 0's result leaves in cycle 2 + 3 + j:
 * s_1 = e_0 + Sr_0 - 1 = 5, though fold 1 uses row 0 only: row 0 is the
 * first row fold 0 leaves, and the first fold 1 needs. e_1 = 7; the last
 * results leave 7 + 1 + 4 - 2 + 4 = 14: 14 cycles. One earlier, s_1 = 4:
 * fold 1's first MAC writes acc(0, 0) in cycle 4, still fold 0's.
 */
START_TEST(os_drain_rules_are_tight)
{
	static const struct {
		bool dbuf;
		int64_t n, cycles, fold;
		const char *msg;
	} cases[] = {
		{ true, 8, 19, 1, "functional model: cycle 4, PE (0, 0): fold 1's result would write over fold 0's value in "
				  "out that has not moved on" },
		{ false, 4, 14, 1, "functional model: cycle 4, PE (0, 0): fold 1's MAC would write over fold 0's result in acc" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct func_result r;
		struct err e = { 0 };
		struct func_opts on_time = { .seed = 3 };
		struct func_opts early = { .seed = 3, .early = 1, .early_fold = cases[i].fold, .early_what = FUNC_EARLY_DRAIN };
		ck_assert_msg(run_timed(DF_OS, cases[i].dbuf, 5, 2, cases[i].n, &on_time, &r, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(r.mismatches, 0);
		ck_assert_int_eq(r.cycles, cases[i].cycles);
		ck_assert_int_lt(run_timed(DF_OS, cases[i].dbuf, 5, 2, cases[i].n, &early, &r, &e), 0);
		ck_assert_int_eq(e.kind, ERR_SIM);
		ck_assert_str_eq(e.msg, cases[i].msg);
	}
}
END_TEST

/*
 * An independent count: each register's last use, kept PE by PE, and each
 * fold placed at the earliest cycle no register of it is still in use (a
 * register may be written in the cycle its old value is last read or moves
 * on), without the rules' formulas. ws/is: a chain writes PE (k, j) of its
 * bank from L + k + j to L + j + Sr - 1 through column j's top port; MACs
 * read PE (k, j) at s + t + k + j; inputs enter row i at s + i; partial sums
 * pass (i, j) at s + t + i + j in all R rows. os: a block accumulates in acc
 * from s + i + j; its results (pipelined: in out from e - 1 + i + j) drain as
 * a column from X_j = e + Sr - 1 + j, leaving row r in cycle X_j + r.
 */
#define IND_MAX 16

struct ind {
	int64_t R, C;
	int64_t read[2][IND_MAX][IND_MAX], port[IND_MAX];   /* ws/is: a bank's last read; a top port's last write */
	int64_t left[IND_MAX], top[IND_MAX];                /* the edge ports' last inputs */
	int64_t psum[IND_MAX][IND_MAX];                     /* ws/is: a partial sum's last cycle in (i, j) */
	int64_t acc[IND_MAX][IND_MAX], out[IND_MAX][IND_MAX]; /* os: the cycle the old value moves on */
	int64_t cycles;
};

static void ind_fold(struct ind *d, int df, bool dbuf, int64_t f, const struct tile_ins *in)
{
	int64_t sr = in->sr, sc = in->sc, T = in->t, R = d->R, L = 0, s = 0;
	if (df != DF_OS) {
		int b = dbuf ? (int)(f & 1) : 0;
		for (int64_t j = 0; j < sc; j++) {
			L = max64(L, d->port[j] + 1 - j);
			for (int64_t k = 0; k < sr; k++)
				L = max64(L, d->read[b][k][j] - k - j);
		}
		s = L + sr;                                     /* the last write to row k is L + j + Sr - 1 */
		for (int64_t i = 0; i < R; i++)
			for (int64_t j = 0; j < sc; j++)
				s = max64(s, max64(i < sr ? d->left[i] + 1 - i : 0, d->psum[i][j] + 1 - i - j));
		for (int64_t j = 0; j < sc; j++) {
			d->port[j] = L + j + sr - 1;
			for (int64_t i = 0; i < R; i++) {
				if (i < sr)
					d->read[b][i][j] = s + T - 1 + i + j;
				d->psum[i][j] = s + T - 1 + i + j;
			}
		}
		for (int64_t i = 0; i < sr; i++)
			d->left[i] = s + i + T - 1;
		d->cycles = max64(d->cycles, s + T + R + sc - 2);
		return;
	}
	int64_t (*res)[IND_MAX] = dbuf ? d->out : d->acc;
	for (int64_t i = 0; i < sr; i++)
		s = max64(s, d->left[i] + 1 - i);
	for (int64_t j = 0; j < sc; j++) {
		s = max64(s, d->top[j] + 1 - j);
		for (int64_t i = 0; i < R; i++) {
			if (i < sr)        /* the first MAC writes acc at s + i + j; pipelined, the last writes out at e - 1 + i + j */
				s = max64(s, dbuf ? max64(d->out[i][j] + 1 - i - j - T, d->acc[i][j] - i - j) : d->acc[i][j] - i - j);
			else               /* the drain moves into row i at X_j + i - Sr */
				s = max64(s, res[i][j] - j - i + 1 - T);
		}
	}
	int64_t e = s + T;
	for (int64_t j = 0; j < sc; j++) {
		d->top[j] = s + j + T - 1;
		for (int64_t i = 0; i < R; i++) {
			res[i][j] = e + sr - 1 + j + i;
			if (dbuf && i < sr)
				d->acc[i][j] = e - 1 + i + j;
		}
	}
	for (int64_t i = 0; i < sr; i++)
		d->left[i] = s + i + T - 1;
	d->cycles = max64(d->cycles, e + sr - 1 + sc - 1 + R);
}

/*
 * 300 random shapes (arrays up to 6 x 6, M, K, N up to 16, one or two
 * instances) in ws, os and is, pipelined and serial: the independent count,
 * the registers (func_run) and the closed form agree.
 */
START_TEST(timing_equals_independent_count)
{
	static const char *const dfs[] = { "array.dataflow=ws", "array.dataflow=os", "array.dataflow=is" };
	uint64_t st = 0x2545F4914F6CDD1DULL;
	int checked = 0;
	for (int i = 0; i < 300; i++) {
		int64_t R = th_rnd(&st, 1, 6), C = th_rnd(&st, 1, 6);
		struct op o = th_gemm(th_rnd(&st, 1, 16), th_rnd(&st, 1, 16), th_rnd(&st, 1, 16), th_rnd(&st, 1, 2));
		for (int mode = 0; mode < 6; mode++) {
			int df = mode / 2;
			bool dbuf = mode % 2;
			char rows[32], cols[32];
			const char *sets[] = { dfs[df], dbuf ? "array.weight_double_buffer=true" : "array.weight_double_buffer=false",
					       rows, cols, NULL };
			struct config c;
			struct sched pl;
			struct sched_iter it;
			struct tile_ins in;
			struct func_result r;
			struct func_opts opt = { .seed = (uint64_t)i };
			struct result a;
			struct err e = { 0 };
			struct ind d;
			int64_t f = 0;
			snprintf(rows, sizeof rows, "array.rows=%lld", (long long)R);
			snprintf(cols, sizeof cols, "array.cols=%lld", (long long)C);
			th_config(&c, "lab_4x4", sets);
			ck_assert_int_eq(plan_gemm(&pl, &o, &c, &c.arch, df, true, &e), 0);
			memset(&d, 0, sizeof d);
			d.R = R, d.C = C;
			for (int b = 0; b < 2; b++)
				for (int64_t x = 0; x < IND_MAX * IND_MAX; x++)
					d.read[b][x / IND_MAX][x % IND_MAX] = d.psum[x / IND_MAX][x % IND_MAX] =
						d.acc[x / IND_MAX][x % IND_MAX] = d.out[x / IND_MAX][x % IND_MAX] = INT64_MIN / 4;
			for (int64_t x = 0; x < IND_MAX; x++)
				d.port[x] = d.left[x] = d.top[x] = INT64_MIN / 4;
			sched_iter_init(&it, &pl);
			while (sched_next(&it, &in))
				if (in.kind == TI_FOLD) {
					ck_assert(!in.cont);
					ind_fold(&d, df, dbuf, f++, &in);
				}
			ck_assert_msg(func_run(&c, &o, &pl, &opt, &r, &e) == 0, "%s", e.msg);
			ck_assert_int_eq(r.mismatches, 0);
			ck_assert_int_eq(th_analytic(&c, &o, df, true, &a, &e), 0);
			ck_assert_msg(d.cycles == r.cycles && r.cycles == a.cycles,
				      "case %d: %s %s %lldx%lld M %lld K %lld N %lld x%lld: independent %lld, registers %lld, "
				      "closed form %lld", i, dfs[df] + 15, dbuf ? "pipelined" : "serial", (long long)R, (long long)C,
				      (long long)o.m, (long long)o.k, (long long)o.n, (long long)o.repeat, (long long)d.cycles,
				      (long long)r.cycles, (long long)a.cycles);
			checked++;
		}
	}
	ck_assert_int_eq(checked, 1800);
}
END_TEST

Suite *lab_suite(void)
{
	Suite *s = suite_create("lab");
	TCase *t = tcase_create("lab");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, ws_grid_holds_b_by_the_rule);
	tcase_add_test(t, is_grid_holds_a_transposed);
	tcase_add_test(t, cycles_equal_analytic);
	tcase_add_test(t, bf16_values);
	tcase_add_test(t, step_reads_lines);
	tcase_add_test(t, errors);
	tcase_add_test(t, html_page);
	tcase_add_test(t, singular_counts);
	tcase_add_test(t, vcd_trace);
	tcase_add_test(t, serial_tile_shifts_in_on_the_last_read);
	tcase_add_test(t, serial_lab_gemm);
	tcase_add_test(t, pipelined_tile_shifts_in_before_the_swap_wave);
	tcase_add_test(t, os_drain_rules_are_tight);
	tcase_add_test(t, timing_equals_independent_count);
	suite_add_tcase(s, t);
	return s;
}
