/* SPDX-License-Identifier: MIT */
/*
 * kernel.h: the kernel's waits behind one table: the library's raw system calls, which
 * never reach the shim's own functions, or the real libc functions the shim looked up.
 * The system calls the library adds to a caller's wait are the raw table's, and where a
 * filter denies one the process does without it. Internal.
 */
#ifndef PUNCTUAL_KERNEL_H
#define PUNCTUAL_KERNEL_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

/* Each returns 0 (the timeout), a ready count, or -errno (errno may change). */
struct pn__kernel {
	/* clock_nanosleep(clk, TIMER_ABSTIME, target): 0 at the target, -EINTR for a handler */
	int (*sleep_abs)(clockid_t clk, int64_t target);
	int (*ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);
	/* NULL where libc has none */
	int (*epoll_pwait2)(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
	                    const sigset_t *mask);
	int (*epoll_pwait)(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask);
	int (*pselect)(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
	               const sigset_t *mask);
};

extern const struct pn__kernel pn__kernel_raw;

/* The shortest kernel wait for the plan's probes (a 1 ns ppoll: it reports a handler that
 * ran during the wakeup, where clock_nanosleep returns 0): 0, -EINTR, or -EPERM once ppoll
 * is denied. errno is kept. */
int pn__kernel_probe(void);
/* Lets in, for a moment, the signals mask allows: -EINTR if a handler ran, else 0. errno
 * is kept. */
int pn__kernel_signals(const sigset_t *mask);
/* Whether an error says the call is not allowed here: a filter's EPERM or EACCES, ENOSYS. */
static inline bool pn__kernel_denial(int err)
{
	return err == EPERM || err == EACCES || err == ENOSYS;
}
/* A system call the library adds was denied: the process does without it, and the shim
 * leaves every call to the real function. Set once, never cleared. */
extern _Atomic bool pn__kernel_off;
static inline void pn__kernel_deny(void)
{
	atomic_store_explicit(&pn__kernel_off, true, memory_order_relaxed);
}
static inline bool pn__kernel_denied(void)
{
	return atomic_load_explicit(&pn__kernel_off, memory_order_relaxed);
}

#endif
