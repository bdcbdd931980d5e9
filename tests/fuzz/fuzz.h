/*
 * fuzz.h - what the libFuzzer harnesses share (tests/fuzz/fuzz_*.c).
 *
 * Each harness feeds one reader the fuzzer's bytes and then checks the
 * reader's contract, aborting (a finding) when it is broken: an input is
 * either accepted, or refused with one nonempty line and the status of bad
 * input (2) or out of memory (3). No harness runs the SystemC engine.
 *
 * The file readers take a path, so the bytes go to this process's own
 * scratch file (in /dev/shm when it is writable), rewritten for every input
 * and removed at exit.
 */
#ifndef TPUSIM_FUZZ_H
#define TPUSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/*
 * Writes size bytes of data to this process's scratch file whose name ends
 * in tag (".yaml", ".csv"; one file per tag). Returns its path (static
 * storage); aborts when the file cannot be written.
 */
const char *fz_file(const char *tag, const uint8_t *data, size_t size);

/* Aborts unless e holds a refusal as the contract says (rc < 0) or nothing (rc == 0). */
void fz_check_err(int rc, const struct err *e, const char *what);

/* Aborts with a message on stderr. */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
