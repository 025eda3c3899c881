/* SPDX-License-Identifier: MIT */
/*
 * spin.h: a wait's final spin (spin.c), on the plan's clock to its deadline, never before
 * it; and the last microseconds of it that a caller spins in its own frame. Internal.
 */
#ifndef PUNCTUAL_WAIT_SPIN_H
#define PUNCTUAL_WAIT_SPIN_H

#include <signal.h>
#include <stdint.h>

#include "wait/plan.h"

/* Spins to p's deadline on its clock, signals as they come, and counts the sleep; with
 * PN__PLAN_TAIL to within PN__LOOK_WINDOW_NS of it, p->tail set (the caller spins the rest:
 * pn__spin_tail, one return from the deadline). 0.
 *
 * Every spin (finish, spin, tail) gives the CPU back rather than spin on when it cannot
 * end by the deadline as planned: when its clock reads below the plan's last read (p->now:
 * a REALTIME or TAI step back; the remaining time grew), or when a look it needs was denied
 * (pn__kernel_denied). It then returns 0 before the deadline with p->away set, counts
 * nothing, and the caller waits the rest in the kernel the program's own way (the real
 * call to the deadline): never early, and a step of hours costs no CPU. */
int pn__spin_finish(struct pn__plan *p);

/* A check of the spin: runs with the caller's signal mask; 0 to go on, or a nonzero result
 * that ends the spin (-errno, or a wait's ready count). */
typedef int pn__spin_check(void *ctx, const sigset_t *mask);
/* The last check starts within this of the deadline, in the stretch with the caller's mask
 * back, so that it ends before the deadline (p->looked). */
#define PN__LOOK_WINDOW_NS 3000
/* The spin to p's deadline with signals blocked: every `every` ns (from the start when check
 * is given) check(ctx, mask) runs with the caller's mask; check NULL only lets in the
 * signals that mask allows (a handler that runs then ends the spin with -EINTR). The checks
 * stop a few us before the deadline: the spin puts the mask back and watches the clock
 * alone, but for a last check started within PN__LOOK_WINDOW_NS of the deadline (p->looked
 * says whether it ran; the caller looks once more when it did not). Returns the nonzero
 * check result that ended it, or 0 at the deadline, or with PN__PLAN_TAIL 0 before it with
 * p->tail set (the caller spins the rest: pn__spin_tail). An event in the last window may
 * so be seen by the program's next call rather than this one, as one that comes while the
 * real call returns. */
int pn__spin_checked(struct pn__plan *p, pn__spin_check *check, void *ctx, int64_t every);
/* How often the shim's sleeps let signals in during their spin. */
#define PN__SIGCHECK_NS 2000
/* pn__spin_checked(p, NULL, NULL, PN__SIGCHECK_NS) for the shim's sleeps: 0 at the deadline
 * (before it with p->tail), or -EINTR when a signal handler ran during the spin, at most
 * PN__SIGCHECK_NS after the signal came and where the real call would have run it. */
int pn__spin_signals(struct pn__plan *p);

/* The spin's last stretch in the caller's frame, for a plan that pn__spin_checked left with
 * p->tail (PN__PLAN_TAIL; set only when the spin's result is 0): to the deadline on the
 * plan's clock, never before it (or p->away, as the spin's); nothing without p->tail.
 * Its end is counted in the thread's statistics at its next sleep (or statistics read). */
__attribute__((always_inline)) static inline void pn__spin_tail(struct pn__plan *p)
{
	if (!p->tail)
		return;
	int64_t now;
	do {
		__builtin_prefetch(p->warm[0]);
		pn__arch_relax();
		now = pn__plan_now(p);
		if (PN_UNLIKELY(now < p->now)) { /* stepped back below the spin's last read */
			p->away = true;
			return;
		}
	} while (now < p->deadline);
	if (p->tail_to->seq == p->tail_seq)
		p->tail_to->end = now;
}

#endif
