/*
 * api.c - requests, the shared run path and the library's entry points
 * (see api.h and tpusim.h).
 */
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsx.h"
#include "train.h"
#include "options.h"
#include "report.h"
#include "stop.h"
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
	if (fsx_writable(path) == 0)
		return 0;
	return fsx_open_error(e, opt, path, errno);
}

/*
 * Whether model draws a trace (the analytic model has no cycles to draw) and
 * the trace base + ".vcd" can be written, checked before the run (the engine
 * opens it only when the cycle model starts). A file made for the check is
 * removed again; a file already there is opened without being changed.
 */
static int check_vcd(const char *base, int model, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	if (model == MODEL_ANALYTIC)
		return err_input(e, "--vcd: expected --model cycle or functional (the analytic model has no cycles to trace), "
				 "found --model analytic");
	if (!*base)
		return err_input(e, "--vcd: expected a path, found \"\"");
	if (strlen(base) > LIMIT_OUT_PATH)
		return err_input(e, "--vcd: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", strlen(base));
	/* A BASE that ends in '/' or is a directory would write a hidden DIR/.vcd: a file's name is wanted. */
	if (fsx_file_path(base) != 0)
		return fsx_open_error(e, "--vcd", base, errno);
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

int sim_config(struct config *c, const struct sim_request *rq, struct err *e)
{
	config_init(c);
	for (int i = 0; i < rq->nconfigs; i++)
		if (config_merge(c, rq->configs[i], e) < 0)
			return -1;
	for (int i = 0; i < rq->nassignments; i++)
		if (config_set(c, rq->assignments[i], e) < 0)
			return -1;
	for (int i = 0; i < rq->noverrides; i++) {
		const struct sim_override *o = &rq->overrides[i];
		if (config_set_key(c, o->key, o->value, o->quoted, o->at, e) < 0)
			return -1;
	}
	if (rq->train && config_set_key(c, "train.enabled", "true", false, (struct pos){ "--train", 0, 0 }, e) < 0)
		return -1;
	return 0;
}

int sim_load(struct sim *s, const struct sim_request *rq, const char *cmd, struct err *e)
{
	memset(s, 0, sizeof *s);
	if (!rq->nconfigs)
		return err_input(e, "%s: expected -c CONFIG, found none", cmd);
	if (!rq->workload)
		return err_input(e, "%s: expected -w WORKLOAD, found none", cmd);
	if (sim_config(&s->cfg, rq, e) < 0)
		return -1;
	/* A sweep's product may pair train: false with train.* axes: those points run inference. */
	if (strcmp(cmd, "sweep") && config_train_unused(&s->cfg, NULL, e) < 0)
		return -1;
	if (config_check_rate(&s->cfg, rq->model == MODEL_FUNCTIONAL ? "--model functional" : NULL, e) < 0)
		return -1;
	if ((rq->ideal_memory || rq->model == MODEL_FUNCTIONAL) &&
	    config_memory_unused(&s->cfg, true, rq->model == MODEL_FUNCTIONAL ? "the functional model runs on ideal memory" :
				 "--ideal-memory makes memory ideal", e) < 0)
		return -1;
	if (workload_load(&s->w, rq->workload, rq->batch, e) < 0)
		return -1;
	if (lower_step(&s->cfg, &s->w, &s->ops, e) < 0 || (rq->vcd && check_vcd(rq->vcd, rq->model, e) < 0) ||
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

static int req_configs(const struct ynode *n, const struct run_option *o, struct sim_request *rq, struct err *e)
{
	char what[64];
	if (n->kind != Y_SEQ)
		return expected(e, n, o->key, "a list of config file paths");
	snprintf(what, sizeof what, "at most %d %s", o->val.max, o->val.items);
	if (n->n > (size_t)o->val.max)
		return expected(e, n, o->key, what);
	for (size_t i = 0; i < n->n; i++) {
		char key[32];
		bool full;
		snprintf(key, sizeof key, "%s[%zu]", o->key, i);
		if (n->vals[i]->kind != Y_SCALAR || !n->vals[i]->quoted)
			return expected(e, n->vals[i], key, "a string");
		if (optval_parse(&o->val, n->vals[i]->str, 0, rq, o->off, &full) < 0)
			return expected(e, n, o->key, what);
	}
	return 0;
}

static int req_set(const struct ynode *n, struct sim_request *rq, struct err *e)
{
	if (n->kind != Y_MAP)
		return expected(e, n, "set", "an object of config key to value");
	if (n->n > (size_t)run_options[RO_SET].val.max) {
		char what[64];
		snprintf(what, sizeof what, "at most %d %s", run_options[RO_SET].val.max, run_options[RO_SET].val.items);
		return expected(e, n, "set", what);
	}
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

/*
 * The value of run option o (options.h) into rq: a string for a text, a
 * scalar among the names for a choice, an unquoted number or boolean.
 */
static int req_value(const struct ynode *n, const struct run_option *o, struct sim_request *rq, struct err *e)
{
	char what[300];
	bool full;
	if (o == &run_options[RO_CONFIGS])
		return req_configs(n, o, rq, e);
	if (o == &run_options[RO_SET])
		return req_set(n, rq, e);
	if (o->val.kind == OPT_TEXT) {
		if (n->kind != Y_SCALAR || !n->quoted)
			return expected(e, n, o->key, "a string");
		*(const char **)((char *)rq + o->off) = n->str;
		return 0;
	}
	optval_expected(&o->val, true, 0, what, sizeof what);
	if (n->kind != Y_SCALAR || (o->val.kind != OPT_CHOICE && n->quoted) ||
	    optval_parse(&o->val, n->str, 0, rq, o->off, &full) < 0)
		return expected(e, n, o->key, what);
	return 0;
}

/* Fills rq from the request document (whose strings it borrows): each key a run option's (options.h). */
static int request_fill(const struct ydoc *d, struct sim_request *rq, struct err *e)
{
	const struct ynode *r = d->root;
	char buf[300], keys[300];

	run_options_default(rq);
	if (!r)
		return err_input(e, "%s: expected a JSON object, found an empty request", request_name);
	if (r->kind != Y_MAP)
		return expected(e, r, NULL, "a JSON object");
	for (size_t i = 0; i < r->n; i++) {
		const struct run_option *o = run_option_find(r->keys[i]->str, OPT_IN_REQUEST);
		if (!o) {
			struct pos at = r->keys[i]->pos;
			at.file = request_name;
			run_option_keys(OPT_IN_REQUEST, ", ", keys, sizeof keys);
			return err_at(e, at, err_quote(buf, sizeof buf, r->keys[i]->str, 60),
				      "expected a request key (%s), found an unknown key", keys);
		}
		if (req_value(r->vals[i], o, rq, e) < 0)
			return -1;
	}
	/* A key given for a model it does not apply to, as the command line refuses its option. */
	for (size_t i = 0; i < r->n; i++) {
		const struct run_option *o = run_option_find(r->keys[i]->str, OPT_IN_REQUEST);
		struct pos at = r->vals[i]->pos;
		char want[100];
		if (run_option_applies(o, rq->model))
			continue;
		at.file = request_name;
		optval_expected(&run_options[RO_MODEL].val, true, o->models, want, sizeof want);
		return err_at(e, at, o->key, "expected model %s (%s), found model \"%s\"", want, o->models_why,
			      run_model_names[rq->model]);
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

/*
 * tpusim_interrupt's calls so far. A call notes the count when it is made
 * and, once its turn comes, stops at once if the count moved while it
 * waited: an interrupt stops every call made before it, running or
 * waiting, and none made after it. Lock-free, as a signal handler needs.
 */
static atomic_ulong interrupts;

_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "a signal handler may touch only a lock-free atomic");

/* tpusim_run_json in the C locale, for a call made when interrupts was seen. */
static int run_json(const char *request, unsigned long seen, char **result)
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
	stop_clear();
	if (atomic_load(&interrupts) != seen) {
		stop_request(SIGINT);
		stop_error(&e);
		rc = stop_status();
		*result = strdup(e.msg);
		goto out;
	}
	if (sim_request_parse(request, rq, &d, &e) < 0 || sim_load(s, rq, "request", &e) < 0) {
		rc = err_status(&e);
		*result = strdup(e.msg);
		goto out;
	}
	if (sim_run(s, &e) < 0) {
		rc = stop_requested() ? stop_status() : err_status(&e);
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
 * One call at a time in the process. SystemC keeps the kernel it works in in
 * a process-wide variable (sc_curr_simcontext; scw.cpp's running kernel), so
 * two runs at once would work in each other's kernel; the key tables are
 * built on first use (config_schema, workload_layer_schema) and a
 * suggestion is returned in a static buffer (cfg_suggest). A call from
 * another thread waits here until the one before it has returned.
 */
static pthread_mutex_t one_call = PTHREAD_MUTEX_INITIALIZER;

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
	unsigned long seen = atomic_load(&interrupts);
	pthread_mutex_lock(&one_call);
	rc = run_json(request, seen, result);
	pthread_mutex_unlock(&one_call);
	uselocale(caller);
	freelocale(c);
	return rc;
}

TPUSIM_API void tpusim_interrupt(void)
{
	atomic_fetch_add(&interrupts, 1);
	stop_request(SIGINT);
}

TPUSIM_API void tpusim_free(char *result)
{
	free(result);
}

TPUSIM_API const char *tpusim_version(void)
{
	return TPUSIM_VERSION;
}
