/* SPDX-License-Identifier: MIT */
/*
 * punctual/sleep.h: sleeps that never wake early and wake late by at most a precision
 * the caller gives (FreeBSD calloutng's precision, sd-event's accuracy).
 *
 * The kernel wakes a sleeping thread late by its timer slack plus a wakeup latency that
 * depends on the machine, its load and how long the thread slept (an idle vCPU halts;
 * waking it takes tens of microseconds). pn_sleep_until learns that latency per thread
 * and per sleep-length class. When the precision covers its p99, the thread sleeps in the
 * kernel only (absolute clock_nanosleep) with its slack lowered to fit; otherwise it
 * sleeps until deadline - margin and spins (pause / yield) to the deadline.
 *
 * Precision at a price. The spin costs CPU, so the margin is what the spin buys:
 *  - it covers the learned lateness up to a high quantile (p99.9 at a precision of 2 us or
 *    less, p99.6 at a wider one) less the precision itself, which the caller allows;
 *  - but no further than the thread's own spins reach: where a spin itself loses the CPU
 *    (the vCPU or the CPU taken away for longer than the precision) a fraction f of the
 *    time, the margin covers the lateness only up to the 1 - f quantile, since a spin
 *    cannot remove lateness that hits it too;
 *  - within the thread's CPU budget (pn_sleep_set_budget): a wait of length len spins for
 *    at most budget x len, counting its own system calls and wakeup, on average over its
 *    class's learned wakeups, and the thread's waits use at most budget x 1.07 s of CPU in
 *    any 1.07 s (PN_SLEEP_WINDOW_NS). Beyond it the margin is the largest that fits, never
 *    early; waits then late beyond the precision are counted as the budget's;
 *  - without a budget (PN_SLEEP_BUDGET_AUTO), where more CPU buys little: the margin grows
 *    only while each further 1% of a CPU puts at least 0.1% more waits on time (the knee of
 *    the lateness-versus-CPU frontier), and for sleeps of 1 ms or more to at most 25% of
 *    the thread's time;
 *  - and where the class's spins keep losing the CPU to other tasks, the thread sleeps in
 *    the kernel to the deadline at 1 ns slack (a kernel wait is woken ahead of a CPU hog);
 *  - so too where no spin can lower the p99 of the lateness: where the thread's spins
 *    lose 1% of their time to stalls longer than the kernel's own p99 lateness, and where
 *    its CPU is shared with runnable tasks (pn_sleep_stats' mode says which). A shared
 *    thread's kernel wait runs under SCHED_FIFO where the process may use it (root,
 *    CAP_SYS_NICE, RLIMIT_RTPRIO): for that wait alone, its own policy, priority, nice,
 *    flags, slice and timer slack written back before the call returns, so that its own
 *    work never runs real-time and it reads its own attributes. A thread of another
 *    policy than SCHED_OTHER (one it set itself) is left as it is.
 * A budget of 100% (PN_SLEEP_BUDGET_FULL) is precision at any cost: the margin covers the
 * quantile whatever it costs, as before budgets existed.
 *
 * Timer slack: pn_sleep_until leaves the calling thread's slack at the value it chose
 * (1 ns when it spins, otherwise the largest power of two that fits the precision), so
 * that consecutive sleeps need no prctl. pn_slack_set() changes it back, and the next
 * pn_sleep_until notices; a prctl(PR_SET_TIMERSLACK) behind its back is not noticed.
 * (The preload shim, which sleeps on behalf of programs that did not ask for it, puts
 * the program's own slack back after every kernel wait instead.)
 *
 * Outliers: one stall (the process stopped, the vCPU taken away) never becomes the
 * margin, and a class whose wakeups are later than its sleeps (so it only spins) keeps
 * learning from one shortest kernel sleep per sleep, going back to the kernel once they
 * are cheap again.
 */
#ifndef PUNCTUAL_SLEEP_H
#define PUNCTUAL_SLEEP_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sleep-length classes: class k holds sleeps of [2^k, 2^(k+1)) us (class 0 also shorter
 * ones, the last also longer ones). */
#define PN_SLEEP_CLASSES 24

/* Sleeps until deadline (pn_now()'s timebase, ns) and returns 0 at a time t with
 * deadline <= t, checked with pn_now(), so never early; unless the thread was preempted
 * or the machine stalled, t <= deadline + precision. Signals do not cut it short. A
 * deadline already past returns at once. -EINVAL if precision < 0. */
PN_API int pn_sleep_until(int64_t deadline, int64_t precision);

/* pn_sleep_until(pn_now() + ns, precision); -EINVAL if ns < 0 or precision < 0. */
PN_API int pn_sleep_for(int64_t ns, int64_t precision);

/* The calling thread's sleeps. */
struct pn_sleep_stats {
	uint64_t sleeps;        /* calls that slept (deadline in the future) */
	uint64_t past;          /* calls whose deadline had already passed */
	uint64_t early;         /* returns before the deadline: stays 0 */
	uint64_t late;          /* returns after deadline + precision */
	uint64_t kernel_only;   /* sleeps that did not spin */
	uint64_t slack_changes; /* prctl(PR_SET_TIMERSLACK) calls made */
	uint64_t probes;        /* shortest kernel sleeps made to learn the wakeup latency */
	int64_t slept_ns;       /* time asleep in the kernel */
	int64_t spun_ns;        /* time spinning */
	int64_t margin_ns;      /* the learned margin of the last sleep's class */
	int64_t slack_ns;       /* the thread's slack as pn_sleep_until left it (-1: untouched) */
	/* the spin margin a fine precision (2 us or less) uses at each class's shortest
	 * sleep, as learned so far; 0: none. A class that has learned little plans with a
	 * neighbour's margin too, which this does not show. */
	int64_t class_margin_ns[PN_SLEEP_CLASSES];
	uint64_t class_samples[PN_SLEEP_CLASSES]; /* kernel wakeups seen per class */
	/* since the thread's first sleep (or pn_sleep_stats_reset): its time, so that
	 * spun_ns / wall_ns is its spin share; spun_ns counts the spins' CPU, not the stretches
	 * in which the CPU was taken away from them */
	int64_t wall_ns;
	uint64_t late_budget;  /* of late, those the budget caused: the margin it cut would
	                        * have covered their wakeup */
	int32_t budget_ppm;    /* the budget the last sleep planned with (ppm, or
	                        * PN_SLEEP_BUDGET_AUTO) */
	int32_t spin_loss_ppm; /* the share of spin time lost to stalls longer than the last
	                        * sleep's precision (ppm): lateness no spin removes */
	/* the lateness of every sleep past its deadline, ns: p50, p99, p99.9, max; -1: no
	 * sleeps (a quantile that 100 or 1000 sleeps cannot show is the max so far) */
	int64_t late_p50_ns, late_p99_ns, late_p999_ns, late_max_ns;
	int32_t spend_ppm; /* the share of the last sleep's length its margin was planned to
	                    * spend spinning (ppm): within the budget, or the measured
	                    * default's choice under PN_SLEEP_BUDGET_AUTO */
	int64_t slice_ns;  /* pn_sleep_slice() as the thread's last wait left it */
	/* the thread's wait on a run queue per switch-in, read every 64 waits from
	 * /proc/thread-self/schedstat and averaged (0: not read): above 10 us its CPU is
	 * shared (until below 5 us) */
	int64_t queued_ns;
	uint64_t shared_waits; /* waits that did not spin because the CPU is shared (a spin
	                        * loses its CPU to the tasks that share it: a later p99) */
	int32_t rt_prio;       /* the SCHED_FIFO priority pn_sleep_set_rt gave it; 0: none */
	/* the mechanism the thread's waits settled on (PN_SLEEP_MODE_*): the one most of its
	 * last few hundred waits used, and their share of them (ppm) */
	int32_t mode;
	int32_t mode_ppm;
};

/* The mechanisms of a precise wait (pn_sleep_stats' mode, pn_sleep_mode_name). Each wait
 * takes the one its class's learned wakeups, the thread's spins and its CPU's sharing call
 * for; the kernel alone wherever a spin would not lower the p99 of the lateness. */
enum {
	PN_SLEEP_MODE_NONE,     /* no wait yet */
	PN_SLEEP_MODE_SPIN,     /* the kernel to a margin before the deadline, then a spin */
	PN_SLEEP_MODE_SPIN_ALL, /* a spin the whole wait: the kernel wakes later than its length */
	PN_SLEEP_MODE_KERNEL,   /* the kernel alone: its wakeups meet the precision */
	PN_SLEEP_MODE_CHEAP,    /* the kernel alone at 1 ns slack: a spin costs more CPU than it
	                         * buys (the budget, or the default's knee) */
	PN_SLEEP_MODE_LOST,     /* the kernel alone at 1 ns slack: the thread's spins lose the
	                         * CPU as often as the kernel wakes it late */
	PN_SLEEP_MODE_SHARED,   /* the kernel alone, under SCHED_FIFO for the wait alone where
	                         * permitted: the CPU is shared with runnable tasks, which a
	                         * spin waits out */
	PN_SLEEP_MODES
};
/* A mode's name ("spin", "spin all", "kernel", "cheap", "lost", "shared", "none";
 * "?" out of range). */
PN_API const char *pn_sleep_mode_name(int mode);

/* Spinning's CPU budget, in parts per million of the thread's time: PN_SLEEP_BUDGET_FULL is
 * 100% (precision at any cost), 0 never spins (the kernel alone, to the deadline at 1 ns
 * slack), PN_SLEEP_BUDGET_AUTO the measured default (see above). */
#define PN_SLEEP_BUDGET_FULL 1000000
#define PN_SLEEP_BUDGET_AUTO (-1)
/* The window over which a thread's budget holds: 2^30 ns, 1.07 s. */
#define PN_SLEEP_WINDOW_NS (INT64_C(1) << 30)

/* Sets the calling thread's budget (ppm, 0 to PN_SLEEP_BUDGET_FULL), or PN_SLEEP_BUDGET_AUTO
 * to follow the process's default again. 0, -EINVAL out of range, -ENOMEM when the thread's
 * state cannot be mapped. */
PN_API int pn_sleep_set_budget(int32_t budget_ppm);
/* Sets the process's default budget, for threads that set none: ppm, or
 * PN_SLEEP_BUDGET_AUTO (the measured default). At load it is PUNCTUAL_BUDGET's ("10%",
 * "12.5%", "auto"; a bare number is a percentage; malformed: auto). 0 or -EINVAL. */
PN_API int pn_sleep_set_default_budget(int32_t budget_ppm);
/* The calling thread's budget: its own, else the process's default (ppm, or
 * PN_SLEEP_BUDGET_AUTO). */
PN_API int32_t pn_sleep_budget(void);

/* The EEVDF slice a thread that waits precisely asks for (Linux 6.12+: sched_attr's
 * sched_runtime for a SCHED_OTHER thread, no privilege needed): its wakeup then preempts a
 * thread with a longer slice, while its CPU share stays its weight's. It is asked for each
 * kernel wait alone: set before it, the thread's own scheduling written back after it.
 * A duration asks for it at every kernel wait; PN_SLEEP_SLICE_AUTO (the default) and
 * PN_SLEEP_SLICE_OFF ask for none: beside CPU hogs a waiter's short slice made its wakeups
 * later, not earlier, on Linux 6.18 (punctual probe's shared section measures the host).
 * The process's default comes from PUNCTUAL_SLICE at load ("auto", "off", or a duration).
 * A thread of another policy (SCHED_FIFO, RR, DEADLINE, BATCH, IDLE) is never touched. */
#define PN_SLEEP_SLICE_AUTO (-1)
#define PN_SLEEP_SLICE_OFF  0

/* Sets the calling thread's slice: PN_SLEEP_SLICE_AUTO, PN_SLEEP_SLICE_OFF, or slice_ns in
 * [100 us, 100 ms], for its next kernel waits. 0; -EINVAL out of range; -EOPNOTSUPP where
 * the kernel keeps its own (before 6.12) or denies it, or the thread is not SCHED_OTHER;
 * -ENOMEM when the thread's state cannot be mapped. */
PN_API int pn_sleep_set_slice(int64_t slice_ns);
/* The slice the calling thread's last kernel wait asked for, in ns; 0: none (its own). */
PN_API int64_t pn_sleep_slice(void);

/* Opt-in real time for the whole calling thread, its own work too (the default takes
 * SCHED_FIFO for a shared thread's kernel waits alone): SCHED_FIFO at prio (1-99) with
 * SCHED_RESET_ON_FORK (its children start as SCHED_OTHER), where permitted (CAP_SYS_NICE,
 * or RLIMIT_RTPRIO >= prio). The process's RLIMIT_RTTIME is lowered to 1 s (hard 2 s)
 * where it was higher: a thread that then computes that long without a blocking call is
 * sent SIGXCPU, whose default action ends the process (and SIGKILL at 2 s), rather than
 * hold its CPU; and while it computes, the SCHED_OTHER tasks of its CPU do not run. 0 puts
 * back the scheduling it had before. Under the shim, PUNCTUAL_RT=PRIO (`punctual run
 * --precise --rt`) tries it on each thread before its first precise wait. 0; -EINVAL out
 * of range; -EPERM where not permitted (nothing changed); -ENOMEM if the thread's state
 * cannot be mapped. */
PN_API int pn_sleep_set_rt(int prio);

/* Copies the calling thread's statistics. -EINVAL for NULL. */
PN_API int pn_sleep_stats(struct pn_sleep_stats *st);

/* Zeroes the calling thread's counters (sleeps .. spun_ns); what it learned stays. */
PN_API void pn_sleep_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
