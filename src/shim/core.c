/* SPDX-License-Identifier: MIT */
/*
 * core.c: the core of the preload shim: whether it is active (PUNCTUAL_PRECISION), the
 * thread's place inside it, the test hooks, and PUNCTUAL_STATS (alone, it observes every
 * timed wait as the program made it). Async-signal-safe where the originals are: no
 * locks, no allocation. A call made inside the shim (a handler's) goes to the real
 * function, and the outer call does not learn from a wakeup a handler delayed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "wait/wait.h"
#include "kernel.h"
#include "shim/core.h"
#include "report/stats.h"
#include "shim/real.h"

int64_t pn__shim_precision = -1; /* -1: inert */
bool pn__shim_observing;
bool pn__shim_explain;
PN_TLS bool pn__shim_inside; /* a call now is a handler's */
static PN_TLS unsigned nested;
static PN_TLS struct pn__plan *in_progress; /* the call's plan, while inside */
static PN_TLS struct pn__why_snap why_snap; /* its counters before it */
static unsigned long handled;

/* How many calls the shim has made precise in this process (tests, with dlsym). */
EXPORT unsigned long punctual_preload_handled(void);
EXPORT unsigned long punctual_preload_handled(void)
{
	return __atomic_load_n(&handled, __ATOMIC_RELAXED);
}

/* The calling thread's pn_sleep_stats as the shim's own copy of the library keeps them. */
EXPORT int punctual_preload_sleep_stats(struct pn_sleep_stats *st);
EXPORT int punctual_preload_sleep_stats(struct pn_sleep_stats *st)
{
	return pn_sleep_stats(st);
}

__attribute__((constructor)) static void core_init(void)
{
	const char *stats = getenv("PUNCTUAL_STATS");
	/* a report without a precision: the program's waits as it makes them */
	pn__shim_precision =
	        pn__stats_setup(getenv("PUNCTUAL_PRECISION"), stats, &pn__shim_explain);
	pn__shim_observing = pn__shim_precision < 0 && stats && *stats && strcmp(stats, "0") != 0;
}

void pn__shim_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why)
{
	int e = errno;
	pn__shim_inside = true; /* a handler's wait meanwhile is not counted here */
	pn__wait_observed(clk, call, deadline, timed_out, why);
	pn__shim_inside = false;
	errno = e;
}

bool pn__shim_active(void)
{
	if (pn__shim_precision < 0 || pn__kernel_denied())
		return false;
	if (pn__shim_inside) {
		nested++;
		return false;
	}
	return true;
}

const unsigned *pn__shim_nested(void)
{
	return &nested;
}

void pn__shim_enter(struct pn__plan *p)
{
	pn__shim_inside = true;
	in_progress = p;
	__atomic_add_fetch(&handled, 1, __ATOMIC_RELAXED);
	if (PN_UNLIKELY(pn__shim_explain))
		pn__why_step(&why_snap, PN__WHY_BEFORE);
}

int pn__shim_leave(int r)
{
	/* a precise wait late past its deadline: its cause */
	if (PN_UNLIKELY(pn__shim_explain) && in_progress && !in_progress->past &&
	    in_progress->deadline > 0) {
		int64_t late = pn__shim_clock(in_progress->clk) - in_progress->deadline;
		why_snap.slack = in_progress->slack; /* the kernel part's */
		if (late > 0)
			pn__why_step(&why_snap, late);
	}
	in_progress = NULL;
	pn__shim_inside = false;
	return r;
}

void pn__shim_unwound(void)
{
	if (!pn__shim_inside)
		return;
	if (in_progress)
		pn__wait_cancel(in_progress);
	pn__shim_leave(0);
}
