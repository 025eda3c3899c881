/* SPDX-License-Identifier: MIT */
/*
 * wheel_impl.h: the timer wheel's layout (see wheel.c's design comment), shared by
 * wheel.c, wheel_sort.c (expiry's buffer and sorts) and wheel_check.c (the invariant
 * checker and the test hooks). Internal.
 */
#ifndef PUNCTUAL_WHEEL_IMPL_H
#define PUNCTUAL_WHEEL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <punctual/wheel.h>
#include "wheel_sort.h"

#define BITS         6
#define SLOTS        (1 << BITS)
#define NLEVEL       11               /* ceil(64 / BITS) */
#define NSLOT        (NLEVEL * SLOTS) /* slot ids 0 .. NSLOT - 1: level * SLOTS + digit */
#define DUE          NSLOT            /* the due list's slot id */
#define FIRE         (NSLOT + 1)      /* the firing list's slot id */
#define FIREA        (NSLOT + 2)      /* the firing array's id (not a slot) */
#define IDSHIFT      52               /* seq's top 12 bits: the slot id the timer is in */
#define SEQMASK      ((1ULL << IDSHIFT) - 1)
#define BKTBITS      12 /* expiry's buckets (see due_set): NBKT = 2^BKTBITS */
#define NBKT         (1 << BKTBITS)
#define WINDOW_AHEAD (1ULL << 24) /* 16.8 ms: pn_wheel_window advances to wakeups this close */

_Static_assert(sizeof(struct pn_timer) <= 64, "struct pn_timer must fit in 64 bytes");
_Static_assert(offsetof(struct pn_timer, link) == 0, "timer_of casts a link to its timer");

/* An empty slot's min and dirty mean nothing: place() starts them again. */
struct slot {
	struct pn_timer_link head;
	int64_t min; /* smallest latest in the list */
	bool dirty;  /* min may be too small: the timer holding it left */
};

struct pn_wheel {
	uint64_t cur; /* key of the last expiry time */
	uint64_t seq;
	int64_t count;
	bool in_expire;
	/* Bit s of word L: slot L * SLOTS + s is not empty. Word NLEVEL is scratch that
	 * place() and unlink_timer() write for DUE and FIRE so that they need no test for
	 * them; it is never read and means nothing. */
	uint64_t bitmap[NLEVEL + 1];
	/* By slot id; slots[DUE]: keys <= cur, not being fired; slots[FIRE]: being fired
	 * by pn_wheel_expire, sorted (its min is not kept). */
	struct slot slots[NSLOT + 2];
	struct pn_wheel_stats st;
	/* Expiry's buffer: 2 x sortcap sort records, then the firing array (sortcap
	 * timers), then sortcap counts (the bucket sort's). */
	struct pn__srec *sortbuf;
	size_t sortcap;
	/* The firing array: firing[0 .. nfiring) are the timers pn_wheel_expire is firing
	 * in its records' order (NULL: fired or cancelled); such a timer carries id FIREA,
	 * its link.next points to itself and its link.prev holds its index. */
	struct pn_timer **firing;
	size_t nfiring;
	/* Expiry's buckets: bit b of bbits says bucket b holds records, the last of them
	 * btail[b] (see pn__chain_append); all clear between expiries. */
	uint64_t bbits[NBKT / 64];
	uint32_t btail[NBKT];
	/* test knobs (pn__wheel_sort_tune): the shortest due list the radix sort takes, and
	 * whether growing its buffer fails */
	size_t radix_min;
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

/* The slot id of key k > cur. */
static inline unsigned slot_id(uint64_t k, uint64_t cur)
{
	int level = level_of(k, cur);
	return (unsigned)(level * SLOTS + digit(k, level));
}

static inline unsigned id_of(const struct pn_timer *t)
{
	return (unsigned)(t->seq >> IDSHIFT);
}

/* a was added before b: seq order modulo 2^52, for pn_wheel_check (it wraps after
 * 4.5e15 adds; two timers 2^51 adds apart would compare wrongly, and then only the
 * check's verdict on them would be wrong: nothing else reads seq). */
static inline bool seq_before(uint64_t a, uint64_t b)
{
	return (int64_t)((a - b) << (64 - IDSHIFT)) < 0;
}

static inline bool list_empty(const struct pn_timer_link *h)
{
	return h->next == h;
}

/* The smallest latest in list h (INT64_MAX for an empty one). */
static inline int64_t list_min_latest(const struct pn_timer_link *h)
{
	int64_t m = INT64_MAX;
	for (const struct pn_timer_link *n = h->next; n != h; n = n->next)
		if (pn__timer_of((struct pn_timer_link *)n)->latest < m)
			m = pn__timer_of((struct pn_timer_link *)n)->latest;
	return m;
}

/* The timers an expiry fires, collected while cascading into the firing array instead
 * of into a list: no list of them is walked again before they fire (each walk of timers
 * scattered in the caller's memory is a cache miss a timer), and each is marked as firing
 * (id FIREA) while its line is at hand. Each gets a record in the buffer (its key), and
 * the records are chained, by index, into NBKT buckets by key over the range the expiry
 * passes: the order comes from the buckets, and only a bucket's few records are sorted
 * (pn__wheel_sort_firing). Nothing runs until they fire. */
/* Lanes advance() walks at once (see there). */
#define LANES   8
#define IDXMASK 0xffffffffULL

struct due_set {
	size_t n, cap; /* records; room (the buffer's, 0 once spilled) */
	uint64_t bkey; /* keys <= bkey go to bucket 0, others to (key - bkey) >> shift */
	int shift;     /* (the expiry's new key - bkey) >> shift < NBKT */
	bool spilled;  /* the buffer could not grow: the due list holds them instead */
	/* the buffer's parts, as of the last time it grew */
	struct pn__srec *r;
	struct pn_timer **fa;
	uint32_t *link;
};

/* The bucket sort's counts, after the firing array; expiry's chains use them first. */
static inline uint32_t *pn__sortcount(const struct pn_wheel *w)
{
	return (uint32_t *)(w->firing + w->sortcap);
}

static inline void due_set_parts(struct due_set *ds, const struct pn_wheel *w)
{
	ds->cap = w->sortcap;
	ds->r = w->sortbuf;
	ds->fa = w->firing;
	ds->link = w->sortbuf ? pn__sortcount(w) : NULL;
}

/* ds for an expiry of w that moves its time from key cur to nk (> cur). */
static inline void due_set_init(struct due_set *ds, const struct pn_wheel *w, uint64_t cur,
                                uint64_t nk)
{
	int bits = 64 - __builtin_clzll(nk - cur);
	*ds = (struct due_set){.bkey = cur, .shift = bits > BKTBITS ? bits - BKTBITS : 0};
	due_set_parts(ds, w);
}

/* Appends record i to bucket b's chain. A chain is circular through link (its last
 * record's link is its first), so that a bucket needs only its last record (tail[b])
 * and the append takes no branch. */
static inline void pn__chain_append(uint64_t *bits, uint32_t *tail, uint32_t *link, size_t b,
                                    uint32_t i)
{
	uint64_t bit = 1ULL << (b % 64), word = bits[b / 64];
	link[i] = i;
	uint32_t t = word & bit ? tail[b] : i;
	uint32_t h = link[t];
	link[t] = i;
	link[i] = h;
	bits[b / 64] = word | bit;
	tail[b] = i;
}

static inline void mark_firing(struct pn_timer *t)
{
	t->seq = (t->seq & SEQMASK) | (uint64_t)FIRE << IDSHIFT;
}

/* wheel_sort.c's part of expiry (wheel.c calls them). */

/* Doubles w's buffer (at least 1024 records), keeping its first n records and timers;
 * false when it cannot (or the sort_fail knob is set). */
bool pn__wheel_grow_sortbuf(struct pn_wheel *w, size_t n);
/* Sorts the due list by deadline, stably, and marks its timers up to now as firing;
 * returns the first timer after now, or the list's head. */
struct pn_timer_link *pn__wheel_sort_due(struct pn_wheel *w, int64_t now);
/* Orders the records an expiry collected (in w's buffer) by deadline, stably, and
 * clears the buckets; returns them. */
struct pn__srec *pn__wheel_sort_firing(struct pn_wheel *w);

#endif
