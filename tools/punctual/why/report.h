/* SPDX-License-Identifier: MIT */
/* What `punctual why` gathered and how it is printed: one process's waits with their
 * causes and what held the CPU, or every process's counts (--all). */
#ifndef PUNCTUAL_WHY_REPORT_H
#define PUNCTUAL_WHY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/causes.h"
#include "why/event.h"

#define WHY_HOLDERS 256
/* Late, for --all: above most kernels' own wakeup latency. */
#define WHY_ALL_ABOVE 100000

/* A task that held the CPU while a preempted wait's thread waited. */
struct why_holder {
	uint32_t pid;
	char comm[WHY_COMM];
	uint64_t count;
	int64_t held_ns; /* the run-queue waits it held */
};

/* One process's figures for --all. */
struct why_proc {
	uint32_t tgid;
	char comm[WHY_COMM];
	uint64_t waits, late;
	uint64_t n[PN__WHY_COUNT]; /* late waits by cause */
	int64_t max;
};

struct why_report {
	long pid; /* 0: --all */
	char comm[WHY_COMM];
	int64_t above; /* a wait later than this is late, ns */
	int64_t elapsed;
	bool exited;     /* the target ended while traced */
	int interrupted; /* the signal that stopped the tracing, or 0 */
	const struct causes_cgroup *cg;
	struct causes_thread recs;
	struct why_holder holders[WHY_HOLDERS];
	size_t nholders;
	uint64_t other_holders; /* preempted waits whose holder did not fit */
	struct why_proc *procs; /* --all */
	size_t nprocs, cap;
	bool oom;
};

/* Counts one wait and its cause (a why_sink). */
void why_report_add(void *report, const struct why_event *e, const struct cause_rec *r);
/* The lateness quantile q over the target's waits; 0 without waits. */
int64_t why_report_quantile(const struct why_report *rep, double q);
/* Process pid's name into buf, left as it was when the process is gone. */
void why_report_name(long pid, char *buf, size_t n);
/* Each process's name, not its last thread's. */
void why_report_names(struct why_report *rep);
/* The cause of most of p's late waits, or -1. */
int why_proc_cause(const struct why_proc *p);
/* Sorts holders and processes, most first. */
void why_report_sort(struct why_report *rep);
void why_report_free(struct why_report *rep);

/* The report as text or JSON on out. */
void why_render_text(const struct why_report *rep);
void why_render_json(const struct why_report *rep);
struct json;
/* One --all row as a JSON object; the probe writes the same shape. */
void why_render_proc_json(struct json *j, const struct why_proc *p);

#endif
