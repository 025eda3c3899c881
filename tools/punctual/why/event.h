/* SPDX-License-Identifier: MIT */
/* What the kernel side of `punctual why` hands user space: one record a timed wait that
 * ended by its timer (no other include: the BPF side takes its types from vmlinux.h).
 * Times are CLOCK_MONOTONIC ns. */
#ifndef PUNCTUAL_WHY_EVENT_H
#define PUNCTUAL_WHY_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define WHY_COMM 16

struct why_event {
	__s64 soft;             /* the deadline asked for: the timer's soft expiry */
	__s64 hard;             /* soft plus the thread's timer slack */
	__s64 fired;            /* the timer's expiry ran */
	__s64 woken;            /* the thread was put on a run queue */
	__s64 ran;              /* the thread was switched in */
	__u64 irq_ns;           /* interrupt and softirq time on its CPU between woken and ran */
	__u64 steal_ns;         /* steal time on its CPU between woken and ran */
	__u32 pid, tgid;        /* as the tracer's PID namespace numbers them */
	__u32 arm_cpu, run_cpu; /* where it went to sleep, where it ran */
	__u32 holder_pid;       /* what ran on its CPU when it was woken (else before it ran) */
	__u32 gen;              /* the target's generation when the wait was armed */
	char holder_comm[WHY_COMM];
	char comm[WHY_COMM];
};

#endif
