/* SPDX-License-Identifier: MIT */
/*
 * measure/periodic.c: cyclictest's loop (absolute deadlines, next += interval), which
 * also counts the periods it missed, in one thread or one per CPU (cyclictest -S), with
 * the causes of late wakeups (measure/causes.c) when asked.
 *
 * Which wakeups are checked: with --explain D, those later than D. With the default
 * threshold, 2x the run's median, the median is known only at the end, so the loop
 * checks every wakeup of the first WARMUP, then those later than 1.25x the median so far
 * (recomputed every 64 wakeups); the table keeps those later than 2x the final median.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include "util/diag.h"
#include "util/progress.h"
#include "measure/periodic.h"

#define WARMUP       128
#define MAX_OUTLIERS 1024

/* Stopped: by the thread that hit stop_above, or by a SIGINT or SIGTERM (tool_stop). */
static bool stopped(const struct periodic_config *c)
{
	return (c->stop && atomic_load_explicit(c->stop, memory_order_relaxed)) || tool_stop;
}

static int64_t check_above(const struct periodic_config *c, const struct pn_hist *h,
                           int64_t *median)
{
	int64_t t = c->threshold;
	uint64_t n = pn_hist_count(h);
	if (!t) {
		if (n < WARMUP)
			t = -1; /* every wakeup */
		else {
			if ((n & 63) == 0 || !*median)
				*median = pn_hist_percentile(h, 50);
			t = *median + *median / 4;
		}
	}
	if (c->stop_above && t >= 0 && c->stop_above < t) /* t < 0: every wakeup already */
		t = c->stop_above;
	return t;
}

static int setup(const struct periodic_config *c, int idx, struct periodic_result *r)
{
	memset(r, 0, sizeof(*r)); /* not a compound literal: the histogram is large */
	pn_hist_init(&r->late);
	r->cpu = c->cpus ? c->cpus[idx] : -1;
	r->tid = gettid();
	r->causes_status = -ENODATA;
	if (r->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(r->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			return -errno;
	}
	if (c->slice_ns) {
		int e = pn_sleep_set_slice(c->slice_ns);
		if (e < 0)
			return e;
	}
	if (c->hist_us > 0) {
		r->hist = calloc((size_t)c->hist_us, sizeof(*r->hist));
		r->overflow_cycles = calloc(MAX_OUTLIERS, sizeof(*r->overflow_cycles));
		if (!r->hist || !r->overflow_cycles)
			return -ENOMEM;
	}
	return 0;
}

static void histogram(const struct periodic_config *c, struct periodic_result *r, int64_t late,
                      uint64_t cycle)
{
	int64_t us = late < 0 ? 0 : late / 1000;
	if (us < c->hist_us) {
		r->hist[us]++;
		return;
	}
	/* cyclictest keeps as many overflow cycle numbers as the histogram has rows */
	if (r->n_overflow_cycles < MAX_OUTLIERS && r->n_overflow_cycles < (size_t)c->hist_us)
		r->overflow_cycles[r->n_overflow_cycles++] = cycle;
	r->overflow++;
}

int periodic_run(const struct periodic_config *c, int idx, struct periodic_result *r)
{
	int e = setup(c, idx, r);
	if (e < 0)
		return r->status = e;
	struct pn_hist *h = &r->late;
	int64_t start = pn_now(), next = start + c->interval;
	int64_t end = c->duration ? start + c->duration : INT64_MAX; /* 0: until stopped */
	int64_t median = 0;
	if (c->explain || c->stop_above)
		r->causes_status = causes_thread_open(&r->causes, c->cg, start);
	bool attribute = r->causes_status == 0;
	while (next <= end && !stopped(c)) {
		struct timespec ts = {next / 1000000000LL, next % 1000000000LL};
		while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR &&
		       !stopped(c))
			;
		if (e == EINTR) { /* stopped (a signal): the cycle in progress is not one */
			e = 0;
			break;
		}
		if (e != 0) {
			e = -e; /* clock_nanosleep returns a positive errno */
			break;
		}
		int64_t now = pn_now();
		uint64_t cycle = pn_hist_count(h);
		r->last = now - next;
		if (r->last < 0)
			r->early++;
		/* the deadlines already past, which the loop skips */
		uint64_t skip =
		        now >= next + c->interval ? (uint64_t)((now - next) / c->interval) : 0;
		if (attribute) {
			int64_t t = check_above(c, h, &median);
			int8_t level = -1;
			int cause = causes_after(&r->causes, now, r->last, cycle, skip, r->last > t,
			                         &level);
			if (c->stop_above && r->last > c->stop_above) {
				r->stopped = true;
				r->stop_late = r->last;
				r->stop_cycle = cycle;
				r->stop_cause = cause;
				r->stop_level = level;
			}
		} else if (c->stop_above && r->last > c->stop_above) {
			r->stopped = true;
			r->stop_late = r->last;
			r->stop_cycle = cycle;
			r->stop_cause = -1;
			r->stop_level = -1;
		}
		pn_hist_record(h, r->last);
		if (r->hist)
			histogram(c, r, r->last, cycle);
		if (r->stopped) {
			if (c->stop)
				atomic_store(c->stop, true);
			break;
		}
		/* cyclictest skips the periods it overran without saying so: count them */
		next += c->interval;
		while (next <= now) {
			next += c->interval;
			r->missed++;
		}
		if (idx == 0 && (pn_hist_count(h) & 1023) == 0)
			progress("sleep --periodic: %llu cycles, max %.1f us",
			         (unsigned long long)pn_hist_count(h),
			         (double)pn_hist_max(h) / 1e3);
	}
	if (idx == 0)
		progress_done();
	if (attribute)
		causes_thread_close(&r->causes);
	r->elapsed = pn_now() - start;
	return r->status = e;
}

struct thread_arg {
	const struct periodic_config *c;
	int idx;
	struct periodic_result *r;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	periodic_run(a->c, a->idx, a->r);
	return NULL;
}

int periodic_run_threads(const struct periodic_config *c, struct periodic_result *r)
{
	if (c->nthreads == 1)
		return periodic_run(c, 0, &r[0]);
	pthread_t *th = calloc((size_t)c->nthreads, sizeof(*th));
	struct thread_arg *a = calloc((size_t)c->nthreads, sizeof(*a));
	if (!th || !a) {
		free(th);
		free(a);
		return -ENOMEM;
	}
	int e = 0, started = 0;
	/* small stacks: with --mlock every thread's stack is locked (8 MiB each by default) */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1u << 20);
	for (int i = 0; i < c->nthreads; i++) {
		a[i] = (struct thread_arg){c, i, &r[i]};
		int pe = pthread_create(&th[i], &attr, thread_main, &a[i]);
		if (pe) {
			e = -pe;
			if (c->stop)
				atomic_store(c->stop, true);
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < started && !e; i++)
		e = r[i].status;
	free(th);
	free(a);
	return e;
}

void periodic_free(struct periodic_result *r)
{
	free(r->hist);
	free(r->overflow_cycles);
	free(r->causes.rec);
	r->hist = r->overflow_cycles = NULL;
	r->causes.rec = NULL;
}
