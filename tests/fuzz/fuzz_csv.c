/*
 * fuzz_csv.c - the SCALE-Sim topology reader (workload_load on a .csv path)
 * and lowering.
 */
#include "fuzz.h"
#include "lowered.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_workload(".csv", data, size);
	return 0;
}
