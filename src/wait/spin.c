/* SPDX-License-Identifier: MIT */
/*
 * spin.c: a precise sleep's final spin (plan.h's pn__spin_finish and
 * pn__spin_checked): on the plan's clock to the deadline, never before it, with the CPU's
 * pause between reads; signals blocked but let in at each check, so that a handler runs
 * where the real call would have run it; the checks (a look at the caller's fds) timed to
 * end before the deadline; a cancellation point where the plan says so. It counts the sleep
 * in the thread's state (state.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "wait/spin.h"
#include "wait/state.h"

/* The spin's touch of the code its return runs (the plan's warm): a prefetch of the
 * caller's, which cannot fault, a load of libpunctual's own. */
static inline void warm(const struct pn__plan *p)
{
	__builtin_prefetch(p->warm[0]);
	for (int i = 1; i < PN__WARM; i++)
		if (p->warm[i])
			pn__arch_touch(p->warm[i]);
}

/* The thread's state, found before a spin rather than after its deadline: in a shared
 * library reading TLS is a call to __tls_get_addr, whose code and data the wait has left
 * cold, on the path from the deadline to the caller. The empty asm keeps the call here
 * (volatile: it does not sink to the use). NULL: no state (a plan made without one counts
 * nothing). */
static inline struct pn__state *state_ahead(void)
{
	struct pn__state *t = pn__state_get();
	__asm__ __volatile__("" : "+r"(t));
	return t;
}

/* The spin's CPU time: read at its start and once more PN__CPU_LEAD_NS before its deadline
 * (a spin shorter than that counts as it lasts). */
struct spin_cpu {
	int64_t cpu0, mid, mid_cpu;
};

static inline void cpu_start(struct spin_cpu *c, int64_t start, int64_t deadline)
{
	c->mid = c->mid_cpu = 0;
	c->cpu0 = deadline - start > 2 * PN__CPU_LEAD_NS ? pn__state_cpu() : 0;
}

/* Reads the CPU time if it is due at now: returns the time after the read, else now. */
static inline int64_t cpu_mid(struct spin_cpu *c, struct pn__plan *p, int64_t now)
{
	if (PN_LIKELY(!c->cpu0 || c->mid || now < p->deadline - PN__CPU_LEAD_NS))
		return now;
	c->mid_cpu = pn__state_cpu() - c->cpu0;
	return c->mid = pn__plan_now(p);
}

/* The sleep that spun from start to end, its gaps g and its CPU c: counted, or pending its
 * caller's tail (pend), and what its gaps say learned. */
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
		pn__policy_loss_add(&t->loss, g);
	}
	if (pend)
		pn__state_pend(t, p, &e);
	else
		pn__state_count(t, &e);
}

/* A gap between two of the spin's clock reads (prev, now): the CPU was taken away. */
static inline void spin_gap(struct pn__spin_gaps *g, int64_t prev, int64_t now)
{
	if (PN_UNLIKELY(now - prev > PN__GAP_NS))
		pn__policy_gap(g, now - prev);
}

int pn__spin_finish(struct pn__plan *p)
{
	struct pn__state *t = state_ahead();
	int64_t floor = p->now; /* the plan's last read: below it, the clock went back */
	int64_t start = pn__plan_now(p), now = start, prev = start;
	struct pn__spin_gaps g = {0};
	struct spin_cpu c;
	cpu_start(&c, start, p->deadline);
	while (now < p->deadline) {
		warm(p);
		pn__arch_relax();
		now = pn__plan_now(p);
		if (PN_UNLIKELY(now < floor)) { /* the clock stepped back: give the CPU back */
			p->away = true;
			return 0;
		}
		spin_gap(&g, prev, now);
		prev = now = cpu_mid(&c, p, now);
	}
	if (t)
		spin_end(t, p, start, now, &g, &c, false);
	return 0;
}

/* The spin's end. A check is a system call, slower when the vCPU was just taken away; one
 * that straddles the deadline makes the spin late by what is left of it, and so does any
 * system call after the deadline. So the checks stop PN__SPIN_GUARD_NS plus the expected
 * length of the mask's system call (timed when the spin blocked) plus the last check's lead
 * before the deadline; the spin puts the mask back and watches the clock alone, apart from
 * the last check (with a check function), started that lead before the deadline:
 * PN__LOOK_X times the longer of the last two checks, at most PN__LOOK_WINDOW_NS, so that a
 * look a few times slower than usual still ends before the deadline, and one that costs
 * next to nothing (sem_trywait) leaves no blind stretch (docs/DESIGN.md, "The spin's end").
 * p->looked says whether that one ran (a spin that reached the deadline in a stalled system
 * call did not: the caller looks once more, late anyway). A handler that runs in that last
 * stretch ran as the call ended, as one the kernel delivers on the way out of a call that
 * timed out. */
#define PN__SPIN_GUARD_NS 3000
#define PN__LOOK_X        4
/* A cancellation acted on in the spin (PN__PLAN_CANCEL) unwinds with the caller's mask. */
static void spin_unwound(void *mask)
{
	pthread_sigmask(SIG_SETMASK, mask, NULL);
}

int pn__spin_checked(struct pn__plan *p, pn__spin_check *check, void *ctx, int64_t every)
{
	struct pn__state *t = state_ahead();
	int64_t floor = p->now; /* the plan's last read: below it, the clock went back */
	int64_t start = pn__plan_now(p), now = start;
	if (now >= p->deadline)
		return pn__spin_finish(p);
	p->warm[PN__WARM - 1] = __builtin_return_address(0);
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	bool blocked = true;
	int r = 0;
	/* the mask's own system call: putting it back must end before the deadline too */
	int64_t unmask = pn__plan_now(p) - now;
	now += unmask;
	int64_t lead = PN__LOOK_WINDOW_NS, last = 0; /* until a check is timed */
	bool looked = !check;                        /* a plain sleep has no last look to take */
	bool tail = false;
	struct pn__spin_gaps g = {0};
	int64_t prev = now; /* the last plain read: a gap is measured between two of them */
	struct spin_cpu c;
	cpu_start(&c, now, p->deadline);
	pthread_cleanup_push(spin_unwound, &mask);
	for (int64_t next = check ? now : now + every; now < p->deadline; now = pn__plan_now(p)) {
		if (PN_UNLIKELY(now < floor)) { /* the clock stepped back: give the CPU back */
			p->away = true;
			break;
		}
		if (!blocked && looked && (p->flags & PN__PLAN_TAIL)) {
			tail = true; /* the rest is the caller's (pn__spin_tail) */
			p->now = now;
			break;
		}
		if (blocked && now + unmask + lead + PN__SPIN_GUARD_NS >= p->deadline) {
			pthread_sigmask(SIG_SETMASK, &mask, NULL);
			blocked = false;
		} else if (blocked && now >= next) {
			if (p->flags & PN__PLAN_CANCEL)
				pthread_testcancel();
			if ((r = check ? check(ctx, &mask) : pn__kernel_signals(&mask)) != 0)
				break;
			if (PN_UNLIKELY(pn__kernel_denied())) { /* a look it needs is denied */
				p->away = true;
				break;
			}
			int64_t after = pn__plan_now(p), took = after - now;
			int64_t cost = took > last ? took : last;
			lead = cost < PN__LOOK_WINDOW_NS / PN__LOOK_X ? PN__LOOK_X * cost
			                                              : PN__LOOK_WINDOW_NS;
			last = took;
			next = after + every;
			prev = cpu_mid(&c, p, after);
		} else if (!blocked && !looked && now + lead >= p->deadline) {
			looked = true;
			if ((r = check(ctx, &mask)) != 0)
				break;
			prev = pn__plan_now(p);
		} else {
			spin_gap(&g, prev, now);
			prev = cpu_mid(&c, p, now);
			warm(p);
			pn__arch_relax();
		}
	}
	pthread_cleanup_pop(0);
	p->looked = looked;
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (r || p->away) {
		p->now = now;
		if (t && now > start)
			pn__state_spun(t, c.mid ? c.mid_cpu + (now - c.mid) : now - start, now);
		return r;
	}
	if (tail && !t) { /* nowhere to store its end: the spin ends here */
		for (int64_t at; (at = pn__plan_now(p)) < p->deadline;) {
			if (PN_UNLIKELY(at < floor)) {
				p->away = true;
				break;
			}
			pn__arch_relax();
		}
		return 0;
	}
	if (t)
		spin_end(t, p, start, now, &g, &c, tail);
	return 0;
}

int pn__spin_signals(struct pn__plan *p)
{
	return pn__spin_checked(p, NULL, NULL, PN__SIGCHECK_NS);
}
