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
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/wait.h>
#include "internal.h"

/* What is waited on, and how: wait(w, timeout, mask) returns the ready count, 0 at the
 * timeout, or -errno; mask NULL keeps the thread's. */
struct waiter {
	int (*wait)(struct waiter *w, const struct timespec *timeout, const sigset_t *mask);
	bool epoll;
	struct pollfd *fds;
	nfds_t n;
	int epfd, max;
	struct epoll_event *ev;
};

static int sys_result(long r)
{
	return r < 0 ? -errno : (int)r;
}

static int wait_poll(struct waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	return sys_result(syscall(SYS_ppoll, w->fds, w->n, ts, mask, mask ? _NSIG / 8 : 0));
}

/* Set once the kernel says it has no epoll_pwait2 (before 5.11): ms timeouts then. */
static atomic_bool no_pwait2;

static int wait_epoll(struct waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		long r = syscall(SYS_epoll_pwait2, w->epfd, w->ev, w->max, ts, mask,
		                 mask ? _NSIG / 8 : 0);
		if (r >= 0 || errno != ENOSYS)
			return sys_result(r);
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	/* whole ms, rounded down: the spin covers the rest, never the kernel past it */
	int ms = (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000);
	return sys_result(
	        syscall(SYS_epoll_pwait, w->epfd, w->ev, w->max, ms, mask, mask ? _NSIG / 8 : 0));
}

static int probe_wait(void *ctx)
{
	struct waiter *w = ctx;
	struct timespec one = {0, 1};
	return w->wait(w, &one, NULL);
}

/* The spin's look at the fds, with signals blocked, then at the signals the caller's mask
 * allows: ppoll does both at once (a signal without a handler restarts it); epoll_pwait
 * would say EINTR for any pending signal, handled or not, so epoll looks at the fds alone
 * and the signals are let in by sleep.c's ppoll. */
static int spin_check(void *ctx, const sigset_t *mask)
{
	struct waiter *w = ctx;
	struct timespec zero = {0, 0};
	if (!w->epoll)
		return w->wait(w, &zero, mask);
	int r = w->wait(w, &zero, NULL);
	return r ? r : pn__sleep_signals(mask);
}

static int wait_until(struct waiter *w, int64_t deadline, int64_t precision)
{
	int e = errno, r;
	struct timespec zero = {0, 0};
	struct pn__probe probe = {probe_wait, w};
	struct pn__sleep_plan p;
	pn__sleep_plan(&p, CLOCK_MONOTONIC, deadline, precision, PN__SLEEP_EINTR, &probe);
	if (p.stop) {
		r = p.stop;
	} else if (p.past) {
		r = w->wait(w, &zero, NULL);
	} else {
		r = 0;
		if (p.kernel) {
			int64_t left = p.target - pn_now();
			struct timespec ts = {left > 0 ? left / PN_NSEC : 0,
			                      left > 0 ? left % PN_NSEC : 0};
			r = w->wait(w, &ts, NULL);
			if (r != 0)
				pn__sleep_cancel(&p);
			else
				pn__sleep_woke(&p, true);
		}
		if (r == 0)
			r = pn__sleep_spin(&p, spin_check, w, 0);
	}
	errno = e;
	return r;
}

PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct waiter w = {.wait = wait_poll, .fds = fds, .n = n};
	return wait_until(&w, deadline, precision);
}

PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision)
{
	if (precision < 0 || max <= 0)
		return -EINVAL;
	struct waiter w = {.wait = wait_epoll, .epoll = true, .epfd = epfd, .max = max, .ev = ev};
	return wait_until(&w, deadline, precision);
}
