/*
 * options.h - the run options, one table for every front end.
 *
 * A run is asked for in three ways: the command line's flags (tpusim run
 * --model analytic), the library's JSON request ({"model": "analytic"},
 * tpusim.h) and a sweep's axes (axes: {model: [cycle, analytic]}). Each run
 * option is one row of run_options[]: its request key (also its axis name),
 * its flag, how its value is read (struct optval: a choice among its owner's
 * names, an integer in a range, a flag, a text, a list), its default, its
 * doc and its field in struct sim_request (request.h). The three front ends read
 * this table only; none of them spells an option name, a value name or a
 * range of its own. The command line reads the same struct optval for its
 * other options (cli.c).
 *
 * Messages are built by the callers, who know the position: optval_parse
 * says only what was expected ("ws, os or is", "an integer in [1, 1048576]").
 */
#ifndef TPUSIM_OPTIONS_H
#define TPUSIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

enum opt_kind {
	OPT_FLAG,       /* no value; bool field, set true (the command line's flags) */
	OPT_BOOL,       /* true or false; bool field (negated: holds the opposite) */
	OPT_TEXT,       /* any text (a path, a list); const char * field */
	OPT_LIST,       /* texts, one per use; const char *[max] field, int count at count_off */
	OPT_CHOICE,     /* one of names[]; int field: its index */
	OPT_INT,        /* a whole number in [lo, hi]; int64_t field (long long for the command line's own) */
	OPT_U64,        /* a whole number in [0, 2^64); uint64_t field */
};

/* How one option's value is read. */
struct optval {
	enum opt_kind kind;
	const char *const *names;   /* OPT_CHOICE: the owner's names, NULL-terminated (borrowed) */
	long long lo, hi;           /* OPT_INT */
	int max;                    /* OPT_LIST: at most this many */
	const char *items;          /* OPT_LIST: what they are, for "at most 8 config files" */
	size_t count_off;           /* OPT_LIST: the int that counts them, in the same struct as the field */
	bool negated;               /* OPT_BOOL, OPT_FLAG: the field holds the opposite of the value */
	bool is_long;               /* OPT_INT: the field is a long long, not an int64_t */
};

/* Where a run option may be given. */
enum { OPT_IN_CLI = 1, OPT_IN_REQUEST = 2, OPT_IN_SWEEP = 4 };

struct run_option {
	const char *key;            /* the request's key and the sweep's axis: "ideal_memory" */
	const char *flag, *alias;   /* the command line's: "--ideal-memory"; alias may be NULL */
	const char *arg;            /* the value as help shows it ("N"); NULL: a flag, or a choice's names joined by | */
	struct optval val;
	long long def;              /* the default: a choice's index (-1: none), a number, a bool */
	const char *def_doc;        /* the default in words when def says nothing ("the workload's"), or NULL */
	unsigned in;                /* OPT_IN_*: the front ends that take it */
	unsigned sweep_names;       /* OPT_CHOICE: the names a sweep axis takes (bit i: names[i]); 0: all */
	size_t off;                 /* the field in struct sim_request */
	const char *doc;            /* one line */
	unsigned models;            /* the models it applies to (bit i: run_model_names[i]); 0: every model */
	const char *models_why;     /* with models: why, as a refusal says it ("only it draws operands") */
};

/* The rows, by name (run_options[RO_MODEL]); request keys in this order. */
enum {
	RO_CONFIGS, RO_SET, RO_WORKLOAD, RO_MODEL, RO_DATAFLOW, RO_BATCH, RO_IDEAL_MEMORY, RO_SEED, RO_REUSE,
	RO_TRAIN, RO_VCD, RO_TRACE, RO_DRAM_TRACE, RO_DRAM_FORMAT, RO_COUNT
};

extern const struct run_option run_options[RO_COUNT];

/* Whether option o applies to model (an index of run_model_names): its models, or every model. */
bool run_option_applies(const struct run_option *o, int model);

/* The row whose key is key among those given in `in` (OPT_IN_*), or NULL. */
const struct run_option *run_option_find(const char *key, unsigned in);

/* The keys of the rows given in `in`, in table order: "a, b, c" (last_sep ", ") or "a, b or c" (last_sep " or "). */
void run_option_keys(unsigned in, const char *last_sep, char *buf, size_t size);

struct sim_request;

/* Every run option of rq at its default; the rest of rq zeroed. */
void run_options_default(struct sim_request *rq);

/*
 * What v takes, as a message says after "expected ": "ws, os or is" (each in
 * double quotes when quoted: a JSON request's strings), "an integer in [1,
 * 1048576]", "true or false". only: the names a choice takes here (bit i:
 * names[i]; 0: all).
 */
void optval_expected(const struct optval *v, bool quoted, unsigned only, char *buf, size_t size);

/*
 * Reads text as v says into field (the option's field; count_off is from
 * base, the struct that holds it). only: as for optval_expected. Returns 0,
 * or -1 when text is not a value of v or a list is full (*full set), field
 * unchanged.
 */
int optval_parse(const struct optval *v, const char *text, unsigned only, void *base, size_t off, bool *full);

/* The label help shows for a value: arg, or a choice's names joined by "|" ("ws|os|is"). */
void optval_label(const struct optval *v, const char *arg, char *buf, size_t size);

#endif
