/* SPDX-License-Identifier: MIT */
/*
 * real.h: the real libc functions the shim interposes, looked up once, and the shim's
 * kernel table, through which the engine waits the program's way (cancellation points).
 * Internal to the shim.
 */
#ifndef PUNCTUAL_SHIM_REAL_H
#define PUNCTUAL_SHIM_REAL_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "kernel.h"

struct pn__real {
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*usleep)(useconds_t);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
	                      const struct timespec *);
	void (*longjmp)(struct __jmp_buf_tag *, int);
	void (*_longjmp)(struct __jmp_buf_tag *, int);
	void (*siglongjmp)(struct __jmp_buf_tag *, int);
	void (*longjmp_chk)(struct __jmp_buf_tag *, int);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
	                    const sigset_t *);
	int (*poll_chk)(struct pollfd *, nfds_t, int, size_t);
	int (*ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
	                 size_t);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
	               const sigset_t *);
	int (*sem_trywait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
	/* what ends a lend first (signal_calls.c) */
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	pid_t (*fork)(void);
	int (*posix_spawn)(pid_t *, const char *, const void *, const void *, char *const[],
	                   char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const void *, const void *, char *const[],
	                    char *const[]);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*sched_getscheduler)(pid_t);
	int (*sched_getparam)(pid_t, struct sched_param *);
	int (*sched_setscheduler)(pid_t, int, const struct sched_param *);
	int (*sched_setparam)(pid_t, const struct sched_param *);
	int (*pthread_getschedparam)(pthread_t, int *, struct sched_param *);
	int (*pthread_setschedparam)(pthread_t, int, const struct sched_param *);
	int (*pthread_setschedprio)(pthread_t, int);
	int (*setpriority)(int, unsigned, int);
	int (*nice)(int);
	int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
};

/* The real functions (NULL: libc has none), set at load or at a call before the
 * constructor. */
extern struct pn__real pn__real;
void pn__real_resolve(void);
/* Resolves once if needed, then returns &pn__real. */
static inline const struct pn__real *pn__real_get(void)
{
	if (!pn__real.nanosleep)
		pn__real_resolve();
	return &pn__real;
}

/* The shim's kernel table, as -errno. */
extern const struct pn__kernel pn__real_kernel;
/* The table for poll(): its ppoll is the program's own poll where a filter denies ppoll
 * (rounded up to the ms, never early), from then on. */
extern const struct pn__kernel pn__real_poll_kernel;

#endif
