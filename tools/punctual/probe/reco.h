/* SPDX-License-Identifier: MIT */
/* One of `punctual probe`'s recommendations, as the text and --json render it: what kind of
 * advice, the command or setting it names, and the figure it moved when the probe measured the
 * change itself. */
#ifndef PUNCTUAL_PROBE_RECO_H
#define PUNCTUAL_PROBE_RECO_H

#include <stdbool.h>

struct probe_reco {
	const char *kind;   /* slack, precise, budget, shared, epoll, clock, cpus, pm_qos,
	                     * throttling, quota, preemption, busy, host, timers */
	char command[160];  /* what to run or set; "" when none */
	bool measured;      /* the probe measured the change: figure, before, after */
	const char *figure; /* e.g. "p50_ns", "p99_ns", "late_share" */
	double before, after;
	char text[768];
};

#endif
