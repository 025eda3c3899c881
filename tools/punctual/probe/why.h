/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s "why late" section: a short periodic loop of its own, the causes of its
 * late tail and the cgroup's throttling. */
#ifndef PUNCTUAL_PROBE_WHY_H
#define PUNCTUAL_PROBE_WHY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/causes.h"
#include "measure/others.h"
#include "probe/reco.h"
#include "why/report.h"

/* The host's late programs the report names. */
#define PROBE_HOST_TOP  5
#define PROBE_HOST_TEXT 3

/* PM QoS's blocks: this many pairs of without and with, alternating. */
#define QOS_PAIRS 4

struct probe_why {
	bool run;
	int64_t interval, duration, elapsed;
	uint64_t cycles, missed, early;
	int64_t p50, p99, max; /* lateness, ns */
	int status;            /* -errno: no attribution */
	struct causes_cgroup cg;
	struct pn__cgroup_stat st[CAUSES_LEVELS]; /* at the end */
	int st_status[CAUSES_LEVELS];
	struct cause_table tab; /* later than 2x the median */
	int runnable, cpus;     /* procs_running at the end, CPUs online */
	struct others others;   /* other processes during the loop */
	int others_status;
	/* every other program's timed waits, traced during the loop (root), the latest first */
	struct {
		int status; /* 0 traced, or -errno: why_not says why */
		char why_not[160];
		int64_t elapsed;
		size_t programs, late; /* with a timed wait; with one late */
		struct why_proc top[PROBE_HOST_TOP];
		size_t ntop;
	} host;
	/* the same loop, shorter, in blocks alternating without and with /dev/cpu_dma_latency
	 * held at 0: a wakeup from idle late for the guest's own idle states, not the host's */
	struct {
		int status;            /* -errno: the file cannot be held (not root) */
		int64_t elapsed;       /* with it held */
		uint64_t cycles, late; /* with it; late: over 2x the main loop's median */
		uint64_t cycles_without, late_without;
		uint64_t block[QOS_PAIRS][2][2]; /* a pair's [without, with] [cycles, late] */
		int64_t block_p50[QOS_PAIRS][2];
		int64_t p50, p99; /* with it */
		int64_t p50_without, p99_without;
	} qos;
};

#endif
