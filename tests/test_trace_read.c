/*
 * test_trace_read.c - event traces that are not what the writer wrote
 * (sim/trace/trace.h): a real trace cut short or with bytes changed, and
 * traces written here byte by byte that break one rule of the format each.
 * The reader refuses each with the offset (exit status 2) and never lets a
 * header's bytes reach the terminal raw.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tests.h"
#include "trace.h"

/* The whole file at path (owned), and its length. */
static unsigned char *bytes_of(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(b = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void put_bytes(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* trace_read of b[0 .. n) written to path: its error message (owned), or NULL when it was read. */
static char *read_error(const char *path, const unsigned char *b, size_t n)
{
	struct trace_summary ts;
	struct err e = { 0 };
	put_bytes(path, b, n);
	if (trace_read(path, &ts, NULL, NULL, &e) == 0) {
		trace_summary_release(&ts);
		return NULL;
	}
	ck_assert_int_eq(err_status(&e), 2);
	return strdup(e.msg);
}

/* A trace written through zlib is a gzip file that gzip(1) reads, holding the bytes written without .gz. */
START_TEST(gz_is_gzip_of_the_plain_trace)
{
	char *dir = th_tmpdir(), gz[4200], plain[4200], cmd[9000], *out, *err;
	const char *a1[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--trace", gz, NULL };
	const char *a2[] = { "run", "-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--trace", plain, NULL };
	size_t n;
	unsigned char *b;
	snprintf(gz, sizeof gz, "%s/t.gz", dir);
	snprintf(plain, sizeof plain, "%s/t.trace", dir);
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 0);
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(".", a2, &out, &err), 0);
	snprintf(cmd, sizeof cmd, "gzip -t '%s' && gzip -dc '%s' | cmp -s - '%s'", gz, gz, plain);
	ck_assert_int_eq(system(cmd), 0);
	/* The header line, as trace.h documents it, then the first pass: P, its cycle 0, op 0, one op. */
	b = bytes_of(plain, &n);
	static const char head[] = "tpusim-trace 4 config=lab_4x4 workload=mlp batch=16 model=cycle dataflow=ws ideal_memory=0 "
				   "rows=4 cols=4 cores=1 arrays_per_core=1 dtype=int8 clock_ghz=1 hbm_gbps=8 "
				   "hbm_burst_bytes=8 scalesim_compat=0 prefetch_across_ops=0\n";
	ck_assert_uint_gt(n, sizeof head + 4);
	ck_assert(!memcmp(b, head, sizeof head - 1));
	ck_assert(!memcmp(b + sizeof head - 1, "P\0\0\1", 4));
	free(b);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A real trace cut short anywhere, or with a byte changed: an input error
 * (exit status 2) that names the offset. Cut inside the gzip stream, the
 * offset is the file's length; cut in the trace's own bytes (an uncompressed
 * trace), the length too; a wrong version, kind or trailing byte where it is.
 */
START_TEST(corrupt_traces_are_refused_with_the_offset)
{
	char *dir = th_tmpdir(), gz[4200], plain[4200], bad[4200], want[200], *out, *err, *msg;
	const char *a1[] = { "run", "-c", "configs/edge_32x32.yaml", "-w", "configs/workloads/mlp.yaml", "--trace", gz, NULL };
	const char *a2[] = { "run", "-c", "configs/edge_32x32.yaml", "-w", "configs/workloads/mlp.yaml", "--trace", plain,
			     NULL };
	size_t n, pn, head;
	unsigned char *b, *p;
	uint64_t seed = 11;
	snprintf(gz, sizeof gz, "%s/t.gz", dir);
	snprintf(plain, sizeof plain, "%s/t.trace", dir);
	snprintf(bad, sizeof bad, "%s/bad.gz", dir);
	ck_assert_int_eq(th_cli(".", a1, &out, &err), 0);
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(".", a2, &out, &err), 0);
	free(out);
	free(err);
	b = bytes_of(gz, &n);
	p = bytes_of(plain, &pn);
	ck_assert_ptr_null(read_error(bad, b, n));

	/* The gzip file cut short: at 2 bytes and more it is gzip, and ends before its stream does. */
	const size_t cuts[] = { 2, 10, 11, 100, 1000, n / 2, n - 8, n - 4, n - 1 };
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		if (cuts[i] >= n)
			continue;
		ck_assert_ptr_nonnull(msg = read_error(bad, b, cuts[i]));
		snprintf(want, sizeof want, ": compressed byte %zu: expected more of the gzip stream, found the end of the file "
			 "(the trace is truncated)", cuts[i]);
		ck_assert_msg(strstr(msg, want), "cut at %zu: %s", cuts[i], msg);
		free(msg);
	}
	/* An empty file, and one byte of it, are not gzip: no header line. */
	for (size_t c = 0; c < 2; c++) {
		ck_assert_ptr_nonnull(msg = read_error(bad, b, c));
		ck_assert_msg(strstr(msg, ": byte 0: expected a tpusim event trace"), "%s", msg);
		free(msg);
	}
	/* The check value (CRC-32, the trailer's first 4 bytes) changed: zlib finds it at the end. */
	b[n - 6] ^= 0x40;
	ck_assert_ptr_nonnull(msg = read_error(bad, b, n));
	ck_assert_msg(strstr(msg, ": compressed byte ") && strstr(msg, "expected a gzip stream, found corrupt data (incorrect "
								    "data check)"), "%s", msg);
	free(msg);
	b[n - 6] ^= 0x40;
	/* Bytes changed anywhere in the compressed data: refused (or, rarely, still a well-formed trace), never a crash. */
	int refused = 0;
	for (int i = 0; i < 200; i++) {
		size_t k = (size_t)th_rnd(&seed, 10, (int64_t)n - 9);
		unsigned char old = b[k];
		b[k] ^= (unsigned char)th_rnd(&seed, 1, 255);
		if ((msg = read_error(bad, b, n))) {
			ck_assert_msg(strstr(msg, "byte "), "%s", msg);
			refused++;
			free(msg);
		}
		b[k] = old;
	}
	ck_assert_int_ge(refused, 190);

	/* The trace's own bytes, uncompressed: every cut past the header line, with its length named. */
	head = (size_t)((unsigned char *)memchr(p, '\n', pn) - p) + 1;
	for (size_t c = head; c < pn; c += (c < head + 300 || c > pn - 300) ? 1 : 7) {
		ck_assert_ptr_nonnull(msg = read_error(bad, p, c));
		char w1[200], w2[200];
		snprintf(w1, sizeof w1, "(it is truncated at byte %zu)", c);
		snprintf(w2, sizeof w2, ": byte %zu: expected more records, found the end of the trace (it is truncated: no end "
			 "record)", c);
		ck_assert_msg(strstr(msg, w1) || strstr(msg, w2), "cut at %zu: %s", c, msg);
		free(msg);
	}
	/* The header line cut: no header. */
	ck_assert_ptr_nonnull(msg = read_error(bad, p, head - 1));
	ck_assert_msg(strstr(msg, ": byte 0: expected a header line of at most 4095 bytes, found the end of the trace"), "%s",
		      msg);
	free(msg);
	/* Another version: "tpusim-trace 5" at byte 13. */
	char was = p[13];
	p[13] = '5';
	ck_assert_ptr_nonnull(msg = read_error(bad, p, pn));
	ck_assert_msg(strstr(msg, ": byte 13: expected format version 1 to 4, found 5"), "%s", msg);
	free(msg);
	p[13] = was;
	/* A record kind that does not exist, at the first record. */
	p[head] = 'X';
	ck_assert_ptr_nonnull(msg = read_error(bad, p, pn));
	snprintf(want, sizeof want, ": byte %zu: expected a record kind (one of P N O E L F S W V Z), found byte 0x58", head);
	ck_assert_msg(strstr(msg, want), "%s", msg);
	free(msg);
	p[head] = 'P';
	/* Bytes after the end record. */
	p = realloc(p, pn + 1);
	p[pn] = 'P';
	ck_assert_ptr_nonnull(msg = read_error(bad, p, pn + 1));
	snprintf(want, sizeof want, ": byte %zu: expected the end of the trace after its end record, found more bytes", pn);
	ck_assert_msg(strstr(msg, want), "%s", msg);
	free(msg);

	/* The command line: exit status 2 and the message on stderr. */
	put_bytes(bad, b, n / 2);
	const char *targv[] = { "trace", bad, NULL };
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 2);
	snprintf(want, sizeof want, ": compressed byte %zu: expected more of the gzip stream", n / 2);
	ck_assert_msg(strstr(err, want) && !*out, "%s", err);
	free(out);
	free(err);
	free(b);
	free(p);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- traces written here, byte by byte (trace.h's format), to check the reader's rules ---- */

struct tbytes {
	unsigned char b[4096];
	size_t n;
	int64_t records;
};

static void tb_text(struct tbytes *t, const char *s)
{
	size_t n = strlen(s);
	ck_assert_uint_lt(t->n + n, sizeof t->b);
	memcpy(t->b + t->n, s, n);
	t->n += n;
}

static void tb_leb(struct tbytes *t, uint64_t v)
{
	do {
		ck_assert_uint_lt(t->n, sizeof t->b);
		t->b[t->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* A record: its kind, then n fields (the first is dc). */
static void tb_rec(struct tbytes *t, char kind, int n, ...)
{
	va_list ap;
	ck_assert_uint_lt(t->n, sizeof t->b);
	t->b[t->n++] = (unsigned char)kind;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		tb_leb(t, (uint64_t)va_arg(ap, int64_t));
	va_end(ap);
	if (kind != 'Z')
		t->records++;
}

/* An N record at dc for op, of layer 0, named name, its layer "l". */
static void tb_name(struct tbytes *t, int64_t dc, int64_t op, const char *name)
{
	tb_rec(t, 'N', 4, dc, op, (int64_t)0, (int64_t)0);
	tb_leb(t, strlen(name));
	tb_text(t, name);
	tb_leb(t, 1);
	tb_text(t, "l");
}

/*
 * One lane, one op: P at 0, the op begun at cycle gap, 3 cycles charged to
 * weights, its end 3 cycles later. With gap 0 the records tile the pass
 * (3 cycles, all weights); with gap 2 the pass is 5 cycles of which the op
 * accounts for 3: the categories no longer sum to the cycles.
 */
static void one_op(struct tbytes *t, const char *head, int64_t gap)
{
	memset(t, 0, sizeof *t);
	tb_text(t, head);
	tb_rec(t, 'P', 3, (int64_t)0, (int64_t)0, (int64_t)1);
	tb_name(t, 0, 0, "g");
	tb_rec(t, 'O', 4, gap, (int64_t)0, (int64_t)0, (int64_t)1);
	tb_rec(t, 'W', 5, (int64_t)0, (int64_t)0, (int64_t)3, (int64_t)CAT_WEIGHTS, (int64_t)TC_WAIT_B);
	tb_rec(t, 'E', 2, (int64_t)3, (int64_t)0);
	tb_rec(t, 'Z', 2, (int64_t)0, t->records);
}

/*
 * Two lanes (cores=2), two ops in one pass. Op 0: lane 0 busy [0, 4), lane
 * 1 [0, 2). Tiled, both begin op 1 at 4 + gap, gap 0 being when the last
 * has ended op 0, and take 3 cycles: the pass is 7 cycles, 4 + 3 of them
 * weights (with a gap of 1, 8 cycles of which 7 are an op's). Untiled, lane
 * 1 begins op 1 at 2, while lane 0 is still in op 0, and takes 6: op 0's 4
 * and op 1's 6 are 10 cycles in a pass of 8.
 */
static void two_ops(struct tbytes *t, bool tiled, int64_t gap)
{
	const int64_t z = 0, one = 1, w = CAT_WEIGHTS, c = TC_WAIT_B;
	memset(t, 0, sizeof *t);
	tb_text(t, "tpusim-trace 1 config=x cores=2 arrays_per_core=1\n");
	tb_rec(t, 'P', 3, z, z, (int64_t)2);
	tb_name(t, 0, 0, "a");
	tb_rec(t, 'O', 4, z, z, z, one);
	tb_rec(t, 'O', 4, z, one, z, one);
	tb_rec(t, 'W', 5, z, z, (int64_t)4, w, c);
	tb_rec(t, 'W', 5, z, one, (int64_t)2, w, c);
	tb_rec(t, 'E', 2, (int64_t)2, one);                      /* lane 1 ends op 0 at 2 */
	if (tiled) {
		tb_rec(t, 'E', 2, (int64_t)2, z);                /* lane 0 at 4 */
		tb_name(t, 0, 1, "b");
		tb_rec(t, 'O', 4, gap, z, one, one);
		tb_rec(t, 'O', 4, z, one, one, one);
		tb_rec(t, 'W', 5, z, z, (int64_t)3, w, c);
		tb_rec(t, 'W', 5, z, one, (int64_t)3, w, c);
		tb_rec(t, 'E', 2, (int64_t)3, z);
		tb_rec(t, 'E', 2, z, one);
	} else {
		tb_name(t, 0, 1, "b");
		tb_rec(t, 'O', 4, z, one, one, one);              /* lane 1 begins op 1 at 2 */
		tb_rec(t, 'W', 5, z, one, (int64_t)6, w, c);      /* [2, 8) */
		tb_rec(t, 'E', 2, (int64_t)2, z);                /* lane 0 ends op 0 at 4 */
		tb_rec(t, 'O', 4, z, z, one, one);
		tb_rec(t, 'W', 5, z, z, (int64_t)3, w, c);        /* [4, 7) */
		tb_rec(t, 'E', 2, (int64_t)3, z);
		tb_rec(t, 'E', 2, one, one);
	}
	tb_rec(t, 'Z', 2, z, t->records);
}

/* The offset in t of the n-th record of kind (0-based), counted after the header line. */
static size_t tb_find(const struct tbytes *t, char kind, int n)
{
	size_t head = (size_t)((const unsigned char *)memchr(t->b, '\n', t->n) - t->b) + 1;
	/* every field written here is below 128: one byte each, and names are one letter */
	for (size_t i = head; i < t->n;) {
		char k = (char)t->b[i];
		size_t len = k == 'P' ? 4 : k == 'N' ? 9 : k == 'O' ? 5 : k == 'W' ? 6 : k == 'E' ? 3 : 3;
		if (k == kind && n-- == 0)
			return i;
		i += len;
	}
	ck_abort_msg("no record %c", kind);
	return 0;
}

/*
 * Every cycle of a pass is in exactly one op's time, so that the categories
 * sum to the cycles (trace.h): a lane begins the pass's first op where the
 * pass begins, and the next op when every lane has ended the last. Records
 * that leave a gap or overlap are a corrupt trace: refused at the record,
 * with its offset, exit status 2.
 */
START_TEST(records_that_do_not_tile_their_pass_are_refused)
{
	char *dir = th_tmpdir(), path[4200], want[400], *msg, *out, *err;
	struct tbytes t;
	struct trace_summary ts;
	struct err e = { 0 };
	snprintf(path, sizeof path, "%s/t.trace", dir);
	/* the tiled traces are read, and add up as worked out above */
	one_op(&t, "tpusim-trace 1 config=x cores=1 arrays_per_core=1\n", 0);
	put_bytes(path, t.b, t.n);
	ck_assert_msg(trace_read(path, &ts, NULL, NULL, &e) == 0, "%s", e.msg);
	ck_assert(ts.cycles == 3 && ts.cat[CAT_WEIGHTS] == 3 && ts.ops == 1);
	trace_summary_release(&ts);
	two_ops(&t, true, 0);
	put_bytes(path, t.b, t.n);
	ck_assert_msg(trace_read(path, &ts, NULL, NULL, &e) == 0, "%s", e.msg);
	ck_assert(ts.cycles == 7 && ts.cat[CAT_WEIGHTS] == 7 && ts.ops == 2);
	trace_summary_release(&ts);
	/* a gap between the pass's start and its first op */
	one_op(&t, "tpusim-trace 1 config=x cores=1 arrays_per_core=1\n", 2);
	ck_assert_ptr_nonnull(msg = read_error(path, t.b, t.n));
	snprintf(want, sizeof want, "%s: byte %zu: expected lane 0 to begin op 0 at cycle 0, where its pass begins, found "
		 "cycle 2 (a corrupt trace: its records do not tile the pass)", path, tb_find(&t, 'O', 0));
	ck_assert_str_eq(msg, want);
	free(msg);
	/* lane 1 in op 1 while lane 0 is still in op 0 */
	two_ops(&t, false, 0);
	ck_assert_ptr_nonnull(msg = read_error(path, t.b, t.n));
	snprintf(want, sizeof want, "%s: byte %zu: expected lane 1 to begin op 1 when every lane has ended op 0, found lane 0 "
		 "still in it at cycle 2 (a corrupt trace: its records do not tile the pass)", path, tb_find(&t, 'O', 2));
	ck_assert_str_eq(msg, want);
	free(msg);
	/* a gap of a cycle between the last lane's end of op 0 and op 1 */
	two_ops(&t, true, 1);
	ck_assert_ptr_nonnull(msg = read_error(path, t.b, t.n));
	snprintf(want, sizeof want, "%s: byte %zu: expected lane 0 to begin op 1 at cycle 4, where the last lane ended op 0, "
		 "found cycle 5 (a corrupt trace: its records do not tile the pass)", path, tb_find(&t, 'O', 2));
	ck_assert_str_eq(msg, want);
	free(msg);
	/* the command line: exit status 2, the message, nothing on standard output */
	const char *targv[] = { "trace", path, NULL };
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 2);
	ck_assert_str_eq(out, "");
	ck_assert_msg(strstr(err, "(a corrupt trace: its records do not tile the pass)\n"), "%s", err);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A header's values are decoded (%XX), so they can hold any byte: tpusim
 * trace shows each one through the project's quoting (\xNN), in what it
 * prints and in its messages, which stay one line and carry no terminal
 * escapes.
 */
START_TEST(hostile_header_is_quoted)
{
	char *dir = th_tmpdir(), path[4200], *out, *err;
	struct tbytes t;
	const char *targv[] = { "trace", path, NULL };
	snprintf(path, sizeof path, "%s/t.trace", dir);
	one_op(&t, "tpusim-trace 1 config=a%0Ab%1B[2J cores=1 arrays_per_core=1 workload=\x1b]0;x\x07\n", 0);
	put_bytes(path, t.b, t.n);
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 0);
	ck_assert_msg(strstr(out, "\nconfig=a\\x0ab\\x1b[2J cores=1 arrays_per_core=1 workload=\\x1b]0;x\\x07\n"), "%s", out);
	ck_assert_ptr_null(strchr(out, '\x1b'));
	ck_assert_ptr_null(strchr(out, '\x07'));
	free(out);
	free(err);
	/* in messages: a value that is no count, a word that is no key=value */
	static const struct {
		const char *head, *found;
	} bad[] = {
		{ "tpusim-trace 1 cores=%0A1%1B[2J arrays_per_core=1\n", "expected cores to be an integer in [1, " },
		{ "tpusim-trace 1 cores=1 arrays_per_core=1 \x1b[2J\n", "expected key=value in the header line, found "
		  "\"\\x1b[2J\"\n" },
		{ "tpusim-trace 1\x1b[2J cores=1\n", "expected the format version, a number, found \"1\\x1b[2J cores=1\"\n" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		one_op(&t, bad[i].head, 0);
		put_bytes(path, t.b, t.n);
		ck_assert_int_eq(th_cli(".", targv, &out, &err), 2);
		ck_assert_msg(strstr(err, bad[i].found), "case %zu: %s", i, err);
		ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "case %zu: more than one line: %s", i, err);
		ck_assert_msg(!strchr(err, '\x1b'), "case %zu: an escape: %s", i, err);
		free(out);
		free(err);
	}
	ck_assert_int_eq(th_cli(".", targv, &out, &err), 2);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *trace_read_suite(void)
{
	Suite *s = suite_create("trace_read");
	TCase *t = tcase_create("errors");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, gz_is_gzip_of_the_plain_trace);
	tcase_add_test(t, corrupt_traces_are_refused_with_the_offset);
	tcase_add_test(t, records_that_do_not_tile_their_pass_are_refused);
	tcase_add_test(t, hostile_header_is_quoted);
	suite_add_tcase(s, t);
	return s;
}
