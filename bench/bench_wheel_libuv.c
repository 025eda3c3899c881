/* SPDX-License-Identifier: MIT */
/* bench_wheel_libuv.c: libuv's uv_timer behind bench_wheel's table (it counts ms). */
#include <stdlib.h>
#include <uv.h>

#include "bench_wheel.h"

struct uv_ctx {
	uv_loop_t loop;
	uv_timer_t *t;
	size_t n;
};

static void uv_cb(uv_timer_t *h)
{
	(void)h;
	fired_total++;
}

static void *uvp_open(size_t n)
{
	struct uv_ctx *c = calloc(1, sizeof(*c));
	c->t = calloc(n, sizeof(*c->t));
	c->n = n;
	if (!c->t || uv_loop_init(&c->loop) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		uv_timer_init(&c->loop, &c->t[i]);
	return c;
}

static void uvp_sync(void *ctx)
{
	uv_update_time(&((struct uv_ctx *)ctx)->loop);
}

static void uvp_add(void *ctx, size_t i, int64_t delay)
{
	struct uv_ctx *c = ctx;
	uv_timer_start(&c->t[i], uv_cb, (uint64_t)(delay / MS), 0); /* libuv counts ms */
}

static void uvp_cancel(void *ctx, size_t i)
{
	uv_timer_stop(&((struct uv_ctx *)ctx)->t[i]);
}

static void uvp_expire(void *ctx)
{
	uv_run(&((struct uv_ctx *)ctx)->loop, UV_RUN_NOWAIT);
}

static void uvp_close(void *ctx)
{
	struct uv_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		uv_close((uv_handle_t *)&c->t[i], NULL);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	uv_loop_close(&c->loop);
	free(c->t);
	free(c);
}

const struct peer bench_wheel_libuv = BENCH_PEER(uvp, "libuv");
