/* SPDX-License-Identifier: MIT */
/*
 * wait.h: the one wait engine. Every precise wait of the library and the shim is
 * pn__wait: plan -> kernel part -> woke or cancel -> spin -> (the caller's tail). What
 * varies is the waiter: how it waits in the kernel, how its spin looks at what it waits
 * for, what it lets go of while it spins. Internal.
 */
#ifndef PUNCTUAL_WAIT_WAIT_H
#define PUNCTUAL_WAIT_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "report/why.h"
#include "wait/spin.h"
#include "wait/waiter.h"

/* The wait until deadline on clk with the precision: 0 at a time >= deadline (with
 * PN__PLAN_TAIL, 0 with p->tail set before it for pn__wait_tail), the waiter's event (> 0),
 * or -errno (-EINTR when a handler ran, unless the waiter resumes). p: the shim's plan, so
 * that a longjmp out puts the slack back. errno is kept. */
int pn__wait(struct pn__waiter *w, struct pn__plan *p, clockid_t clk, int64_t deadline,
             int64_t precision, int flags);
/* pn_sleep_until through the raw kernel table, never failing: 0, with p->tail for the
 * caller to spin to the deadline in its own frame. ret: where the caller's call returns. */
int pn__wait_sleep(struct pn__plan *p, int64_t deadline, int64_t precision, const void *ret);
/* Whether the caller makes the program's own call instead of pn__wait: a compared thread
 * (src/wait/arms.c) on the comparison's pick, always for a timeout rounded to whole ms.
 * The call's end then goes to pn__wait_observed. False keeps the pick for the pn__wait
 * that follows. errno is kept. */
bool pn__wait_alone(clockid_t clk, int64_t deadline, bool rounded);
/* The lend of real time as the shim drives it: PN__LEND_SIGNAL names the bound's signal
 * (arg) and lets lends outlast their waits; PN__LEND_END ends the thread's lend,
 * PN__LEND_HANDLER too and counts a handler of the program's; PN__LEND_BOUND: 1 where
 * signal arg was the thread's bound timer, else 0. Async-signal-safe. */
enum { PN__LEND_SIGNAL, PN__LEND_END, PN__LEND_HANDLER, PN__LEND_BOUND };
int pn__wait_lend(int op, const void *arg);
/* A wait left without ending (cancelled, longjmp): puts the thread's scheduling and slack
 * back. Idempotent. */
void pn__wait_cancel(struct pn__plan *p);
/* A wait the program made as it is (`run --stats` alone, or pn__wait_alone's), from call to
 * deadline on clk, just returned: counted, and with why (PUNCTUAL_EXPLAIN) the cause of a
 * late one. */
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
