/* SPDX-License-Identifier: MIT */
/*
 * core.h: the preload shim's core (whether it is active, the thread's place inside it, the
 * call time), which every other file of the shim uses and none uses another's. Internal to
 * the shim, which exports only the interposed calls and test hooks.
 */
#ifndef PUNCTUAL_SHIM_CORE_H
#define PUNCTUAL_SHIM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "report/why.h"
#include "wait/plan.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef __GLIBC__
/* musl declares none of these; on musl they are reached only where its libc has them. */
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

/* The program's return address, taken in the function it called. */
#define RET __builtin_return_address(0)

/* ---- core.c ---- */

/* PUNCTUAL_PRECISION in ns, or -1: the shim is inert. */
extern int64_t pn__shim_precision;
/* Whether a call should be made precise: active, and the thread not inside the shim already
 * (a handler's call goes to the real function). */
bool pn__shim_active(void);
/* The thread's count of calls that came in while inside the shim: a wait during which it
 * grew is not learned from. */
const unsigned *pn__shim_nested(void);
/* Marks the thread inside the shim (p: the call's plan, for a handler that jumps out). */
void pn__shim_enter(struct pn__plan *p);
int pn__shim_leave(int r);
/* Leaves the shim from a call a longjmp or a cancellation unwinds: the slack goes back. */
void pn__shim_unwound(void);

/* ---- core.c: observing (run --stats without --precise) ---- */

/* PUNCTUAL_STATS without PUNCTUAL_PRECISION: the shim measures each timed wait as made. */
extern bool pn__shim_observing;
extern PN_TLS bool pn__shim_inside;
static inline bool pn__shim_observes(void)
{
	return __builtin_expect(pn__shim_observing, 0) && !pn__shim_inside;
}
/* A timed wait the program made has just returned: counted, with the cause of its lateness
 * where why holds the counters read before it (else NULL); errno as it was. */
void pn__shim_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why);
/* PUNCTUAL_EXPLAIN asks for the counters around each timed wait (pn__why_step). */
extern bool pn__shim_explain;
/* The counters before an observed wait, where asked for: s, or NULL. */
static inline struct pn__why_snap *pn__shim_why(struct pn__why_snap *s)
{
	if (PN_LIKELY(!pn__shim_explain))
		return NULL;
	pn__why_step(s, PN__WHY_BEFORE);
	return s;
}
/* The real call expr, observed; timed_out an expression of its result pn_r. */
#define PN__OBSERVED(clk, call, deadline, expr, timed_out)                                         \
	({                                                                                         \
		int64_t pn_call_ = (call), pn_deadline_ = (deadline);                              \
		struct pn__why_snap pn_snap_, *pn_why_ = pn__shim_why(&pn_snap_);                  \
		int pn_r = (expr);                                                                 \
		pn__shim_observed((clk), pn_call_, pn_deadline_, (timed_out), pn_why_);            \
		pn_r;                                                                              \
	})
static inline int64_t pn__shim_after(int64_t call, int64_t ns)
{
	int64_t d;
	return __builtin_add_overflow(call, ns, &d) ? INT64_MAX : d;
}

/* clk's time through libc, as the program reads it. */
static inline int64_t pn__shim_clock(clockid_t clk)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return pn__ts_ns(&t);
}

/* glibc declares some arguments nonnull, so a plain NULL test may be compiled away; a NULL
 * must still reach the real function. */
static inline bool pn__null_arg(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}

/* ---- calltime.c ---- */

__attribute__((always_inline)) static inline uint64_t pn__calltime_entry(void)
{
	return pn__arch_cycles_ordered();
}
/* The call time (CLOCK_MONOTONIC ns) of an entry, converted only once the call is made
 * precise, so that neither the read nor the shim's checks count against the deadline.
 * Never before the instant of the call. */
int64_t pn__calltime_ns(uint64_t entry);

#endif
