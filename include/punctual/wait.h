/* SPDX-License-Identifier: MIT */
/*
 * punctual/wait.h: precise waits for event loops: poll and epoll_wait with an absolute
 * deadline and a precision, never returning 0 before the deadline, late by at most the
 * precision unless the machine stalls. They use pn_sleep_until's learned wakeup lateness
 * (the same per-thread knowledge: a thread's sleeps and waits teach each other): the
 * kernel wait ends early enough, then the final stretch polls the fds with a zero
 * timeout until the deadline, so an fd that becomes ready ends the wait at once in every
 * phase. The last of those polls ends at the deadline rather than starting there (a
 * system call after the deadline makes the wait late by that call): an fd that becomes
 * ready in the last microsecond may be reported by the next wait instead, as one that
 * becomes ready while the real call returns.
 *
 * Unlike pn_sleep_until, a signal handler that runs during the wait ends it with -EINTR,
 * as the real calls do (event loops rely on it): in the final stretch the thread blocks
 * signals and each zero-timeout poll lets in those its mask allows. Timer slack: as
 * pn_sleep_until, the thread keeps the slack the wait chose.
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

/* poll(fds, n) until deadline (pn_now()'s timebase, ns): the ready count (revents set)
 * as soon as an fd is ready; 0 at a time t with deadline <= t (all revents 0); -errno as
 * poll reports it (-EINTR when a signal handler ran, -EFAULT, -EINVAL, -ENOMEM). A
 * deadline already past is one non-blocking poll. -EINVAL for precision < 0. */
PN_API int pn_poll_until(struct pollfd *fds, nfds_t n, int64_t deadline, int64_t precision);

/* epoll_wait(epfd, ev, max) until deadline, with pn_poll_until's contract: the number of
 * events in ev, 0 at the deadline, or -errno (-EINTR, -EBADF, -EINVAL for max <= 0 or
 * precision < 0). */
PN_API int pn_epoll_wait_until(int epfd, struct epoll_event *ev, int max, int64_t deadline,
                               int64_t precision);

#ifdef __cplusplus
}
#endif
#endif
