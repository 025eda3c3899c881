/* SPDX-License-Identifier: MIT */
/*
 * punctual/hist.h: a log-linear histogram of int64_t values: percentiles within 0.8%
 * over the whole range; count, min, max and mean exact. Counts saturate, never wrap. No
 * call allocates. Not thread-safe: one per thread, then merge.
 */
#ifndef PUNCTUAL_HIST_H
#define PUNCTUAL_HIST_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PN_HIST_SUB_BITS 6                       /* 64 buckets per power of two */
#define PN_HIST_EXACT    (2 << PN_HIST_SUB_BITS) /* 0..127 exact */
#define PN_HIST_BUCKETS  (PN_HIST_EXACT + (63 - PN_HIST_SUB_BITS - 1) * (1 << PN_HIST_SUB_BITS))

struct pn_hist {
	uint64_t count;
	uint64_t negative; /* of which < 0, in bucket 0 */
	int64_t min;       /* INT64_MAX when empty */
	int64_t max;       /* INT64_MIN when empty */
	double sum;
	uint64_t buckets[PN_HIST_BUCKETS];
};

/* count values in [lo, hi]. */
struct pn_hist_bucket {
	int64_t lo;
	int64_t hi;
	uint64_t count;
};

/* Empties h; NULL is ignored. */
PN_API void pn_hist_init(struct pn_hist *h);
PN_API void pn_hist_reset(struct pn_hist *h);

/* Records v (n times); NULL is ignored. */
PN_API void pn_hist_record(struct pn_hist *h, int64_t v);
PN_API void pn_hist_record_n(struct pn_hist *h, int64_t v, uint64_t n);

/* 0 when empty. */
PN_API uint64_t pn_hist_count(const struct pn_hist *h);
PN_API int64_t pn_hist_min(const struct pn_hist *h);
PN_API int64_t pn_hist_max(const struct pn_hist *h);
PN_API double pn_hist_mean(const struct pn_hist *h);

/* The p-th percentile by nearest rank, its bucket's midpoint clamped to [min, max]; 0
 * when empty or NULL. */
PN_API int64_t pn_hist_percentile(const struct pn_hist *h, double p);

/* Adds src's values to dst. -EINVAL for NULL. */
PN_API int pn_hist_merge(struct pn_hist *dst, const struct pn_hist *src);

/* The first non-empty bucket at index >= i into *b, and its index; -ENOENT when none;
 * -EINVAL for NULL or i < 0. */
PN_API int pn_hist_next(const struct pn_hist *h, int i, struct pn_hist_bucket *b);

/* v's bucket; values < 0 give 0. */
PN_API int pn_hist_index(int64_t v);

#ifdef __cplusplus
}
#endif
#endif
