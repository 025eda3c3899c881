/* SPDX-License-Identifier: MIT */
/*
 * noise.c: how far apart two runs' quantiles must be to differ: one run's interval from its
 * order statistic, widened by a between-run factor.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/noise.h"

/* Two runs of one host differ by more than either's samples allow: each interval is
 * widened by this both ways (docs/DESIGN.md, "--compare's noise rule"). */
#define BETWEEN_RUNS 1.5

double noise_z(size_t m)
{
	double tail = 0.025 / (double)(m ? m : 1), lo = 0, hi = 40;
	for (int i = 0; i < 100; i++) { /* bisection on erfc */
		double z = (lo + hi) / 2;
		if (0.5 * erfc(z / M_SQRT2) > tail)
			lo = z;
		else
			hi = z;
	}
	return hi;
}

/* Below the lowest known value the low end mirrors the high one, v^2 / high: lateness is
 * skewed right, so the mirror is the wider. */
void noise_interval(double v, double q, double n, double z, double res, noise_at *at,
                    const void *arg, double *lo, double *hi)
{
	double d = z * sqrt(q * (1 - q) / n);
	double h = at(arg, fmin(q + d, 1));
	double l = at(arg, fmax(q - d, 0));
	if (isnan(h))
		h = INFINITY;
	if (isnan(l))
		l = isfinite(h) && h > 0 ? v * v / h : 0;
	*lo = fmin(l, v * (1 - res)) / BETWEEN_RUNS;
	*hi = fmax(h, v * (1 + res)) * BETWEEN_RUNS;
}

int noise_apart(double a_lo, double a_hi, double b_lo, double b_hi)
{
	if (b_hi < a_lo)
		return -1;
	return b_lo > a_hi ? +1 : 0;
}
