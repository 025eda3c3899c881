/* SPDX-License-Identifier: MIT */
/*
 * wait.c: pn_poll_until and pn_epoll_wait_until (punctual/wait.h) on sleep.c's steps. The
 * plan's latency probes are 1 ns waits on the caller's fds, the kernel part is one wait
 * with the plan's timeout, and the spin is sleep.c's with a zero-timeout wait as its
 * check, run with the caller's signal mask: readiness and signal handlers end every
 * phase at once. The waits are raw system calls (ppoll, epoll_pwait2, epoll_pwait), so
 * that the library never reaches the preload shim's own poll and epoll functions.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/wait.h>
#include "internal.h"

static int sys_result(long r)
{
	return r < 0 ? -errno : (int)r;
}

static int wait_poll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__poll_waiter *f = (struct pn__poll_waiter *)w;
	return sys_result(syscall(SYS_ppoll, f->fds, f->n, ts, mask, mask ? _NSIG / 8 : 0));
}

/* Set once epoll_pwait2 fails with an error epoll_pwait would not give (see
 * pn__pwait2_denied): ms timeouts from then on. */
static atomic_bool no_pwait2;

static int wait_epoll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__epoll_waiter *e = (struct pn__epoll_waiter *)w;
	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		long r = syscall(SYS_epoll_pwait2, e->epfd, e->ev, e->max, ts, mask,
		                 mask ? _NSIG / 8 : 0);
		if (r >= 0 || !pn__pwait2_denied(errno))
			return sys_result(r);
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	return sys_result(syscall(SYS_epoll_pwait, e->epfd, e->ev, e->max, pn__ts_ms_floor(ts),
	                          mask, mask ? _NSIG / 8 : 0));
}

/* The spin's look at an epoll set: a ppoll of the epoll fd (one system call that tells a
 * handled signal from others), the events fetched only when it is ready; none left
 * (another thread took them) is not a result. */
static int look_epoll(struct pn__waiter *w, const sigset_t *mask)
{
	struct pn__epoll_waiter *e = (struct pn__epoll_waiter *)w;
	struct pollfd fd = {e->epfd, POLLIN, 0};
	struct timespec zero = {0, 0};
	int r = sys_result(syscall(SYS_ppoll, &fd, 1, &zero, mask, _NSIG / 8));
	return r > 0 ? w->wait(w, &zero, NULL) : r;
}

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
			struct timespec ts = {left > 0 ? left / PN_NSEC : 0,
			                      left > 0 ? left % PN_NSEC : 0};
			r = w->wait(w, &ts, w->mask);
			if (r != 0)
				pn__sleep_cancel(p);
			else
				pn__sleep_woke(p, true);
		}
		/* the real call's last look: the spin's last check, timed to end at the deadline,
		 * or, when the spin could not take it (a stall at the end, no spin at all), one
		 * now (signals are let in by then) */
		if (r == 0 && (r = pn__sleep_spin(p, spin_check, w, 0)) == 0 && !p->looked)
			r = w->look ? w->look(w, w->mask) : w->wait(w, &zero, w->mask);
	}
	*errp = e;
	return r;
}

PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct pn__poll_waiter f = {
	        {.wait = wait_poll, .ret = {__builtin_return_address(0)}}, fds, n};
	struct pn__sleep_plan p = {.restore = -1};
	int r = pn__wait_until(&f.w, &p, deadline, precision, PN__SLEEP_TAIL);
	pn__sleep_tail(&p); /* the last microseconds here: one return from the deadline */
	return r;
}

PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision)
{
	if (precision < 0 || max <= 0)
		return -EINVAL;
	struct pn__epoll_waiter w = {{.wait = wait_epoll,
	                              .look = look_epoll,
	                              .eintr_any = true,
	                              .ret = {__builtin_return_address(0)}},
	                             epfd,
	                             max,
	                             ev};
	struct pn__sleep_plan p = {.restore = -1};
	int r = pn__wait_until(&w.w, &p, deadline, precision, PN__SLEEP_TAIL);
	pn__sleep_tail(&p);
	return r;
}
