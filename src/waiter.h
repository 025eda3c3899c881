/* SPDX-License-Identifier: MIT */
/*
 * waiter.h: waits on fds for pn__wait_until (wait.c), and the poll and epoll waits behind
 * one small table of system calls (waiter.c): raw system calls for the library, the real
 * libc functions for the preload shim, which must not reach its own. Internal.
 */
#ifndef PUNCTUAL_WAITER_H
#define PUNCTUAL_WAITER_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "sleep_plan.h"

/* A wait on fds. wait(w, timeout, mask) waits at most timeout (never NULL) with mask in
 * force (NULL: the thread's) and returns the ready count, 0 at the timeout, or -errno.
 * mask: the mask the call named (ppoll's, epoll_pwait's; NULL: the thread's). eintr_any:
 * the wait says EINTR for a pending signal without a handler too (epoll), so the spin lets
 * signals in apart. look (optional): the spin's check in one system call, a zero-timeout
 * look at the fds and at the signals mask allows that says EINTR only for a handler, as
 * ppoll does; its result is the wait's. Embed it as the first member. */
struct pn__waiter {
	int (*wait)(struct pn__waiter *w, const struct timespec *timeout, const sigset_t *mask);
	int (*look)(struct pn__waiter *w, const sigset_t *mask);
	const sigset_t *mask;
	bool eintr_any;
	const void *ret[2]; /* where the caller's call returns, and one level in (the warm) */
};

/* How a waiter reaches the kernel: each returns the ready count, 0, or -errno (errno may
 * change). epoll_pwait2 may be NULL (libc has none). */
struct pn__waiter_sys {
	int (*ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);
	int (*epoll_pwait2)(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
	                    const sigset_t *mask);
	int (*epoll_pwait)(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask);
};

/* The library's: raw system calls. */
extern const struct pn__waiter_sys pn__waiter_raw;

struct pn__poll_waiter {
	struct pn__waiter w;
	const struct pn__waiter_sys *sys;
	struct pollfd *fds;
	nfds_t n;
};

struct pn__epoll_waiter {
	struct pn__waiter w;
	const struct pn__waiter_sys *sys;
	int epfd, max;
	struct epoll_event *ev;
	bool reached; /* an epoll wait of this call succeeded: epfd is an epoll set */
};

/* A wait on fds[n] with ppoll, under mask (NULL: the thread's). */
void pn__poll_waiter_init(struct pn__poll_waiter *s, const struct pn__waiter_sys *sys,
                          struct pollfd *fds, nfds_t n, const sigset_t *mask);
/* A wait on the epoll set epfd for at most max events, under mask. Its timeout is
 * epoll_pwait2's, in ns, until that call fails for a reason of its own (ENOSYS before Linux
 * 5.11, EPERM or another error from a seccomp filter: an error epoll_pwait would not give);
 * then epoll_pwait's whole ms, for the rest of the process (the spin covers the rest). Its
 * look is a ppoll of the epoll fd, the events fetched only when it is ready. */
void pn__epoll_waiter_init(struct pn__epoll_waiter *s, const struct pn__waiter_sys *sys, int epfd,
                           struct epoll_event *ev, int max, const sigset_t *mask);

/* The wait until deadline with the precision: the ready count, 0 at a time >= deadline
 * (with PN__SLEEP_TAIL, 0 with plan->tail set before it: the caller spins the rest with
 * pn__sleep_tail), or -errno (-EINTR when a signal handler ran, in any phase). plan: where
 * the sleep plan lives (the shim's, so that a longjmp out of the wait puts the slack
 * back), or NULL (no PN__SLEEP_TAIL then). flags: pn__sleep_plan's. errno is kept. */
int pn__wait_until(struct pn__waiter *w, struct pn__sleep_plan *plan, int64_t deadline,
                   int64_t precision, int flags);

#endif
