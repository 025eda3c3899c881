/* SPDX-License-Identifier: MIT */
/*
 * wait.c: pn__wait, the one driver of the sleep plan for every precise wait of the library
 * and the shim: the plan, the waiter's kernel part, woke or cancel, and the spin to the
 * deadline, never before it; a spin that gives the rest back leaves it to the waiter's
 * own kernel wait.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include "sched/sched.h"
#include "wait/state.h"
#include "wait/wait.h"

/* A wait on fds until target on CLOCK_MONOTONIC: its relative timeout, from now. */
static int fds_until(struct pn__waiter *w, int64_t target)
{
	int64_t left = target - pn_now();
	struct timespec ts = pn__ns_ts(left > 0 ? left : 0);
	return w->wait(w, &ts, w->mask);
}

/* The kernel part until target; an EINTR the lend's bound alone caused goes on, as the
 * program's call would have. */
static int until(struct pn__waiter *w, clockid_t clk, int64_t target)
{
	int r;
	unsigned ours, theirs;
	do {
		ours = pn__sched_sig_ours;
		theirs = pn__sched_sig_theirs;
		r = w->wait ? fds_until(w, target) : w->until(w, clk, target);
	} while (r == -EINTR && (w->resume || pn__sched_interrupted_by_us(ours, theirs)));
	return r;
}

/* A shared thread's kernel part: a long one waits under its own scheduling until
 * PN__SCHED_LAST_NS before its target (an outside change meanwhile is read, not undone),
 * the rest under the lend. */
static int kernel_part(struct pn__waiter *w, struct pn__plan *p, struct pn__state *t,
                       int64_t target)
{
	if (t && p->kernel && p->shared && (w->wait || w->kind == PN__WAIT_SLEEP) &&
	    target - pn__clock_now(p->clk) > 2 * PN__SCHED_LAST_NS) {
		pn__sched_lend_end(&t->sched);
		int r = until(w, p->clk, target - PN__SCHED_LAST_NS);
		if (r != 0)
			return r;
		int64_t now = pn_slack_get(); /* a slack set from outside meanwhile stands */
		if ((p->flags & PN__PLAN_KEEP_SLACK) && now != p->slack) {
			p->restore = now;
			if (p->slack > 0)
				pn__slack_put(p->slack);
		}
	}
	if (t && p->kernel)
		pn__sched_wait_begin(&t->sched, &t->rt, &t->slice, p->shared, p->slack,
		                     p->restore >= 0 ? p->restore : p->slack);
	int r = until(w, p->clk, target);
	if (t)
		pn__sched_wait_end(&t->sched, pn_now());
	return r;
}

static int probe_fds(void *ctx)
{
	struct pn__waiter *w = ctx;
	struct timespec one = {0, 1};
	return w->wait(w, &one, w->mask);
}

/* The spin's look at the fds with signals blocked, and at the signals the wait's mask
 * allows: at once where the wait restarts for a signal without a handler (ppoll); at the
 * fds alone where it would say EINTR for any pending signal (epoll_pwait), the kernel
 * table's signal look letting them in. */
static int look_fds(void *ctx, const sigset_t *thread_mask)
{
	struct pn__waiter *w = ctx;
	struct timespec zero = {0, 0};
	const sigset_t *mask = thread_mask;
	sigset_t own;
	if (w->mask) { /* the call's, less the lend's bound, as the spin's own */
		own = *w->mask;
		if (pn__sched_lend_signal)
			sigaddset(&own, pn__sched_lend_signal);
		mask = &own;
	}
	if (w->look)
		return w->look(w, mask);
	if (!w->eintr_any)
		return w->wait(w, &zero, mask);
	int r = w->wait(w, &zero, NULL);
	return r ? r : pn__kernel_signals(mask);
}

/* The spin, as the waiter looks. A wait on fds that could not take its last look looks
 * once more, late anyway. */
static int spin(struct pn__waiter *w, struct pn__plan *p)
{
	if (w->wait) {
		int r = pn__spin_checked(p, look_fds, w, 0);
		struct timespec zero = {0, 0};
		if (r == 0 && !p->looked && !p->away)
			r = w->look ? w->look(w, w->mask) : w->wait(w, &zero, w->mask);
		return r;
	}
	if (w->sigcheck)
		return pn__spin_checked(p, NULL, NULL, w->sigcheck);
	return pn__spin_finish(p);
}

/* The rest of a wait whose spin gave it back: the waiter's own kernel wait to p's
 * deadline, as the program's call would have made it. */
static int rest(struct pn__waiter *w, struct pn__plan *p)
{
	p->away = false;
	int r;
	/* a timeout the kernel rounded down to the ms ends early: again */
	while ((r = until(w, p->clk, p->deadline)) == 0 && pn__clock_now(p->clk) < p->deadline)
		;
	if (r < 0 && w->resume) /* a library sleep never fails: to the deadline by the clock */
		while (pn__clock_now(p->clk) < p->deadline)
			pn__arch_relax();
	return r < 0 && w->resume ? 0 : r;
}

/* After the kernel part: the spin, with what the waiter lets go of let go. */
static int finish(struct pn__waiter *w, struct pn__plan *p)
{
	int r;
	if (w->release && pn__clock_now(p->clk) >= p->deadline)
		return pn__spin_finish(p); /* nothing to spin: the mutex stays */
	if (w->release && (r = w->release(w)) != 0)
		return r;
	r = spin(w, p);
	if (w->reacquire) {
		int e = w->reacquire(w);
		r = e ? e : r;
	}
	if (r == 0 && p->away)
		r = rest(w, p);
	return r;
}

/* The wait after its plan. n0: the thread's nested count at the plan. */
static int run(struct pn__waiter *w, struct pn__plan *p, unsigned n0)
{
	int *errp = &errno, e = *errp, r; /* found now, not after the deadline */
	p->warm[0] = w->ret[0];
	p->warm[1] = w->ret[1];
	p->warm[2] = __builtin_return_address(0);
	struct pn__state *t = pn__state_get();
	if (t && !p->past && !p->stop) { /* before the wait: the wakeup is what they serve */
		pn__rt_apply(&t->rt);
		/* budget 100%: its margin is not the runs' */
		pn__slice_sample(&t->slice, p->deadline - p->start,
		                 t->st.budget_ppm != PN_SLEEP_BUDGET_FULL);
	}
	if (p->stop) {
		r = p->stop;
	} else if (p->past) {
		r = w->wait || w->past_once ? until(w, p->clk, p->deadline) : 0;
	} else if (p->kernel || w->kernel_first) {
		r = kernel_part(w, p, t, p->kernel ? p->target : p->start);
		if (r < 0 && w->resume) { /* a library sleep never fails: a denied kernel part
			                   * leaves the spin the whole of it */
			pn__plan_cancel(p);
			r = finish(w, p);
		} else if (r != 0) {
			pn__plan_cancel(p);
		} else {
			if (p->kernel)
				pn__plan_woke(p, !w->nested || *w->nested == n0);
			r = finish(w, p);
		}
	} else {
		r = finish(w, p);
	}
	*errp = e;
	return r;
}

/* Whether t's waits are compared with the program's own way: shared, without real time,
 * and no slice asked for (a caller's explicit slice is its choice, not the default's).
 * PUNCTUAL_RT's real time is taken first: a thread asked to be real-time is never
 * compared, even when its first wait finds its CPU shared. */
static bool comparing(struct pn__state *t)
{
	if (t)
		pn__rt_apply(&t->rt);
	return t && !t->rt.prio && pn__slice_shared(&t->slice) &&
	       (pn__sched_wait_fifo() < 0 || t->rt.fifo_off) && !pn__slice_wanted(&t->slice);
}

/* The comparison's pick for the wait until deadline: the one made before it by
 * pn__wait_alone, else a new one. */
static int pick(struct pn__arms *a, int64_t deadline)
{
	int arm = a->ahead && a->ahead_for == deadline ? a->ahead - 1 : pn__arms_pick(a);
	a->ahead = 0;
	return arm;
}

/* Before the program's own call: no lend under it, and the runs read as for any wait. */
static void alone_begin(struct pn__state *t, int calling, int64_t room)
{
	if (t->sched.under)
		pn__sched_lend_end(&t->sched);
	pn__slice_sample(&t->slice, room, true);
	t->arms.calling = (int8_t)calling;
}

/* After it: a compared wait's lateness for the comparison, and the wait counted. Whether
 * it was late. */
static bool alone_end(struct pn__state *t, int64_t call, int64_t deadline, int64_t end,
                      bool timed_out)
{
	int calling = t->arms.calling;
	t->arms.calling = 0;
	if (calling == PN__ALONE_COMPARED && timed_out)
		pn__arms_learn(&t->arms, PN__ARM_ALONE, end - deadline);
	else if (calling == PN__ALONE_ROUNDED)
		t->arms.rounded++;
	return pn__state_observed(t, call, deadline, end, timed_out);
}

/* The wait as the program would make it alone, through the waiter. */
static int wait_alone(struct pn__state *t, struct pn__waiter *w, clockid_t clk, int64_t deadline)
{
	int64_t call = pn__clock_now(clk);
	alone_begin(t, PN__ALONE_COMPARED, deadline - call);
	int r = until(w, clk, deadline);
	int64_t end = pn__clock_now(clk);
	if (r >= 0)
		alone_end(t, call, deadline, end, r == 0);
	else
		t->arms.calling = 0; /* a failed call: nothing to count */
	return r;
}

bool pn__wait_alone(clockid_t clk, int64_t deadline, bool rounded)
{
	int e = errno;
	struct pn__state *t = pn__state_get();
	bool own = false;
	if (comparing(t)) {
		int arm = rounded ? PN__ARM_ALONE : pick(&t->arms, deadline);
		int64_t room = deadline - pn__clock_now(clk);
		own = arm == PN__ARM_ALONE && room > 0;
		if (own) {
			alone_begin(t, rounded ? PN__ALONE_ROUNDED : PN__ALONE_COMPARED, room);
		} else if (!rounded) {
			t->arms.ahead = (int8_t)(arm + 1);
			t->arms.ahead_for = deadline;
		}
	}
	errno = e;
	return own;
}

/* After a wait of the plan's way: its lateness for the comparison (none where the caller
 * still spins a tail, or an event ended it). */
static void learn_plan(struct pn__state *t, int arm, struct pn__plan *p, int r)
{
	if (arm == PN__ARM_PLAN && r == 0 && !p->tail)
		pn__arms_learn(&t->arms, PN__ARM_PLAN, pn__clock_now(p->clk) - p->deadline);
}

int pn__wait(struct pn__waiter *w, struct pn__plan *p, clockid_t clk, int64_t deadline,
             int64_t precision, int flags)
{
	pn__waiter_bind(w);
	struct pn__state *t = pn__state_get();
	int arm = -1;
	if (comparing(t)) {
		arm = pick(&t->arms, deadline);
		if (arm == PN__ARM_ALONE && deadline > pn__clock_now(clk)) {
			int e = errno, r = wait_alone(t, w, clk, deadline);
			errno = e;
			return r;
		}
	}
	struct pn__probe probe = {probe_fds, w};
	unsigned n0 = w->nested ? *w->nested : 0;
	if (w->rounded)
		flags |= PN__PLAN_ROUNDED;
	pn__plan_make(p, clk, deadline, precision, w->wait ? flags | PN__PLAN_EINTR : flags,
	              w->wait ? &probe : NULL);
	int r = run(w, p, n0);
	if (arm >= 0)
		learn_plan(t, arm, p, r);
	return r;
}

int pn__wait_sleep(struct pn__plan *p, int64_t deadline, int64_t precision, const void *ret)
{
	struct pn__waiter w = {
	        .kind = PN__WAIT_SLEEP, .k = &pn__kernel_raw, .resume = true, .ret = {ret, NULL}};
	pn__waiter_bind(&w);
	struct pn__state *t = pn__state_get();
	int arm = -1;
	if (comparing(t)) {
		arm = pick(&t->arms, deadline);
		if (arm == PN__ARM_ALONE && deadline > pn_now()) {
			*p = (struct pn__plan)PN__PLAN_INIT;
			return wait_alone(t, &w, CLOCK_MONOTONIC, deadline);
		}
	}
	pn__plan_make(p, CLOCK_MONOTONIC, deadline, precision, PN__PLAN_TAIL, NULL);
	if (p->past)
		return 0; /* a deadline already past costs the plan alone */
	int r = run(&w, p, 0);
	if (arm >= 0)
		learn_plan(t, arm, p, r);
	return r;
}

void pn__wait_observed(clockid_t clk, int64_t call, int64_t deadline, bool timed_out,
                       struct pn__why_snap *why)
{
	int64_t end = pn__clock_now(clk); /* first: the wait's end */
	struct pn__state *t = pn__state_make();
	if (t && alone_end(t, call, deadline, end, timed_out) && why)
		pn__why_step(why, end - deadline);
}

void pn__wait_cancel(struct pn__plan *p)
{
	struct pn__state *t = pn__state_get();
	if (t) /* a jump out of the kernel part: the thread's own scheduling back */
		pn__sched_lend_end(&t->sched);
	pn__plan_cancel(p);
}

int pn__wait_lend(int op, const void *arg)
{
	if (op == PN__LEND_SIGNAL) {
		pn__sched_lend_signal = (int)(intptr_t)arg;
		return 0;
	}
	struct pn__state *t = pn__state_get();
	if (op == PN__LEND_BOUND) /* a thread past its state's end: a tick queued before */
		return t ? pn__sched_on_bound(&t->sched, arg) : arg != NULL;
	if (op == PN__LEND_HANDLER)
		pn__sched_sig_theirs++;
	if (t && t->sched.under)
		pn__sched_lend_end(&t->sched);
	return 0;
}
