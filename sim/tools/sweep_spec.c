/*
 * sweep_spec.c - a sweep's spec (see sweep.h): reading and checking
 * SPEC.yaml, its axes, ranges and zip groups, the points they expand to and
 * each point's request and name; loading the points; the record (the spec's
 * copy and working directory in DIR) written before a run or an emit and
 * read back by a merge.
 */
#include "sweep_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "cfg.h"
#include "config.h"
#include "fsx.h"
#include "options.h"
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
char *sweep_slurp(const char *path, size_t *len, struct pos at, const char *key, struct err *e)
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

/*
 * The run option dataflow replaces the config's array.dataflow (api.c): as
 * two axes of one spec the config key would change nothing but the points'
 * names.
 */
static int dataflow_once(const struct sweep *sw, const struct ynode *axes, struct err *e)
{
	const struct run_option *df = &run_options[RO_DATAFLOW];
	int ro = find_axis(sw, df->key), key = find_axis(sw, "array.dataflow");
	if (ro < 0 || key < 0)
		return 0;
	return err_at(e, axes->keys[key]->pos, "axes.array.dataflow", "expected %s or array.dataflow as an axis, found both "
		      "(the axis %s replaces array.dataflow, so this one would change nothing; did you mean %s alone?)",
		      df->key, df->key, df->key);
}

/* Whether points i and j of axis a's factor (a alone, or its zip group) hold the same values. */
static bool same_values(const struct sweep *sw, const struct sweep_axis *a, size_t i, size_t j)
{
	for (int k = 0; k < sw->naxes; k++) {
		const struct sweep_axis *b = &sw->axes[k];
		if ((b == a || (a->group >= 0 && b->group == a->group)) && strcmp(b->values[i], b->values[j]))
			return false;
	}
	return true;
}

/*
 * A value given twice in an axis (or a set of values twice in a zip group)
 * would run the same points twice: refused at the second.
 */
static int values_once(const struct sweep *sw, struct err *e)
{
	for (int k = 0; k < sw->naxes; k++) {
		const struct sweep_axis *a = &sw->axes[k];
		char key[320], q[200];
		bool first_of_group = true;
		for (int g = 0; g < k && a->group >= 0; g++)
			first_of_group &= sw->axes[g].group != a->group;
		for (size_t i = 1; first_of_group && i < a->n; i++)
			for (size_t j = 0; j < i; j++) {
				if (!same_values(sw, a, i, j))
					continue;
				snprintf(key, sizeof key, "axes.%s[%zu]", err_quote(q, sizeof q, a->name, 100), i);
				if (a->group >= 0)
					return err_at(e, a->at[i], key, "expected each zipped set of values once, found that of "
						      "[%zu] again", j);
				return err_at(e, a->at[i], key, "expected each value once, found \"%s\" again (first at [%zu])",
					      err_quote(q, sizeof q, a->values[i], 60), j);
			}
	}
	return 0;
}

static int spec_read(struct sweep *sw, const struct ydoc *d, struct err *e)
{
	const struct ynode *r = d->root, *axes = NULL, *zip = NULL;
	bool have_c = false, have_w = false;
	if (!r)
		return err_input(e, "%s: expected a sweep spec (configs, workloads, axes, zip), found %s", d->file,
				 ydoc_nothing(d->file));
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
			static const char *const keys[] = { "configs", "workloads", "axes", "zip" };
			char q[100], hint[100];
			return err_at(e, r->keys[i]->pos, err_quote(q, sizeof q, k, 60),
				      "expected configs, workloads, axes or zip, found an unknown key%s",
				      cfg_did_you_mean(k, keys, sizeof keys / sizeof *keys, false, hint, sizeof hint));
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
	if (axes && dataflow_once(sw, axes, e) < 0)
		return -1;
	if (zip && !axes)
		return err_at(e, zip->pos, "zip", "expected axes to zip, found no axes");
	if ((zip && zip_load(sw, zip, e) < 0) || values_once(sw, e) < 0)
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

/* The request of point p (borrowing sw's strings): the run options at their defaults, then the axes' values. */
int sweep_request(const struct sweep *sw, size_t p, struct sim_request *rq, int *widx, struct err *e)
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

/*
 * Workload item w as the loader is to open it (owned): as -w takes it
 * (workload_find: a file, or a shipped workload's name), with the working
 * directory the record's (base) when there is one. A name that is neither
 * is left as the file under base, which the reader says is not there, at
 * its place in the spec.
 */
static char *workload_item(const struct sweep *sw, const char *base, int w, struct err *e)
{
	char found[LIMIT_PATH_BUF], *p;
	struct err none;
	if (workload_find(base, sw->workloads[w], found, sizeof found, &none) < 0 && !*found) {
		*e = none;
		return NULL;
	}
	if (!(p = strdup(found)))
		err_nomem(e, NULL);
	return p;
}

/*
 * Config item i as the loader is to open it (owned), the same on every route:
 * as -c takes it (config_find), with the working directory the record's
 * (base) when there is one. A file that is not there is said at its place in
 * the spec.
 */
static char *config_item(const struct sweep *sw, const char *base, int i, struct err *e)
{
	char found[LIMIT_PATH_BUF], k[64], q[LIMIT_QUOTE_BUF], *p;
	struct stat st;
	if (config_find_in(base, sw->configs[i], found, sizeof found, e) < 0)
		return NULL;
	if (stat(found, &st) != 0) {
		snprintf(k, sizeof k, "configs[%d]", i);
		err_at(e, item_pos(sw, "configs", i), k, "expected a readable file, found \"%s\" (%s)",
		       err_quote(q, sizeof q, found, LIMIT_PATH), strerror(errno));
		return NULL;
	}
	if (!(p = strdup(found)))
		err_nomem(e, NULL);
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
	    !(sw->text = sweep_slurp(path, &sw->text_len, whole, NULL, e)))
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
	for (int i = 0; i < sw->nconfigs; i++)
		if (!(sw->cpath[i] = config_item(sw, base, i, e)))
			goto fail;
	for (int w = 0; w < sw->nworkloads; w++) {
		char k[64];
		snprintf(k, sizeof k, "workloads[%d]", w);
		if (!(sw->wpath[w] = workload_item(sw, base, w, e)) ||
		    !(sw->wtext[w] = sweep_slurp(sw->wpath[w], &sw->wlen[w], item_pos(sw, "workloads", w), k, e)))
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
		if (sweep_request(sw, p, rq, &widx, e) < 0 || sim_load(s, rq, "sweep", e) < 0)
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

int sweep_make_dir(const char *path, struct err *e)
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

int sweep_work_dir(const struct sweep *sw, char *buf, size_t size, struct err *e)
{
	if (sw->base)
		snprintf(buf, size, "%s", sw->base);
	else if (!getcwd(buf, size))
		return err_sim(e, "sweep: expected the working directory, found %s", strerror(errno));
	return 0;
}

int sweep_lock(const char *dir, enum sweep_use use, const char *opt, struct err *e)
{
	char path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], q2[LIMIT_QUOTE_BUF];
	snprintf(path, sizeof path, "%s/" SWEEP_LOCK, dir);
	/*
	 * The lock is the file at path when it was locked: a refused sweep that
	 * made it removes it again (sweep_dir_prepare), so a lock taken on a file
	 * removed since guards nothing, and is taken again on the one there now.
	 */
	for (;;) {
		struct stat held, there;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
		if (fd < 0)
			return err_input(e, "%s: expected a directory that can be created and written, found \"%s\" (%s)",
					 opt, err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
		/* A file system without locks (some NFS mounts: ENOLCK) guards nothing, and stops nothing either. */
		if (flock(fd, (use == SWEEP_ALONE ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
			close(fd);
			break;
		}
		if (fstat(fd, &held) == 0 && stat(path, &there) == 0 && held.st_dev == there.st_dev &&
		    held.st_ino == there.st_ino)
			return fd;
		close(fd);
	}
	return err_input(e, "%s: expected a directory no other tpusim sweep is using, found \"%s\" in use (%s is locked: "
			 "wait for that sweep, or use another -o)", opt, err_quote(q, sizeof q, dir, LIMIT_PATH),
			 err_quote(q2, sizeof q2, path, LIMIT_PATH));
}

/*
 * The record (see sweep.h) in dir: written when there is none; one that
 * is there must be this spec's, byte for byte, from this working directory,
 * so that another sweep's csv and points are never mixed with these.
 */
static int record_put(const struct sweep *sw, const char *dir, struct err *e)
{
	char path[LIMIT_PATH_BUF], cwd[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF], q2[LIMIT_QUOTE_BUF], *text = NULL, *was = NULL;
	size_t len = 0, wlen = 0;
	if (sweep_work_dir(sw, cwd, sizeof cwd - 1, e) < 0)
		return -1;
	strcat(cwd, "\n");
	snprintf(path, sizeof path, "%s/sweep.yaml", dir);
	if (fsx_read(path, YDOC_MAX_BYTES, &text, &len) == 0) {
		snprintf(path, sizeof path, "%s/sweep.cwd", dir);
		bool same = len == sw->text_len && !memcmp(text, sw->text, len), here = false;
		if (fsx_read(path, LIMIT_PATH_BUF, &was, &wlen) == 0)
			here = !strcmp(was, cwd);
		free(text);
		free(was);
		snprintf(path, sizeof path, "%s/sweep.yaml", dir);
		if (same && here)
			return 0;
		if (!same)
			return err_input(e, "-o: expected a new directory or one holding this spec's sweep, found \"%s\", the "
					 "record of another spec than \"%s\" (use another -o, or remove that sweep)",
					 err_quote(q, sizeof q, path, LIMIT_PATH), err_quote(q2, sizeof q2, sw->doc->file, LIMIT_PATH));
		return err_input(e, "-o: expected a new directory or one holding this spec's sweep, found \"%s\", the "
				 "record of \"%s\" run from another working directory (use another -o, or remove that sweep)",
				 err_quote(q, sizeof q, path, LIMIT_PATH), err_quote(q2, sizeof q2, sw->doc->file, LIMIT_PATH));
	}
	if (errno != ENOENT)
		return err_input(e, "-o: expected a sweep's record or none, found \"%s\" (%s)",
				 err_quote(q, sizeof q, path, LIMIT_PATH), strerror(errno));
	/*
	 * The working directory first, the spec last: the record is whole once
	 * sweep.yaml is there, so a sweep killed between the two writes leaves
	 * none, and its rerun writes both (not a spec without its directory, which
	 * would read as another's).
	 */
	snprintf(path, sizeof path, "%s/sweep.cwd", dir);
	if (fsx_write_own(path, cwd, strlen(cwd)) == 0) {
		snprintf(path, sizeof path, "%s/sweep.yaml", dir);
		if (fsx_write_own(path, sw->text, sw->text_len) == 0)
			return 0;
	}
	return fsx_write_error(e, "-o", path, errno);
}

/* A sweep.csv in dir without a sweep's record (sweep.yaml) is no sweep's: refused, never replaced. */
static int foreign_csv(const char *dir, struct err *e)
{
	char path[LIMIT_PATH_BUF], q[LIMIT_QUOTE_BUF];
	struct stat st;
	snprintf(path, sizeof path, "%s/sweep.yaml", dir);
	if (lstat(path, &st) == 0)
		return 0;
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	if (lstat(path, &st) != 0)
		return 0;
	return err_input(e, "-o: expected no file of another at \"%s\" (a sweep writes its table there), found one in a "
			 "directory with no sweep record", err_quote(q, sizeof q, path, LIMIT_PATH));
}

int sweep_dir_prepare(const struct sweep *sw, const char *dir, enum sweep_use use, struct err *e)
{
	char pdir[LIMIT_PATH_BUF], lock[LIMIT_PATH_BUF];
	struct stat st;
	bool had_lock;
	int fd;
	if (strlen(dir) > LIMIT_OUT_PATH)
		return err_input(e, "-o: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(dir));
	snprintf(pdir, sizeof pdir, "%s/points", dir);
	snprintf(lock, sizeof lock, "%s/" SWEEP_LOCK, dir);
	if (sweep_make_dir(dir, e) < 0)
		return -1;
	had_lock = lstat(lock, &st) == 0;
	if ((fd = sweep_lock(dir, use, "-o", e)) < 0)
		return -1;
	if (foreign_csv(dir, e) < 0 || sweep_make_dir(pdir, e) < 0 || record_put(sw, dir, e) < 0) {
		/*
		 * A sweep refused here leaves no lock file of its own: removed while
		 * it holds it alone (one that locks it after sees it removed and
		 * takes the new one, sweep_lock).
		 */
		if (!had_lock && flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(lock);
		close(fd);
		return -1;
	}
	fsx_clean_tmp(dir);
	fsx_clean_tmp(pdir);
	return fd;
}

/* Runs the loaded points not done yet (see sweep_run). */
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
	if (!(cwd = sweep_slurp(path, &len, whole, NULL, e)))
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

