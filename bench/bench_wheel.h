/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel.h: the table bench_wheel drives every timer implementation through
 * (wahern/timeout's bench layout), one file per peer: bench_wheel_<peer>.c, built when
 * the peer is installed (libev's ev.h and libevent's event2/event.h both define EV_READ,
 * so those two could not share a file anyway). Also the wakeup table's workload, which
 * a peer with a loop of its own runs.
 */
#ifndef BENCH_WHEEL_H
#define BENCH_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/wheel.h>
#include "measure/timers.h"

#define US  1000LL
#define MS  1000000LL
#define SEC 1000000000LL

/* ---- the wakeup table's workload ---- */

struct load {
	const char *name;
	size_t count;
	int64_t lo, hi; /* delays or periods */
	bool periodic;
	int64_t run; /* periodic: how long */
	bool virtual_time;
};

/* One timer of a load. */
struct wjob {
	struct pn_timer t;
	int64_t deadline, precision, period;
	struct windows *ws; /* where its firings' windows go */
	void *handle;       /* the peer's own timer (sd-event: its sd_event_source) */
};

/* L's timers, due from start on: the same delays (a fixed seed) for every peer,
 * precision 10% of the delay; every job's windows go into ws. */
void setup_jobs(const struct load *L, struct wjob *jobs, struct windows *ws, int64_t start);
/* Job j fired at now: counts an early firing or one past its window (which the peer may
 * end up to slop ns later than the job's precision says) and adds the window to j->ws. */
void job_fired(struct wjob *j, int64_t now, int64_t slop);

/* ---- the peers ---- */

struct peer {
	const char *name;
	void *(*open)(size_t n);                         /* room for n timers */
	void (*sync)(void *ctx);                         /* once per batch: read the clock */
	void (*add)(void *ctx, size_t i, int64_t delay); /* relative, ns */
	void (*cancel)(void *ctx, size_t i);
	void (*expire)(void *ctx); /* one loop iteration; its callbacks count in fired_total */
	void (*close)(void *ctx);
	/* The wakeup table (NULL: not in it): runs L with the peer's own loop, each firing
	 * through job_fired; returns how many times the loop woke. */
	uint64_t (*wakeups)(const struct load *L, struct windows *ws);
	bool simulated; /* wakeups can run a load in simulated time (L->virtual_time) */
};

/* A peer whose functions are prefix_open, prefix_sync, ... prefix_close, named label,
 * and any more fields given (.wakeups = ...). */
#define BENCH_PEER(prefix, label, ...)                                                             \
	{                                                                                          \
		.name = label, .open = prefix##_open, .sync = prefix##_sync, .add = prefix##_add,  \
		.cancel = prefix##_cancel, .expire = prefix##_expire, .close = prefix##_close,     \
		__VA_ARGS__                                                                        \
	}

/* Every peer's callbacks count here (add + cancel, add + expire). */
extern size_t fired_total;

extern const struct peer bench_wheel_pn, bench_wheel_libuv, bench_wheel_libevent, bench_wheel_libev,
        bench_wheel_sdevent, bench_wheel_timeout;

#endif
