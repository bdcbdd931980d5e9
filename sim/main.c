/*
 * main.c - the tpusim command line.
 *
 *   tpusim run -c CONFIG [-c MORE]... -w WORKLOAD [-o DIR] [--dataflow ws|os|is] [--model cycle|analytic|functional]
 *              [--ideal-memory] [--batch N] [--timing] [--vcd BASE] [--plot DIR] [--no-reuse] [--set key.path=value ...]
 *              [--seed N] [--save-outputs DIR] [--trace FILE.gz] [--dram-trace FILE.gz]
 *              [--dram-trace-format dramsim3|ramulator2]
 *   tpusim trace FILE.gz [--records]
 *   tpusim roofline -c CONFIG -w WORKLOAD -o FILE.png|FILE.svg [run options]
 *   tpusim compare -c CONFIG -w WORKLOAD [--dataflows ws,os,is] [--csv] [-o FILE.png|FILE.svg]
 *                  [--model cycle|analytic] [--ideal-memory] [--batch N] [--set key.path=value ...]
 *   tpusim lower -w WORKLOAD [-c CONFIG] [--batch N] [--csv] [--set ...]
 *   tpusim config --dump [-c CONFIG] [--set ...]
 *   tpusim lab -c CONFIG --gemm MxKxN [--dataflow ws|os|is] [--seed N] [--cycles A..B] [--step]
 *              [--format text|json] [--html FILE] [--vcd BASE]
 *   tpusim sweep SPEC.yaml -o DIR [-j N] [--points I-J] [--no-reuse] [--plot]
 *   tpusim sweep SPEC.yaml -o DIR --emit parallel|slurm [--chunk-size C] [--no-reuse]
 *   tpusim sweep --merge DIR
 *   tpusim sweep --plot DIR
 *   tpusim help [COMMAND]   (tpusim --help; tpusim COMMAND --help)
 *
 * CONFIG is a file or a preset's name (config_find). Every output path gets
 * its missing parents before anything runs; a failed command removes them.
 * The only place that prints errors and picks exit codes: 0 ok, 1 simulation
 * error, 2 bad input, 3 out of memory, 4 sweep --merge with points missing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "compare.h"
#include "config.h"
#include "fsx.h"
#include "lab.h"
#include "lower.h"
#include "npy.h"
#include "plot.h"
#include "report.h"
#include "run.h"
#include "sweep.h"
#include "sweepplot.h"
#include "tpusim.h"
#include "trace.h"
#include "workload.h"


struct args {
	const char *cmd;
	const char *configs[CONFIG_MAX_FILES], *workload, *out, *vcd, *plot, *dataflows, *save;
	const char *trace, *dram_trace;  /* run: the event trace, the DRAM trace */
	int dram_format;           /* enum trace_dram_format; -1: not given */
	int nconfigs;
	const char *sets[CONFIG_MAX_SETS];
	int nsets;
	int dataflow;              /* -1: the config's */
	int model;
	bool model_set, seed_set;  /* --model, --seed given */
	bool ideal, csv, dump, timing, no_reuse;
	int64_t batch;
	uint64_t seed;             /* functional, lab: random operands */
	const char *gemm, *cycles, *html, *format;   /* lab */
	bool step;                 /* lab */
	struct timespec start;     /* when tpusim started, for --timing */
};

static int fail(const struct err *e)
{
	fprintf(stderr, "%s\n", e->msg);
	return err_status(e);
}


/* Whether everything printed reached standard output: 0, or 1 with a message. */
static int flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "standard output: expected to write the results, found %s\n", strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

/* text as it may appear in a printed line (see err_quote), in a buffer of its own per slot. */
static const char *shown(int slot, const char *text)
{
	static char buf[2][LIMIT_QUOTE_BUF];
	return err_quote(buf[slot], sizeof buf[slot], text, LIMIT_PATH);
}

static int bad_arg(struct err *e, const char *opt, const char *fmt, const char *found)
{
	char q[300];
	return err_input(e, "%s: %s, found \"%s\"", opt, fmt, err_quote(q, sizeof q, found, 60));
}

/*
 * ---- commands and options ----
 *
 * One row per command and one per option (per meaning: -o names a directory
 * for run and a chart for roofline). The rows drive the parser (which option
 * takes a value, which field keeps it, which commands take it), the checks of
 * output paths made before anything runs, and every command's --help, one
 * line per option. An option is one row: a text value or a flag that only
 * needs its field names the field with A(...); one whose value is checked or
 * collected (NO_FIELD) gets its case in parse_args.
 */
enum { C_RUN = 1, C_ROOFLINE = 2, C_COMPARE = 4, C_LOWER = 8, C_CONFIG = 16, C_LAB = 32, C_SWEEP = 64, C_TRACE = 128 };

static const struct command {
	const char *name;
	unsigned bit;
	const char *summary;        /* one line, for tpusim --help */
	const char *usage[4];       /* each after "tpusim " */
	const char *about;          /* what it does, a few lines */
} commands[] = {
	{ "run", C_RUN, "simulate a workload: cycles, utilization, HBM traffic, roofline",
	  { "run -c CONFIG [-c MORE]... -w WORKLOAD [options]" },
	  "Simulate WORKLOAD on CONFIG and print per-layer and total cycles, utilization, HBM\n"
	  "traffic and the roofline. -o DIR also writes DIR/layers.csv and DIR/summary.json\n"
	  "(links into DIR/.tpusim/current, so that the two always come from one run), and\n"
	  "with array.scalesim_compat: true, DIR/COMPUTE_REPORT.csv in SCALE-Sim's columns.\n" },
	{ "roofline", C_ROOFLINE, "draw the roofline with every layer of a workload",
	  { "roofline -c CONFIG -w WORKLOAD -o FILE.png|FILE.svg [options]" },
	  "Draw the config's roofline with every layer of the workload and two canonical points.\n" },
	{ "compare", C_COMPARE, "the same workload under each dataflow, side by side",
	  { "compare -c CONFIG -w WORKLOAD [options]" },
	  "The same workload under each dataflow: what stays in the PEs, what streams, what is\n"
	  "re-read; folds, utilization, cycles and their ratio to ws, HBM bytes, energy, and why.\n" },
	{ "lower", C_LOWER, "the GEMM and vector ops a workload becomes, and their tensors",
	  { "lower -w WORKLOAD [-c CONFIG] [options]" },
	  "Print the GEMM and vector ops the workload becomes, then the tensors each op reads\n"
	  "and writes and every tensor's kind, size, producer and last reader.\n" },
	{ "config", C_CONFIG, "every config key with its resolved value, unit and doc",
	  { "config --dump [-c CONFIG]... [--set key.path=value]..." },
	  "Print every config key with its resolved value, unit and doc, as YAML that loads back\n"
	  "to the identical config.\n" },
	{ "lab", C_LAB, "watch one GEMM move through the PE registers, cycle by cycle",
	  { "lab -c CONFIG --gemm MxKxN [options]" },
	  "Watch a GEMM with seeded values move through the PE registers cycle by cycle (arrays\n"
	  "up to 16 x 16): a grid on the terminal, a page that animates ws, os and is (--html),\n"
	  "or every PE register of one dataflow in a VCD trace (--vcd).\n" },
	{ "sweep", C_SWEEP, "run the points of a sweep spec, here or on a cluster; merge; plot",
	  { "sweep SPEC.yaml -o DIR [-j N] [--points I-J] [--no-reuse] [--plot]",
	    "sweep SPEC.yaml -o DIR --emit parallel|slurm [--chunk-size C] [--no-reuse]",
	    "sweep --merge DIR [--plot]", "sweep --plot DIR" },
	  "Run every point of a sweep spec (configs, workloads, axes, zip) in worker processes:\n"
	  "DIR/points/<hash>.json each, then DIR/sweep.csv; run again, it skips the points done.\n"
	  "--emit writes the jobs for a cluster instead, --merge builds sweep.csv from the point\n"
	  "files and lists those missing (exit status 4), --plot draws sweep.csv into DIR/plots.\n" },
	{ "trace", C_TRACE, "check an event trace and recompute its totals from the events",
	  { "trace FILE.gz [--records]" },
	  "Check an event trace written by tpusim run --trace and recompute its cycles, HBM bytes\n"
	  "and cycles by category from the events alone.\n" },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])
#define C_SIM (C_RUN | C_ROOFLINE | C_COMPARE)
#define C_ALL (C_RUN | C_ROOFLINE | C_COMPARE | C_LOWER | C_CONFIG | C_LAB | C_SWEEP)

/* What an option's value names: nothing, an input, or an output directory or file (see make_parents). */
enum { P_NONE, P_IN, P_DIR, P_FILE };

#define NO_FIELD SIZE_MAX
#define A(field) offsetof(struct args, field)

static const struct opt {
	const char *name, *alias;   /* "-c", "--config"; alias may be NULL */
	const char *arg;            /* the value as help shows it; NULL: a flag */
	unsigned cmds;              /* the commands that take it (C_*) */
	size_t off;                 /* struct args: a bool (flag) or const char * (value) it sets; NO_FIELD: see parse_args */
	int path;                   /* P_*: what the value names */
	const char *suffix;         /* P_FILE: what the command appends to the value (".vcd") */
	const char *help;           /* one line */
} opts[] = {
	{ "-c", "--config", "CONFIG", C_ALL & ~C_SWEEP, NO_FIELD, P_IN, NULL,
	  "a config YAML file or preset name (tpu_v1); again to overlay one (memory/hbm3)" },
	{ "-w", "--workload", "WORKLOAD", C_SIM | C_LOWER, A(workload), P_IN, NULL,
	  "network: a workload YAML file or a SCALE-Sim topology CSV" },
	{ "-o", "--out", "DIR", C_RUN, A(out), P_DIR, NULL,
	  "write DIR/layers.csv, DIR/summary.json (and COMPUTE_REPORT.csv); parents made" },
	{ "-o", "--out", "FILE", C_ROOFLINE, A(out), P_FILE, NULL, "the chart, FILE.png or FILE.svg" },
	{ "-o", "--out", "FILE", C_COMPARE, A(out), P_FILE, NULL,
	  "draw cycles and energy against ws by category into FILE.png or FILE.svg" },
	{ "--dataflow", NULL, "ws|os|is", C_RUN | C_ROOFLINE | C_LAB, NO_FIELD, P_NONE, NULL,
	  "the dataflow instead of array.dataflow" },
	{ "--dataflows", NULL, "LIST", C_COMPARE, A(dataflows), P_NONE, NULL,
	  "the dataflows to compare, e.g. ws,os (default ws,os,is)" },
	{ "--model", NULL, "MODEL", C_RUN | C_ROOFLINE, NO_FIELD, P_NONE, NULL,
	  "cycle (default), analytic (instant closed form) or functional (PE values)" },
	{ "--model", NULL, "MODEL", C_COMPARE, NO_FIELD, P_NONE, NULL, "cycle (default) or analytic (instant closed form)" },
	{ "--ideal-memory", NULL, NULL, C_SIM, A(ideal), P_NONE, NULL,
	  "unbounded buffers and infinitely fast memory" },
	{ "--batch", NULL, "N", C_SIM | C_LOWER, NO_FIELD, P_NONE, NULL, "the batch instead of the workload's" },
	{ "--seed", NULL, "N", C_RUN | C_ROOFLINE | C_LAB, NO_FIELD, P_NONE, NULL,
	  "random operands of the functional model (default 1)" },
	{ "--save-outputs", NULL, "DIR", C_RUN, A(save), P_DIR, NULL,
	  "--model functional: each GEMM's result as DIR/<op>.npy" },
	{ "--vcd", NULL, "BASE", C_RUN, A(vcd), P_FILE, ".vcd",
	  "write BASE.vcd: the timeline (functional model: every PE register)" },
	{ "--vcd", NULL, "BASE", C_LAB, A(vcd), P_FILE, ".vcd",
	  "write every PE register of the one dataflow to BASE.vcd instead of the grid" },
	{ "--plot", NULL, "DIR", C_RUN, A(plot), P_DIR, NULL,
	  "also draw DIR/cycles.png (cycles by category) and DIR/roofline.png" },
	{ "--trace", NULL, "FILE.gz", C_RUN, A(trace), P_FILE, NULL,
	  "every load, fold, store and stall of the cycle model; tpusim trace reads it" },
	{ "--dram-trace", NULL, "FILE.gz", C_RUN, A(dram_trace), P_FILE, NULL,
	  "cycle model: every off-chip request in bursts, for DRAMsim3 or Ramulator 2.0" },
	{ "--dram-trace-format", NULL, "FORMAT", C_RUN, NO_FIELD, P_NONE, NULL,
	  "the DRAM trace's format: dramsim3 (default) or ramulator2" },
	{ "--timing", NULL, NULL, C_RUN, A(timing), P_NONE, NULL,
	  "print wall time, simulated cycles per second and peak RSS" },
	{ "--no-reuse", NULL, NULL, C_SIM, A(no_reuse), P_NONE, NULL,
	  "simulate every op, also those identical to an op already simulated" },
	{ "--csv", NULL, NULL, C_COMPARE | C_LOWER, A(csv), P_NONE, NULL, "CSV instead of the table" },
	{ "--dump", NULL, NULL, C_CONFIG, A(dump), P_NONE, NULL, "print every key (config's one action)" },
	{ "--gemm", NULL, "MxKxN", C_LAB, A(gemm), P_NONE, NULL, "the GEMM: A (M x K) times B (K x N)" },
	{ "--cycles", NULL, "A..B", C_LAB, A(cycles), P_NONE, NULL, "show cycles A to B only" },
	{ "--step", NULL, NULL, C_LAB, A(step), P_NONE, NULL, "wait for Enter after each cycle (q quits)" },
	{ "--format", NULL, "text|json", C_LAB, NO_FIELD, P_NONE, NULL, "the grid as text (default) or JSON" },
	{ "--html", NULL, "FILE", C_LAB, A(html), P_FILE, NULL, "write one page that animates ws, os and is side by side" },
	{ "--set", NULL, "key.path=value", C_ALL & ~C_SWEEP, NO_FIELD, P_NONE, NULL,
	  "override one config key, checked like the file; again for more" },
	/* trace's and sweep's own parsers (cmd_trace, cmd_sweep) read these; they are here for --help. */
	{ "--records", NULL, NULL, C_TRACE, NO_FIELD, P_NONE, NULL, "also print every record, one line each" },
	{ "-o", "--out", "DIR", C_SWEEP, NO_FIELD, P_DIR, NULL, "the sweep's directory; parents made" },
	{ "-j", "--jobs", "N", C_SWEEP, NO_FIELD, P_NONE, NULL, "worker processes (default 1, at most 64)" },
	{ "--points", NULL, "I-J", C_SWEEP, NO_FIELD, P_NONE, NULL,
	  "only points I to J (from 0, in sweep.csv's order), no sweep.csv: one job" },
	{ "--no-reuse", NULL, NULL, C_SWEEP, NO_FIELD, P_NONE, NULL,
	  "simulate every op (each worker reuses identical ops' results otherwise)" },
	{ "--plot", NULL, NULL, C_SWEEP, NO_FIELD, P_NONE, NULL,
	  "then draw the charts into DIR/plots (alone: sweep --plot DIR)" },
	{ "--emit", NULL, "parallel|slurm", C_SWEEP, NO_FIELD, P_NONE, NULL,
	  "run nothing; write DIR/jobs.txt (GNU parallel) or DIR/sweep.sbatch (Slurm)" },
	{ "--chunk-size", NULL, "C", C_SWEEP, NO_FIELD, P_NONE, NULL, "with --emit: C points per job (default 10)" },
	{ "--merge", NULL, "DIR", C_SWEEP, NO_FIELD, P_DIR, NULL,
	  "build DIR/sweep.csv from the point files there, listing those missing" },
	{ "-h", "--help", NULL, C_ALL | C_TRACE, NO_FIELD, P_NONE, NULL, "print this help" },
};

#define NOPTS (sizeof opts / sizeof opts[0])

static bool opt_is(const struct opt *o, const char *name)
{
	return !strcmp(name, o->name) || (o->alias && !strcmp(name, o->alias));
}

/* The row of option name for the command cmd; else its first row (another command's); else NULL. */
static const struct opt *opt_find(const char *name, unsigned cmd)
{
	const struct opt *any = NULL;
	for (size_t i = 0; i < NOPTS; i++) {
		if (!opt_is(&opts[i], name))
			continue;
		if (opts[i].cmds & cmd)
			return &opts[i];
		if (!any)
			any = &opts[i];
	}
	return any;
}

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* The first command whose bit is in cmds. */
static const char *command_of(unsigned cmds)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (cmds & commands[i].bit)
			return commands[i].name;
	return "?";
}

/* "-c, --config CONFIG" */
static int opt_label(const struct opt *o, char *buf, size_t size)
{
	return snprintf(buf, size, "%s%s%s%s%s", o->name, o->alias ? ", " : "", o->alias ? o->alias : "",
			o->arg ? " " : "", o->arg ? o->arg : "");
}

/* tpusim CMD --help: the usage, what it does, then its options, one line each. */
static void help_command(FILE *out, const struct command *c)
{
	char label[128];
	int width = 0;
	for (int i = 0; i < 4 && c->usage[i]; i++)
		fprintf(out, "%s tpusim %s\n", i ? "      " : "usage:", c->usage[i]);
	fprintf(out, "\n%s\noptions:\n", c->about);
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].cmds & c->bit) {
			int n = opt_label(&opts[i], label, sizeof label);
			width = n > width ? n : width;
		}
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].cmds & c->bit) {
			opt_label(&opts[i], label, sizeof label);
			fprintf(out, "  %-*s  %s\n", width, label, opts[i].help);
		}
}

/* tpusim --help: the commands, the presets, the exit statuses. */
static void help_overview(FILE *out)
{
	char presets[4096];
	fprintf(out, "usage: tpusim <command> [options]\n       tpusim help <command>    (or tpusim <command> --help): "
		"its options\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
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
		"WORKLOAD: a workload YAML file or a SCALE-Sim topology CSV.\n"
		"exit status: 0 ok, 1 simulation error, 2 bad input, 3 out of memory, 4 sweep --merge\n"
		"with points missing\n");
}

/*
 * tpusim help [CMD], tpusim --help, tpusim CMD --help (-h anywhere an option
 * may stand). Returns the exit status, or -1 when argv asks for no help.
 */
static int help(int argc, char **argv, struct err *e)
{
	const struct command *c;
	char q[300];
	bool overview;
	if (argc < 2)
		return -1;
	overview = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
	if (!overview && !strcmp(argv[1], "help")) {
		if (argc > 3)
			return err_input(e, "help: expected one command, found another, \"%s\"",
					 err_quote(q, sizeof q, argv[3], 60));
		if (argc == 2 || !strcmp(argv[2], "help"))
			overview = true;
		else if (!(c = command_find(argv[2])))
			return err_input(e, "help: expected a command (run, roofline, compare, lower, config, lab, sweep, trace), "
					 "found \"%s\"", err_quote(q, sizeof q, argv[2], 60));
		else
			help_command(stdout, c);
	} else if (!overview) {
		bool asked = false;
		if (!(c = command_find(argv[1]))) {
			for (int i = 2; i < argc; i++)
				if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
					return err_input(e, "expected a command (run, lower, config, roofline, compare, lab, "
							 "sweep, trace), found \"%s\"; try tpusim --help", err_quote(q, sizeof q, argv[1], 60));
			return -1;
		}
		for (int i = 2; i < argc && !asked; i++) {
			const struct opt *o = opt_find(argv[i], c->bit);
			asked = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
			i += o && o->arg && (o->cmds & c->bit);
		}
		if (!asked)
			return -1;
		help_command(stdout, c);
	}
	if (overview)
		help_overview(stdout);
	return flush_stdout();
}

/*
 * ---- output paths ----
 *
 * Every output an option names gets its missing parent directories before
 * anything runs (make_parents); the directories made are removed again when
 * the command fails (unmake_parents), so that a failed command leaves nothing.
 * Whether the output itself can be written is each command's check, also made
 * before the run.
 */
static struct {
	char *dir[64];
	int n;
} parents_made;

static void unmake_parents(void)
{
	while (parents_made.n > 0) {
		rmdir(parents_made.dir[--parents_made.n]);
		free(parents_made.dir[parents_made.n]);
	}
}

/*
 * mkdir -p of the directories above path (not path itself), each one made
 * remembered. dir: the option names a directory (for the message).
 */
static int make_parents(const char *opt, const char *path, bool dir, struct err *e)
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
					     shown(0, path), strerror(errno))
				 : err_input(e, "%s: expected a writable path, found \"%s\" (%s)", opt, shown(0, path),
					     strerror(errno));
		}
		*s = c;
	}
	free(p);
	return rc;
}

static int parse_args(int argc, char **argv, struct args *a, struct err *e)
{
	memset(a, 0, sizeof *a);
	clock_gettime(CLOCK_MONOTONIC, &a->start);
	a->dataflow = -1;
	a->model = MODEL_CYCLE;
	a->seed = RUN_DEFAULT_SEED;
	a->dram_format = -1;
	if (argc < 2)
		return err_input(e, "expected a command (run, lower, config, roofline, compare, lab, sweep, trace), found none; try tpusim --help");
	a->cmd = argv[1];
	const struct command *cmd = command_find(a->cmd);
	unsigned bit = cmd ? cmd->bit : 0;
	for (int i = 2; !cmd && i < argc; i++) {
		const struct opt *row = opt_find(argv[i], 0);
		char q[300], c[300];
		if (!row)
			return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an unknown option",
					 err_quote(q, sizeof q, argv[i], 60), err_quote(c, sizeof c, a->cmd, 60));
		i += row->arg != NULL;
	}
	if (!cmd) {
		char q[300];
		return err_input(e, "expected a command (run, lower, config, roofline, compare, lab, sweep, trace), found \"%s\"; "
				 "try tpusim --help", err_quote(q, sizeof q, a->cmd, 60));
	}
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const struct opt *row = opt_find(o, bit);
		char q[300], c[300];
		if (!row)
			return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an unknown option",
					 err_quote(q, sizeof q, o, 60), err_quote(c, sizeof c, a->cmd, 60));
		/*
		 * Another command's option: compare and lab refuse those themselves,
		 * saying what to use instead; the others here.
		 */
		if (!(row->cmds & bit) && (!(bit & (C_COMPARE | C_LAB)) || row->cmds == C_SWEEP))
			return err_input(e, "%s: expected an option of tpusim %s (see tpusim --help), found an option of "
					 "tpusim %s", o, err_quote(c, sizeof c, a->cmd, 60), command_of(row->cmds));
		if (!row->arg) {
			SIM_ASSERT(row->off != NO_FIELD);   /* -h: help() answered it */
			*(bool *)((char *)a + row->off) = true;
			continue;
		}
		if (!v)
			return err_input(e, "%s: expected a value after it, found the end of the command line", o);
		/* Options that name a file or directory: an empty value names nothing. */
		if (!*v && row->path != P_NONE)
			return bad_arg(e, o, "expected a path", v);
		i++;
		if (row->off != NO_FIELD) {
			*(const char **)((char *)a + row->off) = v;
			continue;
		}
		if (!strcmp(o, "-c") || !strcmp(o, "--config")) {
			if (a->nconfigs == CONFIG_MAX_FILES)
				return err_input(e, "%s: expected at most %d config files, found more", o, CONFIG_MAX_FILES);
			a->configs[a->nconfigs++] = v;
		}
		else if (!strcmp(o, "--format")) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return bad_arg(e, o, "expected text or json", v);
			a->format = v;
		} else if (!strcmp(o, "--dram-trace-format")) {
			for (int f = 0; trace_dram_format_names[f]; f++)
				if (!strcmp(v, trace_dram_format_names[f]))
					a->dram_format = f;
			if (a->dram_format < 0)
				return bad_arg(e, o, "expected dramsim3 or ramulator2", v);
		} else if (!strcmp(o, "--set")) {
			if (a->nsets == CONFIG_MAX_SETS)
				return err_input(e, "--set: expected at most %d overrides, found more", CONFIG_MAX_SETS);
			a->sets[a->nsets++] = v;
		} else if (!strcmp(o, "--dataflow")) {
			a->dataflow = -1;
			for (int d = 0; array_dataflow_names[d]; d++)
				if (!strcmp(v, array_dataflow_names[d]))
					a->dataflow = d;
			if (a->dataflow < 0)
				return bad_arg(e, o, "expected one of ws, os, is", v);
		} else if (!strcmp(o, "--model")) {
			if (!strcmp(v, "analytic"))
				a->model = MODEL_ANALYTIC;
			else if (!strcmp(v, "cycle"))
				a->model = MODEL_CYCLE;
			else if (!strcmp(v, "functional"))
				a->model = MODEL_FUNCTIONAL;
			else
				return bad_arg(e, o, "expected analytic, cycle or functional", v);
			a->model_set = true;
		} else if (!strcmp(o, "--seed")) {
			char *end;
			errno = 0;
			unsigned long long sd = strtoull(v, &end, 10);
			if (!isdigit((unsigned char)*v) || *end || errno)
				return bad_arg(e, o, "expected an integer in [0, 2^64)", v);
			a->seed = sd;
			a->seed_set = true;
		} else if (!strcmp(o, "--batch")) {
			char *end;
			errno = 0;
			long long b = strtoll(v, &end, 10);
			if (!isdigit((unsigned char)*v) || *end || errno || b < 1 || b > LIMIT_BATCH)
				return bad_arg(e, o, "expected an integer in [1, " LIMIT_STR(LIMIT_BATCH) "]", v);
			a->batch = b;
		} else {
			SIM_ASSERT(!"an option of opts[] without a field or a case");
		}
	}
	if ((a->trace || a->dram_trace || a->dram_format >= 0) && strcmp(a->cmd, "run")) {
		char q[300];
		return err_input(e, "%s: expected with tpusim run only, found it with tpusim %s",
				 a->trace ? "--trace" : a->dram_trace ? "--dram-trace" : "--dram-trace-format",
				 err_quote(q, sizeof q, a->cmd, 60));
	}
	if (a->dram_format >= 0 && !a->dram_trace)
		return err_input(e, "--dram-trace-format: expected with --dram-trace FILE, found it alone");
	if (strcmp(a->cmd, "lab") && (a->gemm || a->cycles || a->html || a->step || a->format)) {
		char q[300];
		return err_input(e, "--gemm, --cycles, --step, --html, --format: expected with tpusim lab only, found them with "
				 "tpusim %s", err_quote(q, sizeof q, a->cmd, 60));
	}
	return 0;
}

static int load_config(const struct args *a, struct config *c, struct err *e)
{
	config_init(c);
	for (int i = 0; i < a->nconfigs; i++)
		if (config_merge(c, a->configs[i], e) < 0)
			return -1;
	for (int i = 0; i < a->nsets; i++)
		if (config_set(c, a->sets[i], e) < 0)
			return -1;
	return 0;
}

static int cmd_config(const struct args *a, struct err *e)
{
	struct config c;
	if (!a->dump)
		return err_input(e, "config: expected --dump, found no action");
	if (load_config(a, &c, e) < 0)
		return -1;
	config_dump(&c, stdout);
	return 0;
}

/* t's name, or "-" for TENSOR_NONE. */
static const char *tensor_shown(const struct oplist *ops, int32_t t, char *buf, size_t size)
{
	return t == TENSOR_NONE ? "-" : tensor_name(&ops->t[t], buf, size);
}

/* Op i's name, or "-" for TENSOR_NONE. */
static const char *op_shown(const struct oplist *ops, int32_t i, char *buf, size_t size)
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
		fprintf(out, "%-28s %s", op_name(o, c, sizeof c), tensor_shown(ops, o->in[0], a, sizeof a));
		if (o->in[1] != TENSOR_NONE)
			fprintf(out, ", %s", tensor_shown(ops, o->in[1], b, sizeof b));
		fprintf(out, " -> %s\n", tensor_shown(ops, o->out, c, sizeof c));
	}
	fprintf(out, "\ntensors: %zu; bytes at %lld B per element\n\n%-36s %-6s %15s %15s %-28s %s\n", ops->nt,
		(long long)eb, "tensor", "kind", "elements", "bytes", "producer", "last reader");
	for (size_t i = 0; i < ops->nt; i++) {
		const struct tensor *t = &ops->t[i];
		fprintf(out, "%-36s %-6s %15lld %15lld %-28s %s\n", tensor_name(t, a, sizeof a), tensor_kind_names[t->kind],
			(long long)t->elems, (long long)(t->elems * eb), op_shown(ops, t->producer, b, sizeof b),
			op_shown(ops, t->last_reader, c, sizeof c));
	}
}

static int cmd_lower(const struct args *a, struct err *e)
{
	struct config c;
	struct workload w;
	struct oplist ops = { 0 };
	if (!a->workload)
		return err_input(e, "lower: expected -w WORKLOAD, found none");
	if (load_config(a, &c, e) < 0 || workload_load(&w, a->workload, a->batch, e) < 0)
		return -1;
	if (lower_workload(&w, &ops, e) < 0) {
		oplist_release(&ops);
		workload_release(&w);
		return -1;
	}
	report_lower(stdout, &w, &ops, &c.arch, a->csv);
	if (!a->csv)
		print_tensors(stdout, &ops, &c.arch);
	oplist_release(&ops);
	workload_release(&w);
	return 0;
}

/* The request the command line describes; dataflow >= 0 overrides --dataflow. */
static void request_for(const struct args *a, int dataflow, struct sim_request *rq)
{
	memset(rq, 0, sizeof *rq);
	memcpy(rq->configs, a->configs, sizeof rq->configs);
	rq->nconfigs = a->nconfigs;
	memcpy(rq->assignments, a->sets, (size_t)a->nsets * sizeof a->sets[0]);
	rq->nassignments = a->nsets;
	rq->workload = a->workload;
	rq->model = a->model;
	rq->dataflow = dataflow >= 0 ? dataflow : a->dataflow;
	rq->batch = a->batch;
	rq->ideal_memory = a->ideal;
	rq->vcd = a->vcd;
	rq->trace = a->trace;
	rq->dram_trace = a->dram_trace;
	rq->dram_format = a->dram_format >= 0 ? a->dram_format : TRACE_DRAMSIM3;
	rq->seed = a->seed;
	rq->keep_outputs = a->save != NULL;
	rq->no_reuse = a->no_reuse;
}

/* A long run's progress on a terminal (stderr), from its second second on, five times a second at most. */
struct run_view {
	struct timespec t0;
	double last;
	bool shown;
	const struct oplist *ops;
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void run_progress(void *ctx, const struct run_progress *p)
{
	struct run_view *v = ctx;
	double t = seconds_since(&v->t0);
	char name[OP_NAME_MAX], part[64] = "";
	if (t < 1.0 || t - v->last < 0.2 || p->done >= p->ops)
		return;
	v->last = t;
	v->shown = true;
	if (p->op_folds > 0)
		snprintf(part, sizeof part, " %.0f%% of its folds,", 100.0 * (double)p->op_folds_done / (double)p->op_folds);
	fprintf(stderr, "\r\033[Ksimulating: %zu of %zu ops done; op %zu (%s)%s %.0f s", p->done, p->ops, p->op + 1,
		op_name(&v->ops->v[p->op < p->ops ? p->op : p->ops - 1], name, sizeof name), part, t);
	fflush(stderr);
}

/* The config's warnings, once per run, on stderr. */
static void warn(const struct config *c)
{
	char lines[8][CONFIG_WARNING_MAX];
	int n = config_warnings(c, true, lines, 8);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "warning: %s\n", lines[i]);
}

/* The missing parents of every output the command line names (make_parents). */
/*
 * Two outputs of one run at one path (as written: --trace X --dram-trace X,
 * --vcd B with --trace B.vcd, -o D with --trace D/summary.json) would
 * overwrite each other: refused before anything is made.
 */
static int distinct_outputs(const struct args *a, struct err *e)
{
	static const char *const reports[] = { "layers.csv", "summary.json", "COMPUTE_REPORT.csv", ".tpusim", "" };
	const char *name[8], *path[8];
	char buf[8][LIMIT_PATH_BUF];
	int n = 0;
	if (a->trace)
		name[n] = "--trace", path[n++] = a->trace;
	if (a->dram_trace)
		name[n] = "--dram-trace", path[n++] = a->dram_trace;
	if (a->vcd && strcmp(a->cmd, "lab")) {
		snprintf(buf[n], sizeof buf[n], "%s.vcd", a->vcd);
		name[n] = "--vcd", path[n] = buf[n], n++;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++)
			if (!strcmp(path[i], path[j]))
				return err_input(e, "%s: expected a path of its own, found \"%s\", where %s writes too", name[i],
						 shown(0, path[i]), name[j]);
		for (int r = 0; a->out && !strcmp(a->cmd, "run") && r < 5; r++) {
			char p[LIMIT_PATH_BUF];
			snprintf(p, sizeof p, *reports[r] ? "%s/%s" : "%s%s", a->out, reports[r]);
			if (!strcmp(path[i], p))
				return err_input(e, "%s: expected a path of its own, found \"%s\", which -o writes", name[i],
						 shown(0, path[i]));
		}
	}
	return 0;
}

static int prepare_outputs(const struct args *a, struct err *e)
{
	unsigned bit = command_find(a->cmd)->bit;
	if (distinct_outputs(a, e) < 0)
		return -1;
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		const char *v = o->off != NO_FIELD && o->arg ? *(const char *const *)((const char *)a + o->off) : NULL;
		char path[LIMIT_PATH_BUF];
		if (!(o->cmds & bit) || (o->path != P_DIR && o->path != P_FILE) || !v)
			continue;
		snprintf(path, sizeof path, "%s%s", v, o->suffix ? o->suffix : "");
		if (make_parents(o->name, path, o->path == P_DIR, e) < 0)
			return -1;
	}
	return 0;
}

/* The run's traces (--vcd, --trace, --dram-trace) are complete on disk: a later failure removes them. */
static bool traces_written;

/* After a failure past the simulation (the reports), the traces go too: a failed run leaves no trace. */
static void remove_traces(const struct args *a)
{
	char vcd[LIMIT_PATH_BUF];
	if (!traces_written)
		return;
	if (a->vcd && snprintf(vcd, sizeof vcd, "%s.vcd", a->vcd) < (int)sizeof vcd && fsx_regular(vcd))
		unlink(vcd);
	if (a->trace && fsx_regular(a->trace))
		unlink(a->trace);
	if (a->dram_trace && fsx_regular(a->dram_trace))
		unlink(a->dram_trace);
}

/* Loads, lowers and runs what the command line asks for: what every simulating command starts with. */
static int simulate(const struct args *a, const char *cmd, struct sim *s, struct err *e)
{
	struct sim_request *rq = malloc(sizeof *rq);
	int rc;
	if (!rq)
		return err_nomem(e, NULL);
	request_for(a, -1, rq);
	rc = sim_load(s, rq, cmd, e);
	free(rq);
	if (rc < 0)
		return -1;
	warn(&s->cfg);
	struct run_view view = { .ops = &s->ops };
	if (isatty(STDERR_FILENO)) {
		clock_gettime(CLOCK_MONOTONIC, &view.t0);
		s->opts.progress = run_progress;
		s->opts.progress_ctx = &view;
	}
	rc = sim_run(s, e);
	traces_written = rc == 0;
	s->opts.progress = NULL;
	if (view.shown)
		fprintf(stderr, "\r\033[K");
	return rc;
}

/* DIR/name, in buf. */
static const char *in_dir(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/*
 * --plot DIR: makes DIR (when missing) and checks that both pictures can be
 * put there. Before the run (check), a DIR made only for the check is removed
 * again, so that a run that fails leaves nothing.
 */
static int plot_dir(const char *dir, bool check, char *p1, char *p2, size_t size, struct err *e)
{
	bool made = mkdir(dir, 0755) == 0;
	int rc;
	if (!made && errno != EEXIST)
		return err_input(e, "--plot: expected a directory that can be created, found \"%s\" (%s)", shown(0, dir),
				 strerror(errno));
	rc = plot_check(in_dir(p1, size, dir, "cycles.png"), "--plot", e) < 0 ||
	     plot_check(in_dir(p2, size, dir, "roofline.png"), "--plot", e) < 0 ? -1 : 0;
	if (made && (check || rc < 0))
		rmdir(dir);
	return rc;
}

/*
 * An output directory (opt DIR): makes DIR (when missing) and checks that a
 * file can be created there. Before the run (check), a DIR made only for the
 * check is removed again, so that a run that fails leaves nothing.
 */
static int dir_usable(const char *opt, const char *dir, bool check, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	bool made = mkdir(dir, 0755) == 0;
	int fd, er;
	if (!made && errno != EEXIST)
		return err_input(e, "%s: expected a directory that can be created, found \"%s\" (%s)", opt, shown(0, dir),
				 strerror(errno));
	if (snprintf(path, sizeof path, "%s/.tpusim-checkXXXXXX", dir) >= (int)sizeof path)
		return err_input(e, "%s: expected a path of at most " LIMIT_STR(LIMIT_OUT_PATH) " bytes, found %zu", opt, strlen(dir));
	if ((fd = mkstemp(path)) >= 0) {
		close(fd);
		unlink(path);
	}
	er = errno;
	if (made && (check || fd < 0))
		rmdir(dir);
	if (fd < 0)
		return err_input(e, "%s: expected a directory where files can be written, found \"%s\" (%s)", opt,
				 shown(0, dir), strerror(er));
	return 0;
}

/*
 * run -o DIR, before the run: DIR is a directory tpusim may write in, or is
 * missing under one (make_parents made its parents). Made only when the run
 * is done (report_write), so that runs into one new DIR at once do not meet
 * each other's checks.
 */
static int reports_dir_check(const char *dir, struct err *e)
{
	struct stat st;
	char *parent, *slash;
	int rc = 0;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return err_input(e, "%s: expected a directory for the reports, found a file", shown(0, dir));
		if (access(dir, W_OK | X_OK) != 0)
			return err_input(e, "-o: expected a directory where files can be written, found \"%s\" (%s)",
					 shown(0, dir), strerror(errno));
		return 0;
	}
	if (errno != ENOENT)
		return err_input(e, "-o: expected a directory that can be created, found \"%s\" (%s)", shown(0, dir),
				 strerror(errno));
	if (!(parent = strdup(dir)))
		return err_nomem(e, NULL);
	for (slash = parent + strlen(parent); slash > parent + 1 && slash[-1] == '/';)
		*--slash = '\0';
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent] = '\0';
	if (access(slash ? parent : ".", W_OK | X_OK) != 0)
		rc = err_input(e, "-o: expected a directory that can be created, found \"%s\" (%s)", shown(0, dir),
			       strerror(errno));
	free(parent);
	return rc;
}

struct saved {
	char name[OP_NAME_MAX + 24];    /* the file's name without .npy */
	size_t at;                      /* the output's index */
};

static int saved_cmp(const void *x, const void *y)
{
	const struct saved *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->at > b->at) - (a->at < b->at);
}

/*
 * Each output's file name: the op's name with '/' as '_', and, for ops whose
 * names give the same file name, the op's index in the run after a '.'
 * ("mm.0", "mm.3"). A name that ends in such an index is unique (the index
 * is), so a plain name that meets one gets its index too, until none meet.
 */
static struct saved *save_names(const struct run *r, struct err *e)
{
	size_t n = r->noutputs;
	struct saved *v = malloc((n ? n : 1) * sizeof *v), *w = malloc((n ? n : 1) * sizeof *w);
	bool *idx = calloc(n ? n : 1, sizeof *idx), again = true;
	if (!v || !w || !idx) {
		free(v);
		free(w);
		free(idx);
		err_nomem(e, "--save-outputs");
		return NULL;
	}
	while (again) {
		again = false;
		for (size_t i = 0; i < n; i++) {
			char *p = v[i].name;
			snprintf(p, sizeof v[i].name, "%s", r->outputs[i].name);
			for (; *p; p++)
				if (*p == '/')
					*p = '_';
			if (idx[i])
				snprintf(p, sizeof v[i].name - (size_t)(p - v[i].name), ".%zu", r->outputs[i].op);
			v[i].at = i;
		}
		memcpy(w, v, n * sizeof *w);
		qsort(w, n, sizeof *w, saved_cmp);
		for (size_t i = 0; i + 1 < n; i++)
			if (!strcmp(w[i].name, w[i + 1].name))
				for (size_t k = i; k < i + 2; k++)
					if (!idx[w[k].at])
						idx[w[k].at] = again = true;
	}
	free(w);
	free(idx);
	return v;
}

/*
 * --save-outputs DIR: every GEMM op's result as DIR/<file>.npy (save_names;
 * int32 for int8 operands, else float32), each file written atomically; DIR
 * is made when missing. *written: the files written.
 */
static int save_outputs(const char *dir, const struct run *r, size_t *written, struct err *e)
{
	char path[LIMIT_PATH_BUF];
	struct saved *names;
	*written = 0;
	if (dir_usable("--save-outputs", dir, false, e) < 0 || !(names = save_names(r, e)))
		return -1;
	for (size_t i = 0; i < r->noutputs; i++) {
		const struct run_output *o = &r->outputs[i];
		snprintf(path, sizeof path, "%s/%s.npy", dir, names[i].name);
		if (npy_write(path, o->c, o->m, o->n, o->ints, e) < 0) {
			free(names);
			return -1;
		}
		++*written;
	}
	free(names);
	return 0;
}

static int cmd_run(const struct args *a, struct err *e)
{
	struct sim *s;
	char p1[LIMIT_PATH_BUF], p2[LIMIT_PATH_BUF];
	size_t nsaved = 0;
	int rc = -1;

	if (a->save && a->model != MODEL_FUNCTIONAL)
		return err_input(e, "--save-outputs: expected --model functional (only it computes values), found --model %s",
				 run_model_names[a->model]);
	if (a->plot && plot_dir(a->plot, true, p1, p2, sizeof p1, e) < 0)
		return -1;
	if (a->save && dir_usable("--save-outputs", a->save, true, e) < 0)
		return -1;
	if (a->out && reports_dir_check(a->out, e) < 0)
		return -1;
	if (!(s = calloc(1, sizeof *s)))
		return err_nomem(e, NULL);
	if (simulate(a, "run", s, e) < 0)
		goto out;
	struct report_ctx ctx = { &s->cfg, &s->w, &s->run, &s->opts, &s->ops };
	if (a->plot) {
		if (plot_dir(a->plot, false, p1, p2, sizeof p1, e) < 0)
			goto out;
		if (plot_cycles(p1, &s->cfg, &s->w, &s->run, e) < 0 ||
		    plot_roofline(p2, &s->cfg, &s->w, &s->run, &s->opts, e) < 0)
			goto out;
	}
	if (a->save && save_outputs(a->save, &s->run, &nsaved, e) < 0)
		goto out;
	if (a->out && report_write(a->out, &ctx, e) < 0)
		goto out;
	report_summary(stdout, &ctx);
	if (a->out && s->cfg.arch.array.scalesim_compat)
		printf("wrote %s/layers.csv, %s/summary.json and %s/COMPUTE_REPORT.csv\n", shown(0, a->out),
		       shown(1, a->out), shown(1, a->out));
	else if (a->out)
		printf("wrote %s/layers.csv and %s/summary.json\n", shown(0, a->out), shown(1, a->out));
	if (a->plot)
		printf("wrote %s and %s\n", shown(0, p1), shown(1, p2));
	if (a->save)
		printf("wrote %zu result%s in %s\n", nsaved, nsaved == 1 ? "" : "s", shown(0, a->save));
	if (a->timing) {
		struct timespec t1;
		struct rusage ru;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		getrusage(RUSAGE_SELF, &ru);
		double wall = (double)(t1.tv_sec - a->start.tv_sec) + 1e-9 * (double)(t1.tv_nsec - a->start.tv_nsec);
		printf("timing: %.3f s wall, %.3g simulated cycles/s, peak RSS %.1f MiB\n", wall,
		       wall > 0 ? (double)s->run.total.cycles / wall : 0.0, (double)ru.ru_maxrss / 1024.0);
	}
	rc = 0;
out:
	sim_release(s);
	free(s);
	return rc;
}

static int cmd_roofline(const struct args *a, struct err *e)
{
	struct sim *s;
	int rc = -1;

	if (!a->out)
		return err_input(e, "roofline: expected -o FILE.png or FILE.svg, found none");
	if (plot_check(a->out, "-o", e) < 0)
		return -1;
	if (!(s = calloc(1, sizeof *s)))
		return err_nomem(e, NULL);
	if (simulate(a, "roofline", s, e) == 0 && plot_roofline(a->out, &s->cfg, &s->w, &s->run, &s->opts, e) == 0) {
		printf("wrote %s\n", shown(0, a->out));
		rc = 0;
	}
	sim_release(s);
	free(s);
	return rc;
}

/* "ws,os,is" -> dataflows; each at most once. */
static int parse_dataflows(const char *list, int *df, int *n, struct err *e)
{
	const char *p = list;
	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int d = 0; array_dataflow_names[d]; d++)
			if (strlen(array_dataflow_names[d]) == len && !strncmp(p, array_dataflow_names[d], len))
				found = d;
		for (int j = 0; j < *n; j++)
			if (df[j] == found)
				found = -1;
		if (found < 0 || *n == 3)
			return bad_arg(e, "--dataflows", "expected a list of distinct ws, os, is separated by commas", list);
		df[(*n)++] = found;
		p += len + (p[len] == ',');
	}
	if (*n == 0)
		return bad_arg(e, "--dataflows", "expected a list of distinct ws, os, is separated by commas", list);
	return 0;
}

/*
 * The options of the command line that compare does not take, each refused
 * with what to use instead; -o must name a chart (FILE.png or FILE.svg), not
 * a directory of reports as with run.
 */
static int compare_check_args(const struct args *a, struct err *e)
{
	static const char not_ours[] = "%s: expected an option of tpusim compare (see tpusim --help), found an option of "
				       "tpusim %s; %s";
	const char *ext = a->out ? strrchr(a->out, '.') : NULL;
	struct stat st;
	if (a->dataflow >= 0)
		return err_input(e, not_ours, "--dataflow", "run", "compare takes --dataflows, e.g. --dataflows ws,os,is");
	if (a->vcd)
		return err_input(e, not_ours, "--vcd", "run", "trace one dataflow with tpusim run --dataflow DF --vcd BASE");
	if (a->plot)
		return err_input(e, not_ours, "--plot", "run", "compare draws its chart with -o FILE.png or FILE.svg");
	if (a->timing)
		return err_input(e, not_ours, "--timing", "run", "time one dataflow with tpusim run --dataflow DF --timing");
	if (a->dump)
		return err_input(e, not_ours, "--dump", "config", "print the config with tpusim config --dump");
	if (a->seed_set)
		return err_input(e, not_ours, "--seed", "run", "seeds pick the operands of tpusim run --model functional");
	if (a->save)
		return err_input(e, not_ours, "--save-outputs", "run",
				 "save results with tpusim run --model functional --save-outputs DIR");
	if (a->model == MODEL_FUNCTIONAL)
		return err_input(e, "--model: expected cycle or analytic for tpusim compare, found functional; check values "
				 "with tpusim run --model functional");
	if (a->out && stat(a->out, &st) == 0 && S_ISDIR(st.st_mode))
		return err_input(e, "-o: expected FILE.png or FILE.svg for compare's chart, found the directory \"%s\"",
				 shown(0, a->out));
	if (a->out && (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg"))))
		return err_input(e, "-o: expected FILE.png or FILE.svg for compare's chart, found \"%s\"", shown(0, a->out));
	return 0;
}

static int cmd_compare(const struct args *a, struct err *e)
{
	struct sim *s;
	struct sim_request *rq;
	struct compare *c;
	int df[COMPARE_MAX], n, rc = -1;

	if (compare_check_args(a, e) < 0)
		return -1;
	if (parse_dataflows(a->dataflows ? a->dataflows : "ws,os,is", df, &n, e) < 0)
		return -1;
	if (a->out && plot_check(a->out, "-o", e) < 0)
		return -1;
	s = calloc(1, sizeof *s);
	rq = malloc(sizeof *rq);
	c = calloc(1, sizeof *c);
	if (!s || !rq || !c) {
		free(s);
		free(rq);
		free(c);
		return err_nomem(e, NULL);
	}
	request_for(a, -1, rq);
	if (sim_load(s, rq, "compare", e) < 0)
		goto out;
	warn(&s->cfg);
	if (compare_run(c, &s->cfg, &s->w, &s->ops, &s->opts, df, n, e) < 0)
		goto out;
	if (a->out && plot_compare(a->out, &s->cfg, &s->w, c, e) < 0)
		goto out;
	report_compare(stdout, &s->cfg, &s->w, &s->opts, c, a->csv);
	if (a->out && !a->csv)
		printf("wrote %s\n", shown(0, a->out));
	rc = 0;
out:
	compare_release(c);
	sim_release(s);
	free(s);
	free(rq);
	free(c);
	return rc;
}

/*
 * lab: one GEMM on the config's array, as a terminal grid or (--html) a
 * page. Options of the other commands are refused, and lab's elsewhere.
 */
static int cmd_lab(const struct args *a, struct err *e)
{
	struct config c;
	struct lab_opts o;
	struct lab_summary s[3];

	const struct {
		bool given;
		const char *opt, *cmd;
	} other[] = {
		{ a->workload != NULL, "-w", "run" }, { a->out != NULL, "-o", "run" }, { a->plot != NULL, "--plot", "run" },
		{ a->dataflows != NULL, "--dataflows", "compare" }, { a->batch != 0, "--batch", "run" },
		{ a->ideal, "--ideal-memory", "run" }, { a->csv, "--csv", "run" }, { a->dump, "--dump", "config" },
		{ a->timing, "--timing", "run" }, { a->save != NULL, "--save-outputs", "run" },
		{ a->model_set, "--model", "run" }, { a->no_reuse, "--no-reuse", "run" },
	};

	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		if (other[i].given)
			return err_input(e, "%s: expected an option of tpusim lab (see tpusim --help), found an option of "
					 "tpusim %s; lab runs one GEMM on the functional model with ideal memory",
					 other[i].opt, other[i].cmd);
	if (!a->gemm)
		return err_input(e, "lab: expected --gemm MxKxN, found none");
	if (a->html && (a->cycles || a->step || a->format))
		return err_input(e, "--html: expected without --cycles, --step and --format (the page shows every cycle), "
				 "found them");
	if (a->vcd && a->html)
		return err_input(e, "--vcd: expected without --html (a trace holds one dataflow, the page all three), found "
				 "--html; write them with two commands");
	if (a->vcd && (a->cycles || a->step || a->format))
		return err_input(e, "--vcd: expected without --cycles, --step and --format (the trace holds every cycle), "
				 "found them");
	if (a->html && a->dataflow >= 0)
		return err_input(e, "--dataflow: expected without --html (the page shows ws, os and is side by side), found "
				 "--dataflow %s; drop --dataflow with --html", array_dataflow_names[a->dataflow]);
	if (a->step && a->format && !strcmp(a->format, "json"))
		return err_input(e, "--step: expected with --format text, found --format json");
	memset(&o, 0, sizeof o);
	o.seed = a->seed;
	o.last = -1;
	if (lab_parse_gemm(a->gemm, &o.m, &o.k, &o.n, e) < 0 ||
	    (a->cycles && lab_parse_cycles(a->cycles, &o.first, &o.last, e) < 0))
		return -1;
	if (load_config(a, &c, e) < 0)
		return -1;
	o.df = a->dataflow >= 0 ? a->dataflow : c.arch.array.dataflow;
	o.step = a->step;
	o.json = a->format && !strcmp(a->format, "json");
	o.in = stdin;
	o.prompt = a->step && isatty(STDIN_FILENO);
	if (a->vcd) {
		if (lab_vcd(a->vcd, &c, &o, &s[0], e) < 0)
			return -1;
		printf("wrote %s.vcd (%s): ", shown(0, a->vcd), array_dataflow_names[o.df]);
		lab_print_counts(stdout, &s[0], c.arch.array.dtype == DT_INT8);
		printf("\n");
		return 0;
	}
	if (!a->html)
		return lab_print(stdout, &c, &o, &s[0], e);
	if (lab_html(a->html, &c, &o, s, e) < 0)
		return -1;
	printf("wrote %s: ", shown(0, a->html));
	for (int d = 0; d < 3; d++)
		printf("%s%s %lld cycle%s, %lld output%s checked, %lld mismatch%s", d ? "; " : "", array_dataflow_names[d],
		       (long long)s[d].cycles, s[d].cycles == 1 ? "" : "s", (long long)s[d].outputs,
		       s[d].outputs == 1 ? "" : "s", (long long)s[d].mismatches, s[d].mismatches == 1 ? "" : "es");
	printf("\n");
	return 0;
}

struct sweep_view {
	bool tty;
	double last;    /* when the TTY line was last drawn */
};

/* Progress: one line redrawn on a terminal, else one line per finished point. */
static void sweep_progress(void *ctx, const struct sweep_progress *p)
{
	struct sweep_view *v = ctx;
	size_t ran = p->done - p->resumed, left = p->total - p->done;
	double rate = p->elapsed > 0 ? (double)ran / p->elapsed : 0;
	if (p->finished) {
		if (p->workers) {
			printf("ran %zu points in %.1f s (%.1f points/s) on %d worker%s, peak RSS per worker", ran, p->elapsed,
			       rate, p->workers, p->workers == 1 ? "" : "s");
			for (int w = 0; w < p->workers; w++)
				printf("%s %.1f", w ? "," : "", (double)p->worker_rss_kib[w] / 1024.0);
			printf(" MiB\n");
		}
	} else if (p->point < 0) {
		printf("sweep: %zu points, %zu already done\n", p->total, p->resumed);
	} else if (!v->tty) {
		printf("%zu/%zu %s %s\n", p->done, p->total, p->point_failed ? "failed" : "ok", p->hash);
	} else if (left == 0 || p->elapsed - v->last >= 0.1) {
		char bar[31];
		size_t full = p->total ? p->done * 30 / p->total : 30;
		memset(bar, '#', full);
		memset(bar + full, '.', 30 - full);
		bar[30] = 0;
		v->last = p->elapsed;
		printf("\r[%s] %zu/%zu points, %.1f points/s, ETA %.0f s, %zu failed\033[K", bar, p->done, p->total, rate,
		       rate > 0 ? (double)left / rate : 0.0, p->failed);
		if (left == 0)
			putchar('\n');
	}
	fflush(stdout);
}

/* The number in [lo, hi] that all of v is, or -1. */
static long long whole_number(const char *v, long long lo, long long hi)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	return isdigit((unsigned char)*v) && !*end && !errno && x >= lo && x <= hi ? x : -1;
}

/* Draws the charts of the sweep in dir (sweepplot.h) and lists them. */
static int sweep_plot(const char *dir, struct err *e)
{
	struct sweepplot_out o;
	if (sweepplot_dir(dir, &o, e) < 0)
		return -1;
	for (size_t k = 0; k < o.nnotes; k++)
		printf("%s\n", o.notes[k]);
	for (size_t k = 0; k < o.nfiles; k++)
		printf("wrote %s\n", shown(0, o.files[k]));
	sweepplot_out_release(&o);
	return 0;
}

/* tpusim sweep --plot DIR. */
static int cmd_sweep_plot(int argc, char **argv, struct err *e)
{
	char q[300];
	if (argc < 4)
		return err_input(e, "--plot: expected a value after it, found the end of the command line");
	if (argc > 4)
		return err_input(e, "sweep --plot: expected only DIR, found another, \"%s\"", err_quote(q, sizeof q, argv[4], 60));
	if (!*argv[3])
		return bad_arg(e, "--plot", "expected a directory", argv[3]);
	return sweep_plot(argv[3], e);
}

/*
 * tpusim sweep SPEC.yaml -o DIR [-j N] [--points I-J] [--no-reuse] [--plot]
 * tpusim sweep SPEC.yaml -o DIR --emit parallel|slurm [--chunk-size C] [--no-reuse]
 * tpusim sweep --merge DIR [--plot]
 * tpusim sweep --plot DIR
 * Returns the exit status (4: merged with points missing), or -1 with e set.
 */
static int cmd_sweep(int argc, char **argv, struct err *e)
{
	const char *spec = NULL, *dir = NULL, *emit = NULL, *merge = NULL, *points = NULL, *chunk = NULL;
	long long jobs = 1, first = 0, last = 0;
	bool have_j = false, no_reuse = false, plot = false;
	struct sweep *sw;
	struct sweep_view view = { isatty(STDOUT_FILENO), 0 };
	char *text = NULL;
	size_t missing = 0;
	int rc;

	if (argc >= 3 && !strcmp(argv[2], "--plot"))
		return cmd_sweep_plot(argc, argv, e);
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(o, "-o") || !strcmp(o, "--out") ? &dir : !strcmp(o, "--emit") ? &emit :
				    !strcmp(o, "--merge") ? &merge : !strcmp(o, "--points") ? &points :
				    !strcmp(o, "--chunk-size") ? &chunk : NULL;
		char q[300];
		if (!strcmp(o, "--no-reuse")) {
			no_reuse = true;
			continue;
		}
		if (!strncmp(o, "-j", 2) && isdigit((unsigned char)o[2])) {       /* -j2, as make takes it */
			have_j = true;
			if ((jobs = whole_number(o + 2, 1, SWEEP_MAX_JOBS)) < 0)
				return bad_arg(e, "-j", "expected an integer in [1, 64]", o + 2);
			continue;
		}
		if (slot || !strcmp(o, "-j") || !strcmp(o, "--jobs")) {
			if (!v)
				return err_input(e, "%s: expected a value after it, found the end of the command line", o);
			i++;
			if (slot && (slot == &dir || slot == &merge) && !*v)
				return bad_arg(e, o, "expected a path", v);
			if (slot) {
				*slot = v;
				continue;
			}
			have_j = true;
			if ((jobs = whole_number(v, 1, SWEEP_MAX_JOBS)) < 0)
				return bad_arg(e, o, "expected an integer in [1, 64]", v);
		} else if (!strcmp(o, "--plot")) {
			plot = true;
		} else if (o[0] == '-' && o[1]) {
			return err_input(e, "%s: expected an option of tpusim sweep (-o DIR, -j N, --points I-J, --no-reuse, "
					 "--plot, --emit parallel|slurm, --chunk-size C, --merge DIR), found an unknown option",
					 err_quote(q, sizeof q, o, 60));
		} else if (spec) {
			return err_input(e, "sweep: expected one SPEC.yaml, found another, \"%s\"", err_quote(q, sizeof q, o, 60));
		} else {
			spec = o;
		}
	}
	if (merge && (spec || dir || have_j || points || emit || chunk || no_reuse))
		return err_input(e, "--merge: expected only the directory of a sweep (tpusim sweep --merge DIR), found %s too",
				 spec ? "SPEC.yaml" : dir ? "-o" : have_j ? "-j" : points ? "--points" : emit ? "--emit" :
				 chunk ? "--chunk-size" : "--no-reuse");
	if (emit && strcmp(emit, "parallel") && strcmp(emit, "slurm"))
		return bad_arg(e, "--emit", "expected parallel or slurm", emit);
	if (emit && (have_j || points))
		return err_input(e, "--emit: expected no %s (the jobs run their points one at a time; parallel -j or Slurm "
				 "sets how many run at once), found one", have_j ? "-j" : "--points");
	if (chunk && !emit)
		return err_input(e, "--chunk-size: expected --emit parallel|slurm with it, found none");
	if (plot && (emit || points))
		return err_input(e, "--plot: expected a whole sweep or --merge DIR (the charts need every point), found %s",
				 emit ? "--emit" : "--points");
	long long c = chunk ? whole_number(chunk, 1, SWEEP_MAX_POINTS) : 0;
	if (c < 0)
		return bad_arg(e, "--chunk-size", "expected an integer in [1, 1000000]", chunk);
	if (points) {
		const char *dash = strchr(points, '-');
		char a[32] = "";
		if (dash && dash - points < (long)sizeof a)
			memcpy(a, points, (size_t)(dash - points));
		if (!dash || (first = whole_number(a, 0, SWEEP_MAX_POINTS)) < 0 ||
		    (last = whole_number(dash + 1, 0, SWEEP_MAX_POINTS)) < 0)
			return bad_arg(e, "--points", "expected I-J, the points from I to J (numbered from 0)", points);
	}
	if (!merge && !spec)
		return err_input(e, "sweep: expected SPEC.yaml (or --merge DIR), found none");
	if (!merge && !dir)
		return err_input(e, "sweep: expected -o DIR, found none");
	if (!(sw = calloc(1, sizeof *sw)))
		return err_nomem(e, NULL);
	if ((merge ? sweep_open(sw, merge, e) : points ? sweep_load_points(sw, spec, (size_t)first, (size_t)last, e)
						       : sweep_load(sw, spec, e)) < 0) {
		free(sw);
		return -1;
	}
	sw->no_reuse = no_reuse;
	if (!merge && make_parents("-o", dir, true, e) < 0) {
		sweep_release(sw);
		free(sw);
		return -1;
	}
	if (merge)
		rc = sweep_merge(sw, merge, &text, &missing, e);
	else if (emit)
		rc = sweep_emit(sw, dir, !strcmp(emit, "slurm") ? SWEEP_SLURM : SWEEP_PARALLEL, (size_t)c, &text, e);
	else if (points)
		rc = sweep_run_points(sw, dir, (int)jobs, sweep_progress, &view, e);
	else
		rc = sweep_run(sw, dir, (int)jobs, sweep_progress, &view, e);
	if (rc == 0 && text)
		fputs(text, stdout);
	else if (rc == 0 && points)
		printf("ran points %lld-%lld of %zu into %s/points; tpusim sweep --merge %s builds sweep.csv\n", first, last,
		       sw->npoints, shown(0, dir), shown(1, dir));
	else if (rc == 0)
		printf("wrote %s/sweep.csv (%zu points)\n", shown(0, dir), sw->npoints);
	if (rc == 0 && missing) {
		fflush(stdout);
		fprintf(stderr, "sweep: expected every point to have a result, found %zu of %zu missing (run their jobs, "
			"then merge again)\n", missing, sw->npoints);
		rc = 4;
	}
	free(text);
	sweep_release(sw);
	free(sw);
	if (rc == 0 && plot)
		rc = sweep_plot(merge ? merge : dir, e);
	return rc;
}

static void print_record(void *ctx, const struct trace_rec *r)
{
	trace_rec_print(ctx, r);
}

/* tpusim trace FILE [--records]: checks the event trace and prints what its events add up to (and each record). */
static int cmd_trace(int argc, char **argv, struct err *e)
{
	struct trace_summary s;
	const char *file = NULL;
	bool records = false;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--records"))
			records = true;
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else
			return bad_arg(e, "trace", "expected FILE.gz and --records, tpusim trace FILE.gz [--records]", argv[i]);
	}
	if (!file)
		return err_input(e, "trace: expected a file, tpusim trace FILE.gz [--records], found none");
	if (trace_read(file, &s, records ? print_record : NULL, stdout, e) < 0)
		return -1;
	if (records)
		putchar('\n');
	trace_summary_print(stdout, file, &s);
	trace_summary_release(&s);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct err e = { 0 };
	int rc;

	if ((rc = help(argc, argv, &e)) >= 0)
		return rc;
	if (e.kind != ERR_NONE)
		return fail(&e);
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		puts("tpusim " TPUSIM_VERSION);
		return flush_stdout();
	}
	if (argc >= 2 && !strcmp(argv[1], "sweep")) {
		if ((rc = cmd_sweep(argc, argv, &e)) < 0) {
			unmake_parents();
			return fail(&e);
		}
		return flush_stdout() ? 1 : rc;
	}
	if (argc >= 2 && !strcmp(argv[1], "trace")) {
		if (cmd_trace(argc, argv, &e) < 0)
			return fail(&e);
		return flush_stdout();
	}
	if (parse_args(argc, argv, &a, &e) < 0)
		return fail(&e);
	if (prepare_outputs(&a, &e) < 0)
		rc = -1;
	else if (!strcmp(a.cmd, "run"))
		rc = cmd_run(&a, &e);
	else if (!strcmp(a.cmd, "lower"))
		rc = cmd_lower(&a, &e);
	else if (!strcmp(a.cmd, "config"))
		rc = cmd_config(&a, &e);
	else if (!strcmp(a.cmd, "roofline"))
		rc = cmd_roofline(&a, &e);
	else if (!strcmp(a.cmd, "compare"))
		rc = cmd_compare(&a, &e);
	else if (!strcmp(a.cmd, "lab"))
		rc = cmd_lab(&a, &e);
	else {
		char q[300];
		rc = err_input(&e, "expected a command (run, lower, config, roofline, compare, lab, sweep, trace), found \"%s\"; try tpusim --help",
			       err_quote(q, sizeof q, a.cmd, 60));
	}
	if (rc < 0) {
		remove_traces(&a);
		unmake_parents();
		return fail(&e);
	}
	return flush_stdout();
}
