/*
 * fuzz_workload.c - the workload YAML reader (workload_load on a .yaml path)
 * and lowering.
 */
#include "fuzz.h"
#include "lowered.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_workload(".yaml", data, size);
	return 0;
}
