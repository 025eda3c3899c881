/* SPDX-License-Identifier: MIT */
/* The cause of one traced wait, by the library's rule (pn__why_classify), from what the
 * kernel side saw (event.h); pure, so that its arithmetic is tested without BPF. */
#ifndef PUNCTUAL_WHY_EXPLAIN_H
#define PUNCTUAL_WHY_EXPLAIN_H

#include <stdbool.h>

#include "measure/causes.h"
#include "why/event.h"

/* The wait's lateness (ran - soft, ns, never below 0). */
int64_t why_late(const struct why_event *e);
/* e's record: its lateness, run-queue wait and cause; throttled_level is the quota level
 * (an index into the target's causes_cgroup) whose cpu.stat rose while it waited, or -1. */
struct cause_rec why_explain(const struct why_event *e, int throttled_level);

#endif
