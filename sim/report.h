/*
 * report.h - what a run shows: the terminal summary, layers.csv, summary.json.
 *
 * Derived figures are computed here, once, from the counts in struct result:
 *   utilization   = MACs / (cycles x rows x cols)
 *   ops           = 2 x MACs
 *   intensity     = ops / (HBM bytes read + written)          [ops/B]
 *   achieved      = ops / (cycles / clock)                    [ops/s]
 *   attainable    = min(peak ops/s, HBM bytes/s x intensity)  [ops/s] (the peak with ideal memory)
 *   energy        result_energy (stats.h): counts x per-action energies [pJ]
 *   TOPS/W        ops / energy; EDP = energy [J] x time [s]
 * DIR/layers.csv and DIR/summary.json are links into DIR/.tpusim/current,
 * which one rename points at a new run's pair (report.c): at every instant,
 * under kills and concurrent runs, the two come from one run; a failed run
 * changes nothing in DIR.
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
};

/* The per-layer and total table for a terminal. */
void report_summary(FILE *out, const struct report_ctx *c);

/*
 * The text of summary.json: the design point (version, config files,
 * overrides, every resolved config key, workload, model, options), the total
 * and every layer.
 */
void report_json(FILE *f, const struct report_ctx *c);

/*
 * DIR/layers.csv and DIR/summary.json, committed together; creates DIR and
 * its missing parents. Removes what earlier killed runs left in DIR/.tpusim.
 */
int report_write(const char *dir, const struct report_ctx *c, struct err *e);

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
