/* SPDX-License-Identifier: MIT */
/*
 * runs.h: a task's runs as schedstat counts them: its time on a CPU, its time waiting on a
 * run queue, and its switch-ins. The one reader of that file. Internal.
 */
#ifndef PUNCTUAL_SCHED_RUNS_H
#define PUNCTUAL_SCHED_RUNS_H

#include <stdint.h>
#include <sys/types.h>

struct pn__runs {
	uint64_t exec_ns;
	uint64_t queued_ns; /* time runnable on a run queue */
	uint64_t switches;  /* times it was put on a CPU */
};

/* A schedstat line into *r: 0, or -EINVAL. */
int pn__runs_parse(const char *s, struct pn__runs *r);
/* The calling thread's, opened, read and closed (no descriptor held): 0 or -errno. */
int pn__runs_read(struct pn__runs *r);
/* For a caller that reads often: the calling thread's file opened (O_CLOEXEC), or -errno;
 * and a read of it. */
int pn__runs_open(void);
int pn__runs_pread(int fd, struct pn__runs *r);
/* Thread tid of process pid (/proc/PID/task/TID/schedstat): 0 or -errno. */
int pn__runs_read_task(pid_t pid, pid_t tid, struct pn__runs *r);

#endif
