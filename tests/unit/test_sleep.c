/* SPDX-License-Identifier: MIT */
/*
 * test_sleep.c: pn_sleep_until is never early: over 10^5 short sleeps at mixed
 * precisions, with a signal every 50 us, and in 8 threads at once, each learning its own
 * margin; its statistics add up, count probes and slack changes, and survive a reset in
 * what was learned; bad arguments give -EINVAL. The learning survives outliers (a forced
 * stall never makes a class spin-only, a spin-only class keeps probing and explores, a
 * fine margin in a young class is 3x its p99 without making it spin-only),
 * the shim's steps put the thread's slack back and let a signal interrupt the spin and
 * the first-sleep probes. No test asserts lateness.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "alarms.h"
#include "wait/policy.h"
#include "kernel.h"
#include "wait/plan.h"
#include "wait/state.h"
#include "wait/spin.h"
#include "runner.h"
#include "splitmix.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static const int64_t precisions[] = {0, 1, 1000, 10000, 50000, 1000000};
#define NPREC (sizeof(precisions) / sizeof(precisions[0]))

/* n sleeps of random length in [0, max_len) at random precisions; fails on any early
 * return, by our clock or by the library's count. */
static void sleep_many(uint64_t *seed, int n, int64_t max_len)
{
	for (int i = 0; i < n; i++) {
		int64_t len = (int64_t)(pn__splitmix64(seed) % (uint64_t)max_len);
		int64_t p = precisions[pn__splitmix64(seed) % NPREC];
		int64_t deadline = pn_now() + len;
		assert_int_equal(pn_sleep_until(deadline, p), 0);
		int64_t now = pn_now();
		if (now < deadline)
			fail_msg("early by %lld ns (len %lld, precision %lld)",
			         (long long)(deadline - now), (long long)len, (long long)p);
	}
	struct pn_sleep_stats st;
	assert_int_equal(pn_sleep_stats(&st), 0);
	assert_int_equal(st.early, 0);
}

static void test_never_early_1e5(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	sleep_many(&rng, 100000, 20000);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.sleeps + st.past, 100000);
	assert_true(st.sleeps > 0);
}

static void test_never_early_under_signals(void **state)
{
	(void)state;
	assert_int_equal(alarms_start(50), 0);
	sleep_many(&rng, 3000, 2000000);
	alarms_stop();
	assert_true(alarms > 0);
}

struct worker {
	uint64_t seed;
	struct pn_sleep_stats st;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	sleep_many(&w->seed, 2000, 200000);
	pn_sleep_stats(&w->st);
	return NULL;
}

/* Eight threads at once: each keeps its own statistics and learns its own margins. */
static void test_threads(void **state)
{
	(void)state;
	struct worker w[8];
	pthread_t t[8];
	for (int i = 0; i < 8; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = (uint64_t)i * 7919 + 1;
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].st.early, 0);
		assert_int_equal(w[i].st.sleeps + w[i].st.past, 2000);
		uint64_t seen = 0;
		for (int k = 0; k < PN_SLEEP_CLASSES; k++)
			seen += w[i].st.class_samples[k];
		/* what a thread learned comes from its own kernel sleeps and latency probes
		 * only (a loaded machine makes more probes: pn_sleep_stats's probes) */
		assert_true(seen <= w[i].st.sleeps + w[i].st.probes);
	}
}

/* slept + spun is the time spent inside the calls that slept. */
static void test_stats_add_up(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	int64_t inside = 0;
	for (int i = 0; i < 500; i++) {
		int64_t t0 = pn_now();
		assert_int_equal(pn_sleep_for(100000 + (i % 7) * 50000, precisions[i % NPREC]), 0);
		inside += pn_now() - t0;
	}
	struct pn_sleep_stats st;
	assert_int_equal(pn_sleep_stats(&st), 0);
	/* a sleep whose deadline passed before its plan (the thread preempted for 100 us or
	 * more on a loaded machine) is counted past */
	assert_int_equal(st.sleeps + st.past, 500);
	assert_int_equal(st.early, 0);
	assert_true(st.slept_ns >= 0 && st.spun_ns >= 0);
	assert_true(st.slept_ns + st.spun_ns <= inside);
	assert_true(st.slept_ns + st.spun_ns >= inside / 2);
	assert_true(st.kernel_only <= st.sleeps);
	assert_true(st.late <= st.sleeps);
	assert_true(st.margin_ns >= 0);
	int learned = 0;
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		learned += st.class_samples[k] > 0;
	assert_true(learned > 0);
}

static void test_past_and_invalid(void **state)
{
	(void)state;
	pn_sleep_stats_reset();
	assert_int_equal(pn_sleep_until(0, 0), 0);
	assert_int_equal(pn_sleep_until(INT64_MIN, 1000), 0);
	assert_int_equal(pn_sleep_until(pn_now(), 0), 0);
	assert_int_equal(pn_sleep_for(0, 0), 0);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.past, 4);
	assert_int_equal(st.sleeps, 0);
	assert_int_equal(pn_sleep_until(pn_now() + 1000, -1), -EINVAL);
	assert_int_equal(pn_sleep_for(-1, 0), -EINVAL);
	assert_int_equal(pn_sleep_for(1000, -5), -EINVAL);
	assert_int_equal(pn_sleep_stats(NULL), -EINVAL);
	/* overflow clamps: a huge precision is accepted and the short sleep still ends */
	assert_int_equal(pn_sleep_for(1000, INT64_MAX), 0);
}

/* The slack: pn_sleep_until reports truthfully what it left, and notices pn_slack_set. */
static void test_slack_documented(void **state)
{
	(void)state;
	int64_t before = pn_slack_get();
	assert_int_equal(pn_slack_set(50000), 0);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	assert_int_equal(st.slack_ns, 50000);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(pn_sleep_for(500000 + i * 10000, i % 2 ? 0 : 200000), 0);
		pn_sleep_stats(&st);
		assert_int_equal(st.slack_ns, pn_slack_get());
	}
	assert_int_equal(pn_slack_set(777), 0);
	pn_sleep_stats(&st);
	assert_int_equal(st.slack_ns, 777);
	assert_int_equal(pn_slack_set(before), 0);
}

/* A fresh thread's start: precision at any cost (PN_SLEEP_BUDGET_FULL), the policy these
 * tests pin down margin by margin (test_budget.c has the budgets'). */
static void *full_budget(void *fn)
{
	if (pn_sleep_set_budget(PN_SLEEP_BUDGET_FULL) != 0)
		return "pn_sleep_set_budget(PN_SLEEP_BUDGET_FULL) failed";
	return ((void *(*)(void *))fn)(NULL);
}

/* Runs fn in a new thread: a thread that has learned nothing. */
static void in_fresh_thread(void *(*fn)(void *))
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, full_budget, (void *)fn), 0);
	void *failed;
	assert_int_equal(pthread_join(t, &failed), 0);
	if (failed)
		fail_msg("%s", (const char *)failed);
}

#define MS 1000000LL
#define US 1000LL

/* Plans a sleep of len ns from now, undisturbed (not cancelled): a thread preempted within
 * the plan (a loaded machine) plans a shorter sleep, maybe of a shorter class, or finds its
 * kernel part gone when it ends. So a plan of another class than len's, or one that made no
 * probe (whose wait is the plan's own) and ended more than len/8 after it began, is
 * cancelled and made again, up to 1000 times (then kept, said on stdout). */
static void plan_at(struct pn__plan *p, int64_t len, int64_t precision, int flags)
{
	int k = pn__policy_class(len);
	for (int i = 0; i < 1000; i++) {
		struct pn_sleep_stats before, after;
		pn_sleep_stats(&before);
		int64_t t0 = pn_now();
		pn__plan_make(p, CLOCK_MONOTONIC, t0 + len, precision, flags, NULL);
		pn_sleep_stats(&after);
		if (p->k == k && (after.probes != before.probes || p->start - t0 <= len / 8))
			return;
		pn__plan_cancel(p);
	}
	print_message("plan_at: 1000 plans of %lld ns disturbed; the last one kept\n",
	              (long long)len);
	pn__plan_make(p, CLOCK_MONOTONIC, pn_now() + len, precision, flags, NULL);
}

/* plan_at, cancelled (slack back). */
static struct pn__plan plan_for(int64_t len, int64_t precision, int flags)
{
	struct pn__plan p;
	plan_at(&p, len, precision, flags);
	pn__plan_cancel(&p);
	return p;
}

/* Whether p sleeps in the kernel for at least a quarter of its length. */
static bool sleeps_in_kernel(const struct pn__plan *p)
{
	return p->kernel && p->target - p->start >= (p->deadline - p->start) / 4;
}

static void learn_n(int64_t len, int64_t late, int n)
{
	for (int i = 0; i < n; i++)
		pn__plan_learn(len, late);
}

static void *stall_first(void *arg)
{
	(void)arg;
	learn_n(1000, 20 * US, 40);      /* the probes: wakeups cost 20 us */
	pn__plan_learn(3 * MS, 50 * MS); /* the class's first sample: a 50 ms stall */
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	if (st.class_samples[11] != 0)
		return "a lone stall was learned as a young class's first sample";
	struct pn__plan p = plan_for(3 * MS, 10 * US, 0);
	if (!sleeps_in_kernel(&p))
		return "one stall as a class's first sample made it spin-only";
	learn_n(3 * MS, 40 * US, 2); /* two ordinary wakeups: the stall is out */
	pn_sleep_stats(&st);
	if (st.class_samples[11] != 2)
		return "an ordinary wakeup after a young class's stall: the stall was kept";
	p = plan_for(3 * MS, 10 * US, 0);
	if (p.deadline - p.target > 1 * MS)
		return "after three samples the stall is still the margin";
	return NULL;
}

static void *stall_later(void *arg)
{
	(void)arg;
	learn_n(3 * MS, 40 * US, 64);
	learn_n(3 * MS, 50 * MS, 2); /* two stalls in a learned class */
	struct pn__plan p = plan_for(3 * MS, 10 * US, 0);
	if (!sleeps_in_kernel(&p) || p.deadline - p.target > 1 * MS)
		return "two stalls in a learned class became its margin";
	return NULL;
}

/* A lone stall in a learned class is not learned at all; two in a row are (the load
 * changed). */
static void *stall_held(void *arg)
{
	(void)arg;
	struct pn_sleep_stats a, b;
	learn_n(3 * MS, 40 * US, 64);
	pn_sleep_stats(&a);
	pn__plan_learn(3 * MS, 50 * MS);
	pn_sleep_stats(&b);
	if (b.class_samples[11] != a.class_samples[11] ||
	    b.class_margin_ns[11] != a.class_margin_ns[11])
		return "a lone stall was learned at once";
	pn__plan_learn(3 * MS, 40 * US);
	pn_sleep_stats(&b);
	if (b.class_samples[11] != a.class_samples[11] + 1)
		return "an ordinary wakeup after a stall: the stall was kept";
	pn__plan_learn(3 * MS, 50 * MS);
	pn__plan_learn(3 * MS, 50 * MS);
	pn_sleep_stats(&b);
	if (b.class_samples[11] != a.class_samples[11] + 3)
		return "two late wakeups in a row were not both learned";
	return NULL;
}

static void test_stall_never_spin_only(void **state)
{
	(void)state;
	in_fresh_thread(stall_first);
	in_fresh_thread(stall_later);
	in_fresh_thread(stall_held);
}

/* A class that truly spins (its wakeups are later than its sleeps) probes on each sleep
 * with room and explores the kernel again within EXPLORE sleeps. */
static void *spin_only(void *arg)
{
	(void)arg;
	/* a budget short of FULL, which probes (FULL does not: below) */
	if (pn_sleep_set_budget(990000) != 0)
		return "cannot set a 99% budget";
	learn_n(1000, 20 * US, 40);
	learn_n(3 * MS, 10 * MS, 64);
	struct pn_sleep_stats st;
	pn_sleep_stats_reset();
	int i;
	for (i = 1; i <= 1024; i++) {
		struct pn__plan p = plan_for(3 * MS, 10 * US, 0);
		if (i == 1) {
			pn_sleep_stats(&st);
			if (p.kernel)
				return "a class with 10 ms wakeups slept 3 ms in the kernel";
			if (st.probes < 1) /* one a plan (plan_at may make more than one) */
				return "a spin-only sleep with room made no probe";
		}
		if (p.kernel)
			break;
	}
	if (i > 1024)
		return "a spin-only class never explored the kernel in 1024 sleeps";
	/* precision at any cost: no probe in the sleep, whose own tail would cost the p99 */
	if (pn_sleep_set_budget(PN_SLEEP_BUDGET_FULL) != 0)
		return "cannot set the budget to FULL";
	pn_sleep_stats_reset();
	for (i = 1; i <= 32; i++) /* its explores (half in the kernel) stay */
		plan_for(3 * MS, 10 * US, 0);
	pn_sleep_stats(&st);
	pn_sleep_set_budget(PN_SLEEP_BUDGET_AUTO);
	if (st.probes)
		return "a spin-only sleep at budget FULL probed the kernel";
	return NULL;
}

/* A class that a few late wakeups made spin-only forgets them in its own sleeps, without
 * a single new sample: its memory runs in sleeps, not in explores (plan_for learns
 * nothing). Without that it would spin until its explores had outweighed them. */
static void *spin_only_forgets(void *arg)
{
	(void)arg;
	learn_n(1000, 20 * US, 40);
	learn_n(3 * MS, 40 * US, 200);
	learn_n(3 * MS, 20 * MS, 4); /* in a row: the load changed, all four learned */
	struct pn__plan p = plan_for(3 * MS, 10 * US, 0);
	if (p.kernel)
		return "four 20 ms wakeups did not make a 3 ms class spin-only";
	for (int i = 1; i <= 1024; i++) {
		p = plan_for(3 * MS, 10 * US, 0);
		if (p.kernel && p.deadline - p.target < 1 * MS) /* not an explore (half) */
			return NULL;
	}
	return "a spin-only class still spun after 1024 of its sleeps without a late wakeup";
}

/* A fine precision's margin in a class too young for a p99.9 is at least YOUNG_X (3) times its
 * p99, and no more than half the sleep; a wide one's is its quantile; a class with enough
 * samples for the p99.9 has it as margin. */
static void *young_extrapolates(void *arg)
{
	(void)arg;
	learn_n(1000, 20 * US, 40);
	learn_n(3 * MS, 40 * US, 100); /* p99 = p99.9: 40 us (its bucket: < 41 us) */
	struct pn__plan p = plan_for(3 * MS, 1 * US, 0);
	int64_t m = p.deadline - p.target - 1;
	if (m < 3 * 40 * US || m > 3 * MS / 2)
		return "a young class's fine margin is not 3x its p99";
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	if (st.class_margin_ns[11] != m)
		return "class_margin_ns is not the margin a young class's fine sleep uses";
	p = plan_for(3 * MS, 10 * US, 0);
	if (p.deadline - p.target - 1 > 41 * US)
		return "a young class's wide margin was extrapolated";
	learn_n(1 * MS, 20 * US, 100); /* a 1 ms class of 100 samples at 20 us */
	learn_n(1 * MS, 400 * US, 3);  /* ... and three late ones: 3x its p99 is over the sleep */
	p = plan_for(1 * MS, 1 * US, 0);
	if (!p.kernel || p.deadline - p.target - 1 > 1 * MS / 2)
		return "the raised margin made a young class spin-only (or took more than half)";
	learn_n(3 * MS, 40 * US, 3000);
	p = plan_for(3 * MS, 1 * US, 0);
	if (p.deadline - p.target - 1 > 41 * US)
		return "a class with 3000 samples still extrapolates its p99.9";
	pn_sleep_stats(&st);
	if (st.class_margin_ns[11] != p.deadline - p.target - 1)
		return "class_margin_ns is not the margin a fine sleep of the class uses";
	return NULL;
}

static void test_spin_only_keeps_learning(void **state)
{
	(void)state;
	in_fresh_thread(spin_only);
	in_fresh_thread(spin_only_forgets);
}

static void test_young_margin(void **state)
{
	(void)state;
	in_fresh_thread(young_extrapolates);
}

/* PN__PLAN_KEEP_SLACK: the kernel part runs with the plan's slack, and the thread's own
 * (read at each plan, so a prctl behind the library's back counts) comes back after. */
static void *keep_slack(void *arg)
{
	(void)arg;
	learn_n(1000, 20 * US, 40);
	learn_n(2 * MS, 30 * US, 64);
	int64_t mine[] = {50000, 4000000, 1};
	for (int i = 0; i < 3; i++) {
		if (syscall(SYS_prctl, PR_SET_TIMERSLACK, mine[i], 0L, 0L, 0L) != 0)
			return "prctl failed";
		for (int64_t prec = 1 * US; prec <= 1 * MS; prec *= 1000) {
			struct pn__plan p;
			plan_at(&p, 2 * MS, prec, PN__PLAN_KEEP_SLACK);
			if (!p.kernel)
				return "no kernel part";
			if (pn_slack_get() != p.slack)
				return "the kernel part does not run with the plan's slack";
			assert_int_equal(pn__kernel_raw.sleep_abs(CLOCK_MONOTONIC, p.target), 0);
			/* not learned: a loaded machine's wakeups would make the class spin */
			pn__plan_woke(&p, false);
			if (pn_slack_get() != mine[i])
				return "the thread's own slack did not come back after the kernel "
				       "part";
			assert_int_equal(pn__spin_finish(&p), 0);
			if (pn_now() < p.deadline)
				return "early";
		}
	}
	/* without the flag (pn_sleep_until), the slack chosen stays and is known */
	assert_int_equal(pn_sleep_for(2 * MS, 0), 0);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	if (st.slack_ns != 1 || pn_slack_get() != 1)
		return "pn_sleep_until did not leave slack 1 ns after a spinning sleep";
	return NULL;
}

static void test_keep_slack(void **state)
{
	(void)state;
	in_fresh_thread(keep_slack);
}

/* A first-sleep probe that takes the rest of the sleep (a loaded machine): the plan ends
 * there, and the slack the probe lowered goes back (the shim left 1 ns behind). */
static int slow_probe(void *ctx)
{
	int64_t until = *(const int64_t *)ctx;
	while (pn_now() < until)
		;
	return 0;
}

static void *probe_takes_all(void *arg)
{
	(void)arg;
	if (pn_slack_set(40000) != 0)
		return "prctl failed";
	int64_t deadline = pn_now() + 200 * US;
	struct pn__probe probe = {slow_probe, &deadline};
	struct pn__plan p;
	pn__plan_make(&p, CLOCK_MONOTONIC, deadline, 10 * US, PN__PLAN_KEEP_SLACK | PN__PLAN_EINTR,
	              &probe);
	if (p.stop || p.kernel)
		return "a plan whose probe took the whole sleep still waits";
	if (pn_slack_get() != 40000)
		return "the probe's slack stayed after the plan ended at its probe";
	pn__spin_finish(&p);
	return NULL;
}

static void test_probe_takes_all(void **state)
{
	(void)state;
	in_fresh_thread(probe_takes_all);
}

/* Spins that lose the CPU (a check that runs 300 us past the deadline stands for a slice
 * another task took): the class then waits in the kernel to the deadline, and still
 * spins now and then to see whether the CPU came back. */
static int run_past(void *ctx, const sigset_t *mask)
{
	(void)mask;
	int64_t until = *(const int64_t *)ctx + 300 * US;
	while (pn_now() < until)
		;
	return 0;
}

static void *spins_lose(void *arg)
{
	(void)arg;
	learn_n(2 * MS, 20 * US, 64);
	for (int i = 0; i < 8; i++) {
		struct pn__plan p;
		plan_at(&p, 2 * MS, US, 0);
		int64_t d = p.deadline;
		if (i == 0 && (!p.kernel || p.target >= d))
			return "a learned class did not spin before its spins lost";
		pn__plan_cancel(&p);
		pn__spin_checked(&p, run_past, &d, 0);
	}
	int kernel = 0, spun = 0;
	for (int i = 0; i < 32; i++) {
		struct pn__plan p;
		plan_at(&p, 2 * MS, US, 0);
		if (p.kernel && p.target == p.deadline && p.slack == 1)
			kernel++;
		else
			spun++;
		pn__plan_cancel(&p);
	}
	if (kernel < 24)
		return "a class whose spins lose the CPU still spins";
	if (spun == 0)
		return "a class whose spins lost never spins again to see";
	return NULL;
}

static void test_spins_lose(void **state)
{
	(void)state;
	in_fresh_thread(spins_lose);
}

/* At the default budget: a thread whose spins lose more of their time to stalls longer than
 * the kernel's p99 lateness than the p99 allows waits in the kernel alone (a spin cannot
 * lower its p99), spins now and then to go on watching, and says so in its mode. */
static void *spins_stalled(void *arg)
{
	(void)arg;
	learn_n(1000, 20 * US, 40);
	learn_n(2 * MS, 20 * US, 64);
	struct pn__plan p;
	plan_at(&p, 2 * MS, US, 0);
	pn__plan_cancel(&p);
	if (!p.kernel || p.target >= p.deadline)
		return "a learned class did not spin before its spins stalled";
	/* one stall of 2 ms in 40 ms of spins, 5%: one is no rate, the thread still spins */
	struct pn__spin_gaps g = {.watched = 40 * MS};
	pn__policy_gap(&g, 2 * MS);
	pn__state_learn_gaps(pn__state_get(), &g);
	for (int i = 0; i < 16; i++) {
		plan_at(&p, 2 * MS, US, 0);
		pn__plan_cancel(&p);
		if (!p.kernel || p.target >= p.deadline - 1)
			return "one stall in a thread's spins made it wait in the kernel alone";
	}
	/* three, 5% of 120 ms: the loss is a rate */
	for (int i = 0; i < 2; i++) {
		struct pn__spin_gaps more = {.watched = 40 * MS};
		pn__policy_gap(&more, 2 * MS);
		pn__state_learn_gaps(pn__state_get(), &more);
	}
	int kernel = 0, spun = 0;
	for (int i = 0; i < 64; i++) {
		plan_at(&p, 2 * MS, US, 0);
		pn__plan_cancel(&p);
		if (p.kernel && p.target >= p.deadline - 1 && p.slack == 1) /* a spin of 1 ns */
			kernel++;
		else
			spun++;
	}
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	if (kernel < 48)
		return "a thread whose spins stall as often as the kernel is late still spins";
	if (spun == 0)
		return "a thread whose spins stalled never spins again to see";
	if (st.mode != PN_SLEEP_MODE_LOST || st.mode_ppm <= 500000 || st.mode_ppm > 1000000)
		return "its mode is not lost";
	return NULL;
}

static void test_spins_stalled(void **state)
{
	(void)state;
	pthread_t t;
	void *failed;
	assert_int_equal(pthread_create(&t, NULL, spins_stalled, NULL), 0);
	assert_int_equal(pthread_join(t, &failed), 0);
	if (failed)
		fail_msg("%s", (const char *)failed);
	for (int m = 0; m < PN_SLEEP_MODES; m++)
		assert_string_not_equal(pn_sleep_mode_name(m), "?");
	assert_string_equal(pn_sleep_mode_name(-1), "?");
	assert_string_equal(pn_sleep_mode_name(PN_SLEEP_MODES), "?");
	assert_string_equal(pn_sleep_mode_name(PN_SLEEP_MODE_SHARED), "shared");
}

static volatile sig_atomic_t handled;
static void count_signal(int sig)
{
	(void)sig;
	handled++;
}

static void one_alarm(long us, void (*handler)(int))
{
	signal(SIGALRM, handler);
	struct itimerval it = {{0, 0}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A spin-only plan of len ns with the shim's flags. */
static struct pn__plan spin_plan(int64_t len)
{
	learn_n(1000, 20 * US, 40);
	learn_n(len, 10 * len, 64);
	struct pn__plan p;
	pn__plan_make(&p, CLOCK_MONOTONIC, pn_now() + len, 10 * US,
	              PN__PLAN_KEEP_SLACK | PN__PLAN_EINTR, NULL);
	return p;
}

/* The shim's spin: a handler that runs ends it with -EINTR before the deadline; an ignored
 * or blocked signal does not; the mask is as it was; pn__spin_finish resumes. */
static void *spin_signals(void *arg)
{
	(void)arg;
	sigset_t before, after, alrm;
	sigemptyset(&before);
	sigemptyset(&after);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &before);

	/* A handler that runs in the spin's last stretch (signals let in, no check left) ends
	 * the wait as it would a call that timed out: 0. On a loaded machine the thread can be
	 * off its CPU from the alarm until then (or until after the deadline, the alarm not yet
	 * due), so a spin that ends with 0 is tried again, its alarm cancelled (3 tries: a
	 * spin that never notices fails them all). */
	static const struct itimerval none;
	struct pn__plan p;
	int r = 0;
	for (int try = 0; try < 3 && r != -EINTR; try++) {
		p = spin_plan(30 * MS);
		if (p.kernel || p.stop)
			return "not a spin-only plan";
		handled = 0;
		one_alarm(2000, count_signal);
		r = pn__spin_signals(&p);
		setitimer(ITIMER_REAL, &none, NULL);
		if ((r == -EINTR && handled != 1) || (r != -EINTR && r != 0))
			return "a handled signal did not interrupt the spin";
	}
	if (r != -EINTR)
		return "a handled signal did not interrupt the spin (3 tries)";
	if (pn_now() >= p.deadline)
		return "the interrupted spin ran to its deadline";
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	for (int sig = 1; sig < SIGRTMAX; sig++)
		if (sigismember(&before, sig) != sigismember(&after, sig))
			return "the signal mask changed";

	p = spin_plan(20 * MS);
	one_alarm(2000, SIG_IGN);
	if (pn__spin_signals(&p) != 0 || pn_now() < p.deadline)
		return "an ignored signal ended the spin";

	p = spin_plan(20 * MS);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	handled = 0;
	one_alarm(2000, count_signal);
	if (pn__spin_signals(&p) != 0 || pn_now() < p.deadline || handled)
		return "a signal the thread blocks ended the spin";
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL); /* now it runs */
	if (handled != 1)
		return "the blocked signal was lost";

	p = spin_plan(20 * MS);
	one_alarm(2000, count_signal);
	if (pn__spin_finish(&p) != 0 || pn_now() < p.deadline)
		return "pn__spin_finish did not resume after a signal";
	signal(SIGALRM, SIG_DFL);
	return NULL;
}

static void test_spin_interrupted(void **state)
{
	(void)state;
	sigset_t alrm, old;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old); /* the process's SIGALRM goes to the worker */
	in_fresh_thread(spin_signals);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A signal handled during a fresh thread's latency probes ends the plan (the shim's
 * flag), or the probes resume (pn_sleep_until). Each thread's first plan probes. */
static void *probes_signalled(void *arg)
{
	(void)arg;
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	struct pn__plan p;
	pn__plan_make(&p, CLOCK_MONOTONIC, pn_now() + 200 * MS, 10 * US,
	              PN__PLAN_KEEP_SLACK | PN__PLAN_EINTR, NULL);
	pn__plan_cancel(&p);
	return p.stop == -EINTR ? (void *)1 : NULL;
}

static void *probes_resumed(void *arg)
{
	(void)arg;
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	int64_t d = pn_now() + 20 * MS;
	if (pn_sleep_until(d, 10 * US) != 0 || pn_now() < d)
		return (void *)1;
	return NULL;
}

static void test_probes_interrupted(void **state)
{
	(void)state;
	pn_skip_if_emulated("a SIGALRM every 100 us outruns qemu-user's signal delivery: the "
	                    "threads never finish");
	sigset_t alrm, old;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	assert_int_equal(alarms_start(100), 0);
	int intr = 0;
	for (int i = 0; i < 20; i++) {
		pthread_t t;
		void *r;
		assert_int_equal(pthread_create(&t, NULL, probes_signalled, NULL), 0);
		pthread_join(t, &r);
		intr += r != NULL;
		assert_int_equal(pthread_create(&t, NULL, probes_resumed, NULL), 0);
		pthread_join(t, &r);
		assert_null(r);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL); /* a pending one runs the handler */
	alarms_stop();
	/* a SIGALRM every 100 us lands in some of 20 threads' probes (8 sleeps each); the period
	 * leaves a thread that shares its CPU with hogs time to reach its probes (ITIMER_REAL
	 * rearms when its signal is taken: a shorter one fills the thread's slices) */
	assert_true(intr > 0);
}

/* A thread of its own, which has learned nothing yet: its statistics at each step (cmocka
 * asserts in the test's thread). */
struct learning {
	struct pn_sleep_stats fresh, first, reset, second, third;
	int64_t slack_after_first;
};

static void *learning_main(void *arg)
{
	struct learning *l = arg;
	pn_sleep_stats(&l->fresh);
	pn_sleep_for(20 * 1000 * 1000, 0);
	pn_sleep_stats(&l->first);
	l->slack_after_first = pn_slack_get();
	pn_sleep_stats_reset();
	pn_sleep_stats(&l->reset);
	pn_sleep_for(20 * 1000 * 1000, 0);
	pn_sleep_stats(&l->second);
	pn_slack_set(50000); /* behind the next sleep's back, which notices */
	pn_sleep_for(20 * 1000 * 1000, 0);
	pn_sleep_stats(&l->third);
	return NULL;
}

/* probes, slack_changes and class_margin_ns count what they say, and
 * pn_sleep_stats_reset zeroes the counters but keeps what the thread learned. */
static void test_stats_learning(void **state)
{
	(void)state;
	static struct learning l;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, learning_main, &l), 0);
	assert_int_equal(pthread_join(t, NULL), 0);

	assert_int_equal(l.fresh.probes, 0);
	assert_int_equal(l.fresh.slack_changes, 0);
	assert_int_equal(l.fresh.slack_ns, -1); /* untouched */
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		assert_int_equal(l.fresh.class_margin_ns[k] + (int64_t)l.fresh.class_samples[k], 0);

	/* the first sleep with room for them probes the wakeup latency at slack 1 ns: up
	 * to 8 of the shortest sleeps (and one more if the class then spins only), learned
	 * into class 0 (the 20 ms sleep is in a higher class however long the probes took:
	 * they stop well before the deadline) */
	const struct pn_sleep_stats *st = &l.first;
	assert_true(st->probes >= 1 && st->probes <= 9);
	assert_int_equal(st->class_samples[0], st->probes);
	assert_true(st->class_margin_ns[0] > 0);
	assert_true(st->slack_changes >= 1);
	assert_int_equal(st->slack_ns, l.slack_after_first);
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		assert_int_equal(st->class_margin_ns[k] > 0, st->class_samples[k] > 0);

	/* reset: counters zero, what was learned kept */
	st = &l.reset;
	assert_int_equal(st->sleeps + st->past + st->early + st->late + st->kernel_only, 0);
	assert_int_equal(st->slack_changes + st->probes, 0);
	assert_int_equal(st->slept_ns + st->spun_ns, 0);
	assert_int_equal(st->margin_ns, l.first.margin_ns);
	assert_int_equal(st->slack_ns, l.first.slack_ns);
	assert_memory_equal(st->class_margin_ns, l.first.class_margin_ns,
	                    sizeof(st->class_margin_ns));
	assert_memory_equal(st->class_samples, l.first.class_samples, sizeof(st->class_samples));

	/* learned, so no first-sleep probes again (at most the one of a class that spins
	 * only, on a machine slow enough); precision 0 needs slack 1 ns, which the probes
	 * left: no prctl either */
	st = &l.second;
	assert_int_equal(st->sleeps, 1);
	assert_true(st->probes <= 1);
	assert_int_equal(st->slack_changes, 0);
	/* after pn_slack_set: one prctl back to 1 ns if the sleep went to the kernel or
	 * probed */
	st = &l.third;
	assert_int_equal(st->sleeps, 2);
	assert_true(st->probes - l.second.probes <= 1);
	int touched = st->slept_ns > l.second.slept_ns || st->probes > l.second.probes;
	assert_int_equal(st->slack_changes, touched);
	assert_int_equal(st->slack_ns, touched ? 1 : 50000);
}

/* A clock stepped back between the kernel part's wakeup and the plan's read of it: the read
 * is below the plan's, and the spin gives the rest back at its first read (p->away) rather
 * than spin the second through. The step is the plan's read moved a second ahead, so no
 * clock of the machine is touched. */
static void test_woke_below_the_plan(void **state)
{
	(void)state;
	struct pn__plan p;
	plan_at(&p, 300 * MS, 10 * US, 0);
	assert_true(p.kernel);
	p.now = pn_now() + 1000 * MS; /* the clock read a second less since the plan */
	int64_t floor = p.now;
	pn__plan_woke(&p, true);
	assert_int_equal(p.now, floor); /* the floor stays the plan's read */
	assert_int_equal(pn__spin_finish(&p), 0);
	assert_true(p.away); /* without: a spin to the deadline, p.away false */
	pn__plan_cancel(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_past_and_invalid),
	        cmocka_unit_test(test_never_early_1e5),
	        cmocka_unit_test(test_never_early_under_signals),
	        cmocka_unit_test(test_threads),
	        cmocka_unit_test(test_stats_add_up),
	        cmocka_unit_test(test_slack_documented),
	        cmocka_unit_test(test_stall_never_spin_only),
	        cmocka_unit_test(test_spin_only_keeps_learning),
	        cmocka_unit_test(test_young_margin),
	        cmocka_unit_test(test_keep_slack),
	        cmocka_unit_test(test_probe_takes_all),
	        cmocka_unit_test(test_spins_lose),
	        cmocka_unit_test(test_spins_stalled),
	        cmocka_unit_test(test_spin_interrupted),
	        cmocka_unit_test(test_probes_interrupted),
	        cmocka_unit_test(test_stats_learning),
	        cmocka_unit_test(test_woke_below_the_plan),
	};
	return pn_run("sleep", tests, argc, argv);
}
