/* SPDX-License-Identifier: MIT */
/*
 * waiter.h: what a wait waits on. The engine (wait.h) drives a waiter; waiter.c gives the
 * sleep, poll and epoll waiters their kernel parts. Internal.
 */
#ifndef PUNCTUAL_WAIT_WAITER_H
#define PUNCTUAL_WAIT_WAITER_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "kernel.h"

enum pn__wait_kind { PN__WAIT_SLEEP, PN__WAIT_POLL, PN__WAIT_EPOLL, PN__WAIT_OWN };

/* A waiter: its kernel part is, by kind, k's sleep_abs, ppoll or epoll, or its own
 * (PN__WAIT_OWN, the waiter embedded first in one's own struct):
 * - wait(w, timeout, mask): a wait on fds with mask in force (NULL: the thread's): the
 *   ready count, 0 at the timeout, or -errno.
 * - until(w, clk, target): a wait on clk until target: 0 at the target, > 0 the waiter's
 *   event, or -errno (-EINTR: a handler ran).
 * release and reacquire (optional): what it lets go of while it spins (a cond wait's mutex):
 * 0 or -errno. */
struct pn__waiter {
	enum pn__wait_kind kind;
	const struct pn__kernel *k; /* PN__WAIT_SLEEP, _POLL, _EPOLL */
	struct pollfd *fds;         /* PN__WAIT_POLL */
	nfds_t n;
	int epfd, max; /* PN__WAIT_EPOLL */
	struct epoll_event *ev;
	bool reached; /* PN__WAIT_EPOLL: a wait of this call on epfd succeeded */
	int (*wait)(struct pn__waiter *w, const struct timespec *timeout, const sigset_t *mask);
	int (*until)(struct pn__waiter *w, clockid_t clk, int64_t target);
	/* the spin's one-call look at the fds and the signals mask allows, EINTR only for a
	 * handler, as ppoll (NULL: a zero-timeout wait) */
	int (*look)(struct pn__waiter *w, const sigset_t *mask);
	int (*release)(struct pn__waiter *w);
	int (*reacquire)(struct pn__waiter *w);
	const sigset_t *mask; /* the mask the call named (NULL: none) */
	/* the thread's count of handler calls inside the shim (NULL: none): a kernel wait
	 * during which it grew is not learned from */
	const unsigned *nested;
	int64_t sigcheck;   /* until: the spin lets signals in this often (0: not blocked) */
	bool eintr_any;     /* wait says EINTR for a pending signal without a handler too */
	bool resume;        /* until: resumed after EINTR (a library sleep never fails) */
	bool past_once;     /* until: a past deadline still waits once (a mutex cycled) */
	bool kernel_first;  /* until: called even when the plan only spins */
	bool rounded;       /* the call's timeout was in whole ms */
	const void *ret[2]; /* where the caller's call returns, and one level in */
};

/* Gives w, a PN__WAIT_SLEEP, _POLL or _EPOLL waiter, the kernel part of its kind. */
void pn__waiter_bind(struct pn__waiter *w);

#endif
