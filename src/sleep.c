/* SPDX-License-Identifier: MIT */
/*
 * sleep.c: pn_sleep_until, a sleep that is never early and late by at most a precision.
 *
 * The kernel's lateness L = wake - target - slack (what is left after the slack the
 * thread asked for) is learned per thread and per sleep-length class (log2 of the length
 * in us: an idle vCPU halts on long sleeps and takes tens of microseconds to wake) in a
 * decayed histogram: each new sample weighs 2^(1/512) times the one before, so old
 * samples fade with a half-life of 512 sleeps and the quantiles follow the load.
 *
 *  - kernel only, when the precision covers the class's p99 lateness: one absolute
 *    clock_nanosleep to the deadline with slack = the largest power of two that fits in
 *    precision - p99 and in the sleep's length (a power of two, so the slack rarely
 *    changes: no prctl per call);
 *  - otherwise slack 1 ns, clock_nanosleep to deadline - margin, margin = the class's
 *    p99.9 lateness, then spin on pn_now() with the CPU's pause/yield to the deadline.
 *
 * A class with no samples borrows its nearest learned neighbour's quantiles. A thread
 * that has learned nothing yet measures the kernel's wakeup latency with up to 8 of the
 * shortest possible sleeps (absolute, 1 ns ahead) at the start of its first sleep that
 * has room for them (4x the worst seen), so the probes never make that sleep late; until
 * then the margin is one tick (the coarse clock's resolution: the lateness of a timer
 * without high-resolution timers), so an unprobed short sleep spins. Quantiles from
 * fewer than 32 samples are doubled. A class whose margin exceeds its sleeps spins every
 * time; one sleep in 1024 then sleeps half its length in the kernel to learn again.
 * Everything is thread-local: lock-free by construction, and no allocation, so the
 * preload shim may call it where nanosleep is async-signal-safe.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "internal.h"

#define NB          (1 + 4 * 24) /* lateness buckets: [0, 64 ns), then 4 per octave */
#define DECAY       1.0013547f   /* 2^(1/512) */
#define Q_KERNEL    0.99         /* kernel only when the precision covers this quantile */
#define Q_MARGIN    0.999        /* the spin margin covers this one */
#define MIN_SAMPLES 32
#define EXPLORE     1024 /* spin-only sleeps before a class tries the kernel again */

struct learn {
	float w[NB];
	float inc; /* the next sample's weight; 0 before the first */
	float total;
	uint32_t n;
	uint32_t spins; /* sleeps since its last kernel sample (all spin) */
};

struct state {
	struct learn cls[PN_SLEEP_CLASSES];
	struct pn_sleep_stats st;
	int64_t slack; /* what this thread's slack is, as far as we know; 0: unknown */
};

static __thread struct state T;

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

static void learn(struct learn *l, int64_t late)
{
	if (l->inc == 0.0f)
		l->inc = 1.0f;
	l->w[bucket_of(late < 0 ? 0 : late)] += l->inc;
	l->total += l->inc;
	l->n++;
	l->inc *= DECAY;
	if (l->inc > 1e18f) { /* renormalize before float runs out */
		for (int b = 0; b < NB; b++)
			l->w[b] /= l->inc;
		l->total /= l->inc;
		l->inc = 1.0f;
	}
}

/* The q-quantile of what l learned, from the top: the first bucket where more than
 * (1 - q) of the weight lies at or above it, and at least two recent samples' worth: a
 * single stall (a vCPU descheduled for a millisecond) must not become the margin. */
static int64_t quantile(const struct learn *l, double q)
{
	float tail = 0.0f, limit = (float)((1.0 - q) * l->total);
	float two = 2.0f * l->inc / DECAY; /* the weight of the last sample, twice */
	if (limit < two && l->n > 2)
		limit = two;
	for (int b = NB - 1; b >= 0; b--) {
		tail += l->w[b];
		if (tail > limit)
			return bucket_hi(b);
	}
	return 0;
}

/* The nearest class other than k with samples, preferring those with MIN_SAMPLES. */
static const struct learn *neighbour(const struct state *t, int k)
{
	const struct learn *any = NULL;
	for (int d = 1; d < PN_SLEEP_CLASSES; d++) {
		const struct learn *c[2] = {k - d >= 0 ? &t->cls[k - d] : NULL,
		                            k + d < PN_SLEEP_CLASSES ? &t->cls[k + d] : NULL};
		for (int i = 0; i < 2; i++) {
			if (c[i] && c[i]->n >= MIN_SAMPLES)
				return c[i];
			if (c[i] && c[i]->n && !any)
				any = c[i];
		}
	}
	return any;
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

/* Class k's expected lateness (p99) and spin margin (p99.9). A class still learning
 * takes the larger of its own (doubled) and its nearest neighbour's. */
static void expected(const struct state *t, int k, int64_t *kernel_q, int64_t *margin)
{
	const struct learn *own = &t->cls[k];
	if (own->n >= MIN_SAMPLES) {
		*kernel_q = quantile(own, Q_KERNEL);
		*margin = quantile(own, Q_MARGIN);
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
		int64_t a = q_of(from[i], Q_KERNEL), b = q_of(from[i], Q_MARGIN);
		*kernel_q = a > *kernel_q ? a : *kernel_q;
		*margin = b > *margin ? b : *margin;
	}
}

static void set_slack(struct state *t, int64_t ns);

/* The shortest kernel sleeps, while they leave room before the deadline: what waking
 * up costs here, learned into class 0. */
static void probe(struct state *t, int64_t deadline)
{
	int64_t worst = 10000;
	set_slack(t, 1);
	for (int i = 0; i < 8; i++) {
		int64_t now = pn_now();
		if (deadline - now < 4 * worst)
			return;
		struct timespec ts = {(now + 1) / PN_NSEC, (now + 1) % PN_NSEC};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		int64_t late = pn_now() - (now + 1) - 1;
		learn(&t->cls[0], late);
		t->st.probes++;
		if (late > worst)
			worst = late;
	}
}

static void set_slack(struct state *t, int64_t ns)
{
	if (t->slack == ns)
		return;
	if (pn_slack_set(ns) == 0) {
		t->slack = ns;
		t->st.slack_changes++;
	}
}

void pn__sleep_slack_changed(int64_t ns)
{
	T.slack = ns; /* 0 resets to a default we do not know: the next sleep sets it */
}

static int64_t floor_pow2(int64_t v)
{
	return v < 1 ? 1 : (int64_t)1 << (63 - __builtin_clzll((uint64_t)v));
}

static inline int64_t clock_ns(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC ? pn_now() : pn__clock_ns(clk);
}

void pn__sleep_plan(struct pn__sleep_plan *p, clockid_t clk, int64_t deadline, int64_t precision)
{
	struct state *t = &T;
	int64_t now = clock_ns(clk);
	*p = (struct pn__sleep_plan){.clk = clk, .deadline = deadline, .precision = precision};
	if (now >= deadline) {
		t->st.past++;
		p->past = true;
		return;
	}
	if (PN_UNLIKELY(!learned_any(t))) {
		probe(t, pn_now() + (deadline - now)); /* the probes sleep on MONOTONIC */
		now = clock_ns(clk);
	}
	int k = class_of(deadline - now);
	int64_t kernel_q, margin;
	expected(t, k, &kernel_q, &margin);
	/* A class whose margin outgrew its sleeps would spin forever and never learn that
	 * the load went down: every EXPLORE spin-only sleeps, sleep half in the kernel. */
	if (margin >= deadline - now && ++t->cls[k].spins >= EXPLORE) {
		t->cls[k].spins = 0;
		margin = (deadline - now) / 2;
	}
	if (precision > kernel_q) {
		/* the slack may use what the precision leaves, but never more than the
		 * sleep's own length: a huge precision must not make a short sleep long */
		int64_t room = precision - kernel_q;
		p->slack = floor_pow2(room < deadline - now ? room : deadline - now);
		p->target = deadline;
	} else {
		p->slack = 1;
		p->target = deadline - margin - 1;
	}
	t->st.margin_ns = margin;
	p->k = k;
	p->start = p->now = now;
	p->kernel = p->target > now;
	if (p->kernel)
		set_slack(t, p->slack);
}

void pn__sleep_woke(struct pn__sleep_plan *p)
{
	struct state *t = &T;
	int64_t woke = clock_ns(p->clk);
	t->st.slept_ns += woke - p->start;
	learn(&t->cls[p->k], woke - p->target - t->slack);
	t->cls[p->k].spins = 0;
	p->now = woke;
}

int pn__sleep_finish(struct pn__sleep_plan *p)
{
	struct state *t = &T;
	int64_t now = clock_ns(p->clk);
	if (now < p->deadline) {
		int64_t spin_start = now;
		while ((now = clock_ns(p->clk)) < p->deadline)
			pn__arch_relax();
		t->st.spun_ns += now - spin_start;
	} else {
		t->st.kernel_only++;
	}
	t->st.sleeps++;
	if (now < p->deadline) /* cannot happen: the loop above; counted if it ever does */
		t->st.early++;
	if (now - p->deadline > p->precision)
		t->st.late++;
	return 0;
}

PN_API int pn_sleep_until(int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct pn__sleep_plan p;
	pn__sleep_plan(&p, CLOCK_MONOTONIC, deadline, precision);
	if (p.past)
		return 0;
	if (p.kernel) {
		struct timespec ts = {p.target / PN_NSEC, p.target % PN_NSEC};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		pn__sleep_woke(&p);
	}
	return pn__sleep_finish(&p);
}

PN_API int pn_sleep_for(int64_t ns, int64_t precision)
{
	if (ns < 0 || precision < 0)
		return -EINVAL;
	int64_t now = pn_now(), deadline;
	if (__builtin_add_overflow(now, ns, &deadline))
		deadline = INT64_MAX;
	return pn_sleep_until(deadline, precision);
}

PN_API int pn_sleep_stats(struct pn_sleep_stats *st)
{
	if (!st)
		return -EINVAL;
	struct state *t = &T;
	*st = t->st;
	st->slack_ns = t->slack ? t->slack : -1;
	for (int k = 0; k < PN_SLEEP_CLASSES; k++) {
		st->class_samples[k] = t->cls[k].n;
		st->class_margin_ns[k] = t->cls[k].n ? quantile(&t->cls[k], Q_MARGIN) : 0;
	}
	return 0;
}

PN_API void pn_sleep_stats_reset(void)
{
	struct pn_sleep_stats *s = &T.st;
	s->sleeps = s->past = s->early = s->late = s->kernel_only = s->slack_changes = 0;
	s->probes = 0;
	s->slept_ns = s->spun_ns = 0;
}
