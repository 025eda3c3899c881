/* SPDX-License-Identifier: MIT */
/*
 * sort.h: the timer wheel's stable sorts by deadline: equal deadlines keep their order,
 * which is insertion order in the wheel's lists. Internal.
 */
#ifndef PUNCTUAL_WHEEL_SORT_H
#define PUNCTUAL_WHEEL_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <punctual/wheel.h>

/* Nodes pn__wheel_sort_links sorts at a time on the stack (2 x 2 KiB). */
#define PN__SORT_RUN 128

static inline struct pn_timer *pn__timer_of(struct pn_timer_link *l)
{
	return (struct pn_timer *)l; /* link is the first member */
}

/* Sorts the circular list headed by h by deadline, stably: O(n log n), no allocation. */
void pn__wheel_sort_links(struct pn_timer_link *h);

/* A due timer as the sorts see it: its key (deadline - the smallest one) and its link. */
struct pn__srec {
	uint64_t key;
	uintptr_t v;
};

/* Sorts src[0..n) by key, stably, dst the other half: 8-bit digits over range (the
 * largest key, > 0), a digit every key shares costing no pass. Returns the half holding
 * the result. */
struct pn__srec *pn__wheel_sort_radix(struct pn__srec *src, struct pn__srec *dst, size_t n,
                                      uint64_t range);

/* Sorts src[0..n) by key, stably, dst the other half and count (ncount) scratch: a counting
 * pass into about n / 2 buckets by the high bits, insertion sorts of the buckets, a crowded
 * bucket the same way over its low bits; about 3 passes (the radix sort, the fallback,
 * takes 2 a byte of range). Changes the keys; returns the half holding the result. */
struct pn__srec *pn__wheel_sort_by_bucket(struct pn__srec *src, struct pn__srec *dst,
                                          uint32_t *count, size_t ncount, size_t n, uint64_t range);

#endif
