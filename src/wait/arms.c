/* SPDX-License-Identifier: MIT */
/*
 * arms.c: the plan's way or the program's own, for a shared thread without real time. The
 * program's own way comes first: "never worse than plain" is the promise, and a few dozen
 * waits cannot show a p99. The plan is tried in runs on a share of the waits and taken
 * when its p99 is lower by 10% + PN__ARMS_SLACK_NS and its p50 no higher, given up once
 * either is higher.
 */
#include <stdbool.h>

#include "wait/arms.h"

int64_t pn__arms_p99(const struct pn__arms *a, int arm)
{
	return pn__decay_hist_quantile(&a->late[arm], 0.99, 2);
}

static int64_t p50(const struct pn__arms *a, int arm)
{
	return pn__decay_hist_quantile(&a->late[arm], 0.5, 2);
}

/* Turn t's way. */
static int way(struct pn__arms *a, uint32_t t)
{
	int chosen = a->alone ? PN__ARM_ALONE : PN__ARM_PLAN;
	if (a->run_left) {
		a->run_left--;
		return !chosen;
	}
	uint32_t every = a->alone ? PN__ARMS_EXPLORE_PLAN : PN__ARMS_EXPLORE;
	if (a->late[PN__ARM_PLAN].n < PN__ARMS_FIRST)
		every = PN__ARMS_EXPLORE; /* the plan's first waits sooner */
	if (t % (every * PN__ARMS_RUN) != 0)
		return chosen;
	/* a run: the choice looked at again, then the other way tried */
	int64_t plan = pn__arms_p99(a, PN__ARM_PLAN), alone = pn__arms_p99(a, PN__ARM_ALONE);
	bool typical = p50(a, PN__ARM_PLAN) <= p50(a, PN__ARM_ALONE);
	if (a->alone && a->late[PN__ARM_PLAN].n >= PN__ARMS_FIRST && typical &&
	    plan + plan / 10 + PN__ARMS_SLACK_NS < alone)
		a->alone = 0;
	else if (!a->alone && (plan > alone || !typical))
		a->alone = 1;
	a->run_left = PN__ARMS_RUN - 1;
	return a->alone ? PN__ARM_PLAN : PN__ARM_ALONE;
}

int pn__arms_pick(struct pn__arms *a)
{
	uint32_t t = a->turn++;
	if (t == 0) {
		a->alone = 1; /* until the plan shows it does better */
		a->last = PN__ARM_ALONE;
	}
	int arm = way(a, t);
	if (arm != a->last)
		a->settle = PN__ARMS_SETTLE;
	else if (a->settle)
		a->settle--;
	a->last = (int8_t)arm;
	return arm;
}

void pn__arms_learn(struct pn__arms *a, int arm, int64_t late)
{
	if (!a->settle)
		pn__decay_hist_add(&a->late[arm], late);
	a->waits[arm]++;
}
