/* SPDX-License-Identifier: MIT */
/*
 * kernel.c: the library's table of kernel waits as raw system calls, which never reach the
 * shim's own functions, and the plan's probe and the spin's look at signals.
 */
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "kernel.h"

/* syscall(2) takes longs: an int leaves the register's upper half to chance (clang -O2),
 * so every int is widened; a mask's size is the kernel's (_NSIG / 8), or 0 without one. */
static long sigsetsize(const sigset_t *mask)
{
	return mask ? _NSIG / 8 : 0;
}

static int raw_sleep_abs(clockid_t clk, int64_t target)
{
	struct timespec ts = {target / PN_NSEC, target % PN_NSEC};
	int e = errno;
	int r = syscall(SYS_clock_nanosleep, (long)clk, (long)TIMER_ABSTIME, &ts, NULL) ? -errno
	                                                                                : 0;
	errno = e;
	return r;
}

static int raw_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	return pn__neg_errno(syscall(SYS_ppoll, fds, (unsigned long)n, ts, mask, sigsetsize(mask)));
}

static int raw_epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
                            const sigset_t *mask)
{
	return pn__neg_errno(
	        syscall(SYS_epoll_pwait2, (long)epfd, ev, (long)max, ts, mask, sigsetsize(mask)));
}

static int raw_epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	return pn__neg_errno(syscall(SYS_epoll_pwait, (long)epfd, ev, (long)max, (long)ms, mask,
	                             sigsetsize(mask)));
}

/* pselect6's last argument: the mask and its size, as the kernel takes them */
static int raw_pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                       const sigset_t *mask)
{
	struct {
		const sigset_t *ss;
		size_t len;
	} m = {mask, _NSIG / 8};
	struct timespec t, *tp = NULL;
	if (ts) { /* the kernel writes the time left into it */
		t = *ts;
		tp = &t;
	}
	return pn__neg_errno(syscall(SYS_pselect6, (long)n, r, w, e, tp, mask ? &m : NULL));
}

const struct pn__kernel pn__kernel_raw = {raw_sleep_abs, raw_ppoll, raw_epoll_pwait2,
                                          raw_epoll_pwait, raw_pselect};

_Atomic bool pn__kernel_off;

int pn__kernel_probe(void)
{
	if (PN_UNLIKELY(pn__kernel_denied()))
		return -EPERM;
	struct timespec one = {0, 1};
	int e = errno;
	int r = raw_ppoll(NULL, 0, &one, NULL);
	errno = e;
	if (PN_UNLIKELY(r < 0 && pn__kernel_denial(-r)))
		pn__kernel_deny();
	return r < 0 ? r : 0;
}

int pn__kernel_signals(const sigset_t *mask)
{
	struct timespec zero = {0, 0};
	int e = errno;
	int r = raw_ppoll(NULL, 0, &zero, mask);
	errno = e;
	if (PN_UNLIKELY(r < 0 && pn__kernel_denial(-r)))
		pn__kernel_deny(); /* the spin sees it and gives the rest back */
	return r == -EINTR ? -EINTR : 0;
}
