/* SPDX-License-Identifier: MIT */
/*
 * test_decay_hist.c: the decayed histogram (src/decay_hist.c): buckets cover every value
 * and round up (a quantile is never below the value it stands for); the quantiles of a
 * known mix; the guard keeps one or two outliers from being a quantile; the weights halve
 * every 2048 samples (an old mode fades, a new one takes over); renormalization, far past
 * the point where float would overflow, changes no quantile; aging moves the weights and
 * stops at its floor; guarded says when a quantile rests on its guard.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hist/decay_hist.h"

static void buckets(void **state)
{
	(void)state;
	int last = -1;
	for (int64_t v = 0; v < (INT64_C(1) << 40); v = v < 64 ? v + 1 : v + v / 7 + 1) {
		int b = pn__decay_hist_bucket_of(v);
		assert_true(b >= 0 && b < PN__DECAY_HIST_BUCKETS);
		assert_true(b >= last);                        /* monotonic */
		assert_true(pn__decay_hist_bucket_hi(b) >= v); /* rounds up */
		if (b > 0)
			assert_true(pn__decay_hist_bucket_hi(b - 1) < v);
		last = b;
	}
	assert_int_equal(pn__decay_hist_bucket_of(INT64_MAX), PN__DECAY_HIST_BUCKETS - 1);
	/* a bucket's width is at most a quarter octave: 25% over the value at most, up to the
	 * last bucket (from 7 << 27 ns on) */
	for (int64_t v = 64; v < (INT64_C(7) << 27); v = v * 3 / 2)
		assert_true(pn__decay_hist_bucket_hi(pn__decay_hist_bucket_of(v)) <= v + v / 4);
}

static void quantiles(void **state)
{
	(void)state;
	struct pn__decay_hist h;
	memset(&h, 0, sizeof(h));
	assert_int_equal(pn__decay_hist_quantile(&h, 0.99, 2.0f), 0); /* empty */
	/* 990 at 10 us, 10 at 1 ms: the p99 is at or above 10 us and below 1 ms; the p99.9
	 * is the 1 ms mode */
	for (int i = 0; i < 1000; i++)
		pn__decay_hist_add(&h, i % 100 == 0 ? 1000000 : 10000);
	assert_int_equal(h.n, 1000);
	int64_t p50 = pn__decay_hist_quantile(&h, 0.5, 2.0f);
	int64_t p999 = pn__decay_hist_quantile(&h, 0.999, 2.0f);
	assert_true(p50 >= 10000 && p50 <= 12500);
	assert_true(p999 >= 1000000 && p999 <= 1250000);
	/* negative values count as 0 */
	struct pn__decay_hist z;
	memset(&z, 0, sizeof(z));
	pn__decay_hist_add(&z, -5);
	assert_int_equal(pn__decay_hist_quantile(&z, 0.5, 0.0f), 63);
}

static void guard(void **state)
{
	(void)state;
	struct pn__decay_hist h;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 3000; i++)
		pn__decay_hist_add(&h, 20000);
	/* one outlier: never the p99.9 with a guard of 2, the p99.9 with a guard of 1 only while
	 * it is the newest, which it is here */
	pn__decay_hist_add(&h, 50000000);
	assert_true(pn__decay_hist_quantile(&h, 0.999, 2.0f) < 50000000);
	/* a second one: a guard of 2 still holds, 1 does not */
	pn__decay_hist_add(&h, 50000000);
	assert_true(pn__decay_hist_quantile(&h, 0.9999, 2.0f) < 50000000);
	assert_true(pn__decay_hist_quantile(&h, 0.9999, 1.0f) >= 50000000);
	/* a third: the tail is real */
	pn__decay_hist_add(&h, 50000000);
	assert_true(pn__decay_hist_quantile(&h, 0.9999, 2.0f) >= 50000000);
}

static void decays(void **state)
{
	(void)state;
	struct pn__decay_hist h;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 4096; i++)
		pn__decay_hist_add(&h, 1000);
	for (int i = 0; i < 2048; i++)
		pn__decay_hist_add(&h, 100000);
	/* half-life 2048: the 4096 before weigh (4 - 1) / (8 - 4) of the newest 2048 */
	int b0 = pn__decay_hist_bucket_of(1000), b1 = pn__decay_hist_bucket_of(100000);
	float ratio = h.w[b0] / h.w[b1];
	assert_true(ratio > 0.74f && ratio < 0.76f);
	/* 20000 samples later: renormalized many times over, the new mode is every quantile */
	for (int i = 0; i < 200000; i++)
		pn__decay_hist_add(&h, 100000);
	assert_true(h.inc >= 1.0f && h.inc <= 1e18f);
	assert_int_equal(pn__decay_hist_quantile(&h, 0.01, 2.0f), pn__decay_hist_bucket_hi(b1));
	assert_int_equal(pn__decay_hist_quantile(&h, 0.99, 2.0f), pn__decay_hist_bucket_hi(b1));
}

static void ages(void **state)
{
	(void)state;
	struct pn__decay_hist h;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 100; i++)
		pn__decay_hist_add(&h, 5000000);
	float inc = h.inc;
	pn__decay_hist_age(&h, 4, 64.0f);
	assert_true(h.inc > inc); /* the next sample weighs more: the past fades */
	assert_int_equal(h.n, 100);
	/* aging alone stops at the floor: at most 64 samples' weight is let go of */
	for (int i = 0; i < 100000; i++)
		pn__decay_hist_age(&h, 4, 64.0f);
	assert_true(h.total > 63.0f * h.inc && h.total <= 65.0f * h.inc);
}

static void guarded(void **state)
{
	(void)state;
	struct pn__decay_hist h;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 2; i++)
		pn__decay_hist_add(&h, 1000);
	assert_false(pn__decay_hist_guarded(&h, 0.999, 1.0f)); /* under three samples */
	for (int i = 0; i < 100; i++)
		pn__decay_hist_add(&h, 1000);
	assert_true(pn__decay_hist_guarded(&h, 0.999, 1.0f)); /* 0.1% of 102 < one sample */
	for (int i = 0; i < 3000; i++)
		pn__decay_hist_add(&h, 1000);
	assert_false(pn__decay_hist_guarded(&h, 0.999, 1.0f)); /* over 1000 samples' weight */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(buckets), cmocka_unit_test(quantiles), cmocka_unit_test(guard),
	        cmocka_unit_test(decays),  cmocka_unit_test(ages),      cmocka_unit_test(guarded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
