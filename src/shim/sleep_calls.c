/* SPDX-License-Identifier: MIT */
/*
 * sleep_calls.c: the preload shim's sleeps and cond waits, never early, late by at most
 * PUNCTUAL_PRECISION, each keeping its call's contract (punctual(1), "run --precise: the
 * calls" and "event loops and signals": returns, errno, EINTR with the time left,
 * cancellation, a cond wait's mutex and where it bends). Also longjmp and its kin, so that
 * a handler that jumps out of a sleep leaves the shim.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "wait/wait.h"
#include "shim/core.h"
#include "shim/real.h"

/* -EINTR, or 0 when clk has reached deadline: the kernel reports a handler that ran only
 * while time remains. */
static int intr_result(clockid_t clk, int64_t deadline)
{
	return pn__shim_clock(clk) >= deadline ? 0 : -EINTR;
}

static void abs_unwound(void *arg)
{
	(void)arg;
	pn__shim_unwound();
}

/* Sleeps until deadline on clk: 0, or -EINTR when a handler ran before it (-errno from the
 * kernel part). A cancellation point, at the entry and in the spin. */
__attribute__((noinline)) static int precise_abs(clockid_t clk, int64_t deadline, const void *ret)
{
	pthread_testcancel();
	struct pn__plan p = PN__PLAN_INIT;
	struct pn__waiter w = {.kind = PN__WAIT_SLEEP,
	                       .k = &pn__real_kernel,
	                       .sigcheck = PN__SIGCHECK_NS,
	                       .nested = pn__shim_nested(),
	                       .ret = {ret, RET}};
	int r;
	pn__shim_enter(&p);
	pthread_cleanup_push(abs_unwound, NULL);
	r = pn__wait(&w, &p, clk, deadline, pn__shim_precision,
	             PN__PLAN_KEEP_SLACK | PN__PLAN_EINTR | PN__PLAN_LIBC_CLOCK | PN__PLAN_TAIL |
	                     PN__PLAN_CANCEL);
	r = pn__wait_tail(&w, &p, r);
	if (r == -EINTR)
		r = intr_result(clk, deadline);
	pthread_cleanup_pop(0);
	return pn__shim_leave(r);
}

/* Sleeps ns from the call time on CLOCK_MONOTONIC (BOOTTIME's own, which counts a suspend);
 * on -EINTR stores what remains in *rem. BOOTTIME's offset is read monotonic first, so it
 * comes out at or above the true one. */
static int precise_rel(clockid_t clk, int64_t now, int64_t ns, struct timespec *rem,
                       const void *ret)
{
	if (clk != CLOCK_BOOTTIME) {
		clk = CLOCK_MONOTONIC;
	} else {
		int64_t mono = pn_now();
		now += pn__shim_clock(CLOCK_BOOTTIME) - mono;
	}
	int64_t deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	int r = precise_abs(clk, deadline, ret);
	if (r == -EINTR && rem) { /* time remained when the call decided on EINTR: never 0 */
		int64_t left = deadline - pn__shim_clock(clk);
		*rem = pn__ns_ts(left > 0 ? left : 1);
	}
	return r;
}

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
	uint64_t at = pn__calltime_entry();
	const struct pn__real *real = pn__real_get();
	if (!pn__shim_active() || !req || !pn__ts_valid(req)) {
		if (pn__shim_observes() && req && pn__ts_valid(req)) {
			int64_t call = pn__calltime_ns(at);
			return PN__OBSERVED(CLOCK_MONOTONIC, call,
			                    pn__shim_after(call, pn__ts_ns_sat(req)),
			                    real->nanosleep(req, rem), pn_r == 0);
		}
		return real->nanosleep(req, rem);
	}
	return errno_result(
	        precise_rel(CLOCK_MONOTONIC, pn__calltime_ns(at), pn__ts_ns_sat(req), rem, RET));
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	uint64_t at = pn__calltime_entry();
	const struct pn__real *real = pn__real_get();
	bool ours = req && pn__ts_valid(req) && !(flags & ~TIMER_ABSTIME) &&
	            (clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME || clk == CLOCK_BOOTTIME ||
	             clk == CLOCK_TAI);
	if (ours && pn__shim_observes()) {
		if (flags & TIMER_ABSTIME)
			return PN__OBSERVED(clk, pn__shim_clock(clk), pn__ts_ns_sat(req),
			                    real->clock_nanosleep(clk, flags, req, rem), pn_r == 0);
		int64_t call = pn__calltime_ns(at); /* a relative sleep: a duration */
		return PN__OBSERVED(CLOCK_MONOTONIC, call, pn__shim_after(call, pn__ts_ns_sat(req)),
		                    real->clock_nanosleep(clk, flags, req, rem), pn_r == 0);
	}
	if (!pn__shim_active() || !ours) /* active first: it counts a handler's call */
		return real->clock_nanosleep(clk, flags, req, rem);
	if (flags & TIMER_ABSTIME)
		return -precise_abs(clk, pn__ts_ns_sat(req), RET);
	return -precise_rel(clk, pn__calltime_ns(at), pn__ts_ns_sat(req), rem, RET);
}

EXPORT int usleep(useconds_t us)
{
	uint64_t at = pn__calltime_entry();
	const struct pn__real *real = pn__real_get();
	if (!pn__shim_active()) {
		if (pn__shim_observes() && us > 0) {
			int64_t call = pn__calltime_ns(at);
			return PN__OBSERVED(CLOCK_MONOTONIC, call, call + (int64_t)us * 1000,
			                    real->usleep(us), pn_r == 0);
		}
		return real->usleep(us);
	}
	return errno_result(
	        precise_rel(CLOCK_MONOTONIC, pn__calltime_ns(at), (int64_t)us * 1000, NULL, RET));
}

/* The clock a cond waits on: bit 1 of glibc's __wrefs (its ABI since 2.25). */
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

/* A cond wait: the kernel part is the real wait (to the plan's target, to its start when
 * the plan only spins, so that the mutex is cycled as the original would), the spin with
 * the mutex released. */
struct cond_waiter {
	struct pn__waiter w;
	pthread_cond_t *c;
	pthread_mutex_t *m;
};

/* The real wait to target on clk: 1 signalled, 0 timed out, or -errno. */
static int cond_until(struct pn__waiter *w, clockid_t clk, int64_t target)
{
	struct cond_waiter *s = (struct cond_waiter *)w;
	struct timespec ts = pn__ns_ts(target);
	int r = pn__real.cond_clockwait ? pn__real.cond_clockwait(s->c, s->m, clk, &ts)
	                                : pn__real.cond_timedwait(s->c, s->m, &ts); /* its own */
	return r == 0 ? 1 : r == ETIMEDOUT ? 0 : -r;
}

static int cond_release(struct pn__waiter *w)
{
	return -pthread_mutex_unlock(((struct cond_waiter *)w)->m);
}

/* EOWNERDEAD or ENOTRECOVERABLE, as the original's own re-lock would report them */
static int cond_reacquire(struct pn__waiter *w)
{
	return -pthread_mutex_lock(((struct cond_waiter *)w)->m);
}

/* 0 (signalled), -ETIMEDOUT, or the real wait's or the mutex's -errno. */
static int precise_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                        const struct timespec *abstime, const void *ret)
{
	struct pn__plan p = PN__PLAN_INIT;
	struct cond_waiter s = {{.kind = PN__WAIT_OWN,
	                         .until = cond_until,
	                         .release = cond_release,
	                         .reacquire = cond_reacquire,
	                         .nested = pn__shim_nested(),
	                         .past_once = true,
	                         .kernel_first = true,
	                         .ret = {ret, NULL}},
	                        c,
	                        m};
	pn__shim_enter(&p);
	int r = pn__wait(&s.w, &p, clk, pn__ts_ns_sat(abstime), pn__shim_precision,
	                 PN__PLAN_KEEP_SLACK | PN__PLAN_LIBC_CLOCK);
	return pn__shim_leave(r > 0 ? 0 : r == 0 ? -ETIMEDOUT : r);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abstime)
{
	const struct pn__real *real = pn__real_get();
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !pn__ts_valid(abstime)) {
		if (!pn__shim_observes() || pn__null_arg(c) || pn__null_arg(m) ||
		    pn__null_arg(abstime) || !pn__ts_valid(abstime))
			return real->cond_timedwait(c, m, abstime);
		clockid_t clk = cond_clock(c);
		return PN__OBSERVED(clk, pn__shim_clock(clk), pn__ts_ns_sat(abstime),
		                    real->cond_timedwait(c, m, abstime), pn_r == ETIMEDOUT);
	}
	return -precise_cond(c, m, cond_clock(c), abstime, RET);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                  const struct timespec *abstime)
{
	const struct pn__real *real = pn__real_get();
	if (!real->cond_clockwait)
		return EINVAL;
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !pn__ts_valid(abstime) || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)) {
		if (!pn__shim_observes() || pn__null_arg(c) || pn__null_arg(m) ||
		    pn__null_arg(abstime) || !pn__ts_valid(abstime) ||
		    (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
			return real->cond_clockwait(c, m, clk, abstime);
		return PN__OBSERVED(clk, pn__shim_clock(clk), pn__ts_ns_sat(abstime),
		                    real->cond_clockwait(c, m, clk, abstime), pn_r == ETIMEDOUT);
	}
	return -precise_cond(c, m, clk, abstime, RET);
}

/* A handler that jumps out of a sleep leaves the shim: the slack goes back and the thread's
 * next calls are precise again. */
#define JUMP(name, field)                                                                          \
	EXPORT void name(struct __jmp_buf_tag env[1], int val)                                     \
	{                                                                                          \
		const struct pn__real *real = pn__real_get();                                      \
		pn__shim_unwound();                                                                \
		real->field(env, val);                                                             \
		__builtin_unreachable();                                                           \
	}
JUMP(longjmp, longjmp)
JUMP(_longjmp, _longjmp)
JUMP(siglongjmp, siglongjmp)
#ifdef __GLIBC__ /* the fortified longjmp: glibc's only */
void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));
JUMP(__longjmp_chk, longjmp_chk)
#endif
