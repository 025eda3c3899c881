/* SPDX-License-Identifier: MIT */
/* `punctual sleep --periodic`. */
#ifndef PUNCTUAL_SLEEP_PERIODIC_H
#define PUNCTUAL_SLEEP_PERIODIC_H

#include <stdbool.h>
#include <stdint.h>

/* --stop-above hit: distinct from 1 (failure) and 2 (bad input); rtla's 2 would clash. */
enum { EXIT_STOPPED = 3 };

struct periodic_opts {
	bool json;
	int64_t interval, duration;
	bool have_slack;
	int64_t slack;
	long fifo;            /* --fifo / --priority; 0: SCHED_OTHER */
	int64_t slice_ns;     /* --slice; 0: the kernel's own */
	long cpu;             /* --cpu; -1: none */
	long dma_latency;     /* held at this (us), or -1: not held */
	const char *dma_note; /* with -1: why, or NULL */
	bool explain;
	int64_t explain_above; /* 0: 2x the median */
	bool smp, mlock;
	long threads;         /* 0: not given */
	const char *affinity; /* the list as given, or NULL */
	const char *histogram;
	long histogram_max_us;
	int64_t stop_above;
};

/* Checks the CPU list and the histogram file before measuring: exits 2 with one line. */
void sleep_periodic_check(struct periodic_opts *o);
/* ", slice 100 us", or "" for the kernel's own; a static buffer. */
const char *sleep_slice_text(int64_t slice_ns);
/* Runs and renders: 0, or EXIT_STOPPED when --stop-above stopped it; exits 1 on failure. */
int sleep_periodic(struct periodic_opts *o);

/* A sleep report's start: the report begun for command, and the "host" object. */
struct json;
struct host;
void sleep_json_header(struct json *j, const char *command, const struct host *host);

#endif
