/* SPDX-License-Identifier: MIT */
/*
 * sched.h: the real time a precise wait lends a shared thread: SCHED_FIFO for its kernel
 * wait where the process may use it, and under the shim for the work its wakeup starts
 * too, up to a bound of CPU time. Internal.
 */
#ifndef PUNCTUAL_SCHED_SCHED_H
#define PUNCTUAL_SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "sched/rt.h"
#include "sched/slice.h"

/* The lowest priority: ahead of every SCHED_OTHER task, behind every real-time one. */
#define PN__SCHED_WAIT_PRIO 1
/* The reaction's bound: the CPU time one wakeup may use under the lend (checked at the
 * tick), and the share of one CPU the process's lends may use together, a token bucket. */
#define PN__SCHED_LEND_NS      1000000
#define PN__SCHED_LEND_SHARE   4 /* 1/4 of a CPU */
#define PN__SCHED_LEND_MIN_NS  100000
/* A longer kernel part waits under the thread's own scheduling until this long before its
 * target, so that an administrator's change meanwhile is read, not undone. */
#define PN__SCHED_LAST_NS      20000000

/* A thread's lend: what it runs under, and its own to put back. */
struct pn__sched_wait {
	int8_t under; /* 0: the thread's own; PN__SCHED_FIFO or PN__SCHED_SLICE: ours */
	bool lent;    /* SCHED_FIFO kept past the wait's return */
	int8_t timer; /* the bound's CPU timer: 0 none yet, 1 made, -1 none to be had */
	int timer_id;
	int64_t slack;
	int64_t own_slack;  /* the thread's own, put back when the lend ends */
	int64_t armed;      /* the CPU time the running reaction was given */
	uint64_t bounded;   /* reactions the CPU timer ended */
	uint64_t outside;   /* lends an outside change ended */
	uint32_t lends;
	bool blocked;       /* the bound's signal was blocked at the last look */
	struct pn__sched_attr own;
};
enum { PN__SCHED_FIFO = 1, PN__SCHED_SLICE = 2 };

/* Set where the shim wraps the program's handlers and owns the bound's signal: only then
 * may a lend outlast the wait. */
extern int pn__sched_lend_signal;
/* Counted per thread by the bound's handler and the program's wrapped ones. */
extern PN_TLS unsigned pn__sched_sig_ours, pn__sched_sig_theirs;

/* Before a kernel part: a SCHED_OTHER thread gets SCHED_FIFO (with SCHED_RESET_ON_FORK)
 * where shared and permitted (the first EPERM ends the tries), else its caller's slice;
 * any other policy is left as it is. A thread still lent stays so. */
void pn__sched_wait_begin(struct pn__sched_wait *w, struct pn__rt *r, struct pn__slice *s,
                          bool shared, int64_t slack, int64_t own_slack);
/* After it, at once: under the shim, a SCHED_FIFO thread keeps it for the work its wakeup
 * starts, bounded; else its own scheduling back. */
void pn__sched_wait_end(struct pn__sched_wait *w, int64_t now);
/* Ends a lend now (async-signal-safe, errno kept): the thread's own scheduling back unless
 * something outside changed it meanwhile, and its own slack. */
void pn__sched_lend_end(struct pn__sched_wait *w);
/* The bound's signal handler: whether it was w's CPU timer (the lend then ends). */
bool pn__sched_on_bound(struct pn__sched_wait *w, const void *cookie);
/* Whether an EINTR since the counts came from the bound's signal alone. */
bool pn__sched_interrupted_by_us(unsigned ours, unsigned theirs);
/* At the thread's exit: no lend, and the bound's CPU timer deleted (a timer is the
 * process's: it would fire in the exit path). */
void pn__sched_exit(struct pn__sched_wait *w);
/* In a child that fork left with the parent's thread state: no lend, no timer. */
void pn__sched_forked(struct pn__sched_wait *w);
/* Whether this process's shared waits may take SCHED_FIFO: 1, -1 (denied), 0 not tried. */
int pn__sched_wait_fifo(void);

#endif
