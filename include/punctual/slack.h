/* SPDX-License-Identifier: MIT */
/*
 * punctual/slack.h: timer slack, the amount by which the kernel may delay a thread's
 * timers (select, poll, epoll_wait, nanosleep, clock_nanosleep, futex) to coalesce
 * wakeups. 50 us by default; per thread; a new thread copies its creator's value and
 * exec keeps it. Slack never makes a timer early. Threads under a realtime policy
 * always have slack 0 on recent kernels (writes are ignored).
 */
#ifndef PUNCTUAL_SLACK_H
#define PUNCTUAL_SLACK_H

#include <stdint.h>
#include <sys/types.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's timer slack in ns (prctl PR_GET_TIMERSLACK); never fails. */
PN_API int64_t pn_slack_get(void);

/* Sets the calling thread's timer slack to ns; 0 resets it to the thread's default (the
 * value it inherited at creation, as the kernel defines). Returns 0; -EINVAL if ns < 0
 * or beyond what the kernel accepts (ULONG_MAX). */
PN_API int pn_slack_set(int64_t ns);

/* Another task's timer slack in ns, from /proc/PID/timerslack_ns; a thread id works as
 * pid. Returns the value (>= 0) or -EINVAL (pid <= 0), -ESRCH (no such task), -EPERM
 * (needs CAP_SYS_NICE over the task), -ENOENT (kernel older than 4.6, no such file),
 * -EIO (the file holds no number). */
PN_API int64_t pn_slack_get_pid(pid_t pid);

/* Sets another task's timer slack through /proc/PID/timerslack_ns; 0 resets it to the
 * task's default. Returns 0 or -EINVAL (pid <= 0 or ns < 0), -ESRCH, -EPERM, -ENOENT. */
PN_API int pn_slack_set_pid(pid_t pid, int64_t ns);

#ifdef __cplusplus
}
#endif
#endif
