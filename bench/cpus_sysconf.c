/* SPDX-License-Identifier: MIT */
/*
 * cpus_sysconf.c: what a CPU-count query costs a program: sysconf(_SC_NPROCESSORS_ONLN)
 * (glibc's, or libpunctual-preload.so's under `punctual run --cpus`) beside the cached
 * pn_cpu_count() called from the shared library, in one process, block by block
 * (BLOCKS blocks of CALLS calls each, alternating, so that a burst of noise lands on both).
 * Prints "sysconf_answer sysconf_ns pn_answer pn_ns": the median ns per call of each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/cpus.h>

enum { BLOCKS = 201, CALLS = 2000 };

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	static double sc[BLOCKS], pn[BLOCKS];
	volatile long sink = 0;
	for (int i = 0; i < 200; i++) /* warm up: caches, the shim's first use */
		sink += sysconf(_SC_NPROCESSORS_ONLN) + pn_cpu_count();
	for (int b = 0; b < BLOCKS; b++) {
		int64_t t0 = pn_now();
		for (int i = 0; i < CALLS; i++)
			sink += sysconf(_SC_NPROCESSORS_ONLN);
		int64_t t1 = pn_now();
		for (int i = 0; i < CALLS; i++)
			sink += pn_cpu_count();
		int64_t t2 = pn_now();
		sc[b] = (double)(t1 - t0) / CALLS;
		pn[b] = (double)(t2 - t1) / CALLS;
	}
	(void)sink;
	qsort(sc, BLOCKS, sizeof(sc[0]), cmp);
	qsort(pn, BLOCKS, sizeof(pn[0]), cmp);
	printf("%ld %.2f %d %.2f\n", sysconf(_SC_NPROCESSORS_ONLN), sc[BLOCKS / 2], pn_cpu_count(),
	       pn[BLOCKS / 2]);
	return 0;
}
