/* SPDX-License-Identifier: MIT */
/*
 * test_hist.c: the histogram's contract from punctual/hist.h. Percentiles are checked
 * against exact nearest-rank percentiles of the same sorted samples, bucket geometry over
 * the whole int64 range, and merge, reset, iteration and NULL handling. Samples come from
 * a fixed-seed splitmix64 (src/splitmix.h) so every run sees the same values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <punctual/hist.h>
#include "splitmix.h"

#define NSAMPLES 100000

/* p in hundredths of a percent, so the reference rank is computed in exact integers. */
static const unsigned pcts_x100[] = {0, 100, 1000, 5000, 9000, 9900, 9990, 9999, 10000};

struct rng {
	uint64_t s;
};

static uint64_t splitmix64(struct rng *r)
{
	return pn__splitmix64(&r->s);
}

/* Uniform in (0, 1]: never 0, so log() of it is finite. */
static double unit(struct rng *r)
{
	return ((double)(splitmix64(r) >> 11) + 1.0) / 9007199254740992.0;
}

static struct pn_hist *hist_new(void)
{
	struct pn_hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	pn_hist_init(h);
	return h;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank, exactly as the header defines it: rank ceil(p/100 * n), at least 1. */
static int64_t exact_percentile(const int64_t *sorted, size_t n, unsigned p_x100)
{
	uint64_t rank = ((uint64_t)p_x100 * n + 9999) / 10000;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

/* Records samples, then checks every percentile of pcts_x100 against the exact one. */
static void check_percentiles(int64_t *v, size_t n)
{
	struct pn_hist *h = hist_new();

	for (size_t i = 0; i < n; i++)
		pn_hist_record(h, v[i]);
	qsort(v, n, sizeof(*v), cmp_i64);

	for (size_t k = 0; k < sizeof(pcts_x100) / sizeof(pcts_x100[0]); k++) {
		int64_t want = exact_percentile(v, n, pcts_x100[k]);
		int64_t got = pn_hist_percentile(h, pcts_x100[k] / 100.0);

		if (pcts_x100[k] == 0 || pcts_x100[k] == 10000 || want < PN_HIST_EXACT) {
			if (got != want)
				fail_msg("p%.2f of %zu: got %lld, want exactly %lld",
				         pcts_x100[k] / 100.0, n, (long long)got, (long long)want);
			continue;
		}
		double err = fabs((double)got - (double)want) / (double)want;

		if (err > 0.01)
			fail_msg("p%.2f of %zu: got %lld, want %lld (error %.4f)",
			         pcts_x100[k] / 100.0, n, (long long)got, (long long)want, err);
	}
	free(h);
}

static int64_t *samples_new(size_t n)
{
	int64_t *v = calloc(n, sizeof(*v));

	assert_non_null(v);
	return v;
}

static void test_percentile_uniform(void **state)
{
	(void)state;
	struct rng r = {1};
	int64_t *v = samples_new(NSAMPLES);

	for (size_t i = 0; i < NSAMPLES; i++)
		v[i] = (int64_t)(splitmix64(&r) % 10000000); /* 0 .. 10 ms */
	check_percentiles(v, NSAMPLES);

	/* Small values exercise the exact buckets. */
	for (size_t i = 0; i < NSAMPLES; i++)
		v[i] = (int64_t)(splitmix64(&r) % 200);
	check_percentiles(v, NSAMPLES);
	free(v);
}

static void test_percentile_log_uniform(void **state)
{
	(void)state;
	struct rng r = {2};
	int64_t *v = samples_new(NSAMPLES);

	for (size_t i = 0; i < NSAMPLES; i++) /* 1 ns .. 1000 s */
		v[i] = (int64_t)exp(unit(&r) * log(1e12));
	check_percentiles(v, NSAMPLES);
	free(v);
}

static void test_percentile_exponential(void **state)
{
	(void)state;
	struct rng r = {3};
	int64_t *v = samples_new(NSAMPLES);

	for (size_t i = 0; i < NSAMPLES; i++) /* 50 us base + exponential tail, mean 20 us */
		v[i] = 50000 + (int64_t)(-20000.0 * log(unit(&r)));
	check_percentiles(v, NSAMPLES);
	free(v);
}

static void test_percentile_bimodal(void **state)
{
	(void)state;
	struct rng r = {4};
	int64_t *v = samples_new(NSAMPLES);

	for (size_t i = 0; i < NSAMPLES; i++) {
		/* Sum of four uniforms: a bell around each mode. */
		double bell = (unit(&r) + unit(&r) + unit(&r) + unit(&r)) / 4.0;

		if (splitmix64(&r) % 10 < 7)
			v[i] = 40000 + (int64_t)(bell * 20000.0); /* ~50 us */
		else
			v[i] = 4000000 + (int64_t)(bell * 2000000.0); /* ~5 ms */
	}
	check_percentiles(v, NSAMPLES);
	free(v);
}

static void test_percentile_all_equal(void **state)
{
	(void)state;
	const int64_t values[] = {0, 1, 127, 128, 12345, 1000000007, INT64_MAX};
	struct pn_hist *h = hist_new();

	for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		pn_hist_reset(h);
		pn_hist_record_n(h, values[k], 1000);
		/* Clamping the midpoint to [min, max] makes every percentile exact here. */
		for (size_t j = 0; j < sizeof(pcts_x100) / sizeof(pcts_x100[0]); j++)
			assert_int_equal(pn_hist_percentile(h, pcts_x100[j] / 100.0), values[k]);
	}
	free(h);
}

static void test_percentile_tiny_counts(void **state)
{
	(void)state;
	int64_t one[] = {987654321};
	int64_t two[] = {5000, 3000000};
	int64_t two_small[] = {3, 100};

	check_percentiles(one, 1);
	check_percentiles(two, 2);
	check_percentiles(two_small, 2);

	/* With two values, ranks are 1 up to p = 50 and 2 above. */
	struct pn_hist *h = hist_new();

	pn_hist_record(h, 10);
	pn_hist_record(h, 20);
	assert_int_equal(pn_hist_percentile(h, 50.0), 10);
	assert_int_equal(pn_hist_percentile(h, 50.001), 20);
	free(h);
}

/*
 * Decimal p that a double cannot hold must not skip a rank (7 / 100 * 100 is
 * 7.000000000000001). Each sample has a bucket of its own, so a rank off by one shows as a
 * different bucket.
 */
static void test_percentile_rank_rounding(void **state)
{
	(void)state;
	const size_t counts[] = {1, 3, 7, 100, 1000};
	struct pn_hist *h = hist_new();
	int64_t *v = samples_new(1000);

	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		size_t n = counts[k];

		pn_hist_reset(h);
		for (size_t i = 0; i < n; i++) {
			/* 3% apart: wider than a bucket (1/64) */
			v[i] = (int64_t)(128.0 * pow(1.03, (double)i));
			pn_hist_record(h, v[i]);
		}
		for (unsigned p = 0; p <= 10000; p++) {
			int64_t want = exact_percentile(v, n, p);
			int64_t got = pn_hist_percentile(h, p / 100.0);

			if (pn_hist_index(got) != pn_hist_index(want))
				fail_msg("p%.2f of %zu: got %lld, want %lld", p / 100.0, n,
				         (long long)got, (long long)want);
		}
	}

	/* The exact range: ranks must match value for value. */
	pn_hist_reset(h);
	for (size_t i = 0; i < 100; i++) {
		v[i] = (int64_t)i;
		pn_hist_record(h, v[i]);
	}
	for (unsigned p = 0; p <= 10000; p++)
		assert_int_equal(pn_hist_percentile(h, p / 100.0), exact_percentile(v, 100, p));
	free(v);
	free(h);
}

static void test_percentile_clamp_and_empty(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new();

	assert_int_equal(pn_hist_percentile(h, 50.0), 0);
	assert_int_equal(pn_hist_percentile(NULL, 50.0), 0);

	pn_hist_record(h, 1000);
	pn_hist_record(h, 2000000);
	assert_int_equal(pn_hist_percentile(h, -5.0), 1000);
	assert_int_equal(pn_hist_percentile(h, 250.0), 2000000);
	assert_int_equal(pn_hist_percentile(h, NAN), 1000);
	free(h);
}

/* Checks b (the bucket holding v) against the header's geometry. */
static void check_bucket(const struct pn_hist_bucket *b, int64_t v)
{
	if (b->lo > v || v > b->hi)
		fail_msg("%lld outside its bucket [%lld, %lld]", (long long)v, (long long)b->lo,
		         (long long)b->hi);
	uint64_t width = (uint64_t)b->hi - (uint64_t)b->lo + 1;

	if (width > (uint64_t)b->lo / 64 + 1)
		fail_msg("bucket [%lld, %lld] wider than lo/64 + 1", (long long)b->lo,
		         (long long)b->hi);
	int64_t mid = b->lo + (b->hi - b->lo) / 2;

	if (v == 0) {
		assert_int_equal(mid, 0);
		return;
	}
	double err = fabs((double)mid - (double)v) / (double)v;

	if (err > 0.01)
		fail_msg("midpoint %lld of [%lld, %lld] is %.4f from %lld", (long long)mid,
		         (long long)b->lo, (long long)b->hi, err, (long long)v);
}

static void check_value_bucket(struct pn_hist *h, int64_t v)
{
	struct pn_hist_bucket b;
	int i = pn_hist_index(v);

	assert_in_range(i, 0, PN_HIST_BUCKETS - 1);
	pn_hist_reset(h);
	pn_hist_record(h, v);
	assert_int_equal(pn_hist_next(h, 0, &b), i);
	assert_int_equal(b.count, 1);
	check_bucket(&b, v);
	check_bucket(&b, b.lo);
	check_bucket(&b, b.hi);
}

static void test_bucket_geometry_values(void **state)
{
	(void)state;
	const int64_t extremes[] = {0, 1, 127, 128, 129, INT64_MAX - 1, INT64_MAX};
	struct pn_hist *h = hist_new();

	for (size_t k = 0; k < sizeof(extremes) / sizeof(extremes[0]); k++)
		check_value_bucket(h, extremes[k]);
	/* 1 .. 1e12 in steps of 0.1%, plus the neighbours of each step. */
	for (double x = 1.0; x <= 1e12; x *= 1.001) {
		int64_t v = (int64_t)x;

		check_value_bucket(h, v);
		check_value_bucket(h, v + 1);
		if (v > 1)
			check_value_bucket(h, v - 1);
	}
	free(h);
}

/* Every bucket in order: they tile [0, INT64_MAX] without gaps, one index each. */
static void test_bucket_geometry_tiling(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new();
	struct pn_hist_bucket b;
	int64_t v = 0;
	int n = 0;

	for (;;) {
		int i = pn_hist_index(v);

		assert_int_equal(i, n);
		pn_hist_record(h, v);
		assert_int_equal(pn_hist_next(h, i, &b), i);
		assert_int_equal(b.lo, v);
		assert_int_equal(pn_hist_index(b.hi), i);
		check_bucket(&b, b.lo);
		check_bucket(&b, b.hi);
		n++;
		if (b.hi == INT64_MAX)
			break;
		v = b.hi + 1;
	}
	assert_int_equal(n, PN_HIST_BUCKETS);
	assert_int_equal(pn_hist_index(INT64_MAX), PN_HIST_BUCKETS - 1);
	free(h);
}

static void test_index_monotone(void **state)
{
	(void)state;
	struct rng r = {5};
	int prev = pn_hist_index(0);

	assert_int_equal(pn_hist_index(-1), 0);
	assert_int_equal(pn_hist_index(INT64_MIN), 0);
	for (double x = 1.0; x < 9.2e18; x *= 1.0001) {
		int i = pn_hist_index((int64_t)x);

		assert_true(i >= prev);
		prev = i;
	}
	for (int k = 0; k < 100000; k++) {
		int64_t a = (int64_t)(splitmix64(&r) >> 1) >> (splitmix64(&r) % 63);
		int64_t d = (int64_t)(splitmix64(&r) % 1000);
		int64_t b = a <= INT64_MAX - d ? a + d : INT64_MAX;

		assert_true(pn_hist_index(a) <= pn_hist_index(b));
	}
}

static void test_summary_exact(void **state)
{
	(void)state;
	struct rng r = {6};
	struct pn_hist *h = hist_new();
	int64_t sum = 0, lo = INT64_MAX, hi = INT64_MIN;

	assert_int_equal(pn_hist_count(h), 0);
	assert_int_equal(pn_hist_min(h), 0);
	assert_int_equal(pn_hist_max(h), 0);
	assert_true(pn_hist_mean(h) == 0.0);

	for (int k = 0; k < 10000; k++) {
		int64_t v = 1 + (int64_t)(splitmix64(&r) % 100000000);

		pn_hist_record(h, v);
		sum += v;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	pn_hist_record_n(h, 42, 5);
	sum += 42 * 5;
	lo = 42 < lo ? 42 : lo;
	pn_hist_record_n(h, 7, 0); /* records nothing */

	assert_int_equal(pn_hist_count(h), 10005);
	assert_int_equal(pn_hist_min(h), lo);
	assert_int_equal(pn_hist_max(h), hi);
	assert_true(pn_hist_mean(h) == (double)sum / 10005.0);
	assert_int_equal(pn_hist_count(NULL), 0);
	assert_int_equal(pn_hist_min(NULL), 0);
	assert_int_equal(pn_hist_max(NULL), 0);
	assert_true(pn_hist_mean(NULL) == 0.0);
	free(h);
}

static void test_merge_halves(void **state)
{
	(void)state;
	struct rng r = {7};
	struct pn_hist *whole = hist_new(), *a = hist_new(), *b = hist_new();

	/* Values below 1e10 keep every partial sum an exact double. */
	for (int k = 0; k < 20000; k++) {
		int64_t v = (int64_t)exp(unit(&r) * log(1e10)) - 3; /* includes a few negatives */

		pn_hist_record(whole, v);
		pn_hist_record(k % 3 ? a : b, v);
	}
	assert_int_equal(pn_hist_merge(a, b), 0);
	assert_memory_equal(a->buckets, whole->buckets, sizeof(whole->buckets));
	assert_int_equal(a->count, whole->count);
	assert_int_equal(a->negative, whole->negative);
	assert_int_equal(a->min, whole->min);
	assert_int_equal(a->max, whole->max);
	assert_true(a->sum == whole->sum);

	/* Merging an empty histogram changes nothing, into an empty one copies. */
	pn_hist_reset(b);
	assert_int_equal(pn_hist_merge(a, b), 0);
	assert_int_equal(a->min, whole->min);
	assert_int_equal(a->max, whole->max);
	assert_int_equal(pn_hist_merge(b, whole), 0);
	assert_memory_equal(b, whole, sizeof(*whole));

	assert_int_equal(pn_hist_merge(NULL, a), -EINVAL);
	assert_int_equal(pn_hist_merge(a, NULL), -EINVAL);
	assert_int_equal(pn_hist_merge(NULL, NULL), -EINVAL);
	free(whole);
	free(a);
	free(b);
}

static void test_reset(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new(), *fresh = hist_new();
	struct pn_hist_bucket b;

	for (int64_t v = -10; v < 100000; v += 7)
		pn_hist_record(h, v);
	pn_hist_reset(h);
	assert_memory_equal(h, fresh, sizeof(*h));
	assert_int_equal(pn_hist_count(h), 0);
	assert_int_equal(h->negative, 0);
	assert_int_equal(h->min, INT64_MAX);
	assert_int_equal(h->max, INT64_MIN);
	assert_int_equal(pn_hist_min(h), 0);
	assert_int_equal(pn_hist_max(h), 0);
	assert_int_equal(pn_hist_percentile(h, 99.0), 0);
	assert_int_equal(pn_hist_next(h, 0, &b), -ENOENT);
	free(h);
	free(fresh);
}

static void test_negative(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new();
	struct pn_hist_bucket b;

	pn_hist_record(h, -5);
	pn_hist_record_n(h, -1000, 2);
	pn_hist_record(h, 0);
	pn_hist_record(h, 300);
	assert_int_equal(pn_hist_count(h), 5);
	assert_int_equal(h->negative, 3);
	assert_int_equal(h->buckets[0], 4);
	assert_int_equal(pn_hist_min(h), -1000);
	assert_int_equal(pn_hist_max(h), 300);
	assert_true(pn_hist_mean(h) == (-5.0 - 2000.0 + 0.0 + 300.0) / 5.0);

	/* Ranks among the negatives stay within [min, -1]; rank 4 is the 0. */
	assert_int_equal(pn_hist_percentile(h, 0.0), -1000);
	int64_t p = pn_hist_percentile(h, 50.0);

	assert_true(p >= -1000 && p <= -1);
	assert_int_equal(pn_hist_percentile(h, 80.0), 0);
	assert_int_equal(pn_hist_percentile(h, 100.0), 300);

	/* Bucket 0's range covers its negatives. */
	assert_int_equal(pn_hist_next(h, 0, &b), 0);
	assert_int_equal(b.lo, -1000);
	assert_int_equal(b.hi, 0);
	assert_int_equal(b.count, 4);

	/* Only negatives: every percentile is exact when they are all equal. */
	pn_hist_reset(h);
	pn_hist_record_n(h, -7, 10);
	assert_int_equal(pn_hist_percentile(h, 50.0), -7);
	assert_int_equal(pn_hist_min(h), -7);
	assert_int_equal(pn_hist_max(h), -7);

	pn_hist_reset(h);
	pn_hist_record(h, INT64_MIN);
	pn_hist_record(h, INT64_MAX);
	assert_true(pn_hist_percentile(h, 50.0) < 0);
	assert_int_equal(pn_hist_percentile(h, 0.0), INT64_MIN);
	assert_int_equal(pn_hist_percentile(h, 100.0), INT64_MAX);
	free(h);
}

static void test_next_iteration(void **state)
{
	(void)state;
	struct rng r = {8};
	struct pn_hist *h = hist_new();
	uint64_t *want = calloc(PN_HIST_BUCKETS, sizeof(*want));
	struct pn_hist_bucket b;

	assert_non_null(want);
	assert_int_equal(pn_hist_next(h, 0, &b), -ENOENT);
	for (int k = 0; k < 5000; k++) {
		int64_t v = (int64_t)exp(unit(&r) * log(1e15));

		pn_hist_record(h, v);
		want[pn_hist_index(v)]++;
	}
	pn_hist_record(h, INT64_MAX);
	want[PN_HIST_BUCKETS - 1]++;

	int last = -1, visited = 0;
	uint64_t total = 0;

	for (int i = pn_hist_next(h, 0, &b); i >= 0; i = pn_hist_next(h, i + 1, &b)) {
		assert_true(i > last);
		for (int j = last + 1; j < i; j++)
			assert_int_equal(want[j], 0);
		assert_int_not_equal(b.count, 0);
		assert_int_equal(b.count, want[i]);
		assert_int_equal(pn_hist_index(b.lo), i);
		assert_int_equal(pn_hist_index(b.hi), i);
		total += b.count;
		last = i;
		visited++;
	}
	assert_int_equal(last, PN_HIST_BUCKETS - 1);
	assert_int_equal(total, pn_hist_count(h));
	assert_true(visited > 100);

	/* Errors leave *b untouched. */
	struct pn_hist_bucket keep = {11, 22, 33};

	b = keep;
	assert_int_equal(pn_hist_next(h, PN_HIST_BUCKETS, &b), -ENOENT);
	assert_int_equal(pn_hist_next(h, INT32_MAX, &b), -ENOENT);
	assert_int_equal(pn_hist_next(NULL, 0, &b), -EINVAL);
	assert_int_equal(pn_hist_next(h, -1, &b), -EINVAL);
	assert_int_equal(pn_hist_next(h, INT32_MIN, &b), -EINVAL);
	assert_memory_equal(&b, &keep, sizeof(b));
	assert_int_equal(pn_hist_next(h, 0, NULL), -EINVAL);

	pn_hist_reset(h);
	pn_hist_record(h, 500);
	assert_int_equal(pn_hist_next(h, pn_hist_index(500) + 1, &b), -ENOENT);
	free(want);
	free(h);
}

/* Counts saturate at UINT64_MAX, in record and in merge, and the percentile scan over
 * saturated buckets (which can sum past count) stays in range instead of wrapping. */
static void test_saturation(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new(), *g = hist_new();
	struct pn_hist_bucket b;

	pn_hist_record_n(h, 1000, UINT64_MAX);
	pn_hist_record(h, 5);
	assert_true(pn_hist_count(h) == UINT64_MAX);
	assert_true(h->buckets[pn_hist_index(1000)] == UINT64_MAX);
	assert_true(h->buckets[pn_hist_index(5)] == 1);
	assert_int_equal(pn_hist_min(h), 5);
	assert_int_equal(pn_hist_max(h), 1000);
	assert_int_equal(pn_hist_percentile(h, 50.0), 1000);
	assert_int_equal(pn_hist_percentile(h, 99.9), 1000);
	assert_int_equal(pn_hist_percentile(h, 0.0), 5);
	assert_true(pn_hist_mean(h) > 5.0 && pn_hist_mean(h) <= 1000.0);

	/* A bucket saturates on its own while count still has room. */
	pn_hist_record_n(g, 1000, UINT64_MAX - 1);
	pn_hist_record_n(g, 1000, 7);
	assert_true(g->buckets[pn_hist_index(1000)] == UINT64_MAX);
	assert_true(pn_hist_count(g) == UINT64_MAX);

	/* Negatives saturate in their own counter too. */
	pn_hist_reset(g);
	pn_hist_record_n(g, -3, UINT64_MAX);
	pn_hist_record(g, -3);
	assert_true(g->negative == UINT64_MAX);
	assert_true(g->buckets[0] == UINT64_MAX);
	assert_int_equal(pn_hist_percentile(g, 50.0), -3);

	/* Merging two near-full histograms saturates every counter it adds. */
	pn_hist_reset(g);
	pn_hist_record_n(g, 1000, UINT64_MAX / 2 + 1);
	pn_hist_record_n(g, -1, 1);
	assert_int_equal(pn_hist_merge(g, h), 0);
	assert_true(pn_hist_count(g) == UINT64_MAX);
	assert_true(g->buckets[pn_hist_index(1000)] == UINT64_MAX);
	assert_true(g->buckets[pn_hist_index(5)] == 1);
	assert_true(g->negative == 1);
	assert_int_equal(pn_hist_min(g), -1);
	assert_int_equal(pn_hist_max(g), 1000);
	assert_int_equal(pn_hist_merge(g, g), 0);
	assert_true(pn_hist_count(g) == UINT64_MAX);
	assert_true(g->negative == 2);
	assert_int_equal(pn_hist_next(g, pn_hist_index(5) + 1, &b), pn_hist_index(1000));
	assert_true(b.count == UINT64_MAX);
	free(h);
	free(g);
}

static void test_null_safety(void **state)
{
	(void)state;
	struct pn_hist *h = hist_new();

	pn_hist_init(NULL);
	pn_hist_reset(NULL);
	pn_hist_record(NULL, 5);
	pn_hist_record_n(NULL, 5, 3);
	assert_int_equal(pn_hist_merge(NULL, h), -EINVAL);
	assert_int_equal(pn_hist_percentile(NULL, 99.0), 0);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_percentile_uniform),
	        cmocka_unit_test(test_percentile_log_uniform),
	        cmocka_unit_test(test_percentile_exponential),
	        cmocka_unit_test(test_percentile_bimodal),
	        cmocka_unit_test(test_percentile_all_equal),
	        cmocka_unit_test(test_percentile_tiny_counts),
	        cmocka_unit_test(test_percentile_rank_rounding),
	        cmocka_unit_test(test_percentile_clamp_and_empty),
	        cmocka_unit_test(test_bucket_geometry_values),
	        cmocka_unit_test(test_bucket_geometry_tiling),
	        cmocka_unit_test(test_index_monotone),
	        cmocka_unit_test(test_summary_exact),
	        cmocka_unit_test(test_merge_halves),
	        cmocka_unit_test(test_reset),
	        cmocka_unit_test(test_negative),
	        cmocka_unit_test(test_next_iteration),
	        cmocka_unit_test(test_saturation),
	        cmocka_unit_test(test_null_safety),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
