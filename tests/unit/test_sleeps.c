/* SPDX-License-Identifier: MIT */
/*
 * test_sleeps.c: the sleep mechanisms `punctual sleep` measures never return early, also
 * when a signal arrives every 100 us during 10 ms sleeps (the harness resumes after
 * EINTR and counts the interruption); unsupported ones say why.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include "measure/sleeps.h"
#include "alarms.h"

static struct sleep_cell cell;

/* Every mechanism, then pn_sleep_until at three precisions and pn_poll_until and
 * pn_epoll_wait_until at two. */
static const struct sleep_mech *mech_at(int m)
{
	int n = sleep_mechs_count();
	if (m < n)
		return sleep_mech(m);
	static const struct {
		enum precise_kind kind;
		int64_t p;
		const char *name;
	} pm[] = {{PRECISE_SLEEP, 0, "0"},        {PRECISE_SLEEP, 1000, "1us"},
	          {PRECISE_SLEEP, 50000, "50us"}, {PRECISE_POLL, 0, "0"},
	          {PRECISE_POLL, 1000, "1us"},    {PRECISE_EPOLL, 0, "0"},
	          {PRECISE_EPOLL, 1000, "1us"}};
	return m - n < (int)(sizeof(pm) / sizeof(pm[0]))
	               ? sleep_mech_precise(pm[m - n].kind, pm[m - n].p, pm[m - n].name)
	               : NULL;
}

static void check_never_early(int64_t slack, const int64_t *intervals, int nint, int samples)
{
	struct sleep_ctx *c = sleep_ctx_new();
	assert_non_null(c);
	int64_t before = pn_slack_get();
	assert_int_equal(pn_slack_set(slack), 0);
	for (int m = 0; mech_at(m); m++) {
		const struct sleep_mech *mech = mech_at(m);
		const char *why = NULL;
		if (sleep_ctx_prepare(c, mech, &why) < 0) {
			assert_non_null(why);
			print_message("  %s unsupported: %s\n", mech->id, why);
			continue;
		}
		for (int i = 0; i < nint; i++) {
			sleep_cell_init(&cell);
			for (int k = 0; k < samples; k++)
				assert_int_equal(sleep_sample(c, mech, intervals[i], &cell), 0);
			if (cell.early)
				fail_msg("%s at %lld ns: %llu early returns", mech->id,
				         (long long)intervals[i], (unsigned long long)cell.early);
			assert_int_equal(pn_hist_count(&cell.duration), samples);
			if (!mech->baseline)
				assert_true(pn_hist_min(&cell.duration) >= intervals[i]);
		}
	}
	assert_int_equal(pn_slack_set(before), 0);
	sleep_ctx_free(c);
}

static void test_never_early_short(void **state)
{
	(void)state;
	static const int64_t iv[] = {0, 1, 999, 1000, 1001, 10000, 50000};
	check_never_early(1, iv, sizeof(iv) / sizeof(iv[0]), 100);
}

static void test_never_early_default_slack(void **state)
{
	(void)state;
	static const int64_t iv[] = {1000, 20000};
	check_never_early(50000, iv, sizeof(iv) / sizeof(iv[0]), 50);
}

/* A signal every 100 us during 10 ms sleeps: each sample still lasts at least 10 ms. */
static void test_never_early_under_signals(void **state)
{
	(void)state;
	assert_int_equal(alarms_start(100), 0); /* no SA_RESTART: calls see EINTR */

	struct sleep_ctx *c = sleep_ctx_new();
	uint64_t interrupted = 0;
	for (int m = 0; mech_at(m); m++) {
		const struct sleep_mech *mech = mech_at(m);
		if (sleep_ctx_prepare(c, mech, NULL) < 0)
			continue;
		sleep_cell_init(&cell);
		for (int k = 0; k < 5; k++)
			assert_int_equal(sleep_sample(c, mech, 10000000, &cell), 0);
		if (cell.early)
			fail_msg("%s: early under signals", mech->id);
		if (!mech->baseline)
			assert_true(pn_hist_min(&cell.duration) >= 10000000);
		interrupted += cell.interrupted;
	}
	alarms_stop();
	sleep_ctx_free(c);
	assert_true(alarms > 0);
	/* the signals did reach the sleeps: the harness saw and resumed interruptions */
	assert_true(interrupted > 0);
}

static void test_lookup(void **state)
{
	(void)state;
	assert_null(sleep_mech_find("bogus"));
	assert_null(sleep_mech(-1));
	assert_null(sleep_mech(sleep_mechs_count()));
	const struct sleep_mech *p = sleep_mech_precise(PRECISE_SLEEP, 1000, "1us");
	assert_non_null(p);
	assert_string_equal(p->id, "precise:1us");
	assert_ptr_equal(sleep_mech_precise(PRECISE_SLEEP, 1000, "1us"), p);
	assert_null(sleep_mech_precise(PRECISE_SLEEP, -1, "x"));
	/* the same precision of another kind is another mechanism */
	const struct sleep_mech *q = sleep_mech_precise(PRECISE_EPOLL, 1000, "1us");
	assert_non_null(q);
	assert_true(q != p);
	assert_string_equal(q->id, "precise-epoll:1us");
	assert_string_equal(sleep_mech_precise(PRECISE_POLL, 1000, "1us")->id, "precise-poll:1us");
	assert_null(sleep_mech_precise((enum precise_kind)7, 1000, "1us"));
	static const char *want[] = {"nanosleep",
	                             "clock_nanosleep",
	                             "clock_nanosleep_abs",
	                             "usleep",
	                             "select",
	                             "pselect",
	                             "poll",
	                             "ppoll",
	                             "epoll_wait",
	                             "epoll_pwait2",
	                             "timerfd_read",
	                             "timerfd_epoll",
	                             "futex",
	                             "sigtimedwait",
	                             "cond_timedwait",
	                             "io_uring",
	                             "spin",
	                             "syscall"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_non_null(sleep_mech_find(want[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_lookup),
	        cmocka_unit_test(test_never_early_short),
	        cmocka_unit_test(test_never_early_default_slack),
	        cmocka_unit_test(test_never_early_under_signals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
