/*
 * limit.h - every limit of tpusim, with its value and its reason, in one place.
 *
 * A limit is a bound the program holds its inputs, its runs or its outputs
 * to: a longer path, a bigger batch, a run of more cycles is refused with a
 * message that prints the constant from here (never the number typed again).
 * The modules that check a limit include this header; it includes nothing of
 * the project, so that it sits below every stage. (It is not "limits.h":
 * with -Isim that name would hide the C library's <limits.h>.)
 *
 * Sizes of buffers that only a module's own code sees (zlib's chunks, a
 * tile's label) stay in that module; what is here bounds what a user can ask.
 * Cycle limits are powers of two, each with its exponent (_LOG2) for the
 * messages ("at most 2^62 cycles"). A message that is a string constant
 * spells a limit with LIMIT_STR: "an integer in [1, " LIMIT_STR(LIMIT_BATCH)
 * "]" is "an integer in [1, 1048576]"; such a limit is a plain decimal
 * literal here, so that its text is its value.
 */
#ifndef TPUSIM_LIMIT_H
#define TPUSIM_LIMIT_H

#include <stdint.h>

/* The decimal text of a limit that is a plain literal, as a string constant. */
#define LIMIT_STR(x) LIMIT_STR_(x)
#define LIMIT_STR_(x) #x

/* ---- paths ---- */

/*
 * A path as tpusim keeps it (a config's file name) and the longest a message
 * shows before "...": Linux's PATH_MAX (4096, with its NUL), so any path the
 * system takes is kept and shown whole.
 */
#define LIMIT_PATH 4096

/*
 * A buffer for a path and what is built from it: the path quoted for a
 * message (LIMIT_PATH bytes and "..."), a file name under a
 * directory, a temporary name beside a file.
 */
#define LIMIT_QUOTE_BUF 4200
#define LIMIT_PATH_BUF 4400

/*
 * The longest output path that names are built beside or under (--html's
 * temporary file, --vcd's base, a sweep's directory): LIMIT_PATH_BUF holds
 * it with a file name of up to 400 bytes.
 */
#define LIMIT_OUT_PATH 4000

/* The longest sweep directory --plot draws into: its plots' names are long (dir/plots/heatmap_<axes>_<wl>_<df>.svg). */
#define LIMIT_OUT_DIR 3000

/* ---- names and values ---- */

#define CFG_NAME_MAX 64                 /* a config key's dotted name, with its NUL */
#define CFG_STR_MAX 64                  /* a config's string value (a preset's name), with its NUL */
#define CONFIG_VALUE_MAX 256            /* the value of one --set key.path=value, with its NUL */
#define CONFIG_WARNING_MAX 512          /* one line of config_warnings, with its NUL */
#define OP_NAME_MAX 96                  /* an op's name: "layer", "layer.suffix" or "layer.qk[3]" */
#define WORKLOAD_PATH_MAX 64            /* workload_layer_path's text ("layers[12].k"), with its NUL */
#define ERR_MSG_MAX 8192                /* one error message, with its NUL */

/* ---- configs ---- */

#define CONFIG_MAX_KEYS 96              /* keys of one section a config file may set */
#define CONFIG_MAX_FILES 8              /* config files merged into one (-c a.yaml -c b.yaml ...) */
#define CONFIG_MAX_SETS 256             /* --set overrides of one run */

/*
 * A pod: at most 64 chips along a torus axis (the largest slice, v5p's
 * 16 x 20 x 28, has 28) and 1024 slices over the DCN, so that a pod of
 * 64^3 x 1024 chips stays far inside 64 bits.
 */
#define POD_MAX_DIM 64
#define POD_MAX_SLICES 1024
#define POD_MAX_CHIPS 268435456         /* 64^3 x 1024 */

/* The most near-equal parts a GEMM's streamed dimension is tried in (sim/plan/schedule.c). */
#define SCHED_MAX_PARTS 65536

/* Chakra traces (--chakra): a file a rank, so at most this many chips. */
#define CHAKRA_MAX_RANKS 65536

/* Pipeline stages (mesh.pipeline): a stage is at least one block instance or layer, each simulated on its own chip. */
#define PIPE_MAX_STAGES 4096

/*
 * A chip: at most 8 cores of at most 8 arrays each (the largest TPU has 2
 * TensorCores of 4 MXUs), so that a plan's per-array tables stay on the stack.
 */
#define CHIP_MAX_CORES 8
#define CHIP_MAX_ARRAYS_PER_CORE 8
#define CHIP_MAX_ARRAYS (CHIP_MAX_CORES * CHIP_MAX_ARRAYS_PER_CORE)

/* Most tiles of one stream (or accumulator blocks) in flight: the engine's queue depth (assumed). */
#define SRAM_MAX_SLOTS 64

/* ---- inputs: YAML, JSON, CSV, .npy ---- */

#define YDOC_MAX_BYTES (64u << 20)      /* a config, workload or request file: bigger ones are not that */
#define YDOC_MAX_DEPTH 64               /* nesting of YAML or JSON collections */
#define CSV_LINE_MAX 4094               /* characters of a SCALE-Sim topology line, without its end */
#define NPY_HEADER_MAX 10000            /* a .npy file's header dict, in bytes: numpy reads at most 10000 (numpy/lib/format.py, _MAX_HEADER_SIZE) */

/* ---- workloads and their ops ---- */

/* The batch: a run's samples (--batch, a request's "batch", a sweep axis, a workload's batch:). */
#define LIMIT_BATCH 1048576            /* 2^20 */

#define LAYER_MAX_KEYS 32               /* keys of one layer */
#define LAYER_MAX_INPUTS 2              /* activation inputs of a layer (add, mul, matmul) */
#define WORKLOAD_MAX_LAYERS 1000000     /* layers per file, in either format, blocks expanded */
#define WORKLOAD_DIM_MAX 1099511627776.0        /* 2^40: any one dimension of a layer */
#define WORKLOAD_COUNT_MAX 1e9          /* instances of a layer: repeat, groups, a DP row's channels */

/*
 * Every product the lowering forms, and a workload's total of all of them,
 * stays below 2^58, so that bytes (x4) and every sum over the workload fit
 * in int64.
 */
#define LOWER_LIMIT_LOG2 58
#define LOWER_LIMIT (INT64_C(1) << LOWER_LIMIT_LOG2)
#define LOWER_MAX_OPS 1000000           /* ops per workload */
#define LOWER_MAX_BLOCKS 4096           /* causal blocks per attention layer */

/* ---- runs ---- */

/*
 * A run counts at most 2^62 cycles, so that every sum of a run's counts fits
 * in int64. The closed form's estimate of a run is held to 2^58, a 16th of
 * that: the cycle engine adds stalls to the closed form, and the margin
 * leaves them room. Each op is held to 2^50 cycles (13 days at 1 GHz).
 */
#define RUN_MAX_CYCLES_LOG2 62
#define RUN_MAX_CYCLES (INT64_C(1) << RUN_MAX_CYCLES_LOG2)
#define RUN_MAX_EST_CYCLES_LOG2 58
#define RUN_MAX_EST_CYCLES (INT64_C(1) << RUN_MAX_EST_CYCLES_LOG2)
#define ANALYTIC_MAX_CYCLES_LOG2 50
#define ANALYTIC_MAX_CYCLES (INT64_C(1) << ANALYTIC_MAX_CYCLES_LOG2)

/* A chip's cycle run (chip.prefetch_across_ops) gives the engine at most this many op parts (ops x arrays) a pass. */
#define RUN_KEEP_PLANS 65536

/* Entries the reuse cache holds before it forgets them all (opcache.h). */
#define OPCACHE_MAX 8192

/* ---- outputs ---- */

/*
 * The functional model's VCD: one array of at most 16 x 16 PEs (its size,
 * as every trace's, is capped by sim.max_trace_bytes: run_check_trace_bytes).
 */
#define FUNC_VCD_MAX_PES 16

/*
 * The event trace (trace.h). Its header line and an N record's names are
 * bounded so a reader needs no unbounded buffer; a pass holds at most
 * RUN_KEEP_PLANS ops x lanes, as the engine runs at most that many at once,
 * and so a trace has at most that many lanes (a pass of one op).
 */
#define TRACE_MAX_HEAD 4096             /* the header line, '\n' included */
#define TRACE_MAX_NAME 4096             /* each name of an N record */
#define TRACE_MAX_PASS_CELLS RUN_KEEP_PLANS
#define TRACE_MAX_LANES TRACE_MAX_PASS_CELLS

/* The course lab (lab.h). */
#define LAB_MAX_DIM 16                  /* array rows and cols the grid draws */
#define LAB_GEMM_MAX 1024               /* M, K and N of --gemm */
#define LAB_MAT_MAX 32                  /* matrices larger than this in any dimension are not printed or drawn */
#define LAB_HTML_MAX (20L << 20)        /* bytes of embedded data a page may hold */

/* ---- sweeps ---- */

#define SWEEP_MAX_AXES 32               /* axes of one sweep */
#define SWEEP_MAX_VALUES 4096           /* values of one axis */
#define SWEEP_MAX_WORKLOADS 256         /* workloads of one sweep */
#define SWEEP_MAX_POINTS 1000000        /* design points: the product of the axes' values and the workloads */
#define SWEEP_MAX_JOBS 64               /* -j: points run at once */
#define SWEEP_MAX_CHUNKS 1000           /* jobs an emit makes unless --chunk-size says otherwise */
#define SWEEP_SLURM_MAX_ARRAY 1001      /* Slurm's MaxArraySize by default (indices 0..1000): more tasks get a note */
#define SWEEPPLOT_MAX_HEATMAPS 8        /* heatmap files per format: the first workload x dataflow pairs (--heatmaps all: every one) */
#define SWEEPPLOT_MAX_CELLS 64          /* values along each axis of a heatmap */
#define SWEEPPLOT_MAX_CSV_BYTES (1u << 30)      /* a sweep.csv --plot reads: SWEEP_MAX_POINTS rows of up to 1 KB */

#endif
