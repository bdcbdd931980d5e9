/*
 * lowered.h - the workload harnesses' shared body: load, lower, check.
 */
#ifndef TPUSIM_FUZZ_LOWERED_H
#define TPUSIM_FUZZ_LOWERED_H

#include <stddef.h>
#include <stdint.h>

/* Loads the bytes as a workload file ending in tag (".yaml" or ".csv"), lowers it and checks both. */
void fz_workload(const char *tag, const uint8_t *data, size_t size);

#endif
