/* SPDX-License-Identifier: MIT */
/*
 * internal.h: helpers shared by the library's modules and reachable by the tool and the
 * tests (pn__ names: exported from the static archive only, never declared in
 * include/).
 */
#ifndef PUNCTUAL_INTERNAL_H
#define PUNCTUAL_INTERNAL_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <punctual/clock.h>

#define PN_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PN_NSEC        1000000000LL
/* Thread-local storage of a few bytes each (pointers, flags). In the preload shim,
 * initial-exec: it is loaded at startup, and an access is then a load from the thread
 * pointer rather than a call to __tls_get_addr on the path between a deadline and the
 * caller. */
#ifdef PN_PRELOAD
#define PN_TLS __thread __attribute__((tls_model("initial-exec")))
#else
#define PN_TLS __thread
#endif

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#else
#include "arch/generic.h"
#endif

typedef int (*pn__clock_gettime_fn)(clockid_t, struct timespec *);

static inline int64_t pn__ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * PN_NSEC + ts->tv_nsec;
}

/* The vDSO's clock_gettime, or NULL when the kernel maps no vDSO or it lacks one. */
pn__clock_gettime_fn pn__vdso_clock_gettime(void);

#include "fs.h"

/* Why the cycle counter is or isn't trusted, decided from CPUID, the kernel's list of
 * clocksources under pn__root() and PUNCTUAL_CYCLES. Returns enum pn_cycles_source. */
int pn__cycles_decide(const char **reason);

/* Test hook: forgets the cycle counter's source and calibration and takes the load-time
 * anchor again. force 0 decides anew (pn__cycles_decide); PN_CYCLES_CLOCK, or this
 * architecture's counter, forces that source even where the kernel distrusts it, so that
 * a test runs the calibration on every host. Returns the source, or -EINVAL for a
 * counter this architecture lacks. Not thread-safe: no other thread may use the clock. */
int pn__cycles_reset(int force);

/* Parses a duration such as "250", "1.5ms", "10us", "2s" (ns, us or µs, ms, s); a bare
 * number is in default_unit_ns. Rejects negatives, garbage and overflow. Returns 0, or
 * -EINVAL / -ERANGE with *res untouched. */
int pn__parse_duration(const char *s, int64_t default_unit_ns, int64_t *res);

/* clock_gettime(clk) in ns through the vDSO function pn_now uses. */
int64_t pn__clock_ns(clockid_t clk);

/* The library's one kernel sleep (clock.c): clock_nanosleep(clk, TIMER_ABSTIME, target)
 * as a raw syscall, so that it never reaches the preload shim's own clock_nanosleep.
 * errno is kept. 0 at the target, or -errno (-EINTR when a signal handler ran). */
int pn__sleep_abs(clockid_t clk, int64_t target);

/* The calling thread's timer slack as pn_slack_set last set it (slack.c keeps it), 0 when
 * unknown (never set, or reset to the default). */
int64_t pn__slack_known(void);
/* prctl(PR_SET_TIMERSLACK, ns) without touching what pn__slack_known says: for a slack that
 * is put back before the caller sees it (the preload shim). 0 or -errno. */
int pn__slack_put(int64_t ns);

/* pn_sleep_until in steps, for callers that wait in the kernel their own way (the preload
 * shim: nanosleep that reports EINTR, cond waits): plan computes the kernel target and
 * sets the slack; after a wait that reached the target, woke learns from it (when told
 * to) and puts the slack back; cancel puts it back after a wait that did not; finish
 * spins to the deadline on clk and counts; finish_intr does too, but lets a signal
 * interrupt the spin the way it would interrupt the kernel's sleep. */
enum {
	/* The caller's slack is put back after the kernel part (read with PR_GET_TIMERSLACK
	 * at every plan): what the program, its uncovered calls and children see stays its
	 * own. Without it, the thread keeps the slack the sleep chose (pn_sleep_until). */
	PN__SLEEP_KEEP_SLACK = 1,
	/* A signal handler that runs during the plan's latency probes ends the plan with
	 * .stop = -EINTR (the shim's nanosleep then returns EINTR); without it they resume. */
	PN__SLEEP_EINTR = 2,
	/* The spin reads the clock through libc's clock_gettime, the way the program reads it
	 * once the call returns: that path (libc's wrapper, its page) is then warm, where
	 * after a sleep it costs up to 1 us at the p99 here (the shim). */
	PN__SLEEP_LIBC_CLOCK = 4,
	/* The caller ends the spin (pn__sleep_tail): pn__sleep_spin returns before the
	 * deadline, p->tail set, once its last check has run (a plain sleep has none) and the
	 * mask is back, and the caller spins the last few microseconds in its own frame. A wait's
	 * return from the deadline to the program is then one return, not four: after the spin's
	 * system calls the return predictions of the frames below are gone, and each return and its
	 * cold line cost 30-40 ns here (p50 of the lateness 340-520 -> 260-330 ns, p99 2.1-2.9
	 * -> 1.3-1.8 us: the shim's epoll_wait(1 ms), 3 runs each, alternating, 2026-12-01). */
	PN__SLEEP_TAIL = 8,
	/* The spin is a cancellation point, as the call it stands for (nanosleep, poll,
	 * sem_timedwait...): every check acts on a pending pthread_cancel (pthread_testcancel),
	 * the thread's signal mask put back first. Not for cond waits, whose spin runs with the
	 * mutex released. */
	PN__SLEEP_CANCEL = 16,
};
/* A plan's probe, for waits that watch fds (wait.c): wait(ctx) waits 1 ns and returns 0,
 * the ready count (which ends the plan), or -errno. NULL: a plain 1 ns ppoll. */
struct pn__probe {
	int (*wait)(void *ctx);
	void *ctx;
};
#define PN__WARM 4
/* Where a caller's spin (PN__SLEEP_TAIL) stores its end: sleep.c's record of the sleep,
 * numbered, so that a handler's own sleep, which reuses the record, keeps its own end. */
struct pn__tail {
	int64_t end;
	uint32_t seq;
};
struct pn__sleep_plan {
	clockid_t clk;
	int flags;
	int64_t deadline, precision;
	int64_t start, now, target, slack;
	int64_t restore; /* the slack to put back after the kernel part; -1: none */
	int k;
	_Bool past;   /* the deadline had passed: return at once */
	_Bool kernel; /* wait in the kernel until target first */
	int stop;     /* the probes ended the plan: -EINTR (PN__SLEEP_EINTR), another
	               * -errno, or the ready count of the probe's fds */
	_Bool looked; /* pn__sleep_spin's last check ran, ending by the deadline */
	_Bool tail;   /* PN__SLEEP_TAIL: the caller spins to the deadline (pn__sleep_tail) */
	struct pn__tail *tail_to; /* ... and stores the time it ended there, */
	uint32_t tail_seq;        /* if the record is still this sleep's */
	const struct pn__probe *probe;
	/* Code the call's return runs (return addresses, NULL: none), touched by every turn
	 * of the spin: after a halt, the page walks for it can cost up to 1.5 us here when
	 * the call returns (the translations were evicted), and the spin can pay them ahead.
	 * warm[0] is the caller's (the program's: prefetched, since its page may be
	 * execute-only), the others libpunctual's own (loaded). Measured in one process,
	 * A/B: the return to the program's clock read p99 1.3-1.6 us -> 0.5-0.6 us in one
	 * hour, within the noise (0.5-0.9 us either way) in another. What is left is the
	 * instruction side, which data cannot warm: in an emulation (a spin in a shared
	 * library after a 600 us sleep, its caller's next instruction timed; 2 runs of 1000,
	 * 2026-12-02) 5-7% of the returns took over 0.5 us without a touch, 4.5-6% with a
	 * load of the return address every turn, 0.7-2% with a call every turn to code on
	 * the caller's page, which the shim cannot make. */
	const void *warm[PN__WARM];
};
void pn__sleep_plan(struct pn__sleep_plan *p, clockid_t clk, int64_t deadline, int64_t precision,
                    int flags, const struct pn__probe *probe);
void pn__sleep_woke(struct pn__sleep_plan *p, _Bool learn);
void pn__sleep_cancel(struct pn__sleep_plan *p);
int pn__sleep_finish(struct pn__sleep_plan *p);
/* The spin to p's deadline with signals blocked: every `every` ns (from the start when
 * check is given) check(ctx, mask) runs with the caller's signal mask; check NULL only
 * lets the signals that mask allows in (a handler running then ends the spin with
 * -EINTR). The checks stop a few us before the deadline (by what the last ones and the
 * mask took, see sleep.c): the spin puts the mask back and watches the clock alone.
 * A nonzero check result ends the spin and is returned: -errno, or a wait's ready count.
 * 0 at the deadline, or with PN__SLEEP_TAIL 0 before it with p->tail set (the caller
 * spins the rest: pn__sleep_tail). The last check starts within PN__LOOK_WINDOW_NS of the deadline,
 * in the stretch with the mask put back, so that it ends before it (p->looked); when the spin could
 * not take it (preempted at the end), the wait looks at its fds once more after the deadline
 * (wait.c). An event in that window may so be seen by the program's next call rather than this one,
 * as one that comes while the real call returns. */
#define PN__LOOK_WINDOW_NS 3000
typedef int pn__spin_check(void *ctx, const sigset_t *mask);
/* Lets in, for a moment, the signals that mask allows (a ppoll with a zero timeout):
 * -EINTR if a handler ran (the kernel restarts the call for a signal without one: ignored,
 * or a stop), else 0. */
int pn__sleep_signals(const sigset_t *mask);
int pn__sleep_spin(struct pn__sleep_plan *p, pn__spin_check *check, void *ctx, int64_t every);
/* pn__sleep_spin(p, NULL, NULL, PN__SIGCHECK_NS) for the shim's sleeps: 0 at the deadline
 * (before it with p->tail, as pn__sleep_spin),
 * or EINTR (positive) when a signal handler ran during the spin, which blocks signals and
 * lets them in every PN__SIGCHECK_NS ns (ppoll with the caller's mask), so a handler runs
 * at most that late and where the real call would have run it. */
#define PN__SIGCHECK_NS 2000
int pn__sleep_finish_intr(struct pn__sleep_plan *p);
/* clk's time in ns: pn_now() for CLOCK_MONOTONIC, pn__clock_ns for the others. */
static inline int64_t pn__clock_now(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC ? pn_now() : pn__clock_ns(clk);
}
/* The plan's clock as its spin reads it (through libc with PN__SLEEP_LIBC_CLOCK). */
static inline int64_t pn__plan_now(const struct pn__sleep_plan *p)
{
	if (!(p->flags & PN__SLEEP_LIBC_CLOCK))
		return pn__clock_now(p->clk);
	struct timespec t;
	clock_gettime(p->clk, &t);
	return pn__ts_ns(&t);
}
/* The spin's last stretch in the caller's frame, for a plan that pn__sleep_spin left with
 * p->tail (PN__SLEEP_TAIL; set only when the spin's result is 0): to the deadline on the
 * plan's clock, never before it; nothing without p->tail. Its end is counted in the thread's
 * statistics at its next sleep (or statistics read). */
__attribute__((always_inline)) static inline void pn__sleep_tail(struct pn__sleep_plan *p)
{
	if (!p->tail)
		return;
	int64_t now;
	do {
		__builtin_prefetch(p->warm[0]);
		pn__arch_relax();
		now = pn__plan_now(p);
	} while (now < p->deadline);
	if (p->tail_to->seq == p->tail_seq)
		p->tail_to->end = now;
}

/* A wait on fds for pn__wait_until (wait.c): wait(w, timeout, mask) waits at most timeout
 * (never NULL) with mask in force (NULL: the thread's) and returns the ready count, 0 at
 * the timeout, or -errno. mask is the mask the wait runs with (ppoll's, epoll_pwait's;
 * NULL: the thread's); eintr_any: the wait reports EINTR for a pending signal that has no
 * handler too (epoll), so the spin lets signals in apart. look (optional): the spin's
 * check in one system call, a zero-timeout look at the fds and at the signals mask allows
 * that says EINTR only for a handler, as ppoll does (epoll: a ppoll of the epoll fd, then
 * the events are fetched only when it is ready); its result is the wait's. Embed it as a
 * first member. */
struct pn__waiter {
	int (*wait)(struct pn__waiter *w, const struct timespec *timeout, const sigset_t *mask);
	int (*look)(struct pn__waiter *w, const sigset_t *mask);
	const sigset_t *mask;
	_Bool eintr_any;
	const void
	        *ret[2]; /* where the caller's call returns, and one level in (the plan's warm) */
};
/* The two kinds of wait, for the library's raw system calls (wait.c) and the shim's real
 * calls (preload_wait.c). */
struct pollfd;
struct epoll_event;
struct pn__poll_waiter {
	struct pn__waiter w;
	struct pollfd *fds;
	unsigned long n; /* nfds_t */
};
struct pn__epoll_waiter {
	struct pn__waiter w;
	int epfd, max;
	struct epoll_event *ev;
};
/* The whole ms in ts, rounded down: where only ms timeouts exist (epoll_pwait), the spin
 * covers the rest and the kernel never waits past it. */
static inline int pn__ts_ms_floor(const struct timespec *ts)
{
	return (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000);
}
/* Whether epoll_pwait2 failed for a reason of its own, with an error epoll_pwait would not
 * give (EBADF, EFAULT, EINTR, EINVAL are the call's): ENOSYS before Linux 5.11, EPERM or
 * another errno from a seccomp filter that denies it (older container runtimes, systemd's
 * SystemCallFilter). The waits then use epoll_pwait, whole ms, for the rest of the process. */
static inline _Bool pn__pwait2_denied(int err)
{
	return err != EBADF && err != EFAULT && err != EINTR && err != EINVAL;
}
/* The wait until deadline with the precision: the ready count, 0 at a time >= deadline
 * (with PN__SLEEP_TAIL, 0 with plan->tail set before it: the caller spins the rest with
 * pn__sleep_tail), or -errno (-EINTR when a signal handler ran, in any phase). plan: where
 * the sleep plan lives (the shim's, so that a longjmp out of the wait puts the slack
 * back), or NULL (no PN__SLEEP_TAIL then). flags: PN__SLEEP_KEEP_SLACK and
 * PN__SLEEP_LIBC_CLOCK for the shim, PN__SLEEP_TAIL. errno is kept. */
int pn__wait_until(struct pn__waiter *w, struct pn__sleep_plan *plan, int64_t deadline,
                   int64_t precision, int flags);

/* Test hook: learns one kernel wakeup lateness into the calling thread's class for sleeps
 * of len ns, as a real wakeup would (a lone stall held back) (tests/unit/test_sleep.c forces
 * outliers with it). */
void pn__sleep_learn(int64_t len, int64_t late);

/* Test hooks of the timer wheel (wheel_check.c; tests/unit/test_wheel.c, fuzz/fuzz_wheel.c).
 * sort_tune: for wheel w, fail makes the sorts' buffer fail to grow (the list sort is
 * used), records_min is the shortest list sorted by records (default 129), few the most
 * timers an expiry's bucket sorts by insertion (default 32; more: a crowd, sorted as a
 * list). seq_set sets the next insertion sequence number, to cross its 2^52 wrap. */
struct pn_wheel;
void pn__wheel_sort_tune(struct pn_wheel *w, _Bool fail, size_t records_min, size_t few);
void pn__wheel_seq_set(struct pn_wheel *w, uint64_t seq);

#endif
