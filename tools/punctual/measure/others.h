/* SPDX-License-Identifier: MIT */
/* measure/others.h: what else ran on the machine during a measurement: the CPU time each
 * process used between two snapshots of /proc (measure/others.c). */
#ifndef PUNCTUAL_MEASURE_OTHERS_H
#define PUNCTUAL_MEASURE_OTHERS_H

#include <stdint.h>
#include <sys/types.h>

/* One snapshot: every process's CPU time (utime + stime, all its threads), by pid. */
struct others_snap {
	struct others_proc {
		pid_t pid;
		uint64_t ticks;  /* utime + stime */
		uint64_t reaped; /* cutime + cstime: its reaped children's */
		char comm[16];
	} * p;
	size_t n;
};

#define OTHERS_TOP 3
/* What the others used between two snapshots. */
struct others {
	int64_t elapsed; /* ns between the snapshots */
	double cpus;     /* CPU time of every other process over elapsed: CPUs kept busy, at
	                  * most the CPUs online */
	size_t nbusy;    /* other processes that used any CPU */
	size_t ntop;     /* the top entries below, most CPU first */
	struct {
		pid_t pid;
		char comm[16];
		double cpus; /* CPU time over elapsed: 1.0 is one CPU */
	} top[OTHERS_TOP];
};

/* Takes a snapshot of root's /proc (root: pn__fs_root-style prefix, "" for the machine's).
 * 0, or -errno (/proc unreadable, out of memory) with *s empty. */
int others_take(struct others_snap *s, const char *root);
/* Fills *o from two snapshots taken elapsed ns apart, leaving out pid self (and its
 * threads: a process is counted as a whole). ncpus: the CPUs online, which bound what a
 * process's reaped children count for and the sum (nothing where it is under 1). */
void others_diff(const struct others_snap *before, const struct others_snap *after, int64_t elapsed,
                 pid_t self, int ncpus, struct others *o);
void others_free(struct others_snap *s);

#endif
