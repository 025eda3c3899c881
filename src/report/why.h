/* SPDX-License-Identifier: MIT */
/*
 * why.h: the cause of each late wait, named from counters the kernel keeps anyway: one rule
 * for the program's waits (PUNCTUAL_EXPLAIN) and `punctual sleep --periodic --explain`.
 * Internal.
 */
#ifndef PUNCTUAL_REPORT_WHY_H
#define PUNCTUAL_REPORT_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist/decay_hist.h"

/* The causes of a late wait, most specific first: the first that holds names it. irq and
 * stolen need the per-CPU files, too dear around every wait: only the tool reads them. */
enum pn__why_cause {
	PN__WHY_THROTTLED, /* a cgroup's CFS quota ran out during the wait */
	PN__WHY_PREEMPTED, /* run-queue wait for half the lateness or more */
	PN__WHY_MIGRATED,  /* it woke on another CPU than it waited on */
	PN__WHY_IRQ,       /* interrupts on its CPU above their usual rate */
	PN__WHY_STOLEN,    /* steal time on its CPU */
	PN__WHY_SLACK,     /* within the thread's timer slack */
	PN__WHY_WAKEUP,    /* none of these: the kernel's own wakeup latency */
	PN__WHY_COUNT
};

struct pn__why_evidence {
	int64_t late;   /* ns past the deadline */
	bool throttled; /* a quota level's cpu.stat rose during the wait */
	int64_t waited; /* its run-queue wait, ns (< 0: unread) */
	bool moved;
	bool irqs, stolen; /* the tool's loop only */
	int64_t slack;
};
/* The cause (enum pn__why_cause) the rule names for e. */
int pn__why_classify(const struct pn__why_evidence *e);

/* A thread's late waits by cause and lateness bucket, the threshold picked at the end. */
struct pn__why {
	bool rt; /* a realtime thread: no slack */
	int64_t max[PN__WHY_COUNT];
	uint32_t n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS];
	uint64_t unread; /* late waits whose counters could not be read */
};

struct pn__why_snap {
	int64_t run_delay; /* -1: unread */
	uint64_t throttled;
	int64_t slack;
	int cpu;
};

/* The shim's start: explain is PUNCTUAL_EXPLAIN's value (a duration, "auto", or off).
 * Opens the cpu.stat of the levels with a quota. Whether to take the counters around each
 * timed wait. */
bool pn__why_setup(const char *explain);
/* pn__why_step's late before a wait. */
#define PN__WHY_BEFORE INT64_MIN
/* Before a wait (late PN__WHY_BEFORE): reads the counters into *s. After one late ns past
 * its deadline: reads them again, names the cause and counts it. One entry for both, so
 * that the shim reaches the library through few symbols. */
void pn__why_step(struct pn__why_snap *s, int64_t late);
/* PUNCTUAL_EXPLAIN's threshold, or -1: "auto". */
int64_t pn__why_threshold(void);
/* The first lateness bucket pn__why_render(..., above_auto, ...) counts. */
int pn__why_table_from(int64_t above_auto);
/* The causes of why's waits later than the threshold as text lines after prefix, into buf:
 * the length, 0 without a late wait. */
size_t pn__why_render(const struct pn__why *why, int64_t above_auto, const char *prefix, char *buf,
                      size_t n);
const char *pn__why_name(int c);

#endif
