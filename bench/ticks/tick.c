/* SPDX-License-Identifier: MIT */
/*
 * tick.c: a C program's periodic timer, as a service writes it: nanosleep to the next
 * 1 ms deadline (relative, from now), a little work (a 4 KiB checksum), then its own
 * lateness against the deadline. Usage: tick PERIOD_NS N [spin]. Prints "p50 p99 p99.9 cpu%
 * early" (ns, ns, ns, percent of a CPU, returns before the deadline) over N ticks after 200.
 * With "spin", it reads the clock until each deadline instead: the floor no waiter beats
 * on this host (the host's steal and the preemptions reach a spin too).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int64_t period = argc > 1 ? atoll(argv[1]) : 1000000;
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	int spin = argc > 3 && argv[3][0] == 's';
	if (period <= 0 || n <= 0) {
		fprintf(stderr, "usage: tick PERIOD_NS N [spin]\n");
		return 2;
	}
	int64_t *late = calloc((size_t)n, sizeof(*late));
	static unsigned char page[4096];
	unsigned sum = 0;
	long early = 0;
	int64_t next = ns(CLOCK_MONOTONIC) + period, w0 = 0, c0 = 0;
	for (int i = -200; i < n; i++) {
		int64_t left = next - ns(CLOCK_MONOTONIC);
		while (spin && left > 0)
			left = next - ns(CLOCK_MONOTONIC);
		if (left > 0) {
			struct timespec t = {left / 1000000000, left % 1000000000};
			nanosleep(&t, NULL);
		}
		int64_t now = ns(CLOCK_MONOTONIC);
		for (size_t k = 0; k < sizeof(page); k++)
			sum += page[k] += (unsigned char)k;
		if (i == 0) {
			w0 = now;
			c0 = ns(CLOCK_PROCESS_CPUTIME_ID);
		}
		if (i >= 0) {
			late[i] = now - next;
			early += now < next;
		}
		next += period;
	}
	int64_t wall = ns(CLOCK_MONOTONIC) - w0, cpu = ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	qsort(late, (size_t)n, sizeof(*late), cmp);
	printf("%lld %lld %lld %lld %ld\n", (long long)late[n / 2], (long long)late[n * 99 / 100],
	       (long long)late[n * 999 / 1000], (long long)(100 * cpu / (wall ? wall : 1)), early);
	return sum == 1; /* keeps the work */
}
