/* SPDX-License-Identifier: MIT */
/*
 * sort.c: the timer wheel's stable sorts by deadline: a merge sort of a timer list that
 * allocates nothing, and a radix and a bucket sort of records in the wheel's buffer; the
 * sorts of the due list and of expiry's buckets.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wheel/impl.h"
#include "wheel/sort.h"

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

/* Sorts a[0..n) (n <= PN__SORT_RUN) by deadline, stably, over compact records rather than
 * the timers' scattered memory. */
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

/* Runs of PN__SORT_RUN nodes sorted as arrays, then merged bottom-up over the next
 * pointers; the prev pointers rebuilt at the end. */
void pn__wheel_sort_links(struct pn_timer_link *h)
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

struct pn__srec *pn__wheel_sort_radix(struct pn__srec *src, struct pn__srec *dst, size_t n,
                                      uint64_t range)
{
	/* one pass counts every digit; a digit all keys share costs no pass (MSD first with
	 * insertion sorts in the buckets is slower: its compares mispredict) */
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

struct pn__srec *pn__wheel_sort_by_bucket(struct pn__srec *src, struct pn__srec *dst,
                                          uint32_t *count, size_t ncount, size_t n, uint64_t range)
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
		return pn__wheel_sort_radix(src, dst, n, range);
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
		/* a crowded bucket (a cluster of deadlines): sorted the same way over the low
		 * bits, with the counts after these */
		for (size_t i = at; i < at + c; i++)
			dst[i].key &= low;
		struct pn__srec *r = pn__wheel_sort_by_bucket(dst + at, src + at, count + nb,
		                                              ncount - nb, c, low);
		if (r != dst + at)
			memcpy(dst + at, r, c * sizeof(*r));
	}
	return dst;
}

/* ---- the wheel's buffer and its sorts (impl.h) ---- */

static inline size_t sortbuf_size(size_t cap)
{
	return cap * (2 * sizeof(struct pn__srec) + sizeof(uint32_t));
}

static void set_sortbuf(struct pn_wheel *w, struct pn__srec *b, size_t cap)
{
	free(w->sortbuf);
	w->sortbuf = b;
	w->sortcap = cap;
}

/* Marks the sorted due list's timers up to now as firing; the first after now, or h. */
static struct pn_timer_link *mark_due_prefix(struct pn_timer_link *h, int64_t now)
{
	struct pn_timer_link *l = h->next;
	for (; l != h && pn__timer_of(l)->deadline <= now; l = l->next)
		mark_firing(pn__timer_of(l));
	return l;
}

/* Sorts list h by deadline, stably: one walk over the scattered timers finds the range and
 * copies (deadline, link) records into the wheel's buffer, grown as needed; an O(n) bucket
 * sort; one relinking pass. Short lists, or no memory, take the list sort. */
void pn__wheel_sort_list(struct pn_wheel *w, struct pn_timer_link *h)
{
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
		return;
	if (n < w->records_min) {
		pn__wheel_sort_links(h);
		return;
	}
	if (n > cap) {
		size_t ncap = n > 2 * cap ? n : 2 * cap;
		/* the bucket sort's counts are 32 bits */
		struct pn__srec *b =
		        w->sort_fail || ncap > UINT32_MAX ? NULL : malloc(sortbuf_size(ncap));
		if (!b) {
			pn__wheel_sort_links(h);
			return;
		}
		set_sortbuf(w, b, ncap);
		buf = b;
		cap = ncap;
		/* the same n links as the first walk (for scan-build) */
		struct pn_timer_link *l = h->next;
		for (size_t i = 0; i < n; i++, l = l->next)
			buf[i] = (struct pn__srec){(uint64_t)pn__timer_of(l)->deadline,
			                           (uintptr_t)l};
	}
	struct pn__srec *src = buf;
	for (size_t i = 0; i < n; i++)
		src[i].key -= (uint64_t)lo;
	src = pn__wheel_sort_by_bucket(src, buf + cap, (uint32_t *)(buf + 2 * cap), cap, n,
	                               (uint64_t)hi - (uint64_t)lo);
	struct pn_timer_link *pl = h;
	for (size_t i = 0; i < n; i++) {
		struct pn_timer_link *l = (struct pn_timer_link *)src[i].v;
		l->prev = pl;
		pl->next = l;
		pl = l;
	}
	pl->next = h;
	h->prev = pl;
}

/* Sorts bucket h: by insertion, or past w->few timers (a cluster) as a list. */
void pn__wheel_sort_bucket(struct pn_wheel *w, struct pn_timer_link *h)
{
	size_t n = 1;
	if (h->next->next == h)
		return;
	for (struct pn_timer_link *x = h->next->next, *nx; x != h; x = nx) {
		nx = x->next;
		if (++n > w->few) {
			pn__wheel_sort_list(w, h); /* what is sorted so far stays a list */
			return;
		}
		int64_t d = pn__timer_of(x)->deadline;
		struct pn_timer_link *p = x->prev; /* never h: x is not the first */
		if (pn__timer_of(p)->deadline <= d)
			continue;
		p->next = nx;
		nx->prev = p;
		do
			p = p->prev;
		while (p != h && pn__timer_of(p)->deadline > d);
		x->next = p->next;
		x->prev = p;
		p->next->prev = x;
		p->next = x;
	}
}

/* Sorts the due list and marks the timers up to now as firing; the first after now, or
 * the head. */
struct pn_timer_link *pn__wheel_sort_due(struct pn_wheel *w, int64_t now)
{
	struct pn_timer_link *h = &w->slots[DUE].head;
	pn__wheel_sort_list(w, h);
	return mark_due_prefix(h, now);
}
