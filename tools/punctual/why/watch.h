/* SPDX-License-Identifier: MIT */
/* Tracing beside the caller's own work (watch.c): the probe's "why late" traces the host
 * while its own loop runs, tune a run's process where the shim's records are absent. The
 * kernel side is loaded once; a thread drains it between start and stop. Every build has
 * this API: without eBPF, why_watch_open says so. */
#ifndef PUNCTUAL_WHY_WATCH_H
#define PUNCTUAL_WHY_WATCH_H

#include <stdbool.h>

#include "why/trace.h"

/* 0 where this process can trace through eBPF here, else -errno with *why (a sentence
 * without its end's period): -ENOSYS a build without eBPF, -ENOENT a kernel without BTF,
 * -EPERM neither root nor CAP_BPF and CAP_PERFMON. */
int why_can_trace(const char **why);

struct why_watch;

/* Loads the kernel side for pid (0: every process but this one), each event to go to sink
 * with ctx once started: 0 with *w, or -errno with *step naming what failed ("load",
 * "attach", ...; -ENOSYS: a build without eBPF). */
int why_watch_open(struct why_watch **w, long pid, why_sink *sink, void *ctx, const char **step);
/* Traces from now on, in a thread of its own with every signal blocked, pid (> 0: another
 * process than the last; 0: the one opened for) until why_watch_stop: 0, or -errno. */
int why_watch_start(struct why_watch *w, long pid);
/* Stops the trace, drains what it gathered into the sink and waits for its thread; how it
 * ran into *run: 0, or the trace's -errno. */
int why_watch_stop(struct why_watch *w, struct why_run *run);
/* Detaches and frees w (NULL: nothing); a trace still running is stopped first. */
void why_watch_close(struct why_watch *w);

#endif
