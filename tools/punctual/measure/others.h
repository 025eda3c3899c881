/* SPDX-License-Identifier: MIT */
/* measure/others.h: what else ran on the machine during a measurement: each process's CPU
 * time between two snapshots of /proc. */
#ifndef PUNCTUAL_MEASURE_OTHERS_H
#define PUNCTUAL_MEASURE_OTHERS_H

#include <stdint.h>
#include <sys/types.h>

/* Every process's CPU time, by pid. */
struct others_snap {
	struct others_proc {
		pid_t pid;
		uint64_t ticks;  /* utime + stime */
		uint64_t reaped; /* its reaped children's */
		char comm[16];
	} * p;
	size_t n;
};

#define OTHERS_TOP 3
/* What the others used between two snapshots. */
struct others {
	int64_t elapsed; /* ns between the snapshots */
	double cpus;     /* every other process's CPU time over elapsed, at most the CPUs */
	size_t nbusy;    /* other processes that used any CPU */
	size_t ntop;     /* the top entries below, most CPU first */
	struct {
		pid_t pid;
		char comm[16];
		double cpus; /* 1.0 is one CPU */
	} top[OTHERS_TOP];
};

/* A snapshot of /proc under root ("" for the machine's). 0, or -errno with *s empty. */
int others_take(struct others_snap *s, const char *root);
/* *o from two snapshots elapsed ns apart, leaving out process self. ncpus bounds what
 * reaped children count for and the sum. */
void others_diff(const struct others_snap *before, const struct others_snap *after, int64_t elapsed,
                 pid_t self, int ncpus, struct others *o);
void others_free(struct others_snap *s);

#endif
