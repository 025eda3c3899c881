/* SPDX-License-Identifier: MIT */
/*
 * The evidence of a traced wait, for the library's rule. The lateness, from the timer's
 * soft expiry to the moment the thread ran, splits into the timer's part, the wake path
 * and the run queue. Each cause but migrated holds half the lateness or more:
 *   preempted  the run-queue wait, less the interrupt and steal time in it;
 *   migrated   it ran on another CPU than it slept on;
 *   irq        interrupts and softirqs during the run-queue wait;
 *   stolen     steal time during it;
 *   slack      soft expiry to the firing, at most to the hard expiry. "late <= slack"
 *              would call wakeup nearly every wait slack delayed to its hard expiry.
 */
#include <stdint.h>

#include "contract.h"
#include "why/explain.h"

int64_t why_late(const struct why_event *e)
{
	return e->ran > e->soft ? e->ran - e->soft : 0;
}

struct cause_rec why_explain(const struct why_event *e, int throttled_level)
{
	int64_t late = why_late(e);
	int64_t queued = e->ran > e->woken ? e->ran - e->woken : 0;
	int64_t irq = (int64_t)e->irq_ns, steal = (int64_t)e->steal_ns;
	int64_t held = queued - irq - steal;
	int64_t window = (e->fired < e->hard ? e->fired : e->hard) - e->soft;
	bool in_window = window > 0 && 2 * window >= late;
	struct pn__why_evidence ev = {.late = late,
	                              .throttled = throttled_level >= 0,
	                              .waited = held > 0 ? held : 0,
	                              .moved = e->arm_cpu != e->run_cpu,
	                              .irqs = irq > 0 && 2 * irq >= late,
	                              .stolen = steal > 0 && 2 * steal >= late,
	                              .slack = in_window ? late : 0};
	int c = pn__why_classify(&ev);
	return (struct cause_rec){.late = late,
	                          .run_delay = queued,
	                          .cause = (uint8_t)c,
	                          .level = (int8_t)(c == PN__WHY_THROTTLED ? throttled_level : -1),
	                          .cpu = (int16_t)e->run_cpu};
}
