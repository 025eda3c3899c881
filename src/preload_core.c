/* SPDX-License-Identifier: MIT */
/*
 * preload_core.c: the core of libpunctual-preload.so, which `punctual run --precise` puts in
 * LD_PRELOAD so that an unmodified, dynamically linked program's sleeps and waits end
 * precisely (preload_sleep.c, preload_wait.c) and `run --cpus` sets the CPU count it sees
 * (preload_cpus.c). Here: whether the shim is active (PUNCTUAL_PRECISION: a duration, ns
 * when bare; inert when unset or malformed, every call then going to the real function),
 * the thread's place inside it, the test hooks that count what it did, and PUNCTUAL_STATS
 * (set and not "0"): each thread's waits, lateness, waits late beyond the precision and
 * spin share, one line on stderr as the thread exits, and at the process's exit for the
 * threads still running (read as they are).
 *
 * Async-signal-safe where the originals are: no locks, no allocation, state per thread. A
 * call made while the thread is already inside the shim (a signal handler's) goes to the
 * real function, and the outer call does not learn from a wakeup a handler delayed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "preload_core.h"
#include "sleep_state.h"

int64_t pn__shim_precision = -1; /* -1: inert */
static PN_TLS bool inside;
static PN_TLS unsigned nested;                    /* calls that came in while inside */
static PN_TLS struct pn__sleep_plan *in_progress; /* the call's plan, while inside */
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

/* ns as "850 ns", "12.3 us", "4.56 ms", "1.23 s" into buf. */
static const char *dur(char *buf, size_t n, int64_t ns)
{
	static const char *unit[] = {"ns", "us", "ms", "s"};
	double v = (double)ns;
	int u = 0;
	while (u < 3 && (v >= 1000 || v <= -1000)) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* PUNCTUAL_STATS: one line on stderr for a thread's waits (at its exit, or the process's). */
static void stats_line(const struct pn__sleep_state *t)
{
	struct pn_sleep_stats st;
	pn__sleep_stats_of(t, &st);
	if (!st.sleeps)
		return;
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16], line[512];
	int32_t bud = pn__sleep_budget_of(t);
	if (bud == PN_SLEEP_BUDGET_AUTO)
		snprintf(g, sizeof(g), "auto");
	else
		snprintf(g, sizeof(g), "%g%%", bud / 1e4);
	int n = snprintf(line, sizeof(line),
	                 "punctual: thread %d: %llu waits, late p50 %s, p99 %s, p99.9 %s, max %s; "
	                 "%llu late beyond %s (%llu for the budget); spin %.1f%% of %s (budget "
	                 "%s)\n",
	                 t->tid, (unsigned long long)st.sleeps, dur(a, sizeof(a), st.late_p50_ns),
	                 dur(b, sizeof(b), st.late_p99_ns), dur(c, sizeof(c), st.late_p999_ns),
	                 dur(d, sizeof(d), st.late_max_ns), (unsigned long long)st.late,
	                 dur(e, sizeof(e), pn__shim_precision), (unsigned long long)st.late_budget,
	                 st.wall_ns ? 100.0 * (double)st.spun_ns / (double)st.wall_ns : 0.0,
	                 dur(f, sizeof(f), st.wall_ns), g);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

/* At the process's exit: the threads still running (the main one among them). */
__attribute__((destructor)) static void stats_at_exit(void)
{
	if (pn__sleep_on_exit)
		pn__sleep_state_drain(stats_line);
}

__attribute__((constructor)) static void core_init(void)
{
	int64_t v;
	const char *s = getenv("PUNCTUAL_PRECISION");
	pn__shim_precision = s && pn__parse_duration(s, 1, &v) == 0 ? v : -1;
	const char *stats = getenv("PUNCTUAL_STATS");
	if (pn__shim_precision >= 0 && stats && *stats && strcmp(stats, "0") != 0)
		pn__sleep_on_exit = stats_line;
}

bool pn__shim_active(void)
{
	if (pn__shim_precision < 0 || pn__helper_denied())
		return false;
	if (inside) {
		nested++;
		return false;
	}
	return true;
}

unsigned pn__shim_nested(void)
{
	return nested;
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

void pn__shim_unwound(void)
{
	if (!inside)
		return;
	if (in_progress)
		pn__sleep_cancel(in_progress);
	pn__shim_leave(0);
}
