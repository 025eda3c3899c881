/* SPDX-License-Identifier: MIT */
/*
 * preload_sleep.c: the preload shim's sleeps and cond waits: nanosleep, clock_nanosleep
 * (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME and CLOCK_TAI, relative and
 * TIMER_ABSTIME), usleep, pthread_cond_timedwait and pthread_cond_clockwait (how the JDK's
 * Thread.sleep waits) keep their POSIX contracts, but wake through pn_sleep_until's
 * strategy: never early, late by at most PUNCTUAL_PRECISION. Also longjmp and its kin, so
 * that a handler that jumps out of a sleep leaves the shim.
 *
 * Contracts kept: return values and errno; EINTR with the remaining time when a signal
 * handler runs during the sleep, in any phase (the sleep is not resumed, as the original
 * would not be), but 0 once the deadline has passed, as the kernel's; TIMER_ABSTIME
 * semantics, REALTIME deadlines included (the kernel part waits on the clock the caller
 * named, the spin reads that clock); cancellation points, as the originals; cond waits
 * return with the mutex held (or the error the original gives: EPERM for an error-checking
 * mutex the caller does not hold, EOWNERDEAD for a robust one whose owner died) and still
 * wake on pthread_cond_signal while in the kernel part; the thread's timer slack: the shim
 * lowers it only for its own kernel waits and puts back what the thread had (read at every
 * call, so a program's own prctl is honoured).
 *
 * How a signal interrupts the final spin: the spin blocks signals and, every
 * PN__SIGCHECK_NS, lets those the program's mask allows in (ppoll with a zero timeout and
 * that mask); if a handler ran, the call returns EINTR. So a handler runs at most that much
 * later than it would have, on this thread; a process-directed signal that arrives in that
 * moment may be taken by another thread that does not block it.
 *
 * Where they bend, documented in punctual(1): during a cond wait's final spin the mutex is
 * released and the thread is not waiting on the cond: a pthread_cond_signal then wakes
 * nobody, and the wait returns ETIMEDOUT at its deadline, which POSIX permits for a signal
 * that races the timeout (callers re-check their predicate). Signals do not end a cond wait
 * (the original does not return EINTR either).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "preload_core.h"

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*usleep_fn)(useconds_t);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                                 const struct timespec *);
typedef void (*longjmp_fn)(struct __jmp_buf_tag *, int);

static nanosleep_fn real_nanosleep;
static clock_nanosleep_fn real_clock_nanosleep;
static usleep_fn real_usleep;
static cond_timedwait_fn real_cond_timedwait;
static cond_clockwait_fn real_cond_clockwait;
static longjmp_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;

/* The real functions, once (at load, or at a call that comes before the constructor). */
__attribute__((constructor)) static void resolve(void)
{
	real_nanosleep = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
	real_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
	real_usleep = (usleep_fn)dlsym(RTLD_NEXT, "usleep");
	/* The unversioned name can find glibc's 2.2.5 compat cond function on x86-64, which
	 * takes the old, smaller pthread_cond_t: then ask for the current version. But an
	 * interposer between us and libc (a sanitizer runtime) must stay in the chain. */
	void *f = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
#ifdef __GLIBC__
	void *compat = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.2.5");
	void *current = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
	if ((!f || f == compat) && current)
		f = current;
#endif
	real_cond_timedwait = (cond_timedwait_fn)f;
	real_cond_clockwait = (cond_clockwait_fn)dlsym(RTLD_NEXT, "pthread_cond_clockwait");
	real_longjmp = (longjmp_fn)dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (longjmp_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (longjmp_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (longjmp_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* The kernel part through the real clock_nanosleep, a cancellation point as the program's
 * call was. 0, or -errno. */
static int kernel_sleep(clockid_t clk, int64_t target)
{
	struct timespec ts = pn__ns_ts(target);
	if (real_clock_nanosleep)
		return -real_clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
	return pn__sleep_abs(clk, target);
}

/* -EINTR, or 0 when clk has reached deadline by now: the kernel reports a handler that ran
 * during a sleep only while time remains (nanosleep's rem is never 0 with EINTR). */
static int intr_result(clockid_t clk, int64_t deadline)
{
	return pn__clock_now(clk) >= deadline ? 0 : -EINTR;
}

static void abs_unwound(void *arg)
{
	(void)arg;
	pn__shim_unwound();
}

/* Sleeps until deadline on clk: 0, or -EINTR when a signal handler ran before it (-errno
 * from the kernel part). ret: where the program's call returns. A cancellation point, as
 * the sleeps are: a pending cancel acts at the entry and in the spin (the kernel part is
 * the real call). */
__attribute__((noinline)) static int precise_abs(clockid_t clk, int64_t deadline, const void *ret)
{
	pthread_testcancel();
	struct pn__sleep_plan p = PN__SLEEP_PLAN_INIT;
	int r = 0;
	pn__shim_enter(&p);
	pthread_cleanup_push(abs_unwound, NULL);
	unsigned n0 = pn__shim_nested();
	pn__sleep_plan(&p, clk, deadline, pn__shim_precision,
	               PN__SLEEP_KEEP_SLACK | PN__SLEEP_EINTR | PN__SLEEP_LIBC_CLOCK |
	                       PN__SLEEP_TAIL | PN__SLEEP_CANCEL,
	               NULL);
	p.warm[0] = ret;
	p.warm[1] = RET;
	if (p.stop) {
		r = p.stop;
	} else if (!p.past) {
		if (p.kernel && (r = kernel_sleep(clk, p.target)) != 0) {
			pn__sleep_cancel(&p);
		} else {
			if (p.kernel)
				pn__sleep_woke(&p, pn__shim_nested() == n0);
			r = pn__sleep_finish_intr(&p);
			pn__sleep_tail(&p);
			if (r == 0 && p.away) /* the spin gave the rest back */
				r = kernel_sleep(clk, deadline);
		}
	}
	if (r == -EINTR)
		r = intr_result(clk, deadline);
	pthread_cleanup_pop(0);
	return pn__shim_leave(r);
}

/* Sleeps ns from now (the call time) on clk, CLOCK_MONOTONIC but for CLOCK_BOOTTIME, which
 * counts a suspend where the monotonic clock does not (a relative sleep on the others is a
 * duration); on -EINTR stores what remains in *rem, as the kernel does. BOOTTIME's offset
 * is read monotonic first, so it comes out at or above the true one (never early). */
static int precise_rel(clockid_t clk, int64_t now, int64_t ns, struct timespec *rem,
                       const void *ret)
{
	if (clk != CLOCK_BOOTTIME) {
		clk = CLOCK_MONOTONIC;
	} else {
		int64_t mono = pn_now();
		now += pn__clock_ns(CLOCK_BOOTTIME) - mono;
	}
	int64_t deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	int r = precise_abs(clk, deadline, ret);
	if (r == -EINTR && rem) { /* time remained when the call decided on EINTR: never 0 */
		int64_t left = deadline - pn__clock_now(clk);
		*rem = pn__ns_ts(left > 0 ? left : 1);
	}
	return r;
}

/* The errno convention of nanosleep and usleep: -1 with errno, or 0. */
static int errno_result(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	uint64_t at = pn__shim_entry();
	if (!real_nanosleep)
		resolve();
	if (!pn__shim_active() || !req || !pn__ts_valid(req))
		return real_nanosleep(req, rem);
	return errno_result(
	        precise_rel(CLOCK_MONOTONIC, pn__shim_call_ns(at), pn__ts_ns_sat(req), rem, RET));
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	uint64_t at = pn__shim_entry();
	if (!real_clock_nanosleep)
		resolve();
	if (!pn__shim_active() || !req || !pn__ts_valid(req) || (flags & ~TIMER_ABSTIME) ||
	    (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME && clk != CLOCK_BOOTTIME &&
	     clk != CLOCK_TAI))
		return real_clock_nanosleep(clk, flags, req, rem);
	if (flags & TIMER_ABSTIME)
		return -precise_abs(clk, pn__ts_ns_sat(req), RET);
	return -precise_rel(clk, pn__shim_call_ns(at), pn__ts_ns_sat(req), rem, RET);
}

EXPORT int usleep(useconds_t us)
{
	uint64_t at = pn__shim_entry();
	if (!real_usleep)
		resolve();
	if (!pn__shim_active())
		return real_usleep(us);
	return errno_result(
	        precise_rel(CLOCK_MONOTONIC, pn__shim_call_ns(at), (int64_t)us * 1000, NULL, RET));
}

/* The clock a cond waits on: glibc keeps it in bit 1 of __wrefs (the layout is part of its
 * ABI, fixed since 2.25: static initializers depend on it). */
static clockid_t cond_clock(const pthread_cond_t *c)
{
#ifdef __GLIBC__
	return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2) ? CLOCK_MONOTONIC
	                                                                   : CLOCK_REALTIME;
#else
	(void)c;
	return CLOCK_REALTIME;
#endif
}

/* The real wait to target on clk: 0 or -errno (pthread's positive errno, converted). */
static int real_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, int64_t target)
{
	struct timespec ts = pn__ns_ts(target);
	if (real_cond_clockwait)
		return -real_cond_clockwait(c, m, clk, &ts);
	return -real_cond_timedwait(c, m, &ts); /* clk is the cond's own here */
}

/* The cond wait: the kernel part is the real wait (to the plan's target, or to a time
 * already past when the plan only spins, so the mutex is checked and cycled as the
 * original would); the spin runs with the mutex released. 0 (signalled), -ETIMEDOUT, or
 * the real wait's or the mutex's -errno. */
static int precise_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                        const struct timespec *abstime, const void *ret)
{
	struct pn__sleep_plan p = PN__SLEEP_PLAN_INIT;
	pn__shim_enter(&p);
	unsigned n0 = pn__shim_nested();
	int64_t deadline = pn__ts_ns_sat(abstime);
	pn__sleep_plan(&p, clk, deadline, pn__shim_precision,
	               PN__SLEEP_KEEP_SLACK | PN__SLEEP_LIBC_CLOCK, NULL);
	p.warm[0] = ret;
	if (p.past)
		return pn__shim_leave(real_wait(c, m, clk, deadline));
	int r = real_wait(c, m, clk, p.kernel ? p.target : p.start);
	if (r != -ETIMEDOUT) { /* signalled (0), or an error: as the original */
		pn__sleep_cancel(&p);
		return pn__shim_leave(r);
	}
	if (p.kernel)
		pn__sleep_woke(&p, pn__shim_nested() == n0);
	if (p.now >= p.deadline) {
		pn__sleep_finish(&p);
		return pn__shim_leave(-ETIMEDOUT);
	}
	if ((r = pthread_mutex_unlock(m)) != 0)
		return pn__shim_leave(-r);
	pn__sleep_finish(&p);
	/* EOWNERDEAD (the mutex held, its state to recover) or ENOTRECOVERABLE, as the
	 * original's own re-lock would report them */
	r = pthread_mutex_lock(m);
	if (r == 0 && p.away) /* the clock stepped back: the rest is the real wait's */
		return pn__shim_leave(real_wait(c, m, clk, deadline));
	return pn__shim_leave(r ? -r : -ETIMEDOUT);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abstime)
{
	if (!real_cond_timedwait)
		resolve();
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !pn__ts_valid(abstime))
		return real_cond_timedwait(c, m, abstime);
	return -precise_cond(c, m, cond_clock(c), abstime, RET);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                  const struct timespec *abstime)
{
	if (!real_cond_clockwait)
		resolve();
	if (!real_cond_clockwait)
		return EINVAL;
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !pn__ts_valid(abstime) || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return real_cond_clockwait(c, m, clk, abstime);
	return -precise_cond(c, m, clk, abstime, RET);
}

/* A signal handler that jumps out of a sleep leaves the shim: the slack goes back and the
 * thread's next calls are precise again. (A handler that jumps within itself while it
 * interrupted a sleep ends the shim's part of that sleep too: the sleep then returns to the
 * program as the longjmp does, never.) */
#define JUMP(name, real)                                                                           \
	EXPORT void name(struct __jmp_buf_tag env[1], int val)                                     \
	{                                                                                          \
		if (!real)                                                                         \
			resolve();                                                                 \
		pn__shim_unwound();                                                                \
		real(env, val);                                                                    \
		__builtin_unreachable();                                                           \
	}
JUMP(longjmp, real_longjmp)
JUMP(_longjmp, real__longjmp)
JUMP(siglongjmp, real_siglongjmp)
#ifdef __GLIBC__ /* the fortified longjmp: glibc's only */
void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));
JUMP(__longjmp_chk, real_longjmp_chk)
#endif
