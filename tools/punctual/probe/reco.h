/* SPDX-License-Identifier: MIT */
/* One of `punctual probe`'s recommendations: its kind, the command it names, and the figure
 * it moved where the probe measured the change. */
#ifndef PUNCTUAL_PROBE_RECO_H
#define PUNCTUAL_PROBE_RECO_H

#include <stdbool.h>

struct probe_reco {
	const char *kind;   /* slack, precise, budget, ...: the JSON's kinds */
	char command[160];  /* what to run or set; "" when none */
	bool measured;      /* the probe measured the change: figure, before, after */
	const char *figure; /* "p99_ns" */
	double before, after;
	char text[768];
};

#endif
