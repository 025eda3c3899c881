/* SPDX-License-Identifier: MIT */
/*
 * wait_calls.c: the preload shim's waits on something besides time (poll, epoll, select,
 * the semaphores, sigtimedwait): a positive timeout becomes a monotonic deadline at the
 * call, and the wait is the engine's through the real functions. Results, errno and side
 * effects are the real call's (punctual(1), "run --precise: the calls"); what the shim
 * does not make precise goes straight to the real call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "wait/wait.h"
#include "shim/core.h"
#include "shim/real.h"

struct unwind {
	int held;
	const sigset_t *mask; /* to put back; NULL: none */
};

/* A cancellation that unwinds the wait leaves the shim, closes the held fd and puts the
 * mask back. */
static void wait_unwound(void *arg)
{
	const struct unwind *u = arg;
	pn__shim_unwound();
	if (u->held >= 0)
		close(u->held);
	if (u->mask)
		pthread_sigmask(SIG_SETMASK, u->mask, NULL);
}

__attribute__((noinline)) static int precise_wait(struct pn__waiter *w, int64_t deadline,
                                                  const void *ret, int held)
{
	struct unwind u = {held, NULL};
	int r;
	pthread_cleanup_push(wait_unwound, &u);
	pthread_testcancel();
	w->ret[0] = ret;
	w->ret[1] = RET;
	sigset_t all, old;
	if (w->mask) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		u.mask = &old;
	}
	w->nested = pn__shim_nested();
	struct pn__plan p = PN__PLAN_INIT;
	pn__shim_enter(&p);
	r = pn__wait(w, &p, CLOCK_MONOTONIC, deadline, pn__shim_precision,
	             PN__PLAN_KEEP_SLACK | PN__PLAN_LIBC_CLOCK | PN__PLAN_TAIL | PN__PLAN_CANCEL);
	r = pn__wait_tail(w, &p, r); /* before the close: a new plan would wait on it again */
	if (held >= 0)
		close(held); /* a duplicate: never the last reference */
	u.held = -1;
	r = pn__shim_leave(r);
	if (w->mask)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_cleanup_pop(0);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/* The entry of a timed call, read first thing, so that what the shim does before the wait
 * counts against the wait. */
__attribute__((always_inline)) static inline uint64_t call_entry(bool timed)
{
	return timed ? pn__calltime_entry() : 0;
}

/* A relative wait observed (run --stats alone): the real call, timed out at 0. */
#define OBSERVED_AFTER(at, deadline, expr)                                                     \
	PN__OBSERVED(CLOCK_MONOTONIC, pn__calltime_ns(at), (deadline), (expr), pn_r == 0)

/* Whether the wait is the program's own call (pn__wait_alone; its end is observed), asked
 * inside the shim: a handler's wait meanwhile is not this one's. */
static bool alone(int64_t deadline, bool rounded)
{
	pn__shim_inside = true;
	bool r = pn__wait_alone(CLOCK_MONOTONIC, deadline, rounded);
	pn__shim_inside = false;
	return r;
}

static int64_t deadline_ms(uint64_t at, int ms)
{
	return pn__calltime_ns(at) + (int64_t)ms * 1000000;
}

/* The deadline sec + sub units of unit ns after the call, or -1 for the real function:
 * zero, or an overflowing sum (centuries). */
static int64_t deadline_after(uint64_t at, int64_t sec, int64_t sub, int64_t unit)
{
	int64_t d, s;
	if ((sec == 0 && sub == 0) || __builtin_mul_overflow(sec, PN_NSEC, &d) ||
	    __builtin_mul_overflow(sub, unit, &s) || __builtin_add_overflow(d, s, &d) ||
	    __builtin_add_overflow(d, pn__calltime_ns(at), &d))
		return -1;
	return d;
}

/* A positive timespec's deadline, or -1 for the real function (NULL, zero, malformed). */
static int64_t deadline_ts(uint64_t at, const struct timespec *ts)
{
	if (!ts || !pn__ts_valid(ts))
		return -1;
	return deadline_after(at, (int64_t)ts->tv_sec, ts->tv_nsec, 1);
}

static int shim_poll(uint64_t at, struct pollfd *fds, nfds_t n, int timeout, const void *ret)
{
	const struct pn__real *real = pn__real_get();
	if (!pn__shim_active() || timeout <= 0 || !real->ppoll) {
		if (pn__shim_observes() && timeout > 0)
			return OBSERVED_AFTER(at, deadline_ms(at, timeout), real->poll(fds, n, timeout));
		return real->poll(fds, n, timeout);
	}
	int64_t d = deadline_ms(at, timeout);
	if (alone(d, true))
		return OBSERVED_AFTER(at, d, real->poll(fds, n, timeout));
	struct pn__waiter w = {.kind = PN__WAIT_POLL,
	                       .k = &pn__real_poll_kernel,
	                       .fds = fds,
	                       .n = n,
	                       .rounded = true};
	return precise_wait(&w, d, ret, -1);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	return shim_poll(call_entry(timeout > 0), fds, n, timeout, RET);
}

static int shim_ppoll(uint64_t at, struct pollfd *fds, nfds_t n, const struct timespec *tmo,
                      const sigset_t *mask, const void *ret)
{
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (!pn__shim_active() || (d = deadline_ts(at, tmo)) < 0) {
		if (pn__shim_observes() && (d = deadline_ts(at, tmo)) >= 0)
			return OBSERVED_AFTER(at, d, real->ppoll(fds, n, tmo, mask));
		return real->ppoll(fds, n, tmo, mask);
	}
	struct pn__waiter w = {
	        .kind = PN__WAIT_POLL, .k = &pn__real_kernel, .fds = fds, .n = n, .mask = mask};
	return precise_wait(&w, d, ret, -1);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	return shim_ppoll(call_entry(tmo != NULL), fds, n, tmo, mask, RET);
}

#ifdef __GLIBC__ /* the fortified forms: glibc's only */
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	uint64_t at = call_entry(timeout > 0);
	const struct pn__real *real = pn__real_get();
	if (fdslen / sizeof(*fds) < n) /* the overflow the fortified call exists to stop */
		return real->poll_chk(fds, n, timeout, fdslen);
	return shim_poll(at, fds, n, timeout, RET);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
                       const sigset_t *mask, size_t fdslen);
EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
                       const sigset_t *mask, size_t fdslen)
{
	uint64_t at = call_entry(tmo != NULL);
	const struct pn__real *real = pn__real_get();
	if (fdslen / sizeof(*fds) < n)
		return real->ppoll_chk(fds, n, tmo, mask, fdslen);
	return shim_ppoll(at, fds, n, tmo, mask, RET);
}
#endif

/* The wait holds a duplicate of epfd, as the kernel holds the file for the real call: a
 * close or reuse of the number mid-wait changes nothing. -1 (the real call) when epfd is
 * not open or no fd is left. Never 0-2: a daemon may put its log there meanwhile. */
#define HOLD_LOWEST 3
static int epoll_hold(int epfd)
{
	int e = errno, fd = fcntl(epfd, F_DUPFD_CLOEXEC, HOLD_LOWEST);
	errno = e;
	return fd;
}

static int epoll_precise(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                         const sigset_t *mask, const void *ret, bool rounded)
{
	struct pn__waiter w = {.kind = PN__WAIT_EPOLL,
	                       .k = &pn__real_kernel,
	                       .epfd = epfd,
	                       .max = max,
	                       .ev = ev,
	                       .mask = mask,
	                       .rounded = rounded};
	return precise_wait(&w, deadline, ret, epfd);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	uint64_t at = call_entry(timeout > 0);
	const struct pn__real *real = pn__real_get();
	int held;
	if (pn__shim_observes() && timeout > 0)
		return OBSERVED_AFTER(at, deadline_ms(at, timeout),
		                      real->epoll_wait(epfd, ev, max, timeout));
	if (!pn__shim_active() || timeout <= 0 || max <= 0 || !real->epoll_pwait)
		return real->epoll_wait(epfd, ev, max, timeout);
	int64_t d = deadline_ms(at, timeout);
	if (alone(d, true))
		return OBSERVED_AFTER(at, d, real->epoll_wait(epfd, ev, max, timeout));
	if ((held = epoll_hold(epfd)) < 0)
		return real->epoll_wait(epfd, ev, max, timeout);
	return epoll_precise(held, ev, max, d, NULL, RET, true);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
	uint64_t at = call_entry(timeout > 0);
	const struct pn__real *real = pn__real_get();
	int held;
	if (pn__shim_observes() && timeout > 0)
		return OBSERVED_AFTER(at, deadline_ms(at, timeout),
		                      real->epoll_pwait(epfd, ev, max, timeout, mask));
	if (!pn__shim_active() || timeout <= 0 || max <= 0)
		return real->epoll_pwait(epfd, ev, max, timeout, mask);
	int64_t d = deadline_ms(at, timeout);
	if (alone(d, true))
		return OBSERVED_AFTER(at, d, real->epoll_pwait(epfd, ev, max, timeout, mask));
	if ((held = epoll_hold(epfd)) < 0)
		return real->epoll_pwait(epfd, ev, max, timeout, mask);
	return epoll_precise(held, ev, max, d, mask, RET, true);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
                        const sigset_t *mask)
{
	uint64_t at = call_entry(tmo != NULL);
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (!real->epoll_pwait2)
		return (errno = ENOSYS), -1;
	int held;
	if (pn__shim_observes() && (d = deadline_ts(at, tmo)) >= 0)
		return OBSERVED_AFTER(at, d, real->epoll_pwait2(epfd, ev, max, tmo, mask));
	if (!pn__shim_active() || (d = deadline_ts(at, tmo)) < 0 || max <= 0)
		return real->epoll_pwait2(epfd, ev, max, tmo, mask);
	if (alone(d, false))
		return OBSERVED_AFTER(at, d, real->epoll_pwait2(epfd, ev, max, tmo, mask));
	if ((held = epoll_hold(epfd)) < 0)
		return real->epoll_pwait2(epfd, ev, max, tmo, mask);
	return epoll_precise(held, ev, max, d, mask, RET, false);
}

/* select and pselect: each look starts from the caller's sets. More than FD_SETSIZE fds go
 * to the real call. */
#define SET_LONGS (FD_SETSIZE / (8 * sizeof(long)))
struct select_waiter {
	struct pn__waiter w;
	int n;
	size_t bytes;
	fd_set *set[3];
	unsigned long orig[3][SET_LONGS];
};

static void sets_restore(struct select_waiter *s)
{
	for (int i = 0; i < 3; i++)
		if (s->set[i])
			memcpy(s->set[i], s->orig[i], s->bytes);
}

/* pselect restarts for a signal without a handler: not eintr_any */
static int wait_select(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct select_waiter *s = (struct select_waiter *)w;
	sets_restore(s);
	int r = pn__real.pselect(s->n, s->set[0], s->set[1], s->set[2], ts, mask);
	return pn__neg_errno(r);
}

static int precise_select(int n, fd_set *r, fd_set *wr, fd_set *e, int64_t deadline,
                          const sigset_t *mask, const void *ret)
{
	size_t bits = 8 * sizeof(long);
	struct select_waiter s;
	s.w = (struct pn__waiter){.kind = PN__WAIT_OWN, .wait = wait_select, .mask = mask};
	s.n = n;
	s.bytes = (n + bits - 1) / bits * sizeof(long);
	s.set[0] = r;
	s.set[1] = wr;
	s.set[2] = e;
	for (int i = 0; i < 3; i++)
		if (s.set[i])
			memcpy(s.orig[i], s.set[i], s.bytes);
	int got = precise_wait(&s.w, deadline, ret, -1);
	if (got < 0) /* the kernel leaves the sets alone on an error */
		sets_restore(&s);
	return got;
}

/* select's timeout in us (tv_usec may exceed a second; negative parts are malformed); -1
 * for the real call. */
static int64_t deadline_tv(uint64_t at, const struct timeval *tv)
{
	if (!tv || tv->tv_sec < 0 || tv->tv_usec < 0)
		return -1;
	return deadline_after(at, (int64_t)tv->tv_sec, (int64_t)tv->tv_usec, 1000);
}

static int shim_select(uint64_t at, int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv,
                       const void *ret_to)
{
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (pn__shim_observes() && (d = deadline_tv(at, tv)) >= 0)
		return OBSERVED_AFTER(at, d, real->select(n, r, w, e, tv));
	if (!pn__shim_active() || (d = deadline_tv(at, tv)) < 0 || n < 0 || n > FD_SETSIZE ||
	    !real->pselect)
		return real->select(n, r, w, e, tv);
	int ret = precise_select(n, r, w, e, d, NULL, ret_to);
	int err = errno;
	/* the time left, rounded down to the us, on every return (Linux's select) */
	int64_t left = ret == 0 ? 0 : d - pn_now();
	if (left < 0)
		left = 0;
	tv->tv_sec = left / PN_NSEC;
	tv->tv_usec = left % PN_NSEC / 1000;
	errno = err;
	return ret;
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	return shim_select(call_entry(tv != NULL), n, r, w, e, tv, RET);
}

EXPORT int __select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv);
EXPORT int __select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	return shim_select(call_entry(tv != NULL), n, r, w, e, tv, RET);
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo,
                   const sigset_t *mask)
{
	uint64_t at = call_entry(tmo != NULL);
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (pn__shim_observes() && (d = deadline_ts(at, tmo)) >= 0)
		return OBSERVED_AFTER(at, d, real->pselect(n, r, w, e, tmo, mask));
	if (!pn__shim_active() || (d = deadline_ts(at, tmo)) < 0 || n < 0 || n > FD_SETSIZE)
		return real->pselect(n, r, w, e, tmo, mask);
	return precise_select(n, r, w, e, d, mask, RET);
}

/* The semaphores: the kernel part is the real call on the caller's clock to the plan's
 * target (sem_timedwait on CLOCK_REALTIME, which sanitizers intercept), the spin's look a
 * sem_trywait. The deadline is monotonic: a realtime step moves only the kernel part. A
 * futex wait ends with EINTR for a handler: eintr_any. */
struct sem_waiter {
	struct pn__waiter w;
	sem_t *sem;
	clockid_t clk;
	bool clockwait; /* the caller's call was sem_clockwait */
};

static int wait_sem(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	(void)mask; /* always NULL: the thread's */
	struct sem_waiter *s = (struct sem_waiter *)w;
	if (ts->tv_sec == 0 && ts->tv_nsec == 0)
		return pn__real.sem_trywait(s->sem) == 0 ? 1 : errno == EAGAIN ? 0 : -errno;
	struct timespec abs;
	clock_gettime(s->clk, &abs);
	abs.tv_sec += ts->tv_sec;
	abs.tv_nsec += ts->tv_nsec;
	if (abs.tv_nsec >= PN_NSEC) {
		abs.tv_sec++;
		abs.tv_nsec -= PN_NSEC;
	}
	int r = s->clockwait ? pn__real.sem_clockwait(s->sem, s->clk, &abs)
	                     : pn__real.sem_timedwait(s->sem, &abs);
	return r == 0 ? 1 : errno == ETIMEDOUT ? 0 : -errno;
}

/* An absolute timeout on clk as a monotonic deadline (-1: the real call): clk is read
 * first, so that the deadline can only come out later. */
static int64_t deadline_abs(clockid_t clk, const struct timespec *abs)
{
	if (pn__null_arg(abs) || !pn__ts_valid(abs))
		return -1;
	if (clk == CLOCK_MONOTONIC)
		return (int64_t)abs->tv_sec < INT64_MAX / PN_NSEC - 1 ? pn__ts_ns(abs) : -1;
	int64_t then = pn__shim_clock(clk), left;
	if ((int64_t)abs->tv_sec >= INT64_MAX / PN_NSEC - 1)
		return -1;
	left = pn__ts_ns(abs) - then;
	int64_t now = pn_now();
	return left > 0 && now < INT64_MAX - left ? now + left : -1;
}

static int precise_sem(sem_t *sem, clockid_t clk, bool clockwait, int64_t deadline, const void *ret)
{
	struct sem_waiter s = {
	        {.kind = PN__WAIT_OWN, .wait = wait_sem, .eintr_any = true}, sem, clk, clockwait};
	int r = precise_wait(&s.w, deadline, ret, -1);
	if (r > 0)
		return 0;
	if (r == 0)
		errno = ETIMEDOUT;
	return -1;
}

EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (pn__shim_observes() && !pn__null_arg(abstime) && pn__ts_valid(abstime))
		return PN__OBSERVED(CLOCK_REALTIME, pn__shim_clock(CLOCK_REALTIME),
		                    pn__ts_ns_sat(abstime), real->sem_timedwait(sem, abstime),
		                    pn_r == -1 && errno == ETIMEDOUT);
	if (!pn__shim_active() || !real->sem_trywait || pn__null_arg(sem) ||
	    (d = deadline_abs(CLOCK_REALTIME, abstime)) < 0 || d <= pn_now())
		return real->sem_timedwait(sem, abstime);
	return precise_sem(sem, CLOCK_REALTIME, false, d, RET);
}

EXPORT int sem_clockwait(sem_t *sem, clockid_t clk, const struct timespec *abstime)
{
	const struct pn__real *real = pn__real_get();
	if (!real->sem_clockwait)
		return (errno = ENOSYS), -1;
	int64_t d;
	if (pn__shim_observes() && (clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME) &&
	    !pn__null_arg(abstime) && pn__ts_valid(abstime))
		return PN__OBSERVED(clk, pn__shim_clock(clk), pn__ts_ns_sat(abstime),
		                    real->sem_clockwait(sem, clk, abstime),
		                    pn_r == -1 && errno == ETIMEDOUT);
	if (!pn__shim_active() || !real->sem_trywait || pn__null_arg(sem) ||
	    (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME) ||
	    (d = deadline_abs(clk, abstime)) < 0 || d <= pn_now())
		return real->sem_clockwait(sem, clk, abstime);
	return precise_sem(sem, clk, true, d, RET);
}

/* sigtimedwait: every phase is the real call, the spin's look a zero timeout. The set's
 * signals stay blocked for the whole call, so one that comes between phases waits for the
 * next look, never a handler; but one the kernel would discard when sent (ignored and not
 * blocked) is discarded here too. eintr_any. */
struct sig_waiter {
	struct pn__waiter w;
	const sigset_t *set;
	siginfo_t *info;
	const sigset_t *discard; /* the set's signals the kernel discards (not blocked) */
};

/* A signal of discard the spin's blocking kept is dropped, as the kernel would have. */
static int wait_sig(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	(void)mask; /* always NULL: the thread's */
	struct sig_waiter *s = (struct sig_waiter *)w;
	int r = pn__real.sigtimedwait(s->set, s->info, ts);
	if (r > 0 && sigismember(s->discard, r) == 1)
		return 0;
	return r > 0 ? r : errno == EAGAIN ? 0 : -errno;
}

/* Whether the kernel would discard sig now: ignored and not blocked. */
static bool sig_discarded(int sig, const sigset_t *blocked)
{
	struct sigaction sa;
	if (sigismember(blocked, sig) == 1 || pn__real.sigaction(sig, NULL, &sa) != 0)
		return false;
	if (sa.sa_flags & SA_SIGINFO)
		return false;
	if (sa.sa_handler == SIG_IGN)
		return true;
	return sa.sa_handler == SIG_DFL &&
	       (sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH);
}

/* The set's signals the call blocks (out), and those left to the kernel to discard. */
static void sigwait_blockable(const sigset_t *set, sigset_t *out, sigset_t *discard)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	*out = *set;
	sigemptyset(discard);
	for (int sig = 1; sig < _NSIG; sig++)
		if (sigismember(set, sig) == 1 && sig_discarded(sig, &cur)) {
			sigdelset(out, sig);
			sigaddset(discard, sig);
		}
}

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *tmo)
{
	uint64_t at = call_entry(tmo != NULL);
	const struct pn__real *real = pn__real_get();
	int64_t d;
	if (pn__shim_observes() && (d = deadline_ts(at, tmo)) >= 0)
		return PN__OBSERVED(CLOCK_MONOTONIC, pn__calltime_ns(at), d,
		                    real->sigtimedwait(set, info, tmo), pn_r == -1 && errno == EAGAIN);
	if (!pn__shim_active() || pn__null_arg(set) || (d = deadline_ts(at, tmo)) < 0)
		return real->sigtimedwait(set, info, tmo);
	sigset_t old, block, discard;
	sigwait_blockable(set, &block, &discard);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct sig_waiter s = {
	        {.kind = PN__WAIT_OWN, .wait = wait_sig, .eintr_any = true}, set, info, &discard};
	int r = precise_wait(&s.w, d, RET, -1), e = r == 0 ? EAGAIN : errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return r == 0 ? -1 : r;
}
