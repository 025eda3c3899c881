/* SPDX-License-Identifier: MIT */
/*
 * kernel.h: the kernel's waits behind one table (Redis ae's one-backend model): the
 * library's raw system calls (pn__kernel_raw, kernel.c), which never reach the preload
 * shim's own functions, or the real libc functions the shim looked up (shim/real.c). Every
 * wait the engine makes goes through one; the system calls the library adds to a caller's
 * wait (its probes, the spin's look at signals) are the raw table's, and where a filter
 * denies one the process does without it. Internal.
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

/* The library's: raw system calls. */
extern const struct pn__kernel pn__kernel_raw;

/* The shortest kernel wait (a 1 ns ppoll: it reports a handler that ran while the thread
 * was being woken, where clock_nanosleep returns 0), for the plan's probes: 0, -EINTR, or
 * -EPERM once ppoll is denied (never tried again). errno is kept. */
int pn__kernel_probe(void);
/* Lets in, for a moment, the signals mask allows (a ppoll with a zero timeout): -EINTR if
 * a handler ran (the kernel restarts the call for a signal without one), else 0. A denial
 * marks the process (pn__kernel_denied). errno is kept. */
int pn__kernel_signals(const sigset_t *mask);
/* Whether a system call's error says it is not allowed here rather than anything of its
 * arguments: a seccomp filter's EPERM or EACCES, or ENOSYS. */
static inline bool pn__kernel_denial(int err)
{
	return err == EPERM || err == EACCES || err == ENOSYS;
}
/* A system call the library adds to a caller's wait was denied: from then on the process
 * does without it, and the preload shim leaves every call to the real function. Set once,
 * never cleared. One flag, read inline: the shim reaches the library through few symbols. */
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
