/* SPDX-License-Identifier: MIT */
/*
 * stats.c: PUNCTUAL_STATS's lines (stats.h), one write(2) each, formatted
 * without allocation (a thread's exit may come in any state).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "internal.h"
#include "wait/state.h"
#include "wait/stats.h"

static int64_t report_precision;
static bool observing; /* the waits are the program's own (pn__stats_observe) */

/* An observed thread's line: its timed waits as the program made them. */
static void observed_line(const struct pn__state *t)
{
	struct pn_sleep_stats st;
	pn__state_stats(t, &st);
	if (!st.sleeps && !st.past && !t->events)
		return;
	char a[16], b[16], c[16], d[16], e[16], line[512];
	int n = snprintf(line, sizeof(line),
	                 "punctual: thread %d: %llu waits timed out, late p50 %s, p99 %s, p99.9 "
	                 "%s, max %s; %llu ended by their event, %llu past at the call (as "
	                 "made: slack %s)\n",
	                 t->tid, (unsigned long long)st.sleeps,
	                 pn__duration_format(a, sizeof(a), (double)st.late_p50_ns),
	                 pn__duration_format(b, sizeof(b), st.late_p99_ns),
	                 pn__duration_format(c, sizeof(c), st.late_p999_ns),
	                 pn__duration_format(d, sizeof(d), st.late_max_ns),
	                 (unsigned long long)t->events, (unsigned long long)st.past,
	                 pn__duration_format(e, sizeof(e), st.slack_ns));
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

static void stats_line(const struct pn__state *t)
{
	if (observing) {
		observed_line(t);
		return;
	}
	struct pn_sleep_stats st;
	pn__state_stats(t, &st);
	uint64_t waits = st.sleeps + st.past; /* a wait that found its deadline passed too */
	if (!waits)
		return;
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16], h[24], line[512];
	int32_t budget_ppm = pn__state_budget(t);
	if (budget_ppm == PN_SLEEP_BUDGET_AUTO)
		snprintf(g, sizeof(g), "auto");
	else
		snprintf(g, sizeof(g), "%g%%", budget_ppm / 1e4);
	if (st.slice_ns) /* the slice its waits asked for; the kernel's own otherwise */
		pn__duration_format(h, sizeof(h), st.slice_ns);
	else
		snprintf(h, sizeof(h), "the kernel's");
	char shared[64] = ""; /* the CPU shared with runnable tasks, and the waits it kept from spinning */
	if (st.shared_waits)
		snprintf(shared, sizeof(shared), ", CPU shared: %llu waits without a spin",
		         (unsigned long long)st.shared_waits);
	int n = snprintf(line, sizeof(line),
	                 "punctual: thread %d: %llu waits, late p50 %s, p99 %s, p99.9 %s, max %s; "
	                 "%llu late beyond %s (%llu for the budget); spin %.1f%% of %s (budget "
	                 "%s, slice %s%s)\n",
	                 t->tid, (unsigned long long)waits,
	                 pn__duration_format(a, sizeof(a), (double)st.late_p50_ns),
	                 pn__duration_format(b, sizeof(b), st.late_p99_ns),
	                 pn__duration_format(c, sizeof(c), st.late_p999_ns),
	                 pn__duration_format(d, sizeof(d), st.late_max_ns),
	                 (unsigned long long)st.late,
	                 pn__duration_format(e, sizeof(e), report_precision),
	                 (unsigned long long)st.late_budget,
	                 st.wall_ns ? 100.0 * (double)st.spun_ns / (double)st.wall_ns : 0.0,
	                 pn__duration_format(f, sizeof(f), st.wall_ns), g, h, shared);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

/* At the process's exit: the threads still running (the main one among them). Each state
 * is reported once, by whoever takes it off the live list (pn__state_drain). */
static void stats_at_exit(void)
{
	if (pn__state_on_exit)
		pn__state_drain(stats_line);
}

/* A thread's first wait: once per process, the report at exit is also put before the exit
 * handlers registered until then (stats.h). */
static void arm(void)
{
	static _Atomic bool armed;
	if (!atomic_exchange_explicit(&armed, true, memory_order_relaxed))
		atexit(stats_at_exit);
}

int64_t pn__stats_setup(const char *precision, const char *stats)
{
	int64_t v;
	if (!precision || pn__duration_parse(precision, 1, &v) != 0)
		v = -1;
	if (stats && *stats && strcmp(stats, "0") != 0)
		pn__stats_report(v);
	return v;
}

void pn__stats_report(int64_t precision)
{
	report_precision = precision;
	observing = precision < 0;
	pn__state_on_exit = stats_line;
	pn__state_on_new = arm;
}

/* And after every exit handler, for a program whose first wait came after its last one. */
__attribute__((destructor)) static void stats_at_destruct(void)
{
	stats_at_exit();
}
