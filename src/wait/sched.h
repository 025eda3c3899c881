/* SPDX-License-Identifier: MIT */
/*
 * sched.h: what a precise wait's kernel part runs under, for that wait alone (sched.c):
 * where the thread shares its CPU, SCHED_FIFO if the process may use it (root,
 * CAP_SYS_NICE, RLIMIT_RTPRIO); a slice its caller asked for; the thread's own read before
 * and written back before the wait returns, so that the program's own work never runs
 * under either and it reads its own attributes. Internal.
 */
#ifndef PUNCTUAL_WAIT_SCHED_H
#define PUNCTUAL_WAIT_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "wait/rt.h"
#include "wait/slice.h"

/* The SCHED_FIFO priority of a shared thread's kernel wait: the lowest, enough to wake
 * ahead of every SCHED_OTHER task and behind every real-time one. */
#define PN__SCHED_WAIT_PRIO 1

/* A kernel wait's scheduling: what it ran under, and the thread's own to put back. */
struct pn__sched_wait {
	int8_t under; /* 0: the thread's own; PN__SCHED_FIFO or PN__SCHED_SLICE: ours */
	int64_t slack; /* the thread's timer slack as the wait began */
	struct pn__sched_attr own;
};
enum { PN__SCHED_FIFO = 1, PN__SCHED_SLICE = 2 };

/* Before a kernel part: a SCHED_OTHER thread not under real time of its own asking (r) gets
 * SCHED_FIFO where shared and permitted (the first EPERM ends the tries, for the process),
 * else the slice its caller asked for (pn__slice_wanted), if any; any other policy, one
 * the program set itself, is left as it is. Costs a sched_getattr, and a sched_setattr each
 * way where it changes anything. Counts r's waits under SCHED_FIFO, notes s's slice.
 * slack: the thread's timer slack now (the plan's), which Linux sets to 0 for a real-time
 * task and to the thread's default (its parent's at fork) when it leaves real time. */
void pn__sched_wait_begin(struct pn__sched_wait *w, struct pn__rt *r, struct pn__slice *s,
                          bool shared, int64_t slack);
/* After it, at once: the thread's own scheduling back, exactly as read, and after SCHED_FIFO
 * its timer slack as it was; nothing where none is ours. The shim's longjmp calls it
 * through pn__wait_cancel; a library caller's handler that jumps out of a wait leaves the
 * thread under ours until its next wait's begin, which puts it back first. */
void pn__sched_wait_end(struct pn__sched_wait *w);
/* Whether this process's shared waits may run under SCHED_FIFO: 1 yes, -1 no (denied),
 * 0 not tried yet. */
int pn__sched_wait_fifo(void);

#endif
