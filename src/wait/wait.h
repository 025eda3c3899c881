/* SPDX-License-Identifier: MIT */
/*
 * wait.h: the one wait engine. Every precise wait of the library and the shim is
 * pn__wait: plan -> kernel part -> woke or cancel -> spin -> (the caller's tail). What
 * varies is the waiter: how it waits in the kernel, how its spin looks at what it waits
 * for, what it lets go of while it spins. Internal.
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

void pn__waiter_bind(struct pn__waiter *w);

/* The wait until deadline on clk with the precision: 0 at a time >= deadline (with
 * PN__PLAN_TAIL, 0 with p->tail set before it for pn__wait_tail), the waiter's event (> 0),
 * or -errno (-EINTR when a handler ran, unless the waiter resumes). p: the shim's plan, so
 * that a longjmp out puts the slack back. errno is kept. */
int pn__wait(struct pn__waiter *w, struct pn__plan *p, clockid_t clk, int64_t deadline,
             int64_t precision, int flags);
/* pn_sleep_until through the raw kernel table, never failing: 0, with p->tail for the
 * caller to spin to the deadline in its own frame. ret: where the caller's call returns. */
int pn__wait_sleep(struct pn__plan *p, int64_t deadline, int64_t precision, const void *ret);
/* The lend of real time as the shim drives it: PN__LEND_SIGNAL names the bound's signal
 * (arg) and lets lends outlast their waits; PN__LEND_END ends the thread's lend,
 * PN__LEND_HANDLER too and counts a handler of the program's; PN__LEND_BOUND: 1 where
 * signal arg was the thread's bound timer, else 0. Async-signal-safe. */
enum { PN__LEND_SIGNAL, PN__LEND_END, PN__LEND_HANDLER, PN__LEND_BOUND };
int pn__wait_lend(int op, const void *arg);
/* A wait left without ending (cancelled, longjmp): puts the thread's scheduling and slack
 * back. Idempotent. */
void pn__wait_cancel(struct pn__plan *p);
/* A wait the program made as it is (`run --stats` alone), from call to deadline on clk,
 * just returned: counted, and with why (PUNCTUAL_EXPLAIN) the cause of a late one. */
void pn__wait_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why);

/* The caller's tail of a wait pn__wait left with p->tail: the last microseconds spun in
 * the caller's frame; a clock stepped back meanwhile plans the wait again. Returns r, or
 * the new wait's result. */
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
