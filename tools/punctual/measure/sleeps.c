/* SPDX-License-Identifier: MIT */
/*
 * measure/sleeps.c: the sleep mechanisms of `punctual sleep` and the harness that times
 * them: FreeBSD's testsleep, grown to every way Linux offers.
 *
 * A relative timeout is rounded up, never down, to the mechanism's unit (poll and
 * epoll_wait take milliseconds, select and usleep microseconds), as a careful program
 * would; otherwise a 1 us poll would be a 0 ms poll and return at once. The overshoot is
 * measured against the interval asked for, so the rounding shows in it, as it does for
 * the program that calls poll.
 *
 * A signal may cut a sleep short (EINTR). The harness then calls the mechanism again for
 * what remains and counts an interruption; a return before the deadline without one is
 * an early return, which must never happen.
 */
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#ifdef PN_HAVE_LIBURING
#include <liburing.h>
#endif

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wait.h>
#include "contract.h"
#include "measure/sleeps.h"

#define MAX_MECHS 32

struct sleep_ctx {
	int prepared[MAX_MECHS]; /* 0 not yet, 1 ready, -errno unsupported */
	const char *reason[MAX_MECHS];
	int epfd;           /* an empty epoll set */
	int tfd;            /* blocking timerfd, for read */
	int tfd_ep, epfd_t; /* non-blocking timerfd in its own epoll set */
	uint32_t futex_word;
	int64_t precision; /* of the pn_sleep_until mechanism being sampled */
	sigset_t never;    /* a blocked signal nobody sends */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool cv_ready;
	_Atomic bool cut;            /* sleep_ctx_cut: the sample in progress is cut, none starts */
	volatile sig_atomic_t *stop; /* sleep_ctx_stop_on */
#ifdef PN_HAVE_LIBURING
	struct io_uring ring;
	bool ring_ready, inflight;
#endif
};

static struct timespec ts_of(int64_t ns)
{
	if (ns < 0)
		ns = 0;
	return (struct timespec){ns / PN_NSEC, ns % PN_NSEC};
}

static int64_t ceil_div(int64_t ns, int64_t unit)
{
	return ns <= 0 ? 0 : (ns + unit - 1) / unit;
}

static int neg_errno(int r)
{
	return r < 0 ? -errno : 0;
}

/* ---- the mechanisms ---------------------------------------------------------------- */

#if !defined(SYS_epoll_pwait2) || !defined(PN_HAVE_LIBURING)
/* The sleep of a mechanism this build lacks: its setup fails first (the reason the
 * table shows), so nothing calls it. */
static int s_missing(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c, (void)deadline, (void)iv;
	return -ENOSYS;
}
#endif

static int s_nanosleep(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	struct timespec ts = ts_of(iv);
	return neg_errno(nanosleep(&ts, NULL));
}

/* clock_nanosleep returns the error number instead of setting errno. */
static int s_cns_rel(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	struct timespec ts = ts_of(iv);
	return -clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static int s_cns_abs(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)iv;
	struct timespec ts = ts_of(deadline);
	return -clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int s_usleep(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	return neg_errno(usleep((useconds_t)ceil_div(iv, 1000)));
}

static int s_select(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	int64_t us = ceil_div(iv, 1000);
	struct timeval tv = {us / 1000000, us % 1000000};
	return neg_errno(select(0, NULL, NULL, NULL, &tv));
}

static int s_pselect(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	struct timespec ts = ts_of(iv);
	return neg_errno(pselect(0, NULL, NULL, NULL, &ts, NULL));
}

static int s_poll(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	return neg_errno(poll(NULL, 0, (int)ceil_div(iv, 1000000)));
}

static int s_ppoll(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	struct timespec ts = ts_of(iv);
	return neg_errno(ppoll(NULL, 0, &ts, NULL));
}

static int setup_epoll(struct sleep_ctx *c)
{
	if (c->epfd < 0)
		c->epfd = epoll_create1(EPOLL_CLOEXEC);
	return c->epfd < 0 ? -errno : 0;
}

static int s_epoll_wait(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)deadline;
	struct epoll_event ev;
	return neg_errno(epoll_wait(c->epfd, &ev, 1, (int)ceil_div(iv, 1000000)));
}

#ifdef SYS_epoll_pwait2
static int epoll_pwait2_raw(int epfd, int64_t iv)
{
	struct epoll_event ev;
	struct timespec ts = ts_of(iv);
	return neg_errno((int)syscall(SYS_epoll_pwait2, epfd, &ev, 1, &ts, NULL, 0));
}

static int setup_epoll_pwait2(struct sleep_ctx *c)
{
	int r = setup_epoll(c);
	return r < 0 ? r : epoll_pwait2_raw(c->epfd, 0); /* ENOSYS before Linux 5.11 */
}

static int s_epoll_pwait2(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)deadline;
	return epoll_pwait2_raw(c->epfd, iv);
}
#else
static int setup_epoll_pwait2(struct sleep_ctx *c)
{
	(void)c;
	return -ENOSYS;
}
#define s_epoll_pwait2 s_missing
#endif

static int setup_timerfd(struct sleep_ctx *c)
{
	if (c->tfd < 0)
		c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	return c->tfd < 0 ? -errno : 0;
}

/* Armed at the absolute deadline: a past one fires at once (a zero it_value would
 * disarm the timer instead). */
static int arm(int fd, int64_t deadline)
{
	struct itimerspec its = {.it_value = ts_of(deadline > 0 ? deadline : 1)};
	return neg_errno(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
}

static int s_timerfd_read(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	uint64_t n;
	int r = arm(c->tfd, deadline);
	if (r < 0)
		return r;
	return read(c->tfd, &n, sizeof(n)) == sizeof(n) ? 0 : -errno;
}

static int setup_timerfd_epoll(struct sleep_ctx *c)
{
	if (c->tfd_ep >= 0)
		return 0;
	c->tfd_ep = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	c->epfd_t = epoll_create1(EPOLL_CLOEXEC);
	if (c->tfd_ep < 0 || c->epfd_t < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN};
	return neg_errno(epoll_ctl(c->epfd_t, EPOLL_CTL_ADD, c->tfd_ep, &ev));
}

static int s_timerfd_epoll(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	struct epoll_event ev;
	uint64_t n;
	int r = arm(c->tfd_ep, deadline);
	if (r < 0)
		return r;
	if (epoll_wait(c->epfd_t, &ev, 1, -1) < 0)
		return -errno;
	if (read(c->tfd_ep, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static int s_futex(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)deadline;
	struct timespec ts = ts_of(iv);
	/* the word never changes: only the timeout ends the wait */
	if (syscall(SYS_futex, &c->futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0) == 0)
		return -EINTR; /* a wake nobody sent: resume */
	return errno == ETIMEDOUT ? 0 : -errno;
}

static int setup_sigtimedwait(struct sleep_ctx *c)
{
	sigemptyset(&c->never);
	sigaddset(&c->never, SIGRTMAX);
	return -pthread_sigmask(SIG_BLOCK, &c->never, NULL);
}

static int s_sigtimedwait(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)deadline;
	struct timespec ts = ts_of(iv);
	if (sigtimedwait(&c->never, NULL, &ts) >= 0)
		return -EINTR;
	return errno == EAGAIN ? 0 : -errno;
}

static int setup_cond(struct sleep_ctx *c)
{
	if (c->cv_ready)
		return 0;
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	int r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (r == 0)
		r = pthread_cond_init(&c->cv, &a);
	pthread_condattr_destroy(&a);
	if (r == 0)
		r = pthread_mutex_init(&c->mu, NULL);
	c->cv_ready = r == 0;
	return -r;
}

static int s_cond(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	struct timespec ts = ts_of(deadline);
	pthread_mutex_lock(&c->mu);
	int r = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	pthread_mutex_unlock(&c->mu);
	/* 0 is a wakeup nobody signalled (spurious): a program re-checks and waits again */
	return r == ETIMEDOUT ? 0 : r == 0 ? -EINTR : -r;
}

#ifdef PN_HAVE_LIBURING
static int setup_uring(struct sleep_ctx *c)
{
	if (c->ring_ready)
		return 0;
	int r = io_uring_queue_init(4, &c->ring, 0);
	c->ring_ready = r == 0;
	return r;
}

/* A relative IORING_OP_TIMEOUT; after a signal, the same request is waited for again. */
static int s_uring(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)deadline;
	if (!c->inflight) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);
		if (!sqe)
			return -EBUSY;
		struct __kernel_timespec kts = {iv / PN_NSEC, iv % PN_NSEC};
		io_uring_prep_timeout(sqe, &kts, 0, 0);
		int r = io_uring_submit(&c->ring);
		if (r < 0)
			return r;
		c->inflight = true;
	}
	struct io_uring_cqe *cqe;
	int r = io_uring_wait_cqe(&c->ring, &cqe);
	if (r < 0)
		return r;
	int res = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	c->inflight = false;
	return res == -ETIME ? 0 : res < 0 ? res : 0;
}
#else
static int setup_uring(struct sleep_ctx *c)
{
	(void)c;
	return -EPROTONOSUPPORT;
}
#define s_uring s_missing
#endif

static int s_spin(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)iv;
	while (pn_now() < deadline)
		pn__arch_relax();
	return 0;
}

static int s_precise(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	return pn_sleep_until(deadline, c->precision);
}

static int s_precise_poll(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	int r = pn_poll_until(NULL, 0, deadline, c->precision);
	return r > 0 ? -EIO : r; /* no fds: nothing can be ready */
}

static int s_precise_epoll(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)iv;
	struct epoll_event ev;
	int r = pn_epoll_wait_until(c->epfd, &ev, 1, deadline, c->precision);
	return r > 0 ? -EIO : r; /* an empty set: nothing can be ready */
}

static int s_syscall(struct sleep_ctx *c, int64_t deadline, int64_t iv)
{
	(void)c;
	(void)deadline;
	(void)iv;
	syscall(SYS_getppid);
	return 0;
}

#define NS 1
#define US 1000
#define MS 1000000

/* id, description, granularity, baseline, setup, sleep */
#define MECH(id, desc, gran, base, setup, fn, td)                                                  \
	{                                                                                          \
		id, desc, gran, base, setup, fn, td, false, 0, 0                                   \
	}

static const struct sleep_mech mechs[] = {
        MECH("nanosleep", "nanosleep(2)", NS, false, NULL, s_nanosleep, NULL),
        MECH("clock_nanosleep", "clock_nanosleep(2) MONOTONIC, relative", NS, false, NULL,
             s_cns_rel, NULL),
        MECH("clock_nanosleep_abs", "clock_nanosleep(2) MONOTONIC, TIMER_ABSTIME", NS, false, NULL,
             s_cns_abs, NULL),
        MECH("usleep", "usleep(3)", US, false, NULL, s_usleep, NULL),
        MECH("select", "select(2), no fds", US, false, NULL, s_select, NULL),
        MECH("pselect", "pselect(2), no fds", NS, false, NULL, s_pselect, NULL),
        MECH("poll", "poll(2), no fds", MS, false, NULL, s_poll, NULL),
        MECH("ppoll", "ppoll(2), no fds", NS, false, NULL, s_ppoll, NULL),
        MECH("epoll_wait", "epoll_wait(2), empty set", MS, false, setup_epoll, s_epoll_wait, NULL),
        MECH("epoll_pwait2", "epoll_pwait2(2), empty set", NS, false, setup_epoll_pwait2,
             s_epoll_pwait2, NULL),
        MECH("timerfd_read", "timerfd, absolute, then read(2)", NS, false, setup_timerfd,
             s_timerfd_read, NULL),
        MECH("timerfd_epoll", "timerfd, absolute, in epoll_wait(2)", NS, false, setup_timerfd_epoll,
             s_timerfd_epoll, NULL),
        MECH("futex", "futex(2) FUTEX_WAIT, relative", NS, false, NULL, s_futex, NULL),
        MECH("sigtimedwait", "sigtimedwait(2) on a signal never sent", NS, false,
             setup_sigtimedwait, s_sigtimedwait, NULL),
        MECH("cond_timedwait", "pthread_cond_timedwait(3), MONOTONIC", NS, false, setup_cond,
             s_cond, NULL),
        MECH("io_uring", "io_uring IORING_OP_TIMEOUT (liburing)", NS, false, setup_uring, s_uring,
             NULL),
        MECH("spin", "busy loop on pn_now()", NS, false, NULL, s_spin, NULL),
        MECH("syscall", "null system call, getppid(2): the baseline", 0, true, NULL, s_syscall,
             NULL),
};

#define N_MECHS ((int)(sizeof(mechs) / sizeof(mechs[0])))
_Static_assert(N_MECHS <= MAX_MECHS, "MAX_MECHS");

#define MAX_PRECISE (MAX_MECHS - N_MECHS)
_Static_assert(MAX_PRECISE >= 8, "room for precise mechanisms");

static struct precise {
	struct sleep_mech m;
	char id[48], desc[80];
} precise[MAX_PRECISE];
static int nprecise;

const struct sleep_mech *sleep_mech_precise(enum precise_kind kind, int64_t precision,
                                            const char *id_suffix)
{
	static const struct {
		const char *prefix, *desc;
		int (*setup)(struct sleep_ctx *c);
		int (*sleep)(struct sleep_ctx *c, int64_t deadline, int64_t iv);
	} kinds[] = {
	        [PRECISE_SLEEP] = {"precise", "pn_sleep_until", NULL, s_precise},
	        [PRECISE_POLL] = {"precise-poll", "pn_poll_until, no fds", NULL, s_precise_poll},
	        [PRECISE_EPOLL] = {"precise-epoll", "pn_epoll_wait_until, empty set", setup_epoll,
	                           s_precise_epoll},
	};
	if ((unsigned)kind >= sizeof(kinds) / sizeof(kinds[0]) || precision < 0)
		return NULL;
	for (int i = 0; i < nprecise; i++)
		if (precise[i].m.precision == precision && precise[i].m.sleep == kinds[kind].sleep)
			return &precise[i].m;
	if (nprecise == MAX_PRECISE)
		return NULL;
	struct precise *p = &precise[nprecise];
	snprintf(p->id, sizeof(p->id), "%s:%s", kinds[kind].prefix, id_suffix);
	snprintf(p->desc, sizeof(p->desc), "%s, precision %lld ns (libpunctual)", kinds[kind].desc,
	         (long long)precision);
	p->m = (struct sleep_mech){.id = p->id,
	                           .desc = p->desc,
	                           .granularity = NS,
	                           .setup = kinds[kind].setup,
	                           .own_slack = true,
	                           .precision = precision,
	                           .slot = N_MECHS + nprecise,
	                           .sleep = kinds[kind].sleep};
	nprecise++;
	return &p->m;
}

int sleep_mechs_count(void)
{
	return N_MECHS;
}

const struct sleep_mech *sleep_mech(int i)
{
	return i >= 0 && i < N_MECHS ? &mechs[i] : NULL;
}

const struct sleep_mech *sleep_mech_find(const char *id)
{
	for (int i = 0; i < N_MECHS; i++)
		if (strcmp(mechs[i].id, id) == 0)
			return &mechs[i];
	return NULL;
}

/* ---- context ------------------------------------------------------------------------ */

struct sleep_ctx *sleep_ctx_new(void)
{
	struct sleep_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->epfd = c->tfd = c->tfd_ep = c->epfd_t = -1;
	return c;
}

void sleep_ctx_free(struct sleep_ctx *c)
{
	if (!c)
		return;
	int fds[] = {c->epfd, c->tfd, c->tfd_ep, c->epfd_t};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (c->cv_ready) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
	}
#ifdef PN_HAVE_LIBURING
	if (c->ring_ready)
		io_uring_queue_exit(&c->ring);
#endif
	free(c);
}

int sleep_ctx_prepare(struct sleep_ctx *c, const struct sleep_mech *m, const char **reason)
{
	int i = m->slot ? m->slot : (int)(m - mechs);
	if (!c->prepared[i]) {
		int r = m->setup ? m->setup(c) : 0;
		c->prepared[i] = r < 0 ? r : 1;
		if (r == -ENOSYS)
			c->reason[i] = "the kernel lacks it (ENOSYS)";
		else if (r == -EPROTONOSUPPORT)
			c->reason[i] = "built without it";
		else if (r == -EPERM || r == -EACCES)
			c->reason[i] = "not permitted here (io_uring_disabled, seccomp?)";
		else if (r < 0)
			c->reason[i] = strerror(-r);
	}
	if (reason)
		*reason = c->reason[i];
	return c->prepared[i] < 0 ? c->prepared[i] : 0;
}

/* ---- the cut: a budget kept whatever the slack --------------------------------------- */

/* The signal that interrupts a sleep being cut: any handler makes the kernel end a wait with
 * EINTR. SIGURG: no mechanism waits for it (sigtimedwait's is SIGRTMAX, kept blocked), and,
 * unlike the real-time signals, qemu-user passes it to an emulated program. */
#define CUT_SIGNAL SIGURG

static void on_cut(int sig)
{
	(void)sig;
}

int sleep_ctx_cut_arm(struct sigaction *old)
{
	struct sigaction sa = {.sa_handler = on_cut}; /* no SA_RESTART: the wait ends */
	sigemptyset(&sa.sa_mask);
	return sigaction(CUT_SIGNAL, &sa, old) ? -errno : 0;
}

void sleep_ctx_cut_disarm(const struct sigaction *old)
{
	sigaction(CUT_SIGNAL, old, NULL);
}

void sleep_ctx_cut(struct sleep_ctx *c, pthread_t sleeper)
{
	atomic_store_explicit(&c->cut, true, memory_order_relaxed);
	pthread_kill(sleeper, CUT_SIGNAL);
	if (c->cv_ready) /* a cond wait ignores signals: a wakeup nobody sent ends it */
		pthread_cond_broadcast(&c->cv);
	syscall(SYS_futex, &c->futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void sleep_ctx_stop_on(struct sleep_ctx *c, volatile sig_atomic_t *stop)
{
	c->stop = stop;
}

/* ---- the harness -------------------------------------------------------------------- */

void sleep_cell_init(struct sleep_cell *cell)
{
	memset(cell, 0, sizeof(*cell));
	pn_hist_init(&cell->duration);
	pn_hist_init(&cell->late);
}

int sleep_sample(struct sleep_ctx *c, const struct sleep_mech *m, int64_t interval,
                 struct sleep_cell *cell)
{
	struct pn_sleep_stats before, after;
	bool pn = m->sleep == s_precise;
	if (pn) /* the spin this cell's sleep makes, out of the timed stretch */
		pn_sleep_stats(&before);
	int64_t start = pn_now();
	int64_t deadline = start + interval;
	int64_t iv = interval;
	c->precision = m->precision;
	for (;;) {
		if (atomic_load_explicit(&c->cut, memory_order_relaxed) || (c->stop && *c->stop))
			return -ECANCELED;
		int r = m->sleep(c, deadline, iv);
		if (atomic_load_explicit(&c->cut, memory_order_relaxed)) {
			cell->cut++; /* its end is the cut's, not the mechanism's: not recorded */
			return -ECANCELED;
		}
		if (r == 0)
			break;
		if (r != -EINTR) {
			cell->errors++;
			cell->last_error = r;
			return r;
		}
		if (c->stop && *c->stop) /* the signal that stops the run: not recorded */
			return -ECANCELED;
		cell->interrupted++;
		iv = deadline - pn_now();
		if (iv < 0)
			iv = 0;
	}
	int64_t end = pn_now();
	pn_hist_record(&cell->duration, end - start);
	pn_hist_record(&cell->late, end - deadline);
	if (!m->baseline && end < deadline)
		cell->early++;
	if (pn) {
		pn_sleep_stats(&after);
		cell->spun_ns += after.spun_ns - before.spun_ns;
	}
	return 0;
}
