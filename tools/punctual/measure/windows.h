/* SPDX-License-Identifier: MIT */
/* measure/windows.h: the offline optimum of timer wakeups for realized windows. */
#ifndef PUNCTUAL_MEASURE_WINDOWS_H
#define PUNCTUAL_MEASURE_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

/* A timer that may fire anywhere in [lo, hi]: deadline, deadline + precision. */
struct window {
	int64_t lo, hi;
};

/* The fewest wakeups that fire every window inside itself (REFERENCE.md's greedy rule:
 * by right end, wake at the first right end, serve every window open then, repeat).
 * Sorts win. */
uint64_t offline_optimum(struct window *win, size_t n);

#endif
