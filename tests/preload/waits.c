/* SPDX-License-Identifier: MIT */
/*
 * waits.c: every event-loop wait libpunctual-preload.so interposes (poll, ppoll,
 * epoll_wait, epoll_pwait, epoll_pwait2, and the fortified __poll_chk/__ppoll_chk that
 * _FORTIFY_SOURCE builds call), each with every kind of timeout (-1 or NULL, 0, positive,
 * and a timeout on a ready fd), an fd written during the wait, a signal handler during
 * the wait, the sigmask of the p-variants, and 10^4 mixed waits over four threads. One
 * line per case (return value, errno, revents or event, whether the time is right): the
 * output must be the same with and without the shim. First, under the shim, the call time
 * its timeouts count from (t_call_time). Exits 1 if a wait returned 0 early or a call time
 * came out before its call.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#define _FORTIFY_SOURCE 2 /* poll and ppoll become __poll_chk and __ppoll_chk */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int early;

static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void report(const char *name, int ret, int err, int extra)
{
	printf("%-40s ret=%d errno=%s extra=%d\n", name, ret, err ? strerrorname_np(err) : "0",
	       extra);
}

/* A wait that returned 0 must have lasted its timeout. */
static void timed(const char *name, int r, long long start, long long want)
{
	if (r == 0 && now() - start < want) {
		fprintf(stderr, "EARLY: %s by %lld ns\n", name, want - (now() - start));
		early++;
	}
}

struct chan {
	int p[2], ep;
};

static void chan_open(struct chan *c)
{
	if (pipe2(c->p, O_NONBLOCK | O_CLOEXEC) != 0)
		return;
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN, .data.u64 = 7};
	epoll_ctl(c->ep, EPOLL_CTL_ADD, c->p[0], &e);
}

static void drain(struct chan *c)
{
	char b[64];
	while (read(c->p[0], b, sizeof(b)) > 0)
		;
}

enum call { POLL, PPOLL, EPOLL_WAIT, EPOLL_PWAIT, EPOLL_PWAIT2, NCALLS };
static const char *call_name[] = {"poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2"};

/* One call with timeout ns (-1: infinite; ms calls get ns / 1e6); its result line's parts. */
static int call(struct chan *c, enum call k, long long ns, const sigset_t *mask, int *what)
{
	struct pollfd pf = {.fd = c->p[0], .events = POLLIN, .revents = -1};
	struct epoll_event ev = {0};
	struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
	int ms = ns < 0 ? -1 : (int)(ns / 1000000), r = -2;
	volatile nfds_t one = 1; /* not a constant: the fortified headers call __poll_chk */
	errno = 0;
	switch (k) {
	case POLL:
		r = poll(&pf, one, ms);
		break;
	case PPOLL:
		r = ppoll(&pf, one, ns < 0 ? NULL : &ts, mask);
		break;
	case EPOLL_WAIT:
		r = epoll_wait(c->ep, &ev, 1, ms);
		break;
	case EPOLL_PWAIT:
		r = epoll_pwait(c->ep, &ev, 1, ms, mask);
		break;
	case EPOLL_PWAIT2:
		r = epoll_pwait2(c->ep, &ev, 1, ns < 0 ? NULL : &ts, mask);
		break;
	default:
		break;
	}
	*what = k <= PPOLL ? pf.revents : (int)(ev.events | (ev.data.u64 == 7 ? 0x10000 : 0));
	return r;
}

struct writer {
	int fd;
	long long at;
};

static void *write_at(void *arg)
{
	struct writer *w = arg;
	while (now() < w->at)
		;
	if (write(w->fd, "x", 1) != 1)
		return NULL;
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
}

static void t_kinds(struct chan *c)
{
	char name[64];
	for (enum call k = 0; k < NCALLS; k++) {
		int what, r;
		long long s;
		/* non-blocking, nothing ready */
		r = call(c, k, 0, NULL, &what);
		snprintf(name, sizeof(name), "%s timeout 0", call_name[k]);
		report(name, r, errno, what);
		/* positive timeouts, nothing ready: 0 after the whole timeout */
		for (long long ns = 1000000; ns <= 3000000; ns += 2000000) {
			s = now();
			r = call(c, k, ns, NULL, &what);
			timed(call_name[k], r, s, ns);
			snprintf(name, sizeof(name), "%s timeout %lld ms", call_name[k],
			         ns / 1000000);
			report(name, r, errno, what);
		}
		if (k == PPOLL || k == EPOLL_PWAIT2) { /* ns timeouts */
			s = now();
			r = call(c, k, 150000, NULL, &what);
			timed(call_name[k], r, s, 150000);
			snprintf(name, sizeof(name), "%s timeout 150 us", call_name[k]);
			report(name, r, errno, what);
		}
		/* ready before: at once, with any timeout */
		if (write(c->p[1], "x", 1) != 1)
			return;
		for (long long ns = -1; ns <= 1000000; ns += 1000001) {
			r = call(c, k, ns, NULL, &what);
			snprintf(name, sizeof(name), "%s ready, timeout %s", call_name[k],
			         ns < 0 ? "infinite" : "1 ms");
			report(name, r, errno, what);
		}
		drain(c);
		/* written during the wait (kernel part, then near the end: the spin) */
		for (int late = 0; late < 2; late++) {
			pthread_t t;
			s = now();
			struct writer w = {c->p[1], s + (late ? 1950000 : 500000)};
			pthread_create(&t, NULL, write_at, &w);
			r = call(c, k, 2000000, NULL, &what);
			pthread_join(t, NULL);
			snprintf(name, sizeof(name), "%s written at %s", call_name[k],
			         late ? "1.95 ms" : "0.5 ms");
			/* ready (with the right revents or event) or, at 1.95 ms, a timeout the
			 * write lost the race to: either way the same line */
			int want = k <= PPOLL ? POLLIN : (EPOLLIN | 0x10000);
			report(name, r == 0 || r == 1, errno, r == 0 || what == want);
			drain(c);
		}
		/* a signal handler during the wait: EINTR (no SA_RESTART: poll and epoll never
		 * restart anyway) */
		struct sigaction sa = {.sa_handler = on_signal};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		/* every 3 ms until the call returns (as waits_more.c's alarm_in_3ms): a signal
		 * that comes before the call is in the kernel (a loaded machine; TSan, whose
		 * handler wrapper defers a signal that meets no blocking call to the next call
		 * it intercepts) does not interrupt it, the next one does */
		struct itimerval it = {{0, 3000}, {0, 3000}}, off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &it, NULL);
		r = call(c, k, 50000000, NULL, &what);
		int e = errno;
		setitimer(ITIMER_REAL, &off, NULL);
		errno = e;
		snprintf(name, sizeof(name), "%s 50 ms, SIGALRM at 3 ms", call_name[k]);
		report(name, r, errno, 0);
	}
}

/* The p-variants' mask: SIGALRM blocked in the thread, let in by the call's mask (EINTR),
 * or blocked by the call's mask though the thread lets it in (the wait runs its course,
 * the handler after). */
static void t_masks(struct chan *c)
{
	static volatile sig_atomic_t got;
	sigset_t block_alrm, none, old;
	sigemptyset(&none);
	sigemptyset(&block_alrm);
	sigaddset(&block_alrm, SIGALRM);
	char name[80];
	for (enum call k = PPOLL; k < NCALLS; k++) {
		if (k == EPOLL_WAIT)
			continue;
		int what, r;
		pthread_sigmask(SIG_BLOCK, &block_alrm, &old);
		struct itimerval it = {{0, 0}, {0, 2000}};
		setitimer(ITIMER_REAL, &it, NULL);
		r = call(c, k, 30000000, &none, &what);
		snprintf(name, sizeof(name), "%s thread blocks, mask lets in", call_name[k]);
		report(name, r, errno, 0);
		pthread_sigmask(SIG_SETMASK, &old, NULL);

		got = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		long long s = now();
		r = call(c, k, 10000000, &block_alrm, &what);
		timed(call_name[k], r, s, 10000000);
		snprintf(name, sizeof(name), "%s mask blocks the signal", call_name[k]);
		report(name, r, errno, 0);
		(void)got;
	}
}

static void *mixed(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;
	struct chan c;
	chan_open(&c);
	for (int i = 0; i < 2500; i++) {
		enum call k = (enum call)(rand_r(&seed) % NCALLS);
		long long ns = (k == PPOLL || k == EPOLL_PWAIT2)
		                       ? 1000 + rand_r(&seed) % 400000
		                       : 1000000 * (1 + rand_r(&seed) % 2);
		int what;
		long long s = now();
		int r = call(&c, k, ns, NULL, &what);
		if (r == 0 && now() - s < ns)
			__atomic_add_fetch(&early, 1, __ATOMIC_RELAXED);
	}
	close(c.p[0]);
	close(c.p[1]);
	close(c.ep);
	return NULL;
}

/* The shim's call time (punctual_preload_call_time: an entry read, a spin, then the
 * conversion): never before the entry, never after the conversion. With a counter, one of
 * the entries at least comes out less than its spin after the clock read before it; the
 * clock read at the conversion never can, which tells the two apart whatever the load.
 * Quiet on stdout, which stays the same without the shim; on stderr, which it was. */
static void t_call_time(void)
{
	long long (*ct)(long long) =
	        (long long (*)(long long))dlsym(RTLD_DEFAULT, "punctual_preload_call_time");
	if (!ct)
		return;
	struct timespec base = {0, 20000000}; /* the counter's rate needs 10 ms from the load */
	nanosleep(&base, NULL);
	int converted = 0;
	for (int i = 0; i < 10; i++) {
		long long spin = 200000, before = now(), v = ct(spin), after = now();
		if (v < before) {
			fprintf(stderr, "EARLY: call time %lld ns before the call\n", before - v);
			early++;
		}
		if (v > after) {
			fprintf(stderr, "BAD: call time %lld ns after the call returned\n", v - after);
			early++;
		}
		converted |= v - before < spin;
	}
	fprintf(stderr, "call time: %s\n", converted ? "counter" : "clock");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_call_time();
	struct chan c;
	chan_open(&c);
	t_kinds(&c);
	t_masks(&c);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, mixed, (void *)(size_t)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	/* on stderr, so that stdout stays the same with and without the shim */
	unsigned long (*handled)(void) =
	        (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "punctual_preload_handled");
	fprintf(stderr, "shim: %s, %lu calls made precise\n", handled ? "loaded" : "absent",
	        handled ? handled() : 0);
	return early ? 1 : 0;
}
