/* SPDX-License-Identifier: MIT */
/*
 * preload_wait.c: the preload shim's event-loop waits: poll, ppoll, epoll_wait,
 * epoll_pwait, epoll_pwait2 and glibc's fortified __poll_chk and __ppoll_chk. A positive
 * timeout becomes deadline = call time + timeout, and the wait is pn__wait_until's
 * (wait.c) through the real functions (cancellation points, as the program's calls
 * were): it ends at that instant rather than that instant plus slack plus the wakeup
 * latency; an fd that becomes ready ends it at once in every phase. Timeout -1 (or NULL:
 * infinite) and 0 (non-blocking) go straight to the real call, as do malformed arguments.
 *
 * Results are the real call's: the ready count with revents or the events array, 0 with
 * every revents 0, -1 with errno (EINTR when a signal handler ran, in any phase).
 * ppoll's, epoll_pwait's and epoll_pwait2's sigmask is in force for the whole call as the
 * kernel would make it: the shim blocks every signal from entry to return, and each
 * phase waits with the call's mask.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

#include <punctual/clock.h>
#include "internal.h"
#include "preload.h"

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *,
                               const sigset_t *);
typedef int (*poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
                            size_t);

static poll_fn real_poll;
static ppoll_fn real_ppoll;
static epoll_wait_fn real_epoll_wait;
static epoll_pwait_fn real_epoll_pwait;
static epoll_pwait2_fn real_epoll_pwait2;
static poll_chk_fn real_poll_chk;
static ppoll_chk_fn real_ppoll_chk;

void pn__shim_resolve_waits(void)
{
	real_poll = (poll_fn)dlsym(RTLD_NEXT, "poll");
	real_ppoll = (ppoll_fn)dlsym(RTLD_NEXT, "ppoll");
	real_epoll_wait = (epoll_wait_fn)dlsym(RTLD_NEXT, "epoll_wait");
	real_epoll_pwait = (epoll_pwait_fn)dlsym(RTLD_NEXT, "epoll_pwait");
	real_epoll_pwait2 = (epoll_pwait2_fn)dlsym(RTLD_NEXT, "epoll_pwait2");
	real_poll_chk = (poll_chk_fn)dlsym(RTLD_NEXT, "__poll_chk");
	real_ppoll_chk = (ppoll_chk_fn)dlsym(RTLD_NEXT, "__ppoll_chk");
}

static int neg(int r)
{
	return r < 0 ? -errno : r;
}

static int wait_poll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__poll_waiter *s = (struct pn__poll_waiter *)w;
	return neg(real_ppoll(s->fds, s->n, ts, mask));
}

static int wait_epoll(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct pn__epoll_waiter *s = (struct pn__epoll_waiter *)w;
	if (real_epoll_pwait2) {
		int r = real_epoll_pwait2(s->epfd, s->ev, s->max, ts, mask);
		if (r >= 0 || errno != ENOSYS)
			return neg(r);
	}
	return neg(real_epoll_pwait(s->epfd, s->ev, s->max, pn__ts_ms_floor(ts), mask));
}

/* The spin's look at an epoll set (see wait.c's look_epoll): a ppoll of the epoll fd, the
 * events fetched only when it is ready. */
static int look_epoll(struct pn__waiter *w, const sigset_t *mask)
{
	struct pn__epoll_waiter *s = (struct pn__epoll_waiter *)w;
	struct pollfd fd = {s->epfd, POLLIN, 0};
	struct timespec zero = {0, 0};
	int r = neg(real_ppoll(&fd, 1, &zero, mask));
	return r > 0 ? wait_epoll(w, &zero, NULL) : r;
}

/* The wait to deadline with the call's mask (NULL: the thread's), as the real call's
 * result: a count, 0, or -1 with errno. */
static int precise_wait(struct pn__waiter *w, int64_t deadline)
{
	sigset_t all, old;
	if (w->mask) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
	}
	struct pn__sleep_plan p = {.restore = -1};
	pn__shim_enter(&p);
	int r = pn__shim_leave(
	        pn__wait_until(w, &p, deadline, pn__shim_precision, PN__SLEEP_KEEP_SLACK));
	if (w->mask)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

static int64_t deadline_ms(int ms)
{
	return pn_now() + (int64_t)ms * 1000000;
}

/* A positive timespec's deadline, or -1 when the call goes to the real function: NULL
 * (infinite), zero (non-blocking) or malformed (the real call reports it). */
static int64_t deadline_ts(const struct timespec *ts)
{
	if (!ts || ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= PN_NSEC ||
	    (ts->tv_sec == 0 && ts->tv_nsec == 0))
		return -1;
	int64_t d;
	if (__builtin_mul_overflow((int64_t)ts->tv_sec, PN_NSEC, &d) ||
	    __builtin_add_overflow(d, ts->tv_nsec + pn_now(), &d))
		return -1; /* centuries: nothing to make precise */
	return d;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (!real_poll)
		pn__shim_resolve_waits();
	if (!pn__shim_active() || timeout <= 0 || !real_ppoll)
		return real_poll(fds, n, timeout);
	struct pn__poll_waiter s = {{.wait = wait_poll}, fds, n};
	return precise_wait(&s.w, deadline_ms(timeout));
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	if (!real_ppoll)
		pn__shim_resolve_waits();
	int64_t d;
	if (!pn__shim_active() || (d = deadline_ts(tmo)) < 0)
		return real_ppoll(fds, n, tmo, mask);
	struct pn__poll_waiter s = {{.wait = wait_poll, .mask = mask}, fds, n};
	return precise_wait(&s.w, d);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (!real_poll_chk)
		pn__shim_resolve_waits();
	if (fdslen / sizeof(*fds) < n) /* the overflow the fortified call exists to stop */
		return real_poll_chk(fds, n, timeout, fdslen);
	return poll(fds, n, timeout);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
                       const sigset_t *mask, size_t fdslen);
EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
                       const sigset_t *mask, size_t fdslen)
{
	if (!real_ppoll_chk)
		pn__shim_resolve_waits();
	if (fdslen / sizeof(*fds) < n)
		return real_ppoll_chk(fds, n, tmo, mask, fdslen);
	return ppoll(fds, n, tmo, mask);
}

/* epoll_wait's and epoll_pwait's own checks (max <= 0) come from the real call. */
static int epoll_ms(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	struct pn__epoll_waiter s = {
	        {.wait = wait_epoll, .look = look_epoll, .mask = mask, .eintr_any = true},
	        epfd,
	        max,
	        ev};
	return precise_wait(&s.w, deadline_ms(ms));
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	if (!real_epoll_wait)
		pn__shim_resolve_waits();
	if (!pn__shim_active() || timeout <= 0 || max <= 0 || !real_epoll_pwait)
		return real_epoll_wait(epfd, ev, max, timeout);
	return epoll_ms(epfd, ev, max, timeout, NULL);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
	if (!real_epoll_pwait)
		pn__shim_resolve_waits();
	if (!pn__shim_active() || timeout <= 0 || max <= 0)
		return real_epoll_pwait(epfd, ev, max, timeout, mask);
	return epoll_ms(epfd, ev, max, timeout, mask);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
                        const sigset_t *mask)
{
	if (!real_epoll_pwait2)
		pn__shim_resolve_waits();
	int64_t d;
	if (!real_epoll_pwait2)
		return (errno = ENOSYS), -1;
	if (!pn__shim_active() || (d = deadline_ts(tmo)) < 0 || max <= 0)
		return real_epoll_pwait2(epfd, ev, max, tmo, mask);
	struct pn__epoll_waiter s = {
	        {.wait = wait_epoll, .look = look_epoll, .mask = mask, .eintr_any = true},
	        epfd,
	        max,
	        ev};
	return precise_wait(&s.w, d);
}
