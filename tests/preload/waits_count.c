/* SPDX-License-Identifier: MIT */
/*
 * waits_count.c: makes N timed waits of 1 ms that time out, all of one call, so that
 * `run --stats` can be checked to count each one (the first, made before the report is
 * armed, and the last, just before exit, included). Usage: waits_count CALL [N] [THREADS],
 * CALL one of usleep, nanosleep, clock_nanosleep, poll, epoll_wait, or syscall (a raw
 * clock_nanosleep, which no shim sees: a program it cannot time); N default 1000; THREADS
 * (default 1) threads make N each.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *call;
static int n = 1000;

static void *waits(void *arg)
{
	(void)arg;
	struct timespec ms = {0, 1000000};
	struct epoll_event ev;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < n; i++) {
		if (strcmp(call, "usleep") == 0)
			usleep(1000);
		else if (strcmp(call, "nanosleep") == 0)
			nanosleep(&ms, NULL);
		else if (strcmp(call, "clock_nanosleep") == 0)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
		else if (strcmp(call, "poll") == 0)
			poll(NULL, 0, 1);
		else if (strcmp(call, "epoll_wait") == 0)
			epoll_wait(ep, &ev, 1, 1);
		else if (strcmp(call, "syscall") == 0)
			syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	close(ep);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: waits_count CALL [N] [THREADS]\n");
		return 2;
	}
	call = argv[1];
	n = argc > 2 ? atoi(argv[2]) : 1000;
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t t[64];
	for (int i = 1; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, waits, NULL);
	waits(NULL);
	for (int i = 1; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
