/*
 * test_functional_cli.c - tpusim run --model functional from the command line
 * (suite functional, with test_functional.c): a matmul end to end with its
 * per-PE VCD and saved result checked by hand, a failed run that leaves no
 * VCD, --save-outputs' file names, modes and refusals, and the refusals
 * that come before anything runs or is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "functional.h"
#include "npy.h"
#include "tests.h"
#include "ydoc.h"

/* The value of signal `name` in scope `scope` at time t (ps) in VCD text, as text after its last change at or before t. */
static const char *vcd_value_at(const char *vcd, const char *scope, const char *name, long t, char *out, size_t size)
{
	char id[16] = "", want[128];
	const char *p = strstr(vcd, scope), *q;
	ck_assert_ptr_nonnull(p);
	snprintf(want, sizeof want, " %s $end", name);
	q = strstr(p, want);
	ck_assert_ptr_nonnull(q);
	while (q > vcd && q[-1] != ' ')
		q--;
	sscanf(q, "%15s", id);
	out[0] = 0;
	long now = 0;
	for (p = strstr(vcd, "$enddefinitions"); p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p == '#') {
			now = atol(p + 1);
			if (now > t)
				break;
		} else if (*p == 'b' || *p == 'r') {
			char val[80], sid[16];
			if (sscanf(p + 1, "%79s %15s", val, sid) == 2 && !strcmp(sid, id))
				snprintf(out, size, "%s", val);
		}
	}
	return out;
}

/* The last time in a VCD file. */
static long vcd_last_time(const char *vcd)
{
	const char *p = strrchr(vcd, '#');
	ck_assert_ptr_nonnull(p);
	return atol(p + 1);
}

/*
 * tpusim run --model functional on lab_4x4 (ws, pipelined, 1 GHz): a 10 x 6
 * x 5 matmul with B from a .npy file. By hand: folds (K 6 = 4 + 2 rows, N 5 =
 * 4 + 1 columns, T = M = 10 > Sr) stream back to back after the first
 * shift: 4 + 4 x 10 = 44, then R + Sc_last - 2 = 3: 47 cycles, and the
 * relu's 50 elements on 4 lanes take ceil(50 / 4) = 13: 60. PE (2, 1) holds
 * the first fold's B[2][1] from cycle 1 + 4 = 5 (1000 ps a cycle). The
 * result saved as .npy equals A x B.
 */
START_TEST(cli_end_to_end)
{
	char *dir = th_tmpdir(), wl[4200], vbase[4200], outdir[4200], save[4200], cpath[4200], *out, *err, *text;
	double b[30], a[60];
	struct err e = { 0 };
	for (int i = 0; i < 30; i++)
		b[i] = (i * 37 % 255) - 127;
	func_random(DT_INT8, 1, a, 60);
	snprintf(cpath, sizeof cpath, "%s/b.npy", dir);
	ck_assert_int_eq(npy_write(cpath, b, 6, 5, true, &e), 0);
	snprintf(cpath, sizeof cpath, "%s/a.npy", dir);
	ck_assert_int_eq(npy_write(cpath, a, 10, 6, true, &e), 0);
	free(th_write(dir, "w.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 10, k: 6, n: 5, a_npy: a.npy, b_npy: b.npy}\n"
		      "  - {name: r, type: relu, elements: 50}\n"));
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	snprintf(vbase, sizeof vbase, "%s/trace", dir);
	snprintf(outdir, sizeof outdir, "%s/out", dir);
	snprintf(save, sizeof save, "%s/c", dir);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--vcd", vbase,
			       "-o", outdir, "--save-outputs", save, NULL };
	ck_assert_msg(th_cli(".", argv, &out, &err) == 0, "%s", err);
	/* Both operands come from files: no seed draws anything, and the summary says so. */
	ck_assert_msg(strstr(out, "functional: 50 outputs checked against a reference GEMM, 0 mismatches, max abs error 0 "
			      "(every operand from a .npy file: the seed draws nothing; ideal memory)\n"), "%s", out);
	free(out);
	free(err);
	snprintf(cpath, sizeof cpath, "%s/summary.json", outdir);
	struct ydoc *d = th_json_file(cpath);
	ck_assert_int_eq(th_json_int(d->root, "layers[0].functional.outputs"), 50);
	ck_assert_int_eq(th_json_int(d->root, "layers[0].functional.mismatches"), 0);
	ck_assert(th_json_num(d->root, "layers[0].functional.max_abs_error") == 0);
	ck_assert_str_eq(th_json_str(d->root, "model"), "functional");
	ck_assert_int_eq(th_json_int(d->root, "layers[0].cycles"), 47);
	ck_assert_int_eq(th_json_int(d->root, "total.cycles"), 60);
	ydoc_free(d);
	snprintf(cpath, sizeof cpath, "%s.vcd", vbase);
	text = th_slurp(cpath);
	char v[80];
	ck_assert_int_eq(vcd_last_time(text), 60 * 1000);
	vcd_value_at(text, "pe_2_1 ", "weight", 5000, v, sizeof v);
	ck_assert_int_eq(strtoll(v, NULL, 2), (int64_t)b[2 * 5 + 1] & 0xffffffff);
	vcd_value_at(text, "pe_2_1 ", "weight", 4000, v, sizeof v);
	ck_assert_int_ne(strtoll(v, NULL, 2), (int64_t)b[2 * 5 + 1] & 0xffffffff);
	free(text);
	double *c;
	int64_t r, cc;
	snprintf(cpath, sizeof cpath, "%s/mm.npy", save);
	ck_assert_msg((c = th_npy(cpath, &r, &cc, &e)), "%s", e.msg);
	ck_assert(r == 10 && cc == 5);
	for (int i = 0; i < 10; i++)
		for (int j = 0; j < 5; j++) {
			double ref = 0;
			for (int k = 0; k < 6; k++)
				ref += a[i * 6 + k] * b[k * 5 + j];
			ck_assert_double_eq(c[i * 5 + j], ref);
		}
	free(c);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A failed run writes nothing: int8 A 1 x 140000 and B 140000 x 1, all
 * -128, sum to 140000 x 16384 = 2293760000 > 2^31 - 1, which the int32
 * accumulator wraps: a mismatch, exit 1, and no BASE.vcd.
 */
START_TEST(cli_failed_run_leaves_no_vcd)
{
	enum { K = 140000 };
	char *dir = th_tmpdir(), wl[4200], vbase[4200], p[4200], *out, *err;
	double *v = malloc(K * sizeof *v);
	struct err e = { 0 };
	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < K; i++)
		v[i] = -128;
	snprintf(p, sizeof p, "%s/a.npy", dir);
	ck_assert_int_eq(npy_write(p, v, 1, K, true, &e), 0);
	snprintf(p, sizeof p, "%s/b.npy", dir);
	ck_assert_int_eq(npy_write(p, v, K, 1, true, &e), 0);
	free(v);
	free(th_write(dir, "w.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 1, k: 140000, n: 1, a_npy: a.npy, "
		      "b_npy: b.npy}\n"));
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	snprintf(vbase, sizeof vbase, "%s/t", dir);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--vcd", vbase, NULL };
	ck_assert_int_eq(th_cli(".", argv, &out, &err), 1);
	ck_assert_msg(strstr(err, "layer mm: 1 of 1 outputs differ from the reference GEMM"), "%s", err);
	snprintf(p, sizeof p, "%s.vcd", vbase);
	ck_assert_msg(access(p, F_OK) != 0, "%s exists after a failed run", p);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * --save-outputs: ops whose names give one file name each get their index
 * (layers m/m, m_m and m_m.1, ops 0, 1, 2: '/' is '_' in a file name, so
 * m_m.0, m_m.1 and, meeting op 1's, m_m.1.2), so every result has its file
 * and the count is the files'; each
 * file 0666 less the umask. A DIR that cannot take files is refused before
 * anything runs or is written.
 */
START_TEST(cli_save_outputs)
{
	char *dir = th_tmpdir(), wl[4200], save[4200], p[4200], odir[4200], *out, *err, want[4400];
	double a[3][6], b[3][6], *c;
	int64_t r, cc;
	struct err e = { 0 };
	struct stat st;
	const char *files[3] = { "m_m.0", "m_m.1", "m_m.1.2" };
	for (int l = 0; l < 3; l++) {
		for (int i = 0; i < 6; i++)
			a[l][i] = (l + 1) * (i + 1), b[l][i] = (i % 3) - l;
		snprintf(p, sizeof p, "%s/a%d.npy", dir, l);
		ck_assert_int_eq(npy_write(p, a[l], 2, 3, true, &e), 0);
		snprintf(p, sizeof p, "%s/b%d.npy", dir, l);
		ck_assert_int_eq(npy_write(p, b[l], 3, 2, true, &e), 0);
	}
	free(th_write(dir, "w.yaml", "name: g\nlayers:\n"
		      "  - {name: m/m, type: matmul, m: 2, k: 3, n: 2, a_npy: a0.npy, b_npy: b0.npy}\n"
		      "  - {name: m_m, type: matmul, m: 2, k: 3, n: 2, a_npy: a1.npy, b_npy: b1.npy}\n"
		      "  - {name: m_m.1, type: matmul, m: 2, k: 3, n: 2, a_npy: a2.npy, b_npy: b2.npy}\n"));
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	snprintf(save, sizeof save, "%s/c", dir);
	const char *argv[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--save-outputs",
			       save, NULL };
	mode_t um = umask(027);
	int rc = th_cli(".", argv, &out, &err);
	umask(um);
	ck_assert_msg(rc == 0, "%s", err);
	snprintf(want, sizeof want, "wrote 3 results in %s\n", save);
	ck_assert_msg(strstr(out, want), "%s", out);
	free(out);
	free(err);
	for (int l = 0; l < 3; l++) {
		snprintf(p, sizeof p, "%s/%s.npy", save, files[l]);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0640);
		ck_assert_msg((c = th_npy(p, &r, &cc, &e)), "%s", e.msg);
		ck_assert(r == 2 && cc == 2);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				double ref = 0;
				for (int k = 0; k < 3; k++)
					ref += a[l][i * 3 + k] * b[l][k * 2 + j];
				ck_assert_double_eq(c[i * 2 + j], ref);
			}
		free(c);
	}
	/* exactly those three files */
	snprintf(p, sizeof p, "ls -A '%s' | wc -l", save);
	FILE *ls = popen(p, "r");
	int nfiles = -1;
	ck_assert_ptr_nonnull(ls);
	ck_assert_int_eq(fscanf(ls, "%d", &nfiles), 1);
	pclose(ls);
	ck_assert_int_eq(nfiles, 3);
	/* a DIR under a file, and a file as DIR: exit 2, nothing written (not even -o's directory) */
	snprintf(odir, sizeof odir, "%s/o", dir);
	for (int k = 0; k < 2; k++) {
		snprintf(p, sizeof p, k ? "%s/w.yaml" : "%s/w.yaml/sub", dir);
		const char *argv2[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional",
					"--save-outputs", p, "-o", odir, NULL };
		ck_assert_int_eq(th_cli(".", argv2, &out, &err), 2);
		if (k)
			snprintf(want, sizeof want, "--save-outputs: expected a directory where files can be written, found "
				 "\"%s\" (Not a directory)\n", p);
		else
			snprintf(want, sizeof want, "--save-outputs: expected a directory that can be created, found \"%s\" "
				 "(Not a directory)\n", p);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(out, "");
		ck_assert_int_ne(access(odir, F_OK), 0);
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Refusals, each before anything runs or is written. */
START_TEST(cli_refusals)
{
	char *dir = th_tmpdir(), wl[4200], *out, *err, want[4400];
	free(th_write(dir, "w.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 10, k: 6, n: 5, a_npy: a.npy}\n"));
	snprintf(wl, sizeof wl, "%s/w.yaml", dir);
	/* the file is missing */
	const char *argv1[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", NULL };
	ck_assert_int_eq(th_cli(".", argv1, &out, &err), 2);
	snprintf(want, sizeof want, "%s:3:56: layers[0].a_npy: expected a readable .npy file, found \"%s/a.npy\" (No such "
		 "file or directory)\n", wl, dir);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	/* a shape that is not M x K */
	double v[6] = { 0 };
	struct err e = { 0 };
	char p[4200];
	snprintf(p, sizeof p, "%s/a.npy", dir);
	ck_assert_int_eq(npy_write(p, v, 6, 1, true, &e), 0);
	ck_assert_int_eq(th_cli(".", argv1, &out, &err), 2);
	snprintf(want, sizeof want, "%s:3:56: layers[0].a_npy: expected a 10 x 6 array (M x K of the layer's GEMM), found "
		 "6 x 1 in \"%s/a.npy\"\n", wl, dir);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	/* another model would not read the file (of the right shape now) */
	double v60[60] = { 0 };
	ck_assert_int_eq(npy_write(p, v60, 10, 6, true, &e), 0);
	const char *argv2[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, NULL };
	ck_assert_int_eq(th_cli(".", argv2, &out, &err), 2);
	snprintf(want, sizeof want, "%s:3:56: layers[0].a_npy: expected --model functional (only the functional model reads "
		 "operand values), found the cycle model\n", wl);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	/* too much work: 47 cycles x 16 PEs = 752 PE updates */
	free(th_write(dir, "g.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 10, k: 6, n: 5}\n"));
	snprintf(wl, sizeof wl, "%s/g.yaml", dir);
	const char *argv3[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--set",
				"sim.max_pe_updates=751", NULL };
	ck_assert_int_eq(th_cli(".", argv3, &out, &err), 2);
	snprintf(want, sizeof want, "%s: expected at most 751 PE updates for the functional model (sim.max_pe_updates), "
		 "found 752; use --model cycle, a smaller workload or array, or raise sim.max_pe_updates\n", wl);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	argv3[8] = "sim.max_pe_updates=752";
	ck_assert_int_eq(th_cli(".", argv3, &out, &err), 0);
	free(out);
	free(err);
	/* per-PE VCD only on small arrays */
	const char *argv4[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--set",
				"array.rows=17", "--vcd", "/tmp/tpusim-never", NULL };
	ck_assert_int_eq(th_cli(".", argv4, &out, &err), 2);
	ck_assert_str_eq(err, "--vcd: expected an array of at most 16 x 16 for the functional model's per-PE signals, "
			 "found 17 x 4; use tpusim lab, or a smaller array (--set array.rows=16 --set array.cols=16)\n");
	free(out);
	free(err);
	/*
	 * a per-PE VCD estimated over 1 GiB: 256^3 on 16 x 16 (ws, pipelined)
	 * streams 256 folds of 256 rows back to back after the first shift of
	 * 16, and drains R + Sc - 2 = 30: 65582 cycles, each with up to
	 * 16 x 16 x 5 + 3 = 1283 changes of 16 bytes: 1346267296 bytes
	 */
	free(th_write(dir, "big.yaml", "name: g\nlayers:\n  - {name: mm, type: matmul, m: 256, k: 256, n: 256}\n"));
	char big[4200], vb[4200];
	snprintf(big, sizeof big, "%s/big.yaml", dir);
	snprintf(vb, sizeof vb, "%s/t", dir);
	const char *argv6[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", big, "--model", "functional", "--set",
				"array.rows=16", "--set", "array.cols=16", "--vcd", vb, NULL };
	ck_assert_int_eq(th_cli(".", argv6, &out, &err), 2);
	ck_assert_str_eq(err, "--vcd: expected a file of at most 1073741824 bytes (sim.max_trace_bytes), found an estimated "
			 "1346267296 bytes (65582 cycles of GEMMs x (16 x 16 PEs x 5 signals + 3) x 16 bytes); use a "
			 "smaller GEMM, or tpusim lab, or raise sim.max_trace_bytes (--set sim.max_trace_bytes=1346267296)\n");
	ck_assert_str_eq(out, "");
	snprintf(vb, sizeof vb, "%s/t.vcd", dir);
	ck_assert_int_ne(access(vb, F_OK), 0);
	free(out);
	free(err);
	/* SCALE-Sim's timing is not the registers': the key, where it was set */
	const char *argv7[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional", "--set",
				"array.scalesim_compat=true", NULL };
	ck_assert_int_eq(th_cli(".", argv7, &out, &err), 2);
	ck_assert_str_eq(err, "--set:1:23: array.scalesim_compat: expected false for --model functional (it times folds by "
			 "the register rules, not SCALE-Sim's), found true\n");
	free(out);
	free(err);
	/* --save-outputs needs values */
	const char *argv5[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--save-outputs", dir, NULL };
	ck_assert_int_eq(th_cli(".", argv5, &out, &err), 2);
	ck_assert_str_eq(err, "--save-outputs: expected --model functional (only it computes values), found --model cycle\n");
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Adds these cases to the functional suite's case (test_functional.c). */
void functional_cli_tests(TCase *t);

void functional_cli_tests(TCase *t)
{
	tcase_add_test(t, cli_end_to_end);
	tcase_add_test(t, cli_failed_run_leaves_no_vcd);
	tcase_add_test(t, cli_save_outputs);
	tcase_add_test(t, cli_refusals);
}
