/* SPDX-License-Identifier: MIT */
/*
 * internal.h: helpers shared by the library's modules and reachable by the tool and the
 * tests (pn__ names: exported from the static archive only, never declared in
 * include/).
 */
#ifndef PUNCTUAL_INTERNAL_H
#define PUNCTUAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define PN_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PN_NSEC        1000000000LL

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

/* Root prefix for every /proc and /sys read ("" by default; tests point it at fixture
 * trees). pn__set_root copies at most PATH_MAX bytes; NULL resets. Not thread-safe: set
 * it before the reads it is meant for. */
const char *pn__root(void);
void pn__set_root(const char *root);

/* Reads at most n-1 bytes of pn__root()/path into buf, NUL-terminated. Returns the byte
 * count or -errno. */
int pn__read_file(const char *path, char *buf, size_t n);

/* Why the cycle counter is or isn't trusted, decided from CPUID, the kernel's list of
 * clocksources under pn__root() and PUNCTUAL_CYCLES. Returns enum pn_cycles_source. */
int pn__cycles_decide(const char **reason);

/* Parses a duration such as "250", "1.5ms", "10us", "2s" (ns, us or µs, ms, s); a bare
 * number is in default_unit_ns. Rejects negatives, garbage and overflow. Returns 0, or
 * -EINVAL / -ERANGE with *res untouched. */
int pn__parse_duration(const char *s, int64_t default_unit_ns, int64_t *res);

/* clock_gettime(clk) in ns through the vDSO function pn_now uses. */
int64_t pn__clock_ns(clockid_t clk);

/* pn_sleep_until in three steps, for callers that wait in the kernel their own way (the
 * preload shim: nanosleep that reports EINTR, cond waits): plan computes the kernel
 * target and sets the slack; after a wait that reached the target, woke learns from it;
 * finish spins to the deadline on clk and counts. */
struct pn__sleep_plan {
	clockid_t clk;
	int64_t deadline, precision;
	int64_t start, now, target, slack;
	int k;
	_Bool past;   /* the deadline had passed: return at once */
	_Bool kernel; /* wait in the kernel until target first */
};
void pn__sleep_plan(struct pn__sleep_plan *p, clockid_t clk, int64_t deadline, int64_t precision);
void pn__sleep_woke(struct pn__sleep_plan *p);
int pn__sleep_finish(struct pn__sleep_plan *p);

/* pn_slack_set tells pn_sleep_until what the calling thread's slack now is (0: the
 * default, whose value it does not know). */
void pn__sleep_slack_changed(int64_t ns);

/* Test hooks of the timer wheel (tests/unit/test_wheel.c, fuzz/fuzz_wheel.c). sort_tune:
 * fail makes the expiry's sort buffer fail to grow (the list sort is used); radix_min is
 * the shortest due list sorted by radix (default 129). seq_set sets the next insertion
 * sequence number, to cross its 2^52 wrap. */
struct pn_wheel;
void pn__wheel_sort_tune(_Bool fail, size_t radix_min);
void pn__wheel_seq_set(struct pn_wheel *w, uint64_t seq);

#endif
