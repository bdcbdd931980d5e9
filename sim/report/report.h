/*
 * report.h - what a run shows: the terminal summary (report_text.c),
 * layers.csv and SCALE-Sim's COMPUTE_REPORT.csv (report_csv.c), summary.json
 * (report_json.c), the dataflows compared (report_compare.c) and the ops of
 * a lowered workload (report_lower.c).
 *
 * Derived figures are computed once, in report.c, from the counts in struct result:
 *   utilization   = MACs / (cycles x rows x cols)
 *   ops           = 2 x MACs
 *   intensity     = ops / bus_bytes                           [ops/B]
 *                   bus_bytes: the bytes that crossed the memory bus in the
 *                   cycles (HBM bytes + bus_shift_bytes, stats.h)
 *   achieved      = ops / (cycles / clock)                    [ops/s]
 *   attainable    = min(peak ops/s, HBM bytes/s x intensity)  [ops/s] (the peak with ideal memory)
 *   energy        result_energy (stats.h): counts x per-action energies [pJ]
 *   TOPS/W        ops / energy; EDP = energy [J] x time [s]
 *   power         energy / time [W]; TOPS/mm2 = achieved TOPS / the die's area
 *                 (arch_area_mm2, config.h); the peak power: result_peak_power_w
 * DIR/layers.csv and DIR/summary.json (and COMPUTE_REPORT.csv) are links
 * into DIR/.tpusim/current, which one rename points at a new run's files
 * (outdir.h): at every instant, under kills and concurrent runs, they come
 * from one run; a failed run changes nothing in DIR.
 */
#ifndef TPUSIM_REPORT_H
#define TPUSIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "compare.h"
#include "config.h"
#include "lower.h"
#include "run.h"
#include "workload.h"


/* ideal: memory is infinitely fast, so the bound is the peak. */
void report_metrics(const struct arch *a, const struct result *r, bool ideal, struct metrics *m);

struct report_ctx {
	const struct config *cfg;
	const struct workload *w;
	const struct run *run;
	const struct run_opts *opts;
	const struct oplist *ops;       /* the ops run; needed by report_write under array.scalesim_compat */
};

/*
 * The die's area by part and the chip's peak and idle power, two lines each
 * starting with prefix ("# " under config --dump, whose output stays YAML).
 */
void report_area(FILE *out, const struct arch *a, const char *prefix);

/* s as one CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break. */
void report_csv_str(FILE *f, const char *s);

/* The per-layer and total table for a terminal. */
void report_summary(FILE *out, const struct report_ctx *c);

/* Field i of fd as layers.csv and summary.json print it: counts exactly, metrics to 17 digits. */
void report_field_num(FILE *f, const struct result_field *fd, int i, const struct result *r, const struct metrics *m);

/* The text of layers.csv: a heading line, then one row per layer with every reported field. */
void report_layers_csv(FILE *f, const struct report_ctx *c);

/*
 * The text of summary.json: the design point (version, config files,
 * overrides, every resolved config key, workload, model, options), the total
 * and every layer.
 */
void report_json(FILE *f, const struct report_ctx *c);

/*
 * SCALE-Sim v2's COMPUTE_REPORT.csv for the run: its header, byte for byte,
 *   LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,
 * then one row per workload layer, "0, 79, 0, 23.734177215189874, 46.875, 20.380434782608695,",
 * numbers as Python prints them. With R x C the array and, per GEMM fold of
 * SCALE-Sim's mapping (ws: Sr = K, Sc = N, T = M; os: Sr = M, Sc = N, T = K;
 * is: Sr = K, Sc = M, T = N; ceil(Sr/R) x ceil(Sc/C) folds per instance):
 *   Total Cycles          the layer's cycles
 *   Stall Cycles          cycles - compute_cycles: the memory waits
 *   Overall Util %        100 MACs / (cycles x PEs)
 *   Mapping Efficiency %  100 x the mean over folds of (PEs mapped / R C)
 *   Compute Util %        100 x the mean over folds of PEs mapped x T / (R C x cycles of the fold as
 *                         SCALE-Sim counts them: 2R + 2C + T - 3 for ws and is, R + C + T - 2 for os)
 * A layer without GEMM folds (a vector op) has 0.0 for the last two.
 */
void report_scalesim(FILE *f, const struct report_ctx *c);

/*
 * DIR/layers.csv and DIR/summary.json, committed together, and with
 * array.scalesim_compat DIR/COMPUTE_REPORT.csv (report_scalesim) with them;
 * creates DIR and its missing parents. Removes what earlier killed runs left
 * in DIR/.tpusim (outdir_commit).
 */
int report_write(const char *dir, const struct report_ctx *c, struct err *e);

/* Before the run: whether DIR may take the reports report_write puts there (outdir_check). */
int report_check(const char *dir, struct err *e);

/*
 * The dataflows of c compared (o: the options they ran with). The terminal
 * form: per dataflow, what stays in the PEs, what streams, and the re-read
 * factors of compare.h over the whole run; then every layer and the total
 * under each dataflow (folds, utilization, cycles and their ratio to the base
 * dataflow, HBM bytes read and written, energy in pJ to 7 digits); then a why
 * line per dataflow. The CSV: one row per layer and dataflow, then the total
 * rows, with those columns and the cycles by category, SRAM reads by buffer,
 * the re-read factors per layer, the largest stall and the operand re-read
 * most; numbers bare, an empty cell where there is none.
 */
void report_compare(FILE *out, const struct config *cfg, const struct workload *w, const struct run_opts *o,
		    const struct compare *c, bool csv);

/* The ops of a lowered workload, as a table or CSV, with totals. */
void report_lower(FILE *out, const struct workload *w, const struct oplist *ops, const struct arch *a, bool csv);

#endif
