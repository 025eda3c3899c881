/* SPDX-License-Identifier: MIT */
/* The tracing of `punctual why` (trace.c, built with PUNCTUAL_BPF): loads the kernel side,
 * gathers its events until the end, names each one's cause. Measures; never prints. */
#ifndef PUNCTUAL_WHY_TRACE_H
#define PUNCTUAL_WHY_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "measure/causes.h"
#include "why/event.h"

/* What to trace: one process (pid > 0, its threads, with the quota levels of its cgroup
 * in cg) or every process (pid 0, cg NULL), for duration ns (0: until stopped). */
struct why_target {
	long pid;
	int64_t duration;
	const struct causes_cgroup *cg;
};

/* Called for each wait that ended by its timer, with its cause named. */
typedef void why_sink(void *ctx, const struct why_event *e, const struct cause_rec *r);

/* How the tracing ended. */
struct why_run {
	int64_t elapsed;  /* ns traced */
	bool exited;      /* the target ended first */
	uint64_t samples; /* cpu.stat readings (0 without a quota level) */
};

/* Traces target until its duration, the process's end or a stop (tool_stop), handing each
 * event to sink: 0, or -errno with *step naming what failed ("load", "attach", ...). */
int why_trace(const struct why_target *target, why_sink *sink, void *ctx, struct why_run *run,
              const char **step);

#endif
