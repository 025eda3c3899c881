/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel_timeout.c: wahern/timeout (timeout.c, a hierarchical hashed wheel) behind
 * bench_wheel's table. Only this adapter is ours: timeout.c is built from a checkout the
 * caller names (make bench TIMEOUT_C_DIR=..., CMake's TIMEOUT_C_DIR), with
 * WHEEL_NUM=7 so that its ticks can be ns up to 300 s (6 bits x 7 wheels = 2^42 ns,
 * 73 min; its default of 4 wheels would cover 16.8 ms). Its timers are relative to its
 * own clock, which timeouts_update sets; it pops due timers unsorted (timeouts_get) and
 * calls nothing, so the adapter calls each one's callback, as a loop would.
 */
#include <stdlib.h>

#include <punctual/clock.h>
#include "bench_wheel.h"
#include "timeout.h"

struct to_ctx {
	struct timeouts *T;
	struct timeout *t;
};

static void to_cb(void)
{
	fired_total++;
}

static void *to_open(size_t n)
{
	struct to_ctx *c = calloc(1, sizeof(*c));
	int err;
	c->t = calloc(n, sizeof(*c->t));
	if (!c->t || !(c->T = timeouts_open(TIMEOUT_nHZ, &err)))
		abort();
	for (size_t i = 0; i < n; i++) {
		timeout_init(&c->t[i], 0);   /* relative to the wheel's time */
		c->t[i].callback.fn = to_cb; /* (its timeout_setcb macro names its own member) */
	}
	timeouts_update(c->T, (timeout_t)pn_now());
	return c;
}

static void to_sync(void *ctx)
{
	timeouts_update(((struct to_ctx *)ctx)->T, (timeout_t)pn_now());
}

static void to_add(void *ctx, size_t i, int64_t delay)
{
	struct to_ctx *c = ctx;
	timeouts_add(c->T, &c->t[i], (timeout_t)delay);
}

static void to_cancel(void *ctx, size_t i)
{
	struct to_ctx *c = ctx;
	timeouts_del(c->T, &c->t[i]);
}

static void to_expire(void *ctx)
{
	struct to_ctx *c = ctx;
	struct timeout *to;
	timeouts_update(c->T, (timeout_t)pn_now());
	while ((to = timeouts_get(c->T)))
		((void (*)(void))to->callback.fn)();
}

static void to_close(void *ctx)
{
	struct to_ctx *c = ctx;
	timeouts_close(c->T);
	free(c->t);
	free(c);
}

const struct peer bench_wheel_timeout = BENCH_PEER(to, "timeout.c");
