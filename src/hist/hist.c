/* SPDX-License-Identifier: MIT */
/*
 * hist.c: the log-linear histogram. Values 0..127 have a bucket each. Above, a value v
 * with e = floor(log2 v) - PN_HIST_SUB_BITS goes to bucket (e << SUB) + (v >> e): 2^e
 * wide, it starts at >= 64 * 2^e, so its midpoint is within 1/128 of any value in it.
 * Bucket 0 also holds the negatives, which only min, max and the mean describe exactly.
 */
#include <punctual/hist.h>

#include <errno.h>
#include <string.h>

#define SUB_COUNT (1 << PN_HIST_SUB_BITS)

/* a + b, or UINT64_MAX: a pinned counter reads "at least this many", a wrapped one almost
 * none. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* INT64_MAX must land in the header's last bucket. */
_Static_assert(PN_HIST_EXACT == 2 * SUB_COUNT, "exact range is two rows of sub-buckets");
_Static_assert(((62 - PN_HIST_SUB_BITS) << PN_HIST_SUB_BITS) + 2 * SUB_COUNT - 1 ==
                       PN_HIST_BUCKETS - 1,
               "the last bucket ends at INT64_MAX");

PN_API void pn_hist_init(struct pn_hist *h)
{
	pn_hist_reset(h);
}

PN_API void pn_hist_reset(struct pn_hist *h)
{
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	h->min = INT64_MAX;
	h->max = INT64_MIN;
}

PN_API int pn_hist_index(int64_t v)
{
	if (v < PN_HIST_EXACT)
		return v < 0 ? 0 : (int)v;

	int e = 63 - __builtin_clzll((unsigned long long)v) - PN_HIST_SUB_BITS;

	return (e << PN_HIST_SUB_BITS) + (int)(v >> e);
}

/* Value range of bucket i (0 <= i < PN_HIST_BUCKETS), ignoring negatives in bucket 0. */
static void bucket_range(int i, int64_t *lo, int64_t *hi)
{
	if (i < PN_HIST_EXACT) {
		*lo = i;
		*hi = i;
		return;
	}
	int e = (i >> PN_HIST_SUB_BITS) - 1;
	uint64_t sub = (uint64_t)(i & (SUB_COUNT - 1)) | SUB_COUNT;

	/* lo + width - 1: the last bucket's end, 2^63, is not an int64 */
	*lo = (int64_t)(sub << e);
	*hi = *lo + (int64_t)((UINT64_C(1) << e) - 1);
}

PN_API void pn_hist_record_n(struct pn_hist *h, int64_t v, uint64_t n)
{
	if (!h || n == 0)
		return;
	int i = pn_hist_index(v);

	h->buckets[i] = add_sat(h->buckets[i], n);
	h->count = add_sat(h->count, n);
	if (v < 0)
		h->negative = add_sat(h->negative, n);
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += (double)v * (double)n;
}

PN_API void pn_hist_record(struct pn_hist *h, int64_t v)
{
	pn_hist_record_n(h, v, 1);
}

PN_API uint64_t pn_hist_count(const struct pn_hist *h)
{
	return h ? h->count : 0;
}

PN_API int64_t pn_hist_min(const struct pn_hist *h)
{
	return h && h->count ? h->min : 0;
}

PN_API int64_t pn_hist_max(const struct pn_hist *h)
{
	return h && h->count ? h->max : 0;
}

PN_API double pn_hist_mean(const struct pn_hist *h)
{
	return h && h->count ? h->sum / (double)h->count : 0.0;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int64_t midpoint(int64_t lo, int64_t hi)
{
	return (int64_t)((uint64_t)lo + ((uint64_t)hi - (uint64_t)lo) / 2);
}

/*
 * ceil(p / 100 * count) for 0 < p < 100, in [1, count]. A decimal p is inexact in a
 * double, so 99.9 / 100 * 1000 is 999.0000000000001 and ceil would skip a rank: results
 * within a relative 1e-12 of an integer count as that integer.
 */
static uint64_t percentile_rank(double p, uint64_t count)
{
	double x = p / 100.0 * (double)count;
	double y = x - x * 1e-12;

	if (y >= (double)count)
		return count;
	/* ceil by hand: no libm */
	uint64_t r = (uint64_t)y;

	if ((double)r < y)
		r++;
	return r < 1 ? 1 : r;
}

PN_API int64_t pn_hist_percentile(const struct pn_hist *h, double p)
{
	if (!h || h->count == 0)
		return 0;
	/* a NaN p gives the min rather than an undefined conversion */
	if (!(p > 0.0))
		return h->min;
	if (p >= 100.0)
		return h->max;

	uint64_t rank = percentile_rank(p, h->count);

	/* bucket 0 holds the negatives first: all that is known is that they lie in [min, -1] */
	if (rank <= h->negative)
		return clamp(midpoint(h->min, -1), h->min, h->max);

	uint64_t seen = 0;

	for (int i = 0; i < PN_HIST_BUCKETS; i++) {
		/* saturated buckets can sum past count */
		seen = add_sat(seen, h->buckets[i]);
		if (seen >= rank) {
			int64_t lo, hi;

			bucket_range(i, &lo, &hi);
			return clamp(midpoint(lo, hi), h->min, h->max);
		}
	}
	/* only if buckets and count disagree (a caller edited the struct) */
	return h->max;
}

PN_API int pn_hist_merge(struct pn_hist *dst, const struct pn_hist *src)
{
	if (!dst || !src)
		return -EINVAL;
	for (int i = 0; i < PN_HIST_BUCKETS; i++)
		dst->buckets[i] = add_sat(dst->buckets[i], src->buckets[i]);
	dst->count = add_sat(dst->count, src->count);
	dst->negative = add_sat(dst->negative, src->negative);
	dst->sum += src->sum;
	/* an empty src's INT64_MAX / INT64_MIN leave dst unchanged */
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

PN_API int pn_hist_next(const struct pn_hist *h, int i, struct pn_hist_bucket *b)
{
	if (!h || !b || i < 0)
		return -EINVAL;
	for (; i < PN_HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		int64_t lo, hi;

		bucket_range(i, &lo, &hi);
		/* "lo <= v <= hi" also for the negatives bucket 0 counts */
		if (i == 0 && h->negative && h->min < lo)
			lo = h->min;
		b->lo = lo;
		b->hi = hi;
		b->count = h->buckets[i];
		return i;
	}
	return -ENOENT;
}
