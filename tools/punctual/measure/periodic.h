/* SPDX-License-Identifier: MIT */
/* measure/periodic.h: cyclictest's measuring loop, for `punctual sleep --periodic`. */
#ifndef PUNCTUAL_MEASURE_PERIODIC_H
#define PUNCTUAL_MEASURE_PERIODIC_H

#include <stdint.h>

#include <punctual/hist.h>

struct periodic_result {
	struct pn_hist latency; /* wake time - deadline, one per cycle; < 0 is early */
	uint64_t missed;        /* periods skipped because a wakeup came after them */
	uint64_t early;         /* wakeups before their deadline: must be 0 */
	int64_t last;           /* the last cycle's latency (cyclictest's "Act") */
	int64_t elapsed;
};

/* Sleeps with clock_nanosleep(TIMER_ABSTIME) to absolute deadlines start + interval,
 * next += interval, until duration has passed, and records how late each wakeup is;
 * a deadline already past when the loop wakes is skipped and counted as missed (where
 * cyclictest says nothing). Shows progress. Returns 0, or clock_nanosleep's -errno with
 * *r holding the cycles before it. */
int periodic_run(int64_t interval, int64_t duration, struct periodic_result *r);

#endif
