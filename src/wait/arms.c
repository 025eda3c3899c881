/* SPDX-License-Identifier: MIT */
/*
 * arms.c: the plan's way or the program's own, for a shared thread without real time. The
 * program's own way comes first: "never worse than plain" is the promise, and a few dozen
 * waits cannot show a p99. The plan is tried on a share of the waits and taken when its
 * p99 is lower by 10% + PN__ARMS_SLACK_NS, given up once it is higher.
 */
#include <stdbool.h>

#include "wait/arms.h"

int64_t pn__arms_p99(const struct pn__arms *a, int arm)
{
	return pn__decay_hist_quantile(&a->late[arm], 0.99, 2);
}

int pn__arms_pick(struct pn__arms *a)
{
	uint32_t t = a->turn++;
	if (t == 0)
		a->alone = 1; /* until the plan shows it does better */
	uint32_t every = a->alone ? PN__ARMS_EXPLORE_PLAN : PN__ARMS_EXPLORE;
	if (a->late[PN__ARM_PLAN].n < PN__ARMS_FIRST)
		every = PN__ARMS_EXPLORE; /* the plan's first waits sooner */
	if (t % every != 0)
		return a->alone ? PN__ARM_ALONE : PN__ARM_PLAN;
	/* an exploring wait: the choice looked at again, then the other way tried */
	int64_t plan = pn__arms_p99(a, PN__ARM_PLAN), alone = pn__arms_p99(a, PN__ARM_ALONE);
	if (a->alone && a->late[PN__ARM_PLAN].n >= PN__ARMS_FIRST &&
	    plan + plan / 10 + PN__ARMS_SLACK_NS < alone)
		a->alone = 0;
	else if (!a->alone && plan > alone)
		a->alone = 1;
	return a->alone ? PN__ARM_PLAN : PN__ARM_ALONE;
}

void pn__arms_learn(struct pn__arms *a, int arm, int64_t late)
{
	pn__decay_hist_add(&a->late[arm], late);
	a->waits[arm]++;
}
