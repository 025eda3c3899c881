/* SPDX-License-Identifier: MIT */
/*
 * stats.h: PUNCTUAL_STATS, each thread's precise waits as one line on stderr. Internal.
 */
#ifndef PUNCTUAL_REPORT_STATS_H
#define PUNCTUAL_REPORT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/sleep.h>

/* From now on: a line on stderr for each thread's waits at its exit, and at the process's
 * exit for the threads still running (read racily); with precision < 0, the program's
 * own waits. The exit report goes before the handlers registered until the first wait
 * and after them all: a program's handler may close stderr. A first wait made by a
 * handler that interrupted atexit or malloc would stop in atexit. */
void pn__stats_report(int64_t precision);
/* The shim's start: PUNCTUAL_PRECISION in ns (-1 when NULL or malformed); with stats set
 * and not "0", pn__stats_report(that) from now on, each record also appended to
 * PUNCTUAL_STATS_FILE; *explain: whether PUNCTUAL_EXPLAIN asks for causes. */
int64_t pn__stats_setup(const char *precision, const char *stats, bool *explain);

struct pn__stats_more {
	bool observed;                        /* the program's own waits */
	uint64_t events;                      /* of those, the waits their event ended */
	int64_t precision;
	int32_t budget_ppm;
	int64_t kernel_p50_ns, kernel_p99_ns; /* the kernel parts' wakeups; -1: none */
	uint64_t fifo_waits; /* kernel waits under lent SCHED_FIFO */
	uint64_t lend_bounded, lend_outside; /* lends the CPU bound and outside changes ended */
	uint64_t arm_waits[2];                /* shared without real time: the plan's way and */
	int64_t arm_p99[2];                   /* the program's alone, and their p99s */
	bool arm_alone;                       /* the comparison chose the program's */
	uint64_t arm_rounded;                 /* whole-ms waits left to the program */
	int rt_refused; /* 0 lent or not wanted, 1 denied (EPERM), 2 turned off */
};
/* The thread's block into buf (cut to fit): three or four lines within 80 columns; its
 * length. */
size_t pn__stats_format(int tid, const struct pn_sleep_stats *st, const struct pn__stats_more *x,
                        char *buf, size_t n);

#endif
