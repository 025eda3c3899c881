/* SPDX-License-Identifier: MIT */
/*
 * measure/timers.h: the coalescing workload of `punctual timers` and `punctual probe`:
 * N timers on a pn_wheel in real time, and the offline optimum of wakeups for the
 * windows they fired in (also what bench_wheel compares its loops with).
 */
#ifndef PUNCTUAL_MEASURE_TIMERS_H
#define PUNCTUAL_MEASURE_TIMERS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/hist.h>

/* ---- windows and their offline optimum ---- */

/* A timer that may fire anywhere in [lo, hi]: deadline, deadline + precision. */
struct window {
	int64_t lo, hi;
};

/* A growing list of windows. */
struct windows {
	struct window *w;
	size_t n, cap;
};

/* Appends [lo, hi]: 0 or -ENOMEM (ws unchanged). */
int windows_add(struct windows *ws, int64_t lo, int64_t hi);

/* The fewest wakeups that fire every window inside itself. The greedy rule is optimal
 * for a known set of intervals: by right end, wake at the first right end, serve every
 * window open then, repeat. Sorts win by right end. */
uint64_t windows_optimum(struct window *win, size_t n);

/* The distinct left ends (deadlines): the wakeups of a loop without precision windows,
 * one per deadline. Sorts win by left end. */
uint64_t windows_deadlines(struct window *win, size_t n);

/* ---- the workload ---- */

enum timers_dist { TIMERS_UNIFORM, TIMERS_BIMODAL, TIMERS_FIXED };

struct timers_config {
	long count;
	enum timers_dist dist;
	int64_t a, b;      /* uniform: min, max; bimodal: the two modes (each +-50%); fixed: a */
	double percent;    /* each timer's precision as a percentage of its delay; < 0: */
	int64_t precision; /* this absolute precision instead */
	bool periodic;     /* periodic timers (period = the delay) at random phases */
	int64_t duration;  /* periodic: how long; one-shot: a limit */
	uint64_t seed;     /* the delays are a splitmix64 sequence from it */
	volatile sig_atomic_t *stop; /* nonzero (a signal's flag): the loop ends at its next
	                              * wakeup, early; NULL: never */
};

/* Firings whose windows are kept for the optimum (16 bytes each): past it a run stops. */
#define TIMERS_MAX_WINDOWS (1 << 24)

struct timers_result {
	uint64_t fired;
	uint64_t wakeups;     /* times the loop slept and woke to expire the wheel */
	uint64_t optimum;     /* windows_optimum of the windows the timers fired in */
	uint64_t uncoalesced; /* windows_deadlines of the same: one wakeup per deadline */
	uint64_t early;       /* fired before their deadline: must be 0 */
	uint64_t past_window; /* fired after their window (a late wakeup) */
	uint64_t missed;      /* periods that periodic timers skipped */
	struct pn_hist late;  /* fire time - deadline */
	int64_t elapsed;
	long unfired;   /* one-shot timers the duration limit left pending */
	bool truncated; /* stopped at TIMERS_MAX_WINDOWS firings */
};

/* Runs c: the timers' delays count from a start 5 ms + 100 ns per timer ahead, so that
 * adding them is done before the first is due; the loop sleeps with pn_sleep_until over
 * each coalesced window (pn_wheel_window) and expires the wheel when it wakes, until the
 * duration ends or (one-shot) every timer fired. Shows progress. Fills *r (r->late
 * included); returns 0, or -ENOMEM or a pn_wheel -errno with *r incomplete. */
int timers_run(const struct timers_config *c, struct timers_result *r);

#endif
