/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel_sdevent.c: sd-event's time sources behind bench_wheel's table, and its own
 * loop on the wakeup table's workload (sd-event coalesces within each source's
 * accuracy, which is the timer's precision here).
 */
#include <stdlib.h>
#include <time.h>
#include <systemd/sd-event.h>

#include <punctual/clock.h>
#include "bench_wheel.h"

struct sd_ctx {
	sd_event *e;
	sd_event_source **s;
	size_t n;
	uint64_t base_us;
};

static int sd_cb(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s, (void)usec, (void)arg;
	fired_total++;
	return 0;
}

static void *sd_open(size_t n)
{
	struct sd_ctx *c = calloc(1, sizeof(*c));
	c->s = calloc(n, sizeof(*c->s));
	c->n = n;
	if (!c->s || sd_event_new(&c->e) < 0)
		abort();
	/* Sources made once, then re-timed and enabled per op: no allocation per op, as for
	 * the others. Accuracy 1 us: sd-event's default (250 ms) would not be comparable. */
	for (size_t i = 0; i < n; i++) {
		if (sd_event_add_time(c->e, &c->s[i], CLOCK_MONOTONIC, UINT64_MAX - 1, 1, sd_cb,
		                      NULL) < 0)
			abort();
		sd_event_source_set_enabled(c->s[i], SD_EVENT_OFF);
	}
	c->base_us = (uint64_t)pn_now() / 1000;
	return c;
}

static void sd_sync(void *ctx)
{
	((struct sd_ctx *)ctx)->base_us = (uint64_t)pn_now() / 1000;
}

static void sd_add(void *ctx, size_t i, int64_t delay)
{
	struct sd_ctx *c = ctx;
	sd_event_source_set_time(c->s[i], c->base_us + (uint64_t)(delay / US));
	sd_event_source_set_enabled(c->s[i], SD_EVENT_ONESHOT);
}

static void sd_cancel(void *ctx, size_t i)
{
	sd_event_source_set_enabled(((struct sd_ctx *)ctx)->s[i], SD_EVENT_OFF);
}

static void sd_expire(void *ctx)
{
	while (sd_event_run(((struct sd_ctx *)ctx)->e, 0) > 0)
		; /* one source per iteration */
}

static void sd_close(void *ctx)
{
	struct sd_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		sd_event_source_unref(c->s[i]);
	sd_event_unref(c->e);
	free(c->s);
	free(c);
}
/* ---- the wakeup table ---- */

static int sdw_cb(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)usec;
	struct wjob *j = arg;
	int64_t now = pn_now();
	job_fired(j, now, 999); /* sd-event works in us: its window ends up to 1 us later */
	if (j->period) {
		int64_t k = (now - j->deadline) / j->period + 1;
		j->deadline += k * j->period;
		sd_event_source_set_time(s, (uint64_t)(j->deadline + 999) / 1000);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* sd-event on the same workload; a wakeup is a sd_event_wait that blocked and woke with
 * something to dispatch. Deadlines are rounded up to its microseconds. */
static uint64_t sd_wakeups(const struct load *L, struct windows *ws)
{
	sd_event *e;
	struct wjob *jobs = calloc(L->count, sizeof(*jobs));
	if (!jobs || sd_event_new(&e) < 0)
		abort();
	int64_t start = pn_now() + 20 * MS;
	setup_jobs(L, jobs, ws, start);
	for (size_t i = 0; i < L->count; i++) {
		uint64_t acc = (uint64_t)jobs[i].precision / 1000;
		sd_event_source *s;
		if (sd_event_add_time(e, &s, CLOCK_MONOTONIC,
		                      (uint64_t)(jobs[i].deadline + 999) / 1000, acc ? acc : 1,
		                      sdw_cb, &jobs[i]) < 0)
			abort();
		jobs[i].handle = s;
	}
	uint64_t wakeups = 0;
	int64_t end = L->periodic ? start + L->run : INT64_MAX;
	size_t target = L->count;
	for (;;) {
		int64_t now = pn_now();
		if (now >= end || (!L->periodic && ws->n >= target))
			break;
		int r = sd_event_prepare(e);
		if (r == 0) {
			uint64_t timeout = L->periodic ? (uint64_t)(end - now) / 1000 : UINT64_MAX;
			r = sd_event_wait(e, timeout);
			if (r > 0)
				wakeups++;
		}
		if (r > 0)
			sd_event_dispatch(e);
		else if (r < 0)
			break;
	}
	for (size_t i = 0; i < L->count; i++)
		sd_event_source_unref(jobs[i].handle);
	sd_event_unref(e);
	free(jobs);
	return wakeups;
}

const struct peer bench_wheel_sdevent = BENCH_PEER(sd, "sd-event", .wakeups = sd_wakeups);
