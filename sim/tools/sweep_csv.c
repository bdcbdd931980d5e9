/*
 * sweep_csv.c - sweep.csv (see sweep.h): its columns, one table naming the
 * result field (stats.h) each one shows; a point's row read from its file;
 * the whole table written from the point files, atomically.
 */
#include "sweep_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsx.h"
#include "report.h"
#include "stats.h"
#include "ydoc.h"

const struct sweep_csv_col sweep_csv_cols[SWEEP_CSV_NCOLS] = {
	{ "cycles", "cycles", 1 },
	{ "utilization", "utilization", 1 },
	{ "tops", "achieved_ops_per_s", 1e12 },
	{ "hbm_read_bytes", "hbm_read_bytes", 1 },
	{ "hbm_write_bytes", "hbm_write_bytes", 1 },
	{ "energy_pj", "energy_pj", 1 },
	{ "pj_per_mac", "pj_per_mac", 1 },
};

int sweep_csv_col(const char *name)
{
	for (int k = 0; k < SWEEP_CSV_NCOLS; k++)
		if (!strcmp(sweep_csv_cols[k].name, name))
			return k;
	return -1;
}

void sweep_csv_names(const char *sep, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int k = 0; k <= SWEEP_CSV_NCOLS && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", k ? sep : "",
				      k < SWEEP_CSV_NCOLS ? sweep_csv_cols[k].name : SWEEP_CSV_STATUS);
}

/* The number at key in t, as written, into out. */
static int total_num(const struct ynode *t, const char *key, char *out, size_t size)
{
	const struct ynode *v = ynode_get(t, key);
	if (!v || v->kind != Y_SCALAR || v->quoted || !*v->str)
		return -1;
	snprintf(out, size, "%s", v->str);
	return 0;
}

/* Column k of the total t into row: the field's text, or its value / div. */
static int column_read(const struct ynode *t, int k, struct sweep_row *row)
{
	const struct sweep_csv_col *c = &sweep_csv_cols[k];
	const struct result_field *f = result_field_find(c->field);
	char *out = row->val[k];
	SIM_ASSERT(f && f->n == 1 && f->reported);
	if (total_num(t, f->name, out, sizeof row->val[k]) < 0)
		return -1;
	if (c->div != 1)
		snprintf(out, sizeof row->val[k], "%.17g", strtod(out, NULL) / c->div);
	return 0;
}

enum sweep_status sweep_row_read(const char *dir, uint64_t h, struct sweep_row *row)
{
	char path[LIMIT_PATH_BUF], stem[17], *text;
	size_t len;
	struct err e = { 0 };
	struct pos none = { "", 0, 0 };
	sweep_hash_text(h, stem);
	snprintf(path, sizeof path, "%s/points/%s.json", dir, stem);
	if (access(path, F_OK) == 0 && (text = sweep_slurp(path, &len, none, NULL, &e))) {
		/* The totals come before the layers in summary.json: the parse ends there. */
		const struct ydoc_stream upto = { "layers", NULL, NULL, true };
		struct ydoc *d = ydoc_parse_json_stream(path, text, &upto, &e);
		const struct ynode *t = d && d->root && d->root->kind == Y_MAP ? ynode_get(d->root, "total") : NULL;
		bool ok = t && t->kind == Y_MAP;
		for (int k = 0; ok && k < SWEEP_CSV_NCOLS; k++)
			ok = column_read(t, k, row) == 0;
		ydoc_free(d);
		free(text);
		if (ok)
			return SWEEP_OK;
	}
	snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
	if (access(path, F_OK) == 0 && (text = sweep_slurp(path, &len, none, NULL, &e))) {
		while (len && text[len - 1] == '\n')
			text[--len] = 0;
		snprintf(row->err, sizeof row->err, "%s", text);
		free(text);
		if (len)
			return SWEEP_FAILED;
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
	char *text = NULL, path[LIMIT_PATH_BUF];
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
	for (int k = 0; k < SWEEP_CSV_NCOLS; k++)
		csv_field(f, sweep_csv_cols[k].name, false);
	csv_field(f, SWEEP_CSV_STATUS, true);
	for (size_t p = 0; p < sw->npoints; p++) {
		size_t vidx[SWEEP_MAX_AXES];
		int widx;
		enum sweep_status st = sweep_row_read(dir, sw->hash[p], row);
		if (st_out)
			st_out[p] = (unsigned char)st;
		sweep_point(sw, p, &widx, vidx);
		csv_field(f, sw->workloads[widx], false);
		for (int i = 0; i < sw->naxes; i++)
			csv_field(f, sw->axes[i].values[vidx[i]], false);
		for (int k = 0; k < SWEEP_CSV_NCOLS; k++)
			csv_field(f, st == SWEEP_OK ? row->val[k] : "", false);
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
