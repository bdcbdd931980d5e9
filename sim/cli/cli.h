/*
 * cli.h - the command line: its commands, their options, one parser.
 *
 * One row per command (cli_commands[]: name, help, the function that runs
 * it) and one per option and meaning (-o names a directory for run, a chart
 * for roofline). An option that is a run option (options.h) takes its flag,
 * its value's reading and its field from that table; the others name a field
 * of struct cli_args and read their values the same way (struct optval). The
 * rows drive the parser for every command, every --help, the list of
 * commands in messages ("expected a command (run, ...)", "did you mean"), the
 * refusal of another command's option, and the output paths made before a
 * command runs. Nothing here exits; main prints the error and picks the exit
 * status.
 *
 * Adding a command: its CMD_ name, its row in cli_commands[] (cli.c), its
 * function (declared below, in a cmd_*.c file), and rows for the options it
 * takes, or its bit on the rows of options it shares.
 */
#ifndef TPUSIM_CLI_H
#define TPUSIM_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "api.h"
#include "err.h"
#include "sweepplot.h"

enum { CMD_RUN, CMD_ROOFLINE, CMD_COMPARE, CMD_LOWER, CMD_CONFIG, CMD_LAB, CMD_SWEEP, CMD_TRACE, CMD_COUNT };

#define CLI_MAX_OPTS 64     /* rows of the option table */

struct cli_command;

/* What the command line asked for. */
struct cli_args {
	const struct cli_command *cmd;
	struct sim_request rq;          /* -c, --set, -w and the run options (options.h); strings borrowed from argv */
	const char *arg;                /* the command's operand (sweep SPEC.yaml, trace FILE.gz), or NULL */
	int arg_at;                     /* its index in argv, or 0 */
	const char *extra;              /* a second operand (cli_one_operand refuses it), or NULL */
	const char *out, *plot, *dataflows, *save, *chakra;
	bool csv, dump, timing;
	const char *gemm, *cycles, *html;       /* lab */
	int format;                     /* lab: index in cli_lab_formats, or -1 */
	bool step;                      /* lab */
	bool records;                   /* trace */
	long long jobs, chunk;          /* sweep: -j, --chunk-size (0: none given) */
	const char *points, *merge;     /* sweep */
	int emit;                       /* sweep: enum sweep_engine, or -1 */
	bool sweep_plot;                /* sweep --plot */
	const char *hold[SWEEPPLOT_MAX_HOLDS];  /* sweep --plot --hold, each AXIS=VALUE */
	int nhold;
	const char *pareto;             /* sweep --plot --pareto X,Y */
	int heatmaps;                   /* sweep --plot --heatmaps: index in cli_heatmaps, or -1 */
	int at[CLI_MAX_OPTS];           /* each option row: the index in argv where it was last given, or 0 */
	struct timespec start;          /* when tpusim started, for --timing */
};

struct cli_command {
	const char *name;
	const char *summary;            /* one line, for tpusim --help */
	const char *usage[4];           /* each after "tpusim " */
	const char *about;              /* what it does, a few lines */
	const char *operand;            /* the one operand it takes ("SPEC.yaml"), or NULL: none */
	const char *refusal;            /* added to the refusal of another command's option, or NULL */
	bool outputs;                   /* make the outputs' parents before it runs (cli_prepare_outputs) */
	/* Runs it: the exit status (0, or 4 for a merge with points missing), or -1 with e set. */
	int (*run)(const struct cli_args *a, struct err *e);
};

extern const struct cli_command cli_commands[CMD_COUNT];
extern const char *const cli_lab_formats[];     /* "text", "json", NULL */
extern const char *const cli_heatmaps[];        /* "first", "all", NULL */

/*
 * tpusim help [CMD], tpusim --help, tpusim CMD --help (-h anywhere an option
 * may stand): prints the help to out. Returns 0 when it printed, -1 when argv
 * asks for no help (e untouched), or -1 with e set.
 */
int cli_help(int argc, char **argv, FILE *out, struct err *e);

/* Parses argv into a (borrowing argv's strings). Returns 0, or -1 with e set. */
int cli_parse(int argc, char **argv, struct cli_args *a, struct err *e);

/* Refuses a second operand (the command's one, cli_command.operand): 0, or -1 with e set. */
int cli_one_operand(const struct cli_args *a, struct err *e);

/* The argv index where the option name was given for a's command (last), or 0. */
int cli_given(const struct cli_args *a, const char *name);

/* The missing parents of every output path the command line names (cli_make_parents). */
int cli_prepare_outputs(const struct cli_args *a, struct err *e);

/*
 * mkdir -p of the directories above path (not path itself), each one made
 * remembered, so that cli_unmake_parents removes them when the command fails.
 * dir: opt names a directory (for the message).
 */
int cli_make_parents(const char *opt, const char *path, bool dir, struct err *e);
void cli_unmake_parents(void);

/* text as it may appear in a printed line (see err_quote), in a buffer of its own per slot (0 or 1). */
const char *cli_shown(int slot, const char *text);

/* "opt: what, found "value"" as an input error. */
int cli_bad_arg(struct err *e, const char *opt, const char *what, const char *found);

/* The commands (cmd_sim.c, cmd_tools.c, cmd_sweep.c). */
int cmd_run(const struct cli_args *a, struct err *e);
int cmd_roofline(const struct cli_args *a, struct err *e);
int cmd_compare(const struct cli_args *a, struct err *e);
int cmd_lower(const struct cli_args *a, struct err *e);
int cmd_config(const struct cli_args *a, struct err *e);
int cmd_lab(const struct cli_args *a, struct err *e);
int cmd_sweep(const struct cli_args *a, struct err *e);
int cmd_trace(const struct cli_args *a, struct err *e);

/* After a failed command: the traces a run wrote are removed (cmd_sim.c). */
void cmd_sim_undo(const struct cli_args *a);

#endif
