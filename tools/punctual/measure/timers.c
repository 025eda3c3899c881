/* SPDX-License-Identifier: MIT */
/*
 * measure/timers.c: the coalescing workload (N timers on a pn_wheel in real time) and
 * the offline optimum of wakeups for the windows the timers fired in. A wakeup is one
 * pass of the loop: a sleep that ended and an expiry of the wheel, whether or not a
 * timer was due; that is what the process pays, and what the optimum bounds.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "contract.h"
#include "util/progress.h"
#include "measure/timers.h"

/* ---- windows ----------------------------------------------------------------------- */

int windows_add(struct windows *ws, int64_t lo, int64_t hi)
{
	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? ws->cap * 2 : 4096;
		struct window *w = realloc(ws->w, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		ws->w = w;
		ws->cap = cap;
	}
	ws->w[ws->n++] = (struct window){lo, hi};
	return 0;
}

static int by_right_end(const void *a, const void *b)
{
	const struct window *x = a, *y = b;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

static int by_left_end(const void *a, const void *b)
{
	const struct window *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

uint64_t windows_optimum(struct window *win, size_t n)
{
	if (n == 0)
		return 0; /* win may be NULL, which qsort must not get even for 0 elements */
	qsort(win, n, sizeof(*win), by_right_end);
	uint64_t wakeups = 0;
	int64_t at = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (wakeups && win[i].lo <= at)
			continue; /* already open at the last wakeup, which is <= its right end */
		at = win[i].hi;
		wakeups++;
	}
	return wakeups;
}

uint64_t windows_deadlines(struct window *win, size_t n)
{
	if (n == 0)
		return 0;
	qsort(win, n, sizeof(*win), by_left_end);
	uint64_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += i == 0 || win[i].lo != win[i - 1].lo;
	return count;
}

/* ---- the workload ------------------------------------------------------------------ */

struct job {
	struct pn_timer t;
	int64_t deadline; /* the one it is armed for (the wheel re-arms periodic ones) */
};

struct run {
	const struct timers_config *c;
	struct timers_result *r;
	struct windows ws;
	int64_t now; /* of the expiry in progress */
	int error;   /* the first failure inside a callback: -ENOMEM */
};

static int64_t uniform(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(pn__splitmix64(s) % (uint64_t)(hi - lo + 1));
}

static int64_t draw_delay(const struct timers_config *c, uint64_t *s)
{
	switch (c->dist) {
	case TIMERS_UNIFORM:
		return uniform(s, c->a, c->b);
	case TIMERS_BIMODAL: {
		int64_t m = pn__splitmix64(s) & 1 ? c->b : c->a;
		return uniform(s, m - m / 2, m + m / 2);
	}
	case TIMERS_FIXED:
		break;
	}
	return c->a;
}

static int64_t precision_for(const struct timers_config *c, int64_t delay)
{
	if (c->percent < 0)
		return c->precision;
	return (int64_t)((double)delay * c->percent / 100.0);
}

static void on_fire(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	struct run *run = arg;
	struct timers_result *r = run->r;
	struct job *j = (struct job *)t;
	int64_t d = j->deadline;
	int64_t hi = d + (t->latest - t->deadline); /* the fired window's right end */
	r->fired++;
	if (run->now < d)
		r->early++;
	else if (run->now > hi)
		r->past_window++;
	pn_hist_record(&r->late, run->now - d);
	int e = windows_add(&run->ws, d, hi);
	if (e < 0 && !run->error)
		run->error = e;
	if (t->period > 0) {
		r->missed += (uint64_t)((t->deadline - d) / t->period - 1);
		j->deadline = t->deadline;
	}
}

/* Adds c's timers to w, due from start on. 0 or pn_wheel's -errno. */
static int add_timers(const struct timers_config *c, struct pn_wheel *w, struct job *jobs,
                      struct run *run, int64_t start)
{
	uint64_t seed = c->seed;
	for (long i = 0; i < c->count; i++) {
		struct job *j = &jobs[i];
		int64_t delay = draw_delay(c, &seed), p = precision_for(c, delay);
		int e;
		pn_timer_init(&j->t, on_fire, run);
		if (c->periodic) {
			j->deadline = start + uniform(&seed, 1, delay); /* a random phase */
			e = pn_wheel_add_periodic(w, &j->t, j->deadline, p, delay);
		} else {
			j->deadline = start + delay;
			e = pn_wheel_add(w, &j->t, j->deadline, p);
		}
		if (e < 0)
			return e;
	}
	return 0;
}

static bool stopped(const struct timers_config *c)
{
	return c->stop && *c->stop;
}

/* The loop: sleeps over each coalesced window and expires the wheel, until end or a
 * stop (c->stop). */
static void loop(struct pn_wheel *w, struct run *run, int64_t start, int64_t end)
{
	struct timers_result *r = run->r;
	int64_t lo, hi, last_progress = start;
	while (!run->error && !stopped(run->c) && pn_wheel_window(w, &lo, &hi) == 0 && lo < end) {
		if (run->ws.n >= TIMERS_MAX_WINDOWS) {
			r->truncated = true;
			break;
		}
		/* Waking anywhere in [lo, hi] fires the same timers, each in its window. */
		pn_sleep_until(lo, hi - lo);
		run->now = pn_now();
		pn_wheel_expire(w, run->now);
		r->wakeups++;
		if (run->now - last_progress > 250000000) {
			last_progress = run->now;
			progress("timers: %llu fired, %llu wakeups, %.1f s left",
			         (unsigned long long)r->fired, (unsigned long long)r->wakeups,
			         (double)(end - run->now) / 1e9);
		}
	}
	progress_done();
}

int timers_run(const struct timers_config *c, struct timers_result *r)
{
	memset(r, 0, sizeof(*r)); /* not a compound literal: the histogram is large */
	pn_hist_init(&r->late);
	struct run run = {.c = c, .r = r};
	struct pn_wheel *w;
	int e = pn_wheel_new(&w);
	if (e < 0)
		return e;
	struct job *jobs = calloc((size_t)c->count, sizeof(*jobs));
	if (!jobs) {
		pn_wheel_free(w);
		return -ENOMEM;
	}
	int64_t start = pn_now() + 5000000 + c->count * 100, end = start + c->duration;
	e = add_timers(c, w, jobs, &run, start);
	if (e == 0) {
		loop(w, &run, start, end);
		e = run.error;
	}
	/* Stopped by the duration, not by the last firing: the run lasts the duration, and
	 * never less than nothing (start is ahead of the setup, maybe of every wakeup). */
	if (e == 0 && !r->truncated && !stopped(c) && pn_wheel_count(w) > 0)
		pn_sleep_until(end, 1000000);
	r->elapsed = pn_now() - start;
	if (r->elapsed < 0) /* stopped by a signal before the first was due */
		r->elapsed = 0;
	r->unfired = c->periodic ? 0 : (long)pn_wheel_count(w);
	pn_wheel_free(w);
	free(jobs);
	r->uncoalesced = windows_deadlines(run.ws.w, run.ws.n);
	r->optimum = windows_optimum(run.ws.w, run.ws.n);
	free(run.ws.w);
	return e;
}
