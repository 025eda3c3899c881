/* SPDX-License-Identifier: MIT */
/*
 * wheel.c: a hierarchical timer wheel with coalescing precision windows: 64 slots a
 * level, each level 64x coarser; a timer's slot decides only when it is looked at, never
 * when it fires, so the wheel is exact. Add and cancel are O(1).
 *
 * Coalescing: pn_wheel_next is min(d + p) over pending timers and an expiry at now fires
 * every d <= now, so waking then fires each due timer inside its window (the greedy rule,
 * optimal for known windows). Every slot keeps its list's minimum right end, and the
 * search stops at the first slot starting at or after the best found.
 *
 * Equal deadlines fire in insertion order. Timers callbacks add with deadline <= now fire
 * at the next expiry, which bounds every call. docs/DESIGN.md, "The wheel's layout and
 * order" and "The wheel's costs".
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

/* Files t (not linked) by its deadline relative to cur. The slot's id goes into t->seq so
 * that unlinking does not compute it again; the bitmap and minimum are written only when
 * they change. */
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

static inline void unlink_timer(struct pn_wheel *w, struct pn_timer *t)
{
	unsigned id = id_of(t); /* a bucket's timer: FIRE, which needs nothing more */
	struct slot *sl = &w->slots[id];
	struct pn_timer_link *n = t->link.next, *p = t->link.prev;
#ifdef __clang_analyzer__
	/* for scan-build: a pending timer is linked */
	__builtin_assume(p != NULL && n != NULL);
#endif
	p->next = n;
	n->prev = p;
	t->link.next = t->link.prev = NULL;
	w->count--;
	/* branches, not arithmetic: t's fields are likely a cache miss, and a value computed
	 * from them would make the next add wait for it. Both neighbours the head: empty. */
	if (n == p)
		w->bitmap[id / SLOTS] &= ~(1ULL << (id % SLOTS));
	else if (t->latest == sl->min)
		sl->dirty = true;
}

/* Adds due timer t (key k) to the end of its bucket's list in ds, marked as firing. A
 * bucket's head is set up by its first timer, with no branch. */
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

/* Fetches the timer at p (only a hint) for writing: both of its lines, since the caller's
 * array need not align it. */
static inline void prefetch_timer(const void *p)
{
	__builtin_prefetch(p, 1);
	/* integer arithmetic: p may be NULL */
	__builtin_prefetch((const void *)((uintptr_t)p + sizeof(struct pn_timer) - 1), 1);
}

/* Files t, whose slot nk passed, again: finer, or the due list (or ds). Whether it
 * cascaded. */
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

/* Advances cur to nk for pn_wheel_window: the slots nk reaches emptied and their timers
 * filed again, one list after the other in slot order, so that the due list mostly comes
 * in order. */
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

/* Advances cur to nk for an expiry: the passed slots' timers due by nk go to ds, the
 * others finer. LANES lists are walked side by side, so that their cache misses overlap;
 * each in its order, which the buckets' stable order needs. */
static void advance_expire(struct pn_wheel *w, uint64_t nk, struct due_set ds)
{
	struct pn_timer_link *chain[NSLOT];
	unsigned nch = detach(w, nk, chain);
	struct pn_timer_link *p[LANES];
	unsigned next = 0, live = 0;
	uint64_t cascaded = 0;
	while (live < LANES && next < nch)
		p[live++] = chain[next++];
	/* lanes p[0 .. live) are not done; a finished one takes the next list, or the last
	 * lane's place */
	while (live) {
		for (unsigned k = 0; k < live; k++) {
			struct pn_timer_link *l = p[k];
			p[k] = l->next;
			prefetch_timer(p[k]);
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
	/* timers filed relative to now: a far cur would cascade them all at the first expiry */
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

/* Re-adding a pending timer, out of line and reached by a tail call, so that the common add
 * needs no stack frame. */
static __attribute__((noinline)) int readd(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                                           int64_t precision, int64_t period)
{
	if (t->wheel != w)
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

/* The walk's next bucket, or NBKT. Only fire_buckets clears bits, behind its walks. */
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
	struct bucket_walk bw = {0, w->bbits[0]};
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
			/* every later timer's deadline is >= this slot's base */
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
	/* a wakeup at most WINDOW_AHEAD ahead: move the wheel's time there now, filing every
	 * timer due by then in the due list, so that only those are scanned. Farther, timers
	 * added until then would all go to the unsorted due list. Not from a callback. */
	bool advanced = !w->in_expire && kb > w->cur && kb - w->cur <= WINDOW_AHEAD;
	if (advanced)
		advance(w, kb);
	int64_t e = list_max_deadline(&w->slots[FIRE].head, b);
	struct bucket_walk bw = {0, w->bbits[0]};
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
	/* the last two non-empty slots starting at or before b: the last may hold only
	 * deadlines past b, and then every one in the one before is <= b */
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
	/* k - 1 can exceed 2^64 after a jump across the whole timebase: saturate */
	unsigned __int128 missed = (unsigned __int128)w->st.missed + (unsigned __int128)(k - 1);
	w->st.missed = missed > UINT64_MAX ? UINT64_MAX : (uint64_t)missed;
	t->deadline = nd > INT64_MAX ? INT64_MAX : (int64_t)nd;
	t->latest = sat_add(t->deadline, precision);
	place(w, t, w->seq++ & SEQMASK);
	w->count++;
}

static inline void fire(struct pn_wheel *w, struct pn_timer *t, int64_t now)
{
	if (t->period > 0)
		rearm(w, t, now);
	w->st.fired++;
	if (t->fn)
		t->fn(w, t, t->arg);
}

#define FETCH_AHEAD 8

static inline void prefetch_bucket(const struct pn_wheel *w, size_t a)
{
	if (a < NBKT) {
		prefetch_timer(w->bkt[a].next);
		prefetch_timer(w->bkt[a].prev);
	}
}

/* Fires the buckets' timers, each bucket sorted first. A bucket's bit stays set until it
 * is done, so that next_wake sees its timers; a callback that cancels or re-adds one
 * unlinks it from its bucket. The bucket FETCH_AHEAD on is fetched meanwhile. The number
 * fired. */
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
		/* an empty wheel adopts any time (a simulated timebase sets it so) */
		w->cur = nk;
		return 0;
	}
	struct slot *due = &w->slots[DUE];
	struct pn_timer_link *firing = &w->slots[FIRE].head;
	int64_t fired = 0;
	if (nk > w->cur) {
		/* the due list and what advance_expire finds due go into the buckets */
		due_set_init(&w->geo, w->cur, nk);
		collect_due_list(w, w->geo);
		advance_expire(w, nk, w->geo);
		if (!w->bsum)
			return 0;
		w->in_expire = true;
		fired = fire_buckets(w, now);
		goto done;
	}
	if (list_empty(&due->head))
		return 0;
	/* now < cur (a caller's clock behind an earlier call): only the prefix up to now */
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
			/* waking anywhere in [e, l] fires the same timers */
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
			e = 1; /* a past absolute time fires at once; 0 would disarm */
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
