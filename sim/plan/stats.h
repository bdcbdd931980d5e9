/*
 * stats.h - what one op, one layer or a whole run cost, as both models count it.
 *
 * Every cycle of an op's time is in exactly one category of models/cat.h,
 * so the categories sum to `cycles`.
 */
#ifndef TPUSIM_STATS_H
#define TPUSIM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat.h"
#include "energy.h"
#include "ici.h"
#include "memory.h"
#include "sram.h"

extern const char *const cat_names[];   /* "compute", "weights", ... */

struct result {
	int64_t macs;
	int64_t cycles;                 /* wall cycles */
	int64_t compute_cycles;         /* array (or vector unit) busy, fill and drain included, no memory waits */
	int64_t memory_cycles;          /* HBM bytes at full bandwidth */
	int64_t cat[CAT_N];             /* sums to cycles */
	int64_t comm_cycles;            /* collectives on the pod's links, each alone (plan_bound_op) */
	int64_t link_bytes[ICI_NAXES];  /* what the busiest link of each of the pod's axes carried, both directions */
	int64_t hbm_read_bytes, hbm_write_bytes;
	int64_t spill_bytes;            /* of those, activations that did not fit on chip */
	/*
	 * bus_bytes - HBM bytes (struct metrics): the bytes of other ops that
	 * crossed the memory bus in this op's cycles, less those of its own that
	 * crossed in other ops' cycles (sim/exec/engine.c, struct bus). 0 wherever ops
	 * do not overlap (layer by layer, the analytic and functional models);
	 * summed over a run, 0.
	 */
	int64_t bus_shift_bytes;
	int64_t sram_read_bytes[SRAM_NBUF], sram_write_bytes[SRAM_NBUF];
	int64_t folds;
	int64_t gemm_ops, vector_ops, collective_ops;
	int64_t split_m_ops, split_n_ops;       /* GEMM ops shared out over the arrays by M, by N */
	int64_t mem_counts[MEM_MAX_COUNTERS];   /* cycle model: the memory model's counters (memory.h), its requests' shares */
};

/* Derived from a result and the accelerator by report_metrics (report.h). */
struct metrics {
	double utilization;
	double ops;
	double bus_bytes;               /* bytes that crossed the memory bus in the cycles: HBM bytes + bus_shift_bytes */
	double intensity;               /* ops / bus_bytes: the roofline's x */
	double achieved_ops_per_s;
	double attainable_ops_per_s;
	double energy_pj;               /* the sum of part[] */
	double part[EN_N];               /* by component (enum energy_part of models/energy.h) */
	double pj_per_mac;
	double tops_per_w;              /* ops per pJ = TOPS/W */
	double power_w;                 /* energy / time */
	double tops_per_mm2;            /* achieved TOPS / the die's area */
	double edp_js;                  /* energy x delay, J s */
	double link_utilization[ICI_NAXES];     /* link_bytes over what the axis's links move in the cycles */
};

/*
 * The fields of a result, declared once, in report order: this table drives
 * result_add (every count is summed), the CSV columns and JSON keys of
 * layers.csv and summary.json, the terminal table and the tests.
 *
 *   RF_COUNT   int64 counts in struct result, summed over ops and layers
 *   RF_METRIC  doubles in struct metrics, derived from the counts
 *
 * A field is one value, or n parts named by parts[]: in JSON an object under
 * `name`, in CSV one column each, spelled by the pattern csv ("cycles_%s").
 */
enum rf_kind { RF_COUNT, RF_METRIC };

struct result_field {
	const char *name;               /* JSON key; the CSV column of a single value */
	const char *csv;                /* parts: CSV column pattern, %s = the part's name */
	const char *unit;
	const char *doc;
	int kind;                       /* enum rf_kind */
	size_t off;                     /* in struct result (RF_COUNT) or struct metrics (RF_METRIC) */
	int n;                          /* 1, or the number of parts */
	const char *const *parts;       /* names of the parts, or NULL */
	bool reported;                  /* false: counted and summed, not written */
	/* The terminal table: heading (one per part for parts; NULL: not shown), width, decimals,
	   scale (value x scale), and whether a part is shown as a percent of the cycles. */
	const char *const *term;
	int width, prec;
	double scale;
	bool pct_of_cycles;
};

extern const struct result_field result_fields[];   /* ends with name NULL */

/* The field named name (its JSON key), or NULL. */
const struct result_field *result_field_find(const char *name);

/* Field f (part i) of r or m, as a double; counts also as int64. */
double result_field_value(const struct result_field *f, int i, const struct result *r, const struct metrics *m);
int64_t result_field_count(const struct result_field *f, int i, const struct result *r);

/* a += b, for every count of the table */
void result_add(struct result *a, const struct result *b);

struct arch;

/*
 * The energy of r on accelerator a, in pJ, by part (enum energy_part of
 * models/energy.h): the counts in r times a's per-action energies. Returns
 * the total, which is the sum of the parts.
 */
double result_energy(const struct arch *a, const struct result *r, double part[]);

/*
 * The most the counted actions can draw, in W: every PE doing a MAC (and
 * moving its operands) each cycle, each array's port of every buffer read
 * and written its width each cycle, the memory at hbm.gbps, and the idle
 * power. A whole run never draws more; a layer may where its bytes cross in
 * other layers' cycles (bus_shift_bytes).
 */
double result_peak_power_w(const struct arch *a);

#endif
