/* SPDX-License-Identifier: MIT */
/* `punctual run --stats --runs N` (run/runs.c). */
#ifndef PUNCTUAL_RUN_RUNS_H
#define PUNCTUAL_RUN_RUNS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "contract.h"

/* One run's figures, from the shim's records. */
struct run_fig {
	int status;
	unsigned procs, threads;
	uint64_t waits, events, past;
	int64_t p50, p99, max; /* -1: no wait with a lateness */
	uint64_t h[PN__DECAY_HIST_BUCKETS];
};
struct run_causes;

/* A new, empty records file dir/punctual-NAME.XXXXXX (dir absolute, else /tmp), 0600, its
 * path into path (64 bytes suffice); it replaces the one made before, and a signal's
 * cleanup removes it. Exits 1 when it cannot be made. */
void run_records_new(const char *dir, const char *name, char *path, size_t n);
/* Removes the newest records file, if any. */
void run_records_remove(void);
/* Reads a run's records in path into f, their causes into why (NULL: not read): 0, or
 * -errno (-EINVAL: a page that is no record, what came before it read). */
int run_records(const char *path, struct run_fig *f, struct run_causes *why);
/* run_records of the file open at fd, its offset left as it was. */
int run_records_fd(int fd, struct run_fig *f, struct run_causes *why);
/* The preload shim's path; NULL when there is none. */
const char *run_preload_path(void);

/* Runs cmd n times, one after the other, each run's statistics read from the shim's
 * records, with explain the causes over the runs (precision: --precise's, -1 without).
 * The first failing run's status (the series stops there), else 0. */
int run_runs(char **cmd, long n, const char *explain, int64_t precision);

#endif
