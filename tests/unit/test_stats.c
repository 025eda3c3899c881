/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c: pn__stats_format, PUNCTUAL_STATS's block of a thread: no line wider than
 * 80 columns whatever the figures (counts of 20 digits, durations of days, a tid of 10
 * digits, and a sweep of widths that ends items at every column), every figure still shown, the
 * layout's line breaks where they fit, and a buffer too small cut cleanly (NUL-terminated, the
 * length it holds).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <punctual/sleep.h>
#include "report/stats.h"

/* Every line of s (each ended by '\n') at most 80 columns; returns the number of lines. */
static int lines_within_80(const char *s)
{
	int lines = 0;
	for (const char *p = s; *p;) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		if (nl - p > 80)
			fail_msg("line %d is %d columns: %.*s", lines + 1, (int)(nl - p),
			         (int)(nl - p), p);
		lines++;
		p = nl + 1;
	}
	return lines;
}

static struct pn_sleep_stats huge(void)
{
	struct pn_sleep_stats st = {0};
	st.sleeps = UINT64_MAX / 2;
	st.past = UINT64_MAX / 2;
	st.late = UINT64_MAX;
	st.late_budget = UINT64_MAX;
	st.shared_waits = UINT64_MAX;
	st.late_p50_ns = 123456789012345;
	st.late_p99_ns = 923456789012345;
	st.late_p999_ns = INT64_MAX;
	st.late_max_ns = INT64_MAX;
	st.spun_ns = 987654321098765;
	st.wall_ns = 987654321098766;
	st.slack_ns = 4000000000000;
	st.slice_ns = 100000;
	st.mode = PN_SLEEP_MODE_LOST; /* the longest reason */
	st.mode_ppm = 1000000;
	return st;
}

static void test_precise_extremes(void **state)
{
	(void)state;
	struct pn_sleep_stats st = huge();
	struct pn__stats_more x = {.precision = 999999999999,
	                           .budget_ppm = 123456,
	                           .kernel_p50_ns = INT64_MAX,
	                           .kernel_p99_ns = INT64_MAX};
	char buf[2048];
	size_t n = pn__stats_format(INT_MAX, &st, &x, buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	assert_true(lines_within_80(buf) >= 4);
	assert_non_null(strstr(buf, "punctual: thread 2147483647: 18446744073709551614 waits"));
	assert_non_null(strstr(buf, "18446744073709551615 late beyond"));
	assert_non_null(strstr(buf, "CPU shared: 18446744073709551615 without a spin"));
	assert_non_null(strstr(buf, "\n  settled on lost (100%): spins lose the CPU"));
	assert_non_null(strstr(buf, "(kernel -> precise)\n"));
	assert_non_null(strstr(buf, "budget 12.3456% (18446744073709551615 late by it)"));
	/* a break never leaves a separator's space at a line's end */
	assert_null(strstr(buf, " \n"));
}

static void test_observed_extremes(void **state)
{
	(void)state;
	struct pn_sleep_stats st = huge();
	struct pn__stats_more x = {.observed = true, .events = UINT64_MAX, .kernel_p50_ns = -1};
	char buf[2048];
	pn__stats_format(-1, &st, &x, buf, sizeof(buf));
	assert_true(lines_within_80(buf) >= 3);
	assert_non_null(strstr(buf, "punctual: thread -1: 9223372036854775807 waits timed out"));
	assert_non_null(strstr(buf, "18446744073709551615 ended by their event"));
	assert_non_null(strstr(buf, "as made"));
	assert_null(strstr(buf, " \n"));
}

/* Small figures keep the documented layout: three lines, the kernel's figures a fourth. */
static void test_layout(void **state)
{
	(void)state;
	struct pn_sleep_stats st = {.sleeps = 1000,
	                            .late_p50_ns = 2500,
	                            .late_p99_ns = 9000,
	                            .late_p999_ns = 12000,
	                            .late_max_ns = 20000,
	                            .late = 3,
	                            .spun_ns = 5000000,
	                            .wall_ns = 1000000000};
	struct pn__stats_more x = {
	        .precision = 10000, .budget_ppm = PN_SLEEP_BUDGET_AUTO, .kernel_p50_ns = -1};
	char buf[1024];
	pn__stats_format(42, &st, &x, buf, sizeof(buf));
	assert_string_equal(
	        buf, "punctual: thread 42: 1000 waits, late p50 2.5 us, p99 9 us, max 20 us\n"
	             "  p99.9 12 us; 3 late beyond 10 us; spin 5 ms, 0.5% of 1 s\n"
	             "  budget auto (0 late by it), slice the kernel's\n");
	x.kernel_p50_ns = 60000;
	x.kernel_p99_ns = 90000;
	pn__stats_format(42, &st, &x, buf, sizeof(buf));
	assert_int_equal(lines_within_80(buf), 4);
	assert_non_null(strstr(
	        buf, "\n  saved: p50 60 us -> 2.5 us, p99 90 us -> 9 us (kernel -> precise)\n"));
	/* a loss is not "saved"; the comparison with the program alone is said */
	x.kernel_p99_ns = 5000;
	x.arm_waits[0] = 900;
	x.arm_waits[1] = 100;
	x.arm_p99[0] = 786000;
	x.arm_p99[1] = 655000;
	x.arm_alone = true;
	x.rt_refused = 1;
	pn__stats_format(42, &st, &x, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\n  not saved: p50 60 us -> 2.5 us, p99 5 us -> 9 us"));
	assert_non_null(strstr(buf, "\n  real time denied (EPERM: no CAP_SYS_NICE, RLIMIT_RTPRIO 0)"));
	assert_non_null(strstr(buf, "plan p99 786 us (900 waits)"));
	assert_non_null(strstr(buf, "(100 waits): waits as the program would"));
	/* no spin: the kernel's figures are the waits' own, nothing saved or lost; beside the
	 * comparison with the program alone, they are the plan's share, said there */
	st.spun_ns = 0;
	pn__stats_format(42, &st, &x, buf, sizeof(buf));
	assert_null(strstr(buf, "saved"));
	assert_null(strstr(buf, "no spin"));
	x.arm_waits[0] = x.arm_waits[1] = 0;
	pn__stats_format(42, &st, &x, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\n  no spin: the kernel woke each wait (p50 60 us, p99 5 us)\n"));
	assert_null(strstr(buf, "saved"));
	st.spun_ns = 5000000;
	x.arm_waits[0] = x.arm_waits[1] = 0;
	x.observed = true;
	x.events = 5;
	pn__stats_format(7, &st, &x, buf, sizeof(buf));
	assert_string_equal(buf,
	                    "punctual: thread 7: 1000 waits timed out, late p50 2.5 us, p99 9 us\n"
	                    "  p99.9 12 us, max 20 us; slack 0 as made\n"
	                    "  5 ended by their event, 0 past at the call\n");
}

/* Every width of tid, counts and figures around the column where an item ends at 80 (the
 * next separator's comma has to fit too): no line passes 80. */
static void test_width_sweep(void **state)
{
	(void)state;
	static const int tids[] = {1, 12, 1234, 123456, 4194304, INT_MAX, INT_MIN};
	static const double figs[] = {0,       7,        999,       1234,  12345,     123456,
	                              1234567, 12345678, 123456789, 1.5e9, 123456.7e9};
	char buf[2048];
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++)
		for (uint64_t count = 1; count && count < UINT64_MAX / 10; count *= 10)
			for (size_t j = 0; j < sizeof(figs) / sizeof(figs[0]); j++)
				for (int observed = 0; observed < 2; observed++) {
					struct pn_sleep_stats st = {
					        .sleeps = count - 1,
					        .past = 1,
					        .late = count,
					        .late_budget = count,
					        .shared_waits = count,
					        .late_p50_ns = (int64_t)figs[j],
					        .late_p99_ns = (int64_t)figs[(j + 1) % 11],
					        .late_p999_ns = (int64_t)figs[(j + 2) % 11],
					        .late_max_ns = (int64_t)figs[(j + 3) % 11],
					        .spun_ns = (int64_t)figs[(j + 4) % 11],
					        .wall_ns = (int64_t)figs[(j + 5) % 11],
					        .slack_ns = (int64_t)figs[(j + 6) % 11],
					        .slice_ns = (int64_t)figs[(j + 7) % 11],
					        .mode = (int32_t)(count % PN_SLEEP_MODES),
					        .mode_ppm = (int32_t)(count % 1000001)};
					struct pn__stats_more x = {
					        .observed = observed,
					        .events = count,
					        .precision = (int64_t)figs[(j + 8) % 11],
					        .budget_ppm = (int32_t)(count % 1000003),
					        .kernel_p50_ns = (int64_t)figs[(j + 9) % 11],
					        .kernel_p99_ns = (int64_t)figs[(j + 10) % 11],
					        .fifo_waits = count};
					pn__stats_format(tids[i], &st, &x, buf, sizeof(buf));
					lines_within_80(buf);
				}
}

/* A buffer too small: cut, NUL-terminated, its length what it holds, nothing written
 * past it. */
static void test_small_buffer(void **state)
{
	(void)state;
	struct pn_sleep_stats st = huge();
	struct pn__stats_more x = {.kernel_p50_ns = 1, .kernel_p99_ns = 2};
	for (size_t cap = 1; cap < 300; cap += 7) {
		char buf[300];
		memset(buf, 'x', sizeof(buf));
		size_t n = pn__stats_format(1, &st, &x, buf, cap);
		assert_true(n < cap);
		assert_int_equal(n, strlen(buf));
		for (size_t k = cap; k < sizeof(buf); k++)
			assert_int_equal(buf[k], 'x');
	}
	assert_int_equal(pn__stats_format(1, &st, &x, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_precise_extremes), cmocka_unit_test(test_observed_extremes),
	        cmocka_unit_test(test_layout),           cmocka_unit_test(test_width_sweep),
	        cmocka_unit_test(test_small_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
