/* SPDX-License-Identifier: MIT */
/*
 * plan.h: a wait's plan, which the engine runs: the plan computes the kernel target and
 * sets the slack; the waiter waits; woke learns from a wait that reached the target,
 * cancel puts the slack back after one that did not; the spin ends the wait at its
 * deadline, never before it. Internal.
 */
#ifndef PUNCTUAL_WAIT_PLAN_H
#define PUNCTUAL_WAIT_PLAN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"

enum {
	/* Put the caller's slack back after the kernel part (read at every plan), so that the
	 * program keeps its own; without it the thread keeps the slack the sleep chose. */
	PN__PLAN_KEEP_SLACK = 1,
	/* A handler that runs during the latency probes ends the plan with .stop = -EINTR;
	 * without it the probes resume. */
	PN__PLAN_EINTR = 2,
	/* The spin reads the clock through libc, the path the program reads it by once the
	 * call returns, so that path is warm at the deadline. */
	PN__PLAN_LIBC_CLOCK = 4,
	/* The caller spins the last microseconds in its own frame: from the deadline to the
	 * program is then one return, whose prediction the spin's system calls did not lose. */
	PN__PLAN_TAIL = 8,
	/* The spin is a cancellation point, as the call it stands for, the caller's signal
	 * mask put back first. Not for cond waits, whose spin runs with the mutex released. */
	PN__PLAN_CANCEL = 16,
	/* The caller's timeout was rounded up to whole ms (poll, epoll_wait): its true deadline
	 * is unknown, so no spin: the kernel alone at 1 ns slack, never later than the call. */
	PN__PLAN_ROUNDED = 32,
};

/* A latency probe for waits on fds: wait(ctx) waits 1 ns and returns 0, the ready count
 * (which ends the plan), or -errno. NULL: a plain 1 ns ppoll. */
struct pn__probe {
	int (*wait)(void *ctx);
	void *ctx;
};

/* Where a caller's spin stores its end: the thread's record of the sleep, numbered, so
 * that a handler's own sleep, which reuses the record, keeps its own end. */
struct pn__tail {
	int64_t end;
	uint32_t seq;
};

#define PN__WARM 4
struct pn__plan {
	clockid_t clk;
	int flags;
	int64_t deadline, precision;
	int64_t start, now, target, slack;
	int64_t restore; /* the slack to put back after the kernel part; -1: none */
	int k;
	bool past;   /* the deadline had passed: return at once */
	bool kernel; /* wait in the kernel until target first */
	bool shared; /* the thread shares its CPU: the kernel part under sched.c's rules */
	int stop;    /* the probes ended the plan: -errno, or the ready count */
	bool looked; /* pn__spin_checked's last check ran, ending by the deadline */
	bool tail;   /* PN__PLAN_TAIL: the caller spins to the deadline */
	bool away;   /* the spin gave the rest back: the caller waits it the program's way */
	struct pn__tail *tail_to; /* and stores the time it ended there, */
	uint32_t tail_seq;        /* if the record is still this sleep's */
	const struct pn__probe *probe;
	int64_t cpu0; /* the thread's CPU time at the plan (every 8th wait; 0: not taken) */
	int64_t budget_cut_ns; /* what the budget took off the margin the wakeups asked for */
	/* Code the call's return runs, touched by every turn of the spin so that its page walks
	 * are paid before the deadline: warm[0] the program's (prefetched: it may be
	 * execute-only), the others libpunctual's (loaded). docs/DESIGN.md, "Warming the
	 * return". */
	const void *warm[PN__WARM];
};

/* A plan before pn__plan_make fills it: a longjmp out before then finds no slack to put
 * back. */
#define PN__PLAN_INIT                                                                              \
	{                                                                                          \
		.restore = -1                                                                      \
	}

/* Plans a sleep until deadline on clk: p->past: the deadline had passed; p->stop: the
 * probes ended it; else p->kernel says whether to wait in the kernel until p->target (its
 * slack set) first. Never fails. */
void pn__plan_make(struct pn__plan *p, clockid_t clk, int64_t deadline, int64_t precision,
                   int flags, const struct pn__probe *probe);
/* After a kernel wait that reached p->target: puts the slack back and, with learn, learns
 * the wakeup's lateness. */
void pn__plan_woke(struct pn__plan *p, bool learn);
/* After a kernel wait that did not reach the target: puts the slack back. Idempotent. */
void pn__plan_cancel(struct pn__plan *p);
/* The plan's clock as its spin reads it: pn_now() for CLOCK_MONOTONIC, else (and with
 * PN__PLAN_LIBC_CLOCK) libc's clock_gettime. */
static inline int64_t pn__plan_now(const struct pn__plan *p)
{
	if (!(p->flags & PN__PLAN_LIBC_CLOCK) && p->clk == CLOCK_MONOTONIC)
		return pn_now();
	struct timespec t;
	clock_gettime(p->clk, &t);
	return pn__ts_ns(&t);
}

/* Test hook: learns one kernel wakeup into the calling thread's class for len ns. */
void pn__plan_learn(int64_t len, int64_t late);

#endif
