/* SPDX-License-Identifier: MIT */
/*
 * wheel_sort.c: the timer wheel's stable sorts by deadline (wheel_sort.h): a merge sort
 * of a timer list that allocates nothing, and sorts of (key, value) records in the
 * wheel's buffer: an LSD radix sort, a bucket sort (expiry's, for spread and clustered
 * deadlines alike) and a merge sort for short record lists.
 */
#include <stdbool.h>
#include <string.h>

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

struct pn__srec *pn__srec_sort(struct pn__srec *src, struct pn__srec *dst, size_t n)
{
	enum { RUN = 8 };
	for (size_t lo = 0; lo < n; lo += RUN) {
		size_t hi = lo + RUN < n ? lo + RUN : n;
		for (size_t i = lo + 1; i < hi; i++) {
			struct pn__srec x = src[i];
			size_t j = i;
			for (; j > lo && x.key < src[j - 1].key; j--)
				src[j] = src[j - 1];
			src[j] = x;
		}
	}
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
