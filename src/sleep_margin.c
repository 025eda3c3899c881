/* SPDX-License-Identifier: MIT */
/*
 * sleep_margin.c: the margin policy of sleep_margin.h.
 *
 * The kernel's lateness L = wake - target - slack (what is left after the slack the thread
 * asked for) is learned per sleep-length class (log2 of the length in us: an idle vCPU
 * halts on long sleeps and takes tens of microseconds to wake) in a decayed histogram
 * (decay_hist.h). A sleep then
 *  - waits in the kernel only, when the precision covers the class's p99 lateness: one
 *    absolute wait to the deadline with slack = the largest power of two that fits in
 *    precision - p99 and in the sleep's length (a power of two, so the slack rarely
 *    changes: no prctl per call);
 *  - or waits with slack 1 ns until deadline - margin, then spins: margin = the class's
 *    p99.9 at a precision of PN__MARGIN_FINE_NS or less (at least YOUNG_X times its p99
 *    while the class is too young for a p99.9), its p99.6 at a wider one;
 *  - but where the class's spins keep losing the CPU to other tasks (LOST_NS), waits in the
 *    kernel to the deadline at slack 1 ns: a kernel wait is woken ahead of a CPU hog, a
 *    spinner waits out its slices.
 *
 * Outliers: from three samples on, a quantile never rests on the two newest samples' weight
 * alone (a fine precision's margin on the newest one's: margin_of), so one stall (a process
 * stopped, a vCPU descheduled for 50 ms) is never the margin; a lone wakeup later than its
 * sleep and STALL_X times its class's margin is not learned at all unless the next one is as
 * late (pn__margin_learn). A class with fewer than PN__MARGIN_MIN_SAMPLES samples takes the
 * larger of its own quantiles, doubled but capped at half the sleep (so that a stall among
 * its first samples cannot make it spin-only, and stop learning), and those of its
 * best-learned neighbour, doubled while that one is young. docs/DESIGN.md, "The spin
 * margin", has the measurements behind each constant.
 */
#include <stddef.h>

#include <punctual/clock.h>
#include "sleep_margin.h"

#define LEVEL_FINE 0.999 /* the spin margin's level at a fine precision */
#define LEVEL_WIDE 0.996 /* ... and at a wider one */
/* A fine precision's margin while its class is too young for a p99.9 is at least YOUNG_X
 * times its p99, the raise capped at half the sleep so that it never makes the class
 * spin-only: the second latest wakeup seen is only a p99-p99.5 in a class's first few
 * hundred sleeps, and a halted vCPU's wakeups are heavy-tailed. */
#define YOUNG_X 3
/* A spin that ends LOST_NS past its deadline lost the CPU to another task (a scheduler
 * slice is milliseconds). A class whose spins lose more than LOST_RATE of the time
 * (decayed by LOST_DECAY a spin) waits in the kernel to the deadline, spinning every
 * LOST_EXPLORE-th sleep to see whether the CPU is free again. */
#define LOST_NS      200000
#define LOST_DECAY   (1.0f / 32)
#define LOST_RATE    0.125f
#define LOST_EXPLORE 16
/* A wakeup later than its sleep and STALL_X times its class's margin is a stall. */
#define STALL_X 8

int pn__margin_class(int64_t len)
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

int64_t pn__margin_quantile(const struct pn__sleep_class *c, double level)
{
	int64_t v = quantile(c, level);
	return c->wake.n < PN__MARGIN_MIN_SAMPLES ? 2 * v : v;
}

/* The guard of a margin's level: one sample at the fine level (until the p99.9 holds on its
 * own, the second latest wakeup seen: still never a lone stall, and raised while the class
 * is young), two at the others. */
static float guard_of(double level)
{
	return level >= LEVEL_FINE ? 1.0f : 2.0f;
}

static int64_t margin_of(const struct pn__sleep_class *c, double level)
{
	return pn__decay_hist_quantile(&c->wake, level, guard_of(level));
}

int64_t pn__margin_fine(const struct pn__sleep_class *c, int64_t len)
{
	int64_t m = margin_of(c, LEVEL_FINE);
	if (pn__decay_hist_guarded(&c->wake, LEVEL_FINE, guard_of(LEVEL_FINE))) {
		int64_t x = YOUNG_X * quantile(c, PN__MARGIN_KERNEL_LEVEL);
		x = x < len / 2 ? x : len / 2;
		m = x > m ? x : m;
	}
	return m;
}

/* A precision of PN__MARGIN_FINE_NS or less (the floor a spin reaches on a host that loses
 * its vCPU now and then) covers the p99.9: fewer than 1% of such waits may be late, and the
 * machine's own stalls take most of that. A wider one covers the p99.6: covering the p99.9
 * of a noisy host's long sleeps holds them spinning most of their time. */
double pn__margin_level(int64_t precision)
{
	return precision <= PN__MARGIN_FINE_NS ? LEVEL_FINE : LEVEL_WIDE;
}

/* The best-learned class other than k: the nearest with PN__MARGIN_MIN_SAMPLES, else the one
 * with the most samples (the nearer on a tie), else NULL. */
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

bool pn__margin_learned_any(const struct pn__sleep_class *cls)
{
	for (int k = 0; k < PN_SLEEP_CLASSES; k++)
		if (cls[k].wake.n)
			return true;
	return false;
}

/* A young class (fewer than PN__MARGIN_MIN_SAMPLES) takes the larger of its own and its
 * neighbour's, not raised by YOUNG_X; its own few never make it spin-only (capped at half
 * the sleep): a class that spins learns nothing, so one stall among them would stay the
 * margin. A neighbour's may (sleeps shorter than any wakeup spin). */
static void expected_at(const struct pn__sleep_class *cls, int k, int64_t len, double level,
                        int64_t *kernel_q, int64_t *margin)
{
	const struct pn__sleep_class *own = &cls[k];
	if (own->wake.n >= PN__MARGIN_MIN_SAMPLES) {
		*kernel_q = quantile(own, PN__MARGIN_KERNEL_LEVEL);
		*margin = level >= LEVEL_FINE ? pn__margin_fine(own, len) : margin_of(own, level);
		return;
	}
	const struct pn__sleep_class *nb = neighbour(cls, k);
	if (!own->wake.n && !nb) {
		int64_t tick = pn_now_coarse_resolution();
		*kernel_q = *margin = tick > 0 ? tick : 4000000;
		return;
	}
	*kernel_q = *margin = 0;
	const struct pn__sleep_class *from[2] = {own->wake.n ? own : NULL, nb};
	for (int i = 0; i < 2; i++) {
		if (!from[i])
			continue;
		int64_t a = pn__margin_quantile(from[i], PN__MARGIN_KERNEL_LEVEL),
		        b = pn__margin_quantile(from[i], level);
		if (from[i] == own && b > len / 2)
			a = b = len / 2;
		*kernel_q = a > *kernel_q ? a : *kernel_q;
		*margin = b > *margin ? b : *margin;
	}
}

void pn__margin_expected(const struct pn__sleep_class *cls, int k, int64_t len, int64_t precision,
                         int64_t *kernel_q, int64_t *margin)
{
	expected_at(cls, k, len, pn__margin_level(precision), kernel_q, margin);
}

static int64_t floor_pow2(int64_t v)
{
	return v < 1 ? 1 : (int64_t)1 << (63 - __builtin_clzll((uint64_t)v));
}

void pn__margin_kernel(bool lost, int64_t precision, int64_t kernel_q, int64_t margin, int64_t left,
                       int64_t *slack, int64_t *lead)
{
	if (lost && precision <= kernel_q) { /* the spin would lose the CPU */
		*slack = 1;
		*lead = 0;
	} else if (precision > kernel_q) {
		/* the slack may use what the precision leaves, but never more than the sleep's
		 * own length: a huge precision must not make a short sleep long */
		int64_t room = precision - kernel_q;
		*slack = floor_pow2(room < left ? room : left);
		*lead = 0;
	} else {
		*slack = 1;
		*lead = margin + 1;
	}
}

bool pn__margin_lost(struct pn__sleep_class *c)
{
	return c->lost > LOST_RATE && ++c->calm % LOST_EXPLORE != 0;
}

void pn__margin_spun(struct pn__sleep_class *c, int64_t over)
{
	c->lost += ((over > LOST_NS ? 1.0f : 0.0f) - c->lost) * LOST_DECAY;
}

/* A wakeup later than both its sleep and STALL_X times its class's margin (a young class's:
 * what expected_at gives it, its neighbour's included) is a stall (the process stopped, the
 * vCPU taken away) or the start of a new load. One alone is held back: the quantiles' guard
 * would ignore it, but it would take one of the two samples' worth the guard allows, the
 * margin would stay one outlier higher for hundreds of sleeps, and a young class would carry
 * it into its learned life. The next wakeup decides: another late one means the load
 * changed, and both are learned; an ordinary one drops it. */
void pn__margin_learn(struct pn__sleep_class *cls, int k, int64_t late, int64_t len)
{
	struct pn__sleep_class *c = &cls[k];
	int64_t m = -1, kernel_q;
	if (late <= len) /* not a stall: no margin to look up */
		m = INT64_MAX / STALL_X;
	else if (c->wake.n >= PN__MARGIN_MIN_SAMPLES)
		m = quantile(c, LEVEL_FINE);
	else if (pn__margin_learned_any(cls))
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
