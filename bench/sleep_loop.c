/* SPDX-License-Identifier: MIT */
/*
 * sleep_loop.c: the program `punctual run --precise` is measured on: a plain C loop of
 * nanosleep(INTERVAL) that knows nothing of libpunctual. Prints one Markdown table row:
 * lateness p50, p99, p99.9, max in us, early returns, with TAIL_NS the share of sleeps
 * later than it (%), and the CPU share used.
 * usage: sleep_loop LABEL INTERVAL_NS COUNT [TAIL_NS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static long long now(void)
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

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	long long tail = argc == 5 ? atoll(argv[4]) : 0;
	long long iv = atoll(argv[2]);
	int n = atoi(argv[3]);
	long long *late = malloc(sizeof(*late) * (size_t)n);
	if (!late || n < 1000)
		return 2;
	struct timespec req = {iv / 1000000000LL, iv % 1000000000LL};
	int early = 0, over = 0;
	long long w0 = now();
	for (int i = 0; i < n; i++) {
		long long s = now();
		nanosleep(&req, NULL);
		late[i] = now() - s - iv;
		early += late[i] < 0;
		over += tail > 0 && late[i] > tail;
	}
	long long wall = now() - w0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	qsort(late, (size_t)n, sizeof(*late), cmp);
	printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %d |", argv[1], n, late[n / 2] / 1e3,
	       late[n * 99 / 100] / 1e3, late[n * 999 / 1000] / 1e3, late[n - 1] / 1e3, early);
	if (tail > 0)
		printf(" %.1f |", 100.0 * over / n);
	printf(" %.0f |\n", 100.0 * cpu / (double)wall);
	free(late);
	return early ? 1 : 0;
}
