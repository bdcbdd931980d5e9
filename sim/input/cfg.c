/*
 * cfg.c - the generic key loader behind configs and workload layers (see cfg.h).
 */
#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(obj, s, i) ((char *)(obj) + (s)->e[i].base + (s)->e[i].key->off)

int cfg_schema_add(struct cfg_schema *s, const char *prefix, const struct cfg_key *table, size_t base)
{
	size_t n = 0;
	while (table[n].name)
		n++;
	struct cfg_entry *e = realloc(s->e, (s->n + n) * sizeof *e);
	if (!e)
		return -1;
	s->e = e;
	for (size_t i = 0; i < n; i++) {
		struct cfg_entry *x = &s->e[s->n++];
		snprintf(x->name, sizeof x->name, "%s%s", prefix, table[i].name);
		x->key = &table[i];
		x->base = base;
	}
	return 0;
}

void cfg_schema_release(struct cfg_schema *s)
{
	free(s->e);
	s->e = NULL;
	s->n = 0;
}

int cfg_find(const struct cfg_schema *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool has_prefix(const struct cfg_schema *s, const char *prefix)
{
	size_t n = strlen(prefix);
	for (size_t i = 0; i < s->n; i++)
		if (strncmp(s->e[i].name, prefix, n) == 0)
			return true;
	return false;
}

void cfg_expected(const struct cfg_key *k, char *buf, size_t size)
{
	switch (k->type) {
	case CFG_INT:
		snprintf(buf, size, "an integer in [%lld, %lld]", (long long)k->min, (long long)k->max);
		break;
	case CFG_AUTO:
		snprintf(buf, size, "an integer in [%lld, %lld] or auto", (long long)k->min, (long long)k->max);
		break;
	case CFG_DOUBLE:
		snprintf(buf, size, "a number in [%g, %g]", k->min, k->max);
		break;
	case CFG_BOOL:
		snprintf(buf, size, "true or false");
		break;
	case CFG_STR:
		snprintf(buf, size, "a name of 1 to %d printable characters without quotes or backslashes",
			 CFG_STR_MAX - 1);
		break;
	case CFG_ENUM: {
		size_t n = (size_t)snprintf(buf, size, "one of ");
		for (int j = 0; k->choices[j] && n < size; j++)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", j ? ", " : "", k->choices[j]);
		break;
	}
	}
}

static int bad_value(const struct cfg_key *k, const char *name, const char *text, bool quoted,
		     const char *why, struct pos at, struct err *e)
{
	char exp[256];
	bool typed = k->type == CFG_INT || k->type == CFG_AUTO || k->type == CFG_DOUBLE || k->type == CFG_BOOL;
	cfg_expected(k, exp, sizeof exp);
	char q[300];
	if (!*text)
		return err_at(e, at, name, "expected %s, found an empty value", exp);
	return err_at(e, at, name, "expected %s, found \"%s\"%s%s%s", exp, err_quote(q, sizeof q, text, 60),
		      why ? " (" : quoted && typed ? " (quoted, so a string)" : "", why ? why : "", why ? ")" : "");
}

/* Digits of a number part: "0" or no leading zero; returns the end, or NULL when none. */
static const char *digits(const char *p, bool leading_zero_ok)
{
	const char *start = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == start || (!leading_zero_ok && *start == '0' && p - start > 1))
		return NULL;
	return p;
}

/* The end of the number that text starts with (integer part, fraction if real, exponent if real), or NULL. */
static const char *number_end(const char *text, bool real)
{
	const char *p = text + (*text == '-');
	if (real && *p == '.') {
		p = digits(p + 1, true);        /* ".5" */
	} else {
		if (!(p = digits(p, false)))
			return NULL;
		if (real && *p == '.') {
			p++;
			if (*p >= '0' && *p <= '9')
				p = digits(p, true);    /* "5." is 5 */
		}
	}
	if (p && real && (*p == 'e' || *p == 'E')) {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		p = digits(p, true);
	}
	return p;
}

enum cfg_num cfg_read_int(const char *text, int64_t *out)
{
	const char *end = number_end(text, false);
	long long v;
	if (!end || *end)
		return CFG_NUM_BAD;
	errno = 0;
	v = strtoll(text, NULL, 10);
	if (errno == ERANGE)
		return CFG_NUM_RANGE;
	*out = v;
	return CFG_NUM_OK;
}

enum cfg_num cfg_read_real(const char *text, double *out)
{
	const char *end = number_end(text, true);
	double v;
	if (!end || *end)
		return CFG_NUM_BAD;
	errno = 0;
	v = strtod(text, NULL);
	if (!isfinite(v))
		return CFG_NUM_RANGE;
	*out = v;
	return CFG_NUM_OK;
}

int cfg_parse(const struct cfg_schema *s, int i, void *obj, const char *text, bool quoted,
	      struct pos at, const char *shown, struct err *e)
{
	const struct cfg_key *k = s->e[i].key;
	char name[CFG_NAME_MAX * 2];
	void *f = FIELD(obj, s, i);

	snprintf(name, sizeof name, "%s%s", shown ? shown : "", s->e[i].name);

	switch (k->type) {
	case CFG_AUTO:
		/* auto, or else an integer as CFG_INT */
		SIM_ASSERT(k->min >= 1);
		if (strcmp(text, "auto") == 0) {     /* quoted too: JSON can only spell it "auto" */
			*(int64_t *)f = 0;
			return 0;
		}
		/* fall through */
	case CFG_INT: {
		int64_t v = 0;
		enum cfg_num r = quoted ? CFG_NUM_BAD : cfg_read_int(text, &v);
		if (r == CFG_NUM_RANGE)
			return bad_value(k, name, text, quoted, "beyond 64 bits", at, e);
		if (r != CFG_NUM_OK || (double)v < k->min || (double)v > k->max)
			return bad_value(k, name, text, quoted, NULL, at, e);
		*(int64_t *)f = v;
		return 0;
	}
	case CFG_DOUBLE: {
		double v = 0;
		if (quoted || cfg_read_real(text, &v) != CFG_NUM_OK || v < k->min || v > k->max)
			return bad_value(k, name, text, quoted, NULL, at, e);
		*(double *)f = v;
		return 0;
	}
	case CFG_BOOL:
		if (!quoted && strcmp(text, "true") == 0)
			*(bool *)f = true;
		else if (!quoted && strcmp(text, "false") == 0)
			*(bool *)f = false;
		else
			return bad_value(k, name, text, quoted, NULL, at, e);
		return 0;
	case CFG_ENUM:
		for (int j = 0; k->choices[j]; j++) {
			if (strcmp(text, k->choices[j]) == 0) {
				*(int *)f = j;
				return 0;
			}
		}
		return bad_value(k, name, text, quoted, NULL, at, e);
	case CFG_STR:
		if (!*text || strlen(text) >= CFG_STR_MAX)
			return bad_value(k, name, text, quoted, NULL, at, e);
		for (const char *c = text; *c; c++)
			if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
				return bad_value(k, name, text, quoted, NULL, at, e);
		snprintf((char *)f, CFG_STR_MAX, "%s", text);
		return 0;
	}
	return bad_value(k, name, text, quoted, NULL, at, e);
}

void cfg_defaults(const struct cfg_schema *s, void *obj)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct cfg_key *k = s->e[i].key;
		struct err e;
		struct pos nowhere = { "default", 0, 0 };
		if (!k->def) {
			size_t size = k->type == CFG_INT || k->type == CFG_AUTO ? sizeof(int64_t) : k->type == CFG_DOUBLE ? sizeof(double) :
				      k->type == CFG_BOOL ? sizeof(bool) : k->type == CFG_ENUM ? sizeof(int) : CFG_STR_MAX;
			memset(FIELD(obj, s, i), 0, size);
			continue;
		}
		/* A default that does not parse is a bug in a key table. */
		if (cfg_parse(s, (int)i, obj, k->def, false, nowhere, NULL, &e) < 0)
			sim_assert_fail(e.msg, __FILE__, __LINE__);
	}
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[CFG_NAME_MAX + 1], cur[CFG_NAME_MAX + 1];
	if (la > CFG_NAME_MAX || lb > CFG_NAME_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof *cur);
	}
	return prev[lb];
}

size_t cfg_suggest_distance(const char *name, const char *cand)
{
	size_t d = edit_distance(name, cand), limit = strlen(name) / 3 + 1;
	return d <= (limit < 2 ? 2 : limit) ? d : SIZE_MAX;
}

size_t cfg_nearest(const char *name, const char *const *cands, size_t n, bool dashes, size_t *ties)
{
	size_t best = SIZE_MAX, at = SIZE_MAX, same = 0;
	const char *a = dashes ? name + strspn(name, "-") : name;
	for (size_t i = 0; i < n; i++) {
		size_t d = cands[i] ? cfg_suggest_distance(a, dashes ? cands[i] + strspn(cands[i], "-") : cands[i]) : SIZE_MAX;
		if (d == SIZE_MAX)
			continue;
		same = d < best ? 1 : same + (d == best);
		if (d < best)
			best = d, at = i;
	}
	if (ties)
		*ties = same;
	return at;
}

const char *cfg_did_you_mean(const char *name, const char *const *cands, size_t n, bool dashes, char *buf,
			     size_t size)
{
	size_t i = cfg_nearest(name, cands, n, dashes, NULL);
	buf[0] = '\0';
	if (i != SIZE_MAX)
		snprintf(buf, size, " (did you mean %s?)", cands[i]);
	return buf;
}

const char *cfg_gone(const struct cfg_schema *s, const char *name)
{
	for (size_t i = 0; s->gone && s->gone[i][0]; i++)
		if (!strcmp(s->gone[i][0], name))
			return s->gone[i][1];
	return NULL;
}

const char *cfg_suggest(const struct cfg_schema *s, const char *name)
{
	static char best[CFG_NAME_MAX];
	size_t bestd = SIZE_MAX;
	/* Candidates: every full name and every dotted prefix of one ("sram", "sram.weights"). */
	for (size_t i = 0; i < s->n; i++) {
		char cand[CFG_NAME_MAX];
		snprintf(cand, sizeof cand, "%s", s->e[i].name);
		for (;;) {
			size_t d = cfg_suggest_distance(name, cand);
			char *dot;
			if (d < bestd) {
				bestd = d;
				snprintf(best, sizeof best, "%s", cand);
			}
			if (!(dot = strrchr(cand, '.')))
				break;
			*dot = '\0';
		}
	}
	return bestd != SIZE_MAX ? best : NULL;
}

/*
 * The closest required entry that map m (whose keys are under prefix) does
 * not give, or NULL when none is close: a misspelt key most likely meant a
 * key the map is missing (in_ch: in_c, not in_h beside it).
 */
static const char *suggest_missing(const struct cfg_schema *s, const struct ynode *m, const char *prefix,
				   const char *full)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX, n = strlen(prefix);
	for (size_t i = 0; i < s->n; i++) {
		const char *cand = s->e[i].name;
		bool given = false;
		if (s->e[i].key->def || strncmp(cand, prefix, n) != 0)
			continue;
		for (size_t j = 0; j < m->n && !given; j++)
			given = strcmp(cand + n, m->keys[j]->str) == 0;
		size_t d = given ? SIZE_MAX : cfg_suggest_distance(full, cand);
		if (d < bestd) {
			bestd = d;
			best = cand;
		}
	}
	return best;
}

static int unknown_key(const struct cfg_schema *s, const struct ynode *m, const char *prefix, const char *shown,
		       const char *full, struct pos at, struct err *e)
{
	const char *hint = suggest_missing(s, m, prefix, full), *gone = cfg_gone(s, full);
	if (!hint)
		hint = cfg_suggest(s, full);
	char path[CFG_NAME_MAX * 3], q[300];
	snprintf(path, sizeof path, "%s%s", shown, err_quote(q, sizeof q, full, 60));
	if (gone)
		return err_at(e, at, path, "expected a known key, found one there is no more (%s)", gone);
	if (hint)
		return err_at(e, at, path, "expected a known key, found an unknown key (did you mean %s%s?)", shown, hint);
	return err_at(e, at, path, "expected a known key, found an unknown key");
}

#define CFG_LOAD_MAX 128    /* entries of a schema that cfg_load_map loads */

static int load_map(const struct cfg_schema *s, void *obj, const struct ynode *m, const char *prefix,
		    const char *shown, bool *seen, struct pos *origin, struct pos *here, struct err *e)
{
	char buf[96], path[CFG_NAME_MAX * 3];
	if (!m || m->kind != Y_MAP) {
		snprintf(path, sizeof path, "%s%.*s", shown, (int)(*prefix ? strlen(prefix) - 1 : 0), prefix);
		if (path[0] && path[strlen(path) - 1] == '.')
			path[strlen(path) - 1] = '\0';
		return err_at(e, m ? m->pos : (struct pos){ 0 }, path, "expected a mapping, found %s",
			      ynode_describe(m, buf, sizeof buf));
	}
	for (size_t j = 0; j < m->n; j++) {
		const struct ynode *k = m->keys[j], *v = m->vals[j];
		char full[CFG_NAME_MAX * 2];
		int i;
		snprintf(full, sizeof full, "%s%s", prefix, k->str);
		snprintf(path, sizeof path, "%s%s", shown, full);
		i = cfg_find(s, full);
		if (v->kind == Y_MAP) {
			char sub[CFG_NAME_MAX * 2 + 1];
			snprintf(sub, sizeof sub, "%s.", full);
			if (i >= 0) {
				char exp[256];
				cfg_expected(s->e[i].key, exp, sizeof exp);
				return err_at(e, v->pos, path, "expected %s, found a mapping", exp);
			}
			if (!has_prefix(s, sub))
				return unknown_key(s, m, prefix, shown, full, k->pos, e);
			if (load_map(s, obj, v, sub, shown, seen, origin, here, e) < 0)
				return -1;
			continue;
		}
		if (i < 0) {
			char sub[CFG_NAME_MAX * 2 + 1];
			snprintf(sub, sizeof sub, "%s.", full);
			if (has_prefix(s, sub))
				return err_at(e, v->pos, path, "expected a mapping, found %s",
					      ynode_describe(v, buf, sizeof buf));
			return unknown_key(s, m, prefix, shown, full, k->pos, e);
		}
		if (v->kind == Y_SEQ) {
			char exp[256];
			cfg_expected(s->e[i].key, exp, sizeof exp);
			return err_at(e, v->pos, path, "expected %s, found a sequence", exp);
		}
		if (here[i].line > 0)
			return err_at(e, k->pos, path, "expected each key once, found it again (first at line %ld, column %ld)",
				      here[i].line, here[i].col);
		here[i] = k->pos;
		if (cfg_parse(s, i, obj, v->str, v->quoted, v->pos, shown, e) < 0)
			return -1;
		if (seen)
			seen[i] = true;
		if (origin)
			origin[i] = v->pos;
	}
	return 0;
}

int cfg_load_map(const struct cfg_schema *s, void *obj, const struct ynode *m, const char *shown,
		 bool *seen, struct pos *origin, struct err *e)
{
	struct pos here[CFG_LOAD_MAX];     /* where this map gave each entry (the key) */
	SIM_ASSERT(s->n <= CFG_LOAD_MAX);
	memset(here, 0, s->n * sizeof *here);
	return load_map(s, obj, m, "", shown ? shown : "", seen, origin, here, e);
}

int cfg_check_required(const struct cfg_schema *s, const bool *seen, struct pos at,
		       const char *shown, struct err *e)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->e[i].key->def || seen[i])
			continue;
		char exp[256], full[CFG_NAME_MAX * 2];
		cfg_expected(s->e[i].key, exp, sizeof exp);
		snprintf(full, sizeof full, "%s%s", shown ? shown : "", s->e[i].name);
		return err_at(e, at, full, "expected %s, found no value (the key is required)", exp);
	}
	return 0;
}

void cfg_format(const struct cfg_schema *s, int i, const void *obj, char *buf, size_t size)
{
	const struct cfg_key *k = s->e[i].key;
	const char *f = (const char *)obj + s->e[i].base + k->off;
	switch (k->type) {
	case CFG_INT:
		snprintf(buf, size, "%lld", (long long)*(const int64_t *)f);
		break;
	case CFG_AUTO:
		if (*(const int64_t *)f == 0)
			snprintf(buf, size, "auto");
		else
			snprintf(buf, size, "%lld", (long long)*(const int64_t *)f);
		break;
	case CFG_DOUBLE: {
		/* The shortest form that reads back to the same double. */
		double v = *(const double *)f;
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(buf, size, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		break;
	}
	case CFG_BOOL:
		snprintf(buf, size, "%s", *(const bool *)f ? "true" : "false");
		break;
	case CFG_ENUM:
		snprintf(buf, size, "%s", k->choices[*(const int *)f]);
		break;
	case CFG_STR:
		snprintf(buf, size, "%s", f);
		break;
	}
}

bool cfg_equal(const struct cfg_schema *s, const void *a, const void *b)
{
	for (size_t i = 0; i < s->n; i++) {
		char x[128], y[128];
		cfg_format(s, (int)i, a, x, sizeof x);
		cfg_format(s, (int)i, b, y, sizeof y);
		if (strcmp(x, y) != 0)
			return false;
	}
	return true;
}

/* Number of leading dotted components that a and b share. */
static int shared_parts(const char *a, const char *b)
{
	int n = 0;
	for (;;) {
		const char *da = strchr(a, '.'), *db = strchr(b, '.');
		if (!da || !db || da - a != db - b || strncmp(a, b, (size_t)(da - a)) != 0)
			return n;
		n++;
		a = da + 1;
		b = db + 1;
	}
}

void cfg_dump(const struct cfg_schema *s, const void *obj, FILE *out)
{
	const char *prev = "";
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->e[i].name, *p = name;
		const struct cfg_key *k = s->e[i].key;
		int keep = shared_parts(prev, name), depth = 0;
		char val[128], line[256];

		/* Open the mappings this key needs that the previous key did not. */
		for (const char *dot; (dot = strchr(p, '.')); p = dot + 1, depth++)
			if (depth >= keep)
				fprintf(out, "%*s%.*s:\n", 2 * depth, "", (int)(dot - p), p);
		cfg_format(s, (int)i, obj, val, sizeof val);
		if (k->type == CFG_STR) {
			char q[140];
			snprintf(q, sizeof q, "\"%s\"", val);
			snprintf(val, sizeof val, "%s", q);
		}
		snprintf(line, sizeof line, "%*s%s: %s", 2 * depth, "", p, val);
		fprintf(out, "%-40s # %s%s%s%s\n", line, *k->unit ? "[" : "", k->unit, *k->unit ? "] " : "", k->doc);
		prev = name;
	}
}
