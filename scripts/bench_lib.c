/*
 * bench_lib.c - the cost of one simulation through the library, with no
 * process start: runs one request n times in one process and prints the
 * fastest and the median wall time of a call.
 *
 *   bench_lib CONFIG WORKLOAD [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tpusim.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char request[8192], *first = NULL;
	int n = argc > 3 ? atoi(argv[3]) : 20;
	double *t;

	if (argc < 3 || n < 1) {
		fprintf(stderr, "usage: bench_lib CONFIG WORKLOAD [N]\n");
		return 2;
	}
	snprintf(request, sizeof request, "{\"configs\": [\"%s\"], \"workload\": \"%s\"}", argv[1], argv[2]);
	t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		char *result;
		double t0 = now();
		int rc = tpusim_run_json(request, &result);
		t[i] = now() - t0;
		if (rc != 0) {
			fprintf(stderr, "%s\n", result ? result : "out of memory");
			return rc;
		}
		/* Every call gives the same answer. */
		if (first && strcmp(first, result) != 0) {
			fprintf(stderr, "call %d gave a different summary\n", i);
			return 1;
		}
		if (!first)
			first = result;
		else
			tpusim_free(result);
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%.6f %.6f %d\n", t[0], t[n / 2], n);
	tpusim_free(first);
	free(t);
	return 0;
}
