/* SPDX-License-Identifier: MIT */
/*
 * stats.h: PUNCTUAL_STATS (stats.c), each thread's precise waits as one line
 * on stderr. Internal.
 */
#ifndef PUNCTUAL_WAIT_STATS_H
#define PUNCTUAL_WAIT_STATS_H

#include <stdint.h>

/* From now on: one line on stderr for each thread's waits as the thread exits, and at the
 * process's exit for the threads still running (read as they are): waits, lateness
 * quantiles, waits late beyond precision (ns) and beyond it for the budget, spin share. */
void pn__stats_report(int64_t precision);

#endif
