/* SPDX-License-Identifier: MIT */
/*
 * tick_phase.c: where in the scheduler tick a loop's late wakeups fall. A plain C loop of
 * nanosleep(INTERVAL), as sleep_loop.c, that also notes each deadline's phase in the tick
 * (its time past a CLOCK_MONOTONIC_COARSE reading, which is a tick's time, modulo the
 * coarse clock's resolution, one tick) in PHASE_BINS bins. Prints one Markdown table row:
 * lateness p50 and p99 in us, the share of sleeps later than TAIL_NS (%), the bin whose
 * deadlines were most often that late (its start, us into the tick), the share of the
 * deadlines that fell in it, the share of those later than TAIL_NS, the same share for
 * the deadlines elsewhere, and the CPU share used.
 * usage: tick_phase LABEL INTERVAL_NS COUNT TAIL_NS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_stats.h"

#define PHASE_BINS 20

static long long read_clock(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	long long iv = atoll(argv[2]), tail = atoll(argv[4]);
	int n = atoi(argv[3]);
	long long *late = malloc(sizeof(*late) * (size_t)n);
	struct timespec res;
	if (!late || n < 1000 || iv <= 0 || tail <= 0 ||
	    clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0)
		return 2;
	/* the tick: the coarse clock's resolution, where that is a plausible tick (HZ 50-1000) */
	long long tick = res.tv_sec * 1000000000LL + res.tv_nsec;
	if (tick < 1000000 || tick > 20000000)
		tick = 0;
	long long grid = read_clock(CLOCK_MONOTONIC_COARSE);
	int in_bin[PHASE_BINS] = {0}, late_bin[PHASE_BINS] = {0}, early = 0, over = 0;
	struct timespec req = {iv / 1000000000LL, iv % 1000000000LL};
	long long w0 = read_clock(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++) {
		long long s = read_clock(CLOCK_MONOTONIC);
		nanosleep(&req, NULL);
		late[i] = read_clock(CLOCK_MONOTONIC) - s - iv;
		early += late[i] < 0;
		over += late[i] > tail;
		if (tick) {
			int b = (int)(((s + iv - grid) % tick + tick) % tick * PHASE_BINS / tick);
			in_bin[b]++;
			late_bin[b] += late[i] > tail;
		}
	}
	long long wall = read_clock(CLOCK_MONOTONIC) - w0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	qsort(late, (size_t)n, sizeof(*late), bench_cmp_ll);
	printf("| %s | %.0f | %d | %.1f | %.1f | %.1f |", argv[1], iv / 1e3, n, late[n / 2] / 1e3,
	       late[n * 99 / 100] / 1e3, 100.0 * over / n);
	int w = 0;
	for (int b = 1; b < PHASE_BINS; b++)
		if (late_bin[b] > late_bin[w])
			w = b;
	if (tick && late_bin[w] > 0) {
		int rest = n - in_bin[w], rest_late = over - late_bin[w];
		printf(" %lld | %.1f | %.1f | %.1f |", w * tick / PHASE_BINS / 1000,
		       100.0 * in_bin[w] / n, 100.0 * late_bin[w] / in_bin[w],
		       rest ? 100.0 * rest_late / rest : 0.0);
	} else {
		printf(" - | - | - | - |");
	}
	printf(" %.0f |\n", 100.0 * cpu / (double)wall);
	free(late);
	return early ? 1 : 0;
}
