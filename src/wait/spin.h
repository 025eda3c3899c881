/* SPDX-License-Identifier: MIT */
/*
 * spin.h: a wait's final spin to its deadline, never before it, and the last microseconds
 * a caller spins in its own frame. Internal.
 */
#ifndef PUNCTUAL_WAIT_SPIN_H
#define PUNCTUAL_WAIT_SPIN_H

#include <signal.h>
#include <stdint.h>

#include "wait/plan.h"

/* Spins to p's deadline, signals as they come, and counts the sleep (with PN__PLAN_TAIL,
 * p->tail set within PN__LOOK_WINDOW_NS of it). 0. A spin that cannot end by the deadline
 * as planned (its clock stepped back, a look denied) returns 0 early with p->away, counting
 * nothing: the caller waits the rest the program's own way. */
int pn__spin_finish(struct pn__plan *p);

/* A check of the spin, run with the caller's signal mask: 0 to go on, or a result that
 * ends the spin (-errno, or a ready count). */
typedef int pn__spin_check(void *ctx, const sigset_t *mask);
/* The last check starts within this of the deadline, so that it ends before it. */
#define PN__LOOK_WINDOW_NS 3000
/* The spin to p's deadline with signals blocked: every `every` ns check(ctx, mask) runs with
 * the caller's mask (NULL: the signals it allows are let in, a handler ending the spin with
 * -EINTR), but for the last few us, bar one check within PN__LOOK_WINDOW_NS (p->looked).
 * The check's result that ended it, or 0 (before the deadline with p->tail under
 * PN__PLAN_TAIL). */
int pn__spin_checked(struct pn__plan *p, pn__spin_check *check, void *ctx, int64_t every);
/* How often the shim's sleeps let signals in during their spin. */
#define PN__SIGCHECK_NS 2000
/* pn__spin_checked for the shim's sleeps: 0, or -EINTR when a handler ran, at most
 * PN__SIGCHECK_NS after the signal came. */
int pn__spin_signals(struct pn__plan *p);

/* The spin's last stretch in the caller's frame, for a plan left with p->tail: to the
 * deadline, never before it (or p->away); nothing without p->tail. Counted at the thread's
 * next sleep or statistics read. */
__attribute__((always_inline)) static inline void pn__spin_tail(struct pn__plan *p)
{
	if (!p->tail)
		return;
	int64_t now;
	do {
		__builtin_prefetch(p->warm[0]);
		pn__arch_relax();
		now = pn__plan_now(p);
		if (PN_UNLIKELY(now < p->now)) { /* stepped back */
			p->away = true;
			return;
		}
	} while (now < p->deadline);
	if (p->tail_to->seq == p->tail_seq)
		p->tail_to->end = now;
}

#endif
