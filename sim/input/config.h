/*
 * config.h - the accelerator: every key of every module, loaded from YAML.
 *
 * struct arch gathers the params of each model (array, sram, hbm, vector)
 * plus the clock. Keys are declared in one table per module (array_keys in
 * models/array.c, ...); this file strings them into one schema, so that
 * "array.rows" in a file, "--set array.rows=64" on the command line and the
 * line printed by `tpusim config --dump` are all the same key. Loading starts
 * from every default, overlays the file, then the --set overrides, and
 * remembers where each value came from for later errors.
 *
 * Some values follow other keys. hbm.type brings its memory's values (the
 * table in memory.c) for every memory key the same source does not set: a
 * source is one file, or the overrides together (--set, a request's "set", a
 * sweep's axes; later than every file). So --set hbm.type=hbm3 on a preset
 * that sets every memory key is an HBM3 memory, --set hbm.type=hbm3 --set
 * hbm.gbps=100 keeps 100, and a file that sets both keeps its own gbps.
 */
#ifndef TPUSIM_CONFIG_H
#define TPUSIM_CONFIG_H

#include <stdio.h>

#include "area.h"
#include "array.h"
#include "energy.h"
#include "cfg.h"
#include "chip.h"
#include "err.h"
#include "ici.h"
#include "memory.h"
#include "limit.h"
#include "sram.h"
#include "vector.h"

/*
 * Limits of one run, keys sim.* (their table, sim_keys, is in run.c, which
 * checks them): how much work the cycle and functional models may be asked for.
 */
struct sim_params {
	int64_t max_folds;              /* folds and vector chunks the cycle model runs, in all */
	int64_t max_pe_updates;         /* PE register updates (cycles x rows x cols) the functional model runs, in all */
	int64_t max_trace_bytes;        /* the estimated size of a --vcd or --dram-trace file */
	bool allow_hbm_overflow;        /* run a workload that does not fit in hbm.capacity_gib, and say so */
};

extern const struct cfg_key sim_keys[];

/*
 * A training step, keys train.* (their table, train_keys, is in
 * sim/lower/train.c, which builds the step: train.h).
 */
enum train_optimizer { OPT_SGD, OPT_MOMENTUM, OPT_ADAM, OPT_ADAMW };
enum train_remat { REMAT_NONE, REMAT_FULL, REMAT_SAVE_DOTS };
enum train_input_grads { IG_AUTO, IG_TRUE, IG_FALSE };
struct train_params {
	bool enabled;                   /* a training step instead of inference */
	int optimizer;                  /* enum train_optimizer */
	int remat;                      /* enum train_remat */
	int64_t microbatches;           /* gradient accumulation: the batch in this many parts */
	int input_grads;                /* enum train_input_grads: whether the network's inputs get gradients */
	double dropout;                 /* the dropout probability; 0: none */
	/*
	 * Not a key: the network's outputs get their gradients from elsewhere
	 * (a pipeline stage before the last, from the next stage's chip: inputs
	 * in HBM), not from a loss.
	 */
	bool grads_given;
};

extern const struct cfg_key train_keys[];

/* The mesh a workload is sharded over, keys mesh.* (sim/lower/shard.h). */
enum pipe_schedule { PIPE_1F1B, PIPE_GPIPE };

struct mesh_params {
	int64_t data, fsdp, tensor;     /* the degree of each mesh axis */
	int64_t pipeline;               /* pipeline stages (sim/run/pipeline.h) */
	int schedule;                   /* enum pipe_schedule */
	int64_t microbatches;           /* inference: the pipeline's microbatches (a step's: train.microbatches) */
	bool sequence;                  /* sequence parallelism over the tensor axis (shard.h) */
};

extern const char *const pipe_schedule_names[];   /* "1f1b", "gpipe" */

extern const struct cfg_key mesh_keys[];

struct arch {
	char name[CFG_STR_MAX];
	double clock_ghz;
	struct array_params array;
	struct sram_params sram;
	struct hbm_params hbm;
	struct vector_params vector;
	struct energy_params energy;
	struct area_params area;
	struct chip_params chip;
	struct ici_params pod;
	struct sim_params sim;
	struct train_params train;
	struct mesh_params mesh;
};

/* One key.path=value override, as given on the command line or in a library request. */
struct config_set {
	char key[CFG_NAME_MAX];
	char value[CONFIG_VALUE_MAX];
};

struct config {
	struct arch arch;
	char file[LIMIT_PATH];                      /* the first file; "defaults" when none was loaded */
	char files[CONFIG_MAX_FILES][LIMIT_PATH];   /* every file merged, in order */
	int nfiles;
	struct config_set sets[CONFIG_MAX_SETS];   /* every override applied, in order */
	int nsets;
	struct pos origin[CONFIG_MAX_KEYS];   /* where each schema entry got its value */
};

/* The schema of every config key (built once; borrowed). */
const struct cfg_schema *config_schema(void);

/* Fills c with every default. */
void config_init(struct config *c);

/*
 * Presets by name (the rule and the directory: preset.h). config_find puts
 * in path (size bytes) the file to load: name itself when it names a file
 * or is no preset name (loading then says what is wrong), else the
 * preset's path; a name that is neither is an error listing the presets.
 * config_merge does this itself.
 */
int config_find(const char *name, char *path, size_t size, struct err *e);

/* As config_find, with a relative name's file looked for under base (NULL: the working directory): a sweep's record. */
int config_find_in(const char *base, const char *name, char *path, size_t size, struct err *e);

/* The presets, "edge_32x32, ..., tpu_v5e, energy/horowitz_45nm, memory/hbm3, ...", in buf; "" when none is found. */
void config_presets(char *buf, size_t size);

/* config_init, then overlays the YAML file at path. */
int config_load(struct config *c, const char *path, struct err *e);

/*
 * Overlays one more file (or preset, config_find): the keys it gives replace the values so far (so
 * `-c configs/tpu_v4_mxu.yaml -c configs/memory/hbm3.yaml` puts HBM3 under
 * a TPU v4 MXU).
 */
int config_merge(struct config *c, const char *path, struct err *e);

/* Applies one "key.path=value" override, checked like the file. */
int config_set(struct config *c, const char *assignment, struct err *e);

/*
 * Whether assignment has the form of an override, key=value: 0, or -1 with
 * "--set: expected key.path=value, found ..."; next (may be NULL) is the
 * word that followed it on a command line, shown as the value it may be
 * ("--set array.rows 64": did you mean --set array.rows=64?).
 */
int config_assignment(const char *assignment, const char *next, struct err *e);

/*
 * Applies value to key, checked like the file; errors are placed at `at`
 * (the value's place in a request). quoted: the value was a quoted string,
 * so never a number.
 */
int config_set_key(struct config *c, const char *key, const char *value, bool quoted, struct pos at, struct err *e);

/*
 * Recomputes the values that follow other keys (hbm.type's defaults). Loading,
 * merging and --set do this themselves; call it after changing c->arch
 * directly.
 */
void config_resolve(struct config *c);

/*
 * With ideal memory the memory model's keys (hbm.*) change no cycle: one
 * given by --set (or a request's set) is refused, at its position. Without
 * energy (the run reports none: the lab) so is one an overlay gave (a config
 * file after the first; the first, a preset, sets every key). With energy an
 * overlay is let be (its energy keys count: memory/hbm3's pJ per bit), and
 * so are hbm.gbps and hbm.type, which set the PHYs' area (and the type the
 * pJ per bit), so the area, leakage and peak power. why: the run's
 * reason, as "(why, so it would change nothing)" says it ("--ideal-memory
 * makes memory ideal").
 */
int config_memory_unused(const struct config *c, bool energy, const char *why, struct err *e);

/*
 * The train.* keys change only a training step: one an override gave (--set,
 * a request's set) without train.enabled is refused at its position. why
 * (not NULL): the command runs no step at all (tpusim lab), so
 * train.enabled: true is refused too. Returns 0 or -1 with e set.
 */
int config_train_unused(const struct config *c, const char *why, struct err *e);

/* Where key got its value: file:line:col, --set, or the defaults (also what hbm.type brought). */
struct pos config_origin(const struct config *c, const char *key);

/* The chip's arrays (cores x arrays per core), and their PEs. */
int64_t arch_arrays(const struct arch *a);
int64_t arch_pes(const struct arch *a);

/*
 * Refuses a dtype the array does not run (array.rate_<dtype>: none), and a
 * rate other than 1 where folds are timed at one MAC per PE a cycle:
 * array.scalesim_compat, or the model one_mac names (NULL: none does).
 */
int config_check_rate(const struct config *c, const char *one_mac, struct err *e);

/*
 * chip.op_fixed_ns in cycles, rounded up: what every op pays before it
 * computes (op_fixed, models/cat.h); 0 with array.scalesim_compat.
 */
int64_t arch_op_fixed_cycles(const struct arch *a);

/*
 * The energy of one of the run's MACs (energy.mac_*_pj of its dtype), and of
 * its operands' moves between PEs in *move_pj; at a rate of 1/n each MAC is n
 * of the PE's own (area.pe_dtype's, else the dtype's) and n moves.
 */
double arch_mac_pj(const struct arch *a, double *move_pj);

/* MACs per cycle of the whole chip at the run's dtype: PEs x array.rate_<dtype> (array_rate). */
double arch_macs_per_cycle(const struct arch *a);

/*
 * Peak MACs per second (the whole chip) and HBM bytes per second: the memory
 * model's (hbm.model, memory.h), INFINITY for the ideal one.
 */
double arch_peak_macs_per_s(const struct arch *a);
double arch_hbm_bytes_per_s(const struct arch *a);

/*
 * The die's area in mm2, by part (enum area_part of models/area.h) in part[]
 * (AR_N doubles): area.* densities applied to the chip's PEs, buffers, vector
 * units and memory bandwidth (hbm.gbps, also under an ideal memory: the PHYs
 * are there). arch_idle_w: the power it draws doing nothing, area x
 * area.idle_mw_per_mm2, in W.
 */
double arch_area_mm2(const struct arch *a, double part[]);
double arch_idle_w(const struct arch *a);

/*
 * Writes one line per finding worth a warning into lines (at most max) and
 * returns how many: with ports (the run's model has port widths: the cycle
 * model without ideal memory, run_has_ports), a configured SRAM port
 * narrower than the array's edge needs, e.g. "configs/x.yaml:12:5: sram.inputs.bytes_per_cycle: 64 B/cycle
 * cannot feed the array's 128-row edge (needs 128); streams will stretch".
 * The caller prints them (once per run, on stderr). Not positioned: the
 * line starts at the key (summary.json, the same whichever way a value was given).
 */
int config_warnings(const struct config *c, bool ports, bool positioned, char lines[][CONFIG_WARNING_MAX], int max);

/*
 * The memory bound: cycles to move bytes at the memory model's full
 * bandwidth (memory.h), rounded up (INT64_MAX past 2^62); 0 for the ideal
 * memory.
 */
int64_t arch_memory_cycles(const struct arch *a, int64_t bytes);

/* Prints every key with its resolved value, unit and doc, as loadable YAML. */
void config_dump(const struct config *c, FILE *out);

#endif
