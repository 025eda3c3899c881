/* SPDX-License-Identifier: MIT */
/*
 * punctual/hist.h: a log-linear histogram of int64_t values (nanoseconds, usually).
 *
 * Values 0..127 are counted exactly; above, each power of two is split into 64 equal
 * buckets, so a bucket is at most 1/64 of its lower bound wide and a percentile, reported
 * as its bucket's midpoint, is within 0.8% of the exact sample value over the whole int64
 * range (1 ns to 1000 s and beyond). count, min, max and mean are exact.
 *
 * Counts saturate at UINT64_MAX instead of wrapping: count, negative and each bucket, when
 * recording and when merging. A saturated count means "at least UINT64_MAX"; from then on the
 * mean and the percentiles are approximate (buckets can sum past count), min and max stay exact.
 *
 * The structure is public so callers embed it (about 30 KiB); no call allocates.
 * A histogram is not thread-safe: give each thread its own and merge them.
 */
#ifndef PUNCTUAL_HIST_H
#define PUNCTUAL_HIST_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PN_HIST_SUB_BITS 6                       /* 64 buckets per power of two */
#define PN_HIST_EXACT    (2 << PN_HIST_SUB_BITS) /* 0..127 counted exactly */
#define PN_HIST_BUCKETS  (PN_HIST_EXACT + (63 - PN_HIST_SUB_BITS - 1) * (1 << PN_HIST_SUB_BITS))

struct pn_hist {
	uint64_t count;    /* values recorded, saturating at UINT64_MAX */
	uint64_t negative; /* of which < 0: counted in bucket 0, exact in min and mean */
	int64_t min;       /* exact; INT64_MAX when empty */
	int64_t max;       /* exact; INT64_MIN when empty */
	double sum;        /* for the mean */
	uint64_t buckets[PN_HIST_BUCKETS];
};

/* One non-empty bucket: count values v with lo <= v <= hi. */
struct pn_hist_bucket {
	int64_t lo;
	int64_t hi;
	uint64_t count;
};

/* Empties h. pn_hist_init is the same call under the name for first use. NULL is ignored. */
PN_API void pn_hist_init(struct pn_hist *h);
PN_API void pn_hist_reset(struct pn_hist *h);

/* Records v (n times). Negative values count in bucket 0 and in h->negative. Counts
 * saturate at UINT64_MAX. NULL is ignored. */
PN_API void pn_hist_record(struct pn_hist *h, int64_t v);
PN_API void pn_hist_record_n(struct pn_hist *h, int64_t v, uint64_t n);

/* Number of values; exact minimum and maximum (0 when empty); exact mean (0.0 when empty). */
PN_API uint64_t pn_hist_count(const struct pn_hist *h);
PN_API int64_t pn_hist_min(const struct pn_hist *h);
PN_API int64_t pn_hist_max(const struct pn_hist *h);
PN_API double pn_hist_mean(const struct pn_hist *h);

/* The p-th percentile (0 <= p <= 100, clamped) by nearest rank: the value of rank
 * ceil(p/100 * count), reported as its bucket's midpoint clamped to [min, max].
 * p = 0 gives the min, p = 100 the max. 0 when h is empty or NULL. */
PN_API int64_t pn_hist_percentile(const struct pn_hist *h, double p);

/* Adds src's values to dst, counts saturating at UINT64_MAX. -EINVAL if either is NULL. */
PN_API int pn_hist_merge(struct pn_hist *dst, const struct pn_hist *src);

/* Iterates the non-empty buckets: fills *b with the first non-empty bucket at index >= i
 * and returns its index; -ENOENT when there is none; -EINVAL for NULL or i < 0.
 *   for (int i = pn_hist_next(h, 0, &b); i >= 0; i = pn_hist_next(h, i + 1, &b)) */
PN_API int pn_hist_next(const struct pn_hist *h, int i, struct pn_hist_bucket *b);

/* The bucket index a value falls in (0 .. PN_HIST_BUCKETS-1); values < 0 give 0. */
PN_API int pn_hist_index(int64_t v);

#ifdef __cplusplus
}
#endif
#endif
