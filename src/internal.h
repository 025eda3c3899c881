/* SPDX-License-Identifier: MIT */
/*
 * internal.h: the basics every file of the library needs (branch hints, time units, TLS,
 * the counter read, timespec helpers) and the small services of clock.c, duration.c and
 * slack.c. pn__ names: exported from the static archive for the tool and the tests, never
 * declared in include/. The wait engine is in wait.h (its plan in plan.h, the kernel
 * waits in kernel.h), the wheel's test hooks in hooks.h.
 */
#ifndef PUNCTUAL_INTERNAL_H
#define PUNCTUAL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <punctual/clock.h>
#include "fs.h"

#define PN_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PN_NSEC        1000000000LL
/* Thread-local storage of a few bytes each (pointers, flags). In the preload shim,
 * initial-exec: it is loaded at startup, so an access is a load from the thread pointer,
 * not a call to __tls_get_addr between a deadline and the caller. */
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

/* ---- timespecs ---- */

/* ts in ns; the caller knows it fits (pn__ts_valid and tv_sec below INT64_MAX / PN_NSEC). */
static inline int64_t pn__ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * PN_NSEC + ts->tv_nsec;
}

/* Whether ts is a timeout or deadline the kernel accepts: tv_sec >= 0, tv_nsec in
 * [0, 1e9). */
static inline bool pn__ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < PN_NSEC;
}

/* ts in ns, INT64_MAX when it does not fit (centuries: a deadline never reached). ts valid. */
static inline int64_t pn__ts_ns_sat(const struct timespec *ts)
{
	int64_t v;
	if (__builtin_mul_overflow((int64_t)ts->tv_sec, PN_NSEC, &v) ||
	    __builtin_add_overflow(v, ts->tv_nsec, &v))
		return INT64_MAX;
	return v;
}

/* ns >= 0 as a timespec. */
static inline struct timespec pn__ns_ts(int64_t ns)
{
	return (struct timespec){ns / PN_NSEC, ns % PN_NSEC};
}

/* The whole ms in ts, rounded down: where only ms timeouts exist (epoll_pwait), the spin
 * covers the rest and the kernel never waits past it. */
static inline int pn__ts_ms_floor(const struct timespec *ts)
{
	return (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000);
}

/* ---- clocks (clock.c) ---- */

typedef int (*pn__clock_gettime_fn)(clockid_t, struct timespec *);

/* The vDSO's clock_gettime, or NULL when the kernel maps no vDSO or it lacks one. */
pn__clock_gettime_fn pn__clock_vdso_gettime(void);

/* Why the cycle counter is or isn't trusted, decided from CPUID, the kernel's list of
 * clocksources under pn__fs_root() and PUNCTUAL_CYCLES. Returns enum pn_cycles_source. */
int pn__clock_cycles_decide(const char **reason);

/* Test hook: forgets the cycle counter's source and calibration and takes the load-time
 * anchor again. force 0 decides anew (pn__clock_cycles_decide); PN_CYCLES_CLOCK, or this
 * architecture's counter, forces that source even where the kernel distrusts it, so that
 * a test runs the calibration on every host. Returns the source, or -EINVAL for a
 * counter this architecture lacks. Not thread-safe: no other thread may use the clock. */
int pn__clock_cycles_reset(int force);

/* clock_gettime(clk) in ns through the vDSO function pn_now uses. */
int64_t pn__clock_ns(clockid_t clk);

/* clk's time in ns: pn_now() for CLOCK_MONOTONIC, pn__clock_ns for the others. */
static inline int64_t pn__clock_now(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC ? pn_now() : pn__clock_ns(clk);
}

/* A system call's or libc call's result as the library returns it: -errno on failure. */
static inline int pn__neg_errno(long r)
{
	return r < 0 ? -errno : (int)r;
}

/* ---- durations (duration.c) ---- */

/* Parses a duration: terms of a number and a unit (ns, us, µs, ms, s, m, h), units
 * decreasing ("250us", "1.5ms", "1m30s"), or a bare number alone, in default_unit_ns (0: a
 * bare number other than 0 is refused with -EDOM: a unit is needed). Rejects negatives,
 * garbage and overflow. Returns 0, or -EINVAL / -ERANGE / -EDOM with *res untouched. */
int pn__duration_parse(const char *s, int64_t default_unit_ns, int64_t *res);
/* Parses a share of a CPU, the budget's grammar for PUNCTUAL_BUDGET and `--budget`: "10%",
 * "12.5%", a bare number (a percentage too), or "auto" ("default" too) for
 * PN_SLEEP_BUDGET_AUTO. 0 with *budget_ppm set; -EINVAL malformed, -ERANGE outside
 * [0%, 100%], *budget_ppm untouched. */
int pn__duration_parse_share(const char *s, int32_t *budget_ppm);
/* ns for people: "0", "850 ns", "12.5 us", "4 ms", "1.23 s" (one decimal from 0.05 of a
 * unit, three digits beyond), into buf. Returns buf. */
const char *pn__duration_format(char *buf, size_t n, double ns);

/* ---- timer slack (slack.c) ---- */

/* The calling thread's timer slack as pn_slack_set last set it, 0 when unknown (never set,
 * or reset to the default). */
int64_t pn__slack_known(void);
/* prctl(PR_SET_TIMERSLACK, ns) without touching what pn__slack_known says: for a slack that
 * is put back before the caller sees it (the preload shim). 0 or -errno. */
int pn__slack_put(int64_t ns);

#endif
