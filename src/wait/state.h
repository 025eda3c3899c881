/* SPDX-License-Identifier: MIT */
/*
 * state.h: a thread's precise-sleep state: what it learned per length class and of its
 * spins, its CPU budget's window, its statistics, and the sleep whose caller spins its
 * last stretch. Mapped at the thread's first plan, unmapped at its exit. Internal.
 */
#ifndef PUNCTUAL_WAIT_STATE_H
#define PUNCTUAL_WAIT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <punctual/sleep.h>
#include "wait/arms.h"
#include "wait/policy.h"
#include "wait/plan.h"
#include "sched/rt.h"
#include "sched/sched.h"
#include "sched/slice.h"

struct pn__why;
struct pn__record;

/* How a sleep ended, for pn__state_count. */
struct pn__sleep_end {
	int64_t deadline, precision;
	int64_t spin_start; /* >= deadline: it did not spin */
	int64_t end;
	int64_t mid;        /* when the spin read the thread's CPU time (0: it did not), */
	int64_t mid_cpu;    /* and that CPU time */
	int k;
};

/* A sleep whose caller spins its last stretch, counted at the thread's next sleep or
 * statistics read once the caller stored its end; counted before (a handler that slept
 * during that stretch, or jumped out of it), it ends at its deadline. */
struct pn__state_pending {
	struct pn__sleep_end e;
	struct pn__tail at;
	bool on;
};

/* The thread's spin time, by slots of PN_SLEEP_WINDOW_NS / PN__WINDOW_SLOTS. */
#define PN__WINDOW_SLOTS 64
struct pn__spin_window {
	int64_t ns[PN__WINDOW_SLOTS];
	int64_t total;
	int64_t slot;  /* the newest one's number (time / slot length) */
};

struct pn__state {
	struct pn__sleep_class cls[PN_SLEEP_CLASSES];
	struct pn__spin_loss loss; /* what the thread's spins lose to stalls */
	struct pn__spin_window window;
	int32_t budget_ppm; /* or PN_SLEEP_BUDGET_AUTO: the process's default */
	int64_t overhead;   /* a wait's CPU besides its spin, ns (decayed mean) */
	uint32_t waits;
	int64_t first;      /* the first plan's time: wall_ns counts from it */
	int tid;
	bool listed;        /* in the list of live states */
	uint64_t late[PN__DECAY_HIST_BUCKETS]; /* the sleeps' lateness, counted */
	uint64_t events; /* observed waits their event ended before the deadline */
	/* the kernel parts' wakeups past their target: what the kernel alone made of these
	 * waits */
	uint32_t kwake[PN__DECAY_HIST_BUCKETS];
	float mode_w[PN_SLEEP_MODES]; /* the waits by mode, decayed */
	uint32_t explore;             /* waits the loss rule kept from spinning */
	struct pn__why *why; /* PUNCTUAL_EXPLAIN's counts; or NULL */
	struct pn__record *rec; /* PUNCTUAL_STATS_FILE's page; or NULL */
	struct pn_sleep_stats st;
	struct pn__state_pending pend;
	struct pn__slice slice;
	struct pn__rt rt;
	struct pn__sched_wait sched; /* the kernel wait's scheduling, while under ours */
	struct pn__arms arms; /* shared without real time: the plan's way or the program's */
};

struct pn__state *pn__state_get(void);
/* The calling thread's state, mapped if it has none (async-signal-safe); NULL on failure. */
struct pn__state *pn__state_make(void);
/* For measuring variants in one thread: a state of its own (NULL: out of memory), made the
 * thread's by pn__state_use (which returns the one it replaces), freed by pn__state_free
 * (never the one in use). */
struct pn__state *pn__state_new(void);
struct pn__state *pn__state_use(struct pn__state *s);
void pn__state_free(struct pn__state *s);

int32_t pn__state_default_budget(void);
/* t's budget: its own, else the process's default. */
int32_t pn__state_budget(const struct pn__state *t);
/* The spin t used in the window ending at now, ns. */
int64_t pn__state_window_used(struct pn__state *t, int64_t now);

/* Before a wait planned at now: notes the thread's first wait; every 8th wait its CPU time
 * (the plan's cpu0), else 0. */
int64_t pn__state_begin(struct pn__state *t, int64_t now);
/* The calling thread's CPU time, ns (a system call). */
int64_t pn__state_cpu(void);
/* A spin reads the thread's CPU time once, about this long before its deadline, so that it
 * counts CPU without a system call after the deadline; the rest counts as it lasted. */
#define PN__CPU_LEAD_NS 20000
/* After a kernel wait whose plan took the CPU time cpu0: the wait's cost besides its spin,
 * into t->overhead, read at the wake (a caller's tail may leave the sleep's end to the
 * next plan). */
void pn__state_overhead(struct pn__state *t, int64_t cpu0);
void pn__state_count(struct pn__state *t, const struct pn__sleep_end *e);
/* Called with each new thread state (before its first wait), where set. */
extern void (*pn__state_on_new)(void);
/* A wait the program made as it is, from call to deadline, ended at end by its timeout or
 * its event: counted as a sleep that did not spin, as past, or in t->events. Whether it
 * was late. */
bool pn__state_observed(struct pn__state *t, int64_t call, int64_t deadline, int64_t end,
                        bool timed_out);
void pn__state_past(struct pn__state *t);
/* Counts spin ns of a wait an event ended before its deadline. */
void pn__state_spun(struct pn__state *t, int64_t spin, int64_t now);
void pn__state_settle(struct pn__state *t);
/* Records e's sleep as pending, its end for the caller's tail to store: sets p->tail,
 * p->tail_to and p->tail_seq. */
void pn__state_pend(struct pn__state *t, struct pn__plan *p, const struct pn__sleep_end *e);

void pn__state_mode(struct pn__state *t, int mode);

/* What a thread learns enters here, and only here: a kernel wakeup's lateness past its
 * target, a probe's, a spin's gaps. */
void pn__state_learn_wake(struct pn__state *t, int k, int64_t late, int64_t len);
void pn__state_learn_probe(struct pn__state *t, int64_t late);
void pn__state_learn_gaps(struct pn__state *t, const struct pn__spin_gaps *g);

/* PUNCTUAL_STATS: called with each thread's state at its exit (and by the shim at the
 * process's exit for those still running); NULL: nothing. */
extern void (*pn__state_on_exit)(const struct pn__state *t);
/* At the process's exit: takes every live state out of the list and calls fn with it. A
 * state taken stays mapped for good, so fn never reads unmapped memory; a running thread's
 * state is read racily, as a report at exit is. */
void pn__state_drain(void (*fn)(const struct pn__state *t));
/* Fills *st from t, settled. */
void pn__state_stats(const struct pn__state *t, struct pn_sleep_stats *st);

#endif
