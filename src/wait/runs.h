/* SPDX-License-Identifier: MIT */
/*
 * runs.h: a task's runs as the kernel counts them in /proc/.../schedstat (runs.c, the one
 * reader of that file): its time on a CPU, its time runnable but waiting on a run queue,
 * and its switch-ins. What tells a thread whether it shares its CPU (slice.c), whether a
 * late wait waited for a CPU (why.c, the tool's causes), and what a unit's threads used
 * (the tool's tune). Internal.
 */
#ifndef PUNCTUAL_WAIT_RUNS_H
#define PUNCTUAL_WAIT_RUNS_H

#include <stdint.h>
#include <sys/types.h>

struct pn__runs {
	uint64_t exec_ns;   /* time on a CPU */
	uint64_t queued_ns; /* time on a run queue, runnable */
	uint64_t switches;  /* times it was put on a CPU */
};

/* A schedstat line s ("exec queued switches\n") into *r: 0, or -EINVAL for one that is not. */
int pn__runs_parse(const char *s, struct pn__runs *r);
/* The calling thread's: opens, reads and closes /proc/thread-self/schedstat (so that no
 * descriptor is held between reads): 0 or -errno. */
int pn__runs_read(struct pn__runs *r);
/* For a caller that reads often and keeps the file open (the tool's measuring threads):
 * the calling thread's file, opened (O_CLOEXEC), or -errno; and a read of it. */
int pn__runs_open(void);
int pn__runs_pread(int fd, struct pn__runs *r);
/* Thread tid of process pid (/proc/PID/task/TID/schedstat): 0 or -errno. */
int pn__runs_read_task(pid_t pid, pid_t tid, struct pn__runs *r);

#endif
