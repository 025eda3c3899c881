/* SPDX-License-Identifier: MIT */
/*
 * bench_clock.c: libpunctual's clocks against what they replace, in one run, as ratios:
 * pn_now vs clock_gettime(CLOCK_MONOTONIC) (libc, vDSO), pn_cycles vs an inline rdtsc,
 * pn_now_coarse vs clock_gettime(CLOCK_MONOTONIC_COARSE); and pn_cycles_to_ns's drift
 * against CLOCK_MONOTONIC_RAW over 10 s, beside a naive 0.5 s calibration against
 * CLOCK_MONOTONIC. Prints a Markdown section on stdout.
 *
 * Each pair is timed in alternating batches (A B, then B A, ...) so that both sides see
 * the same machine; the figure is the median over rounds of the per-round ratio.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <punctual/clock.h>
#include "bench_stats.h"

#define ROUNDS 301
#define BATCH  20000

static int64_t mono(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void sink(uint64_t v)
{
	__asm__ __volatile__("" ::"r"(v));
}

static inline uint64_t raw_counter(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

#define BATCH_FN(name, expr)                                                                       \
	static double name(void)                                                                   \
	{                                                                                          \
		uint64_t acc = 0;                                                                  \
		int64_t t0 = mono(CLOCK_MONOTONIC);                                                \
		for (int i = 0; i < BATCH; i++)                                                    \
			acc += (uint64_t)(expr);                                                   \
		int64_t t1 = mono(CLOCK_MONOTONIC);                                                \
		sink(acc);                                                                         \
		return (double)(t1 - t0) / BATCH;                                                  \
	}

BATCH_FN(b_pn_now, pn_now())
BATCH_FN(b_cgt_mono, mono(CLOCK_MONOTONIC))
BATCH_FN(b_pn_cycles, pn_cycles())
BATCH_FN(b_rdtsc, raw_counter())
BATCH_FN(b_pn_coarse, pn_now_coarse())
BATCH_FN(b_cgt_coarse, mono(CLOCK_MONOTONIC_COARSE))

struct pair_result {
	double a_ns, b_ns, ratio;
};

static struct pair_result pair(double (*a)(void), double (*b)(void))
{
	static double ra[ROUNDS], rb[ROUNDS], rr[ROUNDS];
	a();
	b();
	for (int r = 0; r < ROUNDS; r++) {
		double x, y;
		if (r & 1) {
			y = b();
			x = a();
		} else {
			x = a();
			y = b();
		}
		ra[r] = x;
		rb[r] = y;
		rr[r] = x / y;
	}
	return (struct pair_result){median(ra, ROUNDS), median(rb, ROUNDS), median(rr, ROUNDS)};
}

/* A counter read and CLOCK_MONOTONIC_RAW at the midpoint of the narrowest sandwich. */
static void anchor(clockid_t id, uint64_t *c, int64_t *t, int64_t *width)
{
	*width = INT64_MAX;
	for (int i = 0; i < 256; i++) {
		int64_t a = mono(id);
		uint64_t x = pn_cycles_ordered();
		int64_t b = mono(id);
		if (b - a < *width) {
			*width = b - a;
			*c = x;
			*t = a + (b - a) / 2;
		}
	}
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
		;
}

static const char *verdict(int ok)
{
	return ok ? "met" : "**missed**";
}

int main(int argc, char **argv)
{
	int64_t drift_base = argc > 1 ? atoll(argv[1]) * 1000000000LL : 10000000000LL;

	/* libpunctual's own calibration, as the first conversion triggers it
	 * at start-up: the default 100 ms base. */
	pn_cycles_to_ns(1);
	struct pn_cycles_info ci;
	pn_cycles_info(&ci);

	/* Naive calibration, the usual way: 0.5 s of CLOCK_MONOTONIC, one read at each end. */
	uint64_t nc0 = pn_cycles_ordered();
	int64_t nt0 = mono(CLOCK_MONOTONIC);
	sleep_ns(500000000);
	uint64_t nc1 = pn_cycles_ordered();
	int64_t nt1 = mono(CLOCK_MONOTONIC);
	double naive_ns_per_count = (double)(nt1 - nt0) / (double)(nc1 - nc0);

	struct pair_result now = pair(b_pn_now, b_cgt_mono);
	struct pair_result cyc = pair(b_pn_cycles, b_rdtsc);
	struct pair_result coarse = pair(b_pn_coarse, b_cgt_coarse);

	/* Drift: convert a counter interval of drift_base and compare it with the kernel's
	 * raw clock over the same interval. */
	uint64_t c0, c1;
	int64_t t0, t1, w0, w1;
	anchor(CLOCK_MONOTONIC_RAW, &c0, &t0, &w0);
	sleep_ns(drift_base);
	anchor(CLOCK_MONOTONIC_RAW, &c1, &t1, &w1);
	double ref = (double)(t1 - t0);
	double ours = (double)pn_cycles_to_ns((int64_t)(c1 - c0));
	double naive = naive_ns_per_count * (double)(c1 - c0);
	double drift_ppm = (ours - ref) / ref * 1e6;
	double naive_ppm = (naive - ref) / ref * 1e6;
	double bound_ppm = (double)(w0 + w1) / ref * 1e6;

	printf("## Clocks (bench/bench_clock)\n\n");
	printf("Each pair is timed in %d alternating batches of %d calls; the ratio is the median "
	       "of the per-round ratios. Both sides are calls into a shared library (libc.so, "
	       "libpunctual.so), except the inline rdtsc.\n\n",
	       ROUNDS, BATCH);
	printf("| measured | ns/call | peer | ns/call | ratio | target | |\n");
	printf("|---|---:|---|---:|---:|---:|---|\n");
	printf("| pn_now | %.2f | clock_gettime(CLOCK_MONOTONIC), vDSO | %.2f | %.3f | <= 1.05 | "
	       "%s |\n",
	       now.a_ns, now.b_ns, now.ratio, verdict(now.ratio <= 1.05));
	printf("| pn_cycles | %.2f | inline rdtsc | %.2f | %.3f | <= 1.10 | %s |\n", cyc.a_ns,
	       cyc.b_ns, cyc.ratio, verdict(cyc.ratio <= 1.10));
	printf("| pn_now_coarse | %.2f | clock_gettime(CLOCK_MONOTONIC_COARSE) | %.2f | %.3f | - | "
	       "|\n\n",
	       coarse.a_ns, coarse.b_ns, coarse.ratio);
	printf("Cycle counter: %s (%s), calibrated at %.6f MHz over a %.0f ms base "
	       "(anchor sandwiches %lld ns in all).\n\n",
	       ci.name, ci.reason, ci.hz / 1e6, (double)ci.base_ns / 1e6,
	       (long long)ci.uncertainty_ns);
	printf("| drift over %.1f s against CLOCK_MONOTONIC_RAW | ppm | target | |\n", ref / 1e9);
	printf("|---|---:|---:|---|\n");
	printf("| pn_cycles_to_ns (libpunctual's calibration) | %+.3f | <= 1 | %s |\n", drift_ppm,
	       verdict(fabs(drift_ppm) <= 1.0));
	printf("| naive: 0.5 s against CLOCK_MONOTONIC, one read at each end | %+.3f | - | |\n",
	       naive_ppm);
	printf("| measurement bound (anchor sandwiches / interval) | %.3f | | |\n\n", bound_ppm);
	return 0;
}
