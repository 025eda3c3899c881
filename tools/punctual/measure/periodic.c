/* SPDX-License-Identifier: MIT */
/*
 * measure/periodic.c: cyclictest's loop (absolute deadlines, next += interval), which
 * also counts the periods it missed.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <punctual/clock.h>
#include "measure/periodic.h"
#include "tool.h"

int periodic_run(int64_t interval, int64_t duration, struct periodic_result *r)
{
	memset(r, 0, sizeof(*r)); /* not a compound literal: the histogram is large */
	pn_hist_init(&r->latency);
	struct pn_hist *h = &r->latency;
	int e = 0;
	int64_t start = pn_now(), next = start + interval, end = start + duration;
	while (next <= end) {
		struct timespec ts = {next / 1000000000LL, next % 1000000000LL};
		while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
			;
		if (e != 0) {
			e = -e; /* clock_nanosleep returns a positive errno */
			break;
		}
		int64_t now = pn_now();
		r->last = now - next;
		if (r->last < 0)
			r->early++;
		pn_hist_record(h, r->last);
		/* cyclictest skips the periods it overran without saying so: count them */
		next += interval;
		while (next <= now) {
			next += interval;
			r->missed++;
		}
		if ((pn_hist_count(h) & 1023) == 0)
			progress("sleep --periodic: %llu cycles, max %.1f us",
			         (unsigned long long)pn_hist_count(h),
			         (double)pn_hist_max(h) / 1e3);
	}
	progress_done();
	r->elapsed = pn_now() - start;
	return e;
}
