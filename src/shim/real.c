/* SPDX-License-Identifier: MIT */
/*
 * real.c: the real libc functions behind the shim's, found with dlsym(RTLD_NEXT) at load,
 * and the shim's kernel table over them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>

#include "internal.h"
#include "shim/real.h"

struct pn__real pn__real;

#define FIND(field, name) (pn__real.field = (__typeof__(pn__real.field))dlsym(RTLD_NEXT, name))

__attribute__((constructor)) void pn__real_resolve(void)
{
	FIND(clock_nanosleep, "clock_nanosleep");
	FIND(usleep, "usleep");
	/* the unversioned name can find glibc's old compat cond function on x86-64: ask for the
	 * current version, unless an interposer (a sanitizer) is between us and libc */
	void *f = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
#ifdef __GLIBC__
	void *compat = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.2.5");
	void *current = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
	if ((!f || f == compat) && current)
		f = current;
#endif
	pn__real.cond_timedwait = (__typeof__(pn__real.cond_timedwait))f;
	FIND(cond_clockwait, "pthread_cond_clockwait");
	FIND(longjmp, "longjmp");
	FIND(_longjmp, "_longjmp");
	FIND(siglongjmp, "siglongjmp");
	FIND(longjmp_chk, "__longjmp_chk");
	FIND(poll, "poll");
	FIND(ppoll, "ppoll");
	FIND(epoll_wait, "epoll_wait");
	FIND(epoll_pwait, "epoll_pwait");
	FIND(epoll_pwait2, "epoll_pwait2");
	FIND(poll_chk, "__poll_chk");
	FIND(ppoll_chk, "__ppoll_chk");
	FIND(select, "select");
	FIND(pselect, "pselect");
	FIND(sem_trywait, "sem_trywait");
	FIND(sem_timedwait, "sem_timedwait");
	FIND(sem_clockwait, "sem_clockwait");
	FIND(sigtimedwait, "sigtimedwait");
	FIND(sigaction, "sigaction");
	FIND(pthread_sigmask, "pthread_sigmask");
	FIND(fork, "fork");
	FIND(posix_spawn, "posix_spawn");
	FIND(posix_spawnp, "posix_spawnp");
	FIND(execve, "execve");
	FIND(execv, "execv");
	FIND(execvp, "execvp");
	FIND(execvpe, "execvpe");
	FIND(fexecve, "fexecve");
	FIND(sched_getscheduler, "sched_getscheduler");
	FIND(sched_getparam, "sched_getparam");
	FIND(sched_setscheduler, "sched_setscheduler");
	FIND(sched_setparam, "sched_setparam");
	FIND(pthread_getschedparam, "pthread_getschedparam");
	FIND(pthread_setschedparam, "pthread_setschedparam");
	FIND(pthread_setschedprio, "pthread_setschedprio");
	FIND(setpriority, "setpriority");
	FIND(nice, "nice");
	FIND(prctl, "prctl");
	FIND(nanosleep, "nanosleep"); /* last: pn__real_get's sign that all are found */
}

/* A positive errno; a cancellation point, as the program's call was. */
static int real_sleep_abs(clockid_t clk, int64_t target)
{
	struct timespec ts = pn__ns_ts(target);
	return pn__real.clock_nanosleep ? -pn__real.clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL)
	                                : -ENOSYS;
}

static int real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	return pn__neg_errno(pn__real.ppoll(fds, n, ts, mask));
}

static int real_epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
                             const sigset_t *mask)
{
	return pn__real.epoll_pwait2 ? pn__neg_errno(pn__real.epoll_pwait2(epfd, ev, max, ts, mask))
	                             : -ENOSYS;
}

static int real_epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms, const sigset_t *mask)
{
	return pn__neg_errno(pn__real.epoll_pwait(epfd, ev, max, ms, mask));
}

static int real_pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                        const sigset_t *mask)
{
	return pn__neg_errno(pn__real.pselect(n, r, w, e, ts, mask));
}

const struct pn__kernel pn__real_kernel = {real_sleep_abs, real_ppoll, real_epoll_pwait2,
                                           real_epoll_pwait, real_pselect};

/* A timeout in whole ms, rounded up (poll's unit), at most INT_MAX. */
static int ts_ms_ceil(const struct timespec *ts)
{
	int64_t ms = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
	return ms < INT_MAX ? (int)ms : INT_MAX;
}

/* poll()'s waits: a ppoll denied falls back to the program's own poll and marks the
 * process, whose spin then gives the rest back and whose later calls go to libc. */
static int poll_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	int r = pn__real.ppoll(fds, n, ts, mask);
	if (r >= 0 || !pn__kernel_denial(errno))
		return pn__neg_errno(r);
	pn__kernel_deny();
	return pn__neg_errno(pn__real.poll(fds, n, ts ? ts_ms_ceil(ts) : -1));
}

const struct pn__kernel pn__real_poll_kernel = {real_sleep_abs, poll_ppoll, real_epoll_pwait2,
                                                real_epoll_pwait, real_pselect};
