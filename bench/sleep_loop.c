/* SPDX-License-Identifier: MIT */
/*
 * sleep_loop.c: a plain C loop of nanosleep(INTERVAL) that knows nothing of libpunctual,
 * the program `punctual run --precise` is measured on, in two forms:
 *   sleep_loop LABEL INTERVAL_NS COUNT [TAIL_NS]   (bench/): COUNT sleeps, then one
 *       Markdown table row: lateness p50, p99, p99.9, max in us, early returns, with
 *       TAIL_NS the share of sleeps later than it (%), and the CPU share used; exit 1 on
 *       an early return.
 *   sleep_loop [PERIOD_US [LOG_S]]   (tests/systemd's service, bin/sleep_loop in the box):
 *       sleeps PERIOD_US (default 1000) for ever, with no signal handler (SIGTERM ends it
 *       by the default action, as a plain C daemon or a Python service without one); with
 *       LOG_S, every LOG_S seconds it prints its own lateness past each sleep's end to
 *       stdout, the journal's: "late p50 N us p99 N us max N us over N sleeps".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_stats.h"

#define MAX_SAMPLES 100000

/* The bench's form: COUNT sleeps of iv ns, one table row. */
static int table_row(const char *label, long long iv, int n, long long tail)
{
	long long *late = malloc(sizeof(*late) * (size_t)n);
	if (!late || n < 1000)
		return 2;
	struct timespec req = {iv / 1000000000LL, iv % 1000000000LL};
	int early = 0, over = 0;
	long long w0 = bench_now();
	for (int i = 0; i < n; i++) {
		long long s = bench_now();
		nanosleep(&req, NULL);
		late[i] = bench_now() - s - iv;
		early += late[i] < 0;
		over += tail > 0 && late[i] > tail;
	}
	long long wall = bench_now() - w0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	qsort(late, (size_t)n, sizeof(*late), bench_cmp_ll);
	printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %d |", label, n, late[n / 2] / 1e3,
	       late[n * 99 / 100] / 1e3, late[n * 999 / 1000] / 1e3, late[n - 1] / 1e3, early);
	if (tail > 0)
		printf(" %.1f |", 100.0 * over / n);
	printf(" %.0f |\n", 100.0 * cpu / (double)wall);
	free(late);
	return early ? 1 : 0;
}

/* The service's log line over the sleeps since the last. */
static void report(long long *late, int n)
{
	if (!n)
		return;
	qsort(late, (size_t)n, sizeof(*late), bench_cmp_ll);
	printf("late p50 %.1f us p99 %.1f us max %.1f us over %d sleeps\n", late[n / 2] / 1e3,
	       late[n * 99 / 100] / 1e3, late[n - 1] / 1e3, n);
	fflush(stdout);
}

/* The service's form: sleeps for ever, a log line every log_s seconds (0: none). */
static _Noreturn void service(long period_us, long log_s)
{
	static long long late[MAX_SAMPLES];
	const struct timespec d = {.tv_sec = 0, .tv_nsec = period_us * 1000};
	int n = 0;
	long long next_log = bench_now() + log_s * 1000000000LL;
	for (;;) {
		long long t0 = bench_now();
		nanosleep(&d, NULL);
		long long t1 = bench_now();
		if (!log_s)
			continue;
		if (n < MAX_SAMPLES)
			late[n++] = t1 - t0 - period_us * 1000;
		if (t1 >= next_log) {
			report(late, n);
			n = 0;
			next_log = t1 + log_s * 1000000000LL;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 || argc == 5)
		return table_row(argv[1], atoll(argv[2]), atoi(argv[3]),
		                 argc == 5 ? atoll(argv[4]) : 0);
	long period_us = argc > 1 ? atol(argv[1]) : 1000;
	long log_s = argc > 2 ? atol(argv[2]) : 0;
	if (argc > 3 || period_us <= 0 || period_us >= 1000000 || log_s < 0) {
		fprintf(stderr, "usage: sleep_loop LABEL INTERVAL_NS COUNT [TAIL_NS]\n"
		                "       sleep_loop [PERIOD_US [LOG_S]]\n");
		return 2;
	}
	service(period_us, log_s);
}
