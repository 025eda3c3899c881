/* SPDX-License-Identifier: MIT */
/*
 * rt.h: opt-in real time for a thread that waits precisely. Internal.
 */
#ifndef PUNCTUAL_SCHED_RT_H
#define PUNCTUAL_SCHED_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/slice.h"

/* The RLIMIT_RTTIME a real-time waiter's process gets where its own is higher, us: a spin
 * lasts milliseconds, so a thread past it is in a loop of its own. */
#define PN__RT_RTTIME_SOFT_US 1000000
#define PN__RT_RTTIME_HARD_US 2000000

struct pn__rt {
	int prio;                   /* its SCHED_FIFO priority since we set it; 0: untouched */
	bool tried;                 /* the process's default was tried on it */
	struct pn__sched_attr orig; /* put back by prio 0 */
	uint64_t wait_fifo;         /* kernel waits under SCHED_FIFO for the wait alone */
	bool fifo_off;              /* never those */
};

/* Before a precise wait: PUNCTUAL_RT tried once on the thread; not permitted, it waits as
 * it is. */
void pn__rt_apply(struct pn__rt *r);
/* Sets the thread's real time (pn_sleep_set_rt): 0 or -errno. */
int pn__rt_set(struct pn__rt *r, int prio);
/* Lowers RLIMIT_RTTIME to the bounds above where higher: 0 or -errno. */
int pn__rt_limit(void);
/* A priority 1-99: 0 with *prio set, or -EINVAL. */
int pn__rt_parse(const char *s, int *prio);

#endif
