/* SPDX-License-Identifier: MIT */
/* The cause of one traced wait by the library's rule; pure, so that it is tested without
 * BPF. */
#ifndef PUNCTUAL_WHY_EXPLAIN_H
#define PUNCTUAL_WHY_EXPLAIN_H

#include <stdbool.h>

#include "measure/causes.h"
#include "why/event.h"

/* ran - soft, ns, never below 0. */
int64_t why_late(const struct why_event *e);
/* e's record; throttled_level is the quota level whose cpu.stat rose while it waited, or -1. */
struct cause_rec why_explain(const struct why_event *e, int throttled_level);

#endif
