/* SPDX-License-Identifier: MIT */
/*
 * stats.c: PUNCTUAL_STATS's lines, one write(2) each, formatted without allocation (a
 * thread's exit may come in any state).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "internal.h"
#include "report/record.h"
#include "report/stats.h"
#include "report/why.h"
#include "wait/arms.h"
#include "wait/state.h"

static int64_t report_precision;
static bool observing;

/* The q-quantile of a decay_hist-bucketed count: its bucket's largest value; -1 empty. */
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

/* Writes the block in one write(2), so that two threads' reports do not interleave. */
static void block_write(const char *buf, size_t len)
{
	if (len && write(2, buf, len) < 0)
		return;
}

/* A thread's block in a fixed buffer: items one after another, a line broken before an
 * item that would reach column 80, continued lines indented by two. No line is wider
 * than 80 unless one item alone is, and the widest is 66. */
#define LINE_COLS 80
struct block {
	char *buf;
	size_t cap, len, col;
};

static void block_raw(struct block *b, const char *s, size_t n)
{
	if (b->len >= b->cap)
		return;
	size_t room = b->cap - 1 - b->len;
	n = n < room ? n : room;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static void next_line(struct block *b)
{
	block_raw(b, "\n  ", 3);
	b->col = 2;
}

/* sep then the item; a separator's trailing space stays off a broken line's end. */
__attribute__((format(printf, 3, 4))) static void item(struct block *b, const char *sep,
                                                       const char *fmt, ...)
{
	char s[160];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t k = strlen(s), m = strlen(sep);
	if (b->col + m + k >= LINE_COLS && b->col > 2) {
		while (m && sep[m - 1] == ' ')
			m--;
		block_raw(b, sep, m);
		next_line(b);
	} else {
		block_raw(b, sep, m);
		b->col += m;
	}
	block_raw(b, s, k);
	b->col += k;
}

static size_t block_end(struct block *b)
{
	block_raw(b, "\n", 1);
	b->col = 0;
	return b->len;
}

static size_t why_lines(const struct pn__state *t, int64_t above_auto, char *buf, size_t len,
                        size_t n)
{
	if (!t->why || len >= n)
		return len;
	size_t w = pn__why_render(t->why, above_auto, "  ", buf + len, n - len);
	len += w;
	/* under SCHED_FIFO no SCHED_OTHER task is ahead: what remains is real-time work, the
	 * kernel's own or the host's */
	if (w && t->rt.wait_fifo && len < n) {
		int m = snprintf(buf + len, n - len,
		                 "  (its waits ran under SCHED_FIFO: 'preempted' there is a real-time "
		                 "task or the\n   kernel's stop work; 'wakeup' an interrupt or the "
		                 "host's steal of the vCPU)\n");
		len += m > 0 ? (size_t)m : 0;
	}
	return len < n ? len : n - 1;
}

static void observed_block(struct block *k, int tid, const struct pn_sleep_stats *st,
                           const struct pn__stats_more *x)
{
	char a[16];
	item(k, "", "punctual: thread %d: %llu waits timed out", tid,
	     (unsigned long long)st->sleeps);
	item(k, ", ", "late p50 %s", pn__duration_format(a, sizeof(a), (double)st->late_p50_ns));
	item(k, ", ", "p99 %s", pn__duration_format(a, sizeof(a), (double)st->late_p99_ns));
	next_line(k);
	item(k, "", "p99.9 %s", pn__duration_format(a, sizeof(a), (double)st->late_p999_ns));
	item(k, ", ", "max %s", pn__duration_format(a, sizeof(a), (double)st->late_max_ns));
	item(k, "; ", "slack %s as made", pn__duration_format(a, sizeof(a), (double)st->slack_ns));
	next_line(k);
	item(k, "", "%llu ended by their event", (unsigned long long)x->events);
	item(k, ", ", "%llu past at the call", (unsigned long long)st->past);
}

static const char *const mode_why[PN_SLEEP_MODES] = {
        "no wait yet",
        "a margin, then a spin, lowers the p99",
        "the kernel wakes later than the waits are long",
        "the kernel's wakeups meet the precision",
        "a spin would cost more CPU than it saves",
        "spins lose the CPU as often as the kernel is late",
        "CPU shared: the kernel, real time if let, no spin",
};

/* The mode the waits settled on and why: one line, 77 columns at the widest. */
static void mode_line(struct block *k, const struct pn_sleep_stats *st)
{
	if (st->mode <= PN_SLEEP_MODE_NONE || st->mode >= PN_SLEEP_MODES)
		return;
	next_line(k);
	item(k, "", "settled on %s (%.0f%%): %s", pn_sleep_mode_name(st->mode), st->mode_ppm / 1e4,
	     mode_why[st->mode]);
}

/* A precise thread's block: the figures, the late ones and the spin, the settings, and
 * what the kernel alone made of these waits against their own lateness. */
static void precise_block(struct block *k, int tid, const struct pn_sleep_stats *st,
                          const struct pn__stats_more *x)
{
	char a[16], b[16];
	item(k, "", "punctual: thread %d: %llu waits", tid,
	     (unsigned long long)(st->sleeps + st->past));
	item(k, ", ", "late p50 %s", pn__duration_format(a, sizeof(a), (double)st->late_p50_ns));
	item(k, ", ", "p99 %s", pn__duration_format(a, sizeof(a), (double)st->late_p99_ns));
	item(k, ", ", "max %s", pn__duration_format(a, sizeof(a), (double)st->late_max_ns));
	next_line(k);
	item(k, "", "p99.9 %s", pn__duration_format(a, sizeof(a), (double)st->late_p999_ns));
	item(k, "; ", "%llu late beyond %s", (unsigned long long)st->late,
	     pn__duration_format(a, sizeof(a), (double)x->precision));
	item(k, "; ", "spin %s", pn__duration_format(a, sizeof(a), (double)st->spun_ns));
	item(k, ", ", "%.1f%% of %s",
	     st->wall_ns > 0 ? 100.0 * (double)st->spun_ns / (double)st->wall_ns : 0.0,
	     pn__duration_format(a, sizeof(a), (double)st->wall_ns));
	next_line(k);
	if (x->budget_ppm == PN_SLEEP_BUDGET_AUTO)
		snprintf(a, sizeof(a), "auto");
	else
		snprintf(a, sizeof(a), "%g%%", x->budget_ppm / 1e4);
	item(k, "", "budget %s (%llu late by it)", a, (unsigned long long)st->late_budget);
	if (st->slice_ns)
		item(k, ", ", "slice %s", pn__duration_format(a, sizeof(a), (double)st->slice_ns));
	else
		item(k, ", ", "slice the kernel's");
	if (st->shared_waits) /* the CPU shared: waits kept from spinning */
		item(k, "; ", "CPU shared: %llu without a spin",
		     (unsigned long long)st->shared_waits);
	if (x->fifo_waits)
		item(k, ", ", "%llu under SCHED_FIFO", (unsigned long long)x->fifo_waits);
	if (x->lend_bounded)
		item(k, ", ", "%llu reactions past the real-time bound",
		     (unsigned long long)x->lend_bounded);
	if (x->lend_outside)
		item(k, ", ", "%llu changed from outside meanwhile",
		     (unsigned long long)x->lend_outside);
	mode_line(k, st);
	/* real time refused: the plan against the program, and what was left to it */
	if (x->arm_waits[PN__ARM_ALONE] || x->arm_rounded) {
		char b2[32];
		next_line(k);
		item(k, "", "%s", x->rt_refused == 1
		                          ? "real time denied (EPERM: no CAP_SYS_NICE, RLIMIT_RTPRIO 0)"
		                          : "real time off");
		if (x->arm_rounded)
			item(k, "; ", "%llu waits in whole ms left to the program",
			     (unsigned long long)x->arm_rounded);
		if (x->arm_waits[PN__ARM_PLAN] || x->arm_waits[PN__ARM_ALONE]) {
			item(k, "; ", "plan p99 %s (%llu waits)",
			     pn__duration_format(a, sizeof(a), (double)x->arm_p99[PN__ARM_PLAN]),
			     (unsigned long long)x->arm_waits[PN__ARM_PLAN]);
			item(k, ", ", "as the program alone %s (%llu waits): %s",
			     pn__duration_format(b2, sizeof(b2), (double)x->arm_p99[PN__ARM_ALONE]),
			     (unsigned long long)x->arm_waits[PN__ARM_ALONE],
			     x->arm_alone ? "waits as the program would" : "the plan kept");
		}
	}
	if (x->kernel_p50_ns < 0 ||
	    (st->spun_ns == 0 && (x->arm_waits[PN__ARM_ALONE] || x->arm_rounded)))
		return; /* no kernel part, or only the plan's share */
	next_line(k);
	if (st->spun_ns == 0) { /* the kernel woke each wait: nothing to compare */
		item(k, "", "no spin: the kernel woke each wait (p50 %s, p99 %s)",
		     pn__duration_format(a, sizeof(a), (double)x->kernel_p50_ns),
		     pn__duration_format(b, sizeof(b), (double)x->kernel_p99_ns));
		return;
	}
	/* "saved" only where the precise waits ended no later than their kernel parts woke */
	bool worse = st->late_p50_ns > x->kernel_p50_ns || st->late_p99_ns > x->kernel_p99_ns;
	item(k, "", "%s: p50 %s -> %s", worse ? "not saved" : "saved",
	     pn__duration_format(a, sizeof(a), (double)x->kernel_p50_ns),
	     pn__duration_format(b, sizeof(b), (double)st->late_p50_ns));
	item(k, ", ", "p99 %s -> %s", pn__duration_format(a, sizeof(a), (double)x->kernel_p99_ns),
	     pn__duration_format(b, sizeof(b), (double)st->late_p99_ns));
	item(k, " ", "(kernel -> precise)");
}

size_t pn__stats_format(int tid, const struct pn_sleep_stats *st, const struct pn__stats_more *x,
                        char *buf, size_t n)
{
	if (!buf || !n)
		return 0;
	struct block k = {buf, n, 0, 0};
	buf[0] = '\0';
	if (x->observed)
		observed_block(&k, tid, st, x);
	else
		precise_block(&k, tid, st, x);
	return block_end(&k);
}

static void stats_line(const struct pn__state *t)
{
	struct pn_sleep_stats st;
	pn__state_stats(t, &st);
	if (observing ? !st.sleeps && !st.past && !t->events : !st.sleeps && !st.past)
		return;
	/* the causes' threshold where none was given: twice the p50 for the program's own
	 * waits, the precision for precise ones */
	int64_t above_auto = observing ? 2 * st.late_p50_ns : report_precision;
	struct pn__stats_more x = {
	        .observed = observing,
	        .events = t->events,
	        .precision = report_precision,
	        .budget_ppm = pn__state_budget(t),
	        .kernel_p50_ns = hist_quantile(t->kwake, 0.5),
	        .kernel_p99_ns = hist_quantile(t->kwake, 0.99),
	        .fifo_waits = t->rt.wait_fifo,
	        .lend_bounded = t->sched.bounded,
	        .lend_outside = t->sched.outside,
	        .arm_waits = {t->arms.waits[0], t->arms.waits[1]},
	        .arm_p99 = {pn__arms_p99(&t->arms, 0), pn__arms_p99(&t->arms, 1)},
	        .arm_alone = t->arms.alone,
	        .arm_rounded = t->arms.rounded,
	        .rt_refused = t->rt.fifo_off ? 2 : pn__sched_wait_fifo() < 0 ? 1 : 0,
	};
	char line[1536];
	size_t len = pn__stats_format(t->tid, &st, &x, line, sizeof(line));
	block_write(line, why_lines(t, above_auto, line, len, sizeof(line)));
}

/* At the process's exit: the threads still running, each reported once, by whoever takes
 * it off the live list. */
static void stats_at_exit(void)
{
	if (pn__state_on_exit)
		pn__state_drain(stats_line);
}

/* A thread's first wait: once per process, the exit report also goes before the exit
 * handlers registered until then. */
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
		*explain = pn__why_setup(getenv("PUNCTUAL_EXPLAIN"));
		int64_t above = pn__why_threshold() >= 0 ? PN__RECORD_GIVEN
		                : v >= 0                 ? v
		                                         : PN__RECORD_AUTO;
		pn__record_setup(getenv("PUNCTUAL_STATS_FILE"), above);
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

/* And after every exit handler, for a first wait after the last one. */
__attribute__((destructor)) static void stats_at_destruct(void)
{
	stats_at_exit();
}
