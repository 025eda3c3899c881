/* SPDX-License-Identifier: MIT */
/*
 * impl.h: the timer wheel's layout, shared by the wheel, its sorts and its checker.
 * Internal.
 */
#ifndef PUNCTUAL_WHEEL_IMPL_H
#define PUNCTUAL_WHEEL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/wheel.h>
#include "wheel/sort.h"

#define BITS         6
#define SLOTS        (1 << BITS)
#define NLEVEL       11               /* ceil(64 / BITS) */
#define NSLOT        (NLEVEL * SLOTS) /* slot ids: level * SLOTS + digit */
#define DUE          NSLOT
#define FIRE         (NSLOT + 1) /* the firing list's slot id, and the buckets' */
#define IDSHIFT      52          /* seq's top 12 bits: the slot id the timer is in */
#define SEQMASK      ((1ULL << IDSHIFT) - 1)
#define BKTBITS      12 /* expiry's buckets: NBKT = 2^BKTBITS */
#define NBKT         (1 << BKTBITS)
#define WINDOW_AHEAD (1ULL << 24) /* 16.8 ms: how far pn_wheel_window advances */

/* 64 and the wheel it is in, so that a misuse is -EINVAL, not two corrupted wheels */
_Static_assert(sizeof(struct pn_timer) <= 72, "struct pn_timer must fit in 72 bytes");
_Static_assert(offsetof(struct pn_timer, link) == 0, "timer_of casts a link to its timer");

/* An expiry's due timers go into NBKT buckets by key over the range it passes, by their
 * own links, marked as firing: the order comes from the buckets, and only a bucket's few
 * timers are sorted, when it fires. */
struct due_set {
	uint64_t bkey; /* keys <= bkey go to bucket 0, others to (key - bkey) >> shift */
	int shift;     /* (the expiry's new key - bkey) >> shift < NBKT */
};

/* An empty slot's min and dirty mean nothing. */
struct slot {
	struct pn_timer_link head;
	int64_t min; /* smallest latest in the list */
	bool dirty;  /* min may be too small: the timer holding it left */
};

struct pn_wheel {
	uint64_t cur;
	uint64_t seq;
	int64_t count;
	bool in_expire;
	/* bit s of word L: slot L * SLOTS + s is not empty. Word NLEVEL is scratch for DUE and
	 * FIRE, never read, so that writers need no test */
	uint64_t bitmap[NLEVEL + 1];
	/* by slot id; DUE: keys <= cur, not being fired; FIRE: the due list's prefix an expiry
	 * that does not move cur fires, sorted (its min not kept) */
	struct slot slots[NSLOT + 2];
	struct pn_wheel_stats st;
	/* 2 x sortcap records, then sortcap counts */
	struct pn__srec *sortbuf;
	size_t sortcap;
	/* expiry's buckets: bit b of bbits says bkt[b] is in use, bit i of bsum that word i
	 * of bbits is not 0. All clear between expiries; during one, the buckets to fire */
	uint64_t bsum;
	uint64_t bbits[NBKT / 64];
	struct pn_timer_link bkt[NBKT];
	struct due_set geo;
	/* test knobs (pn__wheel_check_tune) */
	size_t records_min;
	size_t few;
	bool sort_fail;
};

static inline uint64_t key_of(int64_t d)
{
	return (uint64_t)d ^ (1ULL << 63);
}

static inline int level_of(uint64_t k, uint64_t cur)
{
	return (63 - __builtin_clzll(k ^ cur)) / BITS;
}

static inline int digit(uint64_t k, int level)
{
	return (int)((k >> (level * BITS)) & (SLOTS - 1));
}

static inline unsigned slot_id(uint64_t k, uint64_t cur)
{
	int level = level_of(k, cur);
	return (unsigned)(level * SLOTS + digit(k, level));
}

static inline unsigned id_of(const struct pn_timer *t)
{
	return (unsigned)(t->seq >> IDSHIFT);
}

/* a was added before b, modulo 2^52: only pn_wheel_check reads it, and only its verdict on
 * two timers 2^51 adds apart would be wrong. */
static inline bool seq_before(uint64_t a, uint64_t b)
{
	return (int64_t)((a - b) << (64 - IDSHIFT)) < 0;
}

static inline bool list_empty(const struct pn_timer_link *h)
{
	return h->next == h;
}

static inline int64_t list_min_latest(const struct pn_timer_link *h)
{
	int64_t m = INT64_MAX;
	for (const struct pn_timer_link *n = h->next; n != h; n = n->next)
		if (pn__timer_of((struct pn_timer_link *)n)->latest < m)
			m = pn__timer_of((struct pn_timer_link *)n)->latest;
	return m;
}

#define LANES 8

/* ds for an expiry that moves the wheel's time from key cur to nk (> cur). */
static inline void due_set_init(struct due_set *ds, uint64_t cur, uint64_t nk)
{
	int bits = 64 - __builtin_clzll(nk - cur);
	*ds = (struct due_set){.bkey = cur, .shift = bits > BKTBITS ? bits - BKTBITS : 0};
}

/* The bucket of key k (<= the expiry's new key). */
static inline size_t bucket_of(uint64_t k, uint64_t bkey, int shift)
{
	return k > bkey ? (size_t)((k - bkey) >> shift) : 0;
}

static inline void mark_firing(struct pn_timer *t)
{
	t->seq = (t->seq & SEQMASK) | (uint64_t)FIRE << IDSHIFT;
}

/* Stable sorts by deadline: of the list headed by h; of expiry's bucket h (by insertion,
 * or past w->few timers as a list); of the due list, its timers up to now marked firing
 * (returns the first after now, or the head). */
void pn__wheel_sort_list(struct pn_wheel *w, struct pn_timer_link *h);
void pn__wheel_sort_bucket(struct pn_wheel *w, struct pn_timer_link *h);
struct pn_timer_link *pn__wheel_sort_due(struct pn_wheel *w, int64_t now);

#endif
