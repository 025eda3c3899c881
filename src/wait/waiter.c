/* SPDX-License-Identifier: MIT */
/*
 * waiter.c: the kernel parts of the sleep, poll and epoll waiters, each through its
 * kernel table.
 */
#include <errno.h>
#include <stdatomic.h>

#include "internal.h"
#include "wait/waiter.h"

static int wait_poll(struct pn__waiter *s, const struct timespec *ts, const sigset_t *mask)
{
	return s->k->ppoll(s->fds, s->n, ts, mask);
}

/* Set once epoll_pwait2 failed for a reason of its own: epoll_pwait from then on. */
static atomic_bool no_pwait2;

/* Whether epoll_pwait2's error is its own (EBADF, EFAULT, EINTR, EINVAL are the call's). */
static bool pwait2_denied(int err)
{
	return err != EBADF && err != EFAULT && err != EINTR && err != EINVAL;
}

static int wait_epoll(struct pn__waiter *s, const struct timespec *ts, const sigset_t *mask)
{
	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		int r = s->k->epoll_pwait2 ? s->k->epoll_pwait2(s->epfd, s->ev, s->max, ts, mask)
		                           : -ENOSYS;
		s->reached |= r >= 0;
		if (r >= 0 || !pwait2_denied(-r))
			return r;
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	int r = s->k->epoll_pwait(s->epfd, s->ev, s->max, pn__ts_ms_floor(ts), mask);
	s->reached |= r >= 0;
	return r;
}

/* A ppoll of the epoll fd, which tells a handled signal from others, then the events
 * (none left is not a result). Before the wait reached epoll, epoll looks first, refusing a
 * non-epoll fd as the real call would; where ppoll is denied, always. */
static int look_epoll(struct pn__waiter *s, const sigset_t *mask)
{
	struct timespec zero = {0, 0};
	if (!s->reached || pn__kernel_denied())
		return wait_epoll(s, &zero, mask);
	struct pollfd fd = {s->epfd, POLLIN, 0};
	int r = s->k->ppoll(&fd, 1, &zero, mask);
	if (PN_UNLIKELY(r < 0 && pn__kernel_denial(-r))) {
		pn__kernel_deny();
		return wait_epoll(s, &zero, mask);
	}
	return r > 0 ? wait_epoll(s, &zero, NULL) : r;
}

static int sleep_until(struct pn__waiter *w, clockid_t clk, int64_t target)
{
	return w->k->sleep_abs(clk, target);
}

void pn__waiter_bind(struct pn__waiter *w)
{
	switch (w->kind) {
	case PN__WAIT_SLEEP:
		w->until = sleep_until;
		break;
	case PN__WAIT_POLL:
		w->wait = wait_poll;
		break;
	case PN__WAIT_EPOLL:
		w->wait = wait_epoll;
		w->look = look_epoll;
		w->eintr_any = true;
		break;
	case PN__WAIT_OWN:
		break;
	}
}
