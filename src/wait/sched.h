/* SPDX-License-Identifier: MIT */
/*
 * sched.h: the real time a precise wait lends a shared thread (sched.c): SCHED_FIFO for
 * its kernel wait where the process may use it (root, CAP_SYS_NICE, RLIMIT_RTPRIO), and
 * under the shim for the work its wakeup starts too, up to a bound of CPU time. Internal.
 */
#ifndef PUNCTUAL_WAIT_SCHED_H
#define PUNCTUAL_WAIT_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "wait/rt.h"
#include "wait/slice.h"

/* The lent priority: the lowest, ahead of every SCHED_OTHER task, behind every real-time
 * one. */
#define PN__SCHED_WAIT_PRIO 1
/* The reaction's bound: the CPU time one wakeup may use under the lend (the kernel checks
 * a CPU timer at its tick, so it ends within one tick after), and the share of one CPU
 * the process's lends may use together, as a token bucket of that depth. */
#define PN__SCHED_LEND_NS      1000000
#define PN__SCHED_LEND_SHARE   4 /* 1/4 of a CPU */
#define PN__SCHED_LEND_MIN_NS  100000
/* A kernel part longer than this waits under the thread's own scheduling until this long
 * before its target, so that what an administrator changes meanwhile is read, not undone. */
#define PN__SCHED_LAST_NS      20000000

/* A thread's lend: what it runs under, and its own to put back. */
struct pn__sched_wait {
	int8_t under; /* 0: the thread's own; PN__SCHED_FIFO or PN__SCHED_SLICE: ours */
	bool lent;    /* SCHED_FIFO kept past the wait's return (the reaction) */
	int8_t timer; /* the bound's CPU timer: 0 none yet, 1 made, -1 none to be had */
	int timer_id;
	int64_t slack;      /* the plan's slack, in force after a wait that ends the lend */
	int64_t own_slack;  /* the thread's own timer slack, put back when the lend ends */
	int64_t armed;      /* the CPU time the running reaction was given */
	uint64_t bounded;   /* reactions the CPU timer ended */
	uint64_t outside;   /* lends an outside change ended (chrt, a policy set meanwhile) */
	uint32_t lends;     /* reactions lent, for reading the mask now and then */
	bool blocked;       /* the bound's signal was blocked in the thread at the last look */
	struct pn__sched_attr own;
};
enum { PN__SCHED_FIFO = 1, PN__SCHED_SLICE = 2 };

/* Set by the shim where it wraps the program's signal handlers and owns the bound's signal
 * (pn__sched_lend_signal): only then may a lend outlast the wait. */
extern int pn__sched_lend_signal;
/* Counted per thread by the bound's handler and by the program's wrapped handlers: a kernel
 * wait that the bound's signal alone interrupted goes on (pn__sched_interrupted_by_us). */
extern PN_TLS unsigned pn__sched_sig_ours, pn__sched_sig_theirs;

/* Before a kernel part: a SCHED_OTHER thread not under real time of its own asking (r) gets
 * SCHED_FIFO where shared and permitted (the first EPERM ends the tries, for the process),
 * with SCHED_RESET_ON_FORK; else the slice its caller asked for, if any; any other policy
 * is left as it is. A thread still lent from its last wait stays so. slack: the plan's
 * slack; own_slack: the thread's own. */
void pn__sched_wait_begin(struct pn__sched_wait *w, struct pn__rt *r, struct pn__slice *s,
                          bool shared, int64_t slack, int64_t own_slack);
/* After it, at once (now: pn_now()): under the shim, a SCHED_FIFO thread keeps it for the
 * work its wakeup starts, bounded (PN__SCHED_LEND_*); else its own scheduling back. */
void pn__sched_wait_end(struct pn__sched_wait *w, int64_t now);
/* Ends a lend now (async-signal-safe, errno kept): the thread's own scheduling back unless
 * something outside changed it meanwhile (then that stands), and its own timer slack. */
void pn__sched_lend_end(struct pn__sched_wait *w);
/* The bound's signal handler, with the signal's value: whether the signal was w's CPU
 * timer (then the reaction used its CPU time: the lend ends). */
bool pn__sched_on_bound(struct pn__sched_wait *w, const void *cookie);
/* Whether an EINTR since the counts (ours, theirs) came from the bound's signal alone. */
bool pn__sched_interrupted_by_us(unsigned ours, unsigned theirs);
/* At the thread's exit, before its state goes: no lend, and the bound's CPU timer deleted
 * (a timer is the process's: it would outlive the thread, and fire in its exit path). */
void pn__sched_exit(struct pn__sched_wait *w);
/* In a child that fork left with the parent's thread state: no lend, no timer. */
void pn__sched_forked(struct pn__sched_wait *w);
/* Whether this process's shared waits may run under SCHED_FIFO: 1 yes, -1 no (denied),
 * 0 not tried yet. */
int pn__sched_wait_fifo(void);

#endif
