/* SPDX-License-Identifier: MIT */
/* noise.h: the noise rule of a quantile (noise.c), shared by probe --compare and tune:
 * each run's quantile gets an interval, and two runs differ when their intervals do not
 * overlap. */
#ifndef PUNCTUAL_NOISE_H
#define PUNCTUAL_NOISE_H

#include <stddef.h>

/* The z for m quantiles compared at once: a two-sided 5% chance that any of them is
 * called changed by chance alone (Bonferroni: 2.5%/m on each side). */
double noise_z(size_t m);
/* The value at quantile q of one run's samples (arg: the caller's), NAN beyond what it
 * knows. */
typedef double noise_at(const void *arg, double q);
/* The interval of v, the q-quantile of n samples that at(arg, q) describes, into *lo and
 * *hi: the order statistic's rank q n +- z sqrt(n q (1 - q)) as values, widened to the
 * values' resolution res (a fraction of v) and then by the between-run factor both ways.
 * Beyond the highest known value the high end is INFINITY; below the lowest, the low end
 * mirrors the high one on a log scale. */
void noise_interval(double v, double q, double n, double z, double res, noise_at *at,
                    const void *arg, double *lo, double *hi);
/* -1 when the interval [b_lo, b_hi] lies wholly below [a_lo, a_hi], +1 wholly above, 0
 * when they overlap (the same, as far as the noise tells). */
int noise_apart(double a_lo, double a_hi, double b_lo, double b_hi);

#endif
