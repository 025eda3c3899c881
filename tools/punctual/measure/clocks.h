/* SPDX-License-Identifier: MIT */
/* measure/clocks.h: the clock sources punctual compares, and measuring them. */
#ifndef PUNCTUAL_MEASURE_CLOCKS_H
#define PUNCTUAL_MEASURE_CLOCKS_H

#include <stdbool.h>
#include <stdint.h>

struct clock_source;

struct clock_result {
	const char *id;   /* unique: "libc:CLOCK_MONOTONIC" */
	const char *name; /* "CLOCK_MONOTONIC" */
	const char *via;  /* libc, syscall, instruction, libpunctual */
	const char *path; /* how a read reaches the time: vdso, syscall, ... */
	bool ordered;     /* false for counters the CPU may read out of order */
	bool counts;      /* counter counts, not ns */
	double cost_min;  /* ns per read over rounds */
	double cost_median;
	uint64_t rounds;
	uint64_t reads_per_round;
	int64_t getres_ns; /* -1: none */
	int64_t step_ns;   /* smallest positive step seen, -1: none */
	uint64_t reads_checked;
	uint64_t backward_same;  /* consecutive reads in one thread that went back */
	uint64_t backward_cross; /* reads after a handoff below the other thread's */
	int64_t backward_max_ns;
	uint64_t handoffs; /* 0: the cross-CPU check could not run */
	int rank;          /* 1 = cheapest tier; equal ranks are within noise */
};

/* The number of sources on this architecture. */
int clock_sources_count(void);

/* Measures every source in about budget_ns: 0, or -ENOMEM with res incomplete. */
int clock_measure_all(struct clock_result *res, int64_t budget_ns);

#endif
