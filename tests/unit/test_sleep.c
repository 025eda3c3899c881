/* SPDX-License-Identifier: MIT */
/*
 * test_sleep.c: pn_sleep_until is never early: over 10^5 short sleeps at mixed
 * precisions, with a signal every 50 us, and in 8 threads at once, each learning its own
 * margin; its statistics add up; bad arguments give -EINVAL. No test asserts lateness.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "alarms.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static const int64_t precisions[] = {0, 1, 1000, 10000, 50000, 1000000};
#define NPREC (sizeof(precisions) / sizeof(precisions[0]))

/* n sleeps of random length in [0, max_len) at random precisions; fails on any early
 * return, by our clock or by the library's count. */
static void sleep_many(uint64_t *seed, int n, int64_t max_len)
{
	for (int i = 0; i < n; i++) {
		int64_t len = (int64_t)(next_rand(seed) % (uint64_t)max_len);
		int64_t p = precisions[next_rand(seed) % NPREC];
		int64_t deadline = pn_now() + len;
		assert_int_equal(pn_sleep_until(deadline, p), 0);
		int64_t now = pn_now();
		if (now < deadline)
			fail_msg("early by %lld ns (len %lld, precision %lld)",
			         (long long)(deadline - now), (long long)len, (long long)p);
	}
	struct pn_sleep_stats st;
	assert_int_equal(pn_sleep_stats(&st), 0);
	assert_int_equal(st.early, 0);
}

static void test_never_early_1e5(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	sleep_many(&rng, 100000, 20000);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.sleeps + st.past, 100000);
	assert_true(st.sleeps > 0);
}

static void test_never_early_under_signals(void **state)
{
	(void)state;
	assert_int_equal(alarms_start(50), 0);
	sleep_many(&rng, 3000, 2000000);
	alarms_stop();
	assert_true(alarms > 0);
}

struct worker {
	uint64_t seed;
	struct pn_sleep_stats st;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	sleep_many(&w->seed, 2000, 200000);
	pn_sleep_stats(&w->st);
	return NULL;
}

/* Eight threads at once: each keeps its own statistics and learns its own margins. */
static void test_threads(void **state)
{
	(void)state;
	struct worker w[8];
	pthread_t t[8];
	for (int i = 0; i < 8; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = (uint64_t)i * 7919 + 1;
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].st.early, 0);
		assert_int_equal(w[i].st.sleeps + w[i].st.past, 2000);
		uint64_t seen = 0;
		for (int k = 0; k < PN_SLEEP_CLASSES; k++)
			seen += w[i].st.class_samples[k];
		/* what a thread learned comes from its own kernel sleeps only */
		assert_true(seen <= w[i].st.sleeps);
	}
}

/* slept + spun is the time spent inside the calls that slept. */
static void test_stats_add_up(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	int64_t inside = 0;
	for (int i = 0; i < 500; i++) {
		int64_t t0 = pn_now();
		assert_int_equal(pn_sleep_for(100000 + (i % 7) * 50000, precisions[i % NPREC]), 0);
		inside += pn_now() - t0;
	}
	struct pn_sleep_stats st;
	assert_int_equal(pn_sleep_stats(&st), 0);
	assert_int_equal(st.sleeps, 500);
	assert_int_equal(st.early, 0);
	assert_true(st.slept_ns >= 0 && st.spun_ns >= 0);
	assert_true(st.slept_ns + st.spun_ns <= inside);
	assert_true(st.slept_ns + st.spun_ns >= inside / 2);
	assert_true(st.kernel_only <= st.sleeps);
	assert_true(st.late <= st.sleeps);
	assert_true(st.margin_ns >= 0);
	int learned = 0;
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		learned += st.class_samples[k] > 0;
	assert_true(learned > 0);
}

static void test_past_and_invalid(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	assert_int_equal(pn_sleep_until(0, 0), 0);
	assert_int_equal(pn_sleep_until(INT64_MIN, 1000), 0);
	assert_int_equal(pn_sleep_until(pn_now(), 0), 0);
	assert_int_equal(pn_sleep_for(0, 0), 0);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.past, 4);
	assert_int_equal(st.sleeps, 0);
	assert_int_equal(pn_sleep_until(pn_now() + 1000, -1), -EINVAL);
	assert_int_equal(pn_sleep_for(-1, 0), -EINVAL);
	assert_int_equal(pn_sleep_for(1000, -5), -EINVAL);
	assert_int_equal(pn_sleep_stats(NULL), -EINVAL);
	/* overflow clamps: a huge precision is accepted and the short sleep still ends */
	assert_int_equal(pn_sleep_for(1000, INT64_MAX), 0);
}

/* The slack: pn_sleep_until reports truthfully what it left, and notices pn_slack_set. */
static void test_slack_documented(void **state)
{
	(void)state;
	int64_t before = pn_slack_get();
	assert_int_equal(pn_slack_set(50000), 0);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.slack_ns, 50000);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(pn_sleep_for(500000 + i * 10000, i % 2 ? 0 : 200000), 0);
		pn_sleep_stats(&st);
		assert_int_equal(st.slack_ns, pn_slack_get());
	}
	assert_int_equal(pn_slack_set(777), 0);
	pn_sleep_stats(&st);
	assert_int_equal(st.slack_ns, 777);
	assert_int_equal(pn_slack_set(before), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_past_and_invalid),
	        cmocka_unit_test(test_never_early_1e5),
	        cmocka_unit_test(test_never_early_under_signals),
	        cmocka_unit_test(test_threads),
	        cmocka_unit_test(test_stats_add_up),
	        cmocka_unit_test(test_slack_documented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
