/* SPDX-License-Identifier: MIT */
/*
 * The program `punctual why` traces in bench_why.sh: it knows nothing of libpunctual, sets
 * its own timer slack, then sleeps with nanosleep(INTERVAL) COUNT times, timing each wakeup
 * against its deadline. At its end (COUNT sleeps, or SIGTERM) it prints one line:
 * "p50_ns p99_ns sleeps".
 * usage: slack_loop SLACK_NS INTERVAL_NS COUNT
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench_stats.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: slack_loop SLACK_NS INTERVAL_NS COUNT\n");
		return 2;
	}
	long long slack = atoll(argv[1]), interval = atoll(argv[2]);
	long count = atol(argv[3]), n = 0;
	if (slack < 1 || interval < 1 || count < 1)
		return 2;
	long long *late = malloc((size_t)count * sizeof(*late));
	struct sigaction sa = {.sa_handler = on_term};
	if (!late || sigaction(SIGTERM, &sa, NULL) != 0 ||
	    prctl(PR_SET_TIMERSLACK, (unsigned long)slack) != 0)
		return 1;
	struct timespec ts = {interval / 1000000000LL, interval % 1000000000LL};
	while (n < count && !stop) {
		long long deadline = bench_now() + interval;
		if (nanosleep(&ts, NULL) != 0)
			continue; /* a signal: SIGTERM ends the loop, nothing else comes */
		late[n++] = bench_now() - deadline;
	}
	if (n == 0)
		return 1;
	qsort(late, (size_t)n, sizeof(*late), bench_cmp_ll);
	printf("%lld %lld %ld\n", late[n / 2], late[(n * 99) / 100], n);
	free(late);
	return 0;
}
