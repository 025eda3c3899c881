/* SPDX-License-Identifier: MIT */
/*
 * test_arms.c: the plan's way against the program's own (src/wait/arms.c): the program's
 * own first, the plan in runs of PN__ARMS_RUN (their first PN__ARMS_SETTLE unlearned), one
 * in PN__ARMS_EXPLORE runs' waits until it has its first waits, then the lower p99 takes
 * all but a run in PN__ARMS_EXPLORE (PN__ARMS_EXPLORE_PLAN for a losing plan); the plan is
 * taken only when better beyond 10% + PN__ARMS_SLACK_NS, left once worse; a change of the
 * host reaches the choice through the exploring runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wait/arms.h"

/* Feeds n waits: each way's lateness plan_ns or alone_ns (a tail of every 20th at 5x);
 * returns how many went the program's own way. */
static int feed(struct pn__arms *a, int n, int64_t plan_ns, int64_t alone_ns)
{
	int alone = 0;
	for (int i = 0; i < n; i++) {
		int arm = pn__arms_pick(a);
		int64_t v = arm == PN__ARM_ALONE ? alone_ns : plan_ns;
		pn__arms_learn(a, arm, a->waits[arm] % 20 == 0 ? 5 * v : v); /* each way's tail */
		alone += arm == PN__ARM_ALONE;
	}
	return alone;
}

/* The way not chosen goes in runs: at most a run in every EXPLORE_PLAN runs' waits, and
 * the runs straddling the ends. */
static int explored_at_most(int n, int every)
{
	return n / every + 2 * PN__ARMS_RUN;
}

static void alone_first(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	int n = PN__ARMS_EXPLORE * PN__ARMS_RUN * 3;
	int alone = feed(&a, n, 1000, 1000);
	assert_int_equal(n - alone, 3 * PN__ARMS_RUN); /* the plan: a run in EXPLORE runs */
	assert_true(a.alone);
	alone = feed(&a, 2048, 1000, 1000);
	assert_true(a.alone); /* equal: still its own */
	assert_true(2048 - alone <= explored_at_most(2048, PN__ARMS_EXPLORE_PLAN));
}

static void plan_where_better_beyond_noise(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 4096, 20000, 60000);
	assert_false(a.alone);
	int alone = feed(&a, 1024, 20000, 60000);
	assert_false(a.alone);
	assert_true(alone <= explored_at_most(1024, PN__ARMS_EXPLORE)); /* exploring only */
	/* better, but within 10% + the slack: the program's own way stays */
	memset(&a, 0, sizeof(a));
	feed(&a, 4096, 56000, 60000);
	alone = feed(&a, 2048, 56000, 60000);
	assert_true(a.alone);
	assert_true(2048 - alone <= explored_at_most(2048, PN__ARMS_EXPLORE_PLAN));
}

static void back_where_the_plan_gets_worse(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 4096, 20000, 60000);
	assert_false(a.alone);
	/* the host changes: the plan gets worse; its own waits show it */
	feed(&a, 4000, 150000, 60000);
	assert_true(a.alone);
	int alone = feed(&a, 2048, 150000, 60000);
	assert_true(2048 - alone <= explored_at_most(2048, PN__ARMS_EXPLORE_PLAN));
}

/* A way's first waits after the other's run are not learned: they carry what the waits
 * before did. */
static void runs_settle(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	for (int i = 0; i < PN__ARMS_EXPLORE * PN__ARMS_RUN; i++) {
		int arm = pn__arms_pick(&a);
		pn__arms_learn(&a, arm, 1000);
		/* the first run the plan's, then the program's own way */
		assert_int_equal(arm, i < PN__ARMS_RUN ? PN__ARM_PLAN : PN__ARM_ALONE);
	}
	assert_int_equal(a.waits[PN__ARM_PLAN], PN__ARMS_RUN);
	assert_int_equal(a.late[PN__ARM_PLAN].n, PN__ARMS_RUN - PN__ARMS_SETTLE);
	assert_int_equal(a.late[PN__ARM_ALONE].n,
	                 PN__ARMS_EXPLORE * PN__ARMS_RUN - PN__ARMS_RUN - PN__ARMS_SETTLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(alone_first),
	        cmocka_unit_test(plan_where_better_beyond_noise),
	        cmocka_unit_test(back_where_the_plan_gets_worse),
	        cmocka_unit_test(runs_settle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
