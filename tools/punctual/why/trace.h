/* SPDX-License-Identifier: MIT */
/* The tracing of `punctual why`: loads the kernel side, gathers its events, names each
 * one's cause. Measures; never prints. */
#ifndef PUNCTUAL_WHY_TRACE_H
#define PUNCTUAL_WHY_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "measure/causes.h"
#include "why/event.h"

/* One process (pid > 0, with its cgroup's quota levels; with children, the processes it
 * forks as well) or every process (pid 0), for duration ns (0: until stopped). */
struct why_target {
	long pid;
	int64_t duration;
	const struct causes_cgroup *cg;
	bool children;
};

/* Called for each wait that ended by its timer, with its cause named. */
typedef void why_sink(void *ctx, const struct why_event *e, const struct cause_rec *r);

/* How the tracing ended. */
struct why_run {
	int64_t elapsed;
	bool exited;      /* the target ended first */
	uint64_t samples; /* cpu.stat readings */
};

/* The kernel side loaded and attached: one target at a time. */
struct why_tracer;

/* Loads and attaches the kernel side for target: 0 with *t, or -errno with *step naming
 * what failed. target and ctx must outlive the tracer. */
int why_trace_open(struct why_tracer **t, const struct why_target *target, why_sink *sink,
                   void *ctx, const char **step);
/* Traces until the target's duration, its end, a stop, or stop_fd readable (-1: none): 0,
 * or -errno. May run again after. */
int why_trace_run(struct why_tracer *t, int stop_fd, struct why_run *run);
/* Traces target (pid > 0) from now on, its quota levels read anew: 0, or -EINVAL. The
 * waits of the one before, and of the processes traced with it, no longer reach the sink. */
int why_trace_retarget(struct why_tracer *t, const struct why_target *target);
/* Traces process pid with the target, and its children from now on (a target opened with
 * children): 0, or -errno (-EINVAL: not such a target). */
int why_trace_follow(struct why_tracer *t, long pid);
/* Detaches and frees t (NULL: nothing). */
void why_trace_close(struct why_tracer *t);

/* open, run and close in one: 0, or -errno with *step naming what failed. */
int why_trace(const struct why_target *target, why_sink *sink, void *ctx, struct why_run *run,
              const char **step);

#endif
