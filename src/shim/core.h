/* SPDX-License-Identifier: MIT */
/*
 * core.h: the preload shim's core (core.c: whether it is active, the
 * thread's place inside it; calltime.c: the call time), which every other file
 * of libpunctual-preload.so uses and none of them uses another's. Internal to the shim,
 * whose version script (preload.map) exports only the interposed calls and test hooks.
 */
#ifndef PUNCTUAL_SHIM_CORE_H
#define PUNCTUAL_SHIM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "wait/plan.h"
#include "wait/why.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef __GLIBC__
/* musl (1.2.3) declares none of these; the shim defines them all the same, and on musl
 * they are reached only where its libc has them (dlsym finds the real one). */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>
int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
                 const sigset_t *mask);
int sem_clockwait(sem_t *sem, clockid_t clk, const struct timespec *abstime);
int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                           const struct timespec *abstime);
#endif

/* The program's return address, taken in the function it called (the plan's warm). */
#define RET __builtin_return_address(0)

/* ---- core.c ---- */

/* PUNCTUAL_PRECISION in ns, or -1: the shim is inert. */
extern int64_t pn__shim_precision;
/* Whether a call should be made precise: the shim is active and the thread is not inside it
 * already (a signal handler's call goes to the real function, and is counted). */
bool pn__shim_active(void);
/* The thread's count of calls that came in while it was inside the shim (signal handlers):
 * a wait during which it grew was delayed by a handler and is not learned from. */
const unsigned *pn__shim_nested(void);
/* Marks the thread inside the shim (p: the call's plan, for a handler that jumps out of it)
 * and counts the call as made precise. */
void pn__shim_enter(struct pn__plan *p);
/* Marks it outside again; returns r. */
int pn__shim_leave(int r);
/* Leaves the shim from a call that a signal handler's longjmp or a cancellation unwinds:
 * the call's slack goes back, and the thread's next calls are precise again. */
void pn__shim_unwound(void);

/* ---- core.c: observing (run --stats without --precise) ---- */

/* PUNCTUAL_STATS without PUNCTUAL_PRECISION: the shim changes no wait and measures each
 * timed one as the program made it. */
extern bool pn__shim_observing;
extern PN_TLS bool pn__shim_inside;
/* Whether this call should be observed (observing, and not a handler's call made while the
 * thread counts one). */
static inline bool pn__shim_observes(void)
{
	return __builtin_expect(pn__shim_observing, 0) && !pn__shim_inside;
}
/* A timed wait the program made, called at call (ns on clk) with its deadline on clk, has
 * just returned: by its timeout (timed_out) or not. Counted in the thread's statistics
 * (pn__wait_observed), with the cause of its lateness where why holds the counters read
 * before it (PUNCTUAL_EXPLAIN; else NULL); errno as it was. */
void pn__shim_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why);
/* PUNCTUAL_EXPLAIN asks for the counters around each timed wait (pn__why_step). */
extern bool pn__shim_explain;
/* The counters before an observed wait, where PUNCTUAL_EXPLAIN asks for them: s, or NULL. */
static inline struct pn__why_snap *pn__shim_why(struct pn__why_snap *s)
{
	if (PN_LIKELY(!pn__shim_explain))
		return NULL;
	pn__why_step(s, PN__WHY_BEFORE);
	return s;
}
/* The real call expr, observed: the call time and deadline (ns on clk) taken before it,
 * timed_out an expression of its result pn_r (errno as the call left it). */
#define PN__OBSERVED(clk, call, deadline, expr, timed_out)                                         \
	({                                                                                         \
		int64_t pn_call_ = (call), pn_deadline_ = (deadline);                              \
		struct pn__why_snap pn_snap_, *pn_why_ = pn__shim_why(&pn_snap_);                  \
		int pn_r = (expr);                                                                 \
		pn__shim_observed((clk), pn_call_, pn_deadline_, (timed_out), pn_why_);            \
		pn_r;                                                                              \
	})
/* call + ns, saturated. */
static inline int64_t pn__shim_after(int64_t call, int64_t ns)
{
	int64_t d;
	return __builtin_add_overflow(call, ns, &d) ? INT64_MAX : d;
}

/* clk's time in ns through libc (the shim reads the clocks the program reads, as it reads
 * them). */
static inline int64_t pn__shim_clock(clockid_t clk)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return pn__ts_ns(&t);
}

/* glibc declares some arguments nonnull, so a plain NULL test may be compiled away; a NULL
 * must still reach the real function, which reports it as the original would. */
static inline bool pn__null_arg(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}

/* ---- calltime.c ---- */

/* A timed call's entry: the counter, read first thing in its entry point. */
__attribute__((always_inline)) static inline uint64_t pn__calltime_entry(void)
{
	return pn__arch_cycles_ordered();
}
/* The call time (CLOCK_MONOTONIC ns) of an entry, converted once the call is to be made
 * precise, so that neither the clock's own read nor the shim's checks count against the
 * call's deadline, and a call that goes to the real function converts nothing. Never
 * before the instant of the call, so never before a clock read the program made before
 * it. */
int64_t pn__calltime_ns(uint64_t entry);

#endif
