/* SPDX-License-Identifier: MIT */
/*
 * sleep_loop.c: a service's timed loop for tests/systemd (bin/sleep_loop in the box):
 * `sleep_loop [PERIOD_US [LOG_S]]` sleeps PERIOD_US (default 1000) with nanosleep, over
 * and over, with no signal handler: SIGTERM ends it by the default action, as a plain C
 * daemon or a Python service without a handler. With LOG_S, every LOG_S seconds it
 * prints its own lateness past each sleep's end (CLOCK_MONOTONIC) to stdout, the
 * journal's: "late p50 N us p99 N us max N us over N sleeps", the service's own view
 * that bench/tune_systemd.sh sets beside tune's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SAMPLES 100000

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static void report(long long *late, int n)
{
	if (!n)
		return;
	qsort(late, (size_t)n, sizeof(*late), cmp);
	printf("late p50 %.1f us p99 %.1f us max %.1f us over %d sleeps\n", late[n / 2] / 1e3,
	       late[n * 99 / 100] / 1e3, late[n - 1] / 1e3, n);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long period_us = argc > 1 ? atol(argv[1]) : 1000;
	long log_s = argc > 2 ? atol(argv[2]) : 0;
	if (period_us <= 0 || period_us >= 1000000 || log_s < 0) {
		fprintf(stderr, "usage: sleep_loop [PERIOD_US [LOG_S]]\n");
		return 2;
	}
	static long long late[MAX_SAMPLES];
	const struct timespec d = {.tv_sec = 0, .tv_nsec = period_us * 1000};
	int n = 0;
	long long next_log = now_ns() + log_s * 1000000000LL;
	for (;;) {
		long long t0 = now_ns();
		nanosleep(&d, NULL);
		long long t1 = now_ns();
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
