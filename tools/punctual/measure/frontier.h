/* SPDX-License-Identifier: MIT */
/*
 * measure/frontier.h: what precision costs here (measure/frontier.c): for a few sleep
 * lengths, the lateness and the CPU of the kernel alone, fixed margins then a spin (the
 * spin_sleep crate's rule), punctual's precise sleep at several CPU budgets and at its
 * default, and a pure spin, alternating sleep by sleep in one thread, so that every
 * variant meets the same host in the same minutes. `punctual probe`'s section of that
 * name, and bench/'s frontier.
 */
#ifndef PUNCTUAL_MEASURE_FRONTIER_H
#define PUNCTUAL_MEASURE_FRONTIER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <punctual/hist.h>

enum frontier_kind { FR_KERNEL, FR_FIXED, FR_BUDGET, FR_AUTO, FR_SPIN, FR_SLICE, FR_RT, FR_AUTO_NORT };

/* A variant: its kind, and the kernel alone's slack (FR_KERNEL: 0 is 1 ns, the kernel at its
 * best; 50 us is a plain program's), the fixed margin (FR_FIXED), the budget (FR_BUDGET, ppm), the
 * EEVDF slice of the kernel alone (FR_SLICE, ns) or the SCHED_FIFO priority of punctual's
 * default (FR_RT; no sleeps where this process may not take it). FR_AUTO is punctual's
 * default as a program gets it (a shared thread's kernel waits under SCHED_FIFO where this
 * process may); FR_AUTO_NORT the same never under SCHED_FIFO, as an unprivileged one. */
struct frontier_variant {
	enum frontier_kind kind;
	int64_t arg;
};

/* A quantile needs this many sleeps to be shown (fewer: "-" in text, null in JSON) or to
 * be compared (frontier_best). */
#define FRONTIER_MIN_P99  100
#define FRONTIER_MIN_P999 1000

#define FRONTIER_MAX_VARIANTS 16
#define FRONTIER_MAX_LENGTHS  8

/* A length's rounds fall into FRONTIER_ROUNDS stretches of time, in each of which a cell
 * keeps its FRONTIER_TAIL latest sleeps: a stretch's p99 (by nearest rank, exact up to
 * 100 * FRONTIER_TAIL sleeps a stretch) lets a comparison be repeated in each. */
#define FRONTIER_ROUNDS 3
#define FRONTIER_TAIL   8

struct frontier_tail {
	int64_t n;                  /* sleeps in the stretch */
	int64_t top[FRONTIER_TAIL]; /* their largest lateness, largest first */
};

struct frontier_cell {
	struct pn_hist late; /* end - deadline, ns, one a sleep */
	struct frontier_tail round[FRONTIER_ROUNDS];
	int64_t cpu_ns;      /* the thread's CPU time over the variant's sleeps */
	int64_t wall_ns;     /* their time, from each call to its return */
	int64_t early;       /* returns before the deadline: stays 0 */
	int64_t hog_ns;      /* the hogs' CPU time across the variant's sleeps, */
	int64_t hog_wall_ns; /* and the time it was read over (the sleeps and the readings) */
	int mode;            /* a punctual variant's: the mechanism its waits settled on at the
	                      * length's end (PN_SLEEP_MODE_*); PN_SLEEP_MODE_NONE for others */
};

struct frontier_config {
	int nlen, nvar;
	int64_t len[FRONTIER_MAX_LENGTHS];
	int rounds[FRONTIER_MAX_LENGTHS]; /* sleeps per variant at each length */
	struct frontier_variant var[FRONTIER_MAX_VARIANTS];
	int64_t precision; /* punctual's variants' precision */
	/* CPU hogs beside the sleeps, threads of the measuring process started before and
	 * stopped and joined after (they end with the process however it ends): hogs per CPU
	 * of the hog set, the last hog_cpus CPUs this thread may use, the sleeper's among them
	 * (it is pinned to the last one); or, with hog_pinned, one hog pinned to the sleeper's
	 * CPU. 0: none. */
	int hogs, hog_cpus;
	bool hog_pinned;
	bool slice_auto; /* punctual's variants ask for their learned slice (the library's
	                  * default); else they keep the kernel's own, as the tool does */
	volatile sig_atomic_t *stop; /* nonzero (a signal's flag): no sleep starts; NULL: never */
};

struct frontier {
	struct frontier_config c;
	struct frontier_cell cell[FRONTIER_MAX_LENGTHS][FRONTIER_MAX_VARIANTS];
	int nhogs, hog_ncpus, sleeper_cpu; /* as run; sleeper_cpu -1: not pinned */
	bool rt_refused; /* FR_RT's SCHED_FIFO was not permitted: its cells are empty */
};

/* The probe's configuration: 100 us, 1 ms and 10 ms; the kernel, fixed margins of 125 us
 * and 500 us, budgets of 5, 10, 25 and 50%, the default, a pure spin; fewer sleeps with
 * quick. */
void frontier_probe_config(struct frontier_config *c, int quick);
/* Runs c in the calling thread (its timer slack is put back after): 0, or -errno (-ENOMEM
 * when a budget variant's state cannot be mapped). */
int frontier_run(const struct frontier_config *c, struct frontier *f);
/* "kernel", "fixed 125 us", "budget 10%", "default", "spin" into buf. */
const char *frontier_name(const struct frontier_variant *v, char *buf, size_t n);
/* A short id for labels and JSON: "kernel", "fixed125us", "budget10", "auto", "spin". */
const char *frontier_id(const struct frontier_variant *v, char *buf, size_t n);
/* The CPU share of a cell, % of its sleeps' time. */
double frontier_cpu_pct(const struct frontier_cell *c);
/* The hogs' share of the hog CPUs in a cell, %, and their CPU time against what the sleeper
 * left them (the hog CPUs' time less the sleeper's CPU time): 100 is fair, less means they
 * lost more than the sleeper took. 0 without hogs. Both over the sleeps and their
 * readings: a spin is often preempted at its first system call after the deadline. */
double frontier_hog_pct(const struct frontier *f, const struct frontier_cell *c);
double frontier_fair_pct(const struct frontier *f, const struct frontier_cell *c);
/* The index of c's kernel variant at 1 ns slack (the last, if several), or -1. */
int frontier_kernel(const struct frontier_config *c);
/* A cell's p99 (at least FRONTIER_MIN_P99 sleeps) with its 95% interval: the values at
 * the ranks 99% +- 1.96 sqrt(0.99 * 0.01 / n) of its sleeps. 0, or -1 with fewer sleeps. */
int frontier_p99_interval(const struct frontier_cell *c, int64_t *lo, int64_t *hi);
/* A stretch's p99 (its nearest rank among its largest values), or -1 when it is empty. */
int64_t frontier_round_p99(const struct frontier_cell *c, int round);
/* Whether variant a beats b at length index l beyond the noise: a's p99 interval wholly
 * under b's, and a's p99 under b's in each stretch; *won: the stretches where it was. */
bool frontier_beats(const struct frontier *f, int l, int a, int b, int *won);
/*
 * The advice at length index l, a rule the noise does not flip: of the punctual variants
 * (budgets, the default) that beat the kernel alone (frontier_beats) and whose p99 no fixed
 * margin of no more CPU beats, those whose p99 interval meets the lowest one's are as
 * good. The default when it is one of them (it needs no budget chosen); else the smallest
 * budget of them, only if it beats the default itself; else the default (on the envelope:
 * as good as what beat the kernel). Its index, or -1 (none beat the kernel, or the kernel variant
 * is missing or too small, or l is out of range); *won: the stretches it won against the variant it
 * had to beat last (FRONTIER_ROUNDS when it is given).
 */
int frontier_best(const struct frontier *f, int l, int *won);

#endif
