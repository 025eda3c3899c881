/* SPDX-License-Identifier: MIT */
/* Tracing beside the caller's own work: the kernel side loaded once, a thread draining it
 * between start and stop. Without eBPF in the build, why_watch_open says so. */
#ifndef PUNCTUAL_WHY_WATCH_H
#define PUNCTUAL_WHY_WATCH_H

#include <stdbool.h>

#include "why/trace.h"

/* 0 where this process can trace here, else -errno with *why: -ENOSYS no eBPF in the
 * build, -ENOENT no BTF, -EPERM neither root nor CAP_BPF and CAP_PERFMON. */
int why_can_trace(const char **why);

struct why_watch;

/* Loads the kernel side for pid (0: every process but this one; with children, the
 * processes it forks too): 0 with *w, or -errno with *step naming what failed. */
int why_watch_open(struct why_watch **w, long pid, bool children, why_sink *sink, void *ctx,
                   const char **step);
/* Traces pid (0: the one opened for) in a thread of its own, every signal blocked, until
 * why_watch_stop: 0, or -errno. A pid > 0 starts anew: the processes traced with the last
 * one are not, nor are their waits still to be drained. */
int why_watch_start(struct why_watch *w, long pid);
/* Traces pid with the one started, and its children (a watch opened with children): 0, or
 * -errno. */
int why_watch_follow(struct why_watch *w, long pid);
/* Stops the trace, drains it into the sink and joins its thread: 0, or the trace's -errno. */
int why_watch_stop(struct why_watch *w, struct why_run *run);
/* Detaches and frees w (NULL: nothing), stopping a trace still running. */
void why_watch_close(struct why_watch *w);

#endif
