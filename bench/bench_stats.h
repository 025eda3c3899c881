/* SPDX-License-Identifier: MIT */
/*
 * bench_stats.h: the clock, the sort orders and the median the bench programs share;
 * nothing of libpunctual's, so that the plain peers stay plain.
 */
#ifndef PN_BENCH_STATS_H
#define PN_BENCH_STATS_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline long long bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* qsort's ascending orders: of long longs, of doubles. */
static inline int bench_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

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
