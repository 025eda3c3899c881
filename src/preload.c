/* SPDX-License-Identifier: MIT */
/*
 * preload.c: libpunctual-preload.so, which `punctual run --precise` puts in LD_PRELOAD
 * so that an unmodified, dynamically linked program sleeps precisely: nanosleep,
 * clock_nanosleep (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME and CLOCK_TAI, relative
 * and TIMER_ABSTIME), usleep, pthread_cond_timedwait and pthread_cond_clockwait (how the
 * JDK's Thread.sleep waits) keep their POSIX contracts, but wake through pn_sleep_until's strategy:
 * never early, late by at most PUNCTUAL_PRECISION. The event-loop waits (poll, the epoll family)
 * are in preload_wait.c; what both files share, in preload.h.
 *
 * Inert unless PUNCTUAL_PRECISION is set (ns, or with a unit: 10us): every call then
 * goes straight to the real function, found once with dlsym(RTLD_NEXT).
 *
 * Contracts kept: return values and errno; EINTR with the remaining time when a signal
 * handler runs during the sleep, in any phase (the sleep is not resumed, as the original
 * would not be); TIMER_ABSTIME semantics, including REALTIME deadlines (the kernel part
 * waits on the clock the caller named, the spin reads that clock); cond waits return
 * with the mutex held (or the error the original gives: EPERM for an error-checking
 * mutex the caller does not hold, EOWNERDEAD for a robust one whose owner died) and
 * still wake on pthread_cond_signal while in the kernel part; the thread's timer slack:
 * the shim lowers it only for its own kernel waits and puts back what the thread had
 * (read at every call, so a program's own prctl is honoured), so the program's other
 * calls and its children see the slack they would see without the shim.
 *
 * How a signal interrupts the final spin: the spin blocks signals and, every
 * PN__SIGCHECK_NS, lets those the program's mask allows in (ppoll with a zero timeout and
 * that mask); if a handler ran, the call returns EINTR. So a handler runs at most 2 us
 * later than it would have, on this thread; a process-directed signal that arrives in
 * that moment may be taken by another thread that does not block it.
 *
 * Where they bend, documented in punctual(1): during a cond wait's final spin the mutex
 * is released and the thread is not waiting on the cond: a pthread_cond_signal then wakes
 * nobody, and the wait returns ETIMEDOUT at its deadline, which POSIX permits for a
 * signal that races the timeout (callers re-check their predicate). Signals do not end a
 * cond wait (the original does not return EINTR either).
 *
 * Async-signal-safe where the originals are: no locks, no allocation, state per thread.
 * A call made while the thread is already inside the shim (a signal handler) goes to the
 * real function, and the outer call does not learn from a wakeup that a handler delayed.
 * A handler that leaves a sleep with longjmp or siglongjmp (interposed too) puts the
 * slack back and leaves the shim, so the thread's next sleeps are precise again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include "internal.h"
#include "preload.h"

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
int64_t pn__shim_precision = -1; /* -1: inert */
static PN_TLS bool inside;
static PN_TLS unsigned nested; /* calls that came in while inside: signal handlers */
static PN_TLS struct pn__sleep_plan *in_progress; /* the sleep in progress, while inside */
static unsigned long handled; /* calls made precise, for tests: punctual_preload_handled */

/* How many calls the shim has made precise in this process (tests read it with dlsym). */
EXPORT unsigned long punctual_preload_handled(void);
EXPORT unsigned long punctual_preload_handled(void)
{
	return __atomic_load_n(&handled, __ATOMIC_RELAXED);
}

/* The calling thread's pn_sleep_stats as the shim's own copy of the library keeps them
 * (tests read it with dlsym; a program's own libpunctual keeps its own). */
EXPORT int punctual_preload_sleep_stats(struct pn_sleep_stats *st);
EXPORT int punctual_preload_sleep_stats(struct pn_sleep_stats *st)
{
	return pn_sleep_stats(st);
}

/* PUNCTUAL_PRECISION: a duration, ns when bare (10000, 10us); -1 (inert) if malformed. */
static int64_t parse_precision(const char *s)
{
	int64_t v;
	return s && pn__parse_duration(s, 1, &v) == 0 ? v : -1;
}

static void resolve(void)
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

/* ---- the call time ----------------------------------------------------------------
 *
 * A timed call's deadline counts from the instant the program called. Reading the clock
 * there (pn_now(): a call into the vDSO through a pointer, code and data that the last
 * wait left cold) took p50 120-150 ns and p99 0.5-0.9 us from the shim's entry to the
 * clock's own counter read, all of it against the deadline (the shim's epoll_wait(1 ms),
 * rdtsc stamps, 3 runs, 2026-12-02). So the counter is read first thing, ordered (never
 * before the program's own clock reads), and converted after: a clock read to warm its
 * path, then the counter, then the clock (at or after the counter's instant), less the
 * counts since the entry at call_mult, a lower bound of the clock's ns per count. The
 * call time so comes out at or after the instant of the call, never before it, and three
 * quarters of the cold read leave the deadline: the call time less a clock read made just
 * before the call, after a 1 ms sleep, was p50 150-220 ns, p90 350-520 and p99
 * 0.74-1.19 us with the clock read at the entry, p50 85-136, p90 210-250 and p99
 * 0.48-0.7 us so (punctual_preload_call_time, 2000 calls, 3 runs each, alternating).
 *
 * The bound: the anchor is the counter read, then the clock (anchor_t at or after the
 * counter's instant); once it is CALL_BASE_NS old, a call reads the clock, then the
 * counter (the clock's value at or before the counter's instant), and the ratio of the
 * two spans is at most the clock's mean ns per count between them (a preemption in either
 * pair only lowers it). Less a quarter (CALL_MARGIN_SHIFT): the clock's rate against the
 * counter is not fixed. adjtimex's ADJ_TICK moves CLOCK_MONOTONIC's by up to 10% (chrony
 * slews through it), so a rate taken in one regime may be 1.1/0.9 of another's; a clock
 * that does not count in the counter's units (hpet, acpi_pm) drifts against it too. A
 * 300 ns gap so comes out 75 ns late, not 300. A gap whose conversion exceeds
 * CALL_GAP_MAX_NS is not converted: a suspend in it (the counter runs on, the monotonic
 * clock does not) would put the call time before the entry, and a preemption that long
 * makes the wait late anyway. Until the anchor is old enough, or without a trusted
 * counter (the kernel dropped the TSC: pn_cycles_source), the call time is the clock read. */
#define CALL_BASE_NS      10000000
#define CALL_MARGIN_SHIFT 2
#define CALL_GAP_MAX_NS   1000000
#define CALL_NONE         UINT64_MAX
static uint64_t anchor_c; /* atomic, set after anchor_t; 0: none (a call before the constructor) */
static int64_t anchor_t;
static uint64_t call_mult; /* ns per count << 32, atomic; 0: not yet; CALL_NONE: never */

static void call_anchor(void)
{
	if (PN_ARCH_CYCLES_SOURCE == PN_CYCLES_CLOCK ||
	    pn_cycles_source() != PN_ARCH_CYCLES_SOURCE) {
		__atomic_store_n(&call_mult, CALL_NONE, __ATOMIC_RELAXED);
		return;
	}
	uint64_t c = pn__arch_cycles_ordered();
	anchor_t = pn_now();
	__atomic_store_n(&anchor_c, c, __ATOMIC_RELEASE);
}

/* call_mult from the anchor, once the anchor is old enough (stored); 0 until then. */
static __attribute__((noinline)) uint64_t call_mult_measure(void)
{
	int64_t t = pn_now();
	uint64_t c = pn__arch_cycles_ordered(), c0 = __atomic_load_n(&anchor_c, __ATOMIC_ACQUIRE);
	if (!c0 || t - anchor_t < CALL_BASE_NS)
		return 0;
	uint64_t m = CALL_NONE; /* a counter that did not advance: never */
	if (c > c0) {
		unsigned __int128 r = ((unsigned __int128)(t - anchor_t) << 32) / (c - c0);
		r -= r >> CALL_MARGIN_SHIFT;
		m = r > 0 && r < CALL_NONE ? (uint64_t)r : CALL_NONE;
	}
	__atomic_store_n(&call_mult, m, __ATOMIC_RELAXED);
	return m;
}

int64_t pn__shim_call_ns(uint64_t entry)
{
	uint64_t m = __atomic_load_n(&call_mult, __ATOMIC_RELAXED);
	if (PN_UNLIKELY(!m))
		m = call_mult_measure();
	if (!m || m == CALL_NONE)
		return pn_now();
	(void)pn_now(); /* the cold read, within the gap: the one below is quick */
	uint64_t c = pn__arch_cycles_ordered();
	int64_t now = pn_now();
	if (c < entry)
		return now;
	unsigned __int128 gap = ((unsigned __int128)(c - entry) * m) >> 32;
	return gap <= CALL_GAP_MAX_NS ? now - (int64_t)gap : now;
}

/* Test hook: the call time of an entry spin_ns before its conversion (the counter read,
 * then a spin of spin_ns on the clock), so that a test can see it is never before the
 * entry and, with a counter, near it rather than at the conversion. */
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns);
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns)
{
	uint64_t entry = pn__arch_cycles_ordered();
	if (spin_ns > 0) /* none: the conversion's clock read as cold as at a call's entry */
		for (int64_t end = pn_now() + spin_ns; pn_now() < end;)
			pn__arch_relax();
	return pn__shim_call_ns(entry);
}

__attribute__((constructor)) static void preload_init(void)
{
	call_anchor();
	resolve();
	pn__shim_precision = parse_precision(getenv("PUNCTUAL_PRECISION"));
	pn__shim_resolve_waits();
}

static bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < PN_NSEC;
}

static int64_t ts_ns(const struct timespec *ts)
{
	int64_t v;
	if (__builtin_mul_overflow((int64_t)ts->tv_sec, PN_NSEC, &v) ||
	    __builtin_add_overflow(v, ts->tv_nsec, &v))
		return INT64_MAX;
	return v;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ns / PN_NSEC, ns % PN_NSEC};
}

/* The kernel part through the real clock_nanosleep, a cancellation point as the
 * program's call was. 0, or a positive errno. */
static int kernel_sleep(clockid_t clk, int64_t target)
{
	struct timespec ts = ns_ts(target);
	if (real_clock_nanosleep)
		return real_clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
	return -pn__sleep_abs(clk, target);
}

void pn__shim_enter(struct pn__sleep_plan *p)
{
	inside = true;
	in_progress = p;
	__atomic_add_fetch(&handled, 1, __ATOMIC_RELAXED);
}

int pn__shim_leave(int r)
{
	in_progress = NULL;
	inside = false;
	return r;
}

/* EINTR, or 0 when clk has reached deadline by now: the kernel reports a handler that ran
 * during a sleep only while time remains (nanosleep's rem is never 0 with EINTR). */
static int intr_result(clockid_t clk, int64_t deadline)
{
	return pn__clock_now(clk) >= deadline ? 0 : EINTR;
}

static void abs_unwound(void *arg)
{
	(void)arg;
	pn__shim_unwound();
}

/* Sleeps until deadline on clk: 0, or EINTR when a signal handler ran before it. ret:
 * where the program's call returns. A cancellation point, as the sleeps are: a pending
 * cancel acts at the entry and in the spin (the kernel part is the real call). */
__attribute__((noinline)) static int precise_abs(clockid_t clk, int64_t deadline, const void *ret)
{
	pthread_testcancel();
	struct pn__sleep_plan p = {
	        .restore = -1}; /* a jump out before the plan: nothing to put back */
	int r = 0;
	pn__shim_enter(&p);
	pthread_cleanup_push(abs_unwound, NULL);
	unsigned n0 = nested;
	pn__sleep_plan(&p, clk, deadline, pn__shim_precision,
	               PN__SLEEP_KEEP_SLACK | PN__SLEEP_EINTR | PN__SLEEP_LIBC_CLOCK |
	                       PN__SLEEP_TAIL | PN__SLEEP_CANCEL,
	               NULL);
	p.warm[0] = ret;
	p.warm[1] = RET;
	if (p.stop) {
		r = -p.stop;
	} else if (!p.past) {
		if (p.kernel && (r = kernel_sleep(clk, p.target)) != 0) {
			pn__sleep_cancel(&p);
		} else {
			if (p.kernel)
				pn__sleep_woke(&p, nested == n0);
			r = pn__sleep_finish_intr(&p);
			pn__sleep_tail(&p);
		}
	}
	if (r == EINTR)
		r = intr_result(clk, deadline);
	pthread_cleanup_pop(0);
	return pn__shim_leave(r);
}

/* Sleeps ns from now (the call time, read first thing) on the monotonic clock (a
 * relative sleep is a duration whatever the clock); on EINTR stores what remains in
 * *rem, as the kernel does. */
static int precise_rel(int64_t now, int64_t ns, struct timespec *rem, const void *ret)
{
	int64_t deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	int r = precise_abs(CLOCK_MONOTONIC, deadline, ret);
	if (r == EINTR && rem) {
		int64_t left = deadline - pn_now();
		*rem = ns_ts(left > 0 ? left : 0);
	}
	return r;
}

/* A relative sleep on CLOCK_BOOTTIME, which counts a suspend where the monotonic clock does
 * not: to the call time on BOOTTIME plus ns. The offset is read monotonic first, so it
 * comes out at or above the true one (never early). */
static int precise_boot(int64_t now, int64_t ns, struct timespec *rem, const void *ret)
{
	int64_t mono = pn_now(), off = pn__clock_ns(CLOCK_BOOTTIME) - mono, deadline;
	if (__builtin_add_overflow(now + off, ns, &deadline))
		deadline = INT64_MAX;
	int r = precise_abs(CLOCK_BOOTTIME, deadline, ret);
	if (r == EINTR && rem) {
		int64_t left = deadline - pn__clock_ns(CLOCK_BOOTTIME);
		*rem = ns_ts(left > 0 ? left : 0);
	}
	return r;
}

bool pn__shim_active(void)
{
	if (pn__shim_precision < 0)
		return false;
	if (inside) {
		nested++;
		return false;
	}
	return true;
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	uint64_t at = pn__shim_entry();
	if (!real_nanosleep)
		resolve();
	if (!pn__shim_active() || !req || !ts_valid(req))
		return real_nanosleep(req, rem);
	int r = precise_rel(pn__shim_call_ns(at), ts_ns(req), rem, RET);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	uint64_t at = pn__shim_entry();
	if (!real_clock_nanosleep)
		resolve();
	if (!pn__shim_active() || !req || !ts_valid(req) || (flags & ~TIMER_ABSTIME) ||
	    (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME && clk != CLOCK_BOOTTIME &&
	     clk != CLOCK_TAI))
		return real_clock_nanosleep(clk, flags, req, rem);
	if (flags & TIMER_ABSTIME)
		return precise_abs(clk, ts_ns(req), RET);
	if (clk == CLOCK_BOOTTIME)
		return precise_boot(pn__shim_call_ns(at), ts_ns(req), rem, RET);
	return precise_rel(pn__shim_call_ns(at), ts_ns(req), rem, RET);
}

EXPORT int usleep(useconds_t us)
{
	uint64_t at = pn__shim_entry();
	if (!real_usleep)
		resolve();
	if (!pn__shim_active())
		return real_usleep(us);
	int r = precise_rel(pn__shim_call_ns(at), (int64_t)us * 1000, NULL, RET);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

/* The clock a cond waits on: glibc keeps it in bit 1 of __wrefs (the layout is part of
 * its ABI, fixed since 2.25: static initializers depend on it). */
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

static int real_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, int64_t target)
{
	struct timespec ts = ns_ts(target);
	if (real_cond_clockwait)
		return real_cond_clockwait(c, m, clk, &ts);
	return real_cond_timedwait(c, m, &ts); /* clk is the cond's own here */
}

/* The cond wait: the kernel part is the real wait (to the plan's target, or to a time
 * already past when the plan only spins, so the mutex is checked and cycled as the
 * original would); the spin runs with the mutex released. */
static int precise_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                        const struct timespec *abstime, const void *ret)
{
	struct pn__sleep_plan p = {
	        .restore = -1}; /* a jump out before the plan: nothing to put back */
	pn__shim_enter(&p);
	unsigned n0 = nested;
	pn__sleep_plan(&p, clk, ts_ns(abstime), pn__shim_precision,
	               PN__SLEEP_KEEP_SLACK | PN__SLEEP_LIBC_CLOCK, NULL);
	p.warm[0] = ret;
	if (p.past)
		return pn__shim_leave(real_wait(c, m, clk, ts_ns(abstime)));
	int r = real_wait(c, m, clk, p.kernel ? p.target : p.start);
	if (r != ETIMEDOUT) { /* signalled (0), or an error: as the original */
		pn__sleep_cancel(&p);
		return pn__shim_leave(r);
	}
	if (p.kernel)
		pn__sleep_woke(&p, nested == n0);
	if (p.now >= p.deadline) {
		pn__sleep_finish(&p);
		return pn__shim_leave(ETIMEDOUT);
	}
	if ((r = pthread_mutex_unlock(m)) != 0)
		return pn__shim_leave(r);
	pn__sleep_finish(&p);
	/* EOWNERDEAD (the mutex held, its state to recover) or ENOTRECOVERABLE, as the
	 * original's own re-lock would report them */
	r = pthread_mutex_lock(m);
	return pn__shim_leave(r ? r : ETIMEDOUT);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abstime)
{
	if (!real_cond_timedwait)
		resolve();
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !ts_valid(abstime))
		return real_cond_timedwait(c, m, abstime);
	return precise_cond(c, m, cond_clock(c), abstime, RET);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                  const struct timespec *abstime)
{
	if (!real_cond_clockwait)
		resolve();
	if (!real_cond_clockwait)
		return EINVAL;
	if (!pn__shim_active() || pn__null_arg(c) || pn__null_arg(m) || pn__null_arg(abstime) ||
	    !ts_valid(abstime) || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return real_cond_clockwait(c, m, clk, abstime);
	return precise_cond(c, m, clk, abstime, RET);
}

/* A signal handler that jumps out of a sleep leaves the shim: the slack goes back and the
 * thread's next calls are precise again. (A handler that jumps within itself while it
 * interrupted a sleep ends the shim's part of that sleep too: the sleep then returns to
 * the program as the longjmp does, never.) A cancellation that unwinds a call does the
 * same, for the program's cleanup handlers. */
void pn__shim_unwound(void)
{
	if (!inside)
		return;
	if (in_progress)
		pn__sleep_cancel(in_progress);
	pn__shim_leave(0);
}

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
void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));
JUMP(__longjmp_chk, real_longjmp_chk)
