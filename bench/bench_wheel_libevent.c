/* SPDX-License-Identifier: MIT */
/* bench_wheel_libevent.c: libevent's evtimer behind bench_wheel's table. */
#include <stdlib.h>
#include <event2/event.h>

#include "bench_wheel.h"

struct le_ctx {
	struct event_base *base;
	struct event **ev;
	size_t n;
};

static void le_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	fired_total++;
}

static void *le_open(size_t n)
{
	struct le_ctx *c = calloc(1, sizeof(*c));
	c->base = event_base_new();
	c->ev = calloc(n, sizeof(*c->ev));
	c->n = n;
	if (!c->base || !c->ev)
		abort();
	for (size_t i = 0; i < n; i++)
		c->ev[i] = evtimer_new(c->base, le_cb, NULL);
	return c;
}

static void le_sync(void *ctx)
{
	(void)ctx; /* libevent reads the clock itself */
}

static void le_add(void *ctx, size_t i, int64_t delay)
{
	struct le_ctx *c = ctx;
	struct timeval tv = {.tv_sec = delay / SEC, .tv_usec = (delay % SEC) / US};
	evtimer_add(c->ev[i], &tv);
}

static void le_cancel(void *ctx, size_t i)
{
	evtimer_del(((struct le_ctx *)ctx)->ev[i]);
}

static void le_expire(void *ctx)
{
	event_base_loop(((struct le_ctx *)ctx)->base, EVLOOP_NONBLOCK);
}

static void le_close(void *ctx)
{
	struct le_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		event_free(c->ev[i]);
	event_base_free(c->base);
	free(c->ev);
	free(c);
}

const struct peer bench_wheel_libevent = BENCH_PEER(le, "libevent");
