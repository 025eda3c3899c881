/* SPDX-License-Identifier: MIT */
/*
 * measure/sleeps.h: every way a Linux program can sleep, behind one interface, and the
 * harness that measures how late each one wakes.
 */
#ifndef PUNCTUAL_MEASURE_SLEEPS_H
#define PUNCTUAL_MEASURE_SLEEPS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <punctual/hist.h>

struct sleep_ctx; /* per measuring thread */

struct sleep_mech {
	const char *id;      /* "nanosleep" */
	const char *desc;    /* "nanosleep(2), relative" */
	int64_t granularity; /* ns per unit of its timeout */
	bool baseline;       /* the null system call: "early" does not apply */
	/* 0, or -errno when the kernel or the build lacks the mechanism */
	int (*setup)(struct sleep_ctx *c);
	/* One call that should return at or after deadline (relative ones round interval up
	 * to their granularity): 0; -EINTR when a signal cut it short; or -errno. */
	int (*sleep)(struct sleep_ctx *c, int64_t deadline, int64_t interval);
	void (*teardown)(struct sleep_ctx *c);
	bool own_slack;    /* sets the thread's timer slack itself */
	int64_t precision; /* pn_sleep_until's precision */
	int slot;          /* index into a context's per-mechanism state */
};

/* The mechanisms, in table order. */
int sleep_mechs_count(void);
const struct sleep_mech *sleep_mech(int i);
/* The mechanism named id, or NULL. */
const struct sleep_mech *sleep_mech_find(const char *id);
/* libpunctual's precise calls as mechanisms at a precision: pn_sleep_until, pn_poll_until
 * with no fds, pn_epoll_wait_until on an empty set; NULL when too many have been made. */
enum precise_kind { PRECISE_SLEEP, PRECISE_POLL, PRECISE_EPOLL };
const struct sleep_mech *sleep_mech_precise(enum precise_kind kind, int64_t precision,
                                            const char *id_suffix);

struct sleep_ctx *sleep_ctx_new(void);
void sleep_ctx_free(struct sleep_ctx *c);
/* Sets up m in c once: 0 or -errno (unsupported), with a reason. */
int sleep_ctx_prepare(struct sleep_ctx *c, const struct sleep_mech *m, const char **reason);
/* Cutting c's samples short from another thread: cut_arm installs the signal's handler
 * (0 or -errno), cut_disarm puts it back; sleep_ctx_cut ends the sample sleeper is in
 * (repeat it: one may come before the wait) and every later one of c. */
int sleep_ctx_cut_arm(struct sigaction *old);
void sleep_ctx_cut_disarm(const struct sigaction *old);
void sleep_ctx_cut(struct sleep_ctx *c, pthread_t sleeper);
/* From here on, a nonzero *stop ends c's samples: none starts, and one a signal
 * interrupts is not recorded. */
void sleep_ctx_stop_on(struct sleep_ctx *c, volatile sig_atomic_t *stop);

/* What one (mechanism, slack, interval) cell collects. */
struct sleep_cell {
	struct pn_hist duration; /* return time - start */
	struct pn_hist late;     /* return time - deadline; < 0 is early */
	uint64_t early;          /* returns before the deadline without a signal */
	uint64_t interrupted;    /* calls cut short by a signal (resumed) */
	uint64_t errors;
	int last_error;
	int64_t spun_ns; /* pn_sleep_until's spin over the cell's sleeps */
	uint64_t cut;    /* samples cut at the budget's end: not recorded */
};

void sleep_cell_init(struct sleep_cell *cell);

/* One sample: sleeps interval with m, resuming after signals, recorded in cell. 0 or the
 * mechanism's -errno; -ECANCELED once the context is cut or stopped. */
int sleep_sample(struct sleep_ctx *c, const struct sleep_mech *m, int64_t interval,
                 struct sleep_cell *cell);

#endif
