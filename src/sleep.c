/* SPDX-License-Identifier: MIT */
/*
 * sleep.c: pn_sleep_until, a sleep that is never early and late by at most a precision.
 *
 * The kernel's lateness L = wake - target - slack (what is left after the slack the
 * thread asked for) is learned per thread and per sleep-length class (log2 of the length
 * in us: an idle vCPU halts on long sleeps and takes tens of microseconds to wake) in a
 * decayed histogram: each new sample weighs 2^(1/2048) times the one before, so old
 * samples fade with a half-life of 2048 sleeps and the quantiles follow the load (2955
 * samples' weight at most: enough for a p99.9 that rests on three of them).
 *
 *  - kernel only, when the precision covers the class's p99 lateness: one absolute
 *    clock_nanosleep to the deadline with slack = the largest power of two that fits in
 *    precision - p99 and in the sleep's length (a power of two, so the slack rarely
 *    changes: no prctl per call);
 *  - otherwise slack 1 ns, clock_nanosleep to deadline - margin, margin = the class's
 *    p99.9 lateness for a precision of 2 us or less (at least 3x its p99 while the class
 *    is too young for a p99.9: YOUNG_X), its p99.6 for a wider one (see q_margin), then
 *    spin on pn_now() with the CPU's pause/yield to the deadline;
 *  - but where the class's spins keep losing the CPU to other tasks (LOST_NS), slack
 *    1 ns and the kernel to the deadline: a kernel wait is woken ahead of a CPU hog, a
 *    spinner waits out its slices.
 *
 * Outliers: from three samples on, a quantile never rests on the two most recent
 * samples' weight alone (a fine precision's margin on the latest one's: see margin_q),
 * so one stall (a process stopped, a vCPU descheduled for 50 ms) is never the margin; a lone wakeup
 * later than its sleep and 8x its class's margin (a young class's included, its neighbour's then)
 * is not learned at all unless the next one is as late (learn_wakeup). A class with fewer than 32
 * samples takes the larger of its own quantiles, doubled but capped at half the sleep (so that a
 * stall among its first samples cannot make it spin, and stop learning), and those of
 * its best-learned neighbour (the nearest class with 32 samples, else the one with
 * most), doubled while that one is young.
 *
 * A thread that has learned nothing yet measures the kernel's wakeup latency with up to
 * 8 of the shortest possible sleeps (absolute, 1 ns ahead) at the start of its first
 * sleep that has room for them (4x the worst seen), so the probes never make that sleep
 * late; until then the margin is one tick (the coarse clock's resolution: the lateness of
 * a timer without high-resolution timers), so an unprobed short sleep spins.
 *
 * A class whose margin is as long as its sleeps spins every time and would never learn
 * that the load went down. Such a sleep, when it has room, first makes one probe (a
 * shortest sleep, instead of spinning that long); when the probes say wakeups are cheap
 * again (twice their p99.9 fits in a quarter of the sleep), every 16th spin-only sleep
 * sleeps half its length in the kernel and learns from it; every 1024th does regardless.
 * Each of the others ages what the class knows by 4 samples' worth (age), so that its
 * memory runs in its sleeps, not in its explores: the late wakeups that made it spin-only
 * fade within a few hundred sleeps.
 *
 * Everything is thread-local: lock-free by construction, and no allocation, so the
 * preload shim may call it where nanosleep is async-signal-safe.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "sleep_plan.h"

#define NB            (1 + 4 * 24) /* lateness buckets: [0, 64 ns), then 4 per octave */
#define DECAY         1.0003385f   /* 2^(1/2048) */
#define Q_KERNEL      0.99         /* kernel only when the precision covers this quantile */
#define Q_MARGIN      0.999        /* the spin margin covers this one at a fine precision */
#define Q_MARGIN_WIDE 0.996        /* ... and this one at a wider precision */
#define FINE_NS       2000         /* precisions up to this are fine (see q_margin) */
#define MIN_SAMPLES   32
/* A fine precision's margin while its class is too young for a p99.9 (rests_on_guard) is
 * raised to YOUNG_X times its p99, the raise capped at half the sleep so that it never
 * makes the class spin-only (fine_margin). The second latest wakeup seen is only a
 * p99-p99.5 in a class's first few hundred sleeps, and the wakeups of a halted vCPU are
 * heavy-tailed here: p99 85-150 us, p99.9 330-920 us (1 ms epoll_waits, 8 runs of 2000,
 * 2026-12-01). Replayed on those runs' wakeups, the waits the kernel woke past the
 * deadline fell from 49 to 31 (2x: 35, 4x: 28) at a mean margin of 341 -> 424 us;
 * measured, alternating with the code before, 60 -> 22 in 6 runs each (the shim's
 * epoll_wait(1 ms) at 1 us, 2000 waits a run). */
#define YOUNG_X       3
#define EXPLORE       1024 /* spin-only sleeps before a class tries the kernel again */
#define EXPLORE_CHEAP 16   /* ... when the probes say wakeups got cheap */
/* A spin that ends LOST_NS past its deadline lost the CPU to another task (a scheduler
 * slice is milliseconds: a spinner competes with every runnable task on its CPU, where a
 * kernel wait is woken ahead of them). A class whose spins lose more than LOST_RATE of
 * the time (decayed by 1/32 a spin) waits in the kernel to the deadline at 1 ns slack,
 * spinning every LOST_EXPLORE-th sleep to see whether the CPU is free again. */
#define LOST_NS      200000
#define LOST_DECAY   (1.0f / 32)
#define LOST_RATE    0.125f
#define LOST_EXPLORE 16
#define PROBE_ROOM   4 /* a probe needs this many times the worst wakeup seen */

struct learn {
	float w[NB];
	float inc; /* the next sample's weight; 0 before the first */
	float total;
	uint32_t n;
	uint32_t spins; /* sleeps since its last kernel sample (all spin) */
	int64_t held;   /* a stall held back from the histogram (see learn_wakeup); 0: none */
	float lost;     /* decayed share of its spins that lost the CPU (see spin_lost) */
	uint32_t calm;  /* sleeps since it last spun while lost is high */
};

/* A sleep whose caller spun its last stretch (PN__SLEEP_TAIL): counted at the thread's
 * next sleep or statistics read, once the caller has stored its end. A sleep counted
 * before its caller stored it (a signal handler that slept or read the statistics during
 * that stretch, or jumped out of it) counts as ending at its deadline. */
struct pending {
	int64_t start, deadline, precision;
	struct pn__tail at;
	int k;
	bool on;
};

struct state {
	struct learn cls[PN_SLEEP_CLASSES];
	struct pn_sleep_stats st;
	struct pending pend;
};

/* The thread's state, mapped at its first plan and unmapped when it exits: in static TLS
 * its 10 KB would be carved out of every thread's stack (glibc takes a preloaded library's
 * static TLS from each new thread's), so a PTHREAD_STACK_MIN thread could not be created
 * under the shim. mmap, not malloc: a plan may run in a signal handler. NULL until then,
 * or when the mapping failed (the sleep then waits in the kernel to its deadline). */
static PN_TLS struct state *T;
static pthread_key_t state_key;
static bool state_key_ok;

static void state_free(void *s)
{
	if (T == s)
		T = NULL; /* a later key destructor's sleep maps a new one, freed in a next round */
	munmap(s, sizeof(struct state));
}

/* At load time: pthread_key_create is not async-signal-safe, a thread's first plan may be. */
__attribute__((constructor)) static void state_key_init(void)
{
	state_key_ok = pthread_key_create(&state_key, state_free) == 0;
}

/* The thread's state, mapped if it has none; NULL if that fails. */
static struct state *state_make(void)
{
	if (PN_LIKELY(T != NULL))
		return T;
	void *m = mmap(NULL, sizeof(struct state), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* without a key (none left) the mapping outlives the thread: a leak, not a fault */
	if (state_key_ok)
		pthread_setspecific(state_key, m);
	return T = m;
}

static void count(struct state *t, int k, int64_t deadline, int64_t precision, int64_t spin_start,
                  int64_t now)
{
	if (spin_start < deadline) {
		t->st.spun_ns += now - spin_start;
		struct learn *c = &t->cls[k];
		c->lost += ((now - deadline > LOST_NS ? 1.0f : 0.0f) - c->lost) * LOST_DECAY;
	} else {
		t->st.kernel_only++;
	}
	t->st.sleeps++;
	if (now < deadline) /* cannot happen: the callers' loops; counted if it ever does */
		t->st.early++;
	if (now - deadline > precision)
		t->st.late++;
}

static void finish_count(struct state *t, struct pn__sleep_plan *p, int64_t spin_start, int64_t now)
{
	count(t, p->k, p->deadline, p->precision, spin_start, now);
}

/* Counts the sleep a caller ended (pn__sleep_tail), if one is waiting. */
static void settle(struct state *t)
{
	if (!t->pend.on)
		return;
	t->pend.on = false;
	struct pending *d = &t->pend;
	count(t, d->k, d->deadline, d->precision, d->start, d->at.end);
}

static int bucket_of(int64_t v)
{
	if (v < 64)
		return 0;
	int o = 63 - __builtin_clzll((uint64_t)v) - 6; /* v in [64 << o, 128 << o) */
	if (o >= 24)
		return NB - 1;
	return 1 + 4 * o + (int)((v >> (o + 4)) & 3);
}

/* The largest value in bucket b: quantiles round up, so margins err on the safe side. */
static int64_t bucket_hi(int b)
{
	if (b == 0)
		return 63;
	if (b == NB - 1)
		return INT64_MAX / 4;
	int o = (b - 1) / 4, sub = (b - 1) % 4;
	return ((int64_t)(5 + sub) << (o + 4)) - 1;
}

static int class_of(int64_t len)
{
	int64_t us = len / 1000;
	if (us < 2)
		return 0;
	int k = 63 - __builtin_clzll((uint64_t)us);
	return k < PN_SLEEP_CLASSES ? k : PN_SLEEP_CLASSES - 1;
}

static void renormalize(struct learn *l)
{
	if (l->inc > 1e18f) { /* before float runs out */
		for (int b = 0; b < NB; b++)
			l->w[b] /= l->inc;
		l->total /= l->inc;
		l->inc = 1.0f;
	}
}

static void learn(struct learn *l, int64_t late)
{
	if (l->inc == 0.0f)
		l->inc = 1.0f;
	l->w[bucket_of(late < 0 ? 0 : late)] += l->inc;
	l->total += l->inc;
	l->n++;
	l->inc *= DECAY;
	renormalize(l);
}

/* A spin-only sleep of l's class, which learns nothing: what l knows fades by AGE_STEPS
 * samples' worth (while it holds more than AGE_FLOOR), so that a class which a few late
 * wakeups made spin-only forgets them in a few hundred of its sleeps, not in thousands of
 * explores (3 ms sleeps held at 97% CPU here by a margin counted in samples alone). */
#define AGE_STEPS 4
#define AGE_FLOOR 64.0f
static void age(struct learn *l)
{
	for (int i = 0; i < AGE_STEPS && l->total > AGE_FLOOR * l->inc; i++)
		l->inc *= DECAY;
	renormalize(l);
}

/* The q-quantile of what l learned, from the top: the first bucket where more than
 * (1 - q) of the weight lies at or above it, and (from three samples on) more than guard
 * times the newest sample's weight. With a guard of 2 a single stall (a vCPU descheduled,
 * a process stopped) never becomes the margin: it takes three late samples. */
static int64_t quantile_of(const struct learn *l, double q, float guard)
{
	float tail = 0.0f, limit = (float)((1.0 - q) * l->total);
	float least = guard * l->inc / DECAY; /* guard times the weight of the last sample */
	if (limit < least && l->n > 2)
		limit = least;
	for (int b = NB - 1; b >= 0; b--) {
		tail += l->w[b];
		if (tail > limit)
			return bucket_hi(b);
	}
	return 0;
}

static int64_t quantile(const struct learn *l, double q)
{
	return quantile_of(l, q, 2.0f);
}

/* A learned class's margin at quantile q. The p99.9 rests on one sample's worth of tail
 * once the class holds 1000 samples' weight (about 1200 sleeps); before that the guard of
 * two made it the third latest wakeup the class had seen: a p99 after 300 sleeps, a p99.7
 * after 1000, so up to 1% of a fine precision's waits in a fresh process were late. Its
 * guard is one sample: until the p99.9 holds on its own, margin_q is the second latest
 * wakeup seen, and still never a lone stall (fine_margin raises it while the class is
 * young). */
static float guard_of(double q)
{
	return q >= Q_MARGIN ? 1.0f : 2.0f;
}

static int64_t margin_q(const struct learn *l, double q)
{
	return quantile_of(l, q, guard_of(q));
}

/* Whether l's q-quantile (margin_q's) rests on its guard rather than on its tail's
 * weight: l holds too few samples' weight to show it (1000 for a p99.9). An aged class
 * (age) can become young again. */
static bool rests_on_guard(const struct learn *l, double q)
{
	return l->n > 2 && (float)((1.0 - q) * l->total) < guard_of(q) * l->inc / DECAY;
}

/* A fine precision's margin for a sleep of len ns in learned class l (MIN_SAMPLES or
 * more): its p99.9, raised while that rests on the guard to YOUNG_X times its p99, this
 * capped at half the sleep. */
static int64_t fine_margin(const struct learn *l, int64_t len)
{
	int64_t m = margin_q(l, Q_MARGIN);
	if (rests_on_guard(l, Q_MARGIN)) {
		int64_t x = YOUNG_X * quantile(l, Q_KERNEL);
		x = x < len / 2 ? x : len / 2;
		m = x > m ? x : m;
	}
	return m;
}

/* The best-learned class other than k: the nearest with MIN_SAMPLES, else the one with
 * the most samples (the nearer on a tie), else NULL. */
static const struct learn *neighbour(const struct state *t, int k)
{
	const struct learn *most = NULL;
	for (int d = 1; d < PN_SLEEP_CLASSES; d++) {
		const struct learn *c[2] = {k - d >= 0 ? &t->cls[k - d] : NULL,
		                            k + d < PN_SLEEP_CLASSES ? &t->cls[k + d] : NULL};
		for (int i = 0; i < 2; i++) {
			if (c[i] && c[i]->n >= MIN_SAMPLES)
				return c[i];
			if (c[i] && c[i]->n && (!most || c[i]->n > most->n))
				most = c[i];
		}
	}
	return most;
}

static bool learned_any(const struct state *t)
{
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		if (t->cls[k].n)
			return true;
	return false;
}

/* A quantile from l, doubled while l has fewer than MIN_SAMPLES samples. */
static int64_t q_of(const struct learn *l, double q)
{
	int64_t v = quantile(l, q);
	return l->n < MIN_SAMPLES ? 2 * v : v;
}

/* The quantile the spin margin covers for a sleep of this precision. A precision of
 * FINE_NS or less (the floor a spin reaches on a host that loses its vCPU now and then:
 * the best this machine can do) covers the p99.9: fewer than 1% of such waits may be late,
 * and the machine's own stalls take most of that. A wider one covers the p99.6, as the
 * 512-sleep histogram this one replaced did in practice: on this project's VM the p99.9 of
 * a 3 ms sleep's wakeup was 1.5-3 ms in a noisy hour, and covering it held 3 ms sleeps
 * at 57-99% CPU, where the p99.6 held them at 3-38% in the same hour (acceptance 12's
 * stall reproducer, chunks 3-5, 2026-12-01). */
static double q_margin(int64_t precision)
{
	return precision <= FINE_NS ? Q_MARGIN : Q_MARGIN_WIDE;
}

/* Class k's expected lateness (p99) and spin margin (the q quantile; at a fine precision
 * fine_margin's), for a sleep of len ns. A class with fewer than MIN_SAMPLES samples takes
 * the larger of its own (doubled, not raised by YOUNG_X) and its best-learned
 * neighbour's; its own few samples never make it spin-only (they are capped at half the
 * sleep): a class that spins learns nothing, so one stall among them would stay the
 * margin. A neighbour's quantiles may (sleeps shorter than any wakeup spin). */
static void expected(const struct state *t, int k, int64_t len, double q, int64_t *kernel_q,
                     int64_t *margin)
{
	const struct learn *own = &t->cls[k];
	if (own->n >= MIN_SAMPLES) {
		*kernel_q = quantile(own, Q_KERNEL);
		*margin = q >= Q_MARGIN ? fine_margin(own, len) : margin_q(own, q);
		return;
	}
	const struct learn *nb = neighbour(t, k);
	if (!own->n && !nb) {
		int64_t tick = pn_now_coarse_resolution();
		*kernel_q = *margin = tick > 0 ? tick : 4000000;
		return;
	}
	*kernel_q = *margin = 0;
	const struct learn *from[2] = {own->n ? own : NULL, nb};
	for (int i = 0; i < 2; i++) {
		if (!from[i])
			continue;
		int64_t a = q_of(from[i], Q_KERNEL), b = q_of(from[i], q);
		if (from[i] == own && b > len / 2)
			a = b = len / 2;
		*kernel_q = a > *kernel_q ? a : *kernel_q;
		*margin = b > *margin ? b : *margin;
	}
}

/* Sets the slack for the kernel part of p: with PN__SLEEP_KEEP_SLACK, from what the
 * thread has now (read every time: the program may have changed it behind our back) and
 * remembered in p->restore; otherwise left in place, prctl skipped when it is known to be
 * set already. p->slack becomes the slack in force. */
static void set_slack(struct state *t, struct pn__sleep_plan *p, int64_t ns)
{
	if (p->flags & PN__SLEEP_KEEP_SLACK) {
		if (p->restore < 0) { /* not changed yet: what the thread has now */
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

void pn__sleep_cancel(struct pn__sleep_plan *p)
{
	if (p->restore < 0)
		return;
	pn__slack_put(p->restore);
	if (T)
		T->st.slack_changes++;
	p->restore = -1;
}

/* A shortest kernel wait: ppoll, not clock_nanosleep, since it reports a handler that ran
 * while the thread was being woken up (clock_nanosleep returns 0 then, its timer having
 * fired). 0, or -EINTR. */
static int probe_sleep(void)
{
	struct timespec one = {0, 1};
	int e = errno;
	int r = syscall(SYS_ppoll, NULL, 0, &one, NULL, 0) < 0 ? -errno : 0;
	errno = e;
	return r;
}

/* One shortest kernel wait (1 ns, slack 1 ns; the plan's probe when it has one, which
 * watches the caller's fds too) learned into class 0, if it leaves PROBE_ROOM times
 * *worst before the deadline. Returns 1 if it waited, 0 if there was no room (or it was
 * interrupted and the caller resumes), -1 when the plan must end: p->stop says why
 * (-EINTR, another -errno, or fds ready). */
static int probe_once(struct state *t, struct pn__sleep_plan *p, int64_t deadline, int64_t *worst)
{
	int64_t now = pn_now();
	if (deadline - now < PROBE_ROOM * *worst)
		return 0;
	set_slack(t, p, 1);
	int r = p->probe ? p->probe->wait(p->probe->ctx) : probe_sleep();
	/* interrupted, and the caller resumes: no more probes (a retry could meet a signal
	 * every time under a storm of them, and never end) */
	if (r == -EINTR && !(p->flags & PN__SLEEP_EINTR))
		return 0;
	if (r != 0) {
		p->stop = r;
		return -1;
	}
	int64_t late = pn_now() - (now + 1) - p->slack;
	learn(&t->cls[0], late);
	t->st.probes++;
	if (late > *worst)
		*worst = late;
	return 1;
}

/* The shortest kernel waits, while they leave room before the deadline: what waking up
 * costs here, learned into class 0. Returns -1 when the plan must end. */
static int probe_all(struct state *t, struct pn__sleep_plan *p, int64_t deadline)
{
	int64_t worst = 10000;
	for (int i = 0, r; i < 8; i++)
		if ((r = probe_once(t, p, deadline, &worst)) <= 0)
			return r;
	return 0;
}

static int64_t floor_pow2(int64_t v)
{
	return v < 1 ? 1 : (int64_t)1 << (63 - __builtin_clzll((uint64_t)v));
}

/* A class that spins every time (margin >= len): one probe instead of spinning that long,
 * and whether this sleep should explore (sleep half in the kernel). Only then: a class that
 * spins learns only from its explores, so a lower bar (tried: margin > len / 2) leaves a
 * class that a few late wakeups pushed over it spinning whole sleeps for thousands of
 * them (3 ms sleeps at 97% CPU here, against 3-32% with this bar). */
static bool spin_only_learn(struct state *t, struct pn__sleep_plan *p, int k, int64_t len)
{
	struct learn *c = &t->cls[k], *c0 = &t->cls[0]; /* class 0 holds the probes */
	int64_t worst = c0->n ? q_of(c0, Q_MARGIN) : 0;
	if (worst < 10000)
		worst = 10000;
	if (probe_once(t, p, pn_now() + len, &worst) < 0)
		return false;
	int64_t q0 = c0->n ? q_of(c0, Q_MARGIN) : 0;
	bool cheap = q0 > 0 && 2 * q0 <= len / 4;
	if (++c->spins >= EXPLORE || (cheap && c->spins >= EXPLORE_CHEAP)) {
		c->spins = 0;
		return true;
	}
	age(c);
	return false;
}

void pn__sleep_plan(struct pn__sleep_plan *p, clockid_t clk, int64_t deadline, int64_t precision,
                    int flags, const struct pn__probe *probe)
{
	struct state *t = state_make();
	if (t)
		settle(t);
	int64_t now = pn__clock_now(clk);
	*p = (struct pn__sleep_plan){.clk = clk,
	                             .flags = flags,
	                             .deadline = deadline,
	                             .precision = precision,
	                             .restore = -1,
	                             .probe = probe};
	if (now >= deadline) {
		if (t)
			t->st.past++;
		p->past = true;
		return;
	}
	if (PN_UNLIKELY(!t)) { /* no state: the kernel to the deadline, as it is */
		p->start = p->now = now;
		p->target = deadline;
		p->kernel = true;
		return;
	}
	if (PN_UNLIKELY(!learned_any(t))) {
		/* the probes sleep on MONOTONIC */
		if (probe_all(t, p, pn_now() + (deadline - now)) < 0) {
			pn__sleep_cancel(p);
			return;
		}
		now = pn__clock_now(clk);
	}
	int k = class_of(deadline - now);
	int64_t kernel_q, margin;
	expected(t, k, deadline - now, q_margin(precision), &kernel_q, &margin);
	if (margin >= deadline - now && spin_only_learn(t, p, k, deadline - now))
		margin = (deadline - now) / 2;
	if (p->stop) {
		pn__sleep_cancel(p);
		return;
	}
	now = pn__clock_now(clk);
	if (now >= deadline) {       /* the probe took what was left: a spin of nothing */
		pn__sleep_cancel(p); /* the probe's slack goes back */
		p->k = k;
		p->start = p->now = p->target = now;
		return;
	}
	int64_t slack;
	struct learn *c = &t->cls[k];
	bool lost = c->lost > LOST_RATE && ++c->calm % LOST_EXPLORE != 0;
	if (lost && precision <= kernel_q) { /* the spin would lose the CPU */
		slack = 1;
		p->target = deadline;
	} else if (precision > kernel_q) {
		/* the slack may use what the precision leaves, but never more than the
		 * sleep's own length: a huge precision must not make a short sleep long */
		int64_t room = precision - kernel_q;
		slack = floor_pow2(room < deadline - now ? room : deadline - now);
		p->target = deadline;
	} else {
		slack = 1;
		p->target = deadline - margin - 1;
	}
	t->st.margin_ns = margin;
	p->k = k;
	p->start = p->now = now;
	p->kernel = p->target > now;
	if (p->kernel)
		set_slack(t, p, slack);
	else
		pn__sleep_cancel(p);
}

/* A wakeup later than both its sleep and STALL_X times its class's margin (a young
 * class's: what expected() gives it, its neighbour's included) is a stall (the process
 * stopped, the vCPU taken away) or the start of a new load. One alone is held back: the
 * quantiles' guard would ignore it, but it would take one of the two samples' worth the
 * guard allows, the margin would stay one outlier higher for hundreds of
 * sleeps, and a young class would carry it into its learned life. The next wakeup
 * decides: another late one means the load changed, and both are learned; an ordinary
 * one drops it. */
#define STALL_X 8
static void learn_wakeup(struct state *t, int k, int64_t late, int64_t len)
{
	struct learn *l = &t->cls[k];
	int64_t m = -1, kernel_q;
	if (late <= len) /* not a stall: no margin to look up (this runs after a wake) */
		m = INT64_MAX / STALL_X;
	else if (l->n >= MIN_SAMPLES)
		m = quantile(l, Q_MARGIN);
	else if (learned_any(t))
		expected(t, k, len, Q_MARGIN, &kernel_q, &m);
	if (m >= 0) {
		bool stall = late > len && late > STALL_X * m;
		if (stall && !l->held) {
			l->held = late;
			return;
		}
		if (stall)
			learn(l, l->held);
		l->held = 0;
	}
	learn(l, late);
}

void pn__sleep_woke(struct pn__sleep_plan *p, bool learn_it)
{
	struct state *t = T;
	int64_t woke = pn__clock_now(p->clk);
	pn__sleep_cancel(p);
	p->now = woke;
	if (PN_UNLIKELY(!t))
		return;
	t->st.slept_ns += woke - p->start;
	if (learn_it) {
		learn_wakeup(t, p->k, woke - p->target - p->slack, p->deadline - p->start);
		t->cls[p->k].spins = 0;
	}
}

/* The spin's touch of the code its return runs (the plan's warm): a prefetch of the
 * caller's, which cannot fault, a load of libpunctual's own. */
static inline void warm(const struct pn__sleep_plan *p)
{
	__builtin_prefetch(p->warm[0]);
	for (int i = 1; i < PN__WARM; i++)
		if (p->warm[i])
			pn__arch_touch(p->warm[i]);
}

/* The thread's state, found before a spin rather than after its deadline: in a shared
 * library (global-dynamic TLS) reading T is a call to __tls_get_addr, whose code and data
 * the wait has left cold, on the path from the deadline to the caller. The empty asm hides
 * that the pointer is T, which the compiler would otherwise read again where it is used
 * (and, volatile, it stays here rather than sinking to the use). NULL: no state (a plan
 * made without one counts nothing). */
static inline struct state *state_ahead(void)
{
	struct state *t = T;
	__asm__ __volatile__("" : "+r"(t));
	return t;
}

int pn__sleep_finish(struct pn__sleep_plan *p)
{
	struct state *t = state_ahead();
	int64_t start = pn__plan_now(p), now = start;
	while (now < p->deadline) {
		warm(p);
		pn__arch_relax();
		now = pn__plan_now(p);
	}
	if (t)
		finish_count(t, p, start, now);
	return 0;
}

int pn__sleep_signals(const sigset_t *mask)
{
	struct timespec zero = {0, 0};
	int e = errno;
	long r = syscall(SYS_ppoll, NULL, 0, &zero, mask, _NSIG / 8);
	int err = r < 0 ? errno : 0;
	errno = e;
	return err == EINTR ? -EINTR : 0;
}

/* The spin's end. A check is a system call: 0.5 us here, 1-3 us when the vCPU was just
 * taken away; one that straddles the deadline makes the spin late by what is left of it,
 * and so does any system call after the deadline (1-2 us at the p99, the whole lateness a
 * precise wait may have). So the checks stop PN__SPIN_GUARD_NS plus the expected length
 * of the mask's system call (timed when the spin blocked) plus the last check's lead
 * before the deadline; the spin puts the mask back, and watches the clock alone, apart
 * from the last check (with a check function), started that lead before the deadline:
 * PN__LOOK_X times the longer of the last two checks, at most PN__LOOK_WINDOW_NS, so that
 * a look a few times slower than usual still ends before the deadline (an epoll look is
 * 0.5 us here; 1 in 800-1300 takes over 4 times that, 2.5 us and more: an interrupt, a
 * cold kernel path, a stall no lead covers), and one that costs next to nothing
 * (sem_trywait) leaves no blind stretch. p->looked says whether that one
 * ran (a spin that reached the deadline in a stalled system call did not: the caller
 * looks once more, late anyway). A handler that runs in that last stretch ran as the call
 * ended, as one the kernel delivers on the way out of a call that timed out. */
#define PN__SPIN_GUARD_NS 3000
#define PN__LOOK_X        4
/* A cancellation acted on in the spin (PN__SLEEP_CANCEL) unwinds with the caller's mask. */
static void spin_unwound(void *mask)
{
	pthread_sigmask(SIG_SETMASK, mask, NULL);
}

int pn__sleep_spin(struct pn__sleep_plan *p, pn__spin_check *check, void *ctx, int64_t every)
{
	struct state *t = state_ahead();
	int64_t start = pn__plan_now(p), now = start;
	if (now >= p->deadline)
		return pn__sleep_finish(p);
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
	pthread_cleanup_push(spin_unwound, &mask);
	for (int64_t next = check ? now : now + every; now < p->deadline; now = pn__plan_now(p)) {
		if (!blocked && looked && (p->flags & PN__SLEEP_TAIL)) {
			tail = true; /* the rest is the caller's (pn__sleep_tail) */
			break;
		}
		if (blocked && now + unmask + lead + PN__SPIN_GUARD_NS >= p->deadline) {
			pthread_sigmask(SIG_SETMASK, &mask, NULL);
			blocked = false;
		} else if (blocked && now >= next) {
			if (p->flags & PN__SLEEP_CANCEL)
				pthread_testcancel();
			if ((r = check ? check(ctx, &mask) : pn__sleep_signals(&mask)) != 0)
				break;
			int64_t after = pn__plan_now(p), took = after - now;
			int64_t cost = took > last ? took : last;
			lead = cost < PN__LOOK_WINDOW_NS / PN__LOOK_X ? PN__LOOK_X * cost
			                                              : PN__LOOK_WINDOW_NS;
			last = took;
			next = after + every;
		} else if (!blocked && !looked && now + lead >= p->deadline) {
			looked = true;
			if ((r = check(ctx, &mask)) != 0)
				break;
		} else {
			warm(p);
			pn__arch_relax();
		}
	}
	pthread_cleanup_pop(0);
	p->looked = looked;
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (r) {
		p->now = now;
		if (t)
			t->st.spun_ns += now - start;
		return r;
	}
	if (tail && !t) { /* nowhere to store its end: the spin ends here */
		while (pn__plan_now(p) < p->deadline)
			pn__arch_relax();
		return 0;
	}
	if (tail) {
		uint32_t seq = t->pend.at.seq + 1;
		t->pend = (struct pending){.start = start,
		                           .deadline = p->deadline,
		                           .precision = p->precision,
		                           .at = {.end = p->deadline, .seq = seq},
		                           .k = p->k,
		                           .on = true};
		p->tail = true;
		p->tail_to = &t->pend.at;
		p->tail_seq = seq;
		return 0;
	}
	if (t)
		finish_count(t, p, start, now);
	return 0;
}

int pn__sleep_finish_intr(struct pn__sleep_plan *p)
{
	return pn__sleep_spin(p, NULL, NULL, PN__SIGCHECK_NS);
}

static int sleep_until(int64_t deadline, int64_t precision, const void *ret)
{
	struct pn__sleep_plan p = PN__SLEEP_PLAN_INIT;
	pn__sleep_plan(&p, CLOCK_MONOTONIC, deadline, precision, 0, NULL);
	p.warm[0] = ret;
	if (p.past)
		return 0;
	if (p.kernel) {
		while (pn__sleep_abs(CLOCK_MONOTONIC, p.target) == -EINTR)
			;
		pn__sleep_woke(&p, true);
	}
	return pn__sleep_finish(&p);
}

PN_API int pn_sleep_until(int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	return sleep_until(deadline, precision, __builtin_return_address(0));
}

PN_API int pn_sleep_for(int64_t ns, int64_t precision)
{
	if (ns < 0 || precision < 0)
		return -EINVAL;
	int64_t now = pn_now(), deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	return sleep_until(deadline, precision, __builtin_return_address(0));
}

void pn__sleep_learn(int64_t len, int64_t late)
{
	struct state *t = state_make();
	if (t)
		learn_wakeup(t, class_of(len), late, len);
}

PN_API int pn_sleep_stats(struct pn_sleep_stats *st)
{
	if (!st)
		return -EINVAL;
	struct state *t = T;
	if (t) {
		settle(t);
		*st = t->st;
	} else {
		*st = (struct pn_sleep_stats){0};
	}
	st->slack_ns = pn__slack_known() ? pn__slack_known() : -1;
	for (int k = 0; t && k < PN_SLEEP_CLASSES; k++) {
		st->class_samples[k] = t->cls[k].n;
		st->class_margin_ns[k] = t->cls[k].n ? fine_margin(&t->cls[k], 1000LL << k) : 0;
	}
	return 0;
}

PN_API void pn_sleep_stats_reset(void)
{
	struct state *t = T;
	if (!t)
		return;
	settle(t);
	struct pn_sleep_stats *s = &t->st;
	s->sleeps = s->past = s->early = s->late = s->kernel_only = s->slack_changes = 0;
	s->probes = 0;
	s->slept_ns = s->spun_ns = 0;
}
