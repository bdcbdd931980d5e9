/*
 * options.c - the run option table and the reading of option values (see
 * options.h).
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "array.h"
#include "limit.h"
#include "run.h"
#include "trace.h"

#define RQ(field) offsetof(struct sim_request, field)
#define COUNT(field) offsetof(struct sim_request, field)

/* Initializers, not objects: C11 takes no object's value in a static initializer. */
#define LIST_OF_CONFIGS { .kind = OPT_LIST, .max = CONFIG_MAX_FILES, .items = "config files", .count_off = COUNT(nconfigs) }
#define LIST_OF_SETS { .kind = OPT_LIST, .max = CONFIG_MAX_SETS, .items = "overrides", .count_off = COUNT(nassignments) }

const struct run_option run_options[RO_COUNT] = {
	[RO_CONFIGS] = { "configs", "-c", "--config", "CONFIG", LIST_OF_CONFIGS, 0, NULL,
			 OPT_IN_CLI | OPT_IN_REQUEST, 0, RQ(configs),
			 "a config YAML file or preset name (tpu_v1); again to overlay one (memory/hbm3)" },
	[RO_SET] = { "set", "--set", NULL, "key.path=value", LIST_OF_SETS, 0, NULL, OPT_IN_CLI | OPT_IN_REQUEST, 0,
		     RQ(assignments), "override one config key, checked like the file; again for more" },
	[RO_WORKLOAD] = { "workload", "-w", "--workload", "WORKLOAD", { .kind = OPT_TEXT }, 0, NULL, OPT_IN_CLI | OPT_IN_REQUEST,
			  0, RQ(workload), "network: a workload YAML file or name (resnet50), or a SCALE-Sim topology CSV" },
	[RO_MODEL] = { "model", "--model", NULL, "MODEL", { .kind = OPT_CHOICE, .names = run_model_names }, MODEL_CYCLE, NULL,
		       OPT_IN_CLI | OPT_IN_REQUEST | OPT_IN_SWEEP, 1u << MODEL_ANALYTIC | 1u << MODEL_CYCLE, RQ(model),
		       "cycle (default), analytic (instant closed form) or functional (PE values)" },
	[RO_DATAFLOW] = { "dataflow", "--dataflow", NULL, NULL, { .kind = OPT_CHOICE, .names = array_dataflow_names }, -1,
			  "the config's array.dataflow", OPT_IN_CLI | OPT_IN_REQUEST | OPT_IN_SWEEP, 0, RQ(dataflow),
			  "the dataflow instead of array.dataflow" },
	[RO_BATCH] = { "batch", "--batch", NULL, "N", { .kind = OPT_INT, .lo = 1, .hi = LIMIT_BATCH }, 0, "the workload's",
		       OPT_IN_CLI | OPT_IN_REQUEST | OPT_IN_SWEEP, 0, RQ(batch), "the batch instead of the workload's" },
	[RO_IDEAL_MEMORY] = { "ideal_memory", "--ideal-memory", NULL, NULL, { .kind = OPT_BOOL }, false, NULL,
			      OPT_IN_CLI | OPT_IN_REQUEST, 0, RQ(ideal_memory), "unbounded buffers and infinitely fast memory" },
	[RO_SEED] = { "seed", "--seed", NULL, "N", { .kind = OPT_U64 }, RUN_DEFAULT_SEED, NULL, OPT_IN_CLI | OPT_IN_REQUEST, 0,
		      RQ(seed), "random operands of the functional model (default 1)", 1u << MODEL_FUNCTIONAL,
		      "only it draws operands" },
	[RO_REUSE] = { "reuse", "--no-reuse", NULL, NULL, { .kind = OPT_BOOL, .negated = true }, true, NULL,
		       OPT_IN_CLI | OPT_IN_REQUEST, 0, RQ(no_reuse),
		       "simulate every op (no reuse of identical ops, no folding of long blocks)" },
	[RO_TRAIN] = { "train", "--train", NULL, NULL, { .kind = OPT_BOOL }, false, NULL,
		       OPT_IN_CLI | OPT_IN_REQUEST | OPT_IN_SWEEP, 0,
		       RQ(train), "a training step: forward, backward, recomputation, optimizer (keys train.*)" },
	[RO_VCD] = { "vcd", "--vcd", NULL, "BASE", { .kind = OPT_TEXT }, 0, NULL, OPT_IN_CLI, 0, RQ(vcd),
		     "write BASE.vcd: the timeline (functional model: every PE register)" },
	[RO_TRACE] = { "trace", "--trace", NULL, "FILE.gz", { .kind = OPT_TEXT }, 0, NULL, OPT_IN_CLI, 0, RQ(trace),
		       "every load, fold, store and stall of the cycle model; tpusim trace reads it" },
	[RO_DRAM_TRACE] = { "dram_trace", "--dram-trace", NULL, "FILE.gz", { .kind = OPT_TEXT }, 0, NULL, OPT_IN_CLI, 0,
			    RQ(dram_trace), "cycle model: every off-chip request in bursts, for DRAMsim3 or Ramulator 2.0" },
	[RO_DRAM_FORMAT] = { "dram_trace_format", "--dram-trace-format", NULL, "FORMAT",
			     { .kind = OPT_CHOICE, .names = trace_dram_format_names }, TRACE_DRAMSIM3, NULL, OPT_IN_CLI, 0, RQ(dram_format),
			     "the DRAM trace's format: dramsim3 (default) or ramulator2" },
};

bool run_option_applies(const struct run_option *o, int model)
{
	return !o->models || (o->models >> model & 1);
}

const struct run_option *run_option_find(const char *key, unsigned in)
{
	for (int i = 0; i < RO_COUNT; i++)
		if ((run_options[i].in & in) && !strcmp(key, run_options[i].key))
			return &run_options[i];
	return NULL;
}

/* Appends the n-th of count items to buf: "a", ", b", " or c". */
static void list_item(char *buf, size_t size, int nth, int count, const char *last_sep, const char *fmt,
		      const char *item)
{
	size_t len = strlen(buf);
	if (len >= size)
		return;
	snprintf(buf + len, size - len, "%s", nth == 0 ? "" : nth == count - 1 ? last_sep : ", ");
	len = strlen(buf);
	snprintf(buf + len, size - len, fmt, item);
}

void run_option_keys(unsigned in, const char *last_sep, char *buf, size_t size)
{
	int count = 0, nth = 0;
	buf[0] = '\0';
	for (int i = 0; i < RO_COUNT; i++)
		count += (run_options[i].in & in) != 0;
	for (int i = 0; i < RO_COUNT; i++)
		if (run_options[i].in & in)
			list_item(buf, size, nth++, count, last_sep, "%s", run_options[i].key);
}

void run_options_default(struct sim_request *rq)
{
	memset(rq, 0, sizeof *rq);
	for (int i = 0; i < RO_COUNT; i++) {
		const struct run_option *o = &run_options[i];
		void *f = (char *)rq + o->off;
		switch (o->val.kind) {
		case OPT_CHOICE:
			*(int *)f = (int)o->def;
			break;
		case OPT_INT:
			*(int64_t *)f = o->def;
			break;
		case OPT_U64:
			*(uint64_t *)f = (uint64_t)o->def;
			break;
		case OPT_BOOL:
		case OPT_FLAG:
			*(bool *)f = o->val.negated ? !o->def : o->def != 0;
			break;
		case OPT_TEXT:
		case OPT_LIST:
			break;
		}
	}
}

void optval_expected(const struct optval *v, bool quoted, unsigned only, char *buf, size_t size)
{
	int count = 0, nth = 0;
	buf[0] = '\0';
	switch (v->kind) {
	case OPT_CHOICE:
		for (int i = 0; v->names[i]; i++)
			count += !only || (only >> i & 1);
		for (int i = 0; v->names[i]; i++)
			if (!only || (only >> i & 1))
				list_item(buf, size, nth++, count, " or ", quoted ? "\"%s\"" : "%s", v->names[i]);
		break;
	case OPT_INT:
		snprintf(buf, size, "an integer in [%lld, %lld]", v->lo, v->hi);
		break;
	case OPT_U64:
		snprintf(buf, size, "an integer in [0, 2^64)");
		break;
	case OPT_BOOL:
		snprintf(buf, size, "true or false");
		break;
	case OPT_FLAG:
		snprintf(buf, size, "no value");
		break;
	case OPT_TEXT:
	case OPT_LIST:
		snprintf(buf, size, "a text");
		break;
	}
}

void optval_label(const struct optval *v, const char *arg, char *buf, size_t size)
{
	buf[0] = '\0';
	if (arg || v->kind != OPT_CHOICE) {
		snprintf(buf, size, "%s", arg ? arg : "");
		return;
	}
	for (int i = 0; v->names[i]; i++) {
		size_t len = strlen(buf);
		if (len < size)
			snprintf(buf + len, size - len, "%s%s", i ? "|" : "", v->names[i]);
	}
}

/* The whole number all of text is (decimal digits only), or false. */
static bool whole(const char *text, unsigned long long *out)
{
	char *end;
	if (!isdigit((unsigned char)*text))
		return false;
	errno = 0;
	*out = strtoull(text, &end, 10);
	return !*end && !errno;
}

int optval_parse(const struct optval *v, const char *text, unsigned only, void *base, size_t off, bool *full)
{
	void *f = (char *)base + off;
	unsigned long long x;
	*full = false;
	switch (v->kind) {
	case OPT_FLAG:
		*(bool *)f = !v->negated;
		return 0;
	case OPT_BOOL:
		if (strcmp(text, "true") && strcmp(text, "false"))
			return -1;
		*(bool *)f = !strcmp(text, "true") != v->negated;
		return 0;
	case OPT_TEXT:
		*(const char **)f = text;
		return 0;
	case OPT_LIST: {
		int *n = (int *)((char *)base + v->count_off);
		if (*n == v->max) {
			*full = true;
			return -1;
		}
		((const char **)f)[(*n)++] = text;
		return 0;
	}
	case OPT_CHOICE:
		for (int i = 0; v->names[i]; i++)
			if (!strcmp(text, v->names[i]) && (!only || (only >> i & 1))) {
				*(int *)f = i;
				return 0;
			}
		return -1;
	case OPT_INT:
		if (!whole(text, &x) || x > (unsigned long long)v->hi || (long long)x < v->lo)
			return -1;
		if (v->is_long)
			*(long long *)f = (long long)x;
		else
			*(int64_t *)f = (int64_t)x;
		return 0;
	case OPT_U64:
		if (!whole(text, &x))
			return -1;
		*(uint64_t *)f = x;
		return 0;
	}
	return -1;
}
