/*
 * api.c - requests, the shared run path and the library's entry points
 * (see api.h and tpusim.h).
 */
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "tpusim.h"
#include "ydoc.h"

/* What positions in a request are called: "request:1:12: model: ...". */
static const char request_name[] = "request";

/*
 * Whether path (opt names the option) can be written, before the run: a file
 * made for the check is removed again; a file already there is opened
 * without being changed.
 */
static int check_writable(const char *path, const char *opt, struct err *e)
{
	char q[4200];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (errno == EEXIST && (fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
		close(fd);
		return 0;
	}
	return err_input(e, "%s: expected a writable path, found \"%s\" (%s)", opt, err_quote(q, sizeof q, path, 4096),
			 strerror(errno));
}

/*
 * Whether model draws a trace (the analytic model has no cycles to draw) and
 * the trace base + ".vcd" can be written, checked before the run (the engine
 * opens it only when the cycle model starts). A file made for the check is
 * removed again; a file already there is opened without being changed.
 */
static int check_vcd(const char *base, int model, struct err *e)
{
	char path[4200];
	if (model == MODEL_ANALYTIC)
		return err_input(e, "--vcd: expected --model cycle or functional (the analytic model has no cycles to trace), "
				 "found --model analytic");
	if (!*base)
		return err_input(e, "--vcd: expected a path, found \"\"");
	if (strlen(base) > 4000)
		return err_input(e, "--vcd: expected a path of at most 4000 bytes, found %zu", strlen(base));
	snprintf(path, sizeof path, "%s.vcd", base);
	return check_writable(path, "--vcd", e);
}

/* Whether the model has events to trace (the cycle model only) and the event or DRAM trace's path (opt) can be written. */
static int check_trace(const char *path, const char *opt, int model, struct err *e)
{
	if (model != MODEL_CYCLE)
		return err_input(e, "%s: expected --model cycle (only the cycle engine has events to trace), found --model %s",
				 opt, run_model_names[model]);
	if (!*path)
		return err_input(e, "%s: expected a path, found \"\"", opt);
	return check_writable(path, opt, e);
}

int sim_load(struct sim *s, const struct sim_request *rq, const char *cmd, struct err *e)
{
	memset(s, 0, sizeof *s);
	if (!rq->nconfigs)
		return err_input(e, "%s: expected -c CONFIG, found none", cmd);
	if (!rq->workload)
		return err_input(e, "%s: expected -w WORKLOAD, found none", cmd);
	config_init(&s->cfg);
	for (int i = 0; i < rq->nconfigs; i++)
		if (config_merge(&s->cfg, rq->configs[i], e) < 0)
			return -1;
	for (int i = 0; i < rq->nassignments; i++)
		if (config_set(&s->cfg, rq->assignments[i], e) < 0)
			return -1;
	for (int i = 0; i < rq->noverrides; i++) {
		const struct sim_override *o = &rq->overrides[i];
		if (config_set_key(&s->cfg, o->key, o->value, o->quoted, o->at, e) < 0)
			return -1;
	}
	if (workload_load(&s->w, rq->workload, rq->batch, e) < 0)
		return -1;
	if (lower_workload(&s->w, &s->ops, e) < 0 || (rq->vcd && check_vcd(rq->vcd, rq->model, e) < 0) ||
	    (rq->trace && check_trace(rq->trace, "--trace", rq->model, e) < 0) ||
	    (rq->dram_trace && check_trace(rq->dram_trace, "--dram-trace", rq->model, e) < 0)) {
		oplist_release(&s->ops);
		workload_release(&s->w);
		return -1;
	}
	s->opts = (struct run_opts){ .dataflow = rq->dataflow >= 0 ? rq->dataflow : s->cfg.arch.array.dataflow,
				     .model = rq->model, .ideal_memory = rq->ideal_memory || rq->model == MODEL_FUNCTIONAL,
				     .vcd = rq->vcd, .trace = rq->trace, .dram_trace = rq->dram_trace,
				     .dram_format = rq->dram_format, .seed = rq->seed, .keep_outputs = rq->keep_outputs,
				     .no_reuse = rq->no_reuse, .cache = rq->cache };
	return 0;
}

int sim_run(struct sim *s, struct err *e)
{
	return run_workload(&s->cfg, &s->w, &s->ops, &s->opts, &s->run, e);
}

void sim_release(struct sim *s)
{
	run_release(&s->run);
	oplist_release(&s->ops);
	workload_release(&s->w);
}

char *sim_summary_json(const struct sim *s)
{
	struct report_ctx ctx = { &s->cfg, &s->w, &s->run, &s->opts, &s->ops };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	report_json(f, &ctx);
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- the JSON request ---- */

static int expected(struct err *e, const struct ynode *n, const char *key, const char *what)
{
	char buf[300];
	struct pos at = n->pos;
	at.file = request_name;
	return err_at(e, at, key, "expected %s, found %s", what, ynode_describe(n, buf, sizeof buf));
}

/* A string value: a quoted scalar. */
static int req_string(const struct ynode *n, const char *key, const char **out, struct err *e)
{
	if (n->kind != Y_SCALAR || !n->quoted)
		return expected(e, n, key, "a string");
	*out = n->str;
	return 0;
}

/* One of names[]; *out is its index. */
static int req_choice(const struct ynode *n, const char *key, const char *const *names, const char *what, int *out,
		      struct err *e)
{
	if (n->kind == Y_SCALAR)
		for (int i = 0; names[i]; i++)
			if (!strcmp(n->str, names[i])) {
				*out = i;
				return 0;
			}
	return expected(e, n, key, what);
}

static int req_configs(const struct ynode *n, struct sim_request *rq, struct err *e)
{
	if (n->kind != Y_SEQ)
		return expected(e, n, "configs", "a list of config file paths");
	if (n->n > CONFIG_MAX_FILES)
		return expected(e, n, "configs", "at most 8 config files");
	for (size_t i = 0; i < n->n; i++) {
		char key[32];
		snprintf(key, sizeof key, "configs[%zu]", i);
		if (req_string(n->vals[i], key, &rq->configs[rq->nconfigs++], e) < 0)
			return -1;
	}
	return 0;
}

static int req_set(const struct ynode *n, struct sim_request *rq, struct err *e)
{
	if (n->kind != Y_MAP)
		return expected(e, n, "set", "an object of config key to value");
	if (n->n > CONFIG_MAX_SETS)
		return expected(e, n, "set", "at most 256 overrides");
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *v = n->vals[i];
		struct sim_override *o = &rq->overrides[rq->noverrides++];
		if (v->kind != Y_SCALAR) {
			char path[300], key[250];
			snprintf(path, sizeof path, "set.%s", err_quote(key, sizeof key, n->keys[i]->str, 60));
			return expected(e, v, path, "a number, boolean or string");
		}
		o->key = n->keys[i]->str;
		o->value = v->str;
		o->quoted = v->quoted;
		o->at = v->pos;
		o->at.file = request_name;
	}
	return 0;
}

static int req_batch(const struct ynode *n, int64_t *out, struct err *e)
{
	char *end;
	long long b;
	if (n->kind != Y_SCALAR || n->quoted || !(n->str[0] >= '0' && n->str[0] <= '9'))
		return expected(e, n, "batch", "an integer in [1, 1048576]");
	errno = 0;
	b = strtoll(n->str, &end, 10);
	if (*end || errno || b < 1 || b > (1 << 20))
		return expected(e, n, "batch", "an integer in [1, 1048576]");
	*out = b;
	return 0;
}

static int req_seed(const struct ynode *n, uint64_t *out, struct err *e)
{
	char *end;
	unsigned long long v;
	if (n->kind != Y_SCALAR || n->quoted || !(n->str[0] >= '0' && n->str[0] <= '9'))
		return expected(e, n, "seed", "an integer in [0, 2^64)");
	errno = 0;
	v = strtoull(n->str, &end, 10);
	if (*end || errno)
		return expected(e, n, "seed", "an integer in [0, 2^64)");
	*out = v;
	return 0;
}

/* Fills rq from the request document (whose strings it borrows). */
static int request_fill(const struct ydoc *d, struct sim_request *rq, struct err *e)
{
	static const char *const bools[] = { "false", "true", NULL };
	const struct ynode *r = d->root;
	char buf[300];

	memset(rq, 0, sizeof *rq);
	rq->model = MODEL_CYCLE;
	rq->dataflow = -1;
	rq->seed = RUN_DEFAULT_SEED;
	if (!r)
		return err_input(e, "%s: expected a JSON object, found an empty request", request_name);
	if (r->kind != Y_MAP)
		return expected(e, r, NULL, "a JSON object");
	for (size_t i = 0; i < r->n; i++) {
		const char *k = r->keys[i]->str;
		const struct ynode *v = r->vals[i];
		int rc = 0, choice = 0;
		if (!strcmp(k, "configs"))
			rc = req_configs(v, rq, e);
		else if (!strcmp(k, "set"))
			rc = req_set(v, rq, e);
		else if (!strcmp(k, "workload"))
			rc = req_string(v, k, &rq->workload, e);
		else if (!strcmp(k, "model"))
			rc = req_choice(v, k, run_model_names, "\"cycle\", \"analytic\" or \"functional\"", &rq->model, e);
		else if (!strcmp(k, "dataflow"))
			rc = req_choice(v, k, array_dataflow_names, "\"ws\", \"os\" or \"is\"", &rq->dataflow, e);
		else if (!strcmp(k, "batch"))
			rc = req_batch(v, &rq->batch, e);
		else if (!strcmp(k, "seed"))
			rc = req_seed(v, &rq->seed, e);
		else if (!strcmp(k, "ideal_memory")) {
			rc = v->quoted ? expected(e, v, k, "true or false") :
			     req_choice(v, k, bools, "true or false", &choice, e);
			rq->ideal_memory = choice;
		} else if (!strcmp(k, "reuse")) {
			rc = v->quoted ? expected(e, v, k, "true or false") :
			     req_choice(v, k, bools, "true or false", &choice, e);
			rq->no_reuse = !choice;
		} else {
			struct pos at = r->keys[i]->pos;
			at.file = request_name;
			return err_at(e, at, err_quote(buf, sizeof buf, k, 60),
				      "expected a request key (configs, set, workload, model, dataflow, batch, ideal_memory, "
				      "seed, reuse), found an unknown key");
		}
		if (rc < 0)
			return -1;
	}
	if (!rq->nconfigs)
		return err_input(e, "%s: configs: expected at least one config file, found none", request_name);
	if (!rq->workload)
		return err_input(e, "%s: workload: expected a workload file, found none", request_name);
	return 0;
}

int sim_request_parse(const char *json, struct sim_request *rq, struct ydoc **d, struct err *e)
{
	memset(rq, 0, sizeof *rq);
	if (!json)
		json = "";
	if (!(*d = ydoc_parse_json(request_name, json, e)))
		return -1;
	return request_fill(*d, rq, e);
}

/* tpusim_run_json in the C locale. */
static int run_json(const char *request, char **result)
{
	struct err e = { 0 };
	struct sim_request *rq = calloc(1, sizeof *rq);
	struct sim *s = calloc(1, sizeof *s);
	struct ydoc *d = NULL;
	int rc;

	if (!rq || !s) {
		free(rq);
		free(s);
		return ERR_NOMEM;
	}
	if (sim_request_parse(request, rq, &d, &e) < 0 || sim_load(s, rq, "request", &e) < 0) {
		rc = err_status(&e);
		*result = strdup(e.msg);
		goto out;
	}
	if (sim_run(s, &e) < 0) {
		rc = err_status(&e);
		*result = strdup(e.msg);
	} else {
		*result = sim_summary_json(s);
		rc = *result ? 0 : ERR_NOMEM;
	}
	sim_release(s);
out:
	ydoc_free(d);
	free(rq);
	free(s);
	return rc;
}

/*
 * Numbers are read (strtod) and printed (%g) in the C locale, whatever the
 * host program chose with setlocale: a decimal comma would change both. The
 * C locale is this thread's for the call; the caller's is put back after.
 */
TPUSIM_API int tpusim_run_json(const char *request, char **result)
{
	locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0), caller;
	int rc;

	*result = NULL;
	if (!c)
		return ERR_NOMEM;
	caller = uselocale(c);
	rc = run_json(request, result);
	uselocale(caller);
	freelocale(c);
	return rc;
}

TPUSIM_API void tpusim_free(char *result)
{
	free(result);
}

TPUSIM_API const char *tpusim_version(void)
{
	return TPUSIM_VERSION;
}
