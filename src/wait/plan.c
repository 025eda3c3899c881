/* SPDX-License-Identifier: MIT */
/*
 * plan.c: the sleep plan the engine runs: the kernel part's target and slack from the
 * margin policy, the latency probes, and what a wakeup teaches. A new thread probes the
 * kernel's latency at its first sleep with room for it, the margin one tick until then. A
 * spin-only class would never learn that the load went down: it probes instead of
 * spinning that long, explores half in the kernel now and then, and ages its memory.
 * Per thread: lock-free, no allocation but one mmap, so the shim may call it where
 * nanosleep is async-signal-safe.
 */
#include <errno.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "kernel.h"
#include "wait/state.h"

#define PROBES     8
#define PROBE_ROOM 4 /* a probe needs this many times the worst wakeup seen */
/* A shortest kernel wait is reckoned this long before one is seen, so that the first probe
 * never starts where it cannot end in time. */
#define PROBE_WORST_MIN 10000
#define EXPLORE         1024  /* spin-only sleeps before a class tries the kernel again */
#define EXPLORE_CHEAP   16    /* when the probes say wakeups got cheap */
#define AGE_STEPS       4     /* a spin-only sleep ages its class by this many samples */
#define AGE_FLOOR       64.0f /* while it holds more than this many */

/* Sets the slack for p's kernel part: with PN__PLAN_KEEP_SLACK, from the thread's own (read
 * every time) kept in p->restore; otherwise kept, a prctl skipped when already set. */
static void set_slack(struct pn__state *t, struct pn__plan *p, int64_t ns)
{
	if (t->sched.lent) {
		p->slack = 0;
		return;
	}
	if (p->flags & PN__PLAN_KEEP_SLACK) {
		if (p->restore < 0) {
			int64_t cur = pn_slack_get();
			p->slack = cur;
			if (cur == ns)
				return;
		} else if (p->slack == ns) {
			return;
		}
		if (pn__slack_put(ns) == 0) {
			t->st.slack_changes++;
			if (p->restore < 0)
				p->restore = p->slack;
			p->slack = ns;
		}
		return;
	}
	if (pn__slack_known() != ns && pn_slack_set(ns) == 0)
		t->st.slack_changes++;
	p->slack = pn__slack_known() > 0 ? pn__slack_known() : ns;
}

void pn__plan_cancel(struct pn__plan *p)
{
	if (p->restore < 0)
		return;
	pn__slack_put(p->restore);
	struct pn__state *t = pn__state_get();
	if (t)
		t->st.slack_changes++;
	p->restore = -1;
}

/* One shortest kernel wait, learned into class 0, if it leaves PROBE_ROOM times *worst
 * before the deadline: 1 if it waited, 0 if not, -1 when the plan must end (p->stop). */
static int probe_once(struct pn__state *t, struct pn__plan *p, int64_t deadline, int64_t *worst)
{
	int64_t now = pn_now();
	if (deadline - now < PROBE_ROOM * *worst || pn__kernel_denied())
		return 0;
	set_slack(t, p, 1);
	int r = p->probe ? p->probe->wait(p->probe->ctx) : pn__kernel_probe();
	/* interrupted and resuming: no more probes (a signal storm could meet every retry) */
	if (r == -EINTR && !(p->flags & PN__PLAN_EINTR))
		return 0;
	/* a plain probe's failure is never the caller's result */
	if (r < 0 && r != -EINTR && !p->probe)
		return 0;
	if (r != 0) {
		p->stop = r;
		return -1;
	}
	int64_t late = pn_now() - (now + 1) - p->slack;
	pn__state_learn_probe(t, late);
	if (late > *worst)
		*worst = late;
	return 1;
}

/* The shortest kernel waits while they leave room: -1 when the plan must end. */
static int probe_all(struct pn__state *t, struct pn__plan *p, int64_t deadline)
{
	int64_t worst = PROBE_WORST_MIN;
	for (int i = 0, r; i < PROBES; i++)
		if ((r = probe_once(t, p, deadline, &worst)) <= 0)
			return r;
	return 0;
}

/* A spin-only class (margin >= len; a lower bar would leave a class spinning whole sleeps
 * for thousands of them): one probe instead of that spin, and whether to explore. No probe
 * under PN_SLEEP_BUDGET_FULL: its tail costs the p99 (docs/DESIGN.md). */
static bool spin_only_learn(struct pn__state *t, struct pn__plan *p, int k, int64_t len)
{
	struct pn__sleep_class *c = &t->cls[k], *c0 = &t->cls[0]; /* class 0: the probes */
	double level = pn__policy_level(0);
	int64_t worst = c0->wake.n ? pn__policy_quantile(c0, level) : 0;
	if (worst < PROBE_WORST_MIN)
		worst = PROBE_WORST_MIN;
	if (t->st.budget_ppm != PN_SLEEP_BUDGET_FULL &&
	    probe_once(t, p, pn_now() + len, &worst) < 0)
		return false;
	int64_t q0 = c0->wake.n ? pn__policy_quantile(c0, level) : 0;
	bool cheap = q0 > 0 && 2 * q0 <= len / 4;
	if (++c->spins >= EXPLORE || (cheap && c->spins >= EXPLORE_CHEAP)) {
		c->spins = 0;
		return true;
	}
	pn__decay_hist_age(&c->wake, AGE_STEPS, AGE_FLOOR);
	return false;
}

/* A thread whose spins lose LOSS_SPIN_RATE of their time to stalls longer than the
 * kernel's p99 lateness cannot lower the p99 by spinning: the kernel alone, a spin every
 * LOSS_EXPLORE-th wait to watch. The share must rest on LOSS_MIN_STALLS stalls
 * (docs/DESIGN.md, "One stall is no rate"). */
#define LOSS_SPIN_RATE  0.01
#define LOSS_MIN_STALLS 2.5
#define LOSS_EXPLORE    16

/* Why a wait that would spin waits in the kernel alone (a PN_SLEEP_MODE_*), or 0. */
static int kernel_alone(struct pn__state *t, int64_t precision, int64_t kernel_q)
{
	double loss = pn__policy_loss_share(&t->loss, kernel_q - precision);
	if (loss >= LOSS_SPIN_RATE &&
	    pn__policy_loss_stalls(&t->loss, kernel_q - precision) >= LOSS_MIN_STALLS &&
	    ++t->explore % LOSS_EXPLORE != 0)
		return PN_SLEEP_MODE_LOST;
	return 0;
}

/* The mode of a wait with this margin; never kernel_alone's under
 * PN_SLEEP_BUDGET_FULL or SCHED_FIFO. */
static int spin_mode(struct pn__state *t, int64_t margin, int64_t len, int64_t precision,
                     int64_t kernel_q)
{
	int alone = margin && t->st.budget_ppm != PN_SLEEP_BUDGET_FULL && !t->rt.prio
	                    ? kernel_alone(t, precision, kernel_q)
	                    : 0;
	return alone ? alone : margin >= len ? PN_SLEEP_MODE_SPIN_ALL : PN_SLEEP_MODE_SPIN;
}

/* The margin for a wait in class k within t's budget. True where the CPU is shared and
 * the wait does not spin: the margin is not priced (nor with PN__PLAN_ROUNDED). */
static bool choose(struct pn__state *t, int k, int64_t len, int64_t precision, int flags,
                   struct pn__policy_choice *c)
{
	bool rounded = flags & PN__PLAN_ROUNDED;
	int32_t budget_ppm = pn__state_budget(t);
	bool shared =
	        budget_ppm != PN_SLEEP_BUDGET_FULL && !t->rt.prio && pn__slice_shared(&t->slice);
	struct pn__policy_ask a = {.len = len,
	                           .precision = precision,
	                           .budget_ppm = budget_ppm,
	                           .budget_room_ns = INT64_MAX,
	                           .overhead = t->overhead,
	                           .loss = pn__policy_loss_share(&t->loss, precision),
	                           .unpriced = shared || rounded};
	if (budget_ppm != PN_SLEEP_BUDGET_AUTO && budget_ppm != PN_SLEEP_BUDGET_FULL) {
		int64_t used_ns = pn__state_window_used(t, pn_now());
		int64_t window_ns =
		        (int64_t)((double)budget_ppm * 1e-6 * (double)PN_SLEEP_WINDOW_NS);
		a.budget_room_ns = window_ns > used_ns ? window_ns - used_ns : 0;
	}
	pn__policy_choose(t->cls, k, &a, c);
	if (rounded)
		c->margin = 0;
	t->st.budget_ppm = budget_ppm;
	t->st.spend_ppm = c->spend_ppm;
	t->st.spin_loss_ppm = (int32_t)(a.loss * 1e6);
	return shared;
}

void pn__plan_make(struct pn__plan *p, clockid_t clk, int64_t deadline, int64_t precision,
                   int flags, const struct pn__probe *probe)
{
	struct pn__state *t = pn__state_make();
	if (t)
		pn__state_settle(t);
	int64_t now = pn__clock_now(clk);
	*p = (struct pn__plan){.clk = clk,
	                       .flags = flags,
	                       .deadline = deadline,
	                       .precision = precision,
	                       .restore = -1,
	                       .probe = probe};
	if (now >= deadline) {
		if (t)
			pn__state_past(t);
		p->past = true;
		return;
	}
	if (PN_UNLIKELY(!t)) {
		p->start = p->now = now;
		p->target = deadline;
		p->kernel = true;
		return;
	}
	p->cpu0 = pn__state_begin(t, now);
	if (PN_UNLIKELY(!pn__policy_learned_any(t->cls))) {
		/* the probes sleep on MONOTONIC */
		if (probe_all(t, p, pn_now() + (deadline - now)) < 0) {
			pn__plan_cancel(p);
			return;
		}
		now = pn__clock_now(clk);
	}
	int k = pn__policy_class(deadline - now);
	struct pn__policy_choice c;
	bool shared = choose(t, k, deadline - now, precision, flags, &c);
	int64_t kernel_q = c.kernel_q, margin = c.margin;
	if (!shared && margin >= deadline - now && spin_only_learn(t, p, k, deadline - now))
		margin = (deadline - now) / 2;
	int64_t planned = margin; /* what the budget's cut is counted against */
	int mode = shared ? PN_SLEEP_MODE_SHARED
	                  : spin_mode(t, margin, deadline - now, precision, kernel_q);
	if (mode != PN_SLEEP_MODE_SPIN && mode != PN_SLEEP_MODE_SPIN_ALL) {
		margin = 0;
		planned = c.wanted; /* not the budget's cut */
	}
	if (p->stop) {
		pn__plan_cancel(p);
		return;
	}
	now = pn__clock_now(clk);
	if (now >= deadline) {
		pn__plan_cancel(p);
		p->k = k;
		p->start = p->now = p->target = now;
		return;
	}
	int64_t slack, lead;
	bool lost = pn__policy_lost(&t->cls[k]);
	pn__policy_kernel(lost, precision, kernel_q, margin, deadline - now, &slack, &lead);
	mode = precision > kernel_q         ? PN_SLEEP_MODE_KERNEL
	       : mode != PN_SLEEP_MODE_SPIN ? mode
	       : lost                       ? PN_SLEEP_MODE_LOST
	       : !margin                    ? PN_SLEEP_MODE_CHEAP
	                                    : mode;
	t->st.shared_waits += mode == PN_SLEEP_MODE_SHARED;
	p->shared = pn__slice_shared(&t->slice);
	pn__state_mode(t, mode);
	t->st.margin_ns = margin;
	p->budget_cut_ns = c.wanted > planned ? c.wanted - planned : 0;
	p->target = deadline - lead;
	p->k = k;
	p->start = p->now = now;
	p->kernel = p->target > now;
	if (p->kernel)
		set_slack(t, p, slack);
	else
		pn__plan_cancel(p);
}

void pn__plan_woke(struct pn__plan *p, bool learn)
{
	struct pn__state *t = pn__state_get();
	int64_t woke = pn__clock_now(p->clk);
	pn__plan_cancel(p);
	/* a clock stepped back since the wakeup: p->now stays the spin's floor, and the wakeup
	 * teaches nothing */
	if (PN_UNLIKELY(woke < p->now))
		return;
	p->now = woke;
	if (PN_UNLIKELY(!t))
		return;
	t->st.slept_ns += woke - p->start;
	t->kwake[pn__decay_hist_bucket_of(woke > p->target ? woke - p->target : 0)]++;
	if (p->cpu0)
		pn__state_overhead(t, p->cpu0);
	/* late where the margin the budget cut would have covered it */
	if (p->budget_cut_ns && woke - p->deadline > p->precision &&
	    woke - p->budget_cut_ns - p->deadline <= p->precision)
		t->st.late_budget++;
	if (learn)
		pn__state_learn_wake(t, p->k, woke - p->target - p->slack, p->deadline - p->start);
}

void pn__plan_learn(int64_t len, int64_t late)
{
	struct pn__state *t = pn__state_make();
	if (t)
		pn__state_learn_wake(t, pn__policy_class(len), late, len);
}
