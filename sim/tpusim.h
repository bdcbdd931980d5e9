/*
 * tpusim.h - tpusim as a library (build/libtpusim.so).
 *
 * One call runs one simulation, described by a JSON request, and returns the
 * text of the summary.json that `tpusim run -o DIR` would write for the same
 * inputs, byte for byte. The request is an object with these keys (all but
 * configs and workload optional), the run options of options.c, which a test
 * holds this list to:
 *
 *   configs        ["configs/tpu_v1.yaml", ...]   the -c files, in order
 *   set            {"sram.inputs.kib": 1024, ...} --set overrides, applied in order
 *   workload       "configs/workloads/resnet50.yaml"
 *   model          "analytic" | "cycle" | "functional"   (default "cycle")
 *   dataflow       "ws" | "os" | "is"             (default: array.dataflow)
 *   batch          an integer in [1, 1048576]      (default: the workload's)
 *   ideal_memory   true | false                    (default false)
 *   seed           an integer in [0, 2^64)         (default 1: the functional model's operands)
 *   reuse          true | false                    (default true: identical ops take one result)
 *   train          true | false                    (default false: a training step, train.enabled)
 *
 * Paths are relative to the process's working directory; a config or a
 * workload named without a path ("tpu_v1", "resnet50") is a preset or a
 * shipped workload, as on the command line. Calls are independent: a call
 * that failed leaves the next one unaffected. Any number of threads may call
 * at once; the calls run one at a time (SystemC keeps its kernel in
 * process-wide state), each waiting for the one before it to return, and
 * each gets the answer it would get alone. A child forked while a call runs
 * in another thread must not call (its copy of the kernel is mid-run).
 * Numbers are read and written in the C locale whatever locale the host
 * program chose (setlocale or uselocale, e.g. one with a decimal comma): the
 * call switches its thread to C and back, so the answer is the same bytes in
 * any locale.
 */
#ifndef TPUSIM_H
#define TPUSIM_H

#ifdef __cplusplus
extern "C" {
#endif

#define TPUSIM_VERSION "0.2.0"
#define TPUSIM_API __attribute__((visibility("default")))

/*
 * Runs the request. Returns the CLI's exit status: 0 ok, 1 simulation error,
 * 2 bad input (including a malformed request), 3 out of memory (inside SystemC too: its
 * std::bad_alloc is caught, never thrown to the caller), 130 interrupted (tpusim_interrupt). *result receives owned text:
 * summary.json on 0, the CLI's one error line (no newline) otherwise; free it
 * with tpusim_free. *result is NULL only when memory ran out.
 */
TPUSIM_API int tpusim_run_json(const char *request, char **result);

/*
 * Stops every call made before it, running or waiting its turn (in any
 * thread): each fails soon after (between folds; at once if it had not
 * begun) with status 130, as the CLI on SIGINT, and "interrupted by
 * SIGINT"; what it made is removed as after any failure. A call made after
 * it is not affected, so an interrupt with no call running is forgotten.
 * Async-signal-safe (lock-free atomics): a SIGINT handler may call it.
 */
TPUSIM_API void tpusim_interrupt(void);

/* Frees a result; NULL is a no-op. */
TPUSIM_API void tpusim_free(char *result);

/* "0.2.0": the version, as in every summary.json. */
TPUSIM_API const char *tpusim_version(void);

#ifdef __cplusplus
}
#endif

#endif
