/* SPDX-License-Identifier: MIT */
/*
 * wheel.c: a hierarchical timer wheel with coalescing precision windows.
 *
 * Geometry. A deadline becomes a 64-bit unsigned key (the int64_t with its sign bit
 * flipped, so that keys sort as instants do and every int64_t is a valid deadline). The
 * key is split into 6-bit digits; level L has 64 slots indexed by digit L, and each
 * level is 64x coarser than the one below (wahern/timeout's layout at 1 ns resolution):
 *
 *   level  slot width    level span   (span = what the 64 slots cover)
 *     0      1 ns          64 ns
 *     1     64 ns         4.1 us
 *     2    4.1 us         262 us
 *     3    262 us        16.8 ms
 *     4   16.8 ms         1.07 s
 *     5    1.07 s         68.7 s
 *     6    68.7 s        73.3 min
 *     7   73.3 min       78.2 h
 *     8   78.2 h          209 days
 *     9    209 days      36.6 years
 *    10   36.6 years      585 years (16 slots: the top 4 bits)
 *
 * A pending timer with key k > cur (the last expiry time) sits at the level of the
 * highest digit where k and cur differ, in the slot of k's digit there. Keys <= cur sit
 * in the due list. That placement stays true as cur advances until the slot's range is
 * reached: pn_wheel_expire then moves the passed slots' timers down (cascades them),
 * which fires the due ones and re-files the others at a finer level. Unlike Linux's
 * wheel (kernel/time/timer.c, no cascading, up to 12.5% implicit slack) this wheel is
 * exact: a timer carries its own precision and must never fire early, so its slot only
 * decides when it is looked at, never when it fires. Each timer cascades at most once
 * per level; add and cancel are O(1) (a list link, a bit in a 64-bit bitmap). A timer
 * carries the id of the list it is in (slot, due or firing) in the top 12 bits of seq,
 * so cancel finds its slot without computing it; seq keeps 52 bits of insertion order,
 * which only pn_wheel_check reads (modulo 2^52).
 *
 * Cost. With 10^5-10^6 timers in the caller's memory, add + cancel is bound by cache
 * misses: the timer's own line and, inherent to a doubly linked list, its two
 * neighbours' lines that unlinking writes. What follows a miss is kept short and free of
 * data dependences on it: the bookkeeping that depends on the timer's fields (bitmap
 * bit, stale minimum) is done under predicted branches, not computed into shared words,
 * so the next add does not wait for the miss (docs/DESIGN.md, "The wheel's costs").
 *
 * Coalescing rule (the greedy one, which is optimal for a known set of windows
 * [d, d + p]: sort by right end, wake at the smallest, fire every window already open,
 * repeat): pn_wheel_next is min(d + p) over pending timers, and pn_wheel_expire(now)
 * fires every timer with d <= now. Waking at that instant fires each due timer inside
 * its window, because none has a right end below it. Min(d + p) is exact: every slot
 * keeps the minimum right end of its list (recomputed lazily after the minimum leaves),
 * and the search walks non-empty slots in key order, stopping at the first whose range
 * starts at or after the best right end found (a later timer's d + p >= d >= that).
 *
 * A loop that sleeps with a precision of its own (pn_wheel_run, pn_wheel_timerfd) aims
 * at the start of the coalesced window, the latest deadline among the timers due by the
 * wakeup (pn_wheel_window): waking anywhere in between fires the same timers, so the
 * sleep's own lateness is absorbed instead of pushing timers past their windows. To
 * find that start without scanning a coarse slot, pn_wheel_window advances cur to a
 * wakeup at most 16.8 ms ahead, which puts every timer due by then in the due list
 * (cur may be ahead of the caller's clock; expiry handles that, firing only deadlines
 * <= now).
 *
 * Order: equal deadlines fire in insertion order. Timers with equal keys always share one
 * list (placement depends only on the key and cur), so appends keep them in insertion
 * order (the model test checks every firing order). Cascading mixes deadlines, so expiry
 * orders what it fires, and only that: an expiry that moves cur from c to n takes the due
 * list and every timer its cascade finds due straight into one of NBKT buckets by key over
 * (c, n], by the timers' own links, marking each as firing while its cache line is at hand
 * (advance_expire, collect); then it fires the buckets in order, each sorted first
 * (fire_buckets, pn__wheel_sort_bucket): by insertion for the few timers a bucket mostly
 * holds, the records' sort for a crowded one (a cluster of deadlines;
 * pn__wheel_sort_list). Insertion order survives: timers with equal keys come from one
 * list, in its order, into one bucket. A callback that cancels or re-adds a timer still to
 * fire unlinks it from its bucket, so freeing it after is safe. The cascade's walk is
 * what costs (docs/DESIGN.md, "The wheel's costs"), so LANES of the passed slots' lists are
 * walked side by side (a lane a list: the timers of a long jump sit mostly in a few coarse
 * slots). When the expiry does not move cur (a caller's clock behind an earlier call), the
 * due list is sorted instead (sort_due: records and the bucket sort, or without memory a
 * merge sort over the links) and fired from a firing list. Timers added by callbacks with
 * deadline <= now go to the due list and fire at the next expiry, which bounds every
 * pn_wheel_expire call.
 *
 * Time: a new wheel's cur is pn_now(), so timers are filed near their final level from
 * the start (cur far from the deadlines would put them all in the top level and
 * cascade them all at the first expiry). An empty wheel adopts the time of any expiry,
 * which is how a caller on a simulated timebase sets it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "internal.h"
#include "wheel/hooks.h"
#include "wheel/impl.h"

static inline int64_t instant_of(uint64_t k)
{
	return (int64_t)(k ^ (1ULL << 63));
}

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* The smallest key slot (level, s) can hold while cur is what it is. */
static inline uint64_t slot_base(const struct pn_wheel *w, int level, int s)
{
	int up = (level + 1) * BITS;
	uint64_t base = up < 64 ? (w->cur >> up) << up : 0;
	return base | ((uint64_t)s << (level * BITS));
}

static inline void list_init(struct pn_timer_link *h)
{
	h->next = h->prev = h;
}

/* Moves from's nodes before end (one of them, or from itself for all) to the end of to. */
static inline void list_splice_before(struct pn_timer_link *from, struct pn_timer_link *end,
                                      struct pn_timer_link *to)
{
	if (from->next == end)
		return;
	struct pn_timer_link *first = from->next, *last = end->prev;
	first->prev = to->prev;
	to->prev->next = first;
	last->next = to;
	to->prev = last;
	from->next = end;
	end->prev = from;
}

static inline void slot_reset(struct slot *sl)
{
	list_init(&sl->head);
	sl->min = INT64_MAX;
	sl->dirty = false;
}

static int64_t slot_min(struct slot *sl)
{
	if (sl->dirty) {
		sl->min = list_min_latest(&sl->head);
		sl->dirty = false;
	}
	return sl->min;
}

/* Files t (not linked) by its deadline relative to cur, with insertion order seq. Add
 * and cancel are the hot paths (see "Cost" above); the slot's id goes into t->seq so
 * that unlinking does not compute it again, and the bitmap and minimum are written only
 * when they change. */
static inline void place(struct pn_wheel *w, struct pn_timer *t, uint64_t seq)
{
	uint64_t k = key_of(t->deadline);
	unsigned id = k <= w->cur ? DUE : slot_id(k, w->cur);
	struct slot *sl = &w->slots[id];
	struct pn_timer_link *h = &sl->head, *last = h->prev;
	bool empty = last == h;
	t->seq = seq | (uint64_t)id << IDSHIFT;
	t->link.next = h;
	t->link.prev = last;
	last->next = &t->link;
	h->prev = &t->link;
	if (empty) {
		w->bitmap[id / SLOTS] |= 1ULL << (id % SLOTS);
		sl->min = t->latest;
		sl->dirty = false;
	} else if (t->latest < sl->min) {
		sl->min = t->latest;
	}
}

/* Unlinks pending t from wherever it is, keeping bitmaps and minima right. */
static inline void unlink_timer(struct pn_wheel *w, struct pn_timer *t)
{
	unsigned id = id_of(t); /* a bucket's timer: FIRE, which needs nothing more */
	struct slot *sl = &w->slots[id];
	struct pn_timer_link *n = t->link.next, *p = t->link.prev;
#ifdef __clang_analyzer__
	/* A pending timer is linked. scan-build cannot tell that p is the head when t is its
	 * first node, so it follows pn_wheel_expire's loop back into a timer just unlinked. */
	__builtin_assume(p != NULL && n != NULL);
#endif
	p->next = n;
	n->prev = p;
	t->link.next = t->link.prev = NULL;
	w->count--;
	/* Branches, not arithmetic: t's fields are likely a cache miss, and a bitmap or a
	 * flag computed from them would make the next add wait for it; a predicted branch
	 * does not. Both neighbours are the head: the slot is empty now. */
	if (n == p)
		w->bitmap[id / SLOTS] &= ~(1ULL << (id % SLOTS));
	else if (t->latest == sl->min)
		sl->dirty = true;
}

/* Adds due timer t (not linked, key k) to ds: at the end of its bucket's list, marked as
 * firing. A bucket's head is set up by its first timer: the append takes the head
 * itself as the last node then, with no branch. */
static inline void collect(struct pn_wheel *w, const struct due_set *ds, struct pn_timer *t,
                           uint64_t k)
{
	size_t b = bucket_of(k, ds->bkey, ds->shift);
	uint64_t bit = 1ULL << (b % 64), word = w->bbits[b / 64];
	struct pn_timer_link *h = &w->bkt[b], *last = word & bit ? h->prev : h;
	w->bbits[b / 64] = word | bit;
	w->bsum |= 1ULL << (b / 64);
	t->link.next = h;
	t->link.prev = last;
	last->next = &t->link;
	h->prev = &t->link;
	mark_firing(t);
}

/* Fetches the timer at p (NULL or stale: only a hint) into the cache for writing: both
 * of its lines, since the caller's array need not align it to one. */
static inline void prefetch_timer(const void *p)
{
	__builtin_prefetch(p, 1);
	/* integer arithmetic: p may be NULL */
	__builtin_prefetch((const void *)((uintptr_t)p + sizeof(struct pn_timer) - 1), 1);
}

/* Files t, whose slot nk passed, again: into a finer level, or the due list (or ds).
 * Returns whether it cascaded. */
static inline bool refile(struct pn_wheel *w, uint64_t nk, const struct due_set *ds,
                          struct pn_timer *t)
{
	uint64_t k = key_of(t->deadline);
	if (k > nk || !ds) {
		place(w, t, t->seq & SEQMASK);
		return k > nk;
	}
	collect(w, ds, t, k);
	return false;
}

/* Empties every slot whose range nk (> cur) reaches into chain[] (each list ended by a
 * NULL), in order (levels up, digits up), and moves cur to nk; returns how many. */
static unsigned detach(struct pn_wheel *w, uint64_t nk, struct pn_timer_link **chain)
{
	unsigned nch = 0;
	for (int level = 0; level < NLEVEL; level++) {
		uint64_t bm = w->bitmap[level], mask;
		if (!bm)
			continue;
		int up = (level + 1) * BITS;
		if (up < 64 && (nk >> up) != (w->cur >> up)) {
			mask = ~0ULL; /* nk is past this level's whole block */
		} else {
			int dc = digit(w->cur, level), dn = digit(nk, level);
			if (dn == dc)
				continue;
			uint64_t upto = dn == 63 ? ~0ULL : (2ULL << dn) - 1;
			mask = upto & ~((2ULL << dc) - 1); /* digits dc+1 .. dn */
		}
		for (uint64_t m = bm & mask; m; m &= m - 1) {
			struct slot *sl = &w->slots[level * SLOTS + __builtin_ctzll(m)];
			sl->head.prev->next = NULL;
			chain[nch++] = sl->head.next;
			__builtin_prefetch(sl->head.next, 1);
			list_init(&sl->head);
		}
		w->bitmap[level] = bm & ~mask;
	}
	w->cur = nk;
	return nch;
}

/* Advances cur to nk (> cur) for pn_wheel_window: every slot whose range nk reaches is
 * emptied and its timers filed again, into the due list or a finer level, walked one
 * list after the other in slot order (so that the due list comes in order as often as
 * it can: sort_due then has nothing to do). */
static void advance(struct pn_wheel *w, uint64_t nk)
{
	struct pn_timer_link *chain[NSLOT];
	unsigned nch = detach(w, nk, chain);
	uint64_t cascaded = 0;
	for (unsigned c = 0; c < nch; c++) {
		for (struct pn_timer_link *l = chain[c], *nx; l; l = nx) {
			nx = l->next;
			prefetch_timer(nx);
			cascaded += refile(w, nk, NULL, pn__timer_of(l));
		}
	}
	w->st.cascaded += cascaded;
}

/* Advances cur to nk (> cur) for an expiry: the passed slots' timers due by nk go to ds,
 * the others to a finer level.
 *
 * The walk of the lists is what this costs: each step is a cache miss whose address the
 * step before gives. So LANES of the lists are walked side by side, each lane taking the
 * next list when its own ends, so that up to LANES misses are under way at once instead
 * of one (a lane per list, not a run of lists per lane: a few coarse slots often hold
 * most of the timers). Each list is walked in its order (timers with equal keys share a
 * slot, so they are collected in insertion order, which is all that the buckets' stable
 * order needs). One pass walks and files: a second pass would miss again (docs/DESIGN.md,
 * "The wheel's costs"). */
static void advance_expire(struct pn_wheel *w, uint64_t nk, struct due_set ds)
{
	struct pn_timer_link *chain[NSLOT];
	unsigned nch = detach(w, nk, chain);
	struct pn_timer_link *p[LANES];
	unsigned next = 0, live = 0;
	uint64_t cascaded = 0;
	while (live < LANES && next < nch)
		p[live++] = chain[next++];
	/* Lanes p[0 .. live) are not done; a finished one takes the next list, or, when
	 * none is left, the last lane's place. */
	while (live) {
		for (unsigned k = 0; k < live; k++) {
			struct pn_timer_link *l = p[k];
			p[k] = l->next;
			prefetch_timer(p[k]); /* the lane's next step, while the others run */
			cascaded += refile(w, nk, &ds, pn__timer_of(l));
			if (!p[k]) {
				if (next < nch) {
					p[k] = chain[next++];
				} else {
					p[k] = p[--live];
					k--;
				}
			}
		}
	}
	w->st.cascaded += cascaded;
}

/* Adds the due list's timers to ds (an expiry's first step, when every one is due), and
 * empties the list. */
static void collect_due_list(struct pn_wheel *w, struct due_set ds)
{
	struct pn_timer_link *h = &w->slots[DUE].head, *l = h->next;
	if (l == h)
		return;
	h->prev->next = NULL; /* collect() rewrites the links: walk a chain */
	list_init(h);
	while (l) {
		struct pn_timer_link *nx = l->next;
		collect(w, &ds, pn__timer_of(l), key_of(pn__timer_of(l)->deadline)); /* bucket 0 */
		l = nx;
	}
}

PN_API int pn_timer_init(struct pn_timer *t, pn_timer_fn *fn, void *arg)
{
	if (!t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	return 0;
}

PN_API int pn_timer_pending(const struct pn_timer *t)
{
	if (!t)
		return -EINVAL;
	return t->link.next != NULL;
}

PN_API int pn_wheel_new(struct pn_wheel **wp)
{
	if (!wp)
		return -EINVAL;
	struct pn_wheel *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (int id = 0; id < NSLOT + 2; id++)
		slot_reset(&w->slots[id]);
	/* Files timers relative to now: a cur far from the deadlines would put them all in
	 * the top level and cascade them all at the first expiry. */
	w->cur = key_of(pn_now());
	w->records_min = PN__SORT_RUN + 1; /* shorter lists: the merge sort on the links */
	w->few = 32;
	*wp = w;
	return 0;
}

PN_API void pn_wheel_free(struct pn_wheel *w)
{
	if (w)
		free(w->sortbuf);
	free(w);
}

/* Files t (not pending). */
static inline int add_new(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                          int64_t precision, int64_t period)
{
	t->deadline = deadline;
	t->latest = sat_add(deadline, precision);
	t->period = period;
	t->wheel = w;
	place(w, t, w->seq++ & SEQMASK);
	w->count++;
	w->st.added++;
	return 0;
}

/* Re-adding a pending timer: out of line and reached by a tail call, so that the common
 * add needs no stack frame. */
static __attribute__((noinline)) int readd(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                                           int64_t precision, int64_t period)
{
	if (t->wheel != w) /* pending in another wheel: its lists are not w's to change */
		return -EINVAL;
	unlink_timer(w, t);
	return add_new(w, t, deadline, precision, period);
}

static inline int add(struct pn_wheel *w, struct pn_timer *t, int64_t deadline, int64_t precision,
                      int64_t period)
{
	if (t->link.next)
		return readd(w, t, deadline, precision, period);
	return add_new(w, t, deadline, precision, period);
}

PN_API int pn_wheel_add(struct pn_wheel *w, struct pn_timer *t, int64_t deadline, int64_t precision)
{
	if (__builtin_expect(!w || !t || precision < 0, 0))
		return -EINVAL;
	return add(w, t, deadline, precision, 0);
}

PN_API int pn_wheel_add_periodic(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                                 int64_t precision, int64_t period)
{
	if (!w || !t || precision < 0 || period <= 0)
		return -EINVAL;
	return add(w, t, deadline, precision, period);
}

PN_API int pn_wheel_cancel(struct pn_wheel *w, struct pn_timer *t)
{
	if (__builtin_expect(!w || !t, 0))
		return -EINVAL;
	if (!t->link.next)
		return 0;
	if (__builtin_expect(t->wheel != w, 0))
		return -EINVAL;
	unlink_timer(w, t);
	return 1;
}

PN_API int64_t pn_wheel_count(const struct pn_wheel *w)
{
	if (!w)
		return -EINVAL;
	return w->count;
}

/* A walk over the buckets in use, in order: word wi's bits not yet taken. */
struct bucket_walk {
	size_t wi;
	uint64_t bm;
};

/* The walk's next bucket, or NBKT (a walk starts as {0, w->bbits[0]}). Only fire_buckets
 * clears bits, behind its walks; next_wake and pn_wheel_window walk from a callback. */
static inline size_t walk_next(const struct pn_wheel *w, struct bucket_walk *k)
{
	while (!k->bm) {
		uint64_t s = k->wi + 1 < NBKT / 64 ? w->bsum & (~0ULL << (k->wi + 1)) : 0;
		if (!s)
			return NBKT;
		k->wi = (size_t)__builtin_ctzll(s);
		k->bm = w->bbits[k->wi];
	}
	size_t b = k->wi * 64 + (size_t)__builtin_ctzll(k->bm);
	k->bm &= k->bm - 1;
	return b;
}

/* min(latest) over pending timers into *best; false when none is pending. */
static bool next_wake(struct pn_wheel *w, int64_t *best)
{
	int64_t b = INT64_MAX;
	bool found = false;
	if (!list_empty(&w->slots[FIRE].head)) {
		b = list_min_latest(&w->slots[FIRE].head);
		found = true;
	}
	struct bucket_walk bw = {0, w->bbits[0]}; /* the buckets to fire */
	for (size_t k; (k = walk_next(w, &bw)) < NBKT;) {
		if (!list_empty(&w->bkt[k])) {
			int64_t m = list_min_latest(&w->bkt[k]);
			b = m < b ? m : b;
			found = true;
		}
	}
	if (!list_empty(&w->slots[DUE].head)) {
		int64_t m = slot_min(&w->slots[DUE]);
		if (m < b)
			b = m;
		found = true;
	}
	for (int level = 0; level < NLEVEL; level++) {
		for (uint64_t bm = w->bitmap[level]; bm; bm &= bm - 1) {
			int s = __builtin_ctzll(bm);
			/* Every later timer has deadline >= this slot's base, so latest >= it. */
			if (found && instant_of(slot_base(w, level, s)) >= b)
				goto done;
			int64_t m = slot_min(&w->slots[level * SLOTS + s]);
			if (m < b)
				b = m;
			found = true;
		}
	}
done:
	*best = b;
	return found;
}

PN_API int pn_wheel_next(struct pn_wheel *w, int64_t *wake)
{
	if (!w || !wake)
		return -EINVAL;
	int64_t b;
	if (!next_wake(w, &b))
		return -ENOENT;
	*wake = b;
	return 0;
}

/* The largest deadline <= lim in list h, or INT64_MIN. */
static int64_t list_max_deadline(const struct pn_timer_link *h, int64_t lim)
{
	int64_t m = INT64_MIN;
	for (const struct pn_timer_link *n = h->next; n != h; n = n->next) {
		int64_t d = pn__timer_of((struct pn_timer_link *)n)->deadline;
		if (d <= lim && d > m)
			m = d;
	}
	return m;
}

PN_API int pn_wheel_window(struct pn_wheel *w, int64_t *earliest, int64_t *wake)
{
	if (!w || !earliest || !wake)
		return -EINVAL;
	int64_t b;
	if (!next_wake(w, &b))
		return -ENOENT;
	uint64_t kb = key_of(b);
	/* A wakeup at most WINDOW_AHEAD past the wheel's time: the wheel moves its time
	 * there now, which files every timer due by then in the due list (expiry would do
	 * that work anyway), so that the answer scans only the timers that will fire
	 * instead of a coarse slot's list. Farther wakeups do not: timers added until then
	 * would all go to the unsorted due list. Not from a callback. */
	bool advanced = !w->in_expire && kb > w->cur && kb - w->cur <= WINDOW_AHEAD;
	if (advanced)
		advance(w, kb);
	int64_t e = list_max_deadline(&w->slots[FIRE].head, b);
	struct bucket_walk bw = {0, w->bbits[0]}; /* the buckets to fire */
	for (size_t k; (k = walk_next(w, &bw)) < NBKT;) {
		int64_t m = list_max_deadline(&w->bkt[k], b);
		e = m > e ? m : e;
	}
	int64_t d = list_max_deadline(&w->slots[DUE].head, b);
	if (d > e)
		e = d;
	if (advanced) {
		*earliest = e;
		*wake = b;
		return 0;
	}
	/* The last two non-empty slots that start at or before b: the last may hold only
	 * deadlines past b, and then every deadline in the one before it is <= b. */
	struct slot *last = NULL, *prev = NULL;
	for (int level = 0; level < NLEVEL; level++) {
		for (uint64_t bm = w->bitmap[level]; bm; bm &= bm - 1) {
			int s = __builtin_ctzll(bm);
			if (instant_of(slot_base(w, level, s)) > b)
				goto scanned;
			prev = last;
			last = &w->slots[level * SLOTS + s];
		}
	}
scanned:
	if (last) {
		d = list_max_deadline(&last->head, b);
		if (d == INT64_MIN && prev)
			d = list_max_deadline(&prev->head, b);
		if (d > e)
			e = d;
	}
	*earliest = e;
	*wake = b;
	return 0;
}

/* Re-arms periodic t, just fired at now, at its first deadline after now. */
static void rearm(struct pn_wheel *w, struct pn_timer *t, int64_t now)
{
	__int128 d = t->deadline, p = t->period;
	__int128 k = (now - d) / p + 1; /* now >= d: it fired */
	__int128 nd = d + k * p;
	int64_t precision = t->latest - t->deadline;
	/* k - 1 can exceed 2^64 after a jump across the whole timebase: saturate. */
	unsigned __int128 missed = (unsigned __int128)w->st.missed + (unsigned __int128)(k - 1);
	w->st.missed = missed > UINT64_MAX ? UINT64_MAX : (uint64_t)missed;
	t->deadline = nd > INT64_MAX ? INT64_MAX : (int64_t)nd;
	t->latest = sat_add(t->deadline, precision);
	place(w, t, w->seq++ & SEQMASK);
	w->count++;
}

/* Fires t, just unlinked: re-arms it if periodic, then calls it. */
static inline void fire(struct pn_wheel *w, struct pn_timer *t, int64_t now)
{
	if (t->period > 0)
		rearm(w, t, now);
	w->st.fired++;
	if (t->fn)
		t->fn(w, t, t->arg);
}

/* Buckets fire_buckets fetches ahead of the one firing. */
#define FETCH_AHEAD 8

static inline void prefetch_bucket(const struct pn_wheel *w, size_t a)
{
	if (a < NBKT) {
		prefetch_timer(w->bkt[a].next);
		prefetch_timer(w->bkt[a].prev);
	}
}

/* Fires the buckets' timers, bucket after bucket, each sorted first. A bucket's bit stays
 * set until it is done, so that next_wake sees its timers; a callback that cancels or
 * re-adds one still to fire unlinks it from its bucket. The first and last timers of the
 * bucket FETCH_AHEAD on are fetched while this one fires (the bits say which: callbacks
 * never add to the buckets, and a head a cancel emptied points to itself). Returns the
 * number fired. */
static int64_t fire_buckets(struct pn_wheel *w, int64_t now)
{
	int64_t fired = 0;
	struct bucket_walk fk = {0, w->bbits[0]}, ak = fk;
	for (int k = 0; k < FETCH_AHEAD; k++)
		prefetch_bucket(w, walk_next(w, &ak));
	for (size_t b; (b = walk_next(w, &fk)) < NBKT;) {
		prefetch_bucket(w, walk_next(w, &ak));
		struct pn_timer_link *h = &w->bkt[b];
		pn__wheel_sort_bucket(w, h);
		while (!list_empty(h)) {
			struct pn_timer *t = pn__timer_of(h->next);
			unlink_timer(w, t);
			fire(w, t, now);
			fired++;
		}
		if (!(w->bbits[b / 64] &= ~(1ULL << (b % 64))))
			w->bsum &= ~(1ULL << (b / 64));
	}
	return fired;
}

PN_API int pn_wheel_expire(struct pn_wheel *w, int64_t now)
{
	if (!w)
		return -EINVAL;
	if (w->in_expire)
		return -EBUSY;
	uint64_t nk = key_of(now);
	if (w->count == 0) {
		/* Nothing is filed relative to cur: an empty wheel adopts any time, which is
		 * how a caller on another timebase (simulated time) sets it. */
		w->cur = nk;
		return 0;
	}
	struct slot *due = &w->slots[DUE];
	struct pn_timer_link *firing = &w->slots[FIRE].head;
	int64_t fired = 0;
	if (nk > w->cur) {
		/* Every timer in the due list is due (its key <= cur < nk), and so is every
		 * one advance_expire() finds due: they are collected into the buckets. */
		due_set_init(&w->geo, w->cur, nk);
		collect_due_list(w, w->geo);
		advance_expire(w, nk, w->geo);
		if (!w->bsum)
			return 0; /* nothing was due */
		w->in_expire = true;
		fired = fire_buckets(w, now);
		goto done;
	}
	if (list_empty(&due->head))
		return 0;
	/* When now < cur (a caller's clock behind an earlier call) some due timers are not
	 * due yet: only the prefix up to now fires. */
	list_splice_before(&due->head, pn__wheel_sort_due(w, now), firing); /* firing was empty */
	if (!list_empty(&due->head))
		due->dirty = true; /* its minimum may have fired */
	w->in_expire = true;
	while (!list_empty(firing)) {
		struct pn_timer *t = pn__timer_of(firing->next);
		unlink_timer(w, t);
		fire(w, t, now);
		fired++;
	}
done:
	w->in_expire = false;
	if (fired)
		w->st.expires++;
	return fired > INT32_MAX ? INT32_MAX : (int)fired;
}

PN_API int pn_wheel_run(struct pn_wheel *w, int64_t until)
{
	if (!w)
		return -EINVAL;
	if (w->in_expire)
		return -EBUSY;
	int64_t total = 0, e, l;
	for (;;) {
		if (pn_now() >= until)
			break;
		if (pn_wheel_window(w, &e, &l) == 0 && e < until) {
			/* Waking anywhere in [e, l] fires the same timers, each in its window. */
			pn_sleep_until(e, l - e);
			int r = pn_wheel_expire(w, pn_now());
			if (r > 0)
				total += r;
		} else {
			pn_sleep_until(until, 0);
		}
	}
	return total > INT32_MAX ? INT32_MAX : (int)total;
}

PN_API int pn_wheel_timerfd(struct pn_wheel *w, int fd)
{
	if (!w || fd < 0)
		return -EINVAL;
	struct itimerspec its = {0};
	int64_t e, l;
	int armed = pn_wheel_window(w, &e, &l) == 0;
	if (armed) {
		if (e < 1)
			e = 1; /* an absolute time in the past fires at once; 0 would disarm */
		its.it_value.tv_sec = e / PN_NSEC;
		its.it_value.tv_nsec = e % PN_NSEC;
	}
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return armed;
}

PN_API int pn_wheel_stats(const struct pn_wheel *w, struct pn_wheel_stats *st)
{
	if (!w || !st)
		return -EINVAL;
	*st = w->st;
	return 0;
}
