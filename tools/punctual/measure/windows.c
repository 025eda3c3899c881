/* SPDX-License-Identifier: MIT */
/* measure/windows.c: the offline optimum of wakeups, for `punctual timers` and `probe`. */
#include <stdlib.h>

#include "measure/windows.h"

static int by_right_end(const void *a, const void *b)
{
	const struct window *x = a, *y = b;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

uint64_t offline_optimum(struct window *win, size_t n)
{
	if (n == 0)
		return 0; /* win may be NULL, which qsort must not get even for 0 elements */
	qsort(win, n, sizeof(*win), by_right_end);
	uint64_t wakeups = 0;
	int64_t at = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (wakeups && win[i].lo <= at)
			continue; /* already open at the last wakeup, which is <= its right end */
		at = win[i].hi;
		wakeups++;
	}
	return wakeups;
}
