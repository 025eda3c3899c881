/* SPDX-License-Identifier: MIT */
/* noise.h: the noise rule of a quantile: each run's quantile gets an interval, and two runs
 * differ when their intervals do not overlap. */
#ifndef PUNCTUAL_NOISE_H
#define PUNCTUAL_NOISE_H

#include <stddef.h>

/* The z for m quantiles compared at once, a two-sided 5% in all (Bonferroni). */
double noise_z(size_t m);
/* The value at quantile q of one run's samples, NAN beyond what it knows. */
typedef double noise_at(const void *arg, double q);
/* The interval of v, the q-quantile of n samples: the ranks q n +- z sqrt(n q (1 - q)) as
 * values, widened to the resolution res and by the between-run factor. INFINITY beyond
 * the highest known value. */
void noise_interval(double v, double q, double n, double z, double res, noise_at *at,
                    const void *arg, double *lo, double *hi);
/* -1 when [b_lo, b_hi] lies wholly below [a_lo, a_hi], +1 above, 0 when they overlap. */
int noise_apart(double a_lo, double a_hi, double b_lo, double b_hi);

#endif
