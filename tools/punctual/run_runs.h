/* SPDX-License-Identifier: MIT */
/* run_runs.h: `punctual run --stats --runs N` (run_runs.c). */
#ifndef PUNCTUAL_RUN_RUNS_H
#define PUNCTUAL_RUN_RUNS_H

#include <stdint.h>

/* Runs cmd n times, one after the other, in the environment set up for it (the shim's
 * PUNCTUAL_STATS among it), each run's statistics read back from the shim's records; one
 * line per run and the spread on stderr, and with explain (PUNCTUAL_EXPLAIN's value, or
 * NULL) the causes over the runs, precision being --precise's (ns; -1 without). Returns
 * the exit status: the first failing run's (it stops there), else 0. */
int run_runs(char **cmd, long n, const char *explain, int64_t precision);

#endif
