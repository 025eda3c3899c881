/* SPDX-License-Identifier: MIT */
/*
 * stats.h: PUNCTUAL_STATS (stats.c), each thread's precise waits as one line
 * on stderr. Internal.
 */
#ifndef PUNCTUAL_WAIT_STATS_H
#define PUNCTUAL_WAIT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/sleep.h>

/* From now on: one line on stderr for each thread's waits as the thread exits, and at the
 * process's exit for the threads still running (read as they are): waits, lateness
 * quantiles, waits late beyond precision (ns) and beyond it for the budget, spin share;
 * with precision < 0, the waits the program made as it is (pn__wait_observed): those that
 * timed out and their lateness, those their event ended, deadlines past at the call, the
 * slack the thread waited with. The report at exit goes before the exit handlers
 * registered until the process's first wait (atexit then) as well as after them all (a
 * destructor): a program's own handler may close stderr (gnulib's close_stdout:
 * coreutils). atexit takes a lock and may allocate: a process whose very first wait is
 * made by a signal handler that interrupted atexit or malloc in the same thread would
 * stop there. */
void pn__stats_report(int64_t precision);
/* The shim's start: precision, PUNCTUAL_PRECISION's value (a duration, ns when bare), in
 * ns, or -1 when NULL or malformed; and with stats set and not "0" (PUNCTUAL_STATS),
 * pn__stats_report(that) from now on, each thread's record also appended to the file
 * PUNCTUAL_STATS_FILE names (an absolute path), for `run --runs`; *explain whether
 * PUNCTUAL_EXPLAIN asks for each late wait's cause (pn__why_setup). */
int64_t pn__stats_setup(const char *precision, const char *stats, bool *explain);

/* What a thread's block shows besides its pn_sleep_stats. */
struct pn__stats_more {
	bool observed;                        /* the program's own waits (pn__wait_observed) */
	uint64_t events;                      /* of those, the waits their event ended */
	int64_t precision;                    /* the precise waits' precision, ns */
	int32_t budget_ppm;                   /* the thread's budget (or PN_SLEEP_BUDGET_AUTO) */
	int64_t kernel_p50_ns, kernel_p99_ns; /* the kernel parts' wakeups; -1: none */
	uint64_t fifo_waits; /* kernel waits under SCHED_FIFO lent (sched.c) */
	uint64_t lend_bounded, lend_outside; /* lends the CPU bound ended, and outside changes */
	uint64_t arm_waits[2];                /* shared without real time: the plan's way, the */
	int64_t arm_p99[2];                   /* ... program's alone (arms.h), and their p99s */
	bool arm_alone;                       /* ... the comparison's choice: the program's */
	int rt_refused; /* real time: 0 lent or not wanted, 1 denied (EPERM), 2 turned off */
};
/* The thread's block into buf (n bytes, NUL-terminated, cut to fit): three lines (four
 * with the kernel's figures), a line continued on the next where wide figures would take
 * it past 80 columns; returns its length. */
size_t pn__stats_format(int tid, const struct pn_sleep_stats *st, const struct pn__stats_more *x,
                        char *buf, size_t n);

#endif
