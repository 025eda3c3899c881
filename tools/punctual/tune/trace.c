/* SPDX-License-Identifier: MIT */
/*
 * `punctual tune`'s runs of a program the shim cannot time: each run's processes traced
 * through eBPF (its main process, what the caller adds, and every child they fork), their
 * waits into the histogram the records would fill, so that the verdict's rule is the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"
#include "tune/tune.h"
#include "util/diag.h"
#include "why/watch.h"

struct tune_trace {
	struct why_watch *watch;
	struct run_fig *fig;
};

/* A wait of the run's processes into its histogram (the last run's never reach it). */
static void add(void *ctx, const struct why_event *e, const struct cause_rec *r)
{
	struct tune_trace *t = ctx;
	struct run_fig *f = t->fig;
	(void)e;
	if (!f)
		return;
	f->h[pn__decay_hist_bucket_of(r->late)]++;
	f->waits++;
	f->events++;
	if (r->late > f->max)
		f->max = r->late;
}

const char *tune_trace_refused(void)
{
	const char *why;
	return why_can_trace(&why) < 0 ? why : NULL;
}

struct tune_trace *tune_trace_open(void)
{
	struct tune_trace *t = calloc(1, sizeof(*t));
	const char *step = "";
	if (!t)
		die(1, "out of memory");
	/* opened on this process, never traced, until the first run's */
	int r = why_watch_open(&t->watch, getpid(), true, add, t, &step);
	if (r < 0)
		die(1, "eBPF tracing failed at %s: %s", step, strerror(-r));
	return t;
}

void tune_trace_begin(struct tune_trace *t, long pid, struct run_fig *f)
{
	memset(f, 0, sizeof(*f));
	f->p50 = f->p99 = f->max = -1;
	f->procs = 1;
	t->fig = f;
	int r = why_watch_start(t->watch, pid);
	if (r < 0)
		die(1, "cannot trace process %ld: %s", pid, strerror(-r));
}

void tune_trace_add(struct tune_trace *t, long pid)
{
	int r = why_watch_follow(t->watch, pid);
	if (r < 0)
		die(1, "cannot trace process %ld: %s", pid, strerror(-r));
}

void tune_trace_end(struct tune_trace *t)
{
	struct why_run run;
	int r = why_watch_stop(t->watch, &run);
	struct run_fig *f = t->fig;
	t->fig = NULL;
	if (r < 0)
		die(1, "eBPF tracing failed: %s", strerror(-r));
	if (f->waits) {
		f->p50 = (int64_t)tune_quantile(f, 0.5);
		f->p99 = (int64_t)tune_quantile(f, 0.99);
	}
}

void tune_trace_close(struct tune_trace *t)
{
	if (!t)
		return;
	why_watch_close(t->watch);
	free(t);
}
