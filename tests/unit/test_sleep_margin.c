/* SPDX-License-Identifier: MIT */
/*
 * test_sleep_margin.c: the margin policy (src/wait/policy.c) as the pure function it is,
 * driven with synthetic histories: a heavy tail, a bimodal one, a stall, a host that steals
 * spins. Asserts the margin it chooses under each budget: the knee leaves a costly tail
 * alone and takes a cheap mode; a budget's expected cost stays within it and grows with it;
 * a budget of 0 never spins; precision at any cost covers the quantile; the precision the
 * caller allows is not bought; no margin buys lateness that the spins' own loss says a spin
 * cannot remove; and, simulated wait by wait through the thread state's window, no window
 * of PN_SLEEP_WINDOW_NS holds more than the budget's CPU, even when the wakeups turn out
 * quicker than learned and every wait spins more than the policy expected; a young class
 * plans with its own wakeups where they are later than its neighbour's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wait/state.h"
#include "splitmix.h"

#define US 1000LL
#define MS 1000000LL
#define K  10 /* the class of 1 ms sleeps: [1024, 2048) us */

static struct pn__sleep_class cls[PN_SLEEP_CLASSES];

/* Class k learns n wakeups late by late ns (pn__decay_hist_add: no stall rule). */
static void learn(int k, int64_t late, int n)
{
	for (int i = 0; i < n; i++)
		pn__decay_hist_add(&cls[k].wake, late);
}

static void reset(void)
{
	memset(cls, 0, sizeof(cls));
}

static struct pn__policy_choice choose(int64_t len, int64_t precision, int32_t budget,
                                       int64_t overhead, double loss)
{
	struct pn__policy_ask a = {.len = len,
	                           .precision = precision,
	                           .budget_ppm = budget,
	                           .budget_room_ns = INT64_MAX,
	                           .overhead = overhead,
	                           .loss = loss};
	struct pn__policy_choice c;
	pn__policy_choose(cls, pn__policy_class(len), &a, &c);
	return c;
}

/* 99% of wakeups at 50 us, 1% at 2 ms: the tail costs a whole sleep to cover. */
static void heavy_tail(void **state)
{
	(void)state;
	reset();
	for (int i = 0; i < 40; i++) {
		learn(K, 50 * US, 99);
		learn(K, 2 * MS, 1);
	}
	struct pn__policy_choice c = choose(1 * MS, 1 * US, PN_SLEEP_BUDGET_AUTO, 0, 0);
	assert_true(c.margin >= 50 * US);   /* the mode is cheap: covered */
	assert_true(c.margin < 200 * US);   /* the tail is not worth its CPU */
	assert_true(c.wanted >= 2 * MS);    /* what the quantile alone asks */
	assert_true(c.spend_ppm <= 250000); /* the cap at 1 ms and more */
	/* precision at any cost covers the tail */
	c = choose(1 * MS, 1 * US, PN_SLEEP_BUDGET_FULL, 0, 0);
	assert_true(c.margin >= 2 * MS);
	assert_int_equal(c.wanted, c.margin);
}

/* Half at 20 us, half at 400 us: covering the second mode buys half the waits for a fifth
 * of the CPU: the knee takes it. */
static void bimodal(void **state)
{
	(void)state;
	reset();
	for (int i = 0; i < 40; i++) {
		learn(K, 20 * US, 50);
		learn(K, 400 * US, 50);
	}
	struct pn__policy_choice c = choose(1 * MS, 1 * US, PN_SLEEP_BUDGET_AUTO, 0, 0);
	assert_true(c.margin >= 400 * US);
	/* a 10% budget cannot: its expected cost stays within it */
	c = choose(1 * MS, 1 * US, 100000, 0, 0);
	assert_true(c.margin < 400 * US);
	assert_true(c.spend_ppm <= 100000);
	assert_true(c.spend_ppm >= 90000); /* and it uses what it has */
}

/* Budgets: the cost stays within each, the margin grows with it, 0 never spins, the
 * overhead of a wait counts against it. */
static void budgets(void **state)
{
	(void)state;
	reset();
	uint64_t seed = 42;
	for (int i = 0; i < 4000; i++) /* 30-130 us, a tail to 1.3 ms */
		learn(K, 30 * US + (int64_t)(pn__splitmix64(&seed) % (i % 50 ? 100 : 1300)) * US,
		      1);
	int64_t last = -1;
	for (int32_t b = 0; b <= 500000; b += 50000) {
		struct pn__policy_choice c = choose(1 * MS, 1 * US, b, 0, 0);
		assert_true(c.spend_ppm <= b);
		assert_true(c.margin >= last);
		assert_true(c.margin <= c.wanted);
		last = c.margin;
	}
	assert_int_equal(choose(1 * MS, 1 * US, 0, 0, 0).margin, 0);
	/* a wait's own CPU counts: 100 us of overhead leaves a 10% budget nothing to spin on
	 * the learned wakeups: its margin stays below all of them */
	assert_true(choose(1 * MS, 1 * US, 100000, 100 * US, 0).margin < 30 * US);
	struct pn__policy_choice a = choose(1 * MS, 1 * US, 200000, 0, 0),
	                         b = choose(1 * MS, 1 * US, 200000, 50 * US, 0);
	assert_true(b.margin < a.margin);
	assert_true(b.spend_ppm <= 200000);
}

/* The precision the caller allows is not bought with spin. */
static void precision_allowed(void **state)
{
	(void)state;
	reset();
	learn(K, 100 * US, 4000);
	struct pn__policy_choice fine = choose(1 * MS, 1 * US, 500000, 0, 0),
	                         wide = choose(1 * MS, 60 * US, 500000, 0, 0);
	assert_true(fine.margin >= 100 * US);
	assert_true(wide.margin <= fine.margin - 50 * US);
	assert_true(wide.margin + 60 * US >= 100 * US); /* still covers the wakeups */
}

/* A host that takes the CPU from spins 2% of their time: a margin covers the wakeups no
 * further than their p98, since beyond it a spin is as likely to be late as the kernel. */
static void stolen_spins(void **state)
{
	(void)state;
	reset();
	for (int i = 0; i < 40; i++) {
		learn(K, 50 * US, 97);
		learn(K, 600 * US, 3); /* 3%: above 1 - 2% */
	}
	for (int i = 0; i < 40; i++) {
		learn(K, 50 * US, 99);
		learn(K, 600 * US, 1); /* now 2% in all */
	}
	struct pn__policy_choice steady = choose(1 * MS, 1 * US, PN_SLEEP_BUDGET_FULL, 0, 0);
	assert_true(steady.margin >= 600 * US); /* precision at any cost: the p99.9 */
	struct pn__policy_choice c = choose(1 * MS, 1 * US, 900000, 0, 0.05);
	assert_true(c.wanted < 600 * US); /* no lateness bought that a spin cannot remove */
	c = choose(1 * MS, 1 * US, 900000, 0, 0);
	assert_true(c.wanted >= 600 * US); /* without the loss, the tail is wanted */
	/* the loss from the spins' gaps: 4% of the watched time in stalls of 1 ms, less the
	 * spin that lost the most: 3% */
	struct pn__spin_loss loss = {0};
	for (int i = 0; i < 100; i++) {
		struct pn__spin_gaps g = {.watched = 1 * MS};
		if (i % 25 == 0)
			pn__policy_gap(&g, 1 * MS);
		pn__policy_loss_add(&loss, &g);
	}
	double f = pn__policy_loss_share(&loss, 1 * US);
	assert_true(f > 0.025 && f < 0.035);
	assert_true(pn__policy_loss_share(&loss, 2 * MS) == 0); /* no stall that long */
	/* the stalls counted, decayed as the share: four below 1 ms, none beyond it */
	double n = pn__policy_loss_stalls(&loss, 1 * US);
	assert_true(n > 3.5 && n <= 4.0);
	assert_true(pn__policy_loss_stalls(&loss, 2 * MS) == 0);
	/* one stall is no rate, however long: 20 ms in 80 ms of spins */
	struct pn__spin_loss one = {0};
	for (int i = 0; i < 80; i++) {
		struct pn__spin_gaps g = {.watched = 1 * MS};
		if (i == 40)
			pn__policy_gap(&g, 20 * MS);
		pn__policy_loss_add(&loss, &g);
		pn__policy_loss_add(&one, &g);
	}
	assert_true(pn__policy_loss_share(&one, 1 * US) == 0);
	assert_true(pn__policy_loss_share(&loss, 1 * US) < 0.04); /* the 1 ms ones' */
	struct pn__spin_loss none = {0};
	assert_true(pn__policy_loss_share(&none, 1 * US) == 0);
	assert_true(pn__policy_loss_stalls(&none, 1 * US) == 0);
}

/* One stall never becomes the margin (the quantiles' guard), under any budget. */
static void one_stall(void **state)
{
	(void)state;
	reset();
	learn(K, 40 * US, 3000);
	learn(K, 50 * MS, 1);
	for (int32_t b = PN_SLEEP_BUDGET_AUTO; b <= PN_SLEEP_BUDGET_FULL; b += b < 0 ? 1 : 250000)
		assert_true(choose(1 * MS, 1 * US, b, 0, 0).margin < 1 * MS);
}

/* A young class whose own few wakeups are later than its neighbour's plans its spin over
 * its own: the probes' class (1 ns waits) wakes 15 us late, the 10 ms class's first 8
 * wakeups 60-110 us late; over the probes' wakeups the knee stopped at 16 us and every one
 * of those sleeps was late. A young class as quick as its neighbour keeps the neighbour's. */
static void young_class_own(void **state)
{
	(void)state;
	reset();
	learn(0, 15 * US, 64);
	const int k10 = pn__policy_class(10 * MS);
	for (int i = 0; i < 8; i++)
		learn(k10, 60 * US + i * 7 * US, 1);
	struct pn__policy_choice c = choose(10 * MS, 1 * US, PN_SLEEP_BUDGET_AUTO, 0, 0);
	assert_true(c.margin >= 100 * US);
	assert_true(c.margin <= c.wanted);
	assert_true(c.spend_ppm <= 250000);
	reset();
	learn(0, 40 * US, 64);
	learn(k10, 10 * US, 8);
	c = choose(10 * MS, 1 * US, PN_SLEEP_BUDGET_AUTO, 0, 0);
	assert_true(c.margin + 1 * US >= 40 * US); /* the neighbour's later wakeups count */
}

/* Wait by wait through a thread state's window: no window holds more than the budget's
 * CPU (plus one wait's worth, the spin a margin allowed beyond its expectation). */
static void window_holds(void **state)
{
	(void)state;
	struct pn__state *t = pn__state_new();
	assert_non_null(t);
	uint64_t seed = 7;
	for (int i = 0; i < 400; i++)
		pn__decay_hist_add(&t->cls[K].wake,
		                   20 * US + (int64_t)(pn__splitmix64(&seed) % 80) * US);
	t->overhead = 5 * US;
	const int32_t budget = 100000;
	const int64_t window = budget * PN_SLEEP_WINDOW_NS / 1000000;
	int64_t now = 1000 * MS, worst = 0;
	for (int i = 0; i < 20000; i++) {
		int64_t len = 1 * MS;
		int64_t used = pn__state_window_used(t, now);
		struct pn__policy_ask a = {.len = len,
		                           .precision = 1 * US,
		                           .budget_ppm = budget,
		                           .budget_room_ns = window > used ? window - used : 0,
		                           .overhead = t->overhead};
		struct pn__policy_choice c;
		pn__policy_choose(t->cls, pn__policy_class(len), &a, &c);
		/* the host got quicker than the thread learned: every wait spins its whole
		 * margin, more than the policy expected, and the window must hold it */
		int64_t late = (int64_t)(pn__splitmix64(&seed) % 5) * US;
		if (i % 97 == 0)
			late = 5 * MS; /* now and then a stall */
		int64_t woke = now + len - c.margin + late, deadline = now + len;
		struct pn__sleep_end e = {.deadline = deadline,
		                          .precision = 1 * US,
		                          .spin_start = woke < deadline ? woke : deadline,
		                          .end = woke > deadline ? woke : deadline,
		                          .k = pn__policy_class(len)};
		pn__state_count(t, &e);
		now = e.end;
		int64_t u = pn__state_window_used(t, now);
		worst = u > worst ? u : worst;
	}
	assert_true(worst <= window + 1 * MS + t->overhead);
	assert_true(worst >= window * 9 / 10); /* the window was what held it */
	pn__state_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(heavy_tail),   cmocka_unit_test(bimodal),
	        cmocka_unit_test(budgets),      cmocka_unit_test(precision_allowed),
	        cmocka_unit_test(stolen_spins), cmocka_unit_test(one_stall),
	        cmocka_unit_test(window_holds), cmocka_unit_test(young_class_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
