/* SPDX-License-Identifier: MIT */
/*
 * wait.c: pn__wait_until, a wait on fds (waiter.h) in the sleep plan's steps, and on it
 * pn_poll_until and pn_epoll_wait_until (punctual/wait.h). The plan's latency probes are
 * 1 ns waits on the caller's fds, the kernel part is one wait with the plan's timeout, and
 * the spin's check is a zero-timeout wait run with the caller's signal mask: readiness and
 * signal handlers end every phase at once. The library's waits are raw system calls
 * (pn__waiter_raw), so that it never reaches the preload shim's own poll and epoll.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/wait.h>
#include "sleep_plan.h"
#include "waiter.h"

static int probe_wait(void *ctx)
{
	struct pn__waiter *w = ctx;
	struct timespec one = {0, 1};
	return w->wait(w, &one, w->mask);
}

/* The spin's look at the fds with signals blocked, and at the signals the wait's mask
 * allows (the caller's, or the one the call names): a wait that restarts for a signal
 * without a handler (ppoll) does both at once; one that would say EINTR for any pending
 * signal, handled or not (epoll_pwait), looks at the fds alone, and sleep.c's ppoll lets
 * the signals in. */
static int spin_check(void *ctx, const sigset_t *thread_mask)
{
	struct pn__waiter *w = ctx;
	struct timespec zero = {0, 0};
	const sigset_t *mask = w->mask ? w->mask : thread_mask;
	if (w->look)
		return w->look(w, mask);
	if (!w->eintr_any)
		return w->wait(w, &zero, mask);
	int r = w->wait(w, &zero, NULL);
	return r ? r : pn__sleep_signals(mask);
}

/* The rest of a wait that the spin gave back (p->away): the waiter's own kernel wait, as
 * the program's call would have made it, until the deadline (a timeout rounded down to
 * the ms ends early, and is made again). */
static int wait_rest(struct pn__waiter *w, int64_t deadline)
{
	for (int64_t left; (left = deadline - pn_now()) > 0;) {
		struct timespec ts = pn__ns_ts(left);
		int r = w->wait(w, &ts, w->mask);
		if (r != 0)
			return r;
	}
	return 0;
}

int pn__wait_until(struct pn__waiter *w, struct pn__sleep_plan *plan, int64_t deadline,
                   int64_t precision, int flags)
{
	int *errp = &errno, e = *errp, r; /* found now, not after the deadline */
	struct timespec zero = {0, 0};
	struct pn__probe probe = {probe_wait, w};
	struct pn__sleep_plan own, *p = plan ? plan : &own;
	if (!plan) /* nobody would spin the tail of own */
		flags &= ~PN__SLEEP_TAIL;
	pn__sleep_plan(p, CLOCK_MONOTONIC, deadline, precision, flags | PN__SLEEP_EINTR, &probe);
	p->warm[0] = w->ret[0];
	p->warm[1] = w->ret[1];
	p->warm[2] = __builtin_return_address(0);
	if (p->stop) {
		r = p->stop;
	} else if (p->past) {
		r = w->wait(w, &zero, w->mask);
	} else {
		r = 0;
		if (p->kernel) {
			int64_t left = p->target - pn_now();
			struct timespec ts = pn__ns_ts(left > 0 ? left : 0);
			r = w->wait(w, &ts, w->mask);
			if (r != 0)
				pn__sleep_cancel(p);
			else
				pn__sleep_woke(p, true);
		}
		/* the real call's last look: the spin's last check, timed to end at the deadline,
		 * or, when the spin could not take it (a stall at the end, no spin at all), one
		 * now (signals are let in by then) */
		if (r == 0 && (r = pn__sleep_spin(p, spin_check, w, 0)) == 0 && p->away)
			r = wait_rest(w, deadline);
		else if (r == 0 && !p->looked)
			r = w->look ? w->look(w, w->mask) : w->wait(w, &zero, w->mask);
	}
	*errp = e;
	return r;
}

PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct pn__poll_waiter f;
	pn__poll_waiter_init(&f, &pn__waiter_raw, fds, n, NULL);
	f.w.ret[0] = __builtin_return_address(0);
	struct pn__sleep_plan p = PN__SLEEP_PLAN_INIT;
	int r = pn__wait_until(&f.w, &p, deadline, precision, PN__SLEEP_TAIL);
	pn__sleep_tail(&p); /* the last microseconds here: one return from the deadline */
	return r;
}

PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision)
{
	if (precision < 0 || max <= 0)
		return -EINVAL;
	struct pn__epoll_waiter w;
	pn__epoll_waiter_init(&w, &pn__waiter_raw, epfd, ev, max, NULL);
	w.w.ret[0] = __builtin_return_address(0);
	struct pn__sleep_plan p = PN__SLEEP_PLAN_INIT;
	int r = pn__wait_until(&w.w, &p, deadline, precision, PN__SLEEP_TAIL);
	pn__sleep_tail(&p);
	return r;
}
