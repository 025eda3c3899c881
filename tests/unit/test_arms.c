/* SPDX-License-Identifier: MIT */
/*
 * test_arms.c: the plan's way against the program's own (src/wait/arms.c): the two
 * alternate until each has its first waits; then the lower p99 takes all but one wait in
 * PN__ARMS_EXPLORE (PN__ARMS_EXPLORE_PLAN for a losing plan); the plan is left only when
 * worse beyond 10% + PN__ARMS_SLACK_NS, and
 * taken again once no worse; a change of the host reaches the choice through the
 * exploring waits.
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

static void alone_first(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	int alone = feed(&a, 8 * PN__ARMS_FIRST, 1000, 1000);
	assert_int_equal(alone, 8 * PN__ARMS_FIRST - PN__ARMS_FIRST); /* the plan: 1 in 8 */
	assert_true(a.alone);
	alone = feed(&a, 640, 1000, 1000);
	assert_int_equal(alone, 640 - 640 / PN__ARMS_EXPLORE_PLAN); /* equal: still its own */
}

static void plan_where_better_beyond_noise(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 8 * PN__ARMS_FIRST, 20000, 60000);
	int alone = feed(&a, 800, 20000, 60000);
	assert_false(a.alone);
	assert_true(alone <= 800 / PN__ARMS_EXPLORE + 1); /* exploring only */
	/* better, but within 10% + the slack: the program's own way stays */
	memset(&a, 0, sizeof(a));
	feed(&a, 8 * PN__ARMS_FIRST, 56000, 60000);
	alone = feed(&a, 640, 56000, 60000);
	assert_true(a.alone);
	assert_int_equal(alone, 640 - 640 / PN__ARMS_EXPLORE_PLAN);
}

static void back_where_the_plan_gets_worse(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 8 * PN__ARMS_FIRST + 800, 20000, 60000);
	assert_false(a.alone);
	/* the host changes: the plan gets worse; its own waits show it */
	feed(&a, 4000, 150000, 60000);
	assert_true(a.alone);
	int alone = feed(&a, 640, 150000, 60000);
	assert_int_equal(alone, 640 - 640 / PN__ARMS_EXPLORE_PLAN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(alone_first),
	        cmocka_unit_test(plan_where_better_beyond_noise),
	        cmocka_unit_test(back_where_the_plan_gets_worse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
