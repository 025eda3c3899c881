/* SPDX-License-Identifier: MIT */
/*
 * sched.c: a precise wait's scheduling, for its kernel part alone (sched.h). On a CPU
 * shared with runnable tasks a SCHED_OTHER wakeup waits for its turn behind them (a
 * slice of theirs, milliseconds); a SCHED_FIFO one runs at once. Held for the wait alone,
 * real time costs the other tasks only the wakeup itself: the thread is SCHED_FIFO while
 * it sleeps, and its own policy again before the call returns, so its own work never runs
 * real-time (no RLIMIT_RTTIME kill, no starvation) and it blocked in between (which resets
 * the RLIMIT_RTTIME count). The policy, priority, nice, flags and slice written back are
 * those read before the wait: a slice the kernel chose is written back at its value, so it
 * no longer follows a later change of the kernel's base slice (debugfs), nothing else. The
 * timer slack, which Linux zeroes for a real-time task and sets to the thread's default
 * when it leaves real time, is put back as it was before the wait.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"
#include "wait/sched.h"

static _Atomic int fifo; /* 0 not tried, 1 permitted, -1 denied: not tried again */

int pn__sched_wait_fifo(void)
{
	return atomic_load_explicit(&fifo, memory_order_relaxed);
}

/* SCHED_FIFO at PN__SCHED_WAIT_PRIO, the thread's flags kept: 0 or -errno. */
static int to_fifo(const struct pn__sched_attr *own)
{
	struct pn__sched_attr a;
	memset(&a, 0, sizeof(a));
	a.policy = SCHED_FIFO;
	a.priority = PN__SCHED_WAIT_PRIO;
	a.flags = own->flags & PN__SCHED_RESET_ON_FORK;
	a.util_min = own->util_min;
	a.util_max = own->util_max;
	return pn__sched_set(&a);
}

void pn__sched_wait_begin(struct pn__sched_wait *w, struct pn__rt *r, struct pn__slice *s,
                          bool shared, int64_t slack)
{
	pn__sched_wait_end(w); /* one a jump out of a wait left (a library caller's handler) */
	w->slack = slack;
	s->set_ns = 0;
	int64_t slice = pn__slice_wanted(s);
	bool try_fifo = shared && !r->fifo_off && pn__sched_wait_fifo() >= 0;
	if (r->prio || (!try_fifo && !slice))
		return; /* nothing to set: not even a sched_getattr */
	int e = errno;
	if (pn__sched_get(&w->own) < 0 || w->own.policy != SCHED_OTHER)
		goto out;
	w->own.flags &= PN__SCHED_RESET_ON_FORK; /* no utilization clamp written back */
	if (try_fifo) {
		int r1 = to_fifo(&w->own);
		if (r1 == 0) {
			atomic_store_explicit(&fifo, 1, memory_order_relaxed);
			w->under = PN__SCHED_FIFO;
			r->wait_fifo++;
			goto out;
		}
		if (r1 == -EPERM || r1 == -EINVAL || r1 == -ENOSYS)
			atomic_store_explicit(&fifo, -1, memory_order_relaxed);
	}
	if (slice && pn__slice_wait(s, &w->own, slice) == 0)
		w->under = PN__SCHED_SLICE;
out:
	errno = e;
}

void pn__sched_wait_end(struct pn__sched_wait *w)
{
	if (!w->under)
		return;
	int e = errno;
	pn__sched_set(&w->own);
	if (w->under == PN__SCHED_FIFO && w->slack > 0)
		pn__slack_put(w->slack); /* Linux put the default back: the plan's again */
	w->under = 0;
	errno = e;
}
