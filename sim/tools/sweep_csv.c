/*
 * sweep_csv.c - sweep.csv (see sweep.h): its columns, one table naming the
 * result field (stats.h) or the record's top-level key each one shows; a
 * point's row read from its file; the whole table written from the point
 * files, atomically.
 */
#include "sweep_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx.h"
#include "report.h"
#include "stats.h"
#include "ydoc.h"

/*
 * What sweep.csv shows, in its order: fields of the result field table in
 * the point's total (a field of parts: a column per part, named by its csv
 * pattern), and numbers at the record's top level. The old seven first, so
 * that a reader of those finds them where they were.
 */
static const struct {
	int from;                       /* enum sweep_csv_from */
	const char *field, *name;       /* name: the heading, or NULL: the field's (a part's: by its csv pattern) */
	double div;
} shown[] = {
	{ SWEEP_FROM_TOTAL, "cycles", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "utilization", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "achieved_ops_per_s", "tops", 1e12 },
	{ SWEEP_FROM_TOTAL, "hbm_read_bytes", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "hbm_write_bytes", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "energy_pj", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "pj_per_mac", NULL, 1 },
	{ SWEEP_FROM_TOP, "area_mm2", NULL, 1 },
	{ SWEEP_FROM_TOP, "peak_power_w", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "power_w", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "tops_per_mm2", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "tops_per_w", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "cycles_by_category", NULL, 1 },
	{ SWEEP_FROM_TOTAL, "energy_pj_by_component", NULL, 1 },
	{ SWEEP_FROM_TOP, "step_time_s", NULL, 1 },
	{ SWEEP_FROM_TOP, "samples_per_s", NULL, 1 },
	{ SWEEP_FROM_TOP, "tokens_per_s", NULL, 1 },
	{ SWEEP_FROM_TOP, "mfu", NULL, 1 },
	{ SWEEP_FROM_TOP, "hfu", NULL, 1 },
};

static struct sweep_csv_col cols[SWEEP_CSV_MAX_COLS];
static int ncols;

/* cols from shown and the result fields, once. */
static void cols_build(void)
{
	if (ncols)
		return;
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		const struct result_field *f = shown[i].from == SWEEP_FROM_TOTAL ? result_field_find(shown[i].field) : NULL;
		int n = f ? f->n : 1;
		SIM_ASSERT(shown[i].from == SWEEP_FROM_TOP || (f && f->reported && (f->n == 1 || f->csv)));
		for (int k = 0; k < n; k++) {
			SIM_ASSERT(ncols < SWEEP_CSV_MAX_COLS);
			struct sweep_csv_col *c = &cols[ncols++];
			c->from = shown[i].from;
			c->field = shown[i].field;
			c->part = f && f->n > 1 ? k : -1;
			c->div = shown[i].div;
			if (c->part >= 0)
				snprintf(c->name, sizeof c->name, f->csv, f->parts[k]);
			else
				snprintf(c->name, sizeof c->name, "%s", shown[i].name ? shown[i].name : shown[i].field);
		}
	}
}

const struct sweep_csv_col *sweep_csv_cols(void)
{
	cols_build();
	return cols;
}

int sweep_csv_ncols(void)
{
	cols_build();
	return ncols;
}

int sweep_csv_col(const char *name)
{
	cols_build();
	for (int k = 0; k < ncols; k++)
		if (!strcmp(cols[k].name, name))
			return k;
	return -1;
}

void sweep_csv_names(const char *sep, char *buf, size_t size)
{
	static const char *const last[2] = { SWEEP_CSV_POINT, SWEEP_CSV_STATUS };
	size_t n = 0;
	cols_build();
	buf[0] = '\0';
	for (int k = 0; k < ncols + 2 && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", k ? sep : "", k < ncols ? cols[k].name : last[k - ncols]);
}

/*
 * Column k into row, from the record's root (top-level keys) or its total t:
 * the value's text, or its value / div. A record says each as the run wrote
 * it: a count a whole number of at least 0 (RF_COUNT), a metric or a
 * top-level number a finite number of at least 0; anything else, or none, is
 * not a record (a file that was edited, not written by a run, or written by
 * a tpusim that had not this column yet).
 */
static int column_read(const struct ynode *root, const struct ynode *t, int k, struct sweep_row *row, struct err *e)
{
	const struct sweep_csv_col *c = &cols[k];
	const struct result_field *f = c->from == SWEEP_FROM_TOTAL ? result_field_find(c->field) : NULL;
	char *out = row->val[k], *end, key[120], found[100];
	const struct ynode *in = f ? t : root, *v = ynode_get(in, c->field);
	if (f)
		snprintf(key, sizeof key, "total.%s%s%s", f->name, c->part >= 0 ? "." : "", c->part >= 0 ? f->parts[c->part] : "");
	else
		snprintf(key, sizeof key, "%s", c->field);
	if (v && c->part >= 0)
		v = v->kind == Y_MAP ? ynode_get(v, f->parts[c->part]) : NULL;
	if (!v)
		return err_at(e, in->pos, key, "expected a number, found none (as in a record of an older tpusim)");
	const char *x = v->str;
	bool ok = v->kind == Y_SCALAR && !v->quoted && *x && strlen(x) < sizeof row->val[k];
	bool count = f && f->kind == RF_COUNT;
	errno = 0;
	if (ok && count) {
		long long n = strtoll(x, &end, 10);
		ok = !*end && !errno && n >= 0 && x[0] != '+';
	} else if (ok) {
		double d = strtod(x, &end);
		ok = !*end && !errno && isfinite(d) && d >= 0 && strspn(x, "0123456789.eE+-") == strlen(x);
	}
	if (!ok)
		return err_at(e, v->pos, key, "expected %s, found %s",
			      count ? "a count (a whole number of at least 0)" : "a finite number of at least 0",
			      ynode_describe(v, found, sizeof found));
	snprintf(out, sizeof row->val[k], "%s", x);
	if (c->div != 1)
		snprintf(out, sizeof row->val[k], "%.17g", strtod(x, NULL) / c->div);
	return 0;
}

/*
 * A point file's text, if there is one (1), none (0), or one that is not a
 * regular file (-1, e set: a FIFO, a device, a directory, a link are never
 * opened as records: nothing a run writes).
 */
static int point_file(const char *path, char **text, size_t *len, struct err *e)
{
	struct stat st;
	struct pos whole = { path, 0, 0 };
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : err_at(e, whole, NULL, "expected a point's record, found %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_at(e, whole, NULL, "expected a point's record, a regular file, found %s",
			      S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link" :
			      "a FIFO or another special file");
	return (*text = sweep_slurp(path, len, whole, NULL, e)) ? 1 : -1;
}

/* The .json record's columns into row. */
static int json_read(const char *path, const char *text, struct sweep_row *row, struct err *e)
{
	/* The totals come before the layers in summary.json: the parse ends there. */
	const struct ydoc_stream upto = { "layers", NULL, NULL, true };
	struct ydoc *d = ydoc_parse_json_stream(path, text, &upto, e);
	int rc = -1;
	if (d) {
		const struct ynode *t = d->root && d->root->kind == Y_MAP ? ynode_get(d->root, "total") : NULL;
		struct pos whole = { path, 0, 0 };
		rc = t && t->kind == Y_MAP ? 0 : err_at(e, d->root ? d->root->pos : whole, "total",
							 "expected a point's totals (a summary.json), found none");
		for (int k = 0; rc == 0 && k < sweep_csv_ncols(); k++)
			rc = column_read(d->root, t, k, row, e);
	}
	ydoc_free(d);
	return rc;
}

/* The .err record: one line of text, its line break at the end, into row. */
static int err_read(const char *path, char *text, size_t len, struct sweep_row *row, struct err *e)
{
	size_t n = len && text[len - 1] == '\n' ? len - 1 : len, nl = strcspn(text, "\n");
	if (n == 0 || nl < n || strlen(text) != len)
		return err_at(e, (struct pos){ path, nl < n ? 2 : 1, 1 }, NULL, "expected one line, the point's error, "
			      "found %s", n == 0 ? "none" : nl < n ? "more" : "a NUL byte");
	text[n] = 0;
	snprintf(row->err, sizeof row->err, "%s", text);
	return 0;
}

enum sweep_status sweep_row_read(const char *dir, uint64_t h, struct sweep_row *row, struct err *e)
{
	char path[LIMIT_PATH_BUF], stem[17], *text;
	size_t len;
	int rc;
	sweep_hash_text(h, stem);
	snprintf(path, sizeof path, "%s/points/%s.json", dir, stem);
	if ((rc = point_file(path, &text, &len, e)) != 0) {
		if (rc > 0)
			rc = json_read(path, text, row, e), free(text);
		return rc == 0 ? SWEEP_OK : SWEEP_INVALID;
	}
	snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
	if ((rc = point_file(path, &text, &len, e)) != 0) {
		if (rc > 0)
			rc = err_read(path, text, len, row, e), free(text);
		return rc == 0 ? SWEEP_FAILED : SWEEP_INVALID;
	}
	return SWEEP_MISSING;
}

/* One CSV field (report_csv_str), then the separator. */
static void csv_field(FILE *f, const char *s, bool last)
{
	report_csv_str(f, s);
	fputc(last ? '\n' : ',', f);
}

int sweep_csv_write(const struct sweep *sw, const char *dir, unsigned char *st_out, struct err *e)
{
	char *text = NULL, path[LIMIT_PATH_BUF], stem[17], point[40];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct sweep_row *row = malloc(sizeof *row);
	if (!f || !row) {
		if (f)
			fclose(f);
		free(text);
		free(row);
		return err_nomem(e, NULL);
	}
	fputs(SWEEP_CSV_WORKLOAD ",", f);
	for (int i = 0; i < sw->naxes; i++)
		csv_field(f, sw->axes[i].name, false);
	for (int k = 0; k < sweep_csv_ncols(); k++)
		csv_field(f, cols[k].name, false);
	csv_field(f, SWEEP_CSV_POINT, false);
	csv_field(f, SWEEP_CSV_STATUS, true);
	for (size_t p = 0; p < sw->npoints; p++) {
		size_t vidx[SWEEP_MAX_AXES];
		int widx;
		enum sweep_status st = sweep_row_read(dir, sw->hash[p], row, e);
		if (st == SWEEP_INVALID) {
			fclose(f);
			free(text);
			free(row);
			return -1;
		}
		if (st_out)
			st_out[p] = (unsigned char)st;
		sweep_point(sw, p, &widx, vidx);
		csv_field(f, sw->workloads[widx], false);
		for (int i = 0; i < sw->naxes; i++)
			csv_field(f, sw->axes[i].values[vidx[i]], false);
		for (int k = 0; k < ncols; k++)
			csv_field(f, st == SWEEP_OK ? row->val[k] : "", false);
		sweep_hash_text(sw->hash[p], stem);
		snprintf(point, sizeof point, "points/%s.%s", stem, st == SWEEP_OK ? "json" : "err");
		csv_field(f, st == SWEEP_MISSING ? "" : point, false);
		csv_field(f, st == SWEEP_OK ? "ok" : st == SWEEP_FAILED ? row->err : "missing", true);
	}
	free(row);
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return err_nomem(e, NULL);
	}
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	int rc = fsx_write_atomic(path, text, len);
	free(text);
	if (rc < 0)
		return fsx_write_error(e, "-o", path, errno);
	return 0;
}
