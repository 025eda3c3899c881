/* SPDX-License-Identifier: MIT */
/*
 * slice.h: the EEVDF slice a thread that waits precisely asks for (slice.c). Linux 6.12+
 * lets a SCHED_OTHER thread ask for a shorter slice (sched_attr.sched_runtime, clamped to
 * [0.1 ms, 100 ms], no privilege needed): its wakeup then gets an earlier virtual deadline
 * and preempts a thread with a longer slice, while its share of the CPU stays its weight's.
 * A waiter's slice is asked for its kernel waits alone (sched.c), where its caller gives
 * one. Internal.
 */
#ifndef PUNCTUAL_WAIT_SLICE_H
#define PUNCTUAL_WAIT_SLICE_H

#include <stdbool.h>
#include <stdint.h>

#include "wait/decay_hist.h"

/* The kernel's struct sched_attr (linux/sched/types.h, SCHED_ATTR_SIZE_VER1), and the
 * calling thread's: 0 or -errno. pn__sched_set sets size and takes the flags as given. */
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
/* Asks for ns as the calling thread's slice (0: the kernel's own, which follows its base
 * slice), its other attributes as they are, for the command it executes and that
 * command's threads and children (`run --slice`, PUNCTUAL_PROCESS_SLICE): ns read back,
 * or -errno (-EOPNOTSUPP for a policy other than SCHED_OTHER or SCHED_BATCH). */
int64_t pn__slice_set_self(int64_t ns);

/* A thread's want before it says one: the process's default (PUNCTUAL_SLICE). */
#define PN__SLICE_DEFAULT (-2)
/* The kernel's bounds on a requested slice. */
#define PN__SLICE_MIN_NS 100000
#define PN__SLICE_MAX_NS 100000000

/* A thread's slice. */
struct pn__slice {
	int64_t want_ns;    /* PN__SLICE_DEFAULT, PN_SLEEP_SLICE_AUTO, PN_SLEEP_SLICE_OFF, or ns */
	int64_t set_ns;     /* the slice its last kernel wait asked for (sched.c); 0: none */
	int8_t status;      /* 0 not looked at; 1 ours to set; -1 not (its policy, or denied) */
	uint32_t waits;     /* waits since the last reading of its runs */
	uint64_t exec_ns;   /* /proc/thread-self/schedstat at that reading: time on a CPU, */
	uint64_t runs;      /* and times it was put on one */
	uint64_t queued_ns; /* and its time waiting on a run queue */
	int64_t delay_ns;   /* the wait on a run queue per switch-in, readings averaged */
	bool shared;        /* the thread shares its CPU (pn__slice_shared) */
	bool busy;          /* at the last reading, the other runnable tasks filled every CPU */
	bool external;      /* its readings come from its caller (the tool's frontier) */
	uint32_t readings;  /* readings averaged into delay_ns (the first is taken whole) */
	uint32_t hold;      /* readings it stays shared whatever they say (lost spins) */
	float lost_rate;    /* share of its spins that lost the CPU to another task */
	int64_t lost_ns;    /* external: the last spin's loss over PN__SLICE_LOST_NS, for the
	                     * caller to weigh against its own readings; 0: none */
};

/* Before a precise wait: every SAMPLE_WAITS-th wait of a SCHED_OTHER thread reads its
 * runs and its waits on a run queue (pn__slice_shared; what the learned slice follows). */
void pn__slice_sample(struct pn__slice *s);
/* The slice the thread's kernel wait should ask for: its own (pn_sleep_set_slice), else the
 * process's default (PUNCTUAL_SLICE); 0 for none (AUTO and OFF alike, a thread not
 * SCHED_OTHER, a kernel that keeps no slice). */
int64_t pn__slice_wanted(const struct pn__slice *s);
/* own (the thread's attributes as read, SCHED_OTHER) with ns as its slice, for a kernel
 * wait (sched.c puts own back after it): 0, or -errno, where the process stops asking
 * (denied, or a kernel before 6.12, which does not keep it: found at the first). */
int pn__slice_wait(struct pn__slice *s, const struct pn__sched_attr *own, int64_t ns);
/* Sets want_ns (the API's pn_sleep_set_slice), for the thread's next kernel waits. 0, or
 * -EINVAL out of range, -EOPNOTSUPP where the kernel lacks it or the thread is not
 * SCHED_OTHER. */
int pn__slice_want(struct pn__slice *s, int64_t slice_ns);
/* A thread whose switch-ins wait on a run queue longer than this on average shares its
 * CPU with runnable tasks (measured on 2 vCPUs, 1 ms sleeps: 0-3 us alone or beside one CPU
 * hog on its CPU, 34-230 us beside two hogs per CPU). */
#define PN__SLICE_CONTENDED_NS 10000
/* Whether the thread shares its CPU (its readings' averaged wait per switch-in above
 * PN__SLICE_CONTENDED_NS, and not yet below half of it since, nor while the other runnable
 * tasks fill every CPU: a shared thread's wakeups, under SCHED_FIFO or a short slice, no
 * longer wait on the run queue, which hides the sharing from its own readings; its spins
 * would lose the CPU again): then a precise wait does not spin
 * (docs/DESIGN.md, "When the CPU is shared": any spin, even of 15 us, put the p99 at ~950 us
 * against ~735 us without). */
bool pn__slice_shared(const struct pn__slice *s);
/* A spin that loses the CPU for longer than this (in its gaps, or past its deadline) is
 * looked at: was it another task's turn? */
#define PN__SLICE_LOST_NS 100000
/* The share of a thread's spins that lost the CPU to another task is averaged with weight
 * 1/PN__SLICE_LOST_DECAY for the newest; above PN__SLICE_LOST_RATE (two such losses within
 * about 80 spins; one alone is 1/64) its spins cost its p99, and the thread is shared for
 * PN__SLICE_HOLD readings whatever they say: with a short slice its wakeups preempt, so its
 * run-queue wait per switch-in falls to what it is alone (under 5 us beside two hogs per
 * CPU with a 100 us slice) although its spins would lose again; 16 readings are 1024
 * waits. Beside one hog pinned to its CPU its spins lose about 0.2% of the time: they stay. */
#define PN__SLICE_LOST_DECAY 64
#define PN__SLICE_LOST_RATE  0.02f
#define PN__SLICE_HOLD       16
/* One spin of the thread (or a wait, for a caller with external readings) that lost lost_ns
 * of the CPU while the thread waited queued_ns on a run queue beyond its usual: a loss
 * over PN__SLICE_LOST_NS of which the run queue took at least half was another task's
 * turn (a vCPU taken away by the host does not queue the thread). */
void pn__slice_spun(struct pn__slice *s, int64_t lost_ns, uint64_t queued_ns);
/* pn__slice_spun for a spin of the calling thread that has just ended: a loss over
 * PN__SLICE_LOST_NS is looked at in /proc/thread-self/schedstat, the run-queue wait since
 * the last reading beyond the average per switch-in times the switch-ins since (nothing
 * for a thread already shared or whose readings are not taken yet); with external
 * readings the loss is left in lost_ns for the caller. */
void pn__slice_spin_end(struct pn__slice *s, int64_t lost_ns);
/* Notes a reading of the thread's /proc/thread-self/schedstat (time on a CPU, time on a run
 * queue, switch-ins) with s->busy already set: what the slice learns and pn__slice_shared
 * decide from. */
void pn__slice_note(struct pn__slice *s, uint64_t exec_ns, uint64_t queued_ns, uint64_t runs);
/* Counts a wait: whether the thread's runs are to be read at it (its first wait, the 16th
 * after, then every 64th): a thread beside runnable tasks knows it from its 17th wait on
 * (from its second where they fill every CPU: /proc/loadavg at the first reading), and
 * its spins' losses count from its second. A caller with external readings reads
 * them then. */
bool pn__slice_due(struct pn__slice *s);
/* The process's default want (PUNCTUAL_SLICE at load: "off", "auto", or a duration). */
int64_t pn__slice_default(void);
/* Sets the process's default want (the tool's measurements: OFF), unless PUNCTUAL_SLICE
 * gave one. Before the first wait. */
void pn__slice_set_default(int64_t want);
/* PUNCTUAL_SLICE's grammar: 0 with *slice_ns set (AUTO, OFF, or a duration in the kernel's
 * bounds), -EINVAL or -ERANGE. */
int pn__slice_parse(const char *s, int64_t *slice_ns);

#endif
