/* SPDX-License-Identifier: MIT */
/*
 * sort.h: the timer wheel's stable sorts by deadline (sort.c), internal.
 * Stable: equal deadlines keep their order, which is insertion order in the wheel's lists.
 */
#ifndef PUNCTUAL_WHEEL_SORT_H
#define PUNCTUAL_WHEEL_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <punctual/wheel.h>

/* Nodes pn__wheel_sort_links sorts at a time in an array on the stack (2 x 2 KiB). */
#define PN__SORT_RUN 128

static inline struct pn_timer *pn__timer_of(struct pn_timer_link *l)
{
	return (struct pn_timer *)l; /* link is the first member */
}

/* Sorts the circular list headed by h by deadline, stably: O(n log n), no allocation. */
void pn__wheel_sort_links(struct pn_timer_link *h);

/* A due timer as the sorts see it: its key (deadline - the smallest one) and what names
 * it (its link). */
struct pn__srec {
	uint64_t key;
	uintptr_t v;
};

/* Sorts src[0..n) by key, stably, using dst (room for n) as the other half: 8-bit digits
 * over range (the largest key, > 0), one counting pass for all of them, a digit every key
 * shares costs no pass. Returns the half that holds the result (src or dst). */
struct pn__srec *pn__wheel_sort_radix(struct pn__srec *src, struct pn__srec *dst, size_t n,
                                      uint64_t range);

/* Sorts src[0..n) by key, stably, using dst (room for n) as the other half and count
 * (ncount counts) as scratch: one counting pass into about n / 2 buckets by the key's
 * high bits (range is the largest key, > 0), then insertion sorts of the buckets, and a
 * crowded bucket (a cluster of deadlines) sorted the same way over its low bits. About
 * 3 passes over the records, where the radix sort takes 2 a byte of range (it is the
 * fallback when the counts run out). Changes the keys; returns the half that holds the
 * result (src or dst). */
struct pn__srec *pn__wheel_sort_by_bucket(struct pn__srec *src, struct pn__srec *dst,
                                          uint32_t *count, size_t ncount, size_t n, uint64_t range);

#endif
