/*
 * check_main.c - runs every suite; the exit status says whether all passed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests.h"

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_add_suite(sr, workload_suite());
	srunner_add_suite(sr, lower_suite());
	srunner_add_suite(sr, train_suite());
	srunner_add_suite(sr, ici_suite());
	srunner_add_suite(sr, pipeline_suite());
	srunner_add_suite(sr, apps_suite());
	srunner_add_suite(sr, chip_suite());
	srunner_add_suite(sr, schedule_suite());
	srunner_add_suite(sr, analytic_suite());
	srunner_add_suite(sr, categories_suite());
	srunner_add_suite(sr, errors_suite());
	srunner_add_suite(sr, scw_suite());
	srunner_add_suite(sr, engine_suite());
	srunner_add_suite(sr, functional_suite());
	srunner_add_suite(sr, vcd_suite());
	srunner_add_suite(sr, trace_suite());
	srunner_add_suite(sr, trace_read_suite());
	srunner_add_suite(sr, npy_suite());
	srunner_add_suite(sr, fsx_suite());
	srunner_add_suite(sr, limits_suite());
	srunner_add_suite(sr, memory_suite());
	srunner_add_suite(sr, sram_suite());
	srunner_add_suite(sr, energy_suite());
	srunner_add_suite(sr, area_suite());
	srunner_add_suite(sr, plots_suite());
	srunner_add_suite(sr, compare_suite());
	srunner_add_suite(sr, api_suite());
	srunner_add_suite(sr, nomem_suite());
	srunner_add_suite(sr, monotone_suite());
	srunner_add_suite(sr, output_suite());
	srunner_add_suite(sr, interrupt_suite());
	srunner_add_suite(sr, determinism_suite());
	srunner_add_suite(sr, lab_suite());
	srunner_add_suite(sr, sweep_suite());
	srunner_add_suite(sr, reuse_suite());
	srunner_add_suite(sr, opkey_suite());
	srunner_add_suite(sr, sweepplot_suite());
	srunner_add_suite(sr, cli_suite());
	srunner_add_suite(sr, roofline_suite());
	srunner_add_suite(sr, plan_suite());
	srunner_add_suite(sr, e2e_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	/* A run in which no test ran (a filter that matched nothing) is not a pass. */
	if (srunner_ntests_run(sr) == 0) {
		fprintf(stderr, "no test ran\n");
		failed = 1;
	}
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
