/* SPDX-License-Identifier: MIT */
/*
 * sched.c: the real time a precise wait lends a shared thread. On a CPU shared with
 * runnable tasks a SCHED_OTHER wakeup waits behind them; a SCHED_FIFO one runs at once.
 * The lend covers the kernel wait, and under the shim the work the wakeup starts until
 * the thread's next wait, a handler, fork, exec or a call about its own scheduling. It is
 * bounded by PN__SCHED_LEND_NS of CPU per wakeup and, for the process's threads together,
 * 1/PN__SCHED_LEND_SHARE of one CPU. The thread's own scheduling and slack come back when
 * it ends, unless something outside changed them meanwhile: what an administrator set
 * stands.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "internal.h"
#include "sched/sched.h"

static _Atomic int fifo; /* 0 not tried, 1 permitted, -1 denied */
int pn__sched_lend_signal;
PN_TLS unsigned pn__sched_sig_ours, pn__sched_sig_theirs;

int pn__sched_wait_fifo(void)
{
	return atomic_load_explicit(&fifo, memory_order_relaxed);
}

/* The kernel's struct sigevent, for a timer signalling one thread (SIGEV_THREAD_ID). */
struct k_sigevent {
	union sigval value;
	int signo, notify, tid;
	int pad[11];
};
#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif

/* The bound's CPU timer, on the thread's CPU clock, armed with ns: 0 with *left the last
 * arm's unused time, or -errno. */
static int timer_arm(struct pn__sched_wait *w, int64_t ns, int64_t *left)
{
	if (w->timer == 0) {
		struct k_sigevent ev;
		memset(&ev, 0, sizeof(ev));
		ev.signo = pn__sched_lend_signal;
		ev.notify = SIGEV_THREAD_ID;
		ev.tid = (int)syscall(SYS_gettid);
		ev.value.sival_ptr = w;
		int id;
		if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) != 0) {
			w->timer = -1;
			return -errno;
		}
		w->timer_id = id;
		w->timer = 1;
	}
	if (w->timer < 0)
		return -ENOSYS;
	struct itimerspec nv = {{0, 0}, {ns / 1000000000, ns % 1000000000}}, ov = {{0, 0}, {0, 0}};
	if (syscall(SYS_timer_settime, w->timer_id, 0, &nv, &ov) != 0)
		return -errno;
	*left = pn__ts_ns(&ov.it_value);
	return 0;
}

/* SCHED_FIFO at PN__SCHED_WAIT_PRIO with SCHED_RESET_ON_FORK: 0 or -errno. */
static int to_fifo(const struct pn__sched_attr *own)
{
	struct pn__sched_attr a;
	memset(&a, 0, sizeof(a));
	a.policy = SCHED_FIFO;
	a.priority = PN__SCHED_WAIT_PRIO;
	a.flags = PN__SCHED_RESET_ON_FORK;
	a.util_min = own->util_min;
	a.util_max = own->util_max;
	return pn__sched_set(&a);
}

/* The thread's own back after SCHED_FIFO, where it is still ours: a policy or priority set
 * from outside stands, a nice set meanwhile is the one written. Whether it was ours. */
static bool fifo_back(struct pn__sched_wait *w)
{
	struct pn__sched_attr cur;
	if (pn__sched_get(&cur) == 0 &&
	    (cur.policy != SCHED_FIFO || cur.priority != PN__SCHED_WAIT_PRIO)) {
		w->outside++;
		return false;
	}
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		w->own.nice = nice;
	if (pn__sched_set(&w->own) == -EPERM) {
		struct pn__sched_attr a = w->own;
		a.flags |= PN__SCHED_RESET_ON_FORK;
		pn__sched_set(&a);
	}
	return true;
}

void pn__sched_wait_begin(struct pn__sched_wait *w, struct pn__rt *r, struct pn__slice *s,
                          bool shared, int64_t slack, int64_t own_slack)
{
	bool try_fifo = shared && !r->fifo_off && !r->prio && pn__sched_wait_fifo() >= 0;
	if (w->under && w->lent && try_fifo) {
		w->lent = false;
		r->wait_fifo++;
		if (slack <= 0) /* planned under the lend: the slack to end it with is the own */
			w->slack = w->own_slack;
		return;
	}
	pn__sched_lend_end(w); /* a lend no longer wanted, or one a jump left */
	w->slack = slack;
	w->own_slack = own_slack;
	s->set_ns = 0;
	int64_t slice = pn__slice_wanted(s);
	if (r->prio || (!try_fifo && !slice))
		return;
	int e = errno;
	if (pn__sched_get(&w->own) < 0 || w->own.policy != SCHED_OTHER)
		goto out;
	w->own.flags &= PN__SCHED_RESET_ON_FORK; /* no utilization clamp written back */
	if (try_fifo) {
		/* a plan made under a lend its bound ended since left the slack (0): the
		 * thread's own, read now, is what real time's end writes back */
		if (w->slack <= 0 || w->own_slack <= 0) {
			int64_t cur = pn_slack_get();
			w->slack = w->slack > 0 ? w->slack : cur;
			w->own_slack = w->own_slack > 0 ? w->own_slack : cur;
		}
		int r1 = to_fifo(&w->own);
		if (r1 == 0) {
			atomic_store_explicit(&fifo, 1, memory_order_relaxed);
			w->under = PN__SCHED_FIFO;
			r->wait_fifo++;
			goto out;
		}
		if (r1 == -EPERM || r1 == -EINVAL || r1 == -ENOSYS)
			atomic_store_explicit(&fifo, -1, memory_order_relaxed);
	}
	if (slice && pn__slice_wait(s, &w->own, slice) == 0)
		w->under = PN__SCHED_SLICE;
out:
	errno = e;
}

/* Whether the bound's signal can reach the thread, read at its first lend and every 64th
 * (a worker that blocks every signal gets no lend past its waits). */
static bool bound_reaches(struct pn__sched_wait *w)
{
	if ((w->lends++ & 63) == 0) {
		sigset_t now;
		w->blocked = pthread_sigmask(SIG_BLOCK, NULL, &now) != 0 ||
		             sigismember(&now, pn__sched_lend_signal) == 1;
	}
	return !w->blocked;
}

/* The process's token bucket: its threads' lends share PN__SCHED_LEND_SHARE of one CPU's
 * wall time, at most PN__SCHED_LEND_NS banked: a JVM's twenty threads together. */
static _Atomic int64_t bucket, bucket_at;

static void bucket_fill(int64_t now)
{
	int64_t at = atomic_load_explicit(&bucket_at, memory_order_relaxed);
	if (now <= at ||
	    !atomic_compare_exchange_strong_explicit(&bucket_at, &at, now, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;
	if (at == 0)
		return; /* the first wakeup starts the clock */
	int64_t add = (now - at) / PN__SCHED_LEND_SHARE;
	int64_t c = atomic_fetch_add_explicit(&bucket, add, memory_order_relaxed) + add;
	while (c > PN__SCHED_LEND_NS &&
	       !atomic_compare_exchange_weak_explicit(&bucket, &c, PN__SCHED_LEND_NS,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

/* Up to PN__SCHED_LEND_NS from the bucket; 0 below PN__SCHED_LEND_MIN_NS. */
static int64_t bucket_take(void)
{
	int64_t c = atomic_load_explicit(&bucket, memory_order_relaxed), give;
	do {
		if (c < PN__SCHED_LEND_MIN_NS)
			return 0;
		give = c < PN__SCHED_LEND_NS ? c : PN__SCHED_LEND_NS;
	} while (!atomic_compare_exchange_weak_explicit(&bucket, &c, c - give, memory_order_relaxed,
	                                                memory_order_relaxed));
	return give;
}

/* What a reaction given armed ns left unused (the timer's time left) goes back. */
static void bucket_refund(int64_t armed, int64_t left)
{
	if (armed > 0 && left > 0)
		atomic_fetch_add_explicit(&bucket, left < armed ? left : armed, memory_order_relaxed);
}

static bool lend_on(struct pn__sched_wait *w, int64_t now)
{
	if (!pn__sched_lend_signal || w->timer < 0 || !bound_reaches(w))
		return false;
	bucket_fill(now);
	int64_t give = bucket_take(), left = 0;
	if (give == 0 && !w->armed)
		return false;
	if (timer_arm(w, give, &left) < 0) {
		bucket_refund(give, give);
		return false;
	}
	bucket_refund(w->armed, left); /* what the last reaction did not use */
	w->armed = give;
	return give > 0;
}

void pn__sched_wait_end(struct pn__sched_wait *w, int64_t now)
{
	if (!w->under)
		return;
	int e = errno;
	if (w->under == PN__SCHED_FIFO && lend_on(w, now)) {
		w->lent = true;
		errno = e;
		return;
	}
	bool ours = w->under != PN__SCHED_FIFO || fifo_back(w);
	if (w->under == PN__SCHED_SLICE)
		pn__sched_set(&w->own);
	else if (ours && w->slack > 0)
		pn__slack_put(w->slack); /* Linux put the default back: the plan's again */
	w->under = 0;
	errno = e;
}

static void lend_end(struct pn__sched_wait *w, bool disarm)
{
	if (!w->under)
		return;
	int e = errno;
	if (w->under == PN__SCHED_SLICE) {
		pn__sched_set(&w->own);
	} else if (fifo_back(w)) {
		int64_t put = w->lent ? w->own_slack : w->slack;
		if (put > 0)
			pn__slack_put(put);
	}
	if (disarm && w->armed > 0) {
		int64_t left = 0;
		if (timer_arm(w, 0, &left) == 0)
			bucket_refund(w->armed, left);
		w->armed = 0;
	}
	w->under = 0;
	w->lent = false;
	errno = e;
}

void pn__sched_lend_end(struct pn__sched_wait *w)
{
	lend_end(w, true);
}

bool pn__sched_on_bound(struct pn__sched_wait *w, const void *cookie)
{
	if (!w || cookie != w)
		return false;
	pn__sched_sig_ours++;
	if (!w->lent)
		return true;
	w->bounded++;
	w->armed = 0; /* used whole */
	lend_end(w, false);
	return true;
}

bool pn__sched_interrupted_by_us(unsigned ours, unsigned theirs)
{
	return pn__sched_sig_ours != ours && pn__sched_sig_theirs == theirs;
}

void pn__sched_exit(struct pn__sched_wait *w)
{
	lend_end(w, true);
	if (w->timer > 0)
		syscall(SYS_timer_delete, w->timer_id);
	w->timer = -1;
	w->armed = 0;
}

void pn__sched_forked(struct pn__sched_wait *w)
{
	/* timers are not inherited; SCHED_RESET_ON_FORK made the child SCHED_OTHER */
	w->under = 0;
	w->lent = false;
	w->timer = 0;
	w->armed = 0;
	w->lends = 0;
}
