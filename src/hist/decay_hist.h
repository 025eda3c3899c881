/* SPDX-License-Identifier: MIT */
/*
 * decay_hist.h: a decayed histogram of durations: old samples fade with a half-life of
 * 2048 samples, so its quantiles follow a changing load. Buckets: [0, 64 ns), then 4 per
 * octave to 0.94 s and beyond; quantiles round up to a bucket's largest value, so a margin
 * taken from them errs safe. 404 bytes, no allocation, not thread-safe.
 */
#ifndef PUNCTUAL_HIST_DECAY_HIST_H
#define PUNCTUAL_HIST_DECAY_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define PN__DECAY_HIST_BUCKETS (1 + 4 * 24)
#define PN__DECAY_HIST_DECAY   1.0003385f /* 2^(1/2048) */

struct pn__decay_hist {
	float w[PN__DECAY_HIST_BUCKETS];
	float inc; /* the next sample's weight; 0 before the first */
	float total;
	uint32_t n; /* samples added (aging removes none) */
};

/* Adds a sample of v ns (negative counts as 0). */
void pn__decay_hist_add(struct pn__decay_hist *h, int64_t v);
/* Ages h by steps samples' worth while it holds more than floor samples' weight: its
 * memory then runs in the caller's events. */
void pn__decay_hist_age(struct pn__decay_hist *h, int steps, float floor);
/* The level-quantile in ns: the first bucket from the top where more than (1 - level) of
 * the weight lies at or above it and, from three samples on, more than guard times the
 * newest sample's (2: a lone outlier is never one). 0 when empty. */
int64_t pn__decay_hist_quantile(const struct pn__decay_hist *h, double level, float guard);
/* Whether h's level-quantile rests on its guard: too few samples' weight to show it. */
bool pn__decay_hist_guarded(const struct pn__decay_hist *h, double level, float guard);
/* The largest value bucket b holds, and the bucket of v >= 0. */
int64_t pn__decay_hist_bucket_hi(int b);
int pn__decay_hist_bucket_of(int64_t v);
/* The first bucket wholly above above ns (1 at least). */
int pn__decay_hist_bucket_above(int64_t above);

#endif
