/* SPDX-License-Identifier: MIT */
/*
 * measure/timers.h: the coalescing workload of `punctual timers` and `punctual probe`:
 * N timers on a pn_wheel in real time, and the offline optimum of wakeups for the
 * windows they fired in.
 */
#ifndef PUNCTUAL_MEASURE_TIMERS_H
#define PUNCTUAL_MEASURE_TIMERS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/hist.h>

/* ---- windows and their offline optimum ---- */

/* A timer that may fire anywhere in [deadline, deadline + precision]. */
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

/* The fewest wakeups that fire every window inside itself, by the greedy rule (optimal
 * for known intervals). Sorts win by right end. */
uint64_t windows_optimum(struct window *win, size_t n);

/* The distinct deadlines: a loop's wakeups without windows. Sorts win by left end. */
uint64_t windows_deadlines(struct window *win, size_t n);

/* ---- the workload ---- */

enum timers_dist { TIMERS_UNIFORM, TIMERS_BIMODAL, TIMERS_FIXED };

struct timers_config {
	long count;
	enum timers_dist dist;
	int64_t a, b;      /* uniform: min, max; bimodal: the two modes (each +-50%); fixed: a */
	double percent;    /* each timer's precision as a percentage of its delay; < 0: */
	int64_t precision; /* this absolute precision instead */
	bool periodic;     /* period = the delay, at random phases */
	int64_t duration;  /* periodic: how long; one-shot: a limit */
	uint64_t seed;     /* of the delays' splitmix64 sequence */
	volatile sig_atomic_t *stop; /* nonzero: the loop ends at its next wakeup */
};

/* Firings whose windows are kept for the optimum; past it a run stops. */
#define TIMERS_MAX_WINDOWS (1 << 24)

struct timers_result {
	uint64_t fired;
	uint64_t wakeups;     /* times the loop woke to expire the wheel */
	uint64_t optimum;     /* windows_optimum of the windows fired in */
	uint64_t uncoalesced; /* windows_deadlines of the same */
	uint64_t early;       /* fired before their deadline: must be 0 */
	uint64_t past_window; /* fired after their window */
	uint64_t missed;      /* periods that periodic timers skipped */
	struct pn_hist late;  /* fire time - deadline */
	int64_t elapsed;
	long unfired;   /* one-shot timers the duration limit left pending */
	bool truncated; /* stopped at TIMERS_MAX_WINDOWS */
};

/* Runs c: delays count from a start far enough ahead that adding is done before the first
 * is due; the loop sleeps over each coalesced window and expires, until the duration ends
 * or every one-shot timer fired. 0, or -ENOMEM or a pn_wheel -errno with *r incomplete. */
int timers_run(const struct timers_config *c, struct timers_result *r);

#endif
