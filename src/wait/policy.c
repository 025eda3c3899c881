/* SPDX-License-Identifier: MIT */
/*
 * policy.c: the margin policy. libpunctual(3), PRECISE SLEEP, has the rules; docs/DESIGN.md,
 * "The spin margin" and "Precision at a price", the measurements behind each constant.
 * The expected CPU of a margin m over the learned lateness L is E[(m - L)+] plus the
 * wait's overhead.
 */
#include <stddef.h>

#include <punctual/clock.h>
#include "wait/policy.h"

/* A class that knows nothing spins one tick; 4 ms where the tick cannot be read. */
#define TICK_UNKNOWN_NS 4000000
#define LEVEL_FINE      0.999 /* the spin margin's level at a fine precision */
#define LEVEL_WIDE      0.996 /* at a wider one */
/* A young class's fine margin: at least YOUNG_X times its p99, at most half the sleep. */
#define YOUNG_X 3
/* A spin that ends LOST_NS late lost the CPU to another task. A class whose spins lose more
 * than LOST_RATE waits in the kernel, spinning every LOST_EXPLORE-th sleep. */
#define LOST_NS      200000
#define LOST_DECAY   (1.0f / 32)
#define LOST_RATE    0.125f
#define LOST_EXPLORE 16
/* A wakeup later than its sleep and STALL_X times its class's margin is a stall. */
#define STALL_X 8
/* The lowest level the spins' own loss can bring a margin to. */
#define LEVEL_LOW 0.9
/* Without a budget, a margin grows while each further 1% of a CPU puts KNEE_SLOPE % more
 * waits on time, and to at most AUTO_CAP of sleeps of AUTO_CAP_LEN or more. */
#define KNEE_SLOPE   0.1
#define AUTO_CAP     0.25
#define AUTO_CAP_LEN 1000000
/* Spin loss follows the host's last few hundred spins. */
#define LOSS_DECAY 0.998647f /* 2^(-1/512) */

int pn__policy_class(int64_t len)
{
	int64_t us = len / 1000;
	if (us < 2)
		return 0;
	int k = 63 - __builtin_clzll((uint64_t)us);
	return k < PN_SLEEP_CLASSES ? k : PN_SLEEP_CLASSES - 1;
}

/* A quantile with the guard of two samples: a lone outlier is never one. */
static int64_t quantile(const struct pn__sleep_class *c, double level)
{
	return pn__decay_hist_quantile(&c->wake, level, 2.0f);
}

int64_t pn__policy_quantile(const struct pn__sleep_class *c, double level)
{
	int64_t v = quantile(c, level);
	return c->wake.n < PN__MARGIN_MIN_SAMPLES ? 2 * v : v;
}

/* The guard of a margin's level: one sample at the fine level, two at the others. */
static float guard_of(double level)
{
	return level >= LEVEL_FINE ? 1.0f : 2.0f;
}

static int64_t margin_of(const struct pn__sleep_class *c, double level)
{
	return pn__decay_hist_quantile(&c->wake, level, guard_of(level));
}

int64_t pn__policy_fine(const struct pn__sleep_class *c, int64_t len)
{
	int64_t m = margin_of(c, LEVEL_FINE);
	if (pn__decay_hist_guarded(&c->wake, LEVEL_FINE, guard_of(LEVEL_FINE))) {
		int64_t x = YOUNG_X * quantile(c, PN__MARGIN_KERNEL_LEVEL);
		x = x < len / 2 ? x : len / 2;
		m = x > m ? x : m;
	}
	return m;
}

/* A fine precision covers the p99.9, a wider one the p99.6: a noisy host's p99.9 would
 * hold long sleeps spinning most of their time. */
double pn__policy_level(int64_t precision)
{
	return precision <= PN__MARGIN_FINE_NS ? LEVEL_FINE : LEVEL_WIDE;
}

/* The best-learned class other than k: the nearest with PN__MARGIN_MIN_SAMPLES, else the
 * one with the most samples, else NULL. */
static const struct pn__sleep_class *neighbour(const struct pn__sleep_class *cls, int k)
{
	const struct pn__sleep_class *most = NULL;
	for (int d = 1; d < PN_SLEEP_CLASSES; d++) {
		const struct pn__sleep_class *c[2] = {k - d >= 0 ? &cls[k - d] : NULL,
		                                      k + d < PN_SLEEP_CLASSES ? &cls[k + d]
		                                                               : NULL};
		for (int i = 0; i < 2; i++) {
			if (c[i] && c[i]->wake.n >= PN__MARGIN_MIN_SAMPLES)
				return c[i];
			if (c[i] && c[i]->wake.n && (!most || c[i]->wake.n > most->wake.n))
				most = c[i];
		}
	}
	return most;
}

bool pn__policy_learned_any(const struct pn__sleep_class *cls)
{
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		if (cls[k].wake.n)
			return true;
	return false;
}

/* A young class takes the larger of its own and its neighbour's; its own never make it
 * spin-only (capped at half the sleep): a class that spins learns nothing. */
static void expected_at(const struct pn__sleep_class *cls, int k, int64_t len, double level,
                        int64_t *kernel_q, int64_t *margin)
{
	const struct pn__sleep_class *own = &cls[k];
	if (own->wake.n >= PN__MARGIN_MIN_SAMPLES) {
		*kernel_q = quantile(own, PN__MARGIN_KERNEL_LEVEL);
		*margin = level >= LEVEL_FINE ? pn__policy_fine(own, len) : margin_of(own, level);
		return;
	}
	const struct pn__sleep_class *nb = neighbour(cls, k);
	if (!own->wake.n && !nb) {
		int64_t tick = pn_now_coarse_resolution();
		*kernel_q = *margin = tick > 0 ? tick : TICK_UNKNOWN_NS;
		return;
	}
	*kernel_q = *margin = 0;
	const struct pn__sleep_class *from[2] = {own->wake.n ? own : NULL, nb};
	for (int i = 0; i < 2; i++) {
		if (!from[i])
			continue;
		int64_t a = pn__policy_quantile(from[i], PN__MARGIN_KERNEL_LEVEL),
		        b = pn__policy_quantile(from[i], level);
		if (from[i] == own && b > len / 2)
			a = b = len / 2;
		*kernel_q = a > *kernel_q ? a : *kernel_q;
		*margin = b > *margin ? b : *margin;
	}
}

static int64_t floor_pow2(int64_t v)
{
	return v < 1 ? 1 : (int64_t)1 << (63 - __builtin_clzll((uint64_t)v));
}

void pn__policy_kernel(bool lost, int64_t precision, int64_t kernel_q, int64_t margin, int64_t left,
                       int64_t *slack, int64_t *lead)
{
	if (lost && precision <= kernel_q) {
		*slack = 1;
		*lead = 0;
	} else if (precision > kernel_q) {
		/* the slack never exceeds the sleep's own length */
		int64_t room = precision - kernel_q;
		*slack = floor_pow2(room < left ? room : left);
		*lead = 0;
	} else {
		*slack = 1;
		*lead = margin + 1;
	}
}

bool pn__policy_lost(struct pn__sleep_class *c)
{
	return c->lost > LOST_RATE && ++c->calm % LOST_EXPLORE != 0;
}

void pn__policy_spun(struct pn__sleep_class *c, int64_t over)
{
	c->lost += ((over > LOST_NS ? 1.0f : 0.0f) - c->lost) * LOST_DECAY;
}

/* A wakeup later than its sleep and STALL_X times its class's margin is a stall or a new
 * load: held back, learned with the next if that is as late, else dropped. */
void pn__policy_learn(struct pn__sleep_class *cls, int k, int64_t late, int64_t len)
{
	struct pn__sleep_class *c = &cls[k];
	int64_t m = -1, kernel_q;
	if (late <= len)
		m = INT64_MAX / STALL_X;
	else if (c->wake.n >= PN__MARGIN_MIN_SAMPLES)
		m = quantile(c, LEVEL_FINE);
	else if (pn__policy_learned_any(cls))
		expected_at(cls, k, len, LEVEL_FINE, &kernel_q, &m);
	if (m >= 0) {
		bool stall = late > len && late > STALL_X * m;
		if (stall && !c->held) {
			c->held = late;
			return;
		}
		if (stall)
			pn__decay_hist_add(&c->wake, c->held);
		c->held = 0;
	}
	pn__decay_hist_add(&c->wake, late);
}

void pn__policy_gap(struct pn__spin_gaps *g, int64_t gap)
{
	g->lost += gap;
	for (int j = 0; j < PN__LOSS_STEPS; j++) {
		int64_t x = (int64_t)1000 << j;
		if (gap <= x)
			break;
		g->over[j] += (float)(gap - x);
		g->stalls[j] += 1;
	}
}

void pn__policy_loss_add(struct pn__spin_loss *l, const struct pn__spin_gaps *g)
{
	l->watched = l->watched * LOSS_DECAY + (float)g->watched;
	for (int j = 0; j < PN__LOSS_STEPS; j++) {
		l->over[j] = l->over[j] * LOSS_DECAY + g->over[j];
		l->most[j] = l->most[j] * LOSS_DECAY;
		l->most[j] = g->over[j] > l->most[j] ? g->over[j] : l->most[j];
		l->stalls[j] = l->stalls[j] * LOSS_DECAY + g->stalls[j];
	}
}

/* The threshold at or above x: a share or a count is never overstated. */
static int loss_step(int64_t x)
{
	int j = 0;
	while (j < PN__LOSS_STEPS - 1 && ((int64_t)1000 << j) < x)
		j++;
	return j;
}

double pn__policy_loss_stalls(const struct pn__spin_loss *l, int64_t x)
{
	return l->stalls[loss_step(x)];
}

double pn__policy_loss_share(const struct pn__spin_loss *l, int64_t x)
{
	if (l->watched < (float)PN__LOSS_MIN_NS)
		return 0;
	int j = loss_step(x);
	double f = ((double)l->over[j] - (double)l->most[j]) / (double)l->watched;
	return f < 0 ? 0 : f < 1 ? f : 1;
}

/* The class a young class plans with: its own from PN__MARGIN_MIN_SAMPLES on, else the
 * later of its own and its neighbour's by their medians, else its own. */
static const struct pn__sleep_class *cost_source(const struct pn__sleep_class *cls, int k)
{
	const struct pn__sleep_class *own = &cls[k];
	if (own->wake.n >= PN__MARGIN_MIN_SAMPLES)
		return own;
	const struct pn__sleep_class *nb = neighbour(cls, k);
	if (!nb)
		return own->wake.n ? own : NULL;
	if (own->wake.n && pn__decay_hist_quantile(&own->wake, 0.5, 0.0f) >
	                           pn__decay_hist_quantile(&nb->wake, 0.5, 0.0f))
		return own;
	return nb;
}

/* E[(m - L)+] over h's wakeups L (h NULL or empty: m), ns. */
static double spin_of(const struct pn__decay_hist *h, int64_t m)
{
	if (!h || h->total <= 0)
		return (double)m;
	double s = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++) {
		int64_t lo = b ? pn__decay_hist_bucket_hi(b - 1) + 1 : 0;
		if (lo >= m)
			break;
		int64_t hi = pn__decay_hist_bucket_hi(b) < m ? pn__decay_hist_bucket_hi(b) : m;
		s += h->w[b] * ((double)m - ((double)lo + (double)hi) / 2);
	}
	return s / h->total;
}

/* The spin a wait may cost: the budget's share or AUTO_CAP, within the window's room, less
 * the overhead. */
static double spin_cap(const struct pn__policy_ask *a)
{
	double cap = a->budget_ppm == PN_SLEEP_BUDGET_AUTO
	                     ? (a->len >= AUTO_CAP_LEN ? AUTO_CAP * (double)a->len : 1e18)
	                     : (double)a->budget_ppm * 1e-6 * (double)a->len;
	if (cap > (double)a->budget_room_ns)
		cap = (double)a->budget_room_ns;
	return cap - (double)a->overhead;
}

/* The knee: a step to a margin that costs ds more spin must put KNEE_SLOPE of a wait on
 * time (dl) per share of the wait's length. */
static bool worth_it(const struct pn__policy_ask *a, double ds, double dl)
{
	double dc = ds / (double)a->len;
	return a->budget_ppm != PN_SLEEP_BUDGET_AUTO || dc <= 0 || dl >= KNEE_SLOPE * dc;
}

/* The largest margin up to wanted the budget or the knee affords over h's wakeups; *spin:
 * its expected spin. The walk over the buckets' tops ends at the first over spin_cap. */
static int64_t afford(const struct pn__decay_hist *h, const struct pn__policy_ask *a,
                      int64_t wanted, int64_t *spin)
{
	enum { NB = PN__DECAY_HIST_BUCKETS };
	double total = h && h->total > 0 ? h->total : 0;
	double tail[NB + 1]; /* the weight in buckets b and up */
	tail[NB] = 0;
	for (int b = NB - 1; b >= 0; b--)
		tail[b] = tail[b + 1] + (total ? h->w[b] : 0);
	double cap = spin_cap(a);
	int64_t best = 0;
	double best_spin = 0, best_late = total ? 1.0 : 0; /* late share at margin 0: all */
	double below_w = 0, below_wm = 0; /* weight, and weight x mid, of buckets below m */
	int q = 0;                        /* the first bucket ending above m + precision */
	for (int b = 0; b <= NB; b++) {
		int64_t m = b < NB ? pn__decay_hist_bucket_hi(b) : wanted;
		if (m > wanted)
			m = wanted;
		if (b < NB && total) {
			int64_t lo = b ? pn__decay_hist_bucket_hi(b - 1) + 1 : 0;
			double mid = ((double)lo + (double)m) / 2;
			below_w += h->w[b];
			below_wm += h->w[b] * mid;
		}
		double s = total ? ((double)m * below_w - below_wm) / total : (double)m;
		if (s > cap) {
			/* a budget: the rest of it, on the chord (the spin is convex in the margin)
			 */
			if (a->budget_ppm != PN_SLEEP_BUDGET_AUTO && s > best_spin &&
			    cap > best_spin) {
				double f = (cap - best_spin) / (s - best_spin);
				best += (int64_t)(f * (double)(m - best));
				best_spin = cap;
			}
			break;
		}
		while (q < NB && pn__decay_hist_bucket_hi(q) <= m + a->precision)
			q++;
		double late = total ? tail[q] / total : 0;
		if (worth_it(a, s - best_spin, best_late - late)) {
			best = m;
			best_spin = s;
			best_late = late;
		}
		if (m >= wanted)
			break;
	}
	*spin = (int64_t)best_spin;
	return best;
}

/* A wait's expected CPU in ppm of its length, clamped to [0, 1e6]. */
static int32_t cost_share_ppm(double spin, const struct pn__policy_ask *a)
{
	double cost = (spin + (double)a->overhead) * 1e6 / (double)a->len;
	return cost > 0 ? (int32_t)(cost < 1e6 ? cost : 1e6) : 0;
}

void pn__policy_choose(const struct pn__sleep_class *cls, int k, const struct pn__policy_ask *a,
                       struct pn__policy_choice *c)
{
	double level = pn__policy_level(a->precision);
	int64_t spin;
	if (a->budget_ppm == PN_SLEEP_BUDGET_FULL) {
		expected_at(cls, k, a->len, level, &c->kernel_q, &c->margin);
		c->wanted = c->margin;
		const struct pn__sleep_class *src = cost_source(cls, k);
		c->spend_ppm = cost_share_ppm(spin_of(src ? &src->wake : NULL, c->margin), a);
		return;
	}
	if (a->loss > 1 - level) /* a spin cannot buy what hits the spin too */
		level = 1 - a->loss > LEVEL_LOW ? 1 - a->loss : LEVEL_LOW;
	int64_t wanted;
	expected_at(cls, k, a->len, level, &c->kernel_q, &wanted);
	if (a->budget_ppm == 0) {
		c->wanted = wanted;
		c->margin = 0;
		c->spend_ppm = 0;
		return;
	}
	wanted = wanted > a->precision ? wanted - a->precision : 0;
	c->wanted = wanted;
	if (a->unpriced) { /* spare afford's walk (~13k instructions) */
		c->margin = 0;
		c->spend_ppm = 0;
		return;
	}
	const struct pn__sleep_class *src = cost_source(cls, k);
	c->margin = afford(src ? &src->wake : NULL, a, wanted, &spin);
	c->spend_ppm = cost_share_ppm((double)spin, a);
}
