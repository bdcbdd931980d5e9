/*
 * cmd_tools.c - the commands that look at a config or a workload without
 * running it: config --dump, lower, and lab, one GEMM on the functional model
 * (see cli.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "lab.h"
#include "lower.h"
#include "train.h"
#include "report.h"
#include "run.h"
#include "shard.h"
#include "workload.h"

static int load_config(const struct cli_args *a, struct config *c, struct err *e)
{
	return sim_config(c, &a->rq, e);
}

int cmd_config(const struct cli_args *a, struct err *e)
{
	struct config c;
	if (!a->dump)
		return err_input(e, "config: expected --dump, found no action");
	if (load_config(a, &c, e) < 0 || config_check_rate(&c, NULL, e) < 0)
		return -1;
	config_dump(&c, stdout);
	report_area(stdout, &c.arch, "# ");
	return 0;
}

/* t's name, or "-" for TENSOR_NONE. */
static const char *tensor_cli_shown(const struct oplist *ops, int32_t t, char *buf, size_t size)
{
	return t == TENSOR_NONE ? "-" : tensor_name(&ops->t[t], buf, size);
}

/* Op i's name, or "-" for TENSOR_NONE. */
static const char *op_cli_shown(const struct oplist *ops, int32_t i, char *buf, size_t size)
{
	return i == TENSOR_NONE ? "-" : op_name(&ops->v[i], buf, size);
}

/*
 * The tensors after the op table: what each op reads and writes, then every
 * tensor with its size (bytes at the config's element size, the default
 * config's when none is given, as the op table), the op that first writes it
 * and the last op that reads it ("-": none, a network output).
 */
static void print_tensors(FILE *out, const struct oplist *ops, const struct arch *arch)
{
	int64_t eb = array_elem_bytes(arch->array.dtype);
	char a[OP_NAME_MAX], b[OP_NAME_MAX], c[OP_NAME_MAX];

	fprintf(out, "\nop tensors: reads -> writes\n\n");
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		fprintf(out, "%-28s %s", op_name(o, c, sizeof c), tensor_cli_shown(ops, o->in[0], a, sizeof a));
		if (o->in[1] != TENSOR_NONE)
			fprintf(out, ", %s", tensor_cli_shown(ops, o->in[1], b, sizeof b));
		fprintf(out, " -> %s\n", tensor_cli_shown(ops, o->out, c, sizeof c));
	}
	fprintf(out, "\ntensors: %zu; bytes at %lld B per element\n\n%-36s %-6s %15s %15s %-28s %s\n", ops->nt,
		(long long)eb, "tensor", "kind", "elements", "bytes", "producer", "last reader");
	for (size_t i = 0; i < ops->nt; i++) {
		const struct tensor *t = &ops->t[i];
		fprintf(out, "%-36s %-6s %15lld %15lld %-28s %s\n", tensor_name(t, a, sizeof a), tensor_kind_names[t->kind],
			(long long)t->elems, (long long)(t->elems * eb), op_cli_shown(ops, t->producer, b, sizeof b),
			op_cli_shown(ops, t->last_reader, c, sizeof c));
	}
}

/* A pipeline's stages: where each starts, and what it receives from the one before (a send_recv each microbatch). */
static int print_stages(FILE *out, const struct config *c, const struct workload *w, const struct oplist *ops,
			struct err *e)
{
	int64_t P = c->arch.mesh.pipeline;
	size_t *first = malloc((size_t)(P + 1) * sizeof *first);
	double *bytes = malloc((size_t)P * sizeof *bytes);
	struct lower_pod lp;
	char g[96];
	int rc = -1;
	if (!first || !bytes) {
		err_nomem(e, NULL);
		goto out;
	}
	if (shard_place(c, &lp, e) < 0 || run_pipe_cut(c, w, ops, first, e) < 0 || run_pipe_sends(c, w, first, bytes, e) < 0)
		goto out;
	fprintf(out, "\npipeline: %lld stages (%s, %lld microbatches), each on its own chips, over %s; the ops above run "
		"on one chip at the whole batch, a stage's on its own at one microbatch\n", (long long)P,
		pipe_schedule_names[c->arch.mesh.schedule],
		(long long)(c->arch.train.enabled ? c->arch.train.microbatches : c->arch.mesh.microbatches),
		ici_group_name(lp.pod, &lp.g_pipeline, g, sizeof g));
	for (int64_t s = 0; s < P; s++) {
		fprintf(out, "stage %-4lld from %-28s", (long long)s, w->layers[first[s]].name);
		if (s > 0)
			fprintf(out, " receives %.0f B a microbatch (send_recv)", bytes[s - 1]);
		fputc('\n', out);
	}
	rc = 0;
out:
	free(first);
	free(bytes);
	return rc;
}

int cmd_lower(const struct cli_args *a, struct err *e)
{
	struct config c;
	struct workload w;
	struct oplist ops = { 0 };
	if (!a->rq.workload)
		return err_input(e, "lower: expected -w WORKLOAD, found none");
	if (load_config(a, &c, e) < 0 || workload_load(&w, a->rq.workload, a->rq.batch, e) < 0)
		return -1;
	if (lower_step(&c, &w, &ops, e) < 0) {
		oplist_release(&ops);
		workload_release(&w);
		return -1;
	}
	report_lower(stdout, &w, &ops, &c.arch, a->csv);
	if (!a->csv && c.arch.mesh.pipeline > 1 && print_stages(stdout, &c, &w, &ops, e) < 0) {
		oplist_release(&ops);
		workload_release(&w);
		return -1;
	}
	if (!a->csv)
		print_tensors(stdout, &ops, &c.arch);
	oplist_release(&ops);
	workload_release(&w);
	return 0;
}

/* The request the command line describes; dataflow >= 0 overrides --dataflow. */
/*
 * lab: one GEMM on the config's array, as a terminal grid or (--html) a
 * page (the parser refuses the options of the other commands).
 */
int cmd_lab(const struct cli_args *a, struct err *e)
{
	struct config c;
	struct lab_opts o;
	struct lab_summary s[3];
	bool json = a->format >= 0 && !strcmp(cli_lab_formats[a->format], "json");

	if (!a->gemm)
		return err_input(e, "lab: expected --gemm MxKxN, found none");
	if (a->html && (a->cycles || a->step || a->format >= 0))
		return err_input(e, "--html: expected without --cycles, --step and --format (the page shows every cycle), "
				 "found them");
	if (a->rq.vcd && a->html)
		return err_input(e, "--vcd: expected without --html (a trace holds one dataflow, the page all three), found "
				 "--html; write them with two commands");
	if (a->rq.vcd && (a->cycles || a->step || a->format >= 0))
		return err_input(e, "--vcd: expected without --cycles, --step and --format (the trace holds every cycle), "
				 "found them");
	if (a->html && a->rq.dataflow >= 0)
		return err_input(e, "--dataflow: expected without --html (the page shows ws, os and is side by side), found "
				 "--dataflow %s; drop --dataflow with --html", array_dataflow_names[a->rq.dataflow]);
	if (a->step && json)
		return err_input(e, "--step: expected with --format text, found --format json");
	memset(&o, 0, sizeof o);
	o.seed = a->rq.seed;
	o.last = -1;
	if (lab_parse_gemm(a->gemm, &o.m, &o.k, &o.n, e) < 0 ||
	    (a->cycles && lab_parse_cycles(a->cycles, &o.first, &o.last, e) < 0))
		return -1;
	if (load_config(a, &c, e) < 0 ||
	    config_train_unused(&c, "tpusim lab runs one GEMM, no training step", e) < 0)
		return -1;
	o.df = a->rq.dataflow >= 0 ? a->rq.dataflow : c.arch.array.dataflow;
	o.step = a->step;
	o.json = json;
	o.in = stdin;
	o.prompt = a->step && isatty(STDIN_FILENO);
	if (a->rq.vcd) {
		if (lab_vcd(a->rq.vcd, &c, &o, &s[0], e) < 0)
			return -1;
		printf("wrote %s.vcd (%s): ", cli_shown(0, a->rq.vcd), array_dataflow_names[o.df]);
		lab_print_counts(stdout, &s[0], c.arch.array.dtype == DT_INT8);
		printf("\n");
		return 0;
	}
	if (!a->html)
		return lab_print(stdout, &c, &o, &s[0], e);
	if (lab_html(a->html, &c, &o, s, e) < 0)
		return -1;
	printf("wrote %s: ", cli_shown(0, a->html));
	for (int d = 0; d < 3; d++)
		printf("%s%s %lld cycle%s, %lld output%s checked, %lld mismatch%s", d ? "; " : "", array_dataflow_names[d],
		       (long long)s[d].cycles, s[d].cycles == 1 ? "" : "s", (long long)s[d].outputs,
		       s[d].outputs == 1 ? "" : "s", (long long)s[d].mismatches, s[d].mismatches == 1 ? "" : "es");
	printf("\n");
	return 0;
}

