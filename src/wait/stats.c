/* SPDX-License-Identifier: MIT */
/*
 * stats.c: PUNCTUAL_STATS's lines (stats.h), one write(2) each, formatted
 * without allocation (a thread's exit may come in any state).
 */
#include <fcntl.h>
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
#include "wait/why.h"

static int64_t report_precision;
static char record_path[4096]; /* PUNCTUAL_STATS_FILE: "" for none */
static bool observing;         /* the waits are the program's own (pn__stats_observe) */

/* The q-quantile of a histogram of n counts by pn__decay_hist bucket: the largest value of
 * the bucket where it lies; -1 when empty. */
static int64_t hist_quantile(const uint32_t *h, double q)
{
	uint64_t n = 0, seen = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		n += h[b];
	uint64_t rank = (uint64_t)(q * (double)n);
	for (int b = 0; n && b < PN__DECAY_HIST_BUCKETS; b++)
		if ((seen += h[b]) > rank)
			return pn__decay_hist_bucket_hi(b);
	return -1;
}

/* Writes the thread's block (line, then len more bytes of buf) in one write(2), so that
 * two threads' reports do not interleave. */
static void block_write(const char *buf, size_t len)
{
	if (len && write(2, buf, len) < 0)
		return;
}

/* Appends the thread's record to PUNCTUAL_STATS_FILE (`run --runs` reads it): "pn-stats 1
 * PID TID WAITS EVENTS PAST MAX B:N,B:N...", its waits that ended late or on time (the
 * lateness histogram's count), those its event ended, those past at the call, the largest
 * lateness (ns, -1: none) and the histogram's buckets that are not empty. Opened for each
 * record (O_APPEND: processes and threads add whole lines), so no descriptor of the
 * program's is ever taken. */
static void record(const struct pn__state *t, const struct pn_sleep_stats *st)
{
	if (!record_path[0])
		return;
	char buf[2048];
	uint64_t waits = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		waits += t->late[b];
	int n = snprintf(buf, sizeof(buf), "pn-stats 1 %d %d %llu %llu %llu %lld ", (int)getpid(),
	                 t->tid, (unsigned long long)waits, (unsigned long long)t->events,
	                 (unsigned long long)st->past, (long long)st->late_max_ns);
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS && n > 0 && (size_t)n < sizeof(buf) - 32; b++)
		if (t->late[b])
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%d:%llu,", b,
			              (unsigned long long)t->late[b]);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return;
	buf[n++] = '\n';
	int fd = open(record_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, buf, (size_t)n) < 0) {
		/* nothing to do: the run reads what it finds */
	}
	close(fd);
}

/* The causes of the thread's late waits after its line (PUNCTUAL_EXPLAIN): at buf + len. */
static size_t why_lines(const struct pn__state *t, int64_t above_auto, char *buf, size_t len,
                        size_t n)
{
	if (!t->why || len >= n)
		return len;
	return len + pn__why_render(t->why, above_auto, "  ", buf + len, n - len);
}

/* An observed thread's line: its timed waits as the program made them. */
static void observed_line(const struct pn__state *t)
{
	struct pn_sleep_stats st;
	pn__state_stats(t, &st);
	if (!st.sleeps && !st.past && !t->events)
		return;
	record(t, &st);
	char a[16], b[16], c[16], d[16], e[16], line[1536];
	/* 80 columns: the figures, then what ended the other waits */
	int n = snprintf(line, sizeof(line),
	                 "punctual: thread %d: %llu waits timed out, late p50 %s, p99 %s\n"
	                 "  p99.9 %s, max %s; slack %s as made\n"
	                 "  %llu ended by their event, %llu past at the call\n",
	                 t->tid, (unsigned long long)st.sleeps,
	                 pn__duration_format(a, sizeof(a), (double)st.late_p50_ns),
	                 pn__duration_format(b, sizeof(b), st.late_p99_ns),
	                 pn__duration_format(c, sizeof(c), st.late_p999_ns),
	                 pn__duration_format(d, sizeof(d), st.late_max_ns),
	                 pn__duration_format(e, sizeof(e), st.slack_ns),
	                 (unsigned long long)t->events, (unsigned long long)st.past);
	if (n <= 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	block_write(line, why_lines(t, 2 * st.late_p50_ns, line, len, sizeof(line)));
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
	record(t, &st);
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16], h[24], spun[16], line[1536];
	int32_t budget_ppm = pn__state_budget(t);
	if (budget_ppm == PN_SLEEP_BUDGET_AUTO)
		snprintf(g, sizeof(g), "auto");
	else
		snprintf(g, sizeof(g), "%g%%", budget_ppm / 1e4);
	if (st.slice_ns) /* the slice its waits asked for; the kernel's own otherwise */
		pn__duration_format(h, sizeof(h), st.slice_ns);
	else
		snprintf(h, sizeof(h), "the kernel's");
	char shared[64] = ""; /* the CPU shared with runnable tasks: waits kept from spinning */
	if (st.shared_waits)
		snprintf(shared, sizeof(shared), "; CPU shared: %llu without a spin",
		         (unsigned long long)st.shared_waits);
	/* 80 columns: the figures; the late ones and the spin; the settings */
	int n = snprintf(line, sizeof(line),
	                 "punctual: thread %d: %llu waits, late p50 %s, p99 %s, max %s\n"
	                 "  p99.9 %s; %llu late beyond %s; spin %s, %.1f%% of %s\n"
	                 "  budget %s (%llu late by it), slice %s%s\n",
	                 t->tid, (unsigned long long)waits,
	                 pn__duration_format(a, sizeof(a), (double)st.late_p50_ns),
	                 pn__duration_format(b, sizeof(b), st.late_p99_ns),
	                 pn__duration_format(d, sizeof(d), st.late_max_ns),
	                 pn__duration_format(c, sizeof(c), st.late_p999_ns),
	                 (unsigned long long)st.late,
	                 pn__duration_format(e, sizeof(e), report_precision),
	                 pn__duration_format(spun, sizeof(spun), (double)st.spun_ns),
	                 st.wall_ns ? 100.0 * (double)st.spun_ns / (double)st.wall_ns : 0.0,
	                 pn__duration_format(f, sizeof(f), st.wall_ns), g,
	                 (unsigned long long)st.late_budget, h, shared);
	if (n <= 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	/* what the kernel alone made of these waits: its wakeups past the targets the
	 * kernel parts asked for, against the waits' own lateness */
	int64_t k50 = hist_quantile(t->kwake, 0.5), k99 = hist_quantile(t->kwake, 0.99);
	if (k50 >= 0 && len < sizeof(line)) {
		n = snprintf(line + len, sizeof(line) - len,
		             "  saved: p50 %s -> %s, p99 %s -> %s (kernel -> precise)\n",
		             pn__duration_format(a, sizeof(a), (double)k50),
		             pn__duration_format(b, sizeof(b), (double)st.late_p50_ns),
		             pn__duration_format(c, sizeof(c), (double)k99),
		             pn__duration_format(d, sizeof(d), (double)st.late_p99_ns));
		if (n > 0)
			len = len + (size_t)n < sizeof(line) ? len + (size_t)n : sizeof(line) - 1;
	}
	block_write(line, why_lines(t, report_precision, line, len, sizeof(line)));
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

int64_t pn__stats_setup(const char *precision, const char *stats, bool *explain)
{
	int64_t v;
	*explain = false;
	if (!precision || pn__duration_parse(precision, 1, &v) != 0)
		v = -1;
	if (stats && *stats && strcmp(stats, "0") != 0) {
		pn__stats_report(v);
		const char *file = getenv("PUNCTUAL_STATS_FILE");
		if (file && file[0] == '/' && strlen(file) < sizeof(record_path))
			strcpy(record_path, file);
		*explain = pn__why_setup(getenv("PUNCTUAL_EXPLAIN"));
	}
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
