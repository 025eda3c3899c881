/* SPDX-License-Identifier: MIT */
/*
 * sleep_plan.h: pn_sleep_until in steps, for callers that wait in the kernel their own way
 * (wait.c's waits on fds, the preload shim's sleeps and cond waits). A plan computes the
 * kernel target and sets the slack; the caller waits; woke learns from a wait that reached
 * the target, cancel puts the slack back after one that did not; finish or spin end the
 * sleep at its deadline, never before it. Internal (pn__ names).
 */
#ifndef PUNCTUAL_SLEEP_PLAN_H
#define PUNCTUAL_SLEEP_PLAN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"

/* pn__sleep_plan's flags. */
enum {
	/* Put the caller's slack back after the kernel part (read with PR_GET_TIMERSLACK at
	 * every plan), so that the program, its other calls and children keep their own.
	 * Without it the thread keeps the slack the sleep chose (pn_sleep_until). */
	PN__SLEEP_KEEP_SLACK = 1,
	/* A signal handler that runs during the plan's latency probes ends the plan with
	 * .stop = -EINTR; without it the probes resume. */
	PN__SLEEP_EINTR = 2,
	/* The spin reads the clock through libc's clock_gettime, the path the program reads
	 * it by once the call returns, so that path is warm at the deadline. */
	PN__SLEEP_LIBC_CLOCK = 4,
	/* The caller spins the last microseconds in its own frame (pn__sleep_tail): from the
	 * deadline to the program is then one return, not four (after the spin's system calls
	 * each frame's return prediction is gone). */
	PN__SLEEP_TAIL = 8,
	/* The spin is a cancellation point, as the call it stands for: every check acts on a
	 * pending pthread_cancel, the caller's signal mask put back first. Not for cond waits,
	 * whose spin runs with the mutex released. */
	PN__SLEEP_CANCEL = 16,
};

/* A plan's latency probe, for waits that watch fds: wait(ctx) waits 1 ns and returns 0, the
 * ready count (which ends the plan), or -errno. NULL: a plain 1 ns ppoll. */
struct pn__probe {
	int (*wait)(void *ctx);
	void *ctx;
};

/* Where a caller's spin (PN__SLEEP_TAIL) stores its end: the thread's record of the sleep,
 * numbered, so that a handler's own sleep, which reuses the record, keeps its own end. */
struct pn__tail {
	int64_t end;
	uint32_t seq;
};

#define PN__WARM 4
struct pn__sleep_plan {
	clockid_t clk;
	int flags;
	int64_t deadline, precision;
	int64_t start, now, target, slack;
	int64_t restore; /* the slack to put back after the kernel part; -1: none */
	int k;           /* the sleep's length class */
	bool past;       /* the deadline had passed: return at once */
	bool kernel;     /* wait in the kernel until target first */
	int stop;        /* the probes ended the plan: -errno, or the ready count of its fds */
	bool looked;     /* pn__sleep_spin's last check ran, ending by the deadline */
	bool tail;       /* PN__SLEEP_TAIL: the caller spins to the deadline (pn__sleep_tail) */
	bool away;       /* the spin gave the rest back: the caller waits it the program's way */
	struct pn__tail *tail_to; /* ... and stores the time it ended there, */
	uint32_t tail_seq;        /* if the record is still this sleep's */
	const struct pn__probe *probe;
	int64_t cpu0; /* the thread's CPU time at the plan (every 8th wait; 0: not taken) */
	int64_t cut;  /* what the budget took off the margin the wakeups asked for */
	/* Code the call's return runs (return addresses; NULL: none), touched by every turn of
	 * the spin so that its page walks are paid before the deadline: warm[0] is the
	 * program's (prefetched: its page may be execute-only), the others libpunctual's own
	 * (loaded). docs/DESIGN.md, "Warming the return", has the measurements. */
	const void *warm[PN__WARM];
};

/* A plan before pn__sleep_plan fills it: a jump out of the call before then (a signal
 * handler's longjmp) finds no slack to put back. */
#define PN__SLEEP_PLAN_INIT                                                                        \
	{                                                                                          \
		.restore = -1                                                                      \
	}

/* Plans a sleep until deadline on clk with precision (ns): fills *p. p->past: the deadline
 * had passed; p->stop: the probes ended it; else p->kernel says whether to wait in the
 * kernel until p->target (the slack set for it) before finishing. Never fails. */
void pn__sleep_plan(struct pn__sleep_plan *p, clockid_t clk, int64_t deadline, int64_t precision,
                    int flags, const struct pn__probe *probe);
/* After a kernel wait that reached p->target: puts the slack back and, with learn, learns
 * the wakeup's lateness (false for a wait a signal handler delayed). */
void pn__sleep_woke(struct pn__sleep_plan *p, bool learn);
/* After a kernel wait that did not reach the target (a signal, an fd ready, an error): puts
 * the slack back. Idempotent. */
void pn__sleep_cancel(struct pn__sleep_plan *p);
/* Spins to p's deadline on its clock, signals as they come, and counts the sleep. 0.
 *
 * Every spin (finish, spin, tail) gives the CPU back rather than spin on when it cannot
 * end by the deadline as planned: when its clock reads below the plan's last read (p->now:
 * a REALTIME or TAI step back; the remaining time grew), or when a look it needs was denied
 * (pn__kernel_denied). It then returns 0 before the deadline with p->away set, counts
 * nothing, and the caller waits the rest in the kernel the program's own way (the real
 * call to the deadline): never early, and a step of hours costs no CPU. */
int pn__sleep_finish(struct pn__sleep_plan *p);

/* A check of the spin: runs with the caller's signal mask; 0 to go on, or a nonzero result
 * that ends the spin (-errno, or a wait's ready count). */
typedef int pn__spin_check(void *ctx, const sigset_t *mask);
/* The last check starts within this of the deadline, in the stretch with the caller's mask
 * back, so that it ends before the deadline (p->looked). */
#define PN__LOOK_WINDOW_NS 3000
/* The spin to p's deadline with signals blocked: every `every` ns (from the start when check
 * is given) check(ctx, mask) runs with the caller's mask; check NULL only lets in the
 * signals that mask allows (a handler that runs then ends the spin with -EINTR). The checks
 * stop a few us before the deadline: the spin puts the mask back and watches the clock
 * alone, but for a last check started within PN__LOOK_WINDOW_NS of the deadline (p->looked
 * says whether it ran; the caller looks once more when it did not). Returns the nonzero
 * check result that ended it, or 0 at the deadline, or with PN__SLEEP_TAIL 0 before it with
 * p->tail set (the caller spins the rest: pn__sleep_tail). An event in the last window may
 * so be seen by the program's next call rather than this one, as one that comes while the
 * real call returns. */
int pn__sleep_spin(struct pn__sleep_plan *p, pn__spin_check *check, void *ctx, int64_t every);
/* How often the shim's sleeps let signals in during their spin. */
#define PN__SIGCHECK_NS 2000
/* pn__sleep_spin(p, NULL, NULL, PN__SIGCHECK_NS) for the shim's sleeps: 0 at the deadline
 * (before it with p->tail), or -EINTR when a signal handler ran during the spin, at most
 * PN__SIGCHECK_NS after the signal came and where the real call would have run it. */
int pn__sleep_finish_intr(struct pn__sleep_plan *p);

/* The plan's clock as its spin reads it: pn_now() for CLOCK_MONOTONIC, else (and with
 * PN__SLEEP_LIBC_CLOCK) libc's clock_gettime, the path the program reads it by. */
static inline int64_t pn__plan_now(const struct pn__sleep_plan *p)
{
	if (!(p->flags & PN__SLEEP_LIBC_CLOCK) && p->clk == CLOCK_MONOTONIC)
		return pn_now();
	struct timespec t;
	clock_gettime(p->clk, &t);
	return pn__ts_ns(&t);
}

/* The spin's last stretch in the caller's frame, for a plan that pn__sleep_spin left with
 * p->tail (PN__SLEEP_TAIL; set only when the spin's result is 0): to the deadline on the
 * plan's clock, never before it (or p->away, as the spin's); nothing without p->tail.
 * Its end is counted in the thread's statistics at its next sleep (or statistics read). */
__attribute__((always_inline)) static inline void pn__sleep_tail(struct pn__sleep_plan *p)
{
	if (!p->tail)
		return;
	int64_t now;
	do {
		__builtin_prefetch(p->warm[0]);
		pn__arch_relax();
		now = pn__plan_now(p);
		if (PN_UNLIKELY(now < p->now)) { /* stepped back below the spin's last read */
			p->away = true;
			return;
		}
	} while (now < p->deadline);
	if (p->tail_to->seq == p->tail_seq)
		p->tail_to->end = now;
}

/* Test hook: learns one kernel wakeup lateness into the calling thread's class for sleeps
 * of len ns, as a real wakeup would (a lone stall held back). */
void pn__sleep_learn(int64_t len, int64_t late);

#endif
