/*
 * cli.c - the command and option tables, the one parser, help, and the
 * output paths made before a command runs (see cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "config.h"
#include "fsx.h"
#include "limit.h"
#include "options.h"
#include "sweep.h"

#define C(x) (1u << CMD_##x)
#define C_ALL ((1u << CMD_COUNT) - 1)
#define C_SIM (C(RUN) | C(ROOFLINE) | C(COMPARE))

const char *const cli_lab_formats[] = { "text", "json", NULL };
const char *const cli_heatmaps[] = { "first", "all", NULL };

const struct cli_command cli_commands[CMD_COUNT] = {
	[CMD_RUN] = { "run", "simulate a workload: cycles, utilization, HBM traffic, roofline",
		      { "run -c CONFIG [-c MORE]... -w WORKLOAD [options]" },
		      "Simulate WORKLOAD on CONFIG and print per-layer and total cycles, utilization, HBM\n"
		      "traffic and the roofline. -o DIR also writes DIR/layers.csv and DIR/summary.json\n"
		      "(links into DIR/.tpusim/current, so that the two always come from one run), and\n"
		      "with array.scalesim_compat: true, DIR/COMPUTE_REPORT.csv in SCALE-Sim's columns.\n",
		      NULL, NULL, true, cmd_run },
	[CMD_ROOFLINE] = { "roofline", "draw the roofline with every layer of a workload",
			   { "roofline -c CONFIG -w WORKLOAD -o FILE.png|FILE.svg [options]" },
			   "Draw the config's roofline with every layer of the workload and two canonical points.\n",
			   NULL, NULL, true, cmd_roofline },
	[CMD_COMPARE] = { "compare", "the same workload under each dataflow, side by side",
			  { "compare -c CONFIG -w WORKLOAD [options]" },
			  "The same workload under each dataflow: what stays in the PEs, what streams, what is\n"
			  "re-read; folds, utilization, cycles and their ratio to ws, HBM bytes, energy, and why.\n",
			  NULL, NULL, true, cmd_compare },
	[CMD_LOWER] = { "lower", "the GEMM and vector ops a workload becomes, and their tensors",
			{ "lower -w WORKLOAD [-c CONFIG] [options]" },
			"Print the GEMM and vector ops the workload becomes, then the tensors each op reads\n"
			"and writes and every tensor's kind, size, producer and last reader.\n",
			NULL, NULL, true, cmd_lower },
	[CMD_CONFIG] = { "config", "every config key with its resolved value, unit and doc",
			 { "config --dump [-c CONFIG]... [--set key.path=value]..." },
			 "Print every config key with its resolved value, unit and doc, as YAML that loads back\n"
			 "to the identical config.\n",
			 NULL, NULL, true, cmd_config },
	[CMD_LAB] = { "lab", "watch one GEMM move through the PE registers, cycle by cycle",
		      { "lab -c CONFIG --gemm MxKxN [options]" },
		      "Watch a GEMM with seeded values move through the PE registers cycle by cycle (arrays\n"
		      "up to 16 x 16): a grid on the terminal, a page that animates ws, os and is (--html),\n"
		      "or every PE register of one dataflow in a VCD trace (--vcd).\n",
		      NULL, "lab runs one GEMM on the functional model with ideal memory", true, cmd_lab },
	[CMD_SWEEP] = { "sweep", "run the points of a sweep spec, here or on a cluster; merge; plot",
			{ "sweep SPEC.yaml -o DIR [-j N] [--points I-J] [--no-reuse] [--plot [VIEW]]",
			  "sweep SPEC.yaml -o DIR --emit parallel|slurm [--chunk-size C] [--no-reuse]",
			  "sweep --merge DIR [--plot [VIEW]]", "sweep --plot DIR [VIEW]" },
			"Run every point of a sweep spec (configs, workloads, axes, zip) in worker processes:\n"
			"DIR/points/<hash>.json each, then DIR/sweep.csv; run again, it skips the points done.\n"
			"--emit writes the jobs for a cluster instead, --merge builds sweep.csv from the point\n"
			"files and lists those missing (exit status 4), --plot draws sweep.csv into DIR/plots.\n"
			"VIEW: --hold AXIS=VALUE (again for more), --pareto X,Y, --heatmaps all.\n",
			"SPEC.yaml", NULL, false, cmd_sweep },
	[CMD_TRACE] = { "trace", "check an event trace and recompute its totals from the events",
			{ "trace FILE.gz [--records]" },
			"Check an event trace written by tpusim run --trace and recompute its cycles, HBM bytes\n"
			"and cycles by category from the events alone.\n",
			"FILE.gz", NULL, false, cmd_trace },
};

/* What an option's value names: nothing, an input, or an output directory or file (see cli_prepare_outputs). */
enum { P_NONE, P_IN, P_DIR, P_FILE };

#define NO_FIELD SIZE_MAX
#define A(field) offsetof(struct cli_args, field)

struct cli_opt {
	const struct run_option *run;   /* a run option: name, value and field (in a->rq) from it; or NULL: */
	const char *name, *alias;       /* "-o", "--out"; alias may be NULL */
	const char *arg;                /* the value as help shows it; NULL: a flag, or a choice's names */
	struct optval val;
	long long def;                  /* OPT_CHOICE, OPT_INT: the field before the option is given */
	size_t off;                     /* in struct cli_args; NO_FIELD: -h */
	unsigned cmds;                  /* the commands that take it (C(...)) */
	int path;                       /* P_*: what the value names */
	const char *suffix;             /* P_FILE: what the command appends to the value (".vcd") */
	const char *help;               /* one line; NULL: the run option's doc */
};

#define RUN(ro, cmds, path, suffix, help) { &run_options[ro], NULL, NULL, NULL, { 0 }, 0, 0, cmds, path, suffix, help }
#define TEXT(name, alias, arg, field, cmds, path, help) \
	{ NULL, name, alias, arg, { .kind = OPT_TEXT }, 0, A(field), cmds, path, NULL, help }
#define FLAG(name, field, cmds, help) { NULL, name, NULL, NULL, { .kind = OPT_FLAG }, 0, A(field), cmds, P_NONE, NULL, help }

/* One row per option and meaning, in the order help lists them. */
static const struct cli_opt opts[] = {
	RUN(RO_CONFIGS, C_ALL & ~(C(SWEEP) | C(TRACE)), P_IN, NULL, NULL),
	RUN(RO_WORKLOAD, C_SIM | C(LOWER), P_IN, NULL, NULL),
	TEXT("-o", "--out", "DIR", out, C(RUN), P_DIR,
	     "write DIR/layers.csv, DIR/summary.json (and COMPUTE_REPORT.csv); parents made"),
	TEXT("-o", "--out", "FILE", out, C(ROOFLINE), P_FILE, "the chart, FILE.png or FILE.svg"),
	TEXT("-o", "--out", "FILE", out, C(COMPARE), P_FILE,
	     "draw cycles and energy against ws by category into FILE.png or FILE.svg"),
	RUN(RO_DATAFLOW, C(RUN) | C(ROOFLINE) | C(LAB), P_NONE, NULL, NULL),
	TEXT("--dataflows", NULL, "LIST", dataflows, C(COMPARE), P_NONE,
	     "the dataflows to compare, e.g. ws,os (default ws,os,is)"),
	RUN(RO_MODEL, C(RUN) | C(ROOFLINE), P_NONE, NULL, NULL),
	RUN(RO_MODEL, C(COMPARE), P_NONE, NULL, "cycle (default) or analytic (instant closed form)"),
	RUN(RO_IDEAL_MEMORY, C_SIM, P_NONE, NULL, NULL),
	RUN(RO_BATCH, C_SIM | C(LOWER), P_NONE, NULL, NULL),
	RUN(RO_TRAIN, C_SIM | C(LOWER) | C(CONFIG), P_NONE, NULL, NULL),
	RUN(RO_SEED, C(RUN) | C(ROOFLINE) | C(LAB), P_NONE, NULL, NULL),
	TEXT("--save-outputs", NULL, "DIR", save, C(RUN), P_DIR, "--model functional: each GEMM's result as DIR/<op>.npy"),
	TEXT("--chakra", NULL, "PREFIX", chakra, C(RUN), P_NONE,
	     "write Chakra traces PREFIX.<rank>.et, one a chip (ASTRA-sim's input)"),
	RUN(RO_VCD, C(RUN), P_FILE, ".vcd", NULL),
	RUN(RO_VCD, C(LAB), P_FILE, ".vcd", "write every PE register of the one dataflow to BASE.vcd instead of the grid"),
	TEXT("--plot", NULL, "DIR", plot, C(RUN), P_DIR, "also draw DIR/cycles.png (cycles by category) and DIR/roofline.png"),
	RUN(RO_TRACE, C(RUN), P_FILE, NULL, NULL),
	RUN(RO_DRAM_TRACE, C(RUN), P_FILE, NULL, NULL),
	RUN(RO_DRAM_FORMAT, C(RUN), P_NONE, NULL, NULL),
	FLAG("--timing", timing, C(RUN), "print wall time, simulated cycles per second and peak RSS"),
	RUN(RO_REUSE, C_SIM, P_NONE, NULL, NULL),
	FLAG("--csv", csv, C(COMPARE) | C(LOWER), "CSV instead of the table"),
	FLAG("--dump", dump, C(CONFIG), "print every key (config's one action)"),
	TEXT("--gemm", NULL, "MxKxN", gemm, C(LAB), P_NONE, "the GEMM: A (M x K) times B (K x N)"),
	TEXT("--cycles", NULL, "A..B", cycles, C(LAB), P_NONE, "show cycles A to B only"),
	FLAG("--step", step, C(LAB), "wait for Enter after each cycle (q quits)"),
	{ NULL, "--format", NULL, NULL, { .kind = OPT_CHOICE, .names = cli_lab_formats }, -1, A(format), C(LAB), P_NONE, NULL,
	  "the grid as text (default) or JSON" },
	TEXT("--html", NULL, "FILE", html, C(LAB), P_FILE, "write one page that animates ws, os and is side by side"),
	RUN(RO_SET, C_ALL & ~(C(SWEEP) | C(TRACE)), P_NONE, NULL, NULL),
	FLAG("--records", records, C(TRACE), "also print every record, one line each"),
	TEXT("-o", "--out", "DIR", out, C(SWEEP), P_DIR, "the sweep's directory; parents made"),
	{ NULL, "-j", "--jobs", "N", { .kind = OPT_INT, .lo = 1, .hi = SWEEP_MAX_JOBS, .is_long = true }, 1, A(jobs), C(SWEEP),
	  P_NONE, NULL, "worker processes (default 1, at most 64)" },
	TEXT("--points", NULL, "I-J", points, C(SWEEP), P_NONE,
	     "only points I to J (from 0, in sweep.csv's order), no sweep.csv: one job"),
	RUN(RO_REUSE, C(SWEEP), P_NONE, NULL, "simulate every op (each worker reuses identical ops' results otherwise)"),
	FLAG("--plot", sweep_plot, C(SWEEP), "then draw the charts into DIR/plots (alone: sweep --plot DIR)"),
	{ NULL, "--emit", NULL, NULL, { .kind = OPT_CHOICE, .names = sweep_engine_names }, -1, A(emit), C(SWEEP), P_NONE, NULL,
	  "run nothing; write DIR/jobs.txt (GNU parallel) or DIR/sweep.sbatch (Slurm)" },
	{ NULL, "--chunk-size", NULL, "C", { .kind = OPT_INT, .lo = 1, .hi = SWEEP_MAX_POINTS, .is_long = true }, 0, A(chunk),
	  C(SWEEP), P_NONE, NULL, "with --emit: C points per job (default 10)" },
	TEXT("--merge", NULL, "DIR", merge, C(SWEEP), P_DIR, "build DIR/sweep.csv from the point files there, listing those missing"),
	{ NULL, "--hold", NULL, "AXIS=VALUE", { .kind = OPT_LIST, .max = SWEEPPLOT_MAX_HOLDS, .items = "holds",
	  .count_off = A(nhold) }, 0, A(hold), C(SWEEP), P_NONE, NULL,
	  "with --plot: charts hold AXIS at VALUE (again: more); the rest at the best by cycles" },
	TEXT("--pareto", NULL, "X,Y", pareto, C(SWEEP), P_NONE,
	     "with --plot: Pareto charts of two of latency, energy, area (default " SWEEPPLOT_PARETO_DEFAULT ")"),
	{ NULL, "--heatmaps", NULL, NULL, { .kind = OPT_CHOICE, .names = cli_heatmaps }, -1, A(heatmaps), C(SWEEP), P_NONE,
	  NULL, "with --plot: heatmaps of the first 8 workload x dataflow pairs (default), or all" },
	{ NULL, "-h", "--help", NULL, { .kind = OPT_FLAG }, 0, NO_FIELD, C_ALL, P_NONE, NULL, "print this help" },
};

#define NOPTS (sizeof opts / sizeof opts[0])
_Static_assert(NOPTS <= CLI_MAX_OPTS, "CLI_MAX_OPTS: the option rows");

/*
 * The hints that follow the refusal of another command's option, where the
 * command has a better way to say what was meant.
 */
static const struct {
	unsigned cmds;
	const char *opt, *hint;
} hints[] = {
	{ C(COMPARE), "--dataflow", "compare takes --dataflows, e.g. --dataflows ws,os,is" },
	{ C(COMPARE), "--vcd", "trace one dataflow with tpusim run --dataflow DF --vcd BASE" },
	{ C(COMPARE), "--plot", "compare draws its chart with -o FILE.png or FILE.svg" },
	{ C(COMPARE), "--timing", "time one dataflow with tpusim run --dataflow DF --timing" },
	{ C(COMPARE), "--dump", "print the config with tpusim config --dump" },
	{ C(COMPARE), "--seed", "seeds pick the operands of tpusim run --model functional" },
	{ C(COMPARE), "--save-outputs", "save results with tpusim run --model functional --save-outputs DIR" },
};

static const char *opt_name(const struct cli_opt *o)
{
	return o->run ? o->run->flag : o->name;
}

static const char *opt_alias(const struct cli_opt *o)
{
	return o->run ? o->run->alias : o->alias;
}

static const struct optval *opt_val(const struct cli_opt *o)
{
	return o->run ? &o->run->val : &o->val;
}

static bool opt_is(const struct cli_opt *o, const char *name)
{
	return !strcmp(name, opt_name(o)) || (opt_alias(o) && !strcmp(name, opt_alias(o)));
}

static bool takes_value(const struct cli_opt *o)
{
	return opt_val(o)->kind != OPT_FLAG && opt_val(o)->kind != OPT_BOOL;
}

/* The row of option name for the commands cmds; else its first row (another command's); else NULL. */
static const struct cli_opt *opt_find(const char *name, unsigned cmds)
{
	const struct cli_opt *any = NULL;
	for (size_t i = 0; i < NOPTS; i++) {
		if (!opt_is(&opts[i], name))
			continue;
		if (opts[i].cmds & cmds)
			return &opts[i];
		if (!any)
			any = &opts[i];
	}
	return any;
}

static const struct cli_command *command_find(const char *name)
{
	for (size_t i = 0; i < CMD_COUNT; i++)
		if (!strcmp(name, cli_commands[i].name))
			return &cli_commands[i];
	return NULL;
}

static unsigned command_bit(const struct cli_command *c)
{
	return 1u << (c - cli_commands);
}

/* The first command whose bit is in cmds. */
static const char *command_of(unsigned cmds)
{
	for (size_t i = 0; i < CMD_COUNT; i++)
		if (cmds & 1u << i)
			return cli_commands[i].name;
	return "?";
}

/* "run, roofline, ..., trace" */
static const char *command_list(void)
{
	static char buf[200];
	buf[0] = '\0';
	for (size_t i = 0; i < CMD_COUNT; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "", cli_commands[i].name);
	return buf;
}

const char *cli_shown(int slot, const char *text)
{
	static char buf[2][LIMIT_QUOTE_BUF];
	return err_quote(buf[slot], sizeof buf[slot], text, LIMIT_PATH);
}

int cli_bad_arg(struct err *e, const char *opt, const char *what, const char *found)
{
	char q[300];
	return err_input(e, "%s: %s, found \"%s\"", opt, what, err_quote(q, sizeof q, found, 60));
}

/*
 * " (did you mean X?)" for the name among names (n of them, NULL ones
 * skipped) closest to name, or "". Options are compared without their
 * leading dashes, so that "--fast" is not near "--out".
 */
static const char *did_you_mean(const char *name, const char *const *names, size_t n, char *buf, size_t size)
{
	return cfg_did_you_mean(name, names, n, true, buf, size);
}

/* " (did you mean sweep?)" for the command closest to name, or "". */
static const char *command_hint(const char *name, char *buf, size_t size)
{
	const char *names[CMD_COUNT];
	for (size_t i = 0; i < CMD_COUNT; i++)
		names[i] = cli_commands[i].name;
	return did_you_mean(name, names, CMD_COUNT, buf, size);
}

static int unknown_command(const char *name, struct err *e)
{
	char q[300], hint[100];
	return err_input(e, "expected a command (%s), found \"%s\"%s; try tpusim --help", command_list(),
			 err_quote(q, sizeof q, name, 60), command_hint(name, hint, sizeof hint));
}

/* An option that no row of the command c has (name, as typed). */
static int unknown_option(const char *name, const char *cmd, unsigned bit, struct err *e)
{
	const char *names[2 * NOPTS], *eq = strchr(name, '=');
	char q[300], c[300], hint[400];
	size_t n = 0;
	/* --model=analytic: options take their value as the next word. */
	if (eq && name[0] == '-') {
		char opt[64], v[300];
		const struct cli_opt *o;
		snprintf(opt, sizeof opt, "%.*s", (int)(eq - name), name);
		if ((o = opt_find(opt, bit)) && (o->cmds & bit) && takes_value(o)) {
			snprintf(hint, sizeof hint, " (did you mean %s %s?)", opt, err_quote(v, sizeof v, eq + 1, 60));
			return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an unknown option%s",
					 err_quote(q, sizeof q, name, 60), err_quote(c, sizeof c, cmd, 60), hint);
		}
	}
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].cmds & bit) {
			names[n++] = opt_name(&opts[i]);
			names[n++] = opt_alias(&opts[i]);
		}
	return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an unknown option%s",
			 err_quote(q, sizeof q, name, 60), err_quote(c, sizeof c, cmd, 60),
			 did_you_mean(name, names, n, hint, sizeof hint));
}

/* "-c, --config CONFIG" */
static int opt_label(const struct cli_opt *o, char *buf, size_t size)
{
	char arg[100];
	optval_label(opt_val(o), o->run ? o->run->arg : o->arg, arg, sizeof arg);
	if (!takes_value(o))
		arg[0] = '\0';
	return snprintf(buf, size, "%s%s%s%s%s", opt_name(o), opt_alias(o) ? ", " : "", opt_alias(o) ? opt_alias(o) : "",
			*arg ? " " : "", arg);
}

/* tpusim CMD --help: the usage, what it does, then its options, one line each. */
static void help_command(FILE *out, const struct cli_command *c)
{
	char label[128];
	int width = 0;
	unsigned bit = command_bit(c);
	for (int i = 0; i < 4 && c->usage[i]; i++)
		fprintf(out, "%s tpusim %s\n", i ? "      " : "usage:", c->usage[i]);
	fprintf(out, "\n%s\noptions:\n", c->about);
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].cmds & bit) {
			int n = opt_label(&opts[i], label, sizeof label);
			width = n > width ? n : width;
		}
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].cmds & bit) {
			opt_label(&opts[i], label, sizeof label);
			fprintf(out, "  %-*s  %s\n", width, label, opts[i].help ? opts[i].help : opts[i].run->doc);
		}
}

/* tpusim --help: the commands, the presets, the exit statuses. */
static void help_overview(FILE *out)
{
	char presets[4096];
	fprintf(out, "usage: tpusim <command> [options]\n       tpusim help <command>    (or tpusim <command> --help): "
		"its options\n\ncommands:\n");
	for (size_t i = 0; i < CMD_COUNT; i++)
		fprintf(out, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
	config_presets(presets, sizeof presets);
	fprintf(out, "\nCONFIG: a config YAML file or a preset's name:");
	/* The presets, wrapped at 90 columns. */
	int col = 0;
	for (char *p = presets, *next; *p; p = next) {
		size_t len = strcspn(p, ",");
		next = p + len + (p[len] == ',') + (p[len] == ',' && p[len + 1] == ' ');
		col = col == 0 || col + (int)len + 2 > 90 ? 2 : col;
		fprintf(out, "%s%.*s%s", col == 2 ? "\n  " : " ", (int)len, p, *next ? "," : "\n");
		col += (int)len + 2;
	}
	if (!*presets)
		fprintf(out, " none found next to this tpusim\n");
	fprintf(out, "-c may be given again: each later file overrides the keys it sets (-c tpu_v4 -c memory/hbm3).\n"
		"WORKLOAD: a workload YAML file, a SCALE-Sim topology CSV or a shipped workload's name (resnet50).\n"
		"exit status: 0 ok, 1 simulation error, 2 bad input, 3 out of memory, 4 sweep --merge\n"
		"with points missing, 130 SIGINT, 143 SIGTERM (128 + the signal that stopped it)\n");
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int cli_help(int argc, char **argv, FILE *out, struct err *e)
{
	const struct cli_command *c;
	char q[300], hint[100];
	bool overview;
	if (argc < 2)
		return -1;
	overview = is_help(argv[1]);
	if (!overview && !strcmp(argv[1], "help")) {
		if (argc > 3)
			return err_input(e, "help: expected one command, found another, \"%s\"",
					 err_quote(q, sizeof q, argv[3], 60));
		if (argc == 2 || !strcmp(argv[2], "help"))
			overview = true;
		else if (!(c = command_find(argv[2])))
			return err_input(e, "help: expected a command (%s), found \"%s\"%s", command_list(),
					 err_quote(q, sizeof q, argv[2], 60), command_hint(argv[2], hint, sizeof hint));
		else
			help_command(out, c);
	} else if (!overview) {
		bool asked = false;
		if (!(c = command_find(argv[1]))) {
			for (int i = 2; i < argc; i++)
				if (is_help(argv[i]))
					return unknown_command(argv[1], e);
			return -1;
		}
		for (int i = 2; i < argc && !asked; i++) {
			const struct cli_opt *o = opt_find(argv[i], command_bit(c));
			asked = is_help(argv[i]);
			i += o && takes_value(o) && (o->cmds & command_bit(c));
		}
		if (!asked)
			return -1;
		help_command(out, c);
	}
	if (overview)
		help_overview(out);
	return 0;
}

/* The refusal of o, an option of another command than c. */
static int other_command(const char *name, const struct cli_opt *o, const struct cli_command *c, struct err *e)
{
	const char *hint = c->refusal;
	for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
		if ((hints[i].cmds & command_bit(c)) && !strcmp(hints[i].opt, opt_name(o)))
			hint = hints[i].hint;
	return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an option of tpusim %s%s%s", name,
			 c->name, command_of(o->cmds), hint ? "; " : "", hint ? hint : "");
}

/* The field of row o in a. */
static void *field_base(struct cli_args *a, const struct cli_opt *o, size_t *off)
{
	*off = o->run ? o->run->off : o->off;
	return o->run ? (void *)&a->rq : (void *)a;
}

/* Reads the value v of option row o (given as name) into a. */
static int take_value(struct cli_args *a, const struct cli_opt *o, const char *name, const char *v, struct err *e)
{
	const struct optval *val = opt_val(o);
	char what[300];
	size_t off;
	void *base = field_base(a, o, &off);
	bool full;
	/* Options that name a file or directory: an empty value names nothing. */
	if (!*v && o->path != P_NONE)
		return cli_bad_arg(e, name, "expected a path", v);
	if (optval_parse(val, v, 0, base, off, &full) == 0)
		return 0;
	if (full)
		return err_input(e, "%s: expected at most %d %s, found more", name, val->max, val->items);
	optval_expected(val, false, 0, what, sizeof what);
	char expected[320], q[300], hint[100] = "";
	snprintf(expected, sizeof expected, "expected %s", what);
	/* A choice's nearest name, when one is nearer than the others ("wss": ws; "xs" is as near os as ws). */
	if (val->kind == OPT_CHOICE) {
		size_t n = 0, ties = 0;
		while (val->names[n])
			n++;
		if (cfg_nearest(v, val->names, n, false, &ties) != SIZE_MAX && ties == 1)
			cfg_did_you_mean(v, val->names, n, false, hint, sizeof hint);
	}
	return err_input(e, "%s: %s, found \"%s\"%s", name, expected, err_quote(q, sizeof q, v, 60), hint);
}

/*
 * An option of one value given again (at i; first at `first`): the second
 * would silently replace the first, as a key given twice in a file would.
 */
static int given_twice(const struct cli_opt *o, char **argv, int i, int first, struct err *e)
{
	char q[300], v[300];
	/* The first as written: "-w mlp", or "-j2" in one word. */
	bool joined = !opt_is(o, argv[first]);
	return err_input(e, "%s: expected the option once, found it again (first %s%s%s)", argv[i],
			 err_quote(q, sizeof q, argv[first], 60), joined ? "" : " ",
			 joined ? "" : err_quote(v, sizeof v, argv[first + 1], 60));
}

/* A key in two --set (argv[sets[0 .. n)], each "key=value"): refused at the second, as a key twice in a file is. */
static int set_twice(char **argv, const int *sets, int n, struct err *e)
{
	/* Each in the form key=value first (config_assignment's message), so an empty key is said as such. */
	for (int i = 0; i < n; i++)
		if (config_assignment(argv[sets[i]], NULL, e) < 0)
			return -1;
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++) {
			const char *a = argv[sets[i]], *b = argv[sets[j]];
			size_t la = strcspn(a, "="), lb = strcspn(b, "=");
			char key[300], q[300], first[300];
			if (la != lb || strncmp(a, b, la) || !a[la] || !b[lb])
				continue;
			snprintf(key, sizeof key, "%.*s", (int)la, a);
			return err_at(e, (struct pos){ "--set", 1, 1 }, err_quote(q, sizeof q, key, 60),
				      "expected each key once, found it again (first --set %s)",
				      err_quote(first, sizeof first, b, 100));
		}
	return 0;
}

/* Every field at its default: the run options' (options.h) and the rows' own. */
static void set_defaults(struct cli_args *a)
{
	memset(a, 0, sizeof *a);
	clock_gettime(CLOCK_MONOTONIC, &a->start);
	run_options_default(&a->rq);
	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_opt *o = &opts[i];
		if (o->run || o->off == NO_FIELD)
			continue;
		if (o->val.kind == OPT_CHOICE)
			*(int *)((char *)a + o->off) = (int)o->def;
		else if (o->val.kind == OPT_INT)
			*(long long *)((char *)a + o->off) = o->def;
	}
}

/*
 * A run option given for a model it does not apply to (run_option.models),
 * in a command that chooses the model (lab's is always the functional one).
 */
static int model_options(const struct cli_args *a, struct err *e)
{
	unsigned bit = command_bit(a->cmd);
	bool chooses = false;
	for (size_t i = 0; i < NOPTS; i++)
		chooses |= opts[i].run == &run_options[RO_MODEL] && (opts[i].cmds & bit);
	for (size_t i = 0; chooses && i < NOPTS; i++) {
		const struct run_option *r = opts[i].run;
		char want[100];
		if (!r || !a->at[i] || !(opts[i].cmds & bit) || run_option_applies(r, a->rq.model))
			continue;
		optval_expected(&run_options[RO_MODEL].val, false, r->models, want, sizeof want);
		return err_input(e, "%s: expected --model %s (%s), found --model %s", r->flag, want, r->models_why,
				 run_model_names[a->rq.model]);
	}
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_args *a, struct err *e)
{
	const struct cli_command *cmd;
	unsigned bit;
	int set_at = 0, sets[CONFIG_MAX_SETS], nsets = 0;

	set_defaults(a);
	if (argc < 2)
		return err_input(e, "expected a command (%s), found none; try tpusim --help", command_list());
	/* The command is the first word, so the first word that can be wrong: whatever follows is its. */
	if (!(cmd = command_find(argv[1])))
		return unknown_command(argv[1], e);
	a->cmd = cmd;
	bit = command_bit(cmd);
	for (int i = 2; i < argc; i++) {
		char name[64];
		const char *o = argv[i], *v = NULL;
		const struct cli_opt *row;
		if ((o[0] != '-' || !o[1]) && cmd->operand) {
			if (a->arg && !a->extra)
				a->extra = o;
			a->arg_at = a->arg ? a->arg_at : i;
			a->arg = a->arg ? a->arg : o;
			continue;
		}
		snprintf(name, sizeof name, "%s", o);
		row = opt_find(o, bit);
		/* -j2, -ofile: a one-letter option's value written on to it. */
		if (!row && o[0] == '-' && o[1] != '-' && o[1] && o[2]) {
			snprintf(name, sizeof name, "%.2s", o);
			row = opt_find(name, bit);
			if (row && (!(row->cmds & bit) || !takes_value(row)))
				row = NULL;
			v = row ? o + 2 : NULL;
			if (!row)
				snprintf(name, sizeof name, "%s", o);
		}
		/* "--set array.rows 64": the assignment was split in two words. */
		if (!row && o[0] != '-' && set_at == i - 1 && config_assignment(argv[i - 1], o, e) < 0)
			return -1;
		if (!row)
			return unknown_option(o, cmd->name, bit, e);
		if (!(row->cmds & bit))
			return other_command(o, row, cmd, e);
		if (a->at[row - opts] && takes_value(row) && opt_val(row)->kind != OPT_LIST)
			return given_twice(row, argv, i, a->at[row - opts], e);
		a->at[row - opts] = i;
		if (row->off == NO_FIELD && !row->run)
			continue;       /* -h: cli_help answered it */
		if (!takes_value(row)) {
			size_t off;
			void *base = field_base(a, row, &off);
			*(bool *)((char *)base + off) = true;   /* --ideal-memory, --no-reuse: the field the flag names */
			continue;
		}
		if (!v) {
			if (i + 1 >= argc)
				return err_input(e, "%s: expected a value after it, found the end of the command line", o);
			v = argv[++i];
		}
		if (take_value(a, row, strlen(name) < sizeof name - 1 ? name : o, v, e) < 0)
			return -1;
		if (row->run == &run_options[RO_SET]) {
			set_at = i;
			sets[nsets++] = i;  /* (take_value refused more than CONFIG_MAX_SETS) */
		}
	}
	if (set_twice(argv, sets, nsets, e) < 0)
		return -1;
	return model_options(a, e);
}

int cli_one_operand(const struct cli_args *a, struct err *e)
{
	char q[300];
	if (!a->extra)
		return 0;
	return err_input(e, "%s: expected one %s, found another, \"%s\"", a->cmd->name, a->cmd->operand,
			 err_quote(q, sizeof q, a->extra, 60));
}

int cli_given(const struct cli_args *a, const char *name)
{
	int at = 0;
	for (size_t i = 0; i < NOPTS; i++)
		if ((opts[i].cmds & command_bit(a->cmd)) && opt_is(&opts[i], name) && a->at[i] > at)
			at = a->at[i];
	return at;
}

/*
 * ---- output paths ----
 *
 * Every output an option names gets its missing parent directories before
 * anything runs (cli_make_parents); the directories made are removed again
 * when the command fails (cli_unmake_parents), so that a failed command leaves
 * nothing. Whether the output itself can be written is each command's check,
 * also made before the run.
 */
static struct {
	char *dir[64];
	int n;
} parents_made;

void cli_unmake_parents(void)
{
	while (parents_made.n > 0) {
		rmdir(parents_made.dir[--parents_made.n]);
		free(parents_made.dir[parents_made.n]);
	}
}

int cli_make_parents(const char *opt, const char *path, bool dir, struct err *e)
{
	char *p = strdup(path), *end;
	int rc = 0;
	if (!p)
		return err_nomem(e, NULL);
	end = p + strlen(p);
	while (end > p + 1 && end[-1] == '/')
		*--end = '\0';
	end = strrchr(p, '/');
	if (end)
		*end = '\0';
	for (char *s = p + 1; end && s <= end && rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		if (s[-1] == '/')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) == 0) {
			char *d = parents_made.n < (int)(sizeof parents_made.dir / sizeof parents_made.dir[0]) ? strdup(p) : NULL;
			if (d)
				parents_made.dir[parents_made.n++] = d;
		} else if (errno != EEXIST) {
			rc = dir ? err_input(e, "%s: expected a directory that can be created, found \"%s\" (%s)", opt,
					     cli_shown(0, path), strerror(errno))
				 : err_input(e, "%s: expected a writable path, found \"%s\" (%s)", opt, cli_shown(0, path),
					     strerror(errno));
		}
		*s = c;
	}
	free(p);
	return rc;
}

/*
 * Two outputs of one run at one file (--trace X --dram-trace ./X, a link and
 * its target, --vcd B with --trace B.vcd, -o D with --trace D/summary.json)
 * would overwrite each other: refused before anything is made. Files are
 * compared, not spellings (fsx_same_file).
 */
static int distinct_outputs(const struct cli_args *a, struct err *e)
{
	static const char *const reports[] = { "layers.csv", "summary.json", "COMPUTE_REPORT.csv", ".tpusim", "" };
	const char *name[8], *path[8];
	char buf[8][LIMIT_PATH_BUF];
	int n = 0;
	bool run = a->cmd == &cli_commands[CMD_RUN];
	if (a->rq.trace)
		name[n] = "--trace", path[n++] = a->rq.trace;
	if (a->rq.dram_trace)
		name[n] = "--dram-trace", path[n++] = a->rq.dram_trace;
	if (a->rq.vcd && a->cmd != &cli_commands[CMD_LAB]) {
		snprintf(buf[n], sizeof buf[n], "%s.vcd", a->rq.vcd);
		name[n] = "--vcd", path[n] = buf[n], n++;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++)
			if (fsx_same_file(path[i], path[j]))
				return err_input(e, "%s: expected a path of its own, found \"%s\", where %s writes too", name[i],
						 cli_shown(0, path[i]), name[j]);
		for (int r = 0; a->out && run && r < 5; r++) {
			char p[LIMIT_PATH_BUF];
			snprintf(p, sizeof p, *reports[r] ? "%s/%s" : "%s%s", a->out, reports[r]);
			if (fsx_same_file(path[i], p))
				return err_input(e, "%s: expected a path of its own, found \"%s\", which -o writes", name[i],
						 cli_shown(0, path[i]));
		}
	}
	return 0;
}

int cli_prepare_outputs(const struct cli_args *a, struct err *e)
{
	unsigned bit = command_bit(a->cmd);
	if (distinct_outputs(a, e) < 0)
		return -1;
	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_opt *o = &opts[i];
		size_t off;
		const void *base;
		const char *v;
		char path[LIMIT_PATH_BUF];
		if (!(o->cmds & bit) || (o->path != P_DIR && o->path != P_FILE) || opt_val(o)->kind != OPT_TEXT)
			continue;
		base = field_base((struct cli_args *)a, o, &off);
		if (!(v = *(const char *const *)((const char *)base + off)))
			continue;
		snprintf(path, sizeof path, "%s%s", v, o->suffix ? o->suffix : "");
		/* A file's path (a VCD's BASE too) that is a directory or ends in '/': refused before its parents are made. */
		if (o->path == P_FILE && fsx_file_path(v) != 0)
			return fsx_open_error(e, opt_name(o), v, errno);
		if (cli_make_parents(opt_name(o), path, o->path == P_DIR, e) < 0)
			return -1;
		if (o->path == P_FILE && fsx_file_path(path) != 0)
			return fsx_open_error(e, opt_name(o), path, errno);
	}
	return 0;
}
