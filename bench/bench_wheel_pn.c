/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel_pn.c: pn_wheel behind bench_wheel's table, with precision 0 in the
 * operations (no coalescing help) and 10% of each delay in the wakeup table, whose loop
 * sleeps over each coalesced window with pn_sleep_until (or, in simulated time, wakes
 * exactly at the window's end).
 */
#include <stdlib.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "bench_wheel.h"

struct pn_ctx {
	struct pn_wheel *w;
	struct pn_timer *t;
	int64_t base;
};

static void pn_cb(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w, (void)t, (void)arg;
	fired_total++;
}

static void *pn_open(size_t n)
{
	struct pn_ctx *c = calloc(1, sizeof(*c));
	c->t = malloc(n * sizeof(*c->t));
	if (!c->t || pn_wheel_new(&c->w) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		pn_timer_init(&c->t[i], pn_cb, NULL);
	c->base = pn_now();
	return c;
}

static void pn_sync(void *ctx)
{
	((struct pn_ctx *)ctx)->base = pn_now();
}

static void pn_add(void *ctx, size_t i, int64_t delay)
{
	struct pn_ctx *c = ctx;
	pn_wheel_add(c->w, &c->t[i], c->base + delay, 0);
}

static void pn_cancel(void *ctx, size_t i)
{
	struct pn_ctx *c = ctx;
	pn_wheel_cancel(c->w, &c->t[i]);
}

static void pn_expire(void *ctx)
{
	struct pn_ctx *c = ctx;
	pn_wheel_expire(c->w, pn_now());
}

static void pn_close(void *ctx)
{
	struct pn_ctx *c = ctx;
	pn_wheel_free(c->w);
	free(c->t);
	free(c);
}

/* ---- the wakeup table ---- */

static int64_t wk_now;

static void wk_cb(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	struct wjob *j = arg;
	job_fired(j, wk_now, 0);
	if (t->period)
		j->deadline = t->deadline;
}

/* pn_wheel in real time (or virtual: waking exactly at pn_wheel_next's time). */
static uint64_t pn_wakeups(const struct load *L, struct windows *ws)
{
	struct pn_wheel *w;
	struct wjob *jobs = calloc(L->count, sizeof(*jobs));
	if (!jobs || pn_wheel_new(&w) < 0)
		abort();
	/* 20 ms of lead so that adding every timer is done before the first is due */
	int64_t start = L->virtual_time ? 0 : pn_now() + 20 * MS;
	if (L->virtual_time)
		pn_wheel_expire(w, start); /* an empty wheel adopts the simulated time */
	setup_jobs(L, jobs, ws, start);
	for (size_t i = 0; i < L->count; i++) {
		pn_timer_init(&jobs[i].t, wk_cb, &jobs[i]);
		if (L->periodic)
			pn_wheel_add_periodic(w, &jobs[i].t, jobs[i].deadline, jobs[i].precision,
			                      jobs[i].period);
		else
			pn_wheel_add(w, &jobs[i].t, jobs[i].deadline, jobs[i].precision);
	}
	uint64_t wakeups = 0;
	int64_t lo, hi, end = L->periodic ? start + L->run : INT64_MAX;
	while (pn_wheel_window(w, &lo, &hi) == 0 && lo < end) {
		if (L->virtual_time) {
			wk_now = hi;
		} else {
			pn_sleep_until(lo, hi - lo);
			wk_now = pn_now();
		}
		pn_wheel_expire(w, wk_now);
		wakeups++;
	}
	pn_wheel_free(w);
	free(jobs);
	return wakeups;
}

const struct peer bench_wheel_pn =
        BENCH_PEER(pn, "pn_wheel", .wakeups = pn_wakeups, .simulated = true);
