/* SPDX-License-Identifier: MIT */
/*
 * wheel_sort.c: the timer wheel's stable sorts by deadline (wheel_sort.h): a merge sort
 * of a timer list that allocates nothing, and sorts of (key, value) records in the
 * wheel's buffer: an LSD radix sort, a bucket sort (expiry's, for spread and clustered
 * deadlines alike) and a merge sort for short record lists. Then expiry's use of them
 * (wheel_impl.h): the buffer, the due list's sort and the firing array's order.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wheel_impl.h"
#include "wheel_sort.h"

static inline bool before(const struct pn_timer *a, const struct pn_timer *b)
{
	return a->deadline < b->deadline;
}

struct rec {
	int64_t deadline;
	struct pn_timer_link *l;
};

static inline bool rec_before(const struct rec *a, const struct rec *b)
{
	return a->deadline < b->deadline;
}

/* Sorts a[0..n) (n <= PN__SORT_RUN) by deadline, stably: bottom-up merge sort between a and tmp,
 * over compact records rather than the timers' scattered memory. */
static void rec_sort(struct rec *a, struct rec *tmp, size_t n)
{
	struct rec *src = a, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = rec_before(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		struct rec *x = src;
		src = dst;
		dst = x;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Runs of PN__SORT_RUN nodes are sorted as arrays, then merged bottom-up over the next
 * pointers; the prev pointers are rebuilt at the end. */
void pn__list_sort(struct pn_timer_link *h)
{
	if (h->next == h || h->next->next == h)
		return;
	struct rec r[PN__SORT_RUN], tmp[PN__SORT_RUN];
	struct pn_timer_link *head = NULL, *last = NULL;
	h->prev->next = NULL;
	for (struct pn_timer_link *p = h->next; p;) {
		size_t n = 0;
		for (; p && n < PN__SORT_RUN; p = p->next) {
			const struct pn_timer *t = pn__timer_of(p);
			r[n++] = (struct rec){t->deadline, p};
		}
		rec_sort(r, tmp, n);
		for (size_t i = 0; i < n; i++) {
			if (last)
				last->next = r[i].l;
			else
				head = r[i].l;
			last = r[i].l;
		}
	}
	last->next = NULL;
	for (size_t width = PN__SORT_RUN;; width *= 2) {
		struct pn_timer_link *p = head, *tail = NULL;
		size_t merges = 0;
		head = NULL;
		while (p) {
			merges++;
			struct pn_timer_link *q = p;
			size_t psize = 0, qsize = width;
			for (size_t i = 0; i < width && q; i++) {
				psize++;
				q = q->next;
			}
			while (psize > 0 || (qsize > 0 && q)) {
				struct pn_timer_link *e;
				if (psize == 0) {
					e = q, q = q->next, qsize--;
				} else if (qsize == 0 || !q) {
					e = p, p = p->next, psize--;
				} else if (!before(pn__timer_of(q), pn__timer_of(p))) {
					e = p, p = p->next, psize--;
				} else {
					e = q, q = q->next, qsize--;
				}
				if (tail)
					tail->next = e;
				else
					head = e;
				tail = e;
			}
			p = q;
		}
		tail->next = NULL;
		if (merges <= 1)
			break;
	}
	struct pn_timer_link *prev = h;
	for (struct pn_timer_link *n = head; n; n = n->next) {
		n->prev = prev;
		prev->next = n;
		prev = n;
	}
	prev->next = h;
	h->prev = prev;
}

struct pn__srec *pn__radix_sort(struct pn__srec *src, struct pn__srec *dst, size_t n,
                                uint64_t range)
{
	/* 8-bit digits over the range present; one pass counts every digit, and a digit
	 * all keys share costs no pass. (Most significant digit first with insertion sort
	 * in the buckets was slower here: its compares mispredict.) */
	int npass = (64 - __builtin_clzll(range) + 7) / 8;
	size_t count[8][256];
	memset(count, 0, (size_t)npass * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < npass; p++)
			count[p][(src[i].key >> (8 * p)) & 255]++;
	for (int p = 0; p < npass; p++) {
		unsigned shift = 8 * (unsigned)p;
		if (count[p][(src[0].key >> shift) & 255] == n)
			continue;
		size_t at[256];
		size_t sum = 0;
		for (int b = 0; b < 256; b++) {
			at[b] = sum;
			sum += count[p][b];
		}
		for (size_t i = 0; i < n; i++)
			dst[at[(src[i].key >> shift) & 255]++] = src[i];
		struct pn__srec *x = src;
		src = dst;
		dst = x;
	}
	return src;
}

/* Stable insertion sort of a[0..n), for short runs. */
static void srec_insertion(struct pn__srec *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct pn__srec x = a[i];
		size_t j = i;
		for (; j > 0 && x.key < a[j - 1].key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

struct pn__srec *pn__srec_sort(struct pn__srec *src, struct pn__srec *dst, size_t n)
{
	enum { RUN = 8 };
	for (size_t lo = 0; lo < n; lo += RUN)
		srec_insertion(src + lo, lo + RUN < n ? RUN : n - lo);
	for (size_t width = RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = src[j].key < src[i].key ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		struct pn__srec *x = src;
		src = dst;
		dst = x;
	}
	return src;
}

struct pn__srec *pn__bucket_sort(struct pn__srec *src, struct pn__srec *dst, uint32_t *count,
                                 size_t ncount, size_t n, uint64_t range)
{
	/* about 2 records a bucket: the power of 2 at or above n / 2 */
	size_t nb = 2;
	while (nb < n / 2)
		nb *= 2;
	int shift = 0;
	while ((range >> shift) >= nb)
		shift++;
	nb = (size_t)(range >> shift) + 1;
	if (nb > ncount)
		return pn__radix_sort(src, dst, n, range);
	memset(count, 0, nb * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		count[src[i].key >> shift]++;
	uint32_t sum = 0;
	for (size_t b = 0; b < nb; b++) {
		uint32_t c = count[b];
		count[b] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		dst[count[src[i].key >> shift]++] = src[i];
	if (shift == 0)
		return dst; /* a bucket's keys are equal */
	/* count[b] is now where bucket b + 1 starts */
	uint64_t low = (1ULL << shift) - 1;
	for (size_t b = 0, at = 0; b < nb; at = count[b++]) {
		size_t c = count[b] - at;
		if (c <= 1)
			continue;
		if (c == 2) {
			struct pn__srec *x = dst + at;
			if (x[1].key < x[0].key) {
				struct pn__srec y = x[0];
				x[0] = x[1];
				x[1] = y;
			}
			continue;
		}
		if (c <= 32) {
			srec_insertion(dst + at, c);
			continue;
		}
		/* A crowded bucket (a cluster of deadlines): its keys share their high bits;
		 * sorted the same way over the low ones, with the counts after these. */
		for (size_t i = at; i < at + c; i++)
			dst[i].key &= low;
		struct pn__srec *r =
		        pn__bucket_sort(dst + at, src + at, count + nb, ncount - nb, c, low);
		if (r != dst + at)
			memcpy(dst + at, r, c * sizeof(*r));
	}
	return dst;
}

/* ---- expiry's buffer and its sorts (wheel_impl.h) ---- */

/* The buffer for cap records: two halves of cap sort records, the firing array, the
 * bucket sort's counts. */
static inline size_t sortbuf_size(size_t cap)
{
	return cap * (2 * sizeof(struct pn__srec) + sizeof(struct pn_timer *) + sizeof(uint32_t));
}

/* Replaces the buffer with b (cap records), keeping the first n records and timers. */
static void set_sortbuf(struct pn_wheel *w, struct pn__srec *b, size_t cap, size_t n)
{
	struct pn_timer **f = (struct pn_timer **)(b + 2 * cap);
	if (n) {
		memcpy(b, w->sortbuf, n * sizeof(*b));
		memcpy(f, w->firing, n * sizeof(*f));
		memcpy(f + cap, pn__sortcount(w), n * sizeof(uint32_t)); /* expiry's chains */
	}
	free(w->sortbuf);
	w->sortbuf = b;
	w->sortcap = cap;
	w->firing = f;
}

/* Doubles the buffer (at least 1024 records), keeping n; false when it cannot. */
bool pn__wheel_grow_sortbuf(struct pn_wheel *w, size_t n)
{
	size_t ncap = w->sortcap ? 2 * w->sortcap : 1024;
	struct pn__srec *b = w->sort_fail || ncap > UINT32_MAX ? NULL : malloc(sortbuf_size(ncap));
	if (!b)
		return false;
	set_sortbuf(w, b, ncap, n);
	return true;
}

/* Marks the due list's timers up to now as firing (the list is sorted); returns the
 * first one after now, or the head. */
static struct pn_timer_link *mark_due_prefix(struct pn_timer_link *h, int64_t now)
{
	struct pn_timer_link *l = h->next;
	for (; l != h && pn__timer_of(l)->deadline <= now; l = l->next)
		mark_firing(pn__timer_of(l));
	return l;
}

/* Sorts the due list by deadline, stably (equal deadlines keep their list order, which
 * is insertion order), and marks the timers up to now as firing; returns the first timer
 * after now, or the head when all are due.
 *
 * Expiry walks lists of timers scattered in the caller's memory, so the walks are what
 * it costs. One walk finds the range and whether the list is in order already (then
 * nothing moves) and copies (deadline, link) records into a buffer the wheel keeps; a
 * list longer than the buffer has ever been grows it and takes a second walk. The
 * records are sorted by an LSD radix sort over the range present, O(n) where a list sort
 * is O(n log n) with a pointer chase per step, and the list is relinked from them in one
 * pass, which marks the firing prefix too. Short lists, or no memory, take list_sort. */
struct pn_timer_link *pn__wheel_sort_due(struct pn_wheel *w, int64_t now)
{
	struct pn_timer_link *h = &w->slots[DUE].head;
	struct pn__srec *buf = w->sortbuf;
	size_t n = 0, cap = w->sortcap;
	int64_t lo = INT64_MAX, hi = INT64_MIN, prev = INT64_MIN;
	bool sorted = true;
	for (struct pn_timer_link *l = h->next; l != h; l = l->next, n++) {
		int64_t d = pn__timer_of(l)->deadline;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sorted = sorted && d >= prev;
		prev = d;
		if (n < cap)
			buf[n] = (struct pn__srec){(uint64_t)d, (uintptr_t)l};
	}
	if (sorted)
		return mark_due_prefix(h, now);
	if (n < w->radix_min) {
		pn__list_sort(h);
		return mark_due_prefix(h, now);
	}
	if (n > cap) {
		/* src and dst halves of 2 x cap records */
		size_t ncap = n > 2 * cap ? n : 2 * cap;
		struct pn__srec *b = w->sort_fail ? NULL : malloc(sortbuf_size(ncap));
		if (!b) {
			pn__list_sort(h);
			return mark_due_prefix(h, now);
		}
		set_sortbuf(w, b, ncap, 0);
		buf = b;
		cap = ncap;
		size_t i = 0;
		for (struct pn_timer_link *l = h->next; l != h; l = l->next, i++)
			buf[i] = (struct pn__srec){(uint64_t)pn__timer_of(l)->deadline,
			                           (uintptr_t)l};
	}
	struct pn__srec *src = buf;
	for (size_t i = 0; i < n; i++)
		src[i].key -= (uint64_t)lo;
	src = pn__radix_sort(src, buf + cap, n, (uint64_t)hi - (uint64_t)lo);
	struct pn_timer_link *pl = h, *after = h;
	uint64_t nowkey = (uint64_t)now - (uint64_t)lo; /* keys are deadline - lo */
	bool past = now < lo;
	for (size_t i = 0; i < n; i++) {
		struct pn_timer_link *l = (struct pn_timer_link *)src[i].v;
		l->prev = pl;
		pl->next = l;
		pl = l;
		if (!past && src[i].key <= nowkey)
			mark_firing(pn__timer_of(l));
		else if (after == h)
			after = l;
	}
	pl->next = h;
	h->prev = pl;
	return after;
}

enum { FEW = 32, CROWDS = 64 };

/* Sorts x[0..n) by key, stably, with scratch (room for n) and the counts free: the
 * bucket sort over the keys' range. */
static void bucket_sort_span(struct pn_wheel *w, struct pn__srec *x, struct pn__srec *scratch,
                             size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		lo = x[i].key < lo ? x[i].key : lo;
		hi = x[i].key > hi ? x[i].key : hi;
	}
	if (lo == hi)
		return; /* equal keys: in order already */
	for (size_t i = 0; i < n; i++)
		x[i].key -= lo;
	struct pn__srec *y = pn__bucket_sort(x, scratch, pn__sortcount(w), w->sortcap, n, hi - lo);
	if (y != x)
		memcpy(x, y, n * sizeof(*x));
}

/* Copies the records that the first nw words of w's buckets chain (through the counts,
 * see pn__chain_append) from src to dst, bucket by bucket in order, and clears those
 * buckets; a bucket's few records are sorted there, a crowded one (more than FEW) is
 * listed in crowd[] as (start, length), to be sorted once src is free. Returns how many
 * were listed, or CROWDS + 1 when more than CROWDS crowded; *m: the records copied. */
static size_t emit(struct pn_wheel *w, const struct pn__srec *src, struct pn__srec *dst, size_t nw,
                   size_t crowd[CROWDS][2], size_t *m)
{
	const uint32_t *link = pn__sortcount(w);
	size_t at = 0, nc = 0;
	for (size_t wi = 0; wi < nw; wi++) {
		for (uint64_t bm = w->bbits[wi]; bm; bm &= bm - 1) {
			size_t b = wi * 64 + (size_t)__builtin_ctzll(bm), from = at;
			uint32_t e = w->btail[b], i = link[e];
			for (;;) {
				dst[at++] = src[i];
				if (i == e)
					break;
				i = link[i];
			}
			if (at - from <= FEW) {
				srec_insertion(dst + from, at - from);
			} else if (nc < CROWDS) {
				crowd[nc][0] = from;
				crowd[nc++][1] = at - from;
			} else {
				nc = CROWDS + 1;
			}
		}
		w->bbits[wi] = 0;
	}
	*m = at;
	return nc;
}

/* Sorts o[0..n), the records of one crowded bucket, by key, stably, with r (room for n)
 * as the other half: they go into about n / 2 of the wheel's buckets (clear, and left
 * clear) over their own range and come back out in the buckets' order, as expiry's do;
 * a crowded one again (a cluster within the cluster) takes the bucket sort. */
static void sort_span(struct pn_wheel *w, struct pn__srec *o, struct pn__srec *r, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		lo = o[i].key < lo ? o[i].key : lo;
		hi = o[i].key > hi ? o[i].key : hi;
	}
	if (lo == hi)
		return; /* equal keys: in order already */
	memcpy(r, o, n * sizeof(*r));
	int want = 1, bits = 64 - __builtin_clzll(hi - lo);
	while (want < BKTBITS && (2ULL << want) < n / 2)
		want++;
	int shift = bits > want ? bits - want : 0;
	for (uint32_t j = 0; j < n; j++)
		pn__chain_append(w->bbits, w->btail, pn__sortcount(w),
		                 (size_t)((r[j].key - lo) >> shift), j);
	size_t crowd[CROWDS][2], m;
	size_t nc = emit(w, r, o, (size_t)((hi - lo) >> shift) / 64 + 1, crowd, &m);
	if (nc > CROWDS)
		bucket_sort_span(w, o, r, n);
	else
		for (size_t k = 0; k < nc; k++)
			bucket_sort_span(w, o + crowd[k][0], r, crowd[k][1]);
}

/* Orders the records an expiry collected by key, stably (equal deadlines keep their
 * order, which is insertion order: timers with equal keys always share a list, lists
 * are collected in their order, and a bucket's chain keeps the order of collection):
 * the buckets are copied out in order, each bucket's few records sorted there, and then
 * each crowded bucket (a cluster of deadlines) sorted again over its own range, once
 * the records' half is free (or, past CROWDS of them, everything at once). Clears the
 * buckets; returns the sorted records. */
struct pn__srec *pn__wheel_sort_firing(struct pn_wheel *w)
{
	struct pn__srec *r = w->sortbuf, *o = w->sortbuf + w->sortcap;
	size_t crowd[CROWDS][2], m;
	size_t nc = emit(w, r, o, NBKT / 64, crowd, &m);
	if (nc > CROWDS)
		bucket_sort_span(w, o, r, m);
	else
		for (size_t k = 0; k < nc; k++)
			sort_span(w, o + crowd[k][0], r, crowd[k][1]);
	return o;
}
