/* SPDX-License-Identifier: MIT */
/*
 * waiter.c: the poll and epoll waits and looks of waiter.h, once for the library and the
 * shim: each reaches the kernel through its struct pn__waiter_sys (raw system calls here,
 * pn__waiter_raw; the real libc functions in the shim).
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "waiter.h"

static int sys_result(long r)
{
	return r < 0 ? -errno : (int)r;
}

static int raw_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	return sys_result(syscall(SYS_ppoll, fds, n, ts, mask, mask ? _NSIG / 8 : 0));
}

static int raw_epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
                            const sigset_t *mask)
{
	return sys_result(syscall(SYS_epoll_pwait2, epfd, ev, max, ts, mask, mask ? _NSIG / 8 : 0));
}

static int raw_epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	return sys_result(syscall(SYS_epoll_pwait, epfd, ev, max, ms, mask, mask ? _NSIG / 8 : 0));
}

const struct pn__waiter_sys pn__waiter_raw = {raw_ppoll, raw_epoll_pwait2, raw_epoll_pwait};

static int wait_poll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__poll_waiter *s = (struct pn__poll_waiter *)w;
	return s->sys->ppoll(s->fds, s->n, ts, mask);
}

void pn__poll_waiter_init(struct pn__poll_waiter *s, const struct pn__waiter_sys *sys,
                          struct pollfd *fds, nfds_t n, const sigset_t *mask)
{
	*s = (struct pn__poll_waiter){{.wait = wait_poll, .mask = mask}, sys, fds, n};
}

/* Set once epoll_pwait2 failed for a reason of its own: epoll_pwait from then on. */
static atomic_bool no_pwait2;

/* Whether epoll_pwait2's error is its own, one epoll_pwait would not give (EBADF, EFAULT,
 * EINTR and EINVAL are the call's). */
static bool pwait2_denied(int err)
{
	return err != EBADF && err != EFAULT && err != EINTR && err != EINVAL;
}

static int wait_epoll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__epoll_waiter *s = (struct pn__epoll_waiter *)w;
	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		int r = s->sys->epoll_pwait2
		                ? s->sys->epoll_pwait2(s->epfd, s->ev, s->max, ts, mask)
		                : -ENOSYS;
		s->reached |= r >= 0;
		if (r >= 0 || !pwait2_denied(-r))
			return r;
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	int r = s->sys->epoll_pwait(s->epfd, s->ev, s->max, pn__ts_ms_floor(ts), mask);
	s->reached |= r >= 0;
	return r;
}

/* A ppoll of the epoll fd (one system call that tells a handled signal from others), the
 * events fetched only when it is ready; none left (another thread took them) is not a
 * result. A wait that has not yet reached epoll (a spin from the start) looks with epoll
 * itself first: ppoll takes any fd, epoll only an epoll set (EINVAL otherwise, as the
 * real call says at once). Where ppoll is denied, every look is epoll's own (the spin then
 * gives the rest back: pn__helper_denied). */
static int look_epoll(struct pn__waiter *w, const sigset_t *mask)
{
	struct pn__epoll_waiter *s = (struct pn__epoll_waiter *)w;
	struct timespec zero = {0, 0};
	if (!s->reached || pn__helper_denied())
		return wait_epoll(w, &zero, mask);
	struct pollfd fd = {s->epfd, POLLIN, 0};
	int r = s->sys->ppoll(&fd, 1, &zero, mask);
	if (PN_UNLIKELY(r < 0 && pn__denied_errno(-r))) {
		pn__helper_deny();
		return wait_epoll(w, &zero, mask);
	}
	return r > 0 ? wait_epoll(w, &zero, NULL) : r;
}

void pn__epoll_waiter_init(struct pn__epoll_waiter *s, const struct pn__waiter_sys *sys, int epfd,
                           struct epoll_event *ev, int max, const sigset_t *mask)
{
	*s = (struct pn__epoll_waiter){
	        {.wait = wait_epoll, .look = look_epoll, .mask = mask, .eintr_any = true},
	        sys,
	        epfd,
	        max,
	        ev,
	        false};
}
