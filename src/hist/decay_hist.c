/* SPDX-License-Identifier: MIT */
/*
 * decay_hist.c: the decayed histogram. The decay is a growing increment: a sample adds inc
 * and inc grows by PN__DECAY_HIST_DECAY, one bucket update a sample; before float runs out
 * every weight is divided by inc, which changes no quantile.
 */
#include "hist/decay_hist.h"

#define NB PN__DECAY_HIST_BUCKETS

int pn__decay_hist_bucket_of(int64_t v)
{
	if (v < 64)
		return 0;
	int o = 63 - __builtin_clzll((uint64_t)v) - 6; /* v in [64 << o, 128 << o) */
	if (o >= 24)
		return NB - 1;
	return 1 + 4 * o + (int)((v >> (o + 4)) & 3);
}

int pn__decay_hist_bucket_above(int64_t above)
{
	int from = 1;
	while (from < NB && pn__decay_hist_bucket_hi(from - 1) < above)
		from++;
	return from;
}

int64_t pn__decay_hist_bucket_hi(int b)
{
	if (b == 0)
		return 63;
	if (b == NB - 1)
		return INT64_MAX / 4;
	int o = (b - 1) / 4, sub = (b - 1) % 4;
	return ((int64_t)(5 + sub) << (o + 4)) - 1;
}

static void renormalize(struct pn__decay_hist *h)
{
	if (h->inc > 1e18f) {
		for (int b = 0; b < NB; b++)
			h->w[b] /= h->inc;
		h->total /= h->inc;
		h->inc = 1.0f;
	}
}

void pn__decay_hist_add(struct pn__decay_hist *h, int64_t v)
{
	if (h->inc == 0.0f)
		h->inc = 1.0f;
	h->w[pn__decay_hist_bucket_of(v < 0 ? 0 : v)] += h->inc;
	h->total += h->inc;
	h->n++;
	h->inc *= PN__DECAY_HIST_DECAY;
	renormalize(h);
}

void pn__decay_hist_age(struct pn__decay_hist *h, int steps, float floor)
{
	for (int i = 0; i < steps && h->total > floor * h->inc; i++)
		h->inc *= PN__DECAY_HIST_DECAY;
	renormalize(h);
}

/* guard times the weight of the newest sample */
static float guard_weight(const struct pn__decay_hist *h, float guard)
{
	return guard * h->inc / PN__DECAY_HIST_DECAY;
}

int64_t pn__decay_hist_quantile(const struct pn__decay_hist *h, double level, float guard)
{
	float tail = 0.0f, limit = (float)((1.0 - level) * h->total);
	float least = guard_weight(h, guard);
	if (limit < least && h->n > 2)
		limit = least;
	for (int b = NB - 1; b >= 0; b--) {
		tail += h->w[b];
		if (tail > limit)
			return pn__decay_hist_bucket_hi(b);
	}
	return 0;
}

bool pn__decay_hist_guarded(const struct pn__decay_hist *h, double level, float guard)
{
	return h->n > 2 && (float)((1.0 - level) * h->total) < guard_weight(h, guard);
}
