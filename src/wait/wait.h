/* SPDX-License-Identifier: MIT */
/*
 * wait.h: the one wait engine (wait.c). Every precise wait of the library and the
 * preload shim is pn__wait: plan -> kernel part -> woke or cancel -> spin -> (the caller's
 * tail). What varies is the waiter: how it waits in the kernel (a sleep, a wait on fds, a
 * cond wait), how its spin looks at what it waits for, what it must let go of while it
 * spins. Internal.
 */
#ifndef PUNCTUAL_WAIT_WAIT_H
#define PUNCTUAL_WAIT_WAIT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "kernel.h"
#include "wait/spin.h"
#include "wait/why.h"

/* What a waiter waits for in the kernel (its kind): a sleep, fds (poll, epoll), or its own
 * functions. */
enum pn__wait_kind { PN__WAIT_SLEEP, PN__WAIT_POLL, PN__WAIT_EPOLL, PN__WAIT_OWN };

/* A waiter. Its kernel part is, by kind, the kernel table k's sleep_abs, ppoll or epoll
 * (waiter.c binds them), or its own (PN__WAIT_OWN: embed the waiter as the first member of
 * a struct of one's own), one of:
 * - wait(w, timeout, mask): a wait on fds, at most timeout (relative, never NULL) with mask
 *   in force (NULL: the thread's): the ready count, 0 at the timeout, or -errno. Its
 *   probes are 1 ns waits; its spin checks the fds (look, else a zero-timeout wait) and
 *   the signals mask allows at once; a past deadline still looks once.
 * - until(w, clk, target): a wait in the kernel on clk until target (absolute): 0 at the
 *   target, > 0 the waiter's event (a cond signalled), or -errno (-EINTR: a handler ran).
 *   Its probes are the library's; its spin lets signals in every sigcheck ns (0: a plain
 *   spin, signals as they come).
 * release and reacquire (optional): what the waiter lets go of while it spins and takes
 * back after (a cond wait's mutex): 0 or -errno (the wait's result then). */
struct pn__waiter {
	enum pn__wait_kind kind;
	const struct pn__kernel *k; /* PN__WAIT_SLEEP, _POLL, _EPOLL */
	struct pollfd *fds;         /* PN__WAIT_POLL */
	nfds_t n;
	int epfd, max; /* PN__WAIT_EPOLL */
	struct epoll_event *ev;
	bool reached; /* PN__WAIT_EPOLL: a wait of this call on epfd succeeded (an epoll set) */
	int (*wait)(struct pn__waiter *w, const struct timespec *timeout, const sigset_t *mask);
	int (*until)(struct pn__waiter *w, clockid_t clk, int64_t target);
	/* the spin's check in one system call for a wait on fds: a zero-timeout look at the
	 * fds and at the signals mask allows that says EINTR only for a handler, as ppoll
	 * does; its result is the wait's (NULL: a zero-timeout wait) */
	int (*look)(struct pn__waiter *w, const sigset_t *mask);
	int (*release)(struct pn__waiter *w);
	int (*reacquire)(struct pn__waiter *w);
	const sigset_t *mask; /* the mask the call named (ppoll's, epoll_pwait's; NULL: none) */
	/* the thread's count of calls a signal handler made inside the shim (NULL: none): a
	 * kernel wait during which it grew was delayed by a handler and is not learned from */
	const unsigned *nested;
	int64_t sigcheck;   /* until: the spin lets signals in this often (0: not blocked) */
	bool eintr_any;     /* wait says EINTR for a pending signal without a handler too */
	bool resume;        /* until: resumed after EINTR (a library sleep, which never fails) */
	bool past_once;     /* until: a past deadline still waits once (a mutex cycled) */
	bool kernel_first;  /* until: called even when the plan only spins (to its start) */
	bool rounded;       /* the call's timeout was in whole ms (PN__PLAN_ROUNDED) */
	const void *ret[2]; /* where the caller's call returns, and one level in (the warm) */
};

/* waiter.c: sets the functions of a waiter of kind SLEEP, POLL or EPOLL. */
void pn__waiter_bind(struct pn__waiter *w);

/* The wait until deadline on clk (a wait on fds: CLOCK_MONOTONIC) with the precision: 0 at
 * a time >= deadline (with PN__PLAN_TAIL, 0 with p->tail set before it: the caller spins
 * the rest with pn__wait_tail), the waiter's event (> 0), or -errno (-EINTR when a signal
 * handler ran, in any phase, unless the waiter resumes). p: where the plan lives (the
 * shim's, so that a longjmp out of the wait puts the slack back). flags: pn__plan_make's.
 * errno is kept. */
int pn__wait(struct pn__waiter *w, struct pn__plan *p, clockid_t clk, int64_t deadline,
             int64_t precision, int flags);
/* The library's sleep (pn_sleep_until) on CLOCK_MONOTONIC through the raw kernel table,
 * never failing (it resumes after a handler, spins where the kernel part is denied): 0,
 * with p->tail for the caller to spin to the deadline in its own frame (pn__spin_tail: one
 * return from the deadline to the program). p: the caller's, which the plan fills (nothing
 * jumps out of a library sleep). ret: where the caller's call returns (the spin's warm). */
int pn__wait_sleep(struct pn__plan *p, int64_t deadline, int64_t precision, const void *ret);
/* The lend of real time (sched.h) as the shim drives it: PN__LEND_SIGNAL names the bound's
 * signal (arg: the number) and lets lends outlast their waits; PN__LEND_END ends the calling
 * thread's lend (fork, exec, a call about its own scheduling), PN__LEND_HANDLER too and
 * counts a handler of the program's; PN__LEND_BOUND is the bound's signal (arg: its value):
 * 1 where it was the thread's timer, else 0. Async-signal-safe. */
enum { PN__LEND_SIGNAL, PN__LEND_END, PN__LEND_HANDLER, PN__LEND_BOUND };
int pn__wait_lend(int op, const void *arg);
/* A wait left without ending (a cancellation or a longjmp unwinds it): puts the thread's
 * own scheduling (sched.h) and slack back. Idempotent. */
void pn__wait_cancel(struct pn__plan *p);
/* A wait a program made as it is (the shim observing: `run --stats` alone), called at call
 * (ns on clk) to deadline on clk, has just returned, by its timeout (timed_out) or not:
 * counted in the thread's statistics (pn__state_observed), its end read first; with why
 * (the counters read before it, PUNCTUAL_EXPLAIN), the cause of a late one too. */
void pn__wait_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why);

/* The caller's tail of a wait that pn__wait left with p->tail (and r 0): the last
 * microseconds spun in the caller's frame; if the clock stepped back meanwhile, the wait
 * is planned again to its deadline (a step can come at any moment: one wait per step).
 * Returns r, or the new wait's result. */
__attribute__((always_inline)) static inline int pn__wait_tail(struct pn__waiter *w,
                                                               struct pn__plan *p, int r)
{
	if (!p->tail)
		return r;
	pn__spin_tail(p);
	if (PN_LIKELY(!p->away))
		return r;
	return pn__wait(w, p, p->clk, p->deadline, p->precision, p->flags & ~PN__PLAN_TAIL);
}

#endif
