/* SPDX-License-Identifier: MIT */
/*
 * fds.c: pn_poll_until and pn_epoll_wait_until (punctual/wait.h): the engine's waits
 * (wait.c) on fds, through the library's raw system calls (pn__kernel_raw), so that
 * they never reach the preload shim's own poll and epoll.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/wait.h>
#include "wait/wait.h"

PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision)
{
	if (precision < 0)
		return -EINVAL;
	struct pn__waiter w = {.kind = PN__WAIT_POLL, .k = &pn__kernel_raw, .fds = fds, .n = n};
	w.ret[0] = __builtin_return_address(0);
	struct pn__plan p = PN__PLAN_INIT;
	int r = pn__wait(&w, &p, CLOCK_MONOTONIC, deadline, precision, PN__PLAN_TAIL);
	return pn__wait_tail(&w, &p, r); /* the last microseconds here: one return */
}

PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision)
{
	if (precision < 0 || max <= 0)
		return -EINVAL;
	struct pn__waiter w = {
	        .kind = PN__WAIT_EPOLL, .k = &pn__kernel_raw, .epfd = epfd, .max = max, .ev = ev};
	w.ret[0] = __builtin_return_address(0);
	struct pn__plan p = PN__PLAN_INIT;
	int r = pn__wait(&w, &p, CLOCK_MONOTONIC, deadline, precision, PN__PLAN_TAIL);
	return pn__wait_tail(&w, &p, r);
}
