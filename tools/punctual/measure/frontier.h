/* SPDX-License-Identifier: MIT */
/*
 * measure/frontier.h: what precision costs here: for a few sleep lengths, the lateness
 * and the CPU of the kernel alone, fixed margins, punctual's precise sleep at several
 * budgets and its default, and a pure spin. The variants take turns, so that each meets
 * the same host in the same minutes.
 */
#ifndef PUNCTUAL_MEASURE_FRONTIER_H
#define PUNCTUAL_MEASURE_FRONTIER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <punctual/hist.h>

enum frontier_kind { FR_KERNEL, FR_FIXED, FR_BUDGET, FR_AUTO, FR_SPIN, FR_SLICE, FR_RT, FR_AUTO_NORT };

/* A variant: its kind, and the kernel alone's slack (FR_KERNEL; 0 is 1 ns), the fixed
 * margin, the budget (ppm), the kernel alone's slice (ns) or the SCHED_FIFO priority
 * (FR_RT). FR_AUTO is punctual's default as a program gets it, FR_AUTO_NORT the same never
 * under SCHED_FIFO. */
struct frontier_variant {
	enum frontier_kind kind;
	int64_t arg;
};

/* A quantile needs this many sleeps to be shown or compared. */
#define FRONTIER_MIN_P99  100
#define FRONTIER_MIN_P999 1000

#define FRONTIER_MAX_VARIANTS 16
#define FRONTIER_MAX_LENGTHS  8

/* A length's rounds fall into FRONTIER_ROUNDS stretches of time, each cell keeping its
 * FRONTIER_TAIL latest sleeps of each, so that a comparison can be repeated per stretch. */
#define FRONTIER_ROUNDS 3
#define FRONTIER_TAIL   8

struct frontier_tail {
	int64_t n;                  /* sleeps in the stretch */
	int64_t top[FRONTIER_TAIL]; /* their largest lateness, largest first */
};

struct frontier_cell {
	struct pn_hist late; /* end - deadline, ns */
	struct frontier_tail round[FRONTIER_ROUNDS];
	int64_t cpu_ns;      /* the thread's CPU time over the sleeps */
	int64_t wall_ns;     /* their time */
	int64_t early;       /* returns before the deadline: stays 0 */
	int64_t hog_ns;      /* the hogs' CPU time across the sleeps, */
	int64_t hog_wall_ns; /* and the time it was read over */
	int mode;            /* a punctual variant's PN_SLEEP_MODE_* at the length's end */
};

struct frontier_config {
	int nlen, nvar;
	int64_t len[FRONTIER_MAX_LENGTHS];
	int rounds[FRONTIER_MAX_LENGTHS]; /* sleeps per variant at each length */
	struct frontier_variant var[FRONTIER_MAX_VARIANTS];
	int64_t precision; /* punctual's variants' precision */
	/* CPU hogs beside the sleeps, threads of this process: hogs per CPU on the last
	 * hog_cpus CPUs, the sleeper pinned to the last; or, with hog_pinned, one on the
	 * sleeper's CPU. 0: none. */
	int hogs, hog_cpus;
	bool hog_pinned;
	bool slice_auto; /* punctual's variants keep the library's default slice */
	volatile sig_atomic_t *stop; /* nonzero: no sleep starts; NULL: never */
};

struct frontier {
	struct frontier_config c;
	struct frontier_cell cell[FRONTIER_MAX_LENGTHS][FRONTIER_MAX_VARIANTS];
	int nhogs, hog_ncpus, sleeper_cpu; /* sleeper_cpu -1: not pinned */
	bool rt_refused; /* FR_RT's SCHED_FIFO was not permitted: its cells are empty */
};

/* The probe's configuration; fewer sleeps with quick. */
void frontier_probe_config(struct frontier_config *c, int quick);
/* Runs c in the calling thread, its slack put back after: 0, or -errno. */
int frontier_run(const struct frontier_config *c, struct frontier *f);
/* "budget 10%" into buf. */
const char *frontier_name(const struct frontier_variant *v, char *buf, size_t n);
/* "budget10" into buf, for labels and JSON. */
const char *frontier_id(const struct frontier_variant *v, char *buf, size_t n);
/* The CPU share of a cell, % of its sleeps' time. */
double frontier_cpu_pct(const struct frontier_cell *c);
/* The hogs' share of the hog CPUs, %, and their CPU time against what the sleeper left
 * them, %: 100 is fair, less means they lost more than it took. 0 without hogs. */
double frontier_hog_pct(const struct frontier *f, const struct frontier_cell *c);
double frontier_fair_pct(const struct frontier *f, const struct frontier_cell *c);
/* The index of c's kernel variant at 1 ns slack (the last), or -1. */
int frontier_kernel(const struct frontier_config *c);
/* A cell's p99 with its 95% interval (ranks 99% +- 1.96 sqrt(0.99 * 0.01 / n)). 0, or -1
 * with fewer than FRONTIER_MIN_P99 sleeps. */
int frontier_p99_interval(const struct frontier_cell *c, int64_t *lo, int64_t *hi);
/* A stretch's p99, or -1 when it is empty. */
int64_t frontier_round_p99(const struct frontier_cell *c, int round);
/* Whether a beats b at length index l beyond the noise: a's p99 interval wholly under
 * b's, and its p99 under b's in each stretch (*won: those where it was). */
bool frontier_beats(const struct frontier *f, int l, int a, int b, int *won);
/*
 * The advice at length index l, a rule the noise does not flip: among the punctual
 * variants that beat the kernel alone and that no fixed margin of no more CPU beats, the
 * default if it is as good as the best (interval overlap); else the smallest such budget
 * if it beats the default; else the default. Its index, or -1; *won: the stretches won
 * against the variant it had to beat last.
 */
int frontier_best(const struct frontier *f, int l, int *won);

#endif
