/* SPDX-License-Identifier: MIT */
/*
 * why.h: PUNCTUAL_EXPLAIN (why.c), the cause of each late wait a thread made, named from
 * counters the kernel keeps anyway: the classification of `punctual sleep --periodic
 * --explain` applied to the program's own waits, for `run --stats --explain`. Internal.
 */
#ifndef PUNCTUAL_WAIT_WHY_H
#define PUNCTUAL_WAIT_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wait/decay_hist.h"

/* The causes of a late wait, most specific first: the first that holds names it. One rule
 * for the library's waits (PUNCTUAL_EXPLAIN) and the tool's periodic loop (`sleep
 * --periodic --explain`); irq and stolen need the per-CPU files (/proc/interrupts,
 * /proc/stat), too dear around every wait of a program: only the tool's loop reads them. */
enum pn__why_cause {
	PN__WHY_THROTTLED, /* a cgroup's CFS quota ran out during the wait */
	PN__WHY_PREEMPTED, /* runqueue wait (schedstat run_delay) for half the lateness or more */
	PN__WHY_MIGRATED,  /* it woke on another CPU than it waited on */
	PN__WHY_IRQ,       /* device interrupts or softirqs on its CPU above their usual rate */
	PN__WHY_STOLEN,    /* the hypervisor reported steal time on its CPU */
	PN__WHY_SLACK,     /* within the thread's timer slack */
	PN__WHY_WAKEUP,    /* none of these: the kernel's own wakeup latency */
	PN__WHY_COUNT
};

/* What the counters read around a late wait say. */
struct pn__why_evidence {
	int64_t late;      /* ns past the deadline */
	bool throttled;    /* a quota level's cpu.stat rose during the wait */
	int64_t waited;    /* its run-queue wait meanwhile, ns (< 0: unread) */
	bool moved;        /* it woke on another CPU */
	bool irqs, stolen; /* the per-CPU files' verdicts (the tool's loop only) */
	int64_t slack;     /* the thread's timer slack (0 for a real-time thread) */
};
/* The cause (enum pn__why_cause) the rule names for e. */
int pn__why_classify(const struct pn__why_evidence *e);

/* A thread's causes: its late waits counted by cause and lateness bucket (so that the
 * report picks its threshold at the end). */
struct pn__why {
	bool rt; /* a realtime thread: the kernel gives it no slack */
	int64_t max[PN__WHY_COUNT];
	uint32_t n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS];
	uint64_t unread; /* late waits whose counters could not be read */
};

/* The counters before a wait. */
struct pn__why_snap {
	int64_t run_delay; /* -1: unread */
	uint64_t throttled;
	int64_t slack;
	int cpu;
};

/* The shim's start (pn__stats_setup): explain is PUNCTUAL_EXPLAIN's value (a threshold: a
 * duration, or "auto" for twice each thread's median lateness; NULL, empty or "0": off).
 * Opens the cpu.stat of the cgroup levels with a CFS quota (only those can throttle).
 * Returns whether the shim is to take the counters around each timed wait. */
bool pn__why_setup(const char *explain);
/* pn__why_step's late before a wait. */
#define PN__WHY_BEFORE INT64_MIN
/* Before a wait (late PN__WHY_BEFORE): reads the counters into *s (the thread's schedstat
 * opened at its first). After a wait that ended late ns past its deadline (late > 0): reads
 * them again, names the cause and counts it in the calling thread's state. One entry for
 * both, so that the shim reaches the library through few symbols (docs/DESIGN.md). */
void pn__why_step(struct pn__why_snap *s, int64_t late);
/* The threshold PUNCTUAL_EXPLAIN gave (its waits at or below it never counted), or -1:
 * "auto". */
int64_t pn__why_threshold(void);
/* The first lateness bucket pn__why_render(..., above_auto, ...) counts. */
int pn__why_table_from(int64_t above_auto);
/* The causes of why's waits later than the threshold (above_auto for "auto"), as text
 * lines, each after prefix, into buf (size n): the length, 0 without a late wait. */
size_t pn__why_render(const struct pn__why *why, int64_t above_auto, const char *prefix, char *buf,
                      size_t n);
/* The cause's name: "throttled", ..., "wakeup". */
const char *pn__why_name(int c);

#endif
