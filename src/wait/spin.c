/* SPDX-License-Identifier: MIT */
/*
 * spin.c: a precise wait's final spin on the plan's clock to the deadline, never before
 * it: signals blocked but let in at each check, so that a handler runs where the real call
 * would have run it; the checks timed to end before the deadline; a cancellation point
 * where the plan says so. It counts the sleep in the thread's state.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "sched/sched.h"
#include "wait/spin.h"
#include "wait/state.h"

/* The touch of the code the return runs: a prefetch of the caller's, which cannot fault,
 * a load of libpunctual's own. */
static inline void warm(const struct pn__plan *p)
{
	__builtin_prefetch(p->warm[0]);
	for (int i = 1; i < PN__WARM; i++)
		if (p->warm[i])
			pn__arch_touch(p->warm[i]);
}

/* The thread's state, found before the spin: in a shared library a TLS read calls
 * __tls_get_addr, cold on the path from the deadline to the caller. The volatile asm keeps
 * the call here. NULL: no state (nothing counted). */
static inline struct pn__state *state_ahead(void)
{
	struct pn__state *t = pn__state_get();
	__asm__ __volatile__("" : "+r"(t));
	return t;
}

/* The spin's CPU time: read at its start and once PN__CPU_LEAD_NS before its deadline. */
struct spin_cpu {
	int64_t cpu0, mid, mid_cpu;
};

static inline void cpu_start(struct spin_cpu *c, int64_t start, int64_t deadline)
{
	c->mid = c->mid_cpu = 0;
	c->cpu0 = deadline - start > 2 * PN__CPU_LEAD_NS ? pn__state_cpu() : 0;
}

/* Reads the CPU time if due at now: the time after the read, else now. */
static inline int64_t cpu_mid(struct spin_cpu *c, struct pn__plan *p, int64_t now)
{
	if (PN_LIKELY(!c->cpu0 || c->mid || now < p->deadline - PN__CPU_LEAD_NS))
		return now;
	c->mid_cpu = pn__state_cpu() - c->cpu0;
	return c->mid = pn__plan_now(p);
}

/* The sleep that spun from start to end: counted or pending the caller's tail, its gaps
 * learned. */
static void spin_end(struct pn__state *t, struct pn__plan *p, int64_t start, int64_t end,
                     struct pn__spin_gaps *g, const struct spin_cpu *c, bool pend)
{
	struct pn__sleep_end e = {.deadline = p->deadline,
	                          .precision = p->precision,
	                          .spin_start = start,
	                          .end = end,
	                          .mid = c->mid,
	                          .mid_cpu = c->mid_cpu,
	                          .k = p->k};
	if (start < p->deadline) {
		g->watched = end - start;
		pn__state_learn_gaps(t, g);
		pn__slice_spin_end(&t->slice,
		                   end - p->deadline > g->lost ? end - p->deadline : g->lost);
	}
	if (pend)
		pn__state_pend(t, p, &e);
	else
		pn__state_count(t, &e);
}

static inline void spin_gap(struct pn__spin_gaps *g, int64_t prev, int64_t now)
{
	if (PN_UNLIKELY(now - prev > PN__GAP_NS))
		pn__policy_gap(g, now - prev);
}

int pn__spin_finish(struct pn__plan *p)
{
	struct pn__state *t = state_ahead();
	int64_t floor = p->now;
	int64_t start = pn__plan_now(p), now = start, prev = start;
	struct pn__spin_gaps g = {0};
	struct spin_cpu c;
	cpu_start(&c, start, p->deadline);
	/* with PN__PLAN_TAIL, the last PN__LOOK_WINDOW_NS are the caller's */
	int64_t hand =
	        t && (p->flags & PN__PLAN_TAIL) ? p->deadline - PN__LOOK_WINDOW_NS : INT64_MAX;
	while (now < p->deadline) {
		warm(p);
		pn__arch_relax();
		now = pn__plan_now(p);
		if (PN_UNLIKELY(now < floor)) {
			p->away = true;
			return 0;
		}
		spin_gap(&g, prev, now);
		prev = now = cpu_mid(&c, p, now);
		if (now >= hand && now < p->deadline) {
			p->now = now;
			spin_end(t, p, start, now, &g, &c, true);
			return 0;
		}
	}
	if (t)
		spin_end(t, p, start, now, &g, &c, false);
	return 0;
}

/* A system call that straddles the deadline makes the spin late by its rest: the checks
 * stop PN__SPIN_GUARD_NS plus the mask's system call plus the last check's lead before it,
 * but for a last one started PN__LOOK_X times the longer of the last two checks before it,
 * at most PN__LOOK_WINDOW_NS (docs/DESIGN.md, "The spin's end"). */
#define PN__SPIN_GUARD_NS 3000
#define PN__LOOK_X        4
static void spin_unwound(void *mask)
{
	pthread_sigmask(SIG_SETMASK, mask, NULL);
}

struct spin_run {
	pn__spin_check *check;
	void *ctx;
	int64_t every;
	sigset_t mask;  /* the caller's, put back for the last stretch */
	sigset_t looks; /* and for the checks, less the lend's bound: our handler would EINTR */
	bool blocked;
	bool looked;
	bool tail;
	int64_t floor;
	int64_t start;
	int64_t unmask; /* the mask's own system call */
	int64_t lead;   /* the last check starts this long before the deadline */
	int64_t last;
	int64_t next;
	int64_t prev;
	struct pn__spin_gaps g;
	struct spin_cpu c;
};

/* A check with signals blocked, due at now: 0 to go on, else the result that ends the
 * spin; p->away when a look it needs is denied. */
static inline int spin_check_due(struct spin_run *s, struct pn__plan *p, int64_t now)
{
	if (p->flags & PN__PLAN_CANCEL)
		pthread_testcancel();
	int r = s->check ? s->check(s->ctx, &s->looks) : pn__kernel_signals(&s->looks);
	if (r)
		return r;
	if (PN_UNLIKELY(pn__kernel_denied())) {
		p->away = true;
		return 0;
	}
	int64_t after = pn__plan_now(p), took = after - now;
	int64_t cost = took > s->last ? took : s->last;
	s->lead = cost < PN__LOOK_WINDOW_NS / PN__LOOK_X ? PN__LOOK_X * cost : PN__LOOK_WINDOW_NS;
	s->last = took;
	s->next = after + s->every;
	s->prev = cpu_mid(&s->c, p, after);
	return 0;
}

/* One turn of the spin at now: 0 to go on, 1 to stop at now (the tail, or p->away), else
 * the check's result that ends it (in *r). */
static inline int spin_turn(struct spin_run *s, struct pn__plan *p, int64_t now, int *r)
{
	if (PN_UNLIKELY(now < s->floor)) {
		p->away = true;
		return 1;
	}
	if (!s->blocked && s->looked && (p->flags & PN__PLAN_TAIL)) {
		s->tail = true;
		p->now = now;
		return 1;
	}
	if (s->blocked && now + s->unmask + s->lead + PN__SPIN_GUARD_NS >= p->deadline) {
		pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
		s->blocked = false;
	} else if (s->blocked && now >= s->next) {
		*r = spin_check_due(s, p, now);
		return *r || p->away;
	} else if (!s->blocked && !s->looked && now + s->lead >= p->deadline) {
		s->looked = true;
		if ((*r = s->check(s->ctx, &s->mask)) != 0)
			return 1;
		s->prev = pn__plan_now(p);
	} else {
		spin_gap(&s->g, s->prev, now);
		s->prev = cpu_mid(&s->c, p, now);
		warm(p);
		pn__arch_relax();
	}
	return 0;
}

/* The spin stopped at now with r: counted, or pending the caller's tail. */
static int spin_over(struct spin_run *s, struct pn__state *t, struct pn__plan *p, int64_t now,
                     int r)
{
	p->looked = s->looked;
	if (s->blocked)
		pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
	if (r || p->away) {
		p->now = now;
		if (t && now > s->start)
			pn__state_spun(t,
			               s->c.mid ? s->c.mid_cpu + (now - s->c.mid) : now - s->start,
			               now);
		return r;
	}
	if (s->tail && !t) { /* nowhere to store its end: the spin ends here */
		for (int64_t at; (at = pn__plan_now(p)) < p->deadline;) {
			if (PN_UNLIKELY(at < s->floor)) {
				p->away = true;
				break;
			}
			pn__arch_relax();
		}
		return 0;
	}
	if (t)
		spin_end(t, p, s->start, now, &s->g, &s->c, s->tail);
	return 0;
}

int pn__spin_checked(struct pn__plan *p, pn__spin_check *check, void *ctx, int64_t every)
{
	struct pn__state *t = state_ahead();
	struct spin_run s = {.check = check,
	                     .ctx = ctx,
	                     .every = every,
	                     .blocked = true,
	                     .looked = !check,
	                     .floor = p->now,
	                     .lead = PN__LOOK_WINDOW_NS}; /* until a check is timed */
	int64_t now = s.start = pn__plan_now(p);
	if (now >= p->deadline)
		return pn__spin_finish(p);
	p->warm[PN__WARM - 1] = __builtin_return_address(0);
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &s.mask);
	s.looks = s.mask;
	if (pn__sched_lend_signal)
		sigaddset(&s.looks, pn__sched_lend_signal);
	s.unmask = pn__plan_now(p) - now;
	now += s.unmask;
	s.prev = now;
	s.next = check ? now : now + every;
	cpu_start(&s.c, now, p->deadline);
	int r = 0;
	pthread_cleanup_push(spin_unwound, &s.mask);
	for (; now < p->deadline; now = pn__plan_now(p))
		if (spin_turn(&s, p, now, &r))
			break;
	pthread_cleanup_pop(0);
	return spin_over(&s, t, p, now, r);
}

int pn__spin_signals(struct pn__plan *p)
{
	return pn__spin_checked(p, NULL, NULL, PN__SIGCHECK_NS);
}
