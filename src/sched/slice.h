/* SPDX-License-Identifier: MIT */
/*
 * slice.h: the EEVDF slice a precise wait asks for (Linux 6.12+, SCHED_OTHER, clamped to
 * [0.1 ms, 100 ms], no privilege): a shorter slice's wakeup preempts a thread with a longer
 * one, while the CPU share stays the thread's weight's. Asked for each kernel wait alone,
 * where the caller gives one. And whether the thread's CPU is shared. Internal.
 */
#ifndef PUNCTUAL_SCHED_SLICE_H
#define PUNCTUAL_SCHED_SLICE_H

#include <stdbool.h>
#include <stdint.h>

#include "hist/decay_hist.h"

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER1), and the calling thread's: 0 or
 * -errno. pn__sched_set sets size and takes the flags as given. */
struct pn__sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};
#define PN__SCHED_RESET_ON_FORK 0x01
int pn__sched_get(struct pn__sched_attr *a);
int pn__sched_set(struct pn__sched_attr *a);
/* Asks for ns as the calling thread's slice (0: the kernel's own), for the command it
 * executes and that command's threads and children: ns read back, or -errno
 * (-EOPNOTSUPP for a policy other than SCHED_OTHER or SCHED_BATCH). */
int64_t pn__slice_set_self(int64_t ns);

/* A thread's want before it says one: the process's default. */
#define PN__SLICE_DEFAULT (-2)
/* The kernel's bounds on a requested slice. */
#define PN__SLICE_MIN_NS 100000
#define PN__SLICE_MAX_NS 100000000

struct pn__slice {
	int64_t want_ns;    /* PN__SLICE_DEFAULT, PN_SLEEP_SLICE_AUTO, PN_SLEEP_SLICE_OFF, or ns */
	int64_t set_ns;     /* the slice its last kernel wait asked for; 0: none */
	int8_t status;      /* 0 not looked at; 1 ours to set; -1 not (its policy, or denied) */
	uint32_t waits;     /* waits since the last reading of its runs */
	uint64_t exec_ns;   /* schedstat at that reading: time on a CPU, */
	uint64_t runs;      /* times it was put on one, */
	uint64_t queued_ns; /* and time waiting on a run queue */
	int64_t delay_ns;   /* the run-queue wait per switch-in, readings averaged */
	bool shared;
	bool busy;         /* at the last reading, other runnable tasks filled every CPU */
	bool external;     /* its readings come from its caller */
	uint32_t readings; /* readings averaged into delay_ns */
	uint32_t hold;     /* readings it stays shared whatever they say */
	float lost_rate;   /* share of its spins that lost the CPU to another task */
	int64_t lost_ns;   /* external: the last spin's loss over PN__SLICE_LOST_NS; 0: none */
	int64_t cost_ns;   /* a reading's time, the older halved */
	uint32_t deferred; /* readings put off in a row */
};

/* Before a precise wait with room ns left: every SAMPLE_WAITS-th wait of a SCHED_OTHER
 * thread reads its runs, put off while room is short (with force, boundedly). */
void pn__slice_sample(struct pn__slice *s, int64_t room, bool force);
/* The slice the thread's kernel wait asks for: its own, else the process's default; 0 for
 * none (AUTO and OFF alike, not SCHED_OTHER, a kernel that keeps no slice). */
int64_t pn__slice_wanted(const struct pn__slice *s);
/* own (SCHED_OTHER, as read) with ns as its slice, for a kernel wait: 0, or -errno, where
 * the process stops asking (denied, or a kernel before 6.12). */
int pn__slice_wait(struct pn__slice *s, const struct pn__sched_attr *own, int64_t ns);
/* pn_sleep_set_slice's want_ns. 0, -EINVAL out of range, -EOPNOTSUPP where the kernel lacks
 * it or the thread is not SCHED_OTHER. */
int pn__slice_want(struct pn__slice *s, int64_t slice_ns);
/* A thread whose switch-ins wait on a run queue longer than this on average shares its
 * CPU with runnable tasks (docs/DESIGN.md, "When the CPU is shared"). */
#define PN__SLICE_CONTENDED_NS 10000
/* Whether the thread shares its CPU: its averaged wait per switch-in above
 * PN__SLICE_CONTENDED_NS and not since below half of it, or the other runnable tasks fill
 * every CPU (an exact wakeup no longer queues, which hides the sharing). A shared thread's
 * precise wait does not spin. */
bool pn__slice_shared(const struct pn__slice *s);
/* A spin that loses the CPU longer than this is looked at: another task's turn? */
#define PN__SLICE_LOST_NS 100000
/* Spins lost to another task, averaged (1/PN__SLICE_LOST_DECAY): above PN__SLICE_LOST_RATE
 * the thread is shared for PN__SLICE_HOLD readings, since a short slice's wakeups preempt
 * and hide the sharing from its run-queue wait. */
#define PN__SLICE_LOST_DECAY 64
#define PN__SLICE_LOST_RATE  0.02f
#define PN__SLICE_HOLD       16
/* A spin (or, with external readings, a wait) that lost lost_ns of the CPU while the run
 * queue took queued_ns beyond its usual: another task's turn if that is half a loss over
 * PN__SLICE_LOST_NS (a vCPU taken away does not queue). */
void pn__slice_spun(struct pn__slice *s, int64_t lost_ns, uint64_t queued_ns);
/* pn__slice_spun for a spin of the calling thread just ended, its run-queue wait read from
 * schedstat; with external readings the loss is left in lost_ns. */
void pn__slice_spin_end(struct pn__slice *s, int64_t lost_ns);
/* Sets s->busy for a reading: the runnable tasks fill every CPU, read while shared (a
 * waiter's own wakeups under SCHED_FIFO hide the contention) and at the first reading. */
void pn__slice_busy(struct pn__slice *s);
/* Notes a reading of schedstat (s->busy already set). */
void pn__slice_note(struct pn__slice *s, uint64_t exec_ns, uint64_t queued_ns, uint64_t runs);
/* Counts a wait: whether the thread's runs are read at it (its first wait, the 16th after,
 * then every 64th). */
bool pn__slice_due(struct pn__slice *s);
/* The process's default want (PUNCTUAL_SLICE at load). */
int64_t pn__slice_default(void);
/* Sets the process's default want, unless PUNCTUAL_SLICE gave one. Before the first wait. */
void pn__slice_set_default(int64_t want);
/* PUNCTUAL_SLICE's grammar: 0 with *slice_ns set, -EINVAL or -ERANGE. */
int pn__slice_parse(const char *s, int64_t *slice_ns);

#endif
