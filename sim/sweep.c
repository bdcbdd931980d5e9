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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cfg.h"
#include "config.h"
#include "tpusim.h"
#include "ydoc.h"

static int expected(struct err *e, const struct ynode *n, const char *key, const char *what)
{
	char buf[300];
	return err_at(e, n->pos, key, "expected %s, found %s", what, ynode_describe(n, buf, sizeof buf));
}

/* The whole file at path (owned), its length in *len, or NULL with e set at `at`. */
static char *slurp(const char *path, size_t *len, struct pos at, const char *key, struct err *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, q[4200];
	size_t cap = 0, n = 0;
	if (!f) {
		err_at(e, at, key, "expected a readable file, found \"%s\" (%s)", err_quote(q, sizeof q, path, 4096),
		       strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = 2 * cap + 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				err_nomem(e, path);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
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
	if (!strcmp(name, "dataflow"))
		a->kind = SWEEP_DATAFLOW;
	else if (!strcmp(name, "model"))
		a->kind = SWEEP_MODEL;
	else if (!strcmp(name, "batch"))
		a->kind = SWEEP_BATCH;
	else if (cfg_find(config_schema(), name) >= 0)
		a->kind = SWEEP_CONFIG;
	else {
		const char *hint = cfg_suggest(config_schema(), name);
		if (hint)
			return err_at(e, key->pos, path, "expected a config key, dataflow, model or batch, found an unknown "
				      "key (did you mean %s?)", hint);
		return err_at(e, key->pos, path, "expected a config key, dataflow, model or batch, found an unknown key");
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

static const char *const model_names[] = { "cycle", "analytic", NULL };

/* The request of point p (borrowing sw's strings). */
static int point_request(const struct sweep *sw, size_t p, struct sim_request *rq, int *widx, struct err *e)
{
	size_t vidx[SWEEP_MAX_AXES];
	sweep_point(sw, p, widx, vidx);
	memset(rq, 0, sizeof *rq);
	for (int i = 0; i < sw->nconfigs; i++)
		rq->configs[i] = sw->configs[i];
	rq->nconfigs = sw->nconfigs;
	rq->workload = sw->workloads[*widx];
	rq->model = MODEL_CYCLE;
	rq->dataflow = -1;
	rq->seed = RUN_DEFAULT_SEED;
	for (int i = 0; i < sw->naxes; i++) {
		const struct sweep_axis *a = &sw->axes[i];
		const char *v = a->values[vidx[i]];
		struct pos at = a->at[vidx[i]];
		char k[300], q[100];
		snprintf(k, sizeof k, "axes.%s", a->name);
		if (a->kind == SWEEP_CONFIG) {
			struct sim_override *o = &rq->overrides[rq->noverrides++];
			o->key = a->name;
			o->value = v;
			o->quoted = a->quoted[vidx[i]];
			o->at = at;
		} else if (a->kind == SWEEP_DATAFLOW) {
			rq->dataflow = -1;
			for (int d = 0; array_dataflow_names[d]; d++)
				if (!strcmp(v, array_dataflow_names[d]))
					rq->dataflow = d;
			if (rq->dataflow < 0)
				return err_at(e, at, k, "expected ws, os or is, found \"%s\"", err_quote(q, sizeof q, v, 60));
		} else if (a->kind == SWEEP_MODEL) {
			rq->model = -1;
			for (int d = 0; model_names[d]; d++)
				if (!strcmp(v, model_names[d]))
					rq->model = d == 0 ? MODEL_CYCLE : MODEL_ANALYTIC;
			if (rq->model < 0)
				return err_at(e, at, k, "expected cycle or analytic, found \"%s\"", err_quote(q, sizeof q, v, 60));
		} else {
			char *end;
			errno = 0;
			long long b = strtoll(v, &end, 10);
			if (a->quoted[vidx[i]] || !(*v >= '0' && *v <= '9') || *end || errno || b < 1 || b > (1 << 20))
				return err_at(e, at, k, "expected an integer in [1, 1048576], found \"%s\"",
					      err_quote(q, sizeof q, v, 60));
			rq->batch = b;
		}
	}
	return 0;
}

static void fnv(uint64_t *h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		*h ^= p[i];
		*h *= 0x100000001b3ULL;
	}
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
	*h = 0xcbf29ce484222325ULL;
	snprintf(line, sizeof line, "tpusim %s\n", TPUSIM_VERSION);
	fnv(h, line, strlen(line) + 1);
	fnv(h, text, len + 1);
	fnv(h, sw->wtext[widx], sw->wlen[widx]);
	snprintf(line, sizeof line, "\nmodel %s dataflow %s batch %lld\n", run_model_names[rq->model],
		 array_dataflow_names[s->opts.dataflow], (long long)rq->batch);
	fnv(h, line, strlen(line) + 1);
	free(text);
	return 0;
}

int sweep_load(struct sweep *sw, const char *path, struct err *e)
{
	struct sim_request *rq = NULL;
	struct sim *s = NULL;
	memset(sw, 0, sizeof *sw);
	if (!(sw->doc = ydoc_load(path, e)) || spec_read(sw, sw->doc, e) < 0)
		goto fail;
	for (int w = 0; w < sw->nworkloads; w++) {
		char k[64];
		snprintf(k, sizeof k, "workloads[%d]", w);
		if (!(sw->wtext[w] = slurp(sw->workloads[w], &sw->wlen[w], sw->doc->root->pos, k, e)))
			goto fail;
	}
	rq = malloc(sizeof *rq);
	s = calloc(1, sizeof *s);
	sw->hash = calloc(sw->npoints ? sw->npoints : 1, sizeof *sw->hash);
	if (!rq || !s || !sw->hash) {
		err_nomem(e, NULL);
		goto fail;
	}
	for (size_t p = 0; p < sw->npoints; p++) {
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
	for (int w = 0; w < sw->nworkloads; w++)
		free(sw->wtext[w]);
	free(sw->hash);
	ydoc_free(sw->doc);
	memset(sw, 0, sizeof *sw);
}

/* ---- running ---- */

/*
 * Writes text to path through a temporary file in the same directory, named
 * ".<name>.tmp.<pid>", and a rename.
 */
static int write_atomic(const char *path, const char *text, size_t len)
{
	char tmp[4400];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int fd;
	snprintf(tmp, sizeof tmp, "%.*s.%s.tmp.%ld", (int)(name - path), path, name, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -1;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

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
	char path[4300], stem[17], *text;
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

/* Runs point p and writes its file; returns P_OK or P_FAILED, or -1 when the file cannot be written. */
static int point_run(const struct sweep *sw, size_t p, const char *dir)
{
	struct sim_request rq;
	struct sim *s = calloc(1, sizeof *s);
	struct err e = { 0 };
	char path[4300], stem[17], *text = NULL;
	int widx, rc;
	sweep_hash_text(sw->hash[p], stem);
	if (!s)
		err_nomem(&e, NULL);
	else if (point_request(sw, p, &rq, &widx, &e) == 0 && sim_load(s, &rq, "sweep", &e) == 0) {
		if (sim_run(s, &e) == 0 && !(text = sim_summary_json(s)))
			err_nomem(&e, NULL);
		sim_release(s);
	}
	free(s);
	if (text) {
		snprintf(path, sizeof path, "%s/points/%s.json", dir, stem);
		rc = write_atomic(path, text, strlen(text)) < 0 ? -1 : P_OK;
		free(text);
		return rc;
	}
	for (char *c = e.msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	size_t n = strlen(e.msg);
	e.msg[n < ERR_MSG_MAX - 1 ? n : ERR_MSG_MAX - 2] = '\n';
	snprintf(path, sizeof path, "%s/points/%s.err", dir, stem);
	return write_atomic(path, e.msg, strlen(e.msg)) < 0 ? -1 : P_FAILED;
}

struct done_msg {
	uint32_t point;
	uint32_t failed;
};

/* A worker: points i with i % jobs == w that are not done; each finished point reported on fd. */
static void worker(const struct sweep *sw, const char *dir, int jobs, int w, const bool *done, int fd, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	for (size_t p = (size_t)w; p < sw->npoints; p += (size_t)jobs) {
		if (done[p])
			continue;
		int rc = point_run(sw, p, dir);
		if (rc < 0)
			_exit(1);
		struct done_msg m = { (uint32_t)p, rc == P_FAILED };
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

/* One CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

static int write_csv(const struct sweep *sw, const char *dir, struct err *e)
{
	char *text = NULL, path[4300], q[4200];
	size_t len = 0, missing = 0;
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
			missing += st == P_MISSING;
		}
	}
	free(row);
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return err_nomem(e, NULL);
	}
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	int rc = write_atomic(path, text, len);
	free(text);
	if (rc < 0)
		return err_sim(e, "-o: expected to write \"%s\", found %s", err_quote(q, sizeof q, path, 4096), strerror(errno));
	if (missing)
		return err_sim(e, "sweep: expected every point to have a result, found %zu without one", missing);
	return 0;
}

static int make_dir(const char *path, struct err *e)
{
	char q[4200];
	errno = 0;
	if (mkdir(path, 0755) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK) == 0)
			return 0;
	}
	return err_input(e, "-o: expected a directory that can be created and written, found \"%s\" (%s)",
			 err_quote(q, sizeof q, path, 4096), strerror(errno ? errno : ENOTDIR));
}

/* Removes the temporary files of writers no longer running (a sweep killed mid-write) from dir. */
static void clean_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *t = strstr(de->d_name, ".tmp.");
		char *end, path[4400];
		long pid;
		if (de->d_name[0] != '.' || !t)
			continue;
		pid = strtol(t + 5, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

int sweep_run(const struct sweep *sw, const char *dir, int jobs,
	      void (*progress)(void *ctx, const struct sweep_progress *p), void *ctx, struct err *e)
{
	char pdir[4300], stem[17];
	struct timespec t0;
	struct sweep_progress pr = { 0 };
	struct point_row *row;
	bool *done;
	pid_t pids[SWEEP_MAX_JOBS], self = getpid();
	int fds[2], nw = 0, dead = 0;

	SIM_ASSERT(jobs >= 1 && jobs <= SWEEP_MAX_JOBS);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (strlen(dir) > 4000)
		return err_input(e, "-o: expected a path of at most 4000 bytes, found %zu", strlen(dir));
	snprintf(pdir, sizeof pdir, "%s/points", dir);
	if (make_dir(dir, e) < 0 || make_dir(pdir, e) < 0)
		return -1;
	clean_tmp(dir);
	clean_tmp(pdir);
	done = calloc(sw->npoints ? sw->npoints : 1, sizeof *done);
	row = malloc(sizeof *row);
	if (!done || !row) {
		free(done);
		free(row);
		return err_nomem(e, NULL);
	}
	pr.total = sw->npoints;
	pr.point = -1;
	for (size_t p = 0; p < sw->npoints; p++) {
		int st = point_read(dir, sw->hash[p], row);
		done[p] = st != P_MISSING;
		pr.resumed += done[p];
		pr.failed += st == P_FAILED;
	}
	free(row);
	pr.done = pr.resumed;
	if (progress)
		progress(ctx, &pr);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(done);
		return err_sim(e, "sweep: expected a pipe to the workers, found %s", strerror(errno));
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
		pids[nw++] = pid;
	}
	close(fds[1]);
	for (;;) {
		struct done_msg m;
		ssize_t r = read(fds[0], &m, sizeof m);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof m)
			break;
		pr.done++;
		pr.failed += m.failed != 0;
		pr.point = (long)m.point;
		pr.point_failed = m.failed != 0;
		sweep_hash_text(sw->hash[m.point], stem);
		pr.hash = stem;
		pr.elapsed = since(&t0);
		if (progress)
			progress(ctx, &pr);
	}
	close(fds[0]);
	for (int w = 0; w < nw; w++) {
		int status;
		while (waitpid(pids[w], &status, 0) < 0 && errno == EINTR)
			;
		dead += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	free(done);
	if (e->kind != ERR_NONE)
		return -1;
	if (dead)
		return err_sim(e, "sweep: expected every worker to finish, found %d that did not (a point file that cannot "
			       "be written?)", dead);
	return write_csv(sw, dir, e);
}
