/* SPDX-License-Identifier: MIT */
/* measure/periodic.h: cyclictest's measuring loop, for `punctual sleep --periodic`. */
#ifndef PUNCTUAL_MEASURE_PERIODIC_H
#define PUNCTUAL_MEASURE_PERIODIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <punctual/hist.h>
#include "measure/causes.h"

struct periodic_config {
	int64_t interval, duration;
	bool explain;       /* attribute late wakeups (measure/causes.c) */
	int64_t threshold;  /* --explain D: check wakeups later than this; 0: 2x the median */
	int64_t stop_above; /* stop every thread at the first wakeup later than this; 0: never */
	int hist_us;        /* rows of the 1 us histogram (cyclictest -h); 0: none */
	const struct causes_cgroup *cg; /* with explain */
	int nthreads;
	int64_t slice_ns;  /* each thread's EEVDF slice (pn_sleep_set_slice); 0: the kernel's */
	const int *cpus;   /* nthreads entries: the CPU to pin each thread to, or -1 */
	atomic_bool *stop; /* set by the thread that hits stop_above */
};

struct periodic_result {
	struct pn_hist late; /* wake time - deadline, one per cycle (cyclictest's latency) */
	uint64_t missed;     /* periods skipped because a wakeup came after them */
	uint64_t early;      /* wakeups before their deadline: must be 0 */
	int64_t last;        /* the last cycle's lateness (cyclictest's "Act") */
	int64_t elapsed;
	int cpu;    /* pinned to, or -1 */
	pid_t tid;  /* the measuring thread */
	int status; /* 0, or -errno: the loop failed (clock_nanosleep, pinning) */
	/* --histogram: hist[us] counts, overflow past hist_us, the first cycles that overflowed */
	uint64_t *hist, overflow, *overflow_cycles;
	size_t n_overflow_cycles;
	/* --explain: the readers and their records; causes_status < 0: none (no schedstat) */
	struct causes_thread causes;
	int causes_status;
	/* --stop-above: the wakeup that stopped the run, in this thread */
	bool stopped;
	int64_t stop_late;
	uint64_t stop_cycle;
	int stop_cause, stop_level;
};

/* Sleeps with clock_nanosleep(TIMER_ABSTIME) to absolute deadlines start + interval,
 * next += interval, until duration has passed (0: until *c->stop or a signal: tool_stop),
 * and records how late each wakeup is;
 * a deadline already past when the loop wakes is skipped and counted as missed (where
 * cyclictest says nothing). In the calling thread, pinned to c->cpus[idx] when >= 0; shows
 * progress for idx 0. Returns 0, or -errno with r->status set and r holding the cycles
 * before it. periodic_free releases what it allocated. */
int periodic_run(const struct periodic_config *c, int idx, struct periodic_result *r);
/* periodic_run in c->nthreads threads at once, r[0..nthreads-1]: 0, or the first
 * thread's -errno (or pthread_create's). */
int periodic_run_threads(const struct periodic_config *c, struct periodic_result *r);
void periodic_free(struct periodic_result *r);

#endif
