/*
 * fuzz_workload.c - the workload YAML reader (workload_load on a .yaml path)
 * and lowering; the checks (the error contract, every op's sizes,
 * the analytic run) are fz_workload's, in lowered.c.
 */
#include "fuzz.h"
#include "lowered.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_workload(".yaml", data, size);
	return 0;
}
