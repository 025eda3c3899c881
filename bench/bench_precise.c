/* SPDX-License-Identifier: MIT */
/*
 * bench_precise.c: pn_sleep_until at precisions 1 us and 50 us beside nanosleep with the
 * default slack, nanosleep with slack 1 ns and absolute clock_nanosleep with slack 1 ns,
 * at 10 us, 100 us, 1 ms and 10 ms, in one run: lateness percentiles, early returns, CPU
 * share, spin per sleep, the learned margin; and what a past deadline costs beside
 * pn_now(). Variants take turns in blocks of 25 sleeps so that all see the same machine.
 * Prints Markdown; argv[1] names the condition ("idle", "loaded"), argv[2] scales the
 * sample counts (default 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <punctual/punctual.h>
#include "bench_stats.h"

#define BLOCK 25

enum { NANO_DEFAULT, NANO_SLACK1, ABS_SLACK1, PRECISE_1US, PRECISE_50US, NV };

static const char *names[NV] = {"nanosleep, default slack", "nanosleep, slack 1 ns",
                                "clock_nanosleep abs, slack 1 ns", "pn_sleep_until, precision 1 us",
                                "pn_sleep_until, precision 50 us"};
static const int64_t precision[NV] = {0, 0, 0, 1000, 50000};

struct var {
	struct pn_hist late;
	uint64_t early;
	int64_t cpu, wall, spun, slept;
	uint64_t sleeps;
	int64_t margin_sum; /* the margin of each block's last sleep, summed */
	int blocks;
};

static int64_t cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void one(int v, int64_t interval, struct var *r)
{
	int64_t start = pn_now(), deadline = start + interval;
	struct timespec ts;
	switch (v) {
	case NANO_DEFAULT:
	case NANO_SLACK1:
		ts = (struct timespec){interval / 1000000000, interval % 1000000000};
		nanosleep(&ts, NULL);
		break;
	case ABS_SLACK1:
		ts = (struct timespec){deadline / 1000000000, deadline % 1000000000};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		break;
	default:
		pn_sleep_until(deadline, precision[v]);
	}
	int64_t end = pn_now();
	if (end < deadline)
		r->early++;
	pn_hist_record(&r->late, end - deadline);
}

static void block(int v, int64_t interval, struct var *r, int64_t default_slack)
{
	if (v == NANO_DEFAULT)
		pn_slack_set(default_slack);
	else if (v < PRECISE_1US)
		pn_slack_set(1);
	struct pn_sleep_stats a, b;
	pn_sleep_stats(&a);
	int64_t c0 = cpu_now(), w0 = pn_now();
	for (int i = 0; i < BLOCK; i++)
		one(v, interval, r);
	r->cpu += cpu_now() - c0;
	r->wall += pn_now() - w0;
	pn_sleep_stats(&b);
	r->spun += b.spun_ns - a.spun_ns;
	r->slept += b.slept_ns - a.slept_ns;
	r->sleeps += b.sleeps - a.sleeps;
	r->margin_sum += b.margin_ns;
	r->blocks++;
}

static double us(int64_t ns)
{
	return (double)ns / 1e3;
}

static const char *ok(int met)
{
	return met ? "met" : "**missed**";
}

/* How often this CPU stops running us: a loop of pn_now() for 1 s, counting gaps. A
 * spinning sleeper cannot be more punctual than this floor (timer ticks, host
 * preemption of the vCPU). */
static void stall_floor(void)
{
	int64_t end = pn_now() + 1000000000, prev = pn_now(), in_gaps = 0;
	uint64_t g2 = 0, g5 = 0, g20 = 0;
	while (prev < end) {
		int64_t t = pn_now(), g = t - prev;
		prev = t;
		if (g > 2000) {
			g2++;
			in_gaps += g;
		}
		g5 += g > 5000;
		g20 += g > 20000;
	}
	printf("Stall floor on this CPU, from a 1 s loop of pn_now(): %llu gaps > 2 us, %llu > 5 "
	       "us, "
	       "%llu > 20 us per second; %.2f%% of the time inside gaps > 2 us. A spinning "
	       "sleeper whose deadline falls in a gap is late by the rest of it.\n\n",
	       (unsigned long long)g2, (unsigned long long)g5, (unsigned long long)g20,
	       100.0 * (double)in_gaps / 1e9);
}

static double batch(int which, int n)
{
	int64_t t0 = pn_now();
	int64_t acc = 0;
	for (int i = 0; i < n; i++)
		acc += which ? pn_sleep_until(0, 0) : pn_now();
	__asm__ __volatile__("" ::"r"(acc));
	return (double)(pn_now() - t0) / n;
}

/* What a deadline already past costs, beside one pn_now(): median of paired rounds. */
static double past_ratio(double *past_ns, double *now_ns)
{
	enum { R = 201 };
	static double ratio[R], a[R], b[R];
	for (int r = 0; r < R; r++) {
		a[r] = batch(1, 20000);
		b[r] = batch(0, 20000);
		ratio[r] = a[r] / b[r];
	}
	*past_ns = median(a, R);
	*now_ns = median(b, R);
	return median(ratio, R);
}

int main(int argc, char **argv)
{
	const char *label = argc > 1 ? argv[1] : "idle";
	double scale = argc > 2 ? atof(argv[2]) : 1.0;
	static const int64_t intervals[] = {10000, 100000, 1000000, 10000000};
	static const int samples[] = {4000, 4000, 2000, 600};
	int64_t default_slack = pn_slack_get();
	static struct var r[4][NV];
	uint64_t early_total = 0;

	printf("### %s\n\n", label);
	printf("| interval | variant | samples | p50 us | p99 us | p99.9 us | max us | early | "
	       "CPU %% | spin/sleep us | margin us | target |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int i = 0; i < 4; i++) {
		int64_t iv = intervals[i];
		int n = (int)(samples[i] * scale) / BLOCK * BLOCK;
		if (n < BLOCK)
			n = BLOCK;
		/* steady state: let pn_sleep_until learn this length first (not recorded) */
		static struct var warm;
		pn_hist_init(&warm.late);
		for (int k = 0; k < 8; k++)
			block(k & 1 ? PRECISE_50US : PRECISE_1US, iv, &warm, default_slack);
		for (int v = 0; v < NV; v++)
			pn_hist_init(&r[i][v].late);
		for (int done = 0; done < n; done += BLOCK)
			for (int v = 0; v < NV; v++)
				block(v, iv, &r[i][v], default_slack);
		for (int v = 0; v < NV; v++) {
			struct var *x = &r[i][v];
			/* the margin this variant's sleeps used (borrowed or their class's own; it
			 * depends on the precision), as the mean of its blocks' last sleeps */
			int64_t margin = x->blocks ? x->margin_sum / x->blocks : 0;
			int64_t p99 = pn_hist_percentile(&x->late, 99);
			int64_t p999 = pn_hist_percentile(&x->late, 99.9);
			double spin = x->sleeps ? (double)x->spun / (double)x->sleeps : 0;
			char target[96] = "", spin_s[32] = "-", margin_s[32] = "-";
			if (v >= PRECISE_1US) {
				snprintf(spin_s, sizeof(spin_s), "%.1f", spin / 1e3);
				snprintf(margin_s, sizeof(margin_s), "%.1f", us(margin));
			}
			if (v == PRECISE_1US)
				snprintf(target, sizeof(target),
				         "p99 <= 2, p99.9 <= 5: %s; spin <= margin + 2: %s",
				         ok(p99 <= 2000 && p999 <= 5000),
				         ok(spin <= margin + 2000));
			else if (v == PRECISE_50US)
				snprintf(target, sizeof(target), "p99 <= 50: %s; spin ~ 0: %s",
				         ok(p99 <= 50000), ok(spin <= 1000));
			printf("| %g us | %s | %llu | %.1f | %.1f | %.1f | %.1f | %llu | %.1f | %s "
			       "| %s | "
			       "%s |\n",
			       us(iv), names[v], (unsigned long long)pn_hist_count(&x->late),
			       us(pn_hist_percentile(&x->late, 50)), us(p99), us(p999),
			       us(pn_hist_max(&x->late)), (unsigned long long)x->early,
			       100.0 * (double)x->cpu / (double)x->wall, spin_s, margin_s, target);
			early_total += x->early;
		}
	}
	stall_floor();
	double past_ns, now_ns, ratio = past_ratio(&past_ns, &now_ns);
	printf("\n");
	printf("A deadline already past: pn_sleep_until(0, 0) %.1f ns, pn_now() %.1f ns: ratio "
	       "%.2f (target <= 2: %s). Early returns in this run: %llu.\n\n",
	       past_ns, now_ns, ratio, ok(ratio <= 2.0), (unsigned long long)early_total);
	pn_slack_set(default_slack);
	return early_total ? 1 : 0;
}
