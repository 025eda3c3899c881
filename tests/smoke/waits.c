/* SPDX-License-Identifier: MIT */
/*
 * waits.c: nanosleep, poll and epoll_wait as a program calls them, each case's results on
 * stdout (return value, errno, ready events: the same with and without the preload shim)
 * and a line "EARLY" on stderr, with exit 1, for a wait that returned before its timeout.
 * On stderr at the end: whether the shim was loaded and how many calls it made precise.
 * Plain C for any C library (the musl smoke suite runs it with the musl-built shim).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int early;

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A wait of timeout_ns that returned 0 (timed out) must have lasted that long. */
static void never_early(const char *what, int r, int64_t start, int64_t timeout_ns)
{
	int64_t took = mono() - start;
	if (r == 0 && took < timeout_ns) {
		fprintf(stderr, "EARLY: %s returned after %lld ns of %lld\n", what, (long long)took,
		        (long long)timeout_ns);
		early = 1;
	}
}

static void t_nanosleep(void)
{
	static const long ns[] = {0, 1000, 100000, 2000000};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct timespec req = {0, ns[i]}, rem = {7, 7};
		int64_t s = mono();
		errno = 0;
		int r = nanosleep(&req, &rem);
		never_early("nanosleep", r, s, ns[i]);
		printf("nanosleep %ld ns: %d errno %d rem %ld.%09ld\n", ns[i], r, r ? errno : 0,
		       (long)rem.tv_sec, rem.tv_nsec);
	}
	struct timespec bad = {0, 1000000000};
	errno = 0;
	int r = nanosleep(&bad, NULL);
	printf("nanosleep bad tv_nsec: %d errno %d\n", r, errno);
}

static void t_poll(void)
{
	int p[2];
	if (pipe(p) != 0)
		return;
	static const int ms[] = {0, 1, 2, 5};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		struct pollfd fd = {p[0], POLLIN, 0};
		int64_t s = mono();
		int r = poll(&fd, 1, ms[i]);
		never_early("poll", r, s, ms[i] * 1000000LL);
		printf("poll %d ms, nothing to read: %d revents %d\n", ms[i], r, fd.revents);
		r = poll(NULL, 0, ms[i]);
		never_early("poll (no fds)", r, s, ms[i] * 1000000LL);
		printf("poll %d ms, no fds: %d\n", ms[i], r);
	}
	if (write(p[1], "x", 1) == 1) {
		struct pollfd fd = {p[0], POLLIN, 0};
		int r = poll(&fd, 1, 1000);
		printf("poll, readable: %d revents %d\n", r, fd.revents);
	}
	close(p[0]);
	close(p[1]);
}

static void t_epoll(void)
{
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || pipe(p) != 0)
		return;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 42};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	static const int ms[] = {0, 1, 2, 5};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		struct epoll_event out = {0, {0}};
		int64_t s = mono();
		int r = epoll_wait(ep, &out, 1, ms[i]);
		never_early("epoll_wait", r, s, ms[i] * 1000000LL);
		printf("epoll_wait %d ms, nothing to read: %d\n", ms[i], r);
	}
	if (write(p[1], "x", 1) == 1) {
		struct epoll_event out = {0, {0}};
		int r = epoll_wait(ep, &out, 1, 1000);
		printf("epoll_wait, readable: %d events %u data %llu\n", r, out.events,
		       (unsigned long long)out.data.u64);
	}
	errno = 0;
	int r = epoll_wait(p[0], &ev, 1, 1);
	printf("epoll_wait on a pipe: %d errno %d\n", r, errno);
	close(p[0]);
	close(p[1]);
	close(ep);
}

int main(void)
{
	t_nanosleep();
	t_poll();
	t_epoll();
	/* on stderr, so that stdout stays the same with and without the shim */
	unsigned long (*handled)(void) =
	        (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "punctual_preload_handled");
	fprintf(stderr, "shim: %s, %lu calls made precise\n", handled ? "loaded" : "absent",
	        handled ? handled() : 0);
	return early;
}
