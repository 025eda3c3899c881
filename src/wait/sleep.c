/* SPDX-License-Identifier: MIT */
/*
 * sleep.c: pn_sleep_until, a sleep that is never early and late by at most a precision (the
 * engine's wait with a sleep for its kernel part), and the thread's statistics.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "wait/wait.h"
#include "kernel.h"
#include "wait/state.h"

PN_API int pn_sleep_until(int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct pn__plan p;
	int r = pn__wait_sleep(&p, deadline, precision, __builtin_return_address(0));
	pn__spin_tail(&p); /* CLOCK_MONOTONIC never steps back: no p->away to wait out */
	return r;
}

PN_API int pn_sleep_for(int64_t ns, int64_t precision)
{
	if (ns < 0 || precision < 0)
		return -EINVAL;
	int64_t now = pn_now(), deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	struct pn__plan p;
	int r = pn__wait_sleep(&p, deadline, precision, __builtin_return_address(0));
	pn__spin_tail(&p); /* CLOCK_MONOTONIC never steps back: no p->away to wait out */
	return r;
}

PN_API int pn_sleep_stats(struct pn_sleep_stats *st)
{
	if (!st)
		return -EINVAL;
	struct pn__state *t = pn__state_get();
	if (t) {
		pn__state_settle(t);
		pn__state_stats(t, st);
	} else {
		*st = (struct pn_sleep_stats){.budget_ppm = pn_sleep_budget(),
		                              .late_p50_ns = -1,
		                              .late_p99_ns = -1,
		                              .late_p999_ns = -1,
		                              .late_max_ns = -1};
	}
	st->slack_ns = pn__slack_known() ? pn__slack_known() : -1;
	return 0;
}

PN_API void pn_sleep_stats_reset(void)
{
	struct pn__state *t = pn__state_get();
	if (!t)
		return;
	pn__state_settle(t);
	struct pn_sleep_stats *s = &t->st;
	s->sleeps = s->past = s->early = s->late = s->kernel_only = s->slack_changes = 0;
	s->probes = s->late_budget = s->shared_waits = 0;
	s->slept_ns = s->spun_ns = s->late_max_ns = 0;
	memset(t->late, 0, sizeof(t->late));
	t->first = pn_now();
}
