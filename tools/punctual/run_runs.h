/* SPDX-License-Identifier: MIT */
/* run_runs.h: `punctual run --stats --runs N` (run_runs.c). */
#ifndef PUNCTUAL_RUN_RUNS_H
#define PUNCTUAL_RUN_RUNS_H

/* Runs cmd n times, one after the other, in the environment set up for it (the shim's
 * PUNCTUAL_STATS among it), each run's statistics read back from the shim's records; one
 * line per run and the spread on stderr. Returns the exit status: the first failing run's
 * (it stops there), else 0. */
int run_runs(char **cmd, long n);

#endif
