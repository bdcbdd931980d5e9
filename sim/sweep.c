/*
 * sweep.c - design-space sweeps (see sweep.h).
 */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cfg.h"
#include "config.h"
#include "fsx.h"
#include "opcache.h"
#include "options.h"
#include "report.h"
#include "tpusim.h"
#include "ydoc.h"

static int expected(struct err *e, const struct ynode *n, const char *key, const char *what)
{
	char buf[300];
	if (n->kind == Y_SEQ)
		return n->n ? err_at(e, n->pos, key, "expected %s, found a list of %zu", what, n->n) :
			      err_at(e, n->pos, key, "expected %s, found an empty list", what);
	return err_at(e, n->pos, key, "expected %s, found %s", what, ynode_describe(n, buf, sizeof buf));
}

/* Where item i of the spec's list `key` was written. */
static struct pos item_pos(const struct sweep *sw, const char *key, int i)
{
	const struct ynode *l = ynode_get(sw->doc->root, key);
	return l && l->kind == Y_SEQ && (size_t)i < l->n ? l->vals[i]->pos : sw->doc->root->pos;
}

/* The whole file at path (owned), its length in *len, or NULL with e set at `at`. */
static char *slurp(const char *path, size_t *len, struct pos at, const char *key, struct err *e)
{
	char *buf, q[LIMIT_QUOTE_BUF];
	if (fsx_read(path, YDOC_MAX_BYTES, &buf, len) == 0)
		return buf;
	if (errno == ENOMEM)
		err_nomem(e, path);
	else
		err_at(e, at, key, "expected a readable file, found \"%s\" (%s)", err_quote(q, sizeof q, path, LIMIT_PATH),
		       strerror(errno));
	return NULL;
}

static int file_list(const struct ynode *n, const char *key, const char **out, int max, int *count, struct err *e)
{
	char what[100];
	snprintf(what, sizeof what, "a list of 1 to %d file paths", max);
	if (n->kind != Y_SEQ || n->n == 0 || n->n > (size_t)max)
		return expected(e, n, key, what);
	for (size_t i = 0; i < n->n; i++) {
		char k[64];
		snprintf(k, sizeof k, "%s[%zu]", key, i);
		if (n->vals[i]->kind != Y_SCALAR || !*n->vals[i]->str)
			return expected(e, n->vals[i], k, "a file path");
		out[(*count)++] = n->vals[i]->str;
	}
	return 0;
}

static int add_value(struct sweep_axis *a, const char *text, bool quoted, struct pos at, const char *key, struct err *e)
{
	if (a->n == SWEEP_MAX_VALUES)
		return err_at(e, at, key, "expected at most %d values, found more", SWEEP_MAX_VALUES);
	if (!(a->values[a->n] = strdup(text)))
		return err_nomem(e, NULL);
	a->quoted[a->n] = quoted;
	a->at[a->n++] = at;
	return 0;
}

/* An integer of a range: the scalar at key in m. */
static int range_int(const struct ynode *m, const char *key, const char *path, long long lo, long long *out,
		     struct err *e)
{
	const struct ynode *v = ynode_get(m, key);
	char k[300], what[64], *end;
	snprintf(k, sizeof k, "%s.%s", path, key);
	snprintf(what, sizeof what, "an integer in [%lld, 2^62]", lo);
	if (!v)
		return err_at(e, m->pos, path, "expected a range {from, to, times or step}, found no %s", key);
	errno = 0;
	long long x = v->kind == Y_SCALAR && !v->quoted ? strtoll(v->str, &end, 10) : 0;
	if (v->kind != Y_SCALAR || v->quoted || !*v->str || *end || errno || x < lo || x > (1LL << 62))
		return expected(e, v, k, what);
	*out = x;
	return 0;
}

/* {from: A, to: B, times: T} or {from: A, to: B, step: S}. */
static int axis_range(struct sweep_axis *a, const struct ynode *m, const char *path, struct err *e)
{
	long long from, to, by;
	bool times = ynode_get(m, "times") != NULL, step = ynode_get(m, "step") != NULL;
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->keys[i]->str;
		if (strcmp(k, "from") && strcmp(k, "to") && strcmp(k, "times") && strcmp(k, "step")) {
			char p[300], q[100];
			snprintf(p, sizeof p, "%s.%s", path, err_quote(q, sizeof q, k, 60));
			return err_at(e, m->keys[i]->pos, p, "expected from, to, times or step, found an unknown key");
		}
	}
	if (times == step)
		return err_at(e, m->pos, path, "expected a range with one of times or step, found %s",
			      times ? "both" : "neither");
	if (range_int(m, "from", path, 1, &from, e) < 0 || range_int(m, "to", path, 1, &to, e) < 0 ||
	    range_int(m, times ? "times" : "step", path, times ? 2 : 1, &by, e) < 0)
		return -1;
	if (to < from) {
		char k[300];
		snprintf(k, sizeof k, "%s.to", path);
		return err_at(e, ynode_get(m, "to")->pos, k, "expected at least from (%lld), found %lld", from, to);
	}
	for (long long x = from; x <= to; x = times ? x * by : x + by) {
		char t[32];
		snprintf(t, sizeof t, "%lld", x);
		if (add_value(a, t, false, m->pos, path, e) < 0)
			return -1;
		if (x > (1LL << 62) / by)
			break;
	}
	return 0;
}

static int axis_load(struct sweep_axis *a, const struct ynode *key, const struct ynode *v, struct err *e)
{
	char path[300], q[200];
	const char *name = key->str;
	snprintf(path, sizeof path, "axes.%s", err_quote(q, sizeof q, name, 100));
	a->name = name;
	a->group = -1;
	a->opt = run_option_find(name, OPT_IN_SWEEP);
	if (!a->opt && cfg_find(config_schema(), name) < 0) {
		const char *hint = cfg_suggest(config_schema(), name);
		char opts[200];
		run_option_keys(OPT_IN_SWEEP, " or ", opts, sizeof opts);
		if (hint)
			return err_at(e, key->pos, path, "expected a config key, %s, found an unknown key (did you mean %s?)",
				      opts, hint);
		return err_at(e, key->pos, path, "expected a config key, %s, found an unknown key", opts);
	}
	a->values = calloc(SWEEP_MAX_VALUES, sizeof *a->values);
	a->quoted = calloc(SWEEP_MAX_VALUES, sizeof *a->quoted);
	a->at = calloc(SWEEP_MAX_VALUES, sizeof *a->at);
	if (!a->values || !a->quoted || !a->at)
		return err_nomem(e, NULL);
	if (v->kind == Y_MAP)
		return axis_range(a, v, path, e);
	if (v->kind != Y_SEQ || v->n == 0) {
		if (v->kind == Y_SEQ)
			return err_at(e, v->pos, path, "expected a list of values or a range {from, to, times or step}, "
				      "found an empty list");
		return expected(e, v, path, "a list of values or a range {from, to, times or step}");
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *x = v->vals[i];
		char k[320];
		snprintf(k, sizeof k, "%s[%zu]", path, i);
		if (x->kind != Y_SCALAR)
			return expected(e, x, k, "a value");
		if (add_value(a, x->str, x->quoted, x->pos, k, e) < 0)
			return -1;
	}
	return 0;
}

static int find_axis(const struct sweep *sw, const char *name)
{
	for (int i = 0; i < sw->naxes; i++)
		if (!strcmp(sw->axes[i].name, name))
			return i;
	return -1;
}

static int zip_load(struct sweep *sw, const struct ynode *z, struct err *e)
{
	if (z->kind != Y_SEQ)
		return expected(e, z, "zip", "a list of lists of axis names");
	for (size_t g = 0; g < z->n; g++) {
		const struct ynode *l = z->vals[g];
		char k[64];
		snprintf(k, sizeof k, "zip[%zu]", g);
		if (l->kind != Y_SEQ || l->n == 0)
			return expected(e, l, k, "a list of axis names");
		int first = -1;
		for (size_t i = 0; i < l->n; i++) {
			const struct ynode *x = l->vals[i];
			char ki[80], q[100];
			snprintf(ki, sizeof ki, "zip[%zu][%zu]", g, i);
			int ax = x->kind == Y_SCALAR ? find_axis(sw, x->str) : -1;
			if (ax < 0)
				return expected(e, x, ki, "an axis named under axes");
			if (sw->axes[ax].group >= 0)
				return err_at(e, x->pos, ki, "expected an axis in one zip group only, found \"%s\" again",
					      err_quote(q, sizeof q, x->str, 60));
			sw->axes[ax].group = (int)g;
			if (first < 0)
				first = ax;
			else if (sw->axes[ax].n != sw->axes[first].n) {
				char q2[100];
				return err_at(e, x->pos, ki, "expected %zu values as %s has, found %zu in %s", sw->axes[first].n,
					      err_quote(q, sizeof q, sw->axes[first].name, 60), sw->axes[ax].n,
					      err_quote(q2, sizeof q2, x->str, 60));
			}
		}
	}
	return 0;
}

static int spec_read(struct sweep *sw, const struct ydoc *d, struct err *e)
{
	const struct ynode *r = d->root, *axes = NULL, *zip = NULL;
	bool have_c = false, have_w = false;
	if (!r)
		return err_input(e, "%s: expected a sweep spec (configs, workloads, axes, zip), found an empty file", d->file);
	if (r->kind != Y_MAP)
		return expected(e, r, NULL, "a sweep spec (configs, workloads, axes, zip)");
	for (size_t i = 0; i < r->n; i++) {
		const char *k = r->keys[i]->str;
		const struct ynode *v = r->vals[i];
		int rc = 0;
		if (!strcmp(k, "configs"))
			rc = file_list(v, k, sw->configs, CONFIG_MAX_FILES, &sw->nconfigs, e), have_c = true;
		else if (!strcmp(k, "workloads"))
			rc = file_list(v, k, sw->workloads, SWEEP_MAX_WORKLOADS, &sw->nworkloads, e), have_w = true;
		else if (!strcmp(k, "axes"))
			axes = v;
		else if (!strcmp(k, "zip"))
			zip = v;
		else {
			char q[100];
			return err_at(e, r->keys[i]->pos, err_quote(q, sizeof q, k, 60),
				      "expected configs, workloads, axes or zip, found an unknown key");
		}
		if (rc < 0)
			return -1;
	}
	if (!have_c || !have_w)
		return err_at(e, r->pos, have_c ? "workloads" : "configs", "expected a list of files, found none");
	if (axes) {
		if (axes->kind != Y_MAP)
			return expected(e, axes, "axes", "a map of axis name to values");
		if (axes->n > SWEEP_MAX_AXES)
			return expected(e, axes, "axes", "at most 32 axes");
		for (size_t i = 0; i < axes->n; i++) {
			sw->naxes++;
			if (axis_load(&sw->axes[i], axes->keys[i], axes->vals[i], e) < 0)
				return -1;
		}
	}
	if (zip && !axes)
		return err_at(e, zip->pos, "zip", "expected axes to zip, found no axes");
	if (zip && zip_load(sw, zip, e) < 0)
		return -1;
	/* Factors: each axis alone, or a zip group at its first axis's place. */
	size_t total = (size_t)sw->nworkloads;
	for (int i = 0; i < sw->naxes; i++) {
		int f = -1;
		for (int j = 0; j < i && sw->axes[i].group >= 0; j++)
			if (sw->axes[j].group == sw->axes[i].group)
				f = sw->factor[j];
		if (f < 0) {
			f = sw->nfactors++;
			sw->factor_n[f] = sw->axes[i].n;
			if (total > SWEEP_MAX_POINTS / sw->axes[i].n)
				return err_at(e, axes->pos, "axes", "expected at most %d points, found more", SWEEP_MAX_POINTS);
			total *= sw->axes[i].n;
		}
		sw->factor[i] = f;
	}
	sw->npoints = total;
	return 0;
}

void sweep_point(const struct sweep *sw, size_t p, int *workload, size_t *vidx)
{
	size_t fi[SWEEP_MAX_AXES];
	for (int f = sw->nfactors - 1; f >= 0; f--) {
		fi[f] = p % sw->factor_n[f];
		p /= sw->factor_n[f];
	}
	*workload = (int)p;
	for (int i = 0; i < sw->naxes; i++)
		vidx[i] = fi[sw->factor[i]];
}

const char *const sweep_engine_names[] = { "parallel", "slurm", NULL };

/* The request of point p (borrowing sw's strings): the run options at their defaults, then the axes' values. */
static int point_request(const struct sweep *sw, size_t p, struct sim_request *rq, int *widx, struct err *e)
{
	size_t vidx[SWEEP_MAX_AXES];
	sweep_point(sw, p, widx, vidx);
	run_options_default(rq);
	for (int i = 0; i < sw->nconfigs; i++)
		rq->configs[i] = sw->cpath[i];
	rq->nconfigs = sw->nconfigs;
	rq->workload = sw->wpath[*widx];
	for (int i = 0; i < sw->naxes; i++) {
		const struct sweep_axis *a = &sw->axes[i];
		const char *v = a->values[vidx[i]];
		struct pos at = a->at[vidx[i]];
		char k[300], q[100], what[200];
		bool full;
		snprintf(k, sizeof k, "axes.%s", a->name);
		if (!a->opt) {
			struct sim_override *o = &rq->overrides[rq->noverrides++];
			o->key = a->name;
			o->value = v;
			o->quoted = a->quoted[vidx[i]];
			o->at = at;
			continue;
		}
		/* A number written in quotes is a string, as in a config file. */
		if ((a->opt->val.kind != OPT_CHOICE && a->quoted[vidx[i]]) ||
		    optval_parse(&a->opt->val, v, a->opt->sweep_names, rq, a->opt->off, &full) < 0) {
			optval_expected(&a->opt->val, false, a->opt->sweep_names, what, sizeof what);
			return err_at(e, at, k, "expected %s, found \"%s\"", what, err_quote(q, sizeof q, v, 60));
		}
	}
	return 0;
}

void sweep_hash_text(uint64_t h, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The hash of a loaded point (see sweep.h). */
static int point_hash(const struct sweep *sw, const struct sim *s, const struct sim_request *rq, int widx,
		      uint64_t *h, struct err *e)
{
	char *text = NULL, line[200];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return err_nomem(e, NULL);
	cfg_dump(config_schema(), &s->cfg.arch, f);
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return err_nomem(e, NULL);
	}
	*h = FSX_FNV_INIT;
	snprintf(line, sizeof line, "tpusim %s\n", TPUSIM_VERSION);
	*h = fsx_fnv(*h, line, strlen(line) + 1);
	*h = fsx_fnv(*h, text, len + 1);
	*h = fsx_fnv(*h, sw->wtext[widx], sw->wlen[widx]);
	snprintf(line, sizeof line, "\nmodel %s dataflow %s batch %lld\n", run_model_names[rq->model],
		 array_dataflow_names[s->opts.dataflow], (long long)rq->batch);
	*h = fsx_fnv(*h, line, strlen(line) + 1);
	free(text);
	return 0;
}

/* file as opened: under base when relative and base is not NULL (owned), or NULL with e set. */
static char *opened(const char *base, const char *file, struct err *e)
{
	char *p = NULL;
	if (base && file[0] != '/' ? asprintf(&p, "%s/%s", base, file) < 0 : !(p = strdup(file)))
		err_nomem(e, NULL), p = NULL;
	return p;
}

/*
 * Reads the spec at path (its relative files under base, or the working
 * directory when base is NULL) and loads points first..last (SIZE_MAX: all).
 */
static int load(struct sweep *sw, const char *path, const char *base, size_t first, size_t last, struct err *e)
{
	struct sim_request *rq = NULL;
	struct sim *s = NULL;
	struct pos whole = { path, 0, 0 };
	memset(sw, 0, sizeof *sw);
	if (!(sw->doc = ydoc_load(path, e)) || spec_read(sw, sw->doc, e) < 0 ||
	    !(sw->text = slurp(path, &sw->text_len, whole, NULL, e)))
		goto fail;
	if (first == SIZE_MAX)
		first = 0, last = sw->npoints - 1;
	if (first > last || last >= sw->npoints) {
		err_input(e, "--points: expected I-J with I <= J < %zu (the spec's points), found %zu-%zu", sw->npoints,
			  first, last);
		goto fail;
	}
	sw->first = first;
	sw->last = last;
	for (int i = 0; i < sw->nconfigs; i++) {
		char k[64];
		struct stat st;
		snprintf(k, sizeof k, "configs[%d]", i);
		if (!(sw->cpath[i] = opened(base, sw->configs[i], e)))
			goto fail;
		/* A file that is not there, said at its place in the spec (a preset's name is found by the config loader). */
		if (strchr(sw->configs[i], '/') && stat(sw->cpath[i], &st) != 0) {
			char q[LIMIT_QUOTE_BUF];
			err_at(e, item_pos(sw, "configs", i), k, "expected a readable file, found \"%s\" (%s)",
			       err_quote(q, sizeof q, sw->cpath[i], LIMIT_PATH), strerror(errno));
			goto fail;
		}
	}
	for (int w = 0; w < sw->nworkloads; w++) {
		char k[64];
		snprintf(k, sizeof k, "workloads[%d]", w);
		if (!(sw->wpath[w] = opened(base, sw->workloads[w], e)) ||
		    !(sw->wtext[w] = slurp(sw->wpath[w], &sw->wlen[w], item_pos(sw, "workloads", w), k, e)))
			goto fail;
	}
	rq = malloc(sizeof *rq);
	s = calloc(1, sizeof *s);
	sw->hash = calloc(sw->npoints ? sw->npoints : 1, sizeof *sw->hash);
	if (!rq || !s || !sw->hash) {
		err_nomem(e, NULL);
		goto fail;
	}
	for (size_t p = first; p <= last; p++) {
		int widx, rc;
		if (point_request(sw, p, rq, &widx, e) < 0 || sim_load(s, rq, "sweep", e) < 0)
			goto fail;
		rc = point_hash(sw, s, rq, widx, &sw->hash[p], e);
		sim_release(s);
		if (rc < 0)
			goto fail;
	}
	free(rq);
	free(s);
	return 0;
fail:
	free(rq);
	free(s);
	sweep_release(sw);
	return -1;
}

int sweep_load(struct sweep *sw, const char *path, struct err *e)
{
	return load(sw, path, NULL, SIZE_MAX, SIZE_MAX, e);
}

int sweep_load_points(struct sweep *sw, const char *path, size_t first, size_t last, struct err *e)
{
	if (first == SIZE_MAX)
		return err_input(e, "--points: expected I-J with I <= J, found %zu-%zu", first, last);
	return load(sw, path, NULL, first, last, e);
}

void sweep_release(struct sweep *sw)
{
	for (int i = 0; i < sw->naxes; i++) {
		struct sweep_axis *a = &sw->axes[i];
		for (size_t j = 0; a->values && j < a->n; j++)
			free(a->values[j]);
		free(a->values);
		free(a->quoted);
		free(a->at);
	}
	for (int w = 0; w < sw->nworkloads; w++) {
		free(sw->wtext[w]);
		free(sw->wpath[w]);
	}
	for (int i = 0; i < sw->nconfigs; i++)
		free(sw->cpath[i]);
	free(sw->text);
	free(sw->base);
	free(sw->hash);
	ydoc_free(sw->doc);
	memset(sw, 0, sizeof *sw);
}

/* ---- running ---- */

enum { P_MISSING, P_OK, P_FAILED };

/* The numbers of the csv, as text, from a point's summary.json. */
struct point_row {
	char cycles[40], utilization[40], tops[40], rd[40], wr[40], energy[40], pjmac[40];
	char err[ERR_MSG_MAX];
};

static int total_num(const struct ynode *t, const char *key, char *out, size_t size)
{
	const struct ynode *v = ynode_get(t, key);
	if (!v || v->kind != Y_SCALAR || v->quoted || !*v->str)
		return -1;
	snprintf(out, size, "%s", v->str);
	return 0;
}

/* Reads point p's file: P_OK (row filled), P_FAILED (row->err), or P_MISSING. */
static int point_read(const char *dir, uint64_t h, struct point_row *row)
{
	char path[LIMIT_PATH_BUF], stem[17], *text;
	size_t len;
	struct err e = { 0 };
	struct pos none = { "", 0, 0 };
	sweep_hash_text(h, stem);
	snprintf(path, sizeof path, "%s/points/%s.json", dir, stem);
	if (access(path, F_OK) == 0 && (text = slurp(path, &len, none, NULL, &e))) {
		/* The totals come before the layers in summary.json: the parse ends there. */
		const struct ydoc_stream upto = { "layers", NULL, NULL, true };
		struct ydoc *d = ydoc_parse_json_stream(path, text, &upto, &e);
		const struct ynode *t = d && d->root && d->root->kind == Y_MAP ? ynode_get(d->root, "total") : NULL;
		char ops[40];
		int ok = t && t->kind == Y_MAP && !total_num(t, "cycles", row->cycles, 40) &&
			 !total_num(t, "utilization", row->utilization, 40) && !total_num(t, "achieved_ops_per_s", ops, 40) &&
			 !total_num(t, "hbm_read_bytes", row->rd, 40) && !total_num(t, "hbm_write_bytes", row->wr, 40) &&
			 !total_num(t, "energy_pj", row->energy, 40) && !total_num(t, "pj_per_mac", row->pjmac, 40);
		if (ok)
			snprintf(row->tops, sizeof row->tops, "%.17g", strtod(ops, NULL) / 1e12);
		ydoc_free(d);
		free(text);
		if (ok)
			return P_OK;
	}
	snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
	if (access(path, F_OK) == 0 && (text = slurp(path, &len, none, NULL, &e))) {
		while (len && text[len - 1] == '\n')
			text[--len] = 0;
		snprintf(row->err, sizeof row->err, "%s", text);
		free(text);
		if (len)
			return P_FAILED;
	}
	return P_MISSING;
}

/*
 * Runs point p and writes its file; returns P_OK or P_FAILED, or -1 when the
 * file cannot be written. cache: the worker's results of ops (opcache.h), or
 * NULL when reuse is off.
 */
static int point_run(const struct sweep *sw, size_t p, const char *dir, struct opcache *cache)
{
	struct sim_request rq;
	struct sim *s = calloc(1, sizeof *s);
	struct err e = { 0 };
	char path[LIMIT_PATH_BUF], stem[17], *text = NULL;
	int widx, rc;
	sweep_hash_text(sw->hash[p], stem);
	if (!s)
		err_nomem(&e, NULL);
	else if (point_request(sw, p, &rq, &widx, &e) == 0 && (rq.cache = cache, rq.no_reuse = sw->no_reuse,
								 sim_load(s, &rq, "sweep", &e) == 0)) {
		if (sim_run(s, &e) == 0 && !(text = sim_summary_json(s)))
			err_nomem(&e, NULL);
		sim_release(s);
	}
	free(s);
	if (text) {
		snprintf(path, sizeof path, "%s/points/%s.json", dir, stem);
		rc = fsx_write_atomic(path, text, strlen(text)) < 0 ? -1 : P_OK;
		free(text);
		return rc;
	}
	for (char *c = e.msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	size_t n = strlen(e.msg);
	e.msg[n < ERR_MSG_MAX - 1 ? n : ERR_MSG_MAX - 2] = '\n';
	snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
	return fsx_write_atomic(path, e.msg, strlen(e.msg)) < 0 ? -1 : P_FAILED;
}

/* What a worker tells the sweep: it starts a point, or has finished one (ok or failed). */
enum { M_START, M_OK, M_FAILED };

struct done_msg {
	uint32_t point;
	uint16_t worker;
	uint16_t what;
};

/*
 * The points a worker takes: runs of `chunk` consecutive points (the fastest
 * factor's values, so that points that differ only there, as an energy axis
 * does, meet in one worker's cache), dealt to the workers in turn.
 */
static size_t chunk_of(const struct sweep *sw)
{
	return sw->nfactors ? sw->factor_n[sw->nfactors - 1] : 1;
}

/*
 * A worker: the loaded points of its chunks that are not done; each point
 * announced on fd before it runs and reported after.
 */
static void worker(const struct sweep *sw, const char *dir, int jobs, int w, const bool *done, int fd, pid_t parent)
{
	/* One cache for all the worker's points: ops reused within a point and across points. Out of memory: none. */
	struct opcache *cache = sw->no_reuse ? NULL : opcache_new();
	size_t chunk = chunk_of(sw);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	for (size_t p = sw->first; p <= sw->last; p++) {
		if (done[p] || (p - sw->first) / chunk % (size_t)jobs != (size_t)w)
			continue;
		struct done_msg m = { (uint32_t)p, (uint16_t)w, M_START };
		if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
			_exit(1);
		int rc = point_run(sw, p, dir, cache);
		if (rc < 0)
			_exit(1);
		m.what = rc == P_FAILED ? M_FAILED : M_OK;
		if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
			_exit(1);
	}
	_exit(0);
}

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* One CSV field (report_csv_str), then the separator. */
static void csv_field(FILE *f, const char *s, bool last)
{
	report_csv_str(f, s);
	fputc(last ? '\n' : ',', f);
}

/* Writes DIR/sweep.csv; each point's P_ status in st (NULL, or npoints entries). */
static int write_csv(const struct sweep *sw, const char *dir, unsigned char *st_out, struct err *e)
{
	char *text = NULL, path[LIMIT_PATH_BUF];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct point_row *row = malloc(sizeof *row);
	if (!f || !row) {
		if (f)
			fclose(f);
		free(text);
		free(row);
		return err_nomem(e, NULL);
	}
	fputs("workload,", f);
	for (int i = 0; i < sw->naxes; i++)
		csv_field(f, sw->axes[i].name, false);
	fputs("cycles,utilization,tops,hbm_read_bytes,hbm_write_bytes,energy_pj,pj_per_mac,status\n", f);
	for (size_t p = 0; p < sw->npoints; p++) {
		size_t vidx[SWEEP_MAX_AXES];
		int widx, st = point_read(dir, sw->hash[p], row);
		if (st_out)
			st_out[p] = (unsigned char)st;
		sweep_point(sw, p, &widx, vidx);
		csv_field(f, sw->workloads[widx], false);
		for (int i = 0; i < sw->naxes; i++)
			csv_field(f, sw->axes[i].values[vidx[i]], false);
		if (st == P_OK)
			fprintf(f, "%s,%s,%s,%s,%s,%s,%s,ok\n", row->cycles, row->utilization, row->tops, row->rd, row->wr,
				row->energy, row->pjmac);
		else {
			fputs(",,,,,,,", f);
			csv_field(f, st == P_FAILED ? row->err : "missing", true);
		}
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

static int make_dir(const char *path, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	errno = 0;
	if (mkdir(path, 0755) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK) == 0)
			return 0;
	}
	return err_input(e, "-o: expected a directory that can be created and written, found \"%s\" (%s)",
			 err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno ? errno : ENOTDIR));
}

/* Writes the record (see sweep.h) in dir. */
static int record_write(const struct sweep *sw, const char *dir, struct err *e)
{
	char path[LIMIT_PATH_BUF], cwd[LIMIT_PATH_BUF];
	if (sw->base)
		snprintf(cwd, sizeof cwd, "%s", sw->base);
	else if (!getcwd(cwd, sizeof cwd - 1))
		return err_sim(e, "sweep: expected the working directory, found %s", strerror(errno));
	strcat(cwd, "\n");
	snprintf(path, sizeof path, "%s/sweep.yaml", dir);
	if (fsx_write_atomic(path, sw->text, sw->text_len) == 0) {
		snprintf(path, sizeof path, "%s/sweep.cwd", dir);
		if (fsx_write_atomic(path, cwd, strlen(cwd)) == 0)
			return 0;
	}
	return fsx_write_error(e, "-o", path, errno);
}

/* Creates dir and dir/points, then writes the record. */
static int dir_prepare(const struct sweep *sw, const char *dir, struct err *e)
{
	char pdir[LIMIT_PATH_BUF];
	if (strlen(dir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(dir));
	snprintf(pdir, sizeof pdir, "%s/points", dir);
	if (make_dir(dir, e) < 0 || make_dir(pdir, e) < 0 || record_write(sw, dir, e) < 0)
		return -1;
	fsx_clean_tmp(dir);
	fsx_clean_tmp(pdir);
	return 0;
}

/* Runs the loaded points not done yet (see sweep_run). */
static int run_points(const struct sweep *sw, const char *dir, int jobs,
		      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, struct err *e)
{
	char stem[17];
	struct timespec t0;
	struct sweep_progress pr = { 0 };
	struct point_row *row;
	bool *done;
	pid_t pids[SWEEP_MAX_JOBS], self = getpid();
	int fds[2], nw = 0, dead = 0;

	SIM_ASSERT(jobs >= 1 && jobs <= SWEEP_MAX_JOBS);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (dir_prepare(sw, dir, e) < 0)
		return -1;
	done = calloc(sw->npoints ? sw->npoints : 1, sizeof *done);
	row = malloc(sizeof *row);
	if (!done || !row) {
		free(done);
		free(row);
		return err_nomem(e, NULL);
	}
	pr.total = sw->last - sw->first + 1;
	pr.point = -1;
	for (size_t p = sw->first; p <= sw->last; p++) {
		int st = point_read(dir, sw->hash[p], row);
		done[p] = st != P_MISSING;
		pr.resumed += done[p];
		pr.failed += st == P_FAILED;
	}
	pr.done = pr.resumed;
	if (progress)
		progress(ctx, &pr);
	/*
	 * Rounds of workers. A worker killed while it runs a point (by a signal:
	 * out of memory, a crash) leaves that point failed, with the signal in
	 * its .err file, and a new round runs the points still to do; a worker
	 * that exits with an error (a point file it could not write) fails the
	 * sweep.
	 */
	for (bool again = true; again && e->kind == ERR_NONE;) {
		long running[SWEEP_MAX_JOBS];
		int killed[SWEEP_MAX_JOBS] = { 0 };
		again = false;
		nw = 0;
		if (pipe2(fds, O_CLOEXEC) < 0) {
			err_sim(e, "sweep: expected a pipe to the workers, found %s", strerror(errno));
			break;
		}
		fflush(NULL);
		for (int w = 0; w < jobs && pr.done < pr.total; w++) {
			pid_t pid = fork();
			if (pid == 0) {
				close(fds[0]);
				worker(sw, dir, jobs, w, done, fds[1], self);
			}
			if (pid < 0) {
				err_sim(e, "sweep: expected to start worker %d, found %s", w, strerror(errno));
				break;
			}
			running[w] = -1;
			pids[nw++] = pid;
		}
		close(fds[1]);
		for (;;) {
			struct done_msg m;
			ssize_t r = read(fds[0], &m, sizeof m);
			if (r < 0 && errno == EINTR)
				continue;
			if (r != (ssize_t)sizeof m || m.worker >= nw || m.point < sw->first || m.point > sw->last)
				break;
			if (m.what == M_START) {
				running[m.worker] = (long)m.point;
				continue;
			}
			running[m.worker] = -1;
			done[m.point] = true;
			pr.done++;
			pr.failed += m.what == M_FAILED;
			pr.point = (long)m.point;
			pr.point_failed = m.what == M_FAILED;
			sweep_hash_text(sw->hash[m.point], stem);
			pr.hash = stem;
			pr.elapsed = since(&t0);
			if (progress)
				progress(ctx, &pr);
		}
		close(fds[0]);
		pr.workers = nw;
		for (int w = 0; w < nw; w++) {
			int status;
			struct rusage ru;
			while (wait4(pids[w], &status, 0, &ru) < 0 && errno == EINTR)
				;
			if (WIFSIGNALED(status) && running[w] >= 0)
				killed[w] = WTERMSIG(status);
			else
				dead += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
			if (ru.ru_maxrss > pr.worker_rss_kib[w])
				pr.worker_rss_kib[w] = ru.ru_maxrss;
		}
		for (int w = 0; w < nw && !dead; w++) {
			size_t p = (size_t)running[w];
			char path[LIMIT_PATH_BUF], msg[200];
			if (!killed[w])
				continue;
			/* The point that was running: failed, unless its file made it before the signal. */
			if (point_read(dir, sw->hash[p], row) == P_MISSING) {
				snprintf(msg, sizeof msg, "sweep: the worker running this point was killed by signal %d (%s)\n",
					 killed[w], strsignal(killed[w]));
				sweep_hash_text(sw->hash[p], stem);
				snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
				if (fsx_write_atomic(path, msg, strlen(msg)) < 0) {
					dead++;
					break;
				}
				pr.failed++;
				pr.point_failed = true;
			} else {
				pr.point_failed = false;
			}
			done[p] = true;
			pr.done++;
			pr.point = (long)p;
			sweep_hash_text(sw->hash[p], stem);
			pr.hash = stem;
			pr.elapsed = since(&t0);
			if (progress)
				progress(ctx, &pr);
			again = pr.done < pr.total;
		}
		if (dead)
			break;
	}
	free(row);
	free(done);
	pr.finished = true;
	pr.point = -1;
	pr.elapsed = since(&t0);
	if (progress && !dead && e->kind == ERR_NONE)
		progress(ctx, &pr);
	if (e->kind != ERR_NONE)
		return -1;
	if (dead)
		return err_sim(e, "sweep: expected every worker to finish, found %d that did not (a point file that cannot "
			       "be written?)", dead);
	return 0;
}

int sweep_run(const struct sweep *sw, const char *dir, int jobs,
	      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, struct err *e)
{
	size_t missing = 0;
	unsigned char *st;
	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	if (run_points(sw, dir, jobs, progress, ctx, e) < 0)
		return -1;
	if (!(st = malloc(sw->npoints)))
		return err_nomem(e, NULL);
	int rc = write_csv(sw, dir, st, e);
	for (size_t p = 0; p < sw->npoints; p++)
		missing += st[p] == P_MISSING;
	free(st);
	if (rc == 0 && missing)
		return err_sim(e, "sweep: expected every point to have a result, found %zu without one", missing);
	return rc;
}

int sweep_run_points(const struct sweep *sw, const char *dir, int jobs,
		     void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, struct err *e)
{
	return run_points(sw, dir, jobs, progress, ctx, e);
}

/* ---- clusters ---- */

/* s as one shell word: in single quotes, each ' written '\''. */
static void sh_word(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* s in a command shown to the user: bare when the shell takes it as it is. */
static void sh_shown(FILE *f, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=+@%";
	if (*s && strspn(s, plain) == strlen(s))
		fputs(s, f);
	else
		sh_word(f, s);
}

/* dir + "/" + name, shown (see sh_shown). */
static void sh_shown_in(FILE *f, const char *dir, const char *name)
{
	char p[LIMIT_PATH_BUF];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	sh_shown(f, p);
}

/* A job's command up to its range of points: '<exe>' sweep '<dir>/sweep.yaml' -o '<dir>' --points */
static void job_command(FILE *f, const char *exe, const char *absdir, bool no_reuse)
{
	char spec[LIMIT_PATH_BUF];
	snprintf(spec, sizeof spec, "%s/sweep.yaml", absdir);
	sh_word(f, exe);
	fputs(" sweep ", f);
	sh_word(f, spec);
	fputs(" -o ", f);
	sh_word(f, absdir);
	fputs(no_reuse ? " --no-reuse --points " : " --points ", f);
}

/* A text built in memory: the stream, then its buffer (owned) once closed. */
struct mtext {
	FILE *f;
	char *text;
	size_t len;
};

static int mtext_close(struct mtext *m, struct err *e)
{
	if (ferror(m->f) | (fclose(m->f) != 0)) {
		free(m->text);
		m->text = NULL;
		return err_nomem(e, NULL);
	}
	return 0;
}

/* Whether Slurm can take dir in #SBATCH --output: the lines are split at blanks, and % starts a pattern. */
static int slurm_path_check(const char *dir, struct err *e)
{
	char q[LIMIT_QUOTE_BUF];
	for (const char *c = dir; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || strchr("%\\\"'", *c))
			return err_input(e, "-o: expected a directory Slurm can log under (no blanks, quotes, %% or \\ in its "
					 "absolute path), found \"%s\"", err_quote(q, sizeof q, dir, LIMIT_PATH));
	return 0;
}

int sweep_emit(const struct sweep *sw, const char *dir, enum sweep_engine engine, size_t chunk, char **howto,
	       struct err *e)
{
	char absdir[LIMIT_PATH_BUF], exe[LIMIT_PATH_BUF], cwd[LIMIT_PATH_BUF], path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	struct mtext job = { 0 }, how = { 0 };
	ssize_t n;
	size_t nchunks, last = sw->npoints - 1;

	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	*howto = NULL;
	if (!chunk) {
		chunk = SWEEP_CHUNK_DEFAULT;
		if ((sw->npoints + chunk - 1) / chunk > SWEEP_MAX_CHUNKS)
			chunk = (sw->npoints + SWEEP_MAX_CHUNKS - 1) / SWEEP_MAX_CHUNKS;
	}
	nchunks = (sw->npoints + chunk - 1) / chunk;
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0 || (size_t)n >= sizeof exe - 1)
		return err_sim(e, "sweep: expected the path of this program in /proc/self/exe, found %s",
			       n < 0 ? strerror(errno) : "none");
	exe[n] = 0;
	if (sw->base)
		snprintf(cwd, sizeof cwd, "%s", sw->base);
	else if (!getcwd(cwd, sizeof cwd))
		return err_sim(e, "sweep: expected the working directory, found %s", strerror(errno));
	/* Before anything is created, as DIR will be seen from the working directory; then as it is. */
	snprintf(absdir, sizeof absdir, "%s%s%s", dir[0] == '/' ? "" : cwd, dir[0] == '/' ? "" : "/", dir);
	if (engine == SWEEP_SLURM && slurm_path_check(absdir, e) < 0)
		return -1;
	if (dir_prepare(sw, dir, e) < 0)
		return -1;
	if (!realpath(dir, absdir) || strlen(absdir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a directory with an absolute path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found \"%s\" "
				 "(%s)", err_quote(q, sizeof q, dir, LIMIT_PATH), strerror(errno ? errno : ENAMETOOLONG));
	if (engine == SWEEP_SLURM) {
		snprintf(path, sizeof path, "%s/logs", absdir);
		if (slurm_path_check(absdir, e) < 0 || make_dir(path, e) < 0)
			return -1;
	}
	if (!(job.f = open_memstream(&job.text, &job.len)))
		return err_nomem(e, NULL);
	if (engine == SWEEP_SLURM) {
		fprintf(job.f, "#!/bin/sh\n"
			"# A tpusim sweep as a Slurm job array: %zu points in %zu chunks of up to %zu; array task K runs\n"
			"# points K*%zu to K*%zu+%zu (at most %zu), numbered from 0 as the rows of sweep.csv. Submit with\n"
			"# sbatch; when every task is done, tpusim sweep --merge builds sweep.csv and lists what is missing.\n"
			"#SBATCH --job-name=tpusim-sweep\n#SBATCH --array=0-%zu\n#SBATCH --ntasks=1\n"
			"#SBATCH --cpus-per-task=1\n#SBATCH --output=%s/logs/%%A_%%a.out\n"
			": \"${SLURM_ARRAY_TASK_ID:?expected a task of the job array: submit this with sbatch}\"\n"
			"first=$((SLURM_ARRAY_TASK_ID * %zu))\nlast=$((first + %zu))\n"
			"if [ \"$last\" -gt %zu ]; then last=%zu; fi\ncd ", sw->npoints, nchunks, chunk, chunk, chunk,
			chunk - 1, last, nchunks - 1, absdir, chunk, chunk - 1, last, last);
		sh_word(job.f, cwd);
		fputs(" || exit 1\nexec ", job.f);
		job_command(job.f, exe, absdir, sw->no_reuse);
		fputs("\"$first-$last\"\n", job.f);
	} else {
		for (size_t c = 0; c < nchunks; c++) {
			fputs("cd ", job.f);
			sh_word(job.f, cwd);
			fputs(" && ", job.f);
			job_command(job.f, exe, absdir, sw->no_reuse);
			fprintf(job.f, "%zu-%zu\n", c * chunk, c * chunk + chunk - 1 < last ? c * chunk + chunk - 1 : last);
		}
	}
	if (mtext_close(&job, e) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s", dir, engine == SWEEP_SLURM ? "sweep.sbatch" : "jobs.txt");
	int rc = fsx_write_atomic(path, job.text, job.len);
	free(job.text);
	if (rc < 0 || (engine == SWEEP_SLURM && chmod(path, 0755) < 0))
		return fsx_write_error(e, "-o", path, errno);

	if (!(how.f = open_memstream(&how.text, &how.len)))
		return err_nomem(e, NULL);
	fputs("wrote ", how.f);
	if (engine == SWEEP_SLURM) {
		sh_shown_in(how.f, dir, "sweep.sbatch");
		fprintf(how.f, ": %zu points in %zu array tasks of up to %zu points, logs in ", sw->npoints, nchunks, chunk);
		sh_shown_in(how.f, dir, "logs/");
		fputs("\nsubmit it:\n  sbatch ", how.f);
		sh_shown_in(how.f, dir, "sweep.sbatch");
		if (nchunks > SWEEP_SLURM_MAX_ARRAY)
			fprintf(how.f, "\n(%zu tasks: Slurm refuses arrays larger than its MaxArraySize, 1001 by default; a larger "
				"--chunk-size makes fewer)", nchunks);
		fputs("\nwhen its tasks are done, build ", how.f);
	} else {
		sh_shown_in(how.f, dir, "jobs.txt");
		fprintf(how.f, ": %zu points in %zu jobs of up to %zu points\n"
			"run them here, %ld at a time (the same command again resumes after a stop):\n"
			"  parallel --joblog ", sw->npoints, nchunks, chunk, sysconf(_SC_NPROCESSORS_ONLN));
		sh_shown_in(how.f, dir, "joblog");
		fprintf(how.f, " --resume -j %ld < ", sysconf(_SC_NPROCESSORS_ONLN));
		sh_shown_in(how.f, dir, "jobs.txt");
		fputs("\nor on many hosts, one ssh login a line in hosts.txt (each seeing this directory, the working\n"
		      "directory and tpusim at the same paths):\n  parallel --joblog ", how.f);
		sh_shown_in(how.f, dir, "joblog");
		fputs(" --resume --sshloginfile hosts.txt < ", how.f);
		sh_shown_in(how.f, dir, "jobs.txt");
		fputs("\nthen build ", how.f);
	}
	sh_shown_in(how.f, dir, "sweep.csv");
	fputs(" from the point files, listing any missing:\n  ", how.f);
	sh_shown(how.f, exe);
	fputs(" sweep --merge ", how.f);
	sh_shown(how.f, dir);
	fputc('\n', how.f);
	if (mtext_close(&how, e) < 0)
		return -1;
	*howto = how.text;
	return 0;
}

int sweep_open(struct sweep *sw, const char *dir, struct err *e)
{
	char path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], *cwd;
	size_t len;
	struct pos whole;
	memset(sw, 0, sizeof *sw);
	if (strlen(dir) > LIMIT_OUT_PATH)
		return err_input(e, "--merge: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(dir));
	static const char *const names[] = { "sweep.cwd", "sweep.yaml" };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (access(path, R_OK) != 0)
			return err_input(e, "--merge: expected a directory with a sweep's record (sweep.yaml and sweep.cwd, "
					 "written by tpusim sweep -o DIR), found no \"%s\" (%s)",
					 err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
	}
	snprintf(path, sizeof path, "%s/sweep.cwd", dir);
	whole = (struct pos){ path, 0, 0 };
	if (!(cwd = slurp(path, &len, whole, NULL, e)))
		return -1;
	if (len && cwd[len - 1] == '\n')
		cwd[--len] = 0;
	if (cwd[0] != '/' || strlen(cwd) != len) {
		err_at(e, whole, NULL, "expected an absolute directory, found \"%s\"", err_quote(q, sizeof q, cwd, LIMIT_PATH));
		free(cwd);
		return -1;
	}
	snprintf(path, sizeof path, "%s/sweep.yaml", dir);
	int rc = load(sw, path, cwd, SIZE_MAX, SIZE_MAX, e);
	if (rc == 0)
		sw->base = cwd;
	else
		free(cwd);
	return rc;
}

int sweep_merge(const struct sweep *sw, const char *dir, char **report, size_t *missing, struct err *e)
{
	struct mtext r = { 0 };
	size_t nst[3] = { 0 }, listed = 0;
	unsigned char *st;
	char q[LIMIT_QUOTE_BUF];

	SIM_ASSERT(sw->first == 0 && sw->last + 1 == sw->npoints);
	*report = NULL;
	*missing = 0;
	if (!(st = malloc(sw->npoints)))
		return err_nomem(e, NULL);
	if (write_csv(sw, dir, st, e) < 0 || !(r.f = open_memstream(&r.text, &r.len))) {
		free(st);
		return e->kind != ERR_NONE ? -1 : err_nomem(e, NULL);
	}
	for (size_t p = 0; p < sw->npoints; p++)
		nst[st[p]]++;
	fprintf(r.f, "wrote %s/sweep.csv: %zu points, %zu ok, %zu failed, %zu missing\n", err_quote(q, sizeof q, dir, LIMIT_PATH),
		sw->npoints, nst[P_OK], nst[P_FAILED], nst[P_MISSING]);
	if (nst[P_MISSING])
		fputs("missing (index from 0, as the rows of sweep.csv: workload and axes, point file):\n", r.f);
	for (size_t p = 0; p < sw->npoints && listed < SWEEP_MERGE_LIST; p++) {
		size_t vidx[SWEEP_MAX_AXES];
		char stem[17];
		int widx;
		if (st[p] != P_MISSING)
			continue;
		listed++;
		sweep_point(sw, p, &widx, vidx);
		sweep_hash_text(sw->hash[p], stem);
		fprintf(r.f, "  %zu: workload=%s", p, err_quote(q, sizeof q, sw->workloads[widx], 200));
		for (int i = 0; i < sw->naxes; i++) {
			fprintf(r.f, " %s=", err_quote(q, sizeof q, sw->axes[i].name, 200));
			fputs(err_quote(q, sizeof q, sw->axes[i].values[vidx[i]], 200), r.f);
		}
		fprintf(r.f, " (%s)\n", stem);
	}
	if (nst[P_MISSING] > listed)
		fprintf(r.f, "  ... and %zu more\n", nst[P_MISSING] - listed);
	free(st);
	if (mtext_close(&r, e) < 0)
		return -1;
	*report = r.text;
	*missing = nst[P_MISSING];
	return 0;
}
