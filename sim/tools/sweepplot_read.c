/*
 * sweepplot_read.c - reading a sweep.csv for the charts (see sweepplot.h):
 * fields as RFC 4180, positioned errors, the header checked against the
 * columns sweep.h declares (sweep_csv_cols), and each ok row's metrics
 * summed from those columns, found by name.
 */
#include "sweepplot_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsx.h"

const char *const sweepplot_metric_names[SWEEPPLOT_NMETRICS] = {
	"cycles", "utilization", "tops", "hbm_bytes", "energy_pj", "pj_per_mac", "tops_per_w", "area_mm2", "power_w",
	"tops_per_mm2",
};

/* Each metric: the columns of sweep.csv it sums (at most 2; NULL: none more), by name. */
static const char *const metric_cols[SWEEPPLOT_NMETRICS][2] = {
	[SWEEPPLOT_CYCLES] = { "cycles", NULL },
	[SWEEPPLOT_UTILIZATION] = { "utilization", NULL },
	[SWEEPPLOT_TOPS] = { "tops", NULL },
	[SWEEPPLOT_HBM_BYTES] = { "hbm_read_bytes", "hbm_write_bytes" },
	[SWEEPPLOT_ENERGY] = { "energy_pj", NULL },
	[SWEEPPLOT_PJ_PER_MAC] = { "pj_per_mac", NULL },
	[SWEEPPLOT_TOPS_PER_W] = { "tops_per_w", NULL },
	[SWEEPPLOT_AREA] = { "area_mm2", NULL },
	[SWEEPPLOT_POWER] = { "power_w", NULL },
	[SWEEPPLOT_TOPS_PER_MM2] = { "tops_per_mm2", NULL },
};

/* The columns after the axes: sweep_csv_cols, then point and status. */
#define NCOLS (sweep_csv_ncols())
#define NTAIL (NCOLS + 2)

/* Tail column k's name. */
static const char *tail_col(int k)
{
	return k < NCOLS ? sweep_csv_cols()[k].name : k == NCOLS ? SWEEP_CSV_POINT : SWEEP_CSV_STATUS;
}

/* Where each metric's columns are among sweep_csv_cols (-1: none more). */
static void metric_index(int col[SWEEPPLOT_NMETRICS][2])
{
	for (int m = 0; m < SWEEPPLOT_NMETRICS; m++)
		for (int j = 0; j < 2; j++) {
			col[m][j] = metric_cols[m][j] ? sweep_csv_col(metric_cols[m][j]) : -1;
			SIM_ASSERT(col[m][j] >= 0 || (j > 0 && !metric_cols[m][j]));
		}
}

/* ---- reading the csv ---- */

struct csv {
	const char *file;
	char *p, *end;
	long line;
	const char *bol;        /* the first byte of the current line */
};

static struct pos csv_pos(const struct csv *c, const char *at)
{
	struct pos p = { c->file, c->line, (long)(at - c->bol) + 1 };
	return p;
}

static bool crlf(const struct csv *c, const char *r)
{
	return *r == '\r' && r + 1 < c->end && r[1] == '\n';
}

/*
 * Reads the field at c->p, unquoted in place and NUL-terminated, into *out,
 * where it starts into *at; *eol says whether it ended its record.
 */
static int csv_field(struct csv *c, char **out, struct pos *at, bool *eol, struct err *e)
{
	char *w = c->p, *r = c->p, q[16];
	*at = csv_pos(c, r);
	*out = w;
	if (r < c->end && *r == '"') {
		for (r++;; ) {
			if (r == c->end)
				return err_at(e, *at, NULL, "expected the quote that closes this field, found the end of the file");
			if (*r == '"' && r + 1 < c->end && r[1] == '"') {
				*w++ = '"';
				r += 2;
			} else if (*r == '"') {
				r++;
				break;
			} else {
				if (*r == '\n') {
					c->line++;
					c->bol = r + 1;
				}
				*w++ = *r++;
			}
		}
		if (r < c->end && *r != ',' && *r != '\n' && !crlf(c, r)) {
			char ch[2] = { *r, 0 };
			return err_at(e, csv_pos(c, r), NULL, "expected a comma or the end of the line after a quoted field, "
				      "found \"%s\"", err_quote(q, sizeof q, ch, 1));
		}
	} else {
		for (; r < c->end && *r != ',' && *r != '\n' && !crlf(c, r); r++)
			if (*r == '"')
				return err_at(e, csv_pos(c, r), NULL, "expected a quote only at the start of a field, found "
					      "one inside");
		w = r;
	}
	if (r == c->end) {
		*eol = true;
	} else if (*r == ',') {
		*eol = false;
		r++;
	} else {
		r += *r == '\r' ? 2 : 1;
		*eol = true;
		c->line++;
		c->bol = r;
	}
	*w = '\0';
	c->p = r;
	return 0;
}

/*
 * Reads one record: its fields into f and at (at most max; *n counts them
 * all). Returns 1 when there is none left, 0, or -1 on error.
 */
static int csv_record(struct csv *c, char **f, struct pos *at, int max, int *n, struct err *e)
{
	bool eol = false;
	if (c->p == c->end)
		return 1;
	for (*n = 0; !eol; (*n)++) {
		char *s;
		struct pos p;
		if (csv_field(c, &s, &p, &eol, e) < 0)
			return -1;
		if (*n < max) {
			f[*n] = s;
			at[*n] = p;
		}
	}
	return 0;
}

bool sweepplot_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
	       ch == '_' || ch == '-';
}

/* Checks the header's columns f[0..n-1]: workload, the axes, then sweep_csv_cols and status. */
static int read_header(struct sweepplot_table *t, char **f, const struct pos *at, int n, struct err *e)
{
	char q[200], names[2000];
	struct pos first = { t->file, 1, 1 };
	if (n < 1 + NTAIL) {
		sweep_csv_names(", ", names, sizeof names);
		return err_at(e, first, NULL, "expected the columns " SWEEP_CSV_WORKLOAD ", the axes, then %s; found %d column%s",
			      names, n, n == 1 ? "" : "s");
	}
	if (n > 1 + NTAIL + SWEEP_MAX_AXES)
		return err_at(e, first, NULL, "expected at most %d axes, found %d", SWEEP_MAX_AXES, n - 1 - NTAIL);
	if (strcmp(f[0], SWEEP_CSV_WORKLOAD))
		return err_at(e, at[0], NULL, "expected the column " SWEEP_CSV_WORKLOAD ", found \"%s\"", err_quote(q, sizeof q, f[0], 60));
	for (int k = 0; k < NTAIL; k++)
		if (strcmp(f[n - NTAIL + k], tail_col(k)))
			return err_at(e, at[n - NTAIL + k], NULL, "expected the column %s, found \"%s\"", tail_col(k),
				      err_quote(q, sizeof q, f[n - NTAIL + k], 60));
	t->naxes = n - 1 - NTAIL;
	for (int i = 0; i < t->naxes; i++) {
		const char *a = f[1 + i];
		bool ok = *a != '\0';
		for (const char *s = a; *s; s++)
			ok &= sweepplot_name_char(*s);
		if (!ok)
			return err_at(e, at[1 + i], NULL, "expected an axis name of letters, digits, '.', '_' and '-', found "
				      "\"%s\"", err_quote(q, sizeof q, a, 60));
		for (int k = 0; k < n; k++)
			if ((k < 1 + i || k >= n - NTAIL) && !strcmp(f[k], a))
				return err_at(e, at[1 + i], NULL, "expected each column once, found \"%s\" again",
					      err_quote(q, sizeof q, a, 60));
		t->axis[i] = a;
	}
	return 0;
}

/* Reads an ok row's numbers from the fields after the axes; its metrics by col (metric_index). */
static int read_numbers(struct sweepplot_table *t, struct sweepplot_row *row, char **f, const struct pos *at,
			int col[SWEEPPLOT_NMETRICS][2], struct err *e)
{
	double v[SWEEP_CSV_MAX_COLS];
	char q[200];
	for (int k = 0; k < NCOLS; k++) {
		const char *s = f[1 + t->naxes + k];
		char *end;
		errno = 0;
		v[k] = strtod(s, &end);
		if (!*s || *end || errno == ERANGE || !(v[k] >= 0 && v[k] <= 1e200) || strchr(" \t\n", *s))
			return err_at(e, at[1 + t->naxes + k], tail_col(k), "expected a number in [0, 1e200], found \"%s\"",
				      err_quote(q, sizeof q, s, 60));
	}
	for (int m = 0; m < SWEEPPLOT_NMETRICS; m++)
		row->m[m] = col[m][1] < 0 ? v[col[m][0]] : v[col[m][0]] + v[col[m][1]];
	return 0;
}

int sweepplot_read(struct sweepplot_table *t, const char *path, struct err *e)
{
	enum { MAXF = 1 + SWEEP_CSV_MAX_COLS + 2 + SWEEP_MAX_AXES + 1 };
	char *f[MAXF], q[LIMIT_QUOTE_BUF];
	struct pos at[MAXF];
	struct csv c;
	size_t len, cap = 0;
	int n, rc, col[SWEEPPLOT_NMETRICS][2];

	metric_index(col);
	memset(t, 0, sizeof *t);
	if (fsx_read(path, SWEEPPLOT_MAX_CSV_BYTES, &t->text, &len) != 0)
		return errno == ENOMEM ? err_nomem(e, path)
				       : err_input(e, "%s: expected a sweep's table (tpusim sweep SPEC.yaml -o DIR writes "
						   "DIR/sweep.csv), found none (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
						   strerror(errno));
	if (!(t->file = strdup(path))) {
		sweepplot_release(t);
		return err_nomem(e, path);
	}
	c.file = t->file;
	c.p = t->text;
	c.end = t->text + len;
	c.line = 1;
	c.bol = t->text;
	if (memchr(t->text, 0, len)) {
		const char *z = memchr(t->text, 0, len);
		for (const char *s = t->text; s < z; s++)
			if (*s == '\n') {
				c.line++;
				c.bol = s + 1;
			}
		err_at(e, csv_pos(&c, z), NULL, "expected text, found a zero byte");
		goto fail;
	}
	if ((rc = csv_record(&c, f, at, MAXF, &n, e)) != 0) {
		if (rc > 0)
			err_input(e, "%s: expected a header line (" SWEEP_CSV_WORKLOAD ", the axes, %s, ..., " SWEEP_CSV_STATUS
				  "), found an empty file", err_quote(q, sizeof q, path, LIMIT_PATH), sweep_csv_cols()[0].name);
		goto fail;
	}
	if (read_header(t, f, at, n, e) < 0)
		goto fail;
	for (;;) {
		struct sweepplot_row *row;
		long line = c.line;
		if ((rc = csv_record(&c, f, at, MAXF, &n, e)) < 0)
			goto fail;
		if (rc > 0)
			break;
		if (n == 1 && !*f[0])
			continue;       /* a blank line */
		if (n != 1 + t->naxes + NTAIL) {
			err_at(e, at[0], NULL, "expected %d fields as the header has, found %d", 1 + t->naxes + NTAIL, n);
			goto fail;
		}
		if (t->nrows == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct sweepplot_row *nr = realloc(t->rows, nc * sizeof *nr);
			const char **nv = nr ? realloc(t->vals, nc * (size_t)(t->naxes ? t->naxes : 1) * sizeof *nv) : NULL;
			if (nr)
				t->rows = nr;
			if (!nr || !nv) {
				err_nomem(e, path);
				goto fail;
			}
			t->vals = nv;
			cap = nc;
		}
		row = &t->rows[t->nrows];
		memset(row, 0, sizeof *row);
		row->line = line;
		row->workload = f[0];
		row->status = f[n - 1];
		row->point = f[n - 2];
		row->ok = !strcmp(row->status, "ok");
		if (!*f[0]) {
			err_at(e, at[0], SWEEP_CSV_WORKLOAD, "expected a workload path, found an empty field");
			goto fail;
		}
		for (int i = 0; i < t->naxes; i++)
			t->vals[t->nrows * (size_t)t->naxes + (size_t)i] = f[1 + i];
		if (row->ok && read_numbers(t, row, f, at, col, e) < 0)
			goto fail;
		t->nok += row->ok;
		t->nrows++;
	}
	for (size_t r = 0; r < t->nrows; r++)
		t->rows[r].val = t->vals + r * (size_t)t->naxes;
	return 0;
fail:
	sweepplot_release(t);
	return -1;
}

void sweepplot_release(struct sweepplot_table *t)
{
	free(t->file);
	free(t->text);
	free(t->rows);
	free(t->vals);
	memset(t, 0, sizeof *t);
}
