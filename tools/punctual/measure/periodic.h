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
	bool explain;                   /* attribute late wakeups */
	int64_t threshold;              /* --explain D; 0: 2x the median */
	int64_t stop_above;             /* stop every thread at the first wakeup later; 0: never */
	int hist_us;                    /* rows of the 1 us histogram; 0: none */
	const struct causes_cgroup *cg; /* with explain */
	int nthreads;
	int64_t slice_ns;  /* each thread's EEVDF slice; 0: the kernel's */
	const int *cpus;   /* the CPU to pin each thread to, or -1 */
	atomic_bool *stop; /* set by the thread that hits stop_above */
};

struct periodic_result {
	struct pn_hist late; /* wake time - deadline (cyclictest's latency) */
	uint64_t missed;     /* periods skipped because a wakeup came after them */
	uint64_t early;      /* must be 0 */
	int64_t last;        /* the last cycle's lateness */
	int64_t elapsed;
	int cpu; /* pinned to, or -1 */
	pid_t tid;
	int status; /* -errno: the loop failed */
	/* --histogram: hist[us] counts, overflow past hist_us, the first cycles that overflowed */
	uint64_t *hist, overflow, *overflow_cycles;
	size_t n_overflow_cycles;
	/* --explain; causes_status < 0: none */
	struct causes_thread causes;
	int causes_status;
	/* --stop-above: the wakeup that stopped the run */
	bool stopped;
	int64_t stop_late;
	uint64_t stop_cycle;
	int stop_cause, stop_level;
};

/* Sleeps with clock_nanosleep(TIMER_ABSTIME) to start + k * interval until duration has
 * passed (0: until a stop), recording each wakeup's lateness; a deadline already past is
 * skipped and counted as missed (where cyclictest says nothing). Pinned to c->cpus[idx]
 * when >= 0. 0, or -errno with r->status set and r holding the cycles before it. */
int periodic_run(const struct periodic_config *c, int idx, struct periodic_result *r);
/* periodic_run in c->nthreads threads at once: 0, or the first -errno. */
int periodic_run_threads(const struct periodic_config *c, struct periodic_result *r);
void periodic_free(struct periodic_result *r);

#endif
