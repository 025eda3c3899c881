/* SPDX-License-Identifier: MIT */
/*
 * record.h: PUNCTUAL_STATS_FILE's records: each thread's counts kept in a page of that file
 * as they accrue, so that they survive however the process ends, with nothing of the
 * program's changed (no handler, no descriptor kept). Internal.
 */
#ifndef PUNCTUAL_REPORT_RECORD_H
#define PUNCTUAL_REPORT_RECORD_H

#include <stdint.h>

#include "hist/decay_hist.h"
#include "report/why.h"

/* A page of the file: a header, then counts updated in place. A page may carry several
 * threads of one process one after another (an exited thread's page goes to the next new
 * one), never two at once. */
struct pn__record {
	char magic[8];
	uint32_t size; /* the next record starts this far on */
	int32_t pid;
	uint32_t threads;
	uint32_t unused;
	int64_t why_above; /* the causes count the buckets wholly above this (ns); or
	                    * PN__RECORD_GIVEN, PN__RECORD_AUTO */
	uint64_t waits;
	uint64_t events; /* observed waits their event ended before the deadline */
	uint64_t past;   /* waits whose deadline had passed at the call */
	int64_t max;     /* the largest lateness, ns; -1: none */
	uint64_t late[PN__DECAY_HIST_BUCKETS];
	int64_t why_max[PN__WHY_COUNT]; /* PUNCTUAL_EXPLAIN's causes */
	uint32_t why_n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS];
};
#define PN__RECORD_MAGIC "pn-rec2"
#define PN__RECORD_GIVEN (-2)
#define PN__RECORD_AUTO  (-1)

/* The file the records go to (absolute; NULL or "": none), and the causes' threshold. */
void pn__record_setup(const char *path, int64_t why_above);
/* A record for the calling thread: a page a thread left, else one appended (the file
 * created 0600) and mapped; NULL without a file or where it cannot be had (past 64 MiB
 * too). A file that is a link, not regular, not the euid's or writable by others gives
 * no record in this process. Async-signal-safe. */
struct pn__record *pn__record_take(void);
/* The calling thread exits: r goes to the process's next new thread. */
void pn__record_give(struct pn__record *r);
/* In a fork()ed child, each record the parent's threads held is unmapped here; then
 * pn__record_forked for the pages the parent's exited threads left. */
void pn__record_drop(struct pn__record *r);
void pn__record_forked(void);

/* A wait's end into r (NULL: nothing). */
void pn__record_late(struct pn__record *r, int64_t late);
void pn__record_event(struct pn__record *r);
void pn__record_past(struct pn__record *r);
void pn__record_why(struct pn__record *r, int c, int64_t late);

struct pn__records_sum {
	unsigned procs, threads;
	uint64_t waits, events, past;
	int64_t max; /* -1: no wait with a lateness */
	uint64_t late[PN__DECAY_HIST_BUCKETS];
	int64_t why_max[PN__WHY_COUNT];
	uint64_t why_n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS]; /* above each why_above */
};
/* Sums the records of the file at fd into *s: 0, or -errno (-EINVAL: a page that is not a
 * record, where it stops). */
int pn__records_sum(int fd, struct pn__records_sum *s);

#endif
