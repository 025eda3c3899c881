/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel.h: the table bench_wheel drives every timer implementation through
 * (wahern/timeout's bench layout). libev is in its own file, bench_wheel_libev.c: its
 * ev.h and libevent's event2/event.h both define EV_READ and cannot share one.
 */
#ifndef BENCH_WHEEL_H
#define BENCH_WHEEL_H

#include <stddef.h>
#include <stdint.h>

struct peer {
	const char *name;
	void *(*open)(size_t n);                         /* room for n timers */
	void (*sync)(void *ctx);                         /* once per batch: read the clock */
	void (*add)(void *ctx, size_t i, int64_t delay); /* relative, ns */
	void (*cancel)(void *ctx, size_t i);
	size_t (*expire)(void *ctx); /* one loop iteration; returns timers fired */
	void (*close)(void *ctx);
};

/* Every peer's callbacks count here. */
extern size_t fired_total;

extern const struct peer bench_wheel_libev;

#endif
