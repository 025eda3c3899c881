/* SPDX-License-Identifier: MIT */
/*
 * punctual/sleep.h: sleeps that never wake early and wake late by at most a precision
 * the caller gives (FreeBSD calloutng's precision, sd-event's accuracy).
 *
 * The kernel wakes a sleeping thread late by its timer slack plus a wakeup latency that
 * depends on the machine, its load and how long the thread slept (an idle vCPU halts;
 * waking it takes tens of microseconds). pn_sleep_until learns that latency per thread
 * and per sleep-length class, as a high quantile (p99.9 for a precision of 2 us or less,
 * p99.6 for a wider one) that follows the load. When the
 * precision covers it, the thread sleeps in the kernel only (absolute clock_nanosleep)
 * with its slack lowered to fit; otherwise it sleeps until deadline - margin and spins
 * (pause / yield) to the deadline.
 *
 * Timer slack: pn_sleep_until leaves the calling thread's slack at the value it chose
 * (1 ns when it spins, otherwise the largest power of two that fits the precision), so
 * that consecutive sleeps need no prctl. pn_slack_set() changes it back, and the next
 * pn_sleep_until notices; a prctl(PR_SET_TIMERSLACK) behind its back is not noticed.
 * (The preload shim, which sleeps on behalf of programs that did not ask for it, puts
 * the program's own slack back after every kernel wait instead.)
 *
 * Outliers: one stall (the process stopped, the vCPU taken away) never becomes the
 * margin, and a class whose wakeups are later than its sleeps (so it only spins) keeps
 * learning from one shortest kernel sleep per sleep, going back to the kernel once they
 * are cheap again.
 */
#ifndef PUNCTUAL_SLEEP_H
#define PUNCTUAL_SLEEP_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sleep-length classes: class k holds sleeps of [2^k, 2^(k+1)) us (class 0 also shorter
 * ones, the last also longer ones). */
#define PN_SLEEP_CLASSES 24

/* Sleeps until deadline (pn_now()'s timebase, ns) and returns 0 at a time t with
 * deadline <= t, checked with pn_now(), so never early; unless the thread was preempted
 * or the machine stalled, t <= deadline + precision. Signals do not cut it short. A
 * deadline already past returns at once. -EINVAL if precision < 0. */
PN_API int pn_sleep_until(int64_t deadline, int64_t precision);

/* pn_sleep_until(pn_now() + ns, precision); -EINVAL if ns < 0 or precision < 0. */
PN_API int pn_sleep_for(int64_t ns, int64_t precision);

/* The calling thread's sleeps. */
struct pn_sleep_stats {
	uint64_t sleeps;        /* calls that slept (deadline in the future) */
	uint64_t past;          /* calls whose deadline had already passed */
	uint64_t early;         /* returns before the deadline: stays 0 */
	uint64_t late;          /* returns after deadline + precision */
	uint64_t kernel_only;   /* sleeps that did not spin */
	uint64_t slack_changes; /* prctl(PR_SET_TIMERSLACK) calls made */
	uint64_t probes;        /* shortest kernel sleeps made to learn the wakeup latency */
	int64_t slept_ns;       /* time asleep in the kernel */
	int64_t spun_ns;        /* time spinning */
	int64_t margin_ns;      /* the learned margin of the last sleep's class */
	int64_t slack_ns;       /* the thread's slack as pn_sleep_until left it (-1: untouched) */
	/* the spin margin a fine precision (2 us or less) uses at each class's shortest
	 * sleep, as learned so far; 0: none. A class that has learned little plans with a
	 * neighbour's margin too, which this does not show. */
	int64_t class_margin_ns[PN_SLEEP_CLASSES];
	uint64_t class_samples[PN_SLEEP_CLASSES]; /* kernel wakeups seen per class */
};

/* Copies the calling thread's statistics. -EINVAL for NULL. */
PN_API int pn_sleep_stats(struct pn_sleep_stats *st);

/* Zeroes the calling thread's counters (sleeps .. spun_ns); what it learned stays. */
PN_API void pn_sleep_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
