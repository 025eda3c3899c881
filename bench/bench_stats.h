/* SPDX-License-Identifier: MIT */
/*
 * bench_stats.h: the median the benchmarks report, shared by the bench programs.
 */
#ifndef PN_BENCH_STATS_H
#define PN_BENCH_STATS_H

#include <stddef.h>
#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n), n > 0 (an even n gives the mean of the two middle values);
 * sorts v in place. */
static inline double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
