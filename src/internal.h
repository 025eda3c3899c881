/* SPDX-License-Identifier: MIT */
/*
 * internal.h: the basics every file of the library needs (branch hints, time units, TLS,
 * the counter read, timespec helpers) and the small services of the clock, durations and
 * slack. pn__ names are exported from the static archive for the tool and the tests,
 * never declared in include/.
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
/* Thread-local storage of a few bytes each. In the shim, initial-exec: an access is a load
 * from the thread pointer, not a call to __tls_get_addr between a deadline and the caller. */
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

/* ts in ns; the caller knows it fits. */
static inline int64_t pn__ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * PN_NSEC + ts->tv_nsec;
}

/* Whether the kernel accepts ts: tv_sec >= 0, tv_nsec in [0, 1e9). */
static inline bool pn__ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < PN_NSEC;
}

/* ts (valid) in ns, INT64_MAX when it does not fit. */
static inline int64_t pn__ts_ns_sat(const struct timespec *ts)
{
	int64_t v;
	if (__builtin_mul_overflow((int64_t)ts->tv_sec, PN_NSEC, &v) ||
	    __builtin_add_overflow(v, ts->tv_nsec, &v))
		return INT64_MAX;
	return v;
}

static inline struct timespec pn__ns_ts(int64_t ns)
{
	return (struct timespec){ns / PN_NSEC, ns % PN_NSEC};
}

/* The whole ms in ts, rounded down: the kernel never waits past it, the spin covers the
 * rest. */
static inline int pn__ts_ms_floor(const struct timespec *ts)
{
	return (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000);
}

/* ---- clocks (clock.c) ---- */

typedef int (*pn__clock_gettime_fn)(clockid_t, struct timespec *);

/* The vDSO's clock_gettime, or NULL. */
pn__clock_gettime_fn pn__clock_vdso_gettime(void);

/* Whether the cycle counter is trusted (CPUID, the kernel's clocksources, PUNCTUAL_CYCLES):
 * enum pn_cycles_source, and why. */
int pn__clock_cycles_decide(const char **reason);

/* Test hook: forgets the counter's source and calibration and takes the load-time anchor
 * again; force 0 decides anew, else forces PN_CYCLES_CLOCK or this architecture's counter.
 * The source, or -EINVAL. Not thread-safe. */
int pn__clock_cycles_reset(int force);

/* clock_gettime(clk) in ns through pn_now's vDSO function. */
int64_t pn__clock_ns(clockid_t clk);

/* clk's time in ns: pn_now() for CLOCK_MONOTONIC, pn__clock_ns for the others. */
static inline int64_t pn__clock_now(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC ? pn_now() : pn__clock_ns(clk);
}

static inline int pn__neg_errno(long r)
{
	return r < 0 ? -errno : (int)r;
}

/* ---- durations (duration.c) ---- */

/* A duration: terms of a number and a unit (ns, us, µs, ms, s, m, h), units decreasing, or
 * a bare number alone in default_unit_ns (0: refused with -EDOM). 0, or -EINVAL, -ERANGE,
 * -EDOM with *res untouched. */
int pn__duration_parse(const char *s, int64_t default_unit_ns, int64_t *res);
/* A share of a CPU, the budget's grammar: "10%", "12.5%", a bare percentage, or "auto"
 * ("default"). 0; -EINVAL malformed, -ERANGE outside [0%, 100%], *budget_ppm untouched. */
int pn__duration_parse_share(const char *s, int32_t *budget_ppm);
/* ns for people ("12.5 us") into buf. Returns buf. */
const char *pn__duration_format(char *buf, size_t n, double ns);

/* ---- timer slack (slack.c) ---- */

/* The thread's slack as pn_slack_set last set it, 0 when unknown. */
int64_t pn__slack_known(void);
/* prctl(PR_SET_TIMERSLACK) for a slack put back before the caller sees it, leaving
 * pn__slack_known alone. 0 or -errno. */
int pn__slack_put(int64_t ns);

#endif
