/* SPDX-License-Identifier: MIT */
/*
 * test_wheel.c: the timer wheel against a plain reference model (an array of pending
 * timers kept sorted by deadline and insertion order) over more than 10^6 random
 * operations with fixed seeds: adds, periodic adds, cancels, expiries at random, past,
 * backwards and exactly-on-time instants, with callbacks that add, cancel and re-arm
 * timers, themselves included. After every step pn_wheel_check passes and the wheel
 * agrees with the model (pending set, count, coalesced wakeup and window); every timer
 * fires in the model's order, never before its deadline, and inside its window when the
 * expiry is at pn_wheel_next's time. Then boundaries (INT64_MIN/MAX, precision 0 and
 * huge, saturation), -EINVAL, and real time: pn_wheel_run (never early, in 4 threads
 * with a wheel each) and pn_wheel_timerfd. No test asserts a speed or a lateness.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/wheel.h>
#include "wheel/hooks.h" /* the wheel's test hooks */
#include "wheel/sort.h"  /* its sorts, tested directly */
#include "runner.h"
#include "splitmix.h"

static int64_t rnd(uint64_t *s, int64_t n) /* [0, n) */
{
	return n <= 0 ? 0 : (int64_t)(pn__splitmix64(s) % (uint64_t)n);
}

static int64_t sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* ---- the reference model ------------------------------------------------------------ */

#define N  256 /* timers */
#define MS 1000000LL

struct mtimer {
	bool pending, firing;
	int64_t deadline, latest, period;
	uint64_t seq;
};

struct model {
	struct pn_wheel *w;
	struct pn_timer t[N];
	struct mtimer m[N];
	int ord[N]; /* pending, not firing, sorted by (deadline, seq) */
	int nord;
	int fire[N]; /* the firing list of the expiry in progress */
	int nfire, ifire;
	uint64_t seq;
	uint64_t rng;
	int64_t now;   /* the expiry in progress */
	bool on_time;  /* it is at pn_wheel_next's time */
	int64_t depth; /* callbacks fired in this expiry */
	uint64_t fired, missed, ops, on_time_fires;
	uint64_t added, expires; /* what pn_wheel_stats must count */
};

static bool mbefore(const struct model *M, int a, int b)
{
	if (M->m[a].deadline != M->m[b].deadline)
		return M->m[a].deadline < M->m[b].deadline;
	return M->m[a].seq < M->m[b].seq;
}

static void ord_insert(struct model *M, int id)
{
	int i = M->nord;
	while (i > 0 && mbefore(M, id, M->ord[i - 1])) {
		M->ord[i] = M->ord[i - 1];
		i--;
	}
	M->ord[i] = id;
	M->nord++;
}

static void ord_remove(struct model *M, int id)
{
	for (int i = 0; i < M->nord; i++)
		if (M->ord[i] == id) {
			memmove(&M->ord[i], &M->ord[i + 1],
			        (size_t)(M->nord - i - 1) * sizeof(int));
			M->nord--;
			return;
		}
	fail_msg("model: %d not in order", id);
}

static void m_unlink(struct model *M, int id)
{
	struct mtimer *mt = &M->m[id];
	if (!mt->pending)
		return;
	if (mt->firing)
		mt->firing = false;
	else
		ord_remove(M, id);
	mt->pending = false;
}

static void m_add(struct model *M, int id, int64_t d, int64_t p, int64_t period)
{
	m_unlink(M, id);
	struct mtimer *mt = &M->m[id];
	mt->pending = true;
	mt->deadline = d;
	mt->latest = sat(d, p);
	mt->period = period;
	mt->seq = M->seq++;
	ord_insert(M, id);
}

static void m_rearm(struct model *M, int id, int64_t now)
{
	struct mtimer *mt = &M->m[id];
	__int128 k = ((__int128)now - mt->deadline) / mt->period + 1;
	__int128 nd = mt->deadline + k * mt->period;
	int64_t p = mt->latest - mt->deadline;
	unsigned __int128 missed = (unsigned __int128)M->missed + (unsigned __int128)(k - 1);
	M->missed = missed > UINT64_MAX ? UINT64_MAX : (uint64_t)missed;
	mt->deadline = nd > INT64_MAX ? INT64_MAX : (int64_t)nd;
	mt->latest = sat(mt->deadline, p);
	mt->pending = true;
	mt->seq = M->seq++;
	ord_insert(M, id);
}

/* min latest over pending timers; false if none */
static bool m_next(const struct model *M, int64_t *wake)
{
	bool any = false;
	int64_t b = INT64_MAX;
	for (int i = 0; i < N; i++)
		if (M->m[i].pending) {
			any = true;
			if (M->m[i].latest < b)
				b = M->m[i].latest;
		}
	*wake = b;
	return any;
}

static int64_t m_earliest(const struct model *M, int64_t wake)
{
	int64_t e = INT64_MIN;
	for (int i = 0; i < N; i++)
		if (M->m[i].pending && M->m[i].deadline <= wake && M->m[i].deadline > e)
			e = M->m[i].deadline;
	return e;
}

static int64_t pending_count(const struct model *M)
{
	int64_t n = 0;
	for (int i = 0; i < N; i++)
		n += M->m[i].pending;
	return n;
}

/* ---- random arguments ------------------------------------------------------------- */

static int64_t rand_deadline(struct model *M, int64_t now)
{
	int64_t r = rnd(&M->rng, 100);
	if (r < 10)
		return sat(now, -rnd(&M->rng, 1000000000));
	if (r < 50)
		return sat(now, rnd(&M->rng, 10000));
	if (r < 80)
		return sat(now, rnd(&M->rng, 10000000));
	if (r < 92)
		return sat(now, rnd(&M->rng, 1000000000000LL));
	if (r < 95)
		return INT64_MAX - rnd(&M->rng, 3);
	if (r < 97)
		return INT64_MIN + rnd(&M->rng, 3);
	return now;
}

static int64_t rand_precision(struct model *M, int64_t d, int64_t now)
{
	int64_t r = rnd(&M->rng, 100);
	if (r < 25)
		return 0;
	if (r < 50)
		return rnd(&M->rng, 1000);
	if (r < 75)
		return rnd(&M->rng, 1000000);
	if (r < 93) {
		int64_t delay = d > now ? d / 10 - now / 10 : 0; /* 10% of the delay */
		return delay;
	}
	return INT64_MAX - rnd(&M->rng, 2);
}

static int64_t rand_period(struct model *M)
{
	int64_t r = rnd(&M->rng, 100);
	if (r < 10)
		return 1;
	if (r < 80)
		return 1 + rnd(&M->rng, 1000000);
	if (r < 95)
		return 1 + rnd(&M->rng, 1000000000);
	return INT64_MAX - rnd(&M->rng, 2);
}

static void do_add(struct model *M, int id, int64_t now)
{
	int64_t d = rand_deadline(M, now);
	int64_t p = rand_precision(M, d, now);
	if (rnd(&M->rng, 8) == 0) {
		int64_t period = rand_period(M);
		assert_int_equal(pn_wheel_add_periodic(M->w, &M->t[id], d, p, period), 0);
		m_add(M, id, d, p, period);
	} else {
		assert_int_equal(pn_wheel_add(M->w, &M->t[id], d, p), 0);
		m_add(M, id, d, p, 0);
	}
	M->added++;
}

static void do_cancel(struct model *M, int id)
{
	int was = M->m[id].pending;
	assert_int_equal(pn_wheel_cancel(M->w, &M->t[id]), was);
	m_unlink(M, id);
}

/* ---- agreement ---------------------------------------------------------------------- */

static void agree(struct model *M)
{
	assert_int_equal(pn_wheel_check(M->w), 0);
	assert_int_equal(pn_wheel_count(M->w), pending_count(M));
	for (int i = 0; i < N; i++) {
		assert_int_equal(pn_timer_pending(&M->t[i]), M->m[i].pending);
		if (M->m[i].pending) {
			assert_int_equal(M->t[i].deadline, M->m[i].deadline);
			assert_int_equal(M->t[i].latest, M->m[i].latest);
		}
	}
	int64_t mw, ww = 0, we = 0;
	if (m_next(M, &mw)) {
		assert_int_equal(pn_wheel_next(M->w, &ww), 0);
		assert_int_equal(ww, mw);
		assert_int_equal(pn_wheel_window(M->w, &we, &ww), 0);
		assert_int_equal(ww, mw);
		assert_int_equal(we, m_earliest(M, mw));
		assert_true(we <= ww);
	} else {
		assert_int_equal(pn_wheel_next(M->w, &ww), -ENOENT);
		assert_int_equal(pn_wheel_window(M->w, &we, &ww), -ENOENT);
	}
}

/* ---- callbacks ---------------------------------------------------------------------- */

static void on_fire(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	struct model *M = arg;
	int id = (int)(t - M->t);
	assert_ptr_equal(w, M->w);
	assert_true(id >= 0 && id < N);
	/* the model's next still-firing timer must be this one */
	while (M->ifire < M->nfire && !M->m[M->fire[M->ifire]].firing)
		M->ifire++;
	assert_true(M->ifire < M->nfire);
	assert_int_equal(M->fire[M->ifire], id);
	M->ifire++;
	struct mtimer *mt = &M->m[id];
	/* never early; inside the window when woken at pn_wheel_next's time */
	assert_true(mt->deadline <= M->now);
	if (M->on_time) {
		assert_true(M->now <= mt->latest);
		M->on_time_fires++;
	}
	mt->firing = false;
	mt->pending = false;
	if (mt->period > 0)
		m_rearm(M, id, M->now);
	M->fired++;
	M->depth++;
	assert_int_equal(pn_timer_pending(t), mt->pending);
	assert_int_equal(pn_wheel_expire(w, M->now), -EBUSY);
	assert_int_equal(pn_wheel_run(w, 0), -EBUSY);

	int64_t r = rnd(&M->rng, 100);
	int other = (int)rnd(&M->rng, N);
	if (r < 25) {
		/* nothing */
	} else if (r < 45) {
		do_add(M, other, M->now);
	} else if (r < 60) {
		do_cancel(M, other);
	} else if (r < 75) {
		do_add(M, id, M->now); /* re-arm itself, periodic or not */
	} else if (r < 85) {
		do_cancel(M, id);
	} else {
		int64_t mw, ww;
		if (m_next(M, &mw)) {
			assert_int_equal(pn_wheel_next(w, &ww), 0);
			assert_int_equal(ww, mw);
		}
	}
	M->ops++;
	if (M->depth % 8 == 0)
		assert_int_equal(pn_wheel_check(w), 0);
}

static void do_expire(struct model *M, int64_t now, bool on_time)
{
	/* the model's firing list: the pending prefix with deadline <= now */
	M->nfire = M->ifire = 0;
	while (M->nord > 0 && M->m[M->ord[0]].deadline <= now) {
		int id = M->ord[0];
		memmove(&M->ord[0], &M->ord[1], (size_t)(M->nord - 1) * sizeof(int));
		M->nord--;
		M->m[id].firing = true;
		M->fire[M->nfire++] = id;
	}
	M->now = now;
	M->on_time = on_time;
	M->depth = 0;
	uint64_t before = M->fired;
	int r = pn_wheel_expire(M->w, now);
	assert_true(r >= 0);
	assert_int_equal((uint64_t)r, M->fired - before);
	M->expires += r > 0;
	for (int i = M->ifire; i < M->nfire; i++)
		assert_false(M->m[M->fire[i]].firing); /* every one fired or left */
	M->on_time = false;
}

static void scenario(uint64_t seed, int steps, int64_t start, size_t records_min)
{
	static struct model M; /* large: keep it off the stack */
	memset(&M, 0, sizeof(M));
	M.rng = seed;
	assert_int_equal(pn_wheel_new(&M.w), 0);
	pn__wheel_check_tune(M.w, false, records_min, records_min < 32 ? 1 : 32);
	assert_int_equal(pn_wheel_expire(M.w, start), 0); /* the simulated timebase */
	for (int i = 0; i < N; i++)
		assert_int_equal(pn_timer_init(&M.t[i], on_fire, &M), 0);
	int64_t now = start;
	for (int step = 0; step < steps; step++) {
		int64_t r = rnd(&M.rng, 100);
		int id = (int)rnd(&M.rng, N);
		if (r < 40) {
			do_add(&M, id, now);
		} else if (r < 55) {
			do_cancel(&M, id);
		} else {
			int64_t wake, q = rnd(&M.rng, 100);
			if (q < 40 && m_next(&M, &wake) && wake >= now) {
				now = wake;
				do_expire(&M, now, true);
			} else if (q < 70) {
				now = sat(now, rnd(&M.rng, 10000));
				do_expire(&M, now, false);
			} else if (q < 92) {
				now = sat(now, rnd(&M.rng, 100000000));
				do_expire(&M, now, false);
			} else if (q < 96) {
				/* a clock behind an earlier call: must fire nothing early */
				do_expire(&M, sat(now, -rnd(&M.rng, 1000000)), false);
			} else {
				now = sat(now, rnd(&M.rng, 10000000000LL));
				do_expire(&M, now, false);
			}
		}
		M.ops++;
		agree(&M);
	}
	struct pn_wheel_stats st;
	assert_int_equal(pn_wheel_stats(M.w, &st), 0);
	assert_int_equal(st.fired, M.fired);
	assert_int_equal(st.missed, M.missed);
	assert_int_equal(st.added, M.added);
	assert_int_equal(st.expires, M.expires);
	print_message("seed %llu: %llu ops, %llu fired (%llu on time), %llu missed periods, "
	              "%llu cascaded\n",
	              (unsigned long long)seed, (unsigned long long)M.ops,
	              (unsigned long long)M.fired, (unsigned long long)M.on_time_fires,
	              (unsigned long long)M.missed, (unsigned long long)st.cascaded);
	assert_true(M.fired > 0 && M.on_time_fires > 0 && st.cascaded > 0);
	pn_wheel_free(M.w);
}

/* 4 seeds x 280000 steps + callback operations: over 10^6 operations. A test and a ctest
 * entry per seed: the sizes are fixed, and each entry has its own timeout. The first two
 * sort every due list by records, and every expiry bucket of two timers or more as a
 * list. */
static void test_model_1(void **state)
{
	(void)state;
	scenario(1, 280000, 1000000000000LL, 2);
}

static void test_model_2(void **state)
{
	(void)state;
	scenario(2, 280000, 0, 2);
}

static void test_model_3(void **state)
{
	(void)state;
	scenario(3, 280000, -5000000000LL, 129);
}

static void test_model_4(void **state)
{
	(void)state;
	scenario(4, 280000, INT64_MAX - 1000000000000LL, 129);
}

/* ---- boundaries --------------------------------------------------------------------- */

static struct pn_timer bt[64];
static int fired_ids[256], nfired;

static void record_id(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	(void)arg;
	fired_ids[nfired++] = (int)(t - bt);
}

static void test_boundaries(void **state)
{
	(void)state;
	struct pn_wheel *w;
	int64_t wake, e;
	assert_int_equal(pn_wheel_new(&w), 0);
	for (int i = 0; i < 64; i++)
		pn_timer_init(&bt[i], record_id, NULL);

	/* INT64_MAX with a huge precision: latest saturates, fires only at INT64_MAX */
	assert_int_equal(pn_wheel_add(w, &bt[0], INT64_MAX, INT64_MAX), 0);
	assert_int_equal(bt[0].latest, INT64_MAX);
	assert_int_equal(pn_wheel_add(w, &bt[1], INT64_MAX - 10, INT64_MAX), 0);
	assert_int_equal(bt[1].latest, INT64_MAX);
	assert_int_equal(pn_wheel_next(w, &wake), 0);
	assert_int_equal(wake, INT64_MAX);
	assert_int_equal(pn_wheel_window(w, &e, &wake), 0);
	assert_int_equal(e, INT64_MAX);
	/* past and INT64_MIN deadlines fire at the next expiry, in deadline order */
	assert_int_equal(pn_wheel_add(w, &bt[2], INT64_MIN, 0), 0);
	assert_int_equal(pn_wheel_add(w, &bt[3], -1, 0), 0);
	assert_int_equal(pn_wheel_add(w, &bt[4], 1000, 0), 0);
	assert_int_equal(pn_wheel_next(w, &wake), 0);
	assert_int_equal(wake, INT64_MIN);
	assert_int_equal(pn_wheel_check(w), 0);
	nfired = 0;
	assert_int_equal(pn_wheel_expire(w, 999), 2);
	assert_int_equal(nfired, 2);
	assert_int_equal(fired_ids[0], 2);
	assert_int_equal(fired_ids[1], 3);
	assert_int_equal(pn_wheel_expire(w, 1000), 1);
	assert_int_equal(pn_wheel_expire(w, INT64_MAX - 11), 0);
	assert_int_equal(pn_wheel_expire(w, INT64_MAX - 10), 1);
	assert_int_equal(pn_wheel_expire(w, INT64_MAX - 1), 0);
	assert_int_equal(pn_wheel_count(w), 1);
	assert_int_equal(pn_wheel_expire(w, INT64_MAX), 1);
	assert_int_equal(pn_wheel_count(w), 0);
	assert_int_equal(pn_wheel_next(w, &wake), -ENOENT);
	assert_int_equal(pn_wheel_check(w), 0);
	pn_wheel_free(w);

	/* a periodic timer near INT64_MAX clamps, never wraps */
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_add_periodic(w, &bt[5], INT64_MAX - 10, 5, 100), 0);
	assert_int_equal(pn_wheel_expire(w, INT64_MAX - 5), 1);
	assert_int_equal(bt[5].deadline, INT64_MAX);
	assert_int_equal(bt[5].latest, INT64_MAX);
	assert_int_equal(pn_timer_pending(&bt[5]), 1);
	assert_int_equal(pn_wheel_check(w), 0);

	/* missed periods: first at 100, period 10, expired at 155: fires once, skips 5 */
	assert_int_equal(pn_wheel_add_periodic(w, &bt[6], 100, 2, 10), 0);
	assert_int_equal(pn_wheel_expire(w, 155), 1);
	assert_int_equal(bt[6].deadline, 160);
	assert_int_equal(bt[6].latest, 162);
	struct pn_wheel_stats st;
	assert_int_equal(pn_wheel_stats(w, &st), 0);
	assert_int_equal(st.missed, 5);
	assert_int_equal(pn_wheel_expire(w, 160), 1);
	assert_int_equal(bt[6].deadline, 170);
	pn_wheel_stats(w, &st);
	assert_int_equal(st.missed, 5);
	assert_int_equal(pn_wheel_cancel(w, &bt[6]), 1);
	assert_int_equal(pn_wheel_cancel(w, &bt[6]), 0);
	assert_int_equal(pn_wheel_cancel(w, &bt[5]), 1);
	pn_wheel_free(w);

	/* precision 0: the wakeup is the deadline itself */
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_add(w, &bt[7], 12345, 0), 0);
	assert_int_equal(pn_wheel_add(w, &bt[8], 12000, 1000), 0);
	assert_int_equal(pn_wheel_next(w, &wake), 0);
	assert_int_equal(wake, 12345);
	assert_int_equal(pn_wheel_window(w, &e, &wake), 0);
	assert_int_equal(e, 12345);
	/* the greedy rule: waking at 12345 fires both */
	assert_int_equal(pn_wheel_expire(w, 12345), 2);
	pn_wheel_free(w);
	pn_wheel_free(NULL);
}

/* Inside an expiry, the timers still to fire (in expiry's buckets, later ones, one a
 * cancel emptied) count for the answers of pn_wheel_next and pn_wheel_window that a
 * callback asks for. */
static int64_t win_e[2], win_l[2], win_next[2];
static struct pn_timer win_t[4];
static void ask_window(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)arg;
	if (t != &win_t[0])
		return;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pn_wheel_window(w, &win_e[k], &win_l[k]), 0);
		assert_int_equal(pn_wheel_next(w, &win_next[k]), 0);
		assert_int_equal(pn_wheel_check(w), 0);
		if (k == 0)
			assert_int_equal(pn_wheel_cancel(w, &win_t[1]), 1); /* empties its bucket */
	}
}

static void test_window_inside_expiry(void **state)
{
	(void)state;
	struct pn_wheel *w;
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_expire(w, 0), 0);
	for (int i = 0; i < 4; i++)
		pn_timer_init(&win_t[i], ask_window, NULL);
	/* an expiry to 10 ms: buckets of 4096 ns */
	assert_int_equal(pn_wheel_add(w, &win_t[0], 1000, 0), 0);
	assert_int_equal(pn_wheel_add(w, &win_t[1], 9000, 5000), 0);
	assert_int_equal(pn_wheel_add(w, &win_t[2], 20000, 0), 0);
	assert_int_equal(pn_wheel_add(w, &win_t[3], 30000, 0), 0);
	assert_int_equal(pn_wheel_expire(w, 10000000), 3);
	/* asked in win_t[0]'s callback: due by 14000, 9000 the latest deadline of those */
	assert_int_equal(win_l[0], 14000);
	assert_int_equal(win_next[0], 14000);
	assert_int_equal(win_e[0], 9000);
	/* after cancelling win_t[1]: win_t[2] wakes at 20000 */
	assert_int_equal(win_l[1], 20000);
	assert_int_equal(win_next[1], 20000);
	assert_int_equal(win_e[1], 20000);
	pn_wheel_free(w);
}

/* A timer without a callback fires like any other (counted, no longer pending; a periodic
 * one re-armed), and the counters count what they say: successful adds (re-adds too) and
 * expiries that fired something. */
static void test_null_callback_and_stats(void **state)
{
	(void)state;
	struct pn_wheel *w;
	struct pn_wheel_stats st;
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_expire(w, 0), 0); /* a simulated timebase */
	for (int i = 0; i < 3; i++)
		pn_timer_init(&bt[i], i == 1 ? record_id : NULL, NULL);
	assert_int_equal(pn_wheel_add(w, &bt[0], 100, 0), 0);
	assert_int_equal(pn_wheel_add(w, &bt[1], 100, 0), 0);
	assert_int_equal(pn_wheel_add_periodic(w, &bt[2], 50, 0, 100), 0);
	assert_int_equal(pn_wheel_add(w, &bt[0], 100, -1), -EINVAL); /* not counted */
	assert_int_equal(pn_wheel_stats(w, &st), 0);
	assert_int_equal(st.added, 3);
	assert_int_equal(st.expires, 0);
	assert_int_equal(pn_wheel_expire(w, 49), 0); /* nothing due: not an expiry that fired */
	nfired = 0;
	assert_int_equal(pn_wheel_expire(w, 150), 3);
	assert_int_equal(nfired, 1);
	assert_int_equal(fired_ids[0], 1);
	assert_int_equal(pn_timer_pending(&bt[0]), 0);
	assert_int_equal(pn_timer_pending(&bt[1]), 0);
	assert_int_equal(pn_timer_pending(&bt[2]), 1);
	assert_int_equal(bt[2].deadline, 250); /* 150 is not after the expiry time: 250 */
	assert_int_equal(pn_wheel_check(w), 0);
	assert_int_equal(pn_wheel_stats(w, &st), 0);
	assert_int_equal(st.added, 3);
	assert_int_equal(st.fired, 3);
	assert_int_equal(st.expires, 1);
	assert_int_equal(st.missed, 1);
	assert_int_equal(pn_wheel_expire(w, 249), 0);
	assert_int_equal(pn_wheel_expire(w, 250), 1);
	assert_int_equal(nfired, 1);
	/* re-adding a pending timer is an add */
	assert_int_equal(pn_wheel_add(w, &bt[0], 400, 0), 0);
	assert_int_equal(pn_wheel_add(w, &bt[0], 300, 0), 0);
	assert_int_equal(pn_wheel_cancel(w, &bt[2]), 1);
	assert_int_equal(pn_wheel_count(w), 1);
	assert_int_equal(pn_wheel_expire(w, 300), 1);
	assert_int_equal(pn_timer_pending(&bt[0]), 0);
	assert_int_equal(pn_wheel_stats(w, &st), 0);
	assert_int_equal(st.added, 5);
	assert_int_equal(st.fired, 5);
	assert_int_equal(st.expires, 3);
	assert_int_equal(st.missed, 1);
	assert_int_equal(pn_wheel_check(w), 0);
	pn_wheel_free(w);
}

/* Equal deadlines fire in insertion order, also after cascading through every level
 * and after a re-add, which moves a timer behind the others. */
static void test_insertion_order(void **state)
{
	(void)state;
	struct pn_wheel *w;
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_expire(w, 0), 0);
	int64_t d = 1LL << 50;
	for (int i = 0; i < 64; i++) {
		pn_timer_init(&bt[i], record_id, NULL);
		/* half of them added after time advanced: they enter at finer levels */
		if (i == 32)
			assert_int_equal(pn_wheel_expire(w, d - 100), 0);
		assert_int_equal(pn_wheel_add(w, &bt[i], d, i % 3 ? 0 : 1000), 0);
	}
	assert_int_equal(pn_wheel_add(w, &bt[10], d, 0), 0); /* behind all */
	nfired = 0;
	for (int64_t t = d - 99; t < d; t += 7)
		assert_int_equal(pn_wheel_expire(w, t), 0);
	assert_int_equal(pn_wheel_check(w), 0);
	assert_int_equal(pn_wheel_expire(w, d), 64);
	int k = 0;
	for (int i = 0; i < 64; i++)
		if (i != 10)
			assert_int_equal(fired_ids[k++], i);
	assert_int_equal(fired_ids[63], 10);
	pn_wheel_free(w);
}

/* A large expiry still fires by (deadline, then insertion): 5000 timers in 20 clusters
 * (crowded buckets, sorted by records, or as lists without a buffer) or spread over 5 ms
 * (buckets of a few), some re-added (moved behind); also with the wheel's 52-bit insertion sequence
 * wrapping to 0 halfway through the adds. */
#define NBIG 5000
static struct pn_timer big[NBIG];
static int64_t big_seq[NBIG];
static int big_order[NBIG], nbig;

static void record_big(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	(void)arg;
	big_order[nbig++] = (int)(t - big);
}

static void large_expiry_order(bool fail_alloc, uint64_t seq0, bool spread)
{
	struct pn_wheel *w;
	uint64_t seed = 99;
	int64_t seq = 0;
	assert_int_equal(pn_wheel_new(&w), 0);
	pn__wheel_check_tune(w, fail_alloc, 129, 32);
	pn__wheel_check_seq(w, seq0);
	assert_int_equal(pn_wheel_expire(w, 1000), 0);
	for (int i = 0; i < NBIG; i++) {
		pn_timer_init(&big[i], record_big, NULL);
		/* clustered: 20 clusters 2000 ns wide, 65 us apart */
		int64_t d = spread ? 2000 + rnd(&seed, 5000000)
		                   : ((2 + rnd(&seed, 20)) << 16) + rnd(&seed, 2000);
		assert_int_equal(pn_wheel_add(w, &big[i], d, 0), 0);
		big_seq[i] = seq++;
		assert_int_equal(pn_wheel_check(w), 0);
	}
	for (int i = 0; i < NBIG; i += 7) {
		assert_int_equal(pn_wheel_add(w, &big[i], big[i].deadline, 5), 0);
		big_seq[i] = seq++;
	}
	nbig = 0;
	assert_int_equal(pn_wheel_expire(w, 10000000), NBIG);
	assert_int_equal(nbig, NBIG);
	for (int k = 1; k < NBIG; k++) {
		int a = big_order[k - 1], b = big_order[k];
		assert_true(big[a].deadline < big[b].deadline ||
		            (big[a].deadline == big[b].deadline && big_seq[a] < big_seq[b]));
	}
	assert_int_equal(pn_wheel_check(w), 0);
	pn_wheel_free(w);
}

static void test_large_expiry_order(void **state)
{
	(void)state;
	const uint64_t wrap = (1ULL << 52) - NBIG / 2;
	large_expiry_order(false, 0, false); /* crowds of ~250: sorted by records */
	large_expiry_order(false, 0, true);
	large_expiry_order(true, 0, false); /* no buffer: the list merge sort */
	large_expiry_order(true, 0, true);
	/* across the sequence's wrap (pn_wheel_check after every add), both sorts */
	large_expiry_order(false, wrap, false);
	large_expiry_order(true, wrap, false);
}

/* One expiry over 10 s of timers, with the shapes that take each of the buckets' paths
 * (fire_buckets, pn__wheel_sort_bucket): timers alone in their bucket, a few a bucket (insertion
 * sort), a cluster crowding one bucket (sorted by records, the bucket sort), a cluster
 * within that cluster (the bucket sort's own crowded bucket), a crowd of equal
 * deadlines (in order already), and many crowded buckets, apart and within one bucket. Each expiry
 * must fire all of them in (deadline, insertion) order; some are re-added so that insertion order
 * is not the order of the array. */
static void expiry_buckets(int shape)
{
	struct pn_wheel *w;
	uint64_t seed = 7 + (uint64_t)shape;
	int64_t seq = 0, s = 1000000000;
	int n = 0;
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_expire(w, 0), 0);
	for (; n < (shape >= 3 ? 100 : 2000); n++) /* spread over the 10 s */
		big[n] = (struct pn_timer){.deadline = 1 + rnd(&seed, 10 * s)};
	if (shape == 0 || shape == 1) /* 1000 within 1 ms: one or two buckets of 4.2 ms */
		for (int k = 0; k < 1000; k++, n++)
			big[n] = (struct pn_timer){.deadline = 5 * s + rnd(&seed, 1000000)};
	if (shape == 1) /* and 600 within 64 ns of each other inside that */
		for (int k = 0; k < 600; k++, n++)
			big[n] = (struct pn_timer){.deadline = 5 * s + 500000 + rnd(&seed, 63)};
	if (shape == 2) /* 500 equal deadlines */
		for (int k = 0; k < 500; k++, n++)
			big[n] = (struct pn_timer){.deadline = 3 * s};
	if (shape == 3) /* 70 crowded buckets, 40 timers each within 1 us */
		for (int c = 0; c < 70; c++)
			for (int k = 0; k < 40; k++, n++)
				big[n] = (struct pn_timer){.deadline = (c + 1) * 140000000LL +
				                                       rnd(&seed, 1000)};
	if (shape == 4) /* 70 such crowds within one bucket (4.2 ms), 50 us apart */
		for (int c = 0; c < 70; c++)
			for (int k = 0; k < 40; k++, n++)
				big[n] = (struct pn_timer){.deadline = 5 * s + c * 50000LL +
				                                       rnd(&seed, 100)};
	assert_true(n <= NBIG);
	for (int i = 0; i < n; i++) {
		int64_t d = big[i].deadline;
		pn_timer_init(&big[i], record_big, NULL);
		assert_int_equal(pn_wheel_add(w, &big[i], d, 0), 0);
		big_seq[i] = seq++;
	}
	for (int i = 0; i < n; i += 3) {
		assert_int_equal(pn_wheel_add(w, &big[i], big[i].deadline, 7), 0);
		big_seq[i] = seq++;
	}
	assert_int_equal(pn_wheel_check(w), 0);
	nbig = 0;
	assert_int_equal(pn_wheel_expire(w, 10 * s + 1), n);
	assert_int_equal(nbig, n);
	for (int k = 1; k < n; k++) {
		int a = big_order[k - 1], b = big_order[k];
		assert_true(big[a].deadline < big[b].deadline ||
		            (big[a].deadline == big[b].deadline && big_seq[a] < big_seq[b]));
	}
	assert_int_equal(pn_wheel_check(w), 0); /* the buckets are clear again */
	pn_wheel_free(w);
}

static void test_expiry_buckets(void **state)
{
	(void)state;
	for (int shape = 0; shape < 5; shape++)
		expiry_buckets(shape);
}

/* The buffer grows for one expiry, then cannot grow for a larger one: the crowded buckets
 * are sorted as lists in place (with the due list itself collected first when window()
 * filled it), and the order still holds. */
static void test_buffer_fails_midway(void **state)
{
	(void)state;
	for (int with_window = 0; with_window < 2; with_window++) {
		struct pn_wheel *w;
		uint64_t seed = 5;
		int64_t seq = 0;
		assert_int_equal(pn_wheel_new(&w), 0);
		assert_int_equal(pn_wheel_expire(w, 1000), 0);
		for (int i = 0; i < 1500; i++) {
			pn_timer_init(&big[i], record_big, NULL);
			assert_int_equal(pn_wheel_add(w, &big[i], 2000 + rnd(&seed, 5000000), 0),
			                 0);
		}
		nbig = 0;
		assert_int_equal(pn_wheel_expire(w, 10000000), 1500); /* grows the buffer */
		pn__wheel_check_tune(w, true, 129, 32);
		for (int i = 0; i < NBIG; i++) {
			pn_timer_init(&big[i], record_big, NULL);
			int64_t d = 10000000 +
			            (i % 4 ? 1 + rnd(&seed, 5000000) : (1 + rnd(&seed, 20)) << 12);
			assert_int_equal(pn_wheel_add(w, &big[i], d, 0), 0);
			big_seq[i] = seq++;
		}
		for (int i = 0; i < NBIG; i += 5) {
			assert_int_equal(pn_wheel_add(w, &big[i], big[i].deadline, 3), 0);
			big_seq[i] = seq++;
		}
		int64_t e, l;
		if (with_window)
			assert_int_equal(pn_wheel_window(w, &e, &l), 0);
		assert_int_equal(pn_wheel_check(w), 0);
		nbig = 0;
		assert_int_equal(pn_wheel_expire(w, 20000000), NBIG);
		for (int k = 1; k < NBIG; k++) {
			int a = big_order[k - 1], b = big_order[k];
			assert_true(
			        big[a].deadline < big[b].deadline ||
			        (big[a].deadline == big[b].deadline && big_seq[a] < big_seq[b]));
		}
		assert_int_equal(pn_wheel_check(w), 0);
		pn_wheel_free(w);
	}
}

/* Deadlines added in order (a constant timeout), some equal, spread over many slots of
 * several levels: one expiry fires them in order (the buckets' lists come in order, so
 * the insertion sorts move nothing). */
static void test_in_order_across_slots(void **state)
{
	(void)state;
	for (int spread = 0; spread < 3; spread++) {
		struct pn_wheel *w;
		assert_int_equal(pn_wheel_new(&w), 0);
		assert_int_equal(pn_wheel_expire(w, 1000), 0);
		int64_t d = 5000, step = spread == 0 ? 3 : spread == 1 ? 1000 : 700000;
		for (int i = 0; i < NBIG; i++) {
			pn_timer_init(&big[i], record_big, NULL);
			d += i % 3 ? step : 0; /* every third equal to the one before */
			assert_int_equal(pn_wheel_add(w, &big[i], d, 0), 0);
		}
		assert_int_equal(pn_wheel_check(w), 0);
		nbig = 0;
		assert_int_equal(pn_wheel_expire(w, d), NBIG);
		for (int k = 0; k < NBIG; k++)
			assert_int_equal(big_order[k], k);
		pn_wheel_free(w);
	}
}

/* A callback cancels and frees timers still to fire (heap memory: ASan sees any touch
 * after the free), or re-adds them; the rest fire in order. */
static struct pn_timer *heap_t[64];
static int heap_fired[64], nheap;

static void heap_cb(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	int id = (int)(intptr_t)arg;
	heap_fired[nheap++] = id;
	assert_int_equal(pn_wheel_check(w), 0);
	if (id % 4 == 0 && id + 1 < 64 && heap_t[id + 1]) {
		assert_int_equal(pn_wheel_cancel(w, heap_t[id + 1]), 1);
		free(heap_t[id + 1]);
		heap_t[id + 1] = NULL;
	} else if (id % 4 == 2 && id + 1 < 64 && heap_t[id + 1]) {
		assert_int_equal(pn_wheel_add(w, heap_t[id + 1], t->deadline + 1000000, 0), 0);
	}
	int64_t wake;
	assert_int_equal(pn_wheel_next(w, &wake), pn_wheel_count(w) ? 0 : -ENOENT);
}

/* gap: the deadlines' spacing. The expiry's buckets are 256 ns wide: 1000 puts each
 * timer alone in its bucket, 10 a few in each (the ones cancelled and re-added share the
 * bucket firing), 3 all 64 in one crowded bucket. */
static void cancel_free_while_firing(int64_t gap)
{
	struct pn_wheel *w;
	uint64_t seed = 77;
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_wheel_expire(w, 0), 0);
	for (int i = 0; i < 64; i++) {
		heap_t[i] = malloc(sizeof(*heap_t[i]));
		assert_non_null(heap_t[i]);
		pn_timer_init(heap_t[i], heap_cb, (void *)(intptr_t)i);
		/* deadlines in id order, so that id + 1 fires after id */
		assert_int_equal(
		        pn_wheel_add(w, heap_t[i], 1000 + i * gap + rnd(&seed, gap - 1), 0), 0);
	}
	nheap = 0;
	int r = pn_wheel_expire(w, 1000000);
	assert_int_equal(r, nheap);
	for (int k = 0; k < nheap; k++) {
		if (k)
			assert_true(heap_fired[k] > heap_fired[k - 1]);
		assert_true(heap_fired[k] % 4 != 1); /* cancelled before its turn */
		assert_true(heap_fired[k] % 4 != 3); /* re-added past now */
	}
	assert_int_equal(nheap, 32);
	assert_int_equal(pn_wheel_count(w), 16);
	assert_int_equal(pn_wheel_check(w), 0);
	nheap = 0;
	assert_int_equal(pn_wheel_expire(w, 3000000), 16);
	for (int k = 0; k < nheap; k++)
		assert_true(heap_fired[k] % 4 == 3);
	pn_wheel_free(w);
	for (int i = 0; i < 64; i++)
		free(heap_t[i]);
}

static void test_cancel_free_while_firing(void **state)
{
	(void)state;
	cancel_free_while_firing(1000);
	cancel_free_while_firing(10);
	cancel_free_while_firing(3);
}

/* The record sorts against a stable reference: spread, clustered and two keys, short
 * lists, and the bucket sort with too few counts (its radix fallback, also inside a
 * crowded bucket). A record's value is its index, so stability is the values' order. */
static int cmp_srec(const void *a, const void *b)
{
	const struct pn__srec *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

static void test_record_sorts(void **state)
{
	(void)state;
	enum { MAXN = 3000 };
	static struct pn__srec in[MAXN], a[MAXN], b[MAXN], ref[MAXN];
	static uint32_t count[MAXN];
	uint64_t seed = 3;
	static const size_t sizes[] = {2, 3, 31, 33, 100, 1000, MAXN};
	for (int shape = 0; shape < 5; shape++) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t n = sizes[si];
			uint64_t range = 0;
			for (size_t i = 0; i < n; i++) {
				uint64_t k;
				if (shape == 0)
					k = (uint64_t)rnd(&seed, 1000000);
				else if (shape == 1) /* clusters: 3 of 100 keys each */
					k = (uint64_t)rnd(&seed, 3) * 10000000 +
					    (uint64_t)rnd(&seed, 100);
				else if (shape == 2) /* two keys: stability */
					k = 7 + (pn__splitmix64(&seed) & 1);
				else if (shape == 3) /* the whole range */
					k = pn__splitmix64(&seed);
				else /* one crowded bucket among spread keys */
					k = i % 2 ? 5000000 + (uint64_t)rnd(&seed, 64)
					          : (uint64_t)rnd(&seed, 1LL << 40);
				in[i] = (struct pn__srec){k, i};
				range = k > range ? k : range;
			}
			uint64_t lo = UINT64_MAX;
			for (size_t i = 0; i < n; i++)
				lo = in[i].key < lo ? in[i].key : lo;
			for (size_t i = 0; i < n; i++)
				in[i].key -= lo;
			range -= lo;
			memcpy(ref, in, n * sizeof(*in));
			qsort(ref, n, sizeof(*ref), cmp_srec);
			for (int sort = 0; sort < 3; sort++) {
				if (range == 0)
					continue; /* the radix and bucket sorts take range > 0 */
				memcpy(a, in, n * sizeof(*in));
				struct pn__srec *r;
				if (sort == 0)
					r = pn__wheel_sort_by_bucket(a, b, count, MAXN, n, range);
				else if (sort == 1)
					r = pn__wheel_sort_by_bucket(a, b, count, 40, n,
					                             range); /* few counts */
				else
					r = pn__wheel_sort_radix(a, b, n, range);
				for (size_t i = 0; i < n; i++)
					assert_int_equal(r[i].v, ref[i].v);
			}
		}
	}
}

static void test_invalid(void **state)
{
	(void)state;
	struct pn_wheel *w;
	struct pn_timer t;
	int64_t x;
	struct pn_wheel_stats st;
	assert_int_equal(pn_wheel_new(NULL), -EINVAL);
	assert_int_equal(pn_wheel_new(&w), 0);
	assert_int_equal(pn_timer_init(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(pn_timer_init(&t, NULL, NULL), 0);
	assert_int_equal(pn_timer_pending(NULL), -EINVAL);
	assert_int_equal(pn_timer_pending(&t), 0);
	assert_int_equal(pn_wheel_add(NULL, &t, 0, 0), -EINVAL);
	assert_int_equal(pn_wheel_add(w, NULL, 0, 0), -EINVAL);
	assert_int_equal(pn_wheel_add(w, &t, 0, -1), -EINVAL);
	assert_int_equal(pn_wheel_add(w, &t, 0, INT64_MIN), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(w, &t, 0, 0, 0), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(w, &t, 0, 0, -1), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(w, &t, 0, -1, 10), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(NULL, &t, 0, 0, 10), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(w, NULL, 0, 0, 10), -EINVAL);
	assert_int_equal(pn_timer_pending(&t), 0);
	assert_int_equal(pn_wheel_cancel(NULL, &t), -EINVAL);
	assert_int_equal(pn_wheel_cancel(w, NULL), -EINVAL);
	assert_int_equal(pn_wheel_cancel(w, &t), 0);
	assert_int_equal(pn_wheel_count(NULL), -EINVAL);
	assert_int_equal(pn_wheel_next(NULL, &x), -EINVAL);
	assert_int_equal(pn_wheel_next(w, NULL), -EINVAL);
	assert_int_equal(pn_wheel_window(w, NULL, &x), -EINVAL);
	assert_int_equal(pn_wheel_window(w, &x, NULL), -EINVAL);
	assert_int_equal(pn_wheel_window(NULL, &x, &x), -EINVAL);
	assert_int_equal(pn_wheel_expire(NULL, 0), -EINVAL);
	assert_int_equal(pn_wheel_run(NULL, 0), -EINVAL);
	assert_int_equal(pn_wheel_timerfd(NULL, 0), -EINVAL);
	assert_int_equal(pn_wheel_timerfd(w, -1), -EINVAL);
	assert_int_equal(pn_wheel_check(NULL), -EINVAL);
	assert_int_equal(pn_wheel_stats(NULL, &st), -EINVAL);
	assert_int_equal(pn_wheel_stats(w, NULL), -EINVAL);
	/* untouched outputs on failure */
	x = 42;
	assert_int_equal(pn_wheel_next(w, &x), -ENOENT);
	assert_int_equal(x, 42);
	assert_int_equal(pn_wheel_count(w), 0);
	assert_int_equal(pn_wheel_check(w), 0);
	assert_true(sizeof(struct pn_timer) <= 72);
	pn_wheel_free(w);
}

/* A timer pending in wheel a, cancelled or re-added through wheel b: -EINVAL, both wheels
 * as they were (each alone would once unlink it from a's lists and count it off b's). */
static void test_wrong_wheel(void **state)
{
	(void)state;
	struct pn_wheel *a, *b;
	struct pn_timer t[3];
	assert_int_equal(pn_wheel_new(&a), 0);
	assert_int_equal(pn_wheel_new(&b), 0);
	for (int i = 0; i < 3; i++) {
		pn_timer_init(&t[i], NULL, NULL);
		assert_int_equal(pn_wheel_add(i == 2 ? b : a, &t[i], pn_now() + (i + 1) * MS, 0),
		                 0);
	}
	assert_int_equal(pn_wheel_cancel(b, &t[0]), -EINVAL);
	assert_int_equal(pn_wheel_add(b, &t[1], pn_now() + 5 * MS, 0), -EINVAL);
	assert_int_equal(pn_wheel_add_periodic(b, &t[1], pn_now(), 0, MS), -EINVAL);
	assert_int_equal(pn_wheel_cancel(a, &t[2]), -EINVAL);
	assert_int_equal(pn_wheel_count(a), 2);
	assert_int_equal(pn_wheel_count(b), 1);
	assert_int_equal(pn_wheel_check(a), 0);
	assert_int_equal(pn_wheel_check(b), 0);
	assert_int_equal(pn_timer_pending(&t[0]), 1);
	/* through its own wheel, and then anywhere once it is no longer pending */
	assert_int_equal(pn_wheel_cancel(a, &t[0]), 1);
	assert_int_equal(pn_wheel_cancel(b, &t[0]), 0);
	assert_int_equal(pn_wheel_add(b, &t[0], pn_now() + MS, 0), 0);
	assert_int_equal(pn_wheel_count(a), 1);
	assert_int_equal(pn_wheel_count(b), 2);
	assert_int_equal(pn_wheel_check(a), 0);
	assert_int_equal(pn_wheel_check(b), 0);
	pn_wheel_free(a);
	pn_wheel_free(b);
}

/* ---- real time ---------------------------------------------------------------------- */

struct rt {
	struct pn_timer t[200];
	int64_t due[200]; /* the deadline each timer fires for next */
	int64_t fired_at[200];
	int n, early, ret;
	uint64_t seed;
};

static void rt_fire(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	struct rt *r = arg;
	int64_t now = pn_now();
	int id = (int)(t - r->t);
	/* every timer, the periodic one too: it fired for due[id], and is already re-armed
	 * for its next deadline, t->deadline */
	if (now < r->due[id])
		r->early++;
	if (t->period)
		r->due[id] = t->deadline;
	r->fired_at[id] = now;
	r->n++;
	/* a few re-arm themselves a little later */
	if (id % 5 == 0 && r->n < 400) {
		r->due[id] = now + rnd(&r->seed, 2000000);
		pn_wheel_add(w, t, r->due[id], rnd(&r->seed, 500000));
	}
}

static void *rt_main(void *arg)
{
	struct rt *r = arg;
	struct pn_wheel *w;
	if (pn_wheel_new(&w) != 0)
		return NULL;
	int64_t t0 = pn_now();
	for (int i = 0; i < 200; i++) {
		pn_timer_init(&r->t[i], rt_fire, r);
		int64_t d = r->due[i] = t0 + rnd(&r->seed, 100000000);
		int64_t p = i % 2 ? (d - t0) / 10 : rnd(&r->seed, 1000000);
		if (i == 199)
			pn_wheel_add_periodic(w, &r->t[i], d, p, 7000000);
		else
			pn_wheel_add(w, &r->t[i], d, p);
	}
	r->ret = pn_wheel_run(w, t0 + 150000000);
	if (pn_wheel_check(w) != 0)
		r->early = -1000;
	pn_wheel_free(w);
	return NULL;
}

/* pn_wheel_run in real time never fires early, the periodic timer included, and returns
 * the number it fired; in 4 threads, a wheel each. */
static void test_run_real_time(void **state)
{
	(void)state;
	static struct rt r[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].seed = 77 + (uint64_t)i;
		assert_int_equal(pthread_create(&th[i], NULL, rt_main, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].early, 0);
		assert_true(r[i].n >= 199);
		assert_int_equal(r[i].ret, r[i].n);
	}
}

/* pn_wheel_timerfd arms a timerfd at the window's start; never early. */
static void test_timerfd(void **state)
{
	(void)state;
	struct pn_wheel *w;
	assert_int_equal(pn_wheel_new(&w), 0);
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	assert_true(fd >= 0);
	assert_int_equal(pn_wheel_timerfd(w, fd), 0); /* nothing pending: disarmed */
	int64_t t0 = pn_now();
	uint64_t seed = 5;
	for (int i = 0; i < 64; i++) {
		pn_timer_init(&bt[i], record_id, NULL);
		int64_t d = t0 + 1000000 + rnd(&seed, 50000000);
		assert_int_equal(pn_wheel_add(w, &bt[i], d, (d - t0) / 10), 0);
	}
	nfired = 0;
	int wakeups = 0;
	while (pn_wheel_count(w) > 0) {
		assert_int_equal(pn_wheel_timerfd(w, fd), 1);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		assert_int_equal(poll(&pfd, 1, 5000), 1);
		uint64_t ticks;
		assert_int_equal(read(fd, &ticks, sizeof(ticks)), (ssize_t)sizeof(ticks));
		int64_t now = pn_now();
		int before = nfired;
		assert_true(pn_wheel_expire(w, now) >= 1); /* armed at a deadline: one is due */
		for (int i = before; i < nfired; i++)
			assert_true(bt[fired_ids[i]].deadline <= now);
		wakeups++;
	}
	assert_int_equal(nfired, 64);
	assert_true(wakeups <= 64);
	assert_int_equal(pn_wheel_timerfd(w, fd), 0);
	/* the extremes arm too: INT64_MAX (clamped by the kernel), INT64_MIN (at once) */
	assert_int_equal(pn_wheel_add(w, &bt[0], INT64_MAX, 0), 0);
	assert_int_equal(pn_wheel_timerfd(w, fd), 1);
	assert_int_equal(pn_wheel_add(w, &bt[0], INT64_MIN, 0), 0);
	assert_int_equal(pn_wheel_timerfd(w, fd), 1);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(pn_wheel_expire(w, pn_now()), 1);
	assert_int_equal(pn_wheel_timerfd(w, fd), 0);
	assert_int_equal(pn_wheel_timerfd(w, 1000000), -EBADF);
	close(fd);
	pn_wheel_free(w);
}

int main(int argc, char **argv)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_invalid),
	        cmocka_unit_test(test_wrong_wheel),
	        cmocka_unit_test(test_boundaries),
	        cmocka_unit_test(test_null_callback_and_stats),
	        cmocka_unit_test(test_insertion_order),
	        cmocka_unit_test(test_large_expiry_order),
	        cmocka_unit_test(test_expiry_buckets),
	        cmocka_unit_test(test_window_inside_expiry),
	        cmocka_unit_test(test_buffer_fails_midway),
	        cmocka_unit_test(test_in_order_across_slots),
	        cmocka_unit_test(test_cancel_free_while_firing),
	        cmocka_unit_test(test_record_sorts),
	        cmocka_unit_test(test_model_1),
	        cmocka_unit_test(test_model_2),
	        cmocka_unit_test(test_model_3),
	        cmocka_unit_test(test_model_4),
	        cmocka_unit_test(test_timerfd),
	        cmocka_unit_test(test_run_real_time),
	};
	/* clang-format on */
	return pn_run("wheel", tests, argc, argv);
}
