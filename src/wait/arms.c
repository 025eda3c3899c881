/* SPDX-License-Identifier: MIT */
/*
 * arms.c: the plan's way or the program's own, for a shared thread without real time
 * (arms.h). The two alternate until each has PN__ARMS_FIRST waits; then the one with the
 * lower p99 takes all but one in PN__ARMS_EXPLORE, which goes to the other so that a change
 * of the host is seen. The plan is given up only when it is worse beyond 10% +
 * PN__ARMS_SLACK_NS: the two ways' p99s from a few hundred waits each differ that much
 * by chance alone.
 */
#include "wait/arms.h"

int64_t pn__arms_p99(const struct pn__arms *a, int arm)
{
	return pn__decay_hist_quantile(&a->late[arm], 0.99, 2);
}

int pn__arms_pick(struct pn__arms *a)
{
	uint32_t t = a->turn++;
	if (a->late[PN__ARM_PLAN].n < PN__ARMS_FIRST || a->late[PN__ARM_ALONE].n < PN__ARMS_FIRST)
		return (t & 1) ? PN__ARM_ALONE : PN__ARM_PLAN;
	int64_t plan = pn__arms_p99(a, PN__ARM_PLAN), alone = pn__arms_p99(a, PN__ARM_ALONE);
	if (!a->alone && plan > alone + alone / 10 + PN__ARMS_SLACK_NS)
		a->alone = 1;
	else if (a->alone && plan <= alone)
		a->alone = 0;
	bool explore = t % PN__ARMS_EXPLORE == 0;
	return a->alone != explore ? PN__ARM_ALONE : PN__ARM_PLAN;
}

void pn__arms_learn(struct pn__arms *a, int arm, int64_t late)
{
	pn__decay_hist_add(&a->late[arm], late);
	a->waits[arm]++;
}
