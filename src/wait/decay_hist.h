/* SPDX-License-Identifier: MIT */
/*
 * decay_hist.h: a decayed histogram of durations (decay_hist.c): each new sample weighs
 * PN__DECAY_HIST_DECAY times the one before, so old samples fade with a half-life of 2048
 * samples and its quantiles follow a changing load. Buckets: [0, 64 ns), then 4 per octave,
 * the last holding everything from 7 << 27 ns (0.94 s) on; quantiles round up to a bucket's
 * largest value, so a margin taken from them errs on the safe side. 404 bytes, no
 * allocation, not thread-safe (the sleep state keeps one per thread and length class).
 */
#ifndef PUNCTUAL_WAIT_DECAY_HIST_H
#define PUNCTUAL_WAIT_DECAY_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define PN__DECAY_HIST_BUCKETS (1 + 4 * 24)
#define PN__DECAY_HIST_DECAY   1.0003385f /* 2^(1/2048) */

struct pn__decay_hist {
	float w[PN__DECAY_HIST_BUCKETS]; /* each bucket's weight */
	float inc;                       /* the next sample's weight; 0 before the first */
	float total;                     /* the weight of all samples */
	uint32_t n;                      /* samples added (aging does not remove any) */
};

/* Adds a sample of v ns (negative counts as 0). */
void pn__decay_hist_add(struct pn__decay_hist *h, int64_t v);
/* Ages h by steps samples' worth without adding one, while it holds more than floor
 * samples' weight: its memory then runs in the caller's events, not only in its samples. */
void pn__decay_hist_age(struct pn__decay_hist *h, int steps, float floor);
/* The level-quantile (0.99: the p99) in ns, from the top: the first bucket where more than
 * (1 - level) of the weight lies at or above it and, from three samples on, more than guard
 * times the newest sample's weight. A guard of 2 keeps a lone outlier from being a quantile
 * (it takes three late samples), 1 the latest one. 0 for an empty histogram. */
int64_t pn__decay_hist_quantile(const struct pn__decay_hist *h, double level, float guard);
/* Whether h's level-quantile rests on its guard rather than on its tail's weight: h holds
 * too few samples' weight to show it (1000 for a p99.9). An aged histogram can become so
 * again. */
bool pn__decay_hist_guarded(const struct pn__decay_hist *h, double level, float guard);
/* The largest value bucket b holds (the last: INT64_MAX / 4), and the bucket of v >= 0. */
int64_t pn__decay_hist_bucket_hi(int b);
int pn__decay_hist_bucket_of(int64_t v);
/* The first bucket wholly above above ns (its smallest value exceeds it; 1 at least):
 * where a table by bucket of the waits later than above starts. */
int pn__decay_hist_bucket_above(int64_t above);

#endif
