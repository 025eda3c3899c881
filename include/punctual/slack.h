/* SPDX-License-Identifier: MIT */
/*
 * punctual/slack.h: timer slack, how late the kernel may wake a thread's timers to
 * coalesce wakeups; per thread.
 */
#ifndef PUNCTUAL_SLACK_H
#define PUNCTUAL_SLACK_H

#include <stdint.h>
#include <sys/types.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's slack in ns; never fails. */
PN_API int64_t pn_slack_get(void);

/* 0 resets it to the thread's default. 0; -EINVAL if ns < 0 or > ULONG_MAX. */
PN_API int pn_slack_set(int64_t ns);

/* Another task's slack (a thread id works), or -EINVAL, -ESRCH, -EPERM, -ENOENT, -EIO. */
PN_API int64_t pn_slack_get_pid(pid_t pid);

/* 0 or -EINVAL, -ESRCH, -EPERM, -ENOENT. */
PN_API int pn_slack_set_pid(pid_t pid, int64_t ns);

#ifdef __cplusplus
}
#endif
#endif
