/* SPDX-License-Identifier: MIT */
/*
 * wait_trace.c: libwait_trace.so, a preload library for the benchmarks only: it sees the
 * waits a runtime (Node.js, the JDK) really makes, so that what remains of a timer's
 * lateness can be split into the wait's share and the runtime's. Put it first in
 * LD_PRELOAD (`punctual run --precise` appends the shim after it, so its calls go
 * through the shim): for every epoll_wait, epoll_pwait, poll with a positive timeout and
 * every pthread_cond_timedwait, it records the timeout and how late the call returned
 * against the instant it asked for (its call time + timeout; the cond wait's absolute
 * time), when it timed out (returned 0, or ETIMEDOUT). At exit it writes
 * "call timeout_ns lateness_ns" lines to the file WAIT_TRACE names.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

enum { MAX = 1 << 18 };
static struct rec {
	char call;
	int64_t timeout, late;
} recs[MAX];
static unsigned nrec;

static int64_t ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void note(char call, int64_t timeout, int64_t late)
{
	unsigned i = __atomic_fetch_add(&nrec, 1, __ATOMIC_RELAXED);
	if (i < MAX)
		recs[i] = (struct rec){call, timeout, late};
}

__attribute__((destructor)) static void dump(void)
{
	const char *path = getenv("WAIT_TRACE");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	unsigned n = nrec < MAX ? nrec : MAX;
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%c %lld %lld\n", recs[i].call, (long long)recs[i].timeout,
		        (long long)recs[i].late);
	fclose(f);
}

/* The build hides symbols by default; these must be seen to interpose. */
#define EXPORT     __attribute__((visibility("default")))
#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int ms)
{
	static __typeof__(&epoll_wait) real;
	if (!real)
		real = NEXT(epoll_wait);
	int64_t t0 = ns(CLOCK_MONOTONIC);
	int r = real(epfd, ev, max, ms);
	if (r == 0 && ms > 0)
		note('e', ms * 1000000LL, ns(CLOCK_MONOTONIC) - t0 - ms * 1000000LL);
	return r;
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	static __typeof__(&epoll_pwait) real;
	if (!real)
		real = NEXT(epoll_pwait);
	int64_t t0 = ns(CLOCK_MONOTONIC);
	int r = real(epfd, ev, max, ms, mask);
	if (r == 0 && ms > 0)
		note('e', ms * 1000000LL, ns(CLOCK_MONOTONIC) - t0 - ms * 1000000LL);
	return r;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int ms)
{
	static __typeof__(&poll) real;
	if (!real)
		real = NEXT(poll);
	int64_t t0 = ns(CLOCK_MONOTONIC);
	int r = real(fds, n, ms);
	if (r == 0 && ms > 0)
		note('p', ms * 1000000LL, ns(CLOCK_MONOTONIC) - t0 - ms * 1000000LL);
	return r;
}

/* The cond's clock is not visible: the deadline is on the clock it is nearer to (the
 * JDK's conds are CLOCK_MONOTONIC). */
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
	static __typeof__(&pthread_cond_timedwait) real;
	if (!real) { /* as the shim does: not glibc's 2.2.5 compat version */
		void *f = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
		if (f == dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.2.5"))
			f = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
		real = (__typeof__(&pthread_cond_timedwait))f;
	}
	int64_t d = abs->tv_sec * 1000000000LL + abs->tv_nsec, mono = ns(CLOCK_MONOTONIC);
	clockid_t clk =
	        llabs(d - mono) < llabs(d - ns(CLOCK_REALTIME)) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	int64_t t0 = ns(clk);
	int r = real(c, m, abs);
	if (r == ETIMEDOUT && d > t0)
		note('c', d - t0, ns(clk) - d);
	return r;
}
