/*
 * tests.h - the Check suites of tpusim and the helpers they share.
 *
 * Every expectation in these tests is worked out by hand (the comments show
 * the arithmetic) or by an independent method (a fold-by-fold walk of the
 * tile program against the closed form); none is copied from program output.
 */
#ifndef TPUSIM_TESTS_H
#define TPUSIM_TESTS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "lower.h"
#include "stats.h"
#include "workload.h"

Suite *config_suite(void);
Suite *workload_suite(void);
Suite *lower_suite(void);
Suite *train_suite(void);
Suite *ici_suite(void);
Suite *pipeline_suite(void);
Suite *schedule_suite(void);
Suite *analytic_suite(void);
Suite *categories_suite(void);
Suite *errors_suite(void);
Suite *e2e_suite(void);
Suite *scw_suite(void);
Suite *engine_suite(void);
Suite *memory_suite(void);
Suite *energy_suite(void);
Suite *area_suite(void);
Suite *plots_suite(void);
Suite *api_suite(void);
Suite *monotone_suite(void);
Suite *limits_suite(void);
Suite *output_suite(void);
Suite *interrupt_suite(void);
Suite *determinism_suite(void);
Suite *apps_suite(void);
Suite *chip_suite(void);
Suite *functional_suite(void);
Suite *compare_suite(void);
Suite *vcd_suite(void);
Suite *lab_suite(void);
Suite *sweep_suite(void);
Suite *reuse_suite(void);
Suite *sweepplot_suite(void);
Suite *cli_suite(void);
Suite *trace_suite(void);
Suite *trace_read_suite(void);
Suite *npy_suite(void);
Suite *fsx_suite(void);
Suite *roofline_suite(void);
Suite *plan_suite(void);
Suite *nomem_suite(void);
Suite *sram_suite(void);
Suite *opkey_suite(void);

/* A fresh temporary directory (owned string; removed by th_rmdir). */
char *th_tmpdir(void);
void th_rmdir(const char *dir);

/* Writes text to dir/name; returns the owned path. */
char *th_write(const char *dir, const char *name, const char *text);

/*
 * The names in dir (not . and ..; names starting with a dot only if hidden),
 * sorted, each followed by sep (owned).
 */
char *th_listing(const char *dir, bool hidden, char sep);

/* Loads a workload from YAML text (via a temporary file) and lowers it. */
void th_lower(const char *yaml, struct workload *w, struct oplist *ops);
/* th_lower with lower_step on c: its pod, mesh and training step. */
void th_lower_step(const struct config *c, const char *yaml, struct workload *w, struct oplist *ops);

struct run_opts;

/*
 * Runs, with o, an add whose transfers take about 10^14 cycles each (memory
 * of 0.001 GB/s at 100 GHz, 1 MiB bursts) on the lab array, and checks that
 * the run fails inside the kernel (ERR_SIM, into *e): memory time past int64.
 */
void th_run_past_int64(const struct run_opts *o, struct err *e);

/* The config of a preset in configs/, with --set style overrides (NULL-terminated). */
void th_config(struct config *c, const char *preset, const char *const *sets);

/* Runs build/tpusim (from $TPUSIM) with argv in dir; returns the exit status, stdout and stderr (owned). */
int th_cli(const char *dir, const char *const *argv, char **out, char **err);

/* tpusim sweep with the arguments after err (NULL-terminated, at most 14) in dir; as th_cli. */
int th_sweep(const char *dir, char **out, char **err, ...);

/* The same for the program bin (a path, or a name looked up in PATH). */
int th_run(const char *bin, const char *dir, const char *const *argv, char **out, char **err);

/* The path of the tpusim binary, absolute. */
const char *th_tpusim(void);

/* A GEMM op of M x K times K x N, repeated rep times; B is the weight. */
struct op th_gemm(int64_t m, int64_t k, int64_t n, int64_t rep);

/*
 * Plans GEMM o for df (ideal: unbounded buffers; a vector op is not
 * planned), checks it, and runs the analytic model or engine en on the plan,
 * as run_workload does. Return 0 or -1 with e set.
 */
int th_analytic(const struct config *c, const struct op *o, int df, bool ideal, struct result *r, struct err *e);
int th_engine(engine *en, const struct config *c, const struct op *o, int df, bool ideal, struct result *r,
	      struct err *e);

/* A number in [lo, hi] from a xorshift generator; *state is the seed, updated. */
int64_t th_rnd(uint64_t *state, int64_t lo, int64_t hi);

/* The whole file at path, NUL-terminated (owned), or fails the test. */
char *th_slurp(const char *path);

/* The values of the .npy file at path (owned, row-major) and its shape, or NULL with e set (npy.h). */
double *th_npy(const char *path, int64_t *rows, int64_t *cols, struct err *e);

/*
 * The cycle model's work for the loaded simulation s (run_estimate: fold
 * instructions and vector chunks), failing the test with what names the
 * pair when it cannot plan: the suites that run every preset x workload pair
 * below a bound of work ask this.
 */
struct sim;
int64_t th_sim_folds(const struct sim *s, const char *what);

/*
 * Whether the workload at path is a pod's: on one chip its work passes
 * lowering's limit (configs/workloads/gpt3_175b.yaml at its global batch).
 * The suites that run every preset x workload pair below a bound of work
 * skip it, as they skip the pairs past their bound.
 */
bool th_pod_only(const char *path);

/* The sum of r's cycles by category (each must be >= 0, or the test fails). */
int64_t th_cat_sum(const struct result *r);

/*
 * The allocation hook (tests/failmem.cpp): from th_alloc_arm(n) to
 * th_alloc_disarm(), every allocation by tpusim's code (malloc, calloc,
 * realloc, strdup, strndup, open_memstream, newlocale) and every C++ new in
 * the process is counted, and the nth fails: once, or with persist it and
 * every later one (n = 0: none fails). th_alloc_disarm returns the number
 * counted.
 */
void th_alloc_arm(long n, bool persist);
long th_alloc_disarm(void);

/*
 * Reading what tpusim writes. JSON (summary.json, a library result) goes
 * through the project's own reader (ydoc_parse_json); a path names a node
 * below n: keys joined by '.', list items as [i] ("total.cycles",
 * "layers[2].name"; a key holding a dot: th_json_at of ynode_get). The
 * lookups fail the test, naming the path, when it is missing or of another
 * type; th_json_at returns NULL instead.
 */
struct ydoc;
struct ynode;
struct ydoc *th_json(const char *name, const char *text);    /* owned (ydoc_free); fails unless JSON */
struct ydoc *th_json_file(const char *path);
const struct ynode *th_json_at(const struct ynode *n, const char *path);
const char *th_json_str(const struct ynode *n, const char *path);  /* a quoted scalar */
int64_t th_json_int(const struct ynode *n, const char *path);
double th_json_num(const struct ynode *n, const char *path);

/*
 * CSV (layers.csv, sweep.csv, the golden table): RFC 4180 quotes, \n or
 * \r\n, every row as wide as the header (or the test fails). Rows count
 * from 0 after the header; columns go by their header name.
 */
struct th_csv {
	size_t rows, cols;
	char **cell;            /* (rows + 1) x cols, row 0 the header */
	char *text;
};
struct th_csv *th_csv(const char *name, const char *text);   /* owned (th_csv_free) */
size_t th_csv_col(const struct th_csv *c, const char *name);
const char *th_csv_get(const struct th_csv *c, size_t row, const char *name);
int64_t th_csv_int(const struct th_csv *c, size_t row, const char *name);
double th_csv_num(const struct th_csv *c, size_t row, const char *name);
void th_csv_free(struct th_csv *c);

/* The op named name in ops, or fails the test. */
const struct op *th_op(const struct oplist *ops, const char *name);

#endif
