/* SPDX-License-Identifier: MIT */
/*
 * punctual/sleep.h: sleeps that never wake early and wake late by at most a precision
 * the caller gives, spinning within a CPU budget where the kernel alone would be late.
 * The policy is libpunctual(3)'s. A sleep leaves the thread's timer slack as it chose it.
 */
#ifndef PUNCTUAL_SLEEP_H
#define PUNCTUAL_SLEEP_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Class k holds sleeps of [2^k, 2^(k+1)) us; the first and last also shorter and longer. */
#define PN_SLEEP_CLASSES 24

/* Sleeps until deadline (pn_now()'s timebase, ns); returns 0 at a time t, checked with
 * pn_now(), with deadline <= t, and t <= deadline + precision unless the thread was
 * preempted or the machine stalled. Signals do not cut it short; a past deadline returns
 * at once. -EINVAL if precision < 0. */
PN_API int pn_sleep_until(int64_t deadline, int64_t precision);

/* pn_sleep_until(pn_now() + ns, precision); -EINVAL if ns < 0 or precision < 0. */
PN_API int pn_sleep_for(int64_t ns, int64_t precision);

/* The calling thread's sleeps. */
struct pn_sleep_stats {
	uint64_t sleeps;        /* calls that slept */
	uint64_t past;          /* calls whose deadline had passed */
	uint64_t early;         /* returns before the deadline: stays 0 */
	uint64_t late;          /* returns after deadline + precision */
	uint64_t kernel_only;   /* sleeps that did not spin */
	uint64_t slack_changes; /* prctl(PR_SET_TIMERSLACK) calls */
	uint64_t probes;        /* shortest kernel sleeps, to learn */
	int64_t slept_ns;       /* time asleep in the kernel */
	int64_t spun_ns;        /* CPU time spinning */
	int64_t margin_ns;      /* the margin of the last sleep's class */
	int64_t slack_ns;       /* the slack pn_sleep_until left (-1: untouched) */
	/* per class: the fine precision's margin (0: none), wakeups seen */
	int64_t class_margin_ns[PN_SLEEP_CLASSES];
	uint64_t class_samples[PN_SLEEP_CLASSES];
	/* time since the first sleep or reset */
	int64_t wall_ns;
	uint64_t late_budget;  /* late sleeps the budget's cut caused */
	int32_t budget_ppm;    /* the last sleep's budget (ppm, or PN_SLEEP_BUDGET_AUTO) */
	int32_t spin_loss_ppm; /* spin time lost to stalls (ppm) */
	/* lateness past the deadline, ns; -1: no sleeps */
	int64_t late_p50_ns, late_p99_ns, late_p999_ns, late_max_ns;
	int32_t spend_ppm; /* the share of the last sleep planned to spin (ppm) */
	int64_t slice_ns;  /* pn_sleep_slice() after the last wait */
	/* mean run-queue wait per switch-in (0: not read) */
	int64_t queued_ns;
	uint64_t shared_waits; /* waits that did not spin because the CPU is shared */
	int32_t rt_prio;       /* pn_sleep_set_rt's SCHED_FIFO priority; 0: none */
	/* the mode most recent waits used, and their share (ppm) */
	int32_t mode;
	int32_t mode_ppm;
};

/* The mechanisms of a precise wait (pn_sleep_stats' mode). */
enum {
	PN_SLEEP_MODE_NONE,     /* no wait yet */
	PN_SLEEP_MODE_SPIN,     /* the kernel to a margin before the deadline, then a spin */
	PN_SLEEP_MODE_SPIN_ALL, /* a spin the whole wait: the kernel wakes later than its length */
	PN_SLEEP_MODE_KERNEL,   /* the kernel alone: its wakeups meet the precision */
	PN_SLEEP_MODE_CHEAP,    /* the kernel alone: the budget leaves no spin */
	PN_SLEEP_MODE_LOST,     /* the kernel alone: the spins lose the CPU too often */
	PN_SLEEP_MODE_SHARED,   /* the kernel alone: the CPU is shared with runnable tasks */
	PN_SLEEP_MODES
};
/* A mode's name; "?" out of range. */
PN_API const char *pn_sleep_mode_name(int mode);

/* Spinning's CPU budget, ppm of the thread's time: 0 never spins, FULL is precision at any
 * cost, AUTO the measured default. */
#define PN_SLEEP_BUDGET_FULL 1000000
#define PN_SLEEP_BUDGET_AUTO (-1)
/* The window over which a thread's budget holds: 2^30 ns, 1.07 s. */
#define PN_SLEEP_WINDOW_NS (INT64_C(1) << 30)

/* Sets the calling thread's budget (0 to PN_SLEEP_BUDGET_FULL), or PN_SLEEP_BUDGET_AUTO to
 * follow the process's default. 0, -EINVAL out of range, -ENOMEM if the thread's state
 * cannot be mapped. */
PN_API int pn_sleep_set_budget(int32_t budget_ppm);
/* Sets the process's default budget, for threads that set none (at load: PUNCTUAL_BUDGET).
 * 0 or -EINVAL. */
PN_API int pn_sleep_set_default_budget(int32_t budget_ppm);
/* The calling thread's budget: its own, else the process's default. */
PN_API int32_t pn_sleep_budget(void);

/* The EEVDF slice a SCHED_OTHER thread asks for around each kernel wait; AUTO (the
 * default) and OFF ask for none. */
#define PN_SLEEP_SLICE_AUTO (-1)
#define PN_SLEEP_SLICE_OFF  0

/* Sets the calling thread's slice: AUTO, OFF, or [100 us, 100 ms]. 0; -EINVAL out of range;
 * -EOPNOTSUPP where the kernel keeps its own or the thread is not SCHED_OTHER; -ENOMEM if
 * the thread's state cannot be mapped. */
PN_API int pn_sleep_set_slice(int64_t slice_ns);
/* The slice the thread's last kernel wait asked for; 0: none. */
PN_API int64_t pn_sleep_slice(void);

/* The calling thread under SCHED_FIFO at prio (1-99), RLIMIT_RTTIME lowered to 1 s; 0 puts
 * back its scheduling. 0; -EINVAL; -EPERM (nothing changed); -ENOMEM. */
PN_API int pn_sleep_set_rt(int prio);

/* Copies the calling thread's statistics. -EINVAL for NULL. */
PN_API int pn_sleep_stats(struct pn_sleep_stats *st);

/* Zeroes the calling thread's counters (sleeps .. spun_ns); what it learned stays. */
PN_API void pn_sleep_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
