/* SPDX-License-Identifier: MIT */
/* probe_frontier.h: `punctual probe`'s section "what precision costs here": the
 * lateness-versus-CPU frontier of measure/frontier.c, rendered, and the recommendation of
 * the budget that buys the most per CPU (probe_frontier.c). */
#ifndef PUNCTUAL_PROBE_FRONTIER_H
#define PUNCTUAL_PROBE_FRONTIER_H

#include <stdbool.h>
#include <stdio.h>

#include "measure/frontier.h"
#include "probe_reco.h"
#include "tool.h"

struct probe_frontier {
	bool run;
	struct frontier *f; /* NULL until measured */
	int best;           /* the variant that buys the most per CPU at 1 ms, or -1 */
	int len_1ms;        /* the index of the 1 ms length, or -1 */
};


/* Measures (exits 1 on failure). */
void probe_frontier_measure(struct probe_frontier *pf, bool quick);
/* A recommendation into *r: 1, else 0. */
int probe_frontier_reco(const struct probe_frontier *pf, struct probe_reco *r);
void probe_frontier_text(FILE *f, const struct probe_frontier *pf);
void probe_frontier_json(struct json *j, const struct probe_frontier *pf);
void probe_frontier_prom(FILE *f, const struct probe_frontier *pf);
void probe_frontier_free(struct probe_frontier *pf);

#endif
