/*
 * fuzz_config.c - the config reader: a file overlaid on the defaults
 * (config_merge), then the command line's overrides (config_set), its
 * warnings, and the round trip that `config --dump` promises: the dump loads
 * back to the same config, which dumps the same text again.
 *
 * The overrides ride in the file as YAML comments: each line that starts
 * with "#=" is one --set argument (the rest of the line), applied in order.
 *
 * A config that loads then runs a small fixed workload under the analytic
 * model (no SystemC), dataflow and memory picked by the input's length: the
 * planner meets every buffer size and port width the fuzzer makes up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"
#include "lower.h"
#include "run.h"
#include "workload.h"

/* One layer of each kind of GEMM the planner sees, small enough to plan quickly. */
static const char workload_text[] =
	"name: probe\nbatch: 2\nlayers:\n"
	"  - {name: c, type: conv2d, in_h: 14, in_w: 14, in_c: 24, out_c: 40, kernel: 3, padding: 1}\n"
	"  - {name: dw, type: conv2d, in_h: 14, in_w: 14, in_c: 40, out_c: 40, kernel: 3, groups: 40}\n"
	"  - {name: a, type: attention, seq: 33, d_model: 96, heads: 6, kv_heads: 2, causal: true, causal_block: 16}\n"
	"  - {name: d, type: attention, d_model: 64, heads: 4, mode: decode, kv_cache: 70}\n"
	"  - {name: f, type: fc, in_features: 300, out_features: 7}\n"
	"  - {name: s, type: softmax, elements: 99}\n";

/* config_dump's text without its first line (which names the files). */
static char *dump(const struct config *c)
{
	char *text = NULL, *body;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		fz_fail("open_memstream");
	config_dump(c, f);
	if (fclose(f) != 0)
		fz_fail("config_dump");
	body = strchr(text, '\n');
	if (!body)
		fz_fail("config_dump: one line: %s", text);
	memmove(text, body + 1, strlen(body + 1) + 1);
	return text;
}

/* Applies every "#=key=value" line of data with config_set; returns what the last call returned. */
static int overrides(struct config *c, const uint8_t *data, size_t size, struct err *e)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n >= 2 && p[0] == '#' && p[1] == '=') {
			char *arg = strndup(p + 2, n - 2);
			int rc;
			if (!arg)
				fz_fail("strndup");
			rc = config_set(c, arg, e);
			free(arg);
			fz_check_err(rc, e, "config_set");
			if (rc < 0)
				return -1;
		}
		p += n + 1;
	}
	return 0;
}

static void run_probe(const struct config *c, size_t size)
{
	static struct workload w;
	static struct oplist ops;
	static int ready;
	struct run_opts o = { .dataflow = (int)(size % 3), .model = MODEL_ANALYTIC, .ideal_memory = (size / 3) % 2 == 1 };
	struct run r;
	struct err e = { 0 };
	int rc;

	if (!ready) {
		const char *path = fz_file(".probe.yaml", (const uint8_t *)workload_text, sizeof workload_text - 1);
		if (workload_load(&w, path, 0, &e) < 0 || lower_workload(&w, &ops, &e) < 0)
			fz_fail("the probe workload: %s", e.msg);
		ready = 1;
	}
	rc = run_workload(c, &w, &ops, &o, &r, &e);
	if (rc < 0 && e.kind == ERR_SIM)
		e.kind = ERR_INPUT;   /* a model's own refusal: checked for one line like the others */
	fz_check_err(rc, &e, "run_workload");
	if (rc == 0) {
		if (r.total.cycles <= 0)
			fz_fail("the probe workload ran in %lld cycles", (long long)r.total.cycles);
		run_release(&r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config c, back;
	static char warnings[16][CONFIG_WARNING_MAX];
	struct err e = { 0 };
	char *first, *second;
	int rc;

	config_init(&c);
	rc = config_merge(&c, fz_file(".yaml", data, size), &e);
	fz_check_err(rc, &e, "config_merge");
	if (rc < 0 || overrides(&c, data, size, &e) < 0)
		return 0;
	int n = config_warnings(&c, true, true, warnings, 16);
	for (int i = 0; i < n && i < 16; i++)
		if (!warnings[i][0] || strchr(warnings[i], '\n'))
			fz_fail("config_warnings: line %d: \"%s\"", i, warnings[i]);

	first = dump(&c);
	rc = config_load(&back, fz_file(".dump.yaml", (const uint8_t *)first, strlen(first)), &e);
	if (rc < 0)
		fz_fail("the dump does not load back: %s\n%s", e.msg, first);
	second = dump(&back);
	if (strcmp(first, second))
		fz_fail("the dump of the dump differs:\n%s\n----\n%s", first, second);
	if (memcmp(&c.arch, &back.arch, sizeof c.arch))
		fz_fail("the dump loads back to another config:\n%s", first);
	free(first);
	free(second);
	run_probe(&c, size);
	return 0;
}
