/* SPDX-License-Identifier: MIT */
/*
 * stall_loop.c: what one stall does to precise sleeps, measured on a program that knows
 * nothing of libpunctual (run it under `punctual run --precise`): 512 nanosleep(3 ms) to
 * reach the steady state, then one sleep during which the process is stopped for 50 ms
 * (SIGSTOP from a child, SIGCONT 50 ms later) or, with "none", is not, then 8 chunks of 64
 * sleeps. Prints the CPU share (process CPU time / wall time, %) of the last 256 warm-up
 * sleeps and of each chunk, space separated, and the early returns (must be 0).
 * usage: stall_loop stall|none
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

static double cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int early;

/* n sleeps of 3 ms; the CPU share in %. */
static double sleeps(int n)
{
	struct timespec ms3 = {0, 3000000};
	double c0 = cpu();
	long long w0 = bench_now();
	for (int i = 0; i < n; i++) {
		long long t = bench_now();
		nanosleep(&ms3, NULL);
		early += bench_now() - t < 3000000;
	}
	return 100 * (cpu() - c0) / ((bench_now() - w0) / 1e9);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int stall = strcmp(argv[1], "stall") == 0;
	sleeps(256);
	double steady = sleeps(256);
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
		usleep(1000);
		if (stall)
			kill(parent, SIGSTOP);
		usleep(50000);
		if (stall)
			kill(parent, SIGCONT);
		_exit(0);
	}
	struct timespec ms3 = {0, 3000000};
	nanosleep(&ms3, NULL); /* stopped in here */
	waitpid(child, NULL, 0);
	printf("%.1f", steady);
	for (int c = 0; c < 8; c++)
		printf(" %.1f", sleeps(64));
	printf(" early %d\n", early);
	return 0;
}
