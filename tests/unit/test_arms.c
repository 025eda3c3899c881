/* SPDX-License-Identifier: MIT */
/*
 * test_arms.c: the plan's way against the program's own (src/wait/arms.c): the two
 * alternate until each has its first waits; then the lower p99 takes all but one wait in
 * PN__ARMS_EXPLORE; the plan is left only when worse beyond 10% + PN__ARMS_SLACK_NS, and
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

static void alternates_first(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	int alone = feed(&a, 2 * PN__ARMS_FIRST, 1000, 1000);
	assert_int_equal(alone, PN__ARMS_FIRST);
	assert_int_equal(a.waits[PN__ARM_PLAN], PN__ARMS_FIRST);
}

static void plan_kept_where_better_or_close(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 2 * PN__ARMS_FIRST, 20000, 60000);
	int alone = feed(&a, 800, 20000, 60000);
	assert_int_equal(alone, 800 / PN__ARMS_EXPLORE); /* exploring only */
	/* worse, but within 10% + the slack: still the plan */
	memset(&a, 0, sizeof(a));
	feed(&a, 2 * PN__ARMS_FIRST, 60000, 56000);
	alone = feed(&a, 800, 60000, 56000);
	assert_int_equal(alone, 800 / PN__ARMS_EXPLORE);
}

static void alone_where_the_plan_is_worse(void **state)
{
	(void)state;
	struct pn__arms a;
	memset(&a, 0, sizeof(a));
	feed(&a, 2 * PN__ARMS_FIRST, 150000, 60000);
	int alone = feed(&a, 800, 150000, 60000);
	assert_int_equal(alone, 800 - 800 / PN__ARMS_EXPLORE);
	assert_true(a.alone);
	/* the host changes: the plan gets better; its exploring waits bring it back */
	feed(&a, 20000, 10000, 60000);
	assert_false(a.alone);
	alone = feed(&a, 800, 10000, 60000);
	assert_int_equal(alone, 800 / PN__ARMS_EXPLORE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(alternates_first),
	        cmocka_unit_test(plan_kept_where_better_or_close),
	        cmocka_unit_test(alone_where_the_plan_is_worse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
