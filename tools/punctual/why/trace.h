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

/* The kernel side loaded and attached, with its ring buffer: one target at a time. */
struct why_tracer;

/* Loads the kernel side for target and attaches it, each event to go to sink with ctx:
 * 0 with *t, or -errno with *step naming what failed ("load", "attach", ...). target and
 * ctx must outlive the tracer. */
int why_trace_open(struct why_tracer **t, const struct why_target *target, why_sink *sink,
                   void *ctx, const char **step);
/* Traces until the target's duration, its end, a stop (tool_stop), or stop_fd readable
 * (-1: none), handing each event to the sink: 0, or -errno. May run again after. */
int why_trace_run(struct why_tracer *t, int stop_fd, struct why_run *run);
/* From now on traces target (pid > 0; the tracer's was one too) instead, its quota levels
 * read anew: 0, or -EINVAL. Events of the one before may still reach the sink. */
int why_trace_retarget(struct why_tracer *t, const struct why_target *target);
/* Detaches and frees t (NULL: nothing). */
void why_trace_close(struct why_tracer *t);

/* Traces target until its duration, the process's end or a stop (tool_stop), handing each
 * event to sink: 0, or -errno with *step naming what failed ("load", "attach", ...). */
int why_trace(const struct why_target *target, why_sink *sink, void *ctx, struct why_run *run,
              const char **step);

#endif
