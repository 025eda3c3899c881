/* SPDX-License-Identifier: MIT */
/*
 * rt.c: opt-in real time for a thread that waits precisely. SCHED_FIFO wins every wakeup
 * against SCHED_OTHER tasks, so it is never the default. It comes with SCHED_RESET_ON_FORK
 * and a bounded RLIMIT_RTTIME (a runaway thread gets SIGXCPU instead of holding its CPU).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <punctual/sleep.h>
#include "internal.h"
#include "sched/rt.h"

static int default_prio;

int pn__rt_parse(const char *s, int *prio)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 99)
		return -EINVAL;
	*prio = (int)v;
	return 0;
}

__attribute__((constructor)) static void rt_init(void)
{
	int v;
	const char *env = getenv("PUNCTUAL_RT");
	if (env && pn__rt_parse(env, &v) == 0)
		default_prio = v;
}

int pn__rt_limit(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_RTTIME, &r) != 0)
		return -errno;
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur <= PN__RT_RTTIME_SOFT_US)
		return 0;
	struct rlimit n = {PN__RT_RTTIME_SOFT_US, PN__RT_RTTIME_HARD_US};
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < n.rlim_max)
		n.rlim_max = r.rlim_max;
	if (n.rlim_cur > n.rlim_max)
		n.rlim_cur = n.rlim_max;
	return setrlimit(RLIMIT_RTTIME, &n) ? -errno : 0;
}

/* Puts a back: a SCHED_OTHER thread's slice as the kernel's own (a slice read and written
 * back would stay fixed), with SCHED_RESET_ON_FORK where it may not be cleared. */
static int put_back(struct pn__sched_attr a)
{
	if (a.policy == SCHED_OTHER)
		a.runtime = 0;
	int e = pn__sched_set(&a);
	if (e == -EPERM && !(a.flags & PN__SCHED_RESET_ON_FORK)) {
		a.flags |= PN__SCHED_RESET_ON_FORK;
		e = pn__sched_set(&a);
	}
	return e;
}

int pn__rt_set(struct pn__rt *r, int prio)
{
	if (prio < 0 || prio > 99)
		return -EINVAL;
	if (prio == 0) {
		if (!r->prio)
			return 0;
		int e = put_back(r->orig);
		if (e == 0)
			r->prio = 0;
		return e;
	}
	struct pn__sched_attr a, was;
	int e = pn__sched_get(&was);
	if (e < 0)
		return e;
	memset(&a, 0, sizeof(a));
	a.policy = SCHED_FIFO;
	a.priority = (uint32_t)prio;
	a.flags = PN__SCHED_RESET_ON_FORK;
	if ((e = pn__sched_set(&a)) < 0)
		return e;
	if ((e = pn__rt_limit()) < 0) { /* no bound, no real time */
		put_back(was);
		return e;
	}
	if (!r->prio)
		r->orig = was;
	r->prio = prio;
	return 0;
}

void pn__rt_apply(struct pn__rt *r)
{
	if (PN_LIKELY(!default_prio) || r->tried)
		return;
	r->tried = true;
	pn__rt_set(r, default_prio);
}
