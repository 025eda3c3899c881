/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "what precision costs here": the frontier rendered, and the
 * punctual variant that beats the kernel beyond the noise. */
#ifndef PUNCTUAL_PROBE_FRONTIER_H
#define PUNCTUAL_PROBE_FRONTIER_H

#include <stdbool.h>
#include <stdio.h>

#include "measure/frontier.h"
#include "probe/reco.h"

struct probe_frontier {
	bool run;
	struct frontier *f; /* NULL until measured */
	int best;           /* the variant advised at 1 ms, or -1 */
	int won;            /* the stretches it won */
	int len_1ms;        /* the index of the 1 ms length, or -1 */
};

/* Runs c into a new *f until the tool's stop, for this section and the shared CPUs': 0 or
 * the run's -errno; exits 1 out of memory. */
int probe_frontier_run(struct frontier_config *c, struct frontier **f);

#endif
