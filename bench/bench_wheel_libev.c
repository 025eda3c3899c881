/* SPDX-License-Identifier: MIT */
/* bench_wheel_libev.c: libev's ev_timer behind bench_wheel's table. */
#include <stdlib.h>
#include <ev.h>

#include "bench_wheel.h"

struct lev_ctx {
	struct ev_loop *loop;
	ev_timer *t;
};

static void lev_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop, (void)w, (void)revents;
	fired_total++;
}

static void *lev_open(size_t n)
{
	struct lev_ctx *c = calloc(1, sizeof(*c));
	c->loop = ev_loop_new(EVFLAG_AUTO);
	c->t = calloc(n, sizeof(*c->t));
	if (!c->loop || !c->t)
		abort();
	for (size_t i = 0; i < n; i++)
		ev_timer_init(&c->t[i], lev_cb, 0., 0.);
	return c;
}

static void lev_sync(void *ctx)
{
	ev_now_update(((struct lev_ctx *)ctx)->loop);
}

static void lev_add(void *ctx, size_t i, int64_t delay)
{
	struct lev_ctx *c = ctx;
	ev_timer_set(&c->t[i], (double)delay * 1e-9, 0.);
	ev_timer_start(c->loop, &c->t[i]);
}

static void lev_cancel(void *ctx, size_t i)
{
	struct lev_ctx *c = ctx;
	ev_timer_stop(c->loop, &c->t[i]);
}

static void lev_expire(void *ctx)
{
	ev_run(((struct lev_ctx *)ctx)->loop, EVRUN_NOWAIT);
}

static void lev_close(void *ctx)
{
	struct lev_ctx *c = ctx;
	ev_loop_destroy(c->loop);
	free(c->t);
	free(c);
}

const struct peer bench_wheel_libev = BENCH_PEER(lev, "libev");
