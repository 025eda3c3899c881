/* SPDX-License-Identifier: MIT */
/*
 * check.c: pn_wheel_check, the timer wheel's invariant checker (the model test and
 * the fuzzer call it after every step), and the wheel's test hooks.
 */
#include <errno.h>

#include <punctual/wheel.h>
#include "internal.h"
#include "wheel/hooks.h"
#include "wheel/impl.h"

/* Checks list h of slot id: links, each timer's slot id, the placement rule, seq. Adds its
 * length to *n. */
static int check_list(const struct pn_wheel *w, const struct pn_timer_link *h, unsigned id,
                      int64_t *n)
{
	int64_t len = 0;
	for (const struct pn_timer_link *l = h->next; l != h; l = l->next) {
		if (!l || !l->next || !l->prev || l->next->prev != l || l->prev->next != l)
			return -EUCLEAN;
		if (++len > w->count)
			return -EUCLEAN;
		const struct pn_timer *t = (const struct pn_timer *)l;
		uint64_t k = key_of(t->deadline);
		if (t->latest < t->deadline || t->period < 0 || id_of(t) != id || t->wheel != w)
			return -EUCLEAN;
		/* Every seq comes before the next one to hand out (modulo 2^52). */
		if (!seq_before(t->seq & SEQMASK, w->seq & SEQMASK))
			return -EUCLEAN;
		if ((id == DUE || h != &w->slots[id].head) && k > w->cur)
			return -EUCLEAN; /* the due list and the buckets: due */
		if (id < NSLOT && (k <= w->cur || slot_id(k, w->cur) != id))
			return -EUCLEAN;
	}
	if (h->prev->next != h)
		return -EUCLEAN;
	*n += len;
	return 0;
}

/* Checks a slot's list, bitmap bit and minimum (the due list: no bit). */
static int check_slot(const struct pn_wheel *w, unsigned id, int64_t *n)
{
	const struct slot *sl = &w->slots[id];
	int64_t before_n = *n;
	int r = check_list(w, &sl->head, id, n);
	if (r)
		return r;
	bool empty = *n == before_n;
	if (empty != list_empty(&sl->head))
		return -EUCLEAN;
	if (id < NSLOT && !!(w->bitmap[id / SLOTS] & (1ULL << (id % SLOTS))) == empty)
		return -EUCLEAN;
	if (empty)
		return 0;
	int64_t m = list_min_latest(&sl->head);
	if (sl->dirty ? sl->min > m : sl->min != m)
		return -EUCLEAN;
	return 0;
}

PN_API int pn_wheel_check(struct pn_wheel *w)
{
	if (!w)
		return -EINVAL;
	int64_t n = 0;
	int r;
	/* The top level has 64 - 60 = 4 bits of digit: 16 slots. */
	if (w->bitmap[NLEVEL - 1] >> (1 << (64 - (NLEVEL - 1) * BITS)))
		return -EUCLEAN;
	for (unsigned id = 0; id <= DUE; id++)
		if ((r = check_slot(w, id, &n)))
			return r;
	if (!w->in_expire && !list_empty(&w->slots[FIRE].head))
		return -EUCLEAN;
	if ((r = check_list(w, &w->slots[FIRE].head, FIRE, &n)))
		return r;
	/* Expiry's buckets: in use only inside an expiry (the ones still to fire), bsum
	 * their summary, each timer in the bucket of its key. */
	for (size_t i = 0; i < NBKT / 64; i++) {
		if ((w->bbits[i] && !w->in_expire) || !w->bbits[i] != !(w->bsum & (1ULL << i)))
			return -EUCLEAN;
		for (uint64_t bm = w->bbits[i]; bm; bm &= bm - 1) {
			size_t b = i * 64 + (size_t)__builtin_ctzll(bm);
			const struct pn_timer_link *h = &w->bkt[b];
			if ((r = check_list(w, h, FIRE, &n)))
				return r;
			for (const struct pn_timer_link *l = h->next; l != h; l = l->next)
				if (bucket_of(key_of(((const struct pn_timer *)l)->deadline),
				              w->geo.bkey, w->geo.shift) != b)
					return -EUCLEAN;
		}
	}
	if (n != w->count || w->count < 0)
		return -EUCLEAN;
	return 0;
}

void pn__wheel_check_tune(struct pn_wheel *w, bool fail, size_t records_min, size_t few)
{
	w->sort_fail = fail;
	w->records_min = records_min;
	w->few = few;
}

void pn__wheel_check_seq(struct pn_wheel *w, uint64_t seq)
{
	w->seq = seq;
}
