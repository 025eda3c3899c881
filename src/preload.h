/* SPDX-License-Identifier: MIT */
/*
 * preload.h: what the preload shim's two files share (preload.c: the sleeps, cond waits
 * and the state; preload_wait.c: the event-loop, semaphore and signal waits). Internal to
 * libpunctual-preload.so, whose version script exports none of it.
 */
#ifndef PUNCTUAL_PRELOAD_H
#define PUNCTUAL_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

#define EXPORT __attribute__((visibility("default")))

/* The program's return address, taken in the function it called (see the plan's warm) */
#define RET __builtin_return_address(0)

struct pn__sleep_plan;

/* PUNCTUAL_PRECISION in ns, or -1: the shim is inert. */
extern int64_t pn__shim_precision;
/* Whether a call should be made precise: the shim is active and the thread is not inside
 * it already (a signal handler's call goes to the real function, and is counted). */
bool pn__shim_active(void);
/* Marks the thread inside the shim (p: the sleep in progress, for a handler that jumps
 * out of it; NULL for a wait) and counts the call; leave returns r. */
void pn__shim_enter(struct pn__sleep_plan *p);
int pn__shim_leave(int r);
/* Leaves the shim from a call that a signal handler's longjmp or a cancellation unwinds:
 * the sleep's slack goes back, and the thread's next calls are precise again. */
void pn__shim_unwound(void);
/* glibc declares some arguments nonnull, so a plain NULL test may be compiled away; a
 * NULL must still reach the real function, which reports it as the original would. */
static inline bool pn__null_arg(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}
/* Finds the real poll, epoll, select, semaphore and sigtimedwait functions
 * (preload_wait.c); called at load time. */
void pn__shim_resolve_waits(void);
/* A timed call's entry: the counter, read first thing in its entry point. pn__shim_call_ns
 * (preload.c) converts it to the call time (CLOCK_MONOTONIC ns) once the call is to be made
 * precise, so that neither the clock's own read nor the shim's checks count against the
 * call's deadline, and a call that goes to the real function converts nothing. The call
 * time is never before the instant of the call, so never before a clock read the program
 * made before it. */
__attribute__((always_inline)) static inline uint64_t pn__shim_entry(void)
{
	return pn__arch_cycles_ordered();
}
int64_t pn__shim_call_ns(uint64_t entry);

#endif
