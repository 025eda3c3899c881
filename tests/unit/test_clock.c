/* SPDX-License-Identifier: MIT */
/*
 * test_clock.c: pn_now never goes backwards (one thread, across threads, bracketed by
 * kernel reads), the coarse clock and its resolution, the cycle counter's ordering,
 * its conversion against CLOCK_MONOTONIC_RAW, the source decision and its fallback.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include "internal.h"

#ifndef PN_FIXTURES
#define PN_FIXTURES "tests/fixtures"
#endif

static int64_t kernel_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return pn__ts_ns(&ts);
}

static void test_now_never_backwards(void **state)
{
	(void)state;
	int64_t prev = pn_now();
	for (int i = 0; i < 1000000; i++) {
		int64_t t = pn_now();
		assert_true(t >= prev);
		prev = t;
	}
}

/* vdso_test_correctness: a read bracketed by two kernel reads lies between them. */
static void test_now_bracketed(void **state)
{
	(void)state;
	for (int i = 0; i < 100000; i++) {
		int64_t a = kernel_ns(CLOCK_MONOTONIC);
		int64_t b = pn_now();
		int64_t c = kernel_ns(CLOCK_MONOTONIC);
		assert_true(a <= b);
		assert_true(b <= c);
	}
}

/* ---- across threads: a read after a handoff is never below the read before it ---- */

struct handoff {
	uint64_t (*read)(void);
	_Atomic uint64_t value;
	_Atomic int turn; /* 0 main, 1 partner, 2 stop */
	_Atomic uint64_t violations;
};

static uint64_t read_now(void)
{
	return (uint64_t)pn_now();
}

static void turns(struct handoff *h, int me, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		int t;
		while ((t = atomic_load_explicit(&h->turn, memory_order_acquire)) != me)
			if (t == 2)
				return;
		uint64_t before = atomic_load_explicit(&h->value, memory_order_relaxed);
		if (h->read() < before)
			atomic_fetch_add(&h->violations, 1);
		atomic_store_explicit(&h->value, h->read(), memory_order_relaxed);
		atomic_store_explicit(&h->turn, !me, memory_order_release);
	}
	/* the last turn passed: tell the other side to stop */
	while (atomic_load_explicit(&h->turn, memory_order_acquire) == !me)
		;
	atomic_store_explicit(&h->turn, 2, memory_order_release);
}

static void *partner(void *arg)
{
	turns(arg, 1, 1L << 40);
	return NULL;
}

static void check_cross_thread(uint64_t (*read)(void))
{
	struct handoff h = {.read = read};
	atomic_store(&h.value, read());
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, partner, &h), 0);
	turns(&h, 0, 50000);
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&h.violations), 0);
}

static void test_now_cross_thread(void **state)
{
	(void)state;
	check_cross_thread(read_now);
}

static void test_cycles_ordered_cross_thread(void **state)
{
	(void)state;
	check_cross_thread(pn_cycles_ordered);
}

/* ---- coarse clock ---------------------------------------------------------------- */

static void test_coarse(void **state)
{
	(void)state;
	struct timespec res;
	assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
	assert_int_equal(pn_now_coarse_resolution(), pn__ts_ns(&res));
	assert_true(pn_now_coarse_resolution() > 0);
	int64_t prev = pn_now_coarse();
	for (int i = 0; i < 1000000; i++) {
		int64_t c = pn_now_coarse();
		int64_t n = pn_now();
		/* the coarse clock is the fine one as of the last tick: never ahead of it */
		assert_true(c <= n);
		assert_true(c >= prev);
		prev = c;
	}
}

/* ---- cycle counter --------------------------------------------------------------- */

static void test_cycles_one_thread(void **state)
{
	(void)state;
	uint64_t p = pn_cycles(), po = pn_cycles_ordered();
	for (int i = 0; i < 1000000; i++) {
		uint64_t c = pn_cycles_ordered();
		assert_true(c >= po);
		po = c;
		c = pn_cycles();
		assert_true(c >= p);
		p = c;
	}
}

/* A counter read paired with the narrowest of a few CLOCK_MONOTONIC_RAW sandwiches. */
static void pair(uint64_t *c, int64_t *t)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 32; i++) {
		int64_t a = kernel_ns(CLOCK_MONOTONIC_RAW);
		uint64_t x = pn_cycles_ordered();
		int64_t b = kernel_ns(CLOCK_MONOTONIC_RAW);
		if (b - a < best) {
			best = b - a;
			*c = x;
			*t = a + (b - a) / 2;
		}
	}
}

/* The conversion agrees with the kernel's raw clock: a correctness check (a wrong unit or
 * rate is off by far more than 0.1%), not a speed check. */
static void test_cycles_to_ns_matches_raw(void **state)
{
	(void)state;
	uint64_t c0 = 0, c1 = 0;
	int64_t t0 = 0, t1 = 0;
	pair(&c0, &t0);
	nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
	pair(&c1, &t1);
	int64_t ns = pn_cycles_to_ns((int64_t)(c1 - c0));
	int64_t ref = t1 - t0;
	int64_t err = ns > ref ? ns - ref : ref - ns;
	assert_true(err <= ref / 1000 + 20000);
}

static void test_cycles_to_ns_edges(void **state)
{
	(void)state;
	assert_int_equal(pn_cycles_to_ns(0), 0);
	int64_t a = pn_cycles_to_ns(1000000000), b = pn_cycles_to_ns(-1000000000);
	assert_true(a > 0);
	assert_true(b < 0);
	assert_true(a + b >= -1 && a + b <= 1);
	/* clamps, never wraps */
	assert_true(pn_cycles_to_ns(INT64_MAX) > 0);
	assert_true(pn_cycles_to_ns(INT64_MIN) < 0);
}

static void test_calibrate_and_info(void **state)
{
	(void)state;
	assert_int_equal(pn_cycles_calibrate(-1), -EINVAL);
	assert_int_equal(pn_cycles_calibrate(61 * PN_NSEC), -EINVAL);
	assert_int_equal(pn_cycles_info(NULL), -EINVAL);
	assert_int_equal(pn_cycles_calibrate(0), 0);
	struct pn_cycles_info info;
	assert_int_equal(pn_cycles_info(&info), 0);
	assert_true(info.source == PN_CYCLES_TSC || info.source == PN_CYCLES_CNTVCT ||
	            info.source == PN_CYCLES_CLOCK);
	assert_int_equal(info.source, pn_cycles_source());
	assert_non_null(info.name);
	assert_non_null(info.reason);
	assert_true(info.calibrated);
	assert_true(info.hz > 0);
	if (info.source != PN_CYCLES_CLOCK) {
		assert_true(info.base_ns >= 100 * 1000 * 1000);
		assert_true(info.uncertainty_ns > 0);
	}
}

static void test_decide_fixtures(void **state)
{
	(void)state;
	const char *reason = NULL;
	unsetenv("PUNCTUAL_CYCLES");
#if defined(__x86_64__)
	pn__set_root(PN_FIXTURES "/clocksource/unstable");
	assert_int_equal(pn__cycles_decide(&reason), PN_CYCLES_CLOCK);
	assert_non_null(strstr(reason, "unstable"));
	pn__set_root(PN_FIXTURES "/clocksource/stable");
	if (pn__arch_cycles_invariant())
		assert_int_equal(pn__cycles_decide(&reason), PN_CYCLES_TSC);
#endif
	setenv("PUNCTUAL_CYCLES", "clock", 1);
	assert_int_equal(pn__cycles_decide(&reason), PN_CYCLES_CLOCK);
	assert_string_equal(reason, "PUNCTUAL_CYCLES=clock");
	unsetenv("PUNCTUAL_CYCLES");
	pn__set_root(NULL);
}

/* ---- fallback, in a fresh process: PUNCTUAL_CYCLES=clock -------------------------- */

static int fallback_child(void)
{
	if (pn_cycles_source() != PN_CYCLES_CLOCK)
		return 10;
	int64_t a = pn_now();
	int64_t c = (int64_t)pn_cycles();
	int64_t b = pn_now();
	if (c < a || c > b)
		return 11;
	if (pn_cycles_to_ns(12345) != 12345)
		return 12;
	struct pn_cycles_info info;
	pn_cycles_info(&info);
	if (strcmp(info.name, "clock_monotonic") != 0 || info.hz != 1e9)
		return 13;
	return 0;
}

static void test_fallback_process(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("PUNCTUAL_CYCLES", "clock", 1);
		execl("/proc/self/exe", "test_clock", "fallback-child", (char *)NULL);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "fallback-child") == 0)
		return fallback_child();
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_now_never_backwards),
	        cmocka_unit_test(test_now_bracketed),
	        cmocka_unit_test(test_now_cross_thread),
	        cmocka_unit_test(test_cycles_ordered_cross_thread),
	        cmocka_unit_test(test_coarse),
	        cmocka_unit_test(test_cycles_one_thread),
	        cmocka_unit_test(test_cycles_to_ns_matches_raw),
	        cmocka_unit_test(test_cycles_to_ns_edges),
	        cmocka_unit_test(test_calibrate_and_info),
	        cmocka_unit_test(test_decide_fixtures),
	        cmocka_unit_test(test_fallback_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
