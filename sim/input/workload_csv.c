/*
 * workload_csv.c - a network from a SCALE-Sim topology CSV (see workload.h).
 */
#include "workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "limit.h"
#include "ydoc.h"

#define F(x) offsetof(struct layer, x)
/*
 * SCALE-Sim topology columns, named as in messages, with the field each one
 * fills and the limits of the YAML key that field belongs to. A DP row's
 * channels are its repeat count, so they take repeat's limit.
 */
static const struct cfg_key csv_conv_cols[] = {
	{ "ifmap_height", CFG_INT, F(in_h), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "IFMAP Height" },
	{ "ifmap_width", CFG_INT, F(in_w), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "IFMAP Width" },
	{ "filter_height", CFG_INT, F(kernel_h), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "Filter Height" },
	{ "filter_width", CFG_INT, F(kernel_w), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "Filter Width" },
	{ "channels", CFG_INT, F(in_c), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "Channels" },
	{ "num_filter", CFG_INT, F(out_c), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "Num Filter" },
	{ "strides", CFG_INT, F(stride), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "Strides" },
	{ "stride_width", CFG_INT, F(kernel), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "a ninth column: the width's stride" },
	{ "channels", CFG_INT, F(repeat), "", NULL, 1, WORKLOAD_COUNT_MAX, NULL, "Channels of a DP row: its repeat count" },
	CFG_END
};
#define CSV_DP_CHANNELS 8           /* the row of csv_conv_cols for a DP row's channels */
static const char *const csv_conv_keys[] = { "in_h", "in_w", "kernel_h", "kernel_w", "in_c", "out_c", "stride" };

static const struct cfg_key csv_gemm_cols[] = {
	{ "m", CFG_INT, F(m), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "M" },
	{ "n", CFG_INT, F(n), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "N" },
	{ "k", CFG_INT, F(k), "", NULL, 1, WORKLOAD_DIM_MAX, NULL, "K" },
	CFG_END
};
#undef F

struct field {
	const char *s;      /* trimmed, NUL-terminated inside the line buffer */
	long col;
};

/* Splits line in place at commas; trims spaces; drops one empty trailing field. */
static size_t split_csv(char *line, struct field *f, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		char *start = p, *end;
		while (*p && *p != ',')
			p++;
		end = p;
		while (start < end && isspace((unsigned char)*start))
			start++;
		while (end > start && isspace((unsigned char)end[-1]))
			end--;
		if (n < max) {
			f[n].col = (long)(start - line) + 1;
			f[n].s = start;
		}
		n++;
		if (!*p) {
			*end = '\0';
			break;
		}
		*end = '\0';
		p++;
	}
	if (n > 0 && n <= max && f[n - 1].s[0] == '\0')
		n--;
	return n;
}

/* The first byte of line (len bytes, without its end) that is no text: NUL or a control byte other than tab. */
static const char *csv_bad_byte(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return line + i;
	}
	return NULL;
}

/* Parses field f into the column's field of obj with the column table's limits. */
static int csv_col(struct workload *w, long line, const struct cfg_schema *cols, int i, void *obj,
		   const struct field *f, struct err *e)
{
	return cfg_parse(cols, i, obj, f->s, false, (struct pos){ w->file, line, f->col }, NULL, e);
}

static const struct cfg_schema *csv_schema(const struct cfg_key *table, struct cfg_schema *s)
{
	if (!s->n)
		SIM_ASSERT(cfg_schema_add(s, "", table, 0) == 0);
	return s;
}

static void set_key_pos(struct pos *origin, int type, const char *key, struct pos p)
{
	int i = cfg_find(workload_layer_schema(type), key);
	SIM_ASSERT(i >= 0);
	origin[i] = p;
}

/* True when text reads as a number of a data row (an integer by the one grammar, cfg.h). */
static bool csv_is_number(const char *text)
{
	int64_t v;
	return cfg_read_int(text, &v) != CFG_NUM_BAD;
}

static int csv_line(struct workload *w, char *line, long lineno, size_t *ncols, bool *gemm, struct err *e)
{
	static struct cfg_schema conv_s, gemm_s;
	const struct cfg_schema *conv = csv_schema(csv_conv_cols, &conv_s), *gm = csv_schema(csv_gemm_cols, &gemm_s);
	struct pos origin[WORKLOAD_KEY_SLOTS] = { 0 };
	struct field f[16];
	size_t n = split_csv(line, f, 16);
	struct layer *l;

	if (n == 0 || (n == 1 && !f[0].s[0]))
		return 0;
	if (!*ncols) {
		/*
		 * SCALE-Sim skips its first line whatever it holds: it must be the
		 * header, or a layer would be lost.
		 */
		for (size_t c = 1; c < n && c < 16; c++)
			if (csv_is_number(f[c].s))
				return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL,
					      "expected the header line (Layer name, IFMAP Height, IFMAP Width, Filter Height, "
					      "Filter Width, Channels, Num Filter, Strides, or Layer, M, N, K), found a data row");
		if (n == 4 && strcasecmp(f[1].s, "M") == 0 && strcasecmp(f[2].s, "N") == 0 && strcasecmp(f[3].s, "K") == 0) {
			*gemm = true;
			*ncols = 4;
		} else if (n == 8 || n == 9) {
			*ncols = n;
		} else {
			return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL,
				      "expected a SCALE-Sim topology header (Layer name, IFMAP Height, IFMAP Width, "
				      "Filter Height, Filter Width, Channels, Num Filter, Strides, or Layer, M, N, K), "
				      "found %zu columns", n);
		}
		return 0;
	}
	if (n != *ncols)
		return err_at(e, (struct pos){ w->file, lineno, n ? f[n < 16 ? n - 1 : 15].col : 1 }, NULL,
			      "expected %zu fields as in the header, found %zu", *ncols, n);
	if (!(l = workload_add_layer(w, (struct pos){ w->file, lineno, 1 }, NULL, e)))
		return -1;
	snprintf(l->name, sizeof l->name, "%.*s", (int)sizeof l->name - 1, f[0].s);
	for (const char *ch = f[0].s; *ch; ch++) {
		if (*ch < 0x20 || *ch > 0x7e || *ch == '"' || *ch == '\\') {
			char q[300];
			return err_at(e, l->pos, "layer name", "expected printable characters without quotes, found \"%s\"",
				      err_quote(q, sizeof q, f[0].s, 60));
		}
	}
	if (!l->name[0])
		return err_at(e, l->pos, "layer name", "expected a name, found an empty field");
	l->repeat = 1;
	if (*gemm) {
		l->type = L_MATMUL;
		for (size_t c = 1; c < 4; c++) {
			if (csv_col(w, lineno, gm, (int)c - 1, l, &f[c], e) < 0)
				return -1;
			set_key_pos(origin, L_MATMUL, gm->e[c - 1].key->name, (struct pos){ w->file, lineno, f[c].col });
		}
		l->a = ROLE_ACTIVATION;
		l->b = ROLE_WEIGHT;
	} else {
		/* SCALE-Sim runs a "DP" (depthwise) row as one single-channel layer per channel. */
		bool dp = strstr(l->name, "DP") != NULL;
		l->type = L_CONV2D;
		for (size_t c = 1; c < 8; c++) {
			int col = dp && c == 5 ? CSV_DP_CHANNELS : (int)c - 1;
			if (csv_col(w, lineno, conv, col, l, &f[c], e) < 0)
				return -1;
			set_key_pos(origin, L_CONV2D, csv_conv_keys[c - 1], (struct pos){ w->file, lineno, f[c].col });
		}
		if (dp)
			l->in_c = 1;
		if (*ncols == 9) {
			struct layer other;
			if (csv_col(w, lineno, conv, 7, &other, &f[8], e) < 0)
				return -1;
			if (other.kernel != l->stride)
				return err_at(e, (struct pos){ w->file, lineno, f[8].col }, "stride_width",
					      "expected the same stride as the height, found %lld and %lld",
					      (long long)l->stride, (long long)other.kernel);
		}
		l->kernel = l->kernel_h;
		l->dilation = 1;
		l->groups = 1;
		l->scalesim_rounding = true;
		set_key_pos(origin, L_CONV2D, "kernel", (struct pos){ w->file, lineno, f[3].col });
	}
	return workload_keep_key_pos(w, l, origin, e);
}

int workload_read_csv(struct workload *w, const char *path, struct err *e)
{
	struct pos whole = { w->file, 0, 0 };
	char *line = NULL;
	size_t size = 0, ncols = 0;
	ssize_t got;
	long lineno = 0;
	bool gemm = false;
	int rc = 0;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
	snprintf(w->name, sizeof w->name, "%.*s", (int)sizeof w->name - 1,
		 strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	if (strrchr(w->name, '.'))
		*strrchr(w->name, '.') = '\0';
	while (rc == 0 && (got = getline(&line, &size, fp)) >= 0) {
		size_t len = (size_t)got;
		const char *bad;
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len > CSV_LINE_MAX) {
			rc = err_at(e, (struct pos){ w->file, lineno, 1 }, NULL,
				    "expected lines of at most %d characters, found a longer one", CSV_LINE_MAX);
		} else if ((bad = csv_bad_byte(line, len))) {
			struct pos at = { w->file, lineno, (long)(bad - line) + 1 };
			if (!*bad)
				rc = err_at(e, at, NULL, "expected text, found a NUL byte");
			else
				rc = err_at(e, at, NULL, "expected text, found the control byte \\x%02x",
					    (unsigned)(unsigned char)*bad);
		} else {
			rc = csv_line(w, line, lineno, &ncols, &gemm, e);
		}
	}
	if (rc == 0 && ferror(fp))
		rc = err_at(e, whole, NULL, "expected a readable file, found %s", strerror(errno));
	free(line);
	fclose(fp);
	if (rc < 0)
		return -1;
	if (!ncols)
		return err_at(e, whole, NULL, "expected a SCALE-Sim topology header, found %s", ydoc_nothing(w->file));
	if (w->n == 0)
		return err_at(e, (struct pos){ w->file, lineno, 1 }, NULL, "expected at least one layer, found none");
	return 0;
}
