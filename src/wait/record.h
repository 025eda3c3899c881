/* SPDX-License-Identifier: MIT */
/*
 * record.h: PUNCTUAL_STATS_FILE's records (record.c): each thread's counts kept in a page
 * of that file as they accrue, so that they survive however the process ends (its exit,
 * SIGTERM's default action, SIGKILL, a crash) with nothing of the program's changed: no
 * signal handler, no descriptor kept. `run --runs` and `tune` sum them (pn__records_sum).
 * Internal.
 */
#ifndef PUNCTUAL_WAIT_RECORD_H
#define PUNCTUAL_WAIT_RECORD_H

#include <stdint.h>

#include "wait/decay_hist.h"
#include "wait/why.h"

/* A page of the file: a header written with the page, then counts updated in place. A
 * page may carry the counts of several threads of one process, one after another (a
 * thread's page goes to the process's next new thread when it exits), never two at once. */
struct pn__record {
	char magic[8];    /* PN__RECORD_MAGIC */
	uint32_t size;    /* the page's bytes: the next record starts this far on */
	int32_t pid;      /* the process whose threads it counts */
	uint32_t threads; /* threads that counted here */
	uint32_t unused;
	int64_t why_above; /* the causes' table counts the buckets wholly above this (ns);
	                    * PN__RECORD_GIVEN: all (a threshold given filtered each wait);
	                    * PN__RECORD_AUTO: twice the record's median */
	uint64_t waits;    /* waits that ended (a lateness each) */
	uint64_t events;   /* observed waits that their event ended before the deadline */
	uint64_t past;     /* waits whose deadline had passed at the call */
	int64_t max;       /* the largest lateness, ns; -1: none */
	uint64_t late[PN__DECAY_HIST_BUCKETS]; /* the waits by lateness bucket */
	int64_t why_max[PN__WHY_COUNT];        /* PUNCTUAL_EXPLAIN's causes (why.h) */
	uint32_t why_n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS];
};
#define PN__RECORD_MAGIC "pn-rec2"
#define PN__RECORD_GIVEN (-2)
#define PN__RECORD_AUTO  (-1)

/* The file the records go to (an absolute path; NULL or "": none), from the shim's start,
 * and the causes' threshold its records carry (why_above). */
void pn__record_setup(const char *path, int64_t why_above);
/* A record for the calling thread: a page of the process's that a thread left, else a page
 * appended to the file (created 0600 if missing) and mapped; NULL without a file, or when
 * it cannot be had (its directory gone, unwritable, past 64 MiB: a bound on what a run of
 * many processes may take). A file that is a link, no regular file, another user's than
 * the euid's or writable by others gives no record, then or later, in this process.
 * Async-signal-safe: system calls and atomics only. */
struct pn__record *pn__record_take(void);
/* The calling thread exits: r goes to the process's next new thread (NULL: nothing). */
void pn__record_give(struct pn__record *r);
/* In a fork()ed child, for each record the parent's threads held: unmapped here (the
 * parent goes on counting in it); then pn__record_forked, for the pages the parent's exited
 * threads left. The child's thread takes a record of its own. */
void pn__record_drop(struct pn__record *r);
void pn__record_forked(void);

/* A wait's end into r (NULL: nothing): one ended late ns past its deadline; one its event
 * ended; one past at the call; a late wait's cause (c, enum pn__why_cause). */
void pn__record_late(struct pn__record *r, int64_t late);
void pn__record_event(struct pn__record *r);
void pn__record_past(struct pn__record *r);
void pn__record_why(struct pn__record *r, int c, int64_t late);

/* What a file of records holds, summed. */
struct pn__records_sum {
	unsigned procs, threads;
	uint64_t waits, events, past;
	int64_t max; /* -1: no wait with a lateness */
	uint64_t late[PN__DECAY_HIST_BUCKETS];
	int64_t why_max[PN__WHY_COUNT];
	uint64_t why_n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS]; /* each record's table above
	                                                        * its why_above */
};
/* Sums the records of the file open at fd into *s (zeroed first): 0, or -errno (-EINVAL: a
 * page that is not a record, where it stops; what it summed before stays). */
int pn__records_sum(int fd, struct pn__records_sum *s);

#endif
