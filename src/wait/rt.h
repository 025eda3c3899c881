/* SPDX-License-Identifier: MIT */
/*
 * rt.h: opt-in real time for a thread that waits precisely (rt.c; the API's
 * pn_sleep_set_rt, the shim's PUNCTUAL_RT). Internal.
 */
#ifndef PUNCTUAL_WAIT_RT_H
#define PUNCTUAL_WAIT_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "wait/slice.h"

/* The RLIMIT_RTTIME a real-time waiter's process gets where its own is higher: CPU time
 * without a blocking call, us. A precise wait spins at most its margin (milliseconds); a
 * thread past the soft limit is in a loop of its own: SIGXCPU, then SIGKILL at the hard. */
#define PN__RT_RTTIME_SOFT_US 1000000
#define PN__RT_RTTIME_HARD_US 2000000

/* A thread's real time. */
struct pn__rt {
	int prio;                   /* its SCHED_FIFO priority since we set it; 0: untouched */
	bool tried;                 /* the process's default was tried on it */
	struct pn__sched_attr orig; /* its scheduling before (put back by prio 0) */
	uint64_t wait_fifo;         /* kernel waits under SCHED_FIFO for the wait alone (sched.c) */
	bool fifo_off;              /* never those (the probe's row without real time) */
};

/* Before a precise wait: the process's default (PUNCTUAL_RT, 1-99) tried once on the
 * thread; where it is not permitted the thread waits as it is. */
void pn__rt_apply(struct pn__rt *r);
/* Sets the thread's real time (pn_sleep_set_rt): 0 or -errno. */
int pn__rt_set(struct pn__rt *r, int prio);
/* Lowers the process's RLIMIT_RTTIME to the bounds above where it is higher: 0 or -errno. */
int pn__rt_limit(void);
/* PUNCTUAL_RT's grammar and run --rt's: a priority 1-99. 0 with *prio set, or -EINVAL. */
int pn__rt_parse(const char *s, int *prio);

#endif
