/* SPDX-License-Identifier: MIT */
/* `punctual run --stats --runs N` (run/runs.c). */
#ifndef PUNCTUAL_RUN_RUNS_H
#define PUNCTUAL_RUN_RUNS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "contract.h"

/* One run's figures, from the shim's records (PUNCTUAL_STATS_FILE). */
struct run_fig {
	int status;
	unsigned procs, threads;
	uint64_t waits, events, past;
	int64_t p50, p99, max;              /* -1: no wait with a lateness */
	uint64_t h[PN__DECAY_HIST_BUCKETS]; /* the waits by lateness bucket */
};
struct run_causes;

/* A new, empty records file for the shim (PUNCTUAL_STATS_FILE), dir/punctual-NAME.XXXXXX
 * (dir: an absolute path, else /tmp), mode 0600 and the user's (the shim writes no other),
 * its path into path (n bytes, 64 is enough): it replaces (removes) the one made before,
 * and a signal's cleanup removes it. Exits 1 when it cannot be made. */
void run_records_new(const char *dir, const char *name, char *path, size_t n);
/* Removes the newest records file, if any. */
void run_records_remove(void);
/* Reads the records of a run in the file path (record.h: each thread's counts as they
 * accrued, whatever ended its process) into f (its status kept), its causes added into
 * why (NULL: not read): 0, or -errno (-EINVAL: a page that is no record, what came before
 * it read). */
int run_records(const char *path, struct run_fig *f, struct run_causes *why);
/* run_records of the file open at fd (read with pread: the offset is left as it was). */
int run_records_fd(int fd, struct run_fig *f, struct run_causes *why);
/* The preload shim's path (run/run.c): $PUNCTUAL_PRELOAD, beside this binary, in the lib
 * directory next to its bin directory, or where it was installed; NULL when none is. */
const char *run_preload_path(void);

/* Runs cmd n times, one after the other, in the environment set up for it (the shim's
 * PUNCTUAL_STATS among it), each run's statistics read back from the shim's records; one
 * line per run and the spread on stderr, and with explain (PUNCTUAL_EXPLAIN's value, or
 * NULL) the causes over the runs, precision being --precise's (ns; -1 without). Returns
 * the exit status: the first failing run's (it stops there), else 0. */
int run_runs(char **cmd, long n, const char *explain, int64_t precision);

#endif
