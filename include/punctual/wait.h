/* SPDX-License-Identifier: MIT */
/*
 * punctual/wait.h: poll and epoll_wait with an absolute deadline and a precision, never
 * returning 0 before the deadline, late by at most the precision unless the machine
 * stalls. A ready fd ends the wait at once; a signal handler ends it with -EINTR.
 */
#ifndef PUNCTUAL_WAIT_H
#define PUNCTUAL_WAIT_H

#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ready count; 0 at a time t with deadline <= t; poll's -errno. -EINVAL for
 * precision < 0. */
PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision);

/* pn_poll_until's contract; -EINVAL also for max <= 0. */
PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision);

#ifdef __cplusplus
}
#endif
#endif
