/* SPDX-License-Identifier: MIT */
/*
 * The kernel side of `punctual why`, the least that must run in the kernel: a timed wait's
 * deadline and slack window when its hrtimer is armed, when it fired and when the thread
 * was woken; when it runs, one event to the ring buffer with what ran before it on that
 * CPU. Causes are named in user space. Processes are numbered as the tracer's PID
 * namespace numbers them (a tracer in a container names its own services' PIDs), and with
 * follow a target's children are traced with it from their fork.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "event.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* 0: every process. Not constants: a tracer may move on to another process while
 * attached, and each target has a generation of its own, which its events carry. */
volatile __u32 target_tgid, target_gen;
const volatile __u32 self_tgid; /* the tracer, never traced */
const volatile __u64 wakeup_fn; /* hrtimer_wakeup's address, 0 where hidden */
/* The tracer's PID namespace where it is not the host's (ns_ino 0: the host's). */
const volatile __u64 ns_dev, ns_ino;
const volatile bool follow; /* the target's children traced with it */

/* The processes traced with the target: tgid -> the target's generation. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

struct wait {
	__u64 timer;
	__s64 soft, hard, fired, woken;
	__u64 irq_at, steal_at;
	__u32 arm_cpu, wake_cpu;
	__u32 holder_pid; /* what ran on its CPU when it was woken, 0: unknown or idle */
	__u32 pid, tgid;  /* as the tracer's namespace numbers them */
	__u32 gen;
	char holder_comm[WHY_COMM];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wait);
} waits SEC(".maps");

struct irq_time {
	__u64 sum, hard_at, soft_at;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_time);
} irqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");
#define WAKE_BYTES (1 << 18)

/* The rq task is on, through its CFS run queue where group scheduling gives one; NULL else. */
static struct rq *rq_of(struct task_struct *task)
{
	if (!bpf_core_field_exists(struct sched_entity, cfs_rq))
		return NULL;
	return BPF_CORE_READ(task, se.cfs_rq, rq);
}

static __u64 steal_of(struct task_struct *task)
{
	if (!bpf_core_field_exists(struct rq, prev_steal_time))
		return 0;
	struct rq *rq = rq_of(task);
	return rq ? BPF_CORE_READ(rq, prev_steal_time) : 0;
}

static __u64 irq_of(__u32 cpu)
{
	__u32 zero = 0;
	struct irq_time *t = bpf_map_lookup_percpu_elem(&irqs, &zero, cpu);
	return t ? t->sum : 0;
}

/* The sleeper's task: hrtimer_sleeper begins with its hrtimer. */
static struct task_struct *sleeper_task(struct hrtimer *timer)
{
	if (wakeup_fn && (__u64)BPF_CORE_READ(timer, function) != wakeup_fn)
		return NULL;
	return BPF_CORE_READ((struct hrtimer_sleeper *)timer, task);
}

/* The current task's numbers in the tracer's namespace: false where it is in another. */
static bool seen(struct task_struct *me, __u32 *tgid, __u32 *pid)
{
	if (!ns_ino) {
		*tgid = me->tgid;
		*pid = me->pid;
		return true;
	}
	struct bpf_pidns_info ns;
	if (bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns)))
		return false;
	*tgid = ns.tgid;
	*pid = ns.pid;
	return true;
}

/* Whether process tgid is the target or traced with it. */
static bool traced(__u32 tgid)
{
	__u32 target = target_tgid;
	if (!target || tgid == target)
		return true;
	if (!follow)
		return false;
	__u32 *gen = bpf_map_lookup_elem(&followed, &tgid);
	return gen && *gen == target_gen;
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(why_arm, struct hrtimer *timer)
{
	struct task_struct *me = bpf_get_current_task_btf();
	__u32 tgid, id;
	if (!me->tgid || !seen(me, &tgid, &id) || !traced(tgid))
		return 0;
	if (tgid == self_tgid || sleeper_task(timer) != me)
		return 0;
	__s64 offset = BPF_CORE_READ(timer, base, offset);
	struct wait w = {.timer = (__u64)timer,
	                 .soft = BPF_CORE_READ(timer, _softexpires) - offset,
	                 .hard = BPF_CORE_READ(timer, node.expires) - offset,
	                 .arm_cpu = bpf_get_smp_processor_id(),
	                 .pid = id,
	                 .tgid = tgid,
	                 .gen = target_gen};
	__u32 pid = me->pid;
	bpf_map_update_elem(&waits, &pid, &w, BPF_ANY);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(why_fire, struct hrtimer *timer)
{
	struct task_struct *t = sleeper_task(timer);
	if (!t)
		return 0;
	__u32 pid = BPF_CORE_READ(t, pid);
	struct wait *w = bpf_map_lookup_elem(&waits, &pid);
	if (w && w->timer == (__u64)timer && !w->fired)
		w->fired = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(why_wakeup, struct task_struct *p)
{
	__u32 pid = p->pid;
	struct wait *w = bpf_map_lookup_elem(&waits, &pid);
	if (!w || !w->fired || w->woken)
		return 0;
	__u32 cpu = p->wake_cpu;
	w->woken = bpf_ktime_get_ns();
	w->wake_cpu = cpu;
	w->irq_at = irq_of(cpu);
	w->steal_at = steal_of(p);
	struct rq *rq = rq_of(p);
	struct task_struct *curr = rq ? BPF_CORE_READ(rq, curr) : NULL;
	w->holder_pid = curr ? BPF_CORE_READ(curr, pid) : 0;
	if (w->holder_pid)
		BPF_CORE_READ_STR_INTO(&w->holder_comm, curr, comm);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(why_run, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 pid = next->pid;
	struct wait *w = bpf_map_lookup_elem(&waits, &pid);
	if (!w || !w->fired)
		return 0;
	struct why_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		w->fired = 0;
		return 0;
	}
	__u32 cpu = bpf_get_smp_processor_id();
	e->soft = w->soft;
	e->hard = w->hard;
	e->fired = w->fired;
	e->woken = w->woken ? w->woken : w->fired;
	e->ran = bpf_ktime_get_ns();
	bool same = w->woken && w->wake_cpu == cpu;
	e->irq_ns = same ? irq_of(cpu) - w->irq_at : 0;
	e->steal_ns = same ? steal_of(next) - w->steal_at : 0;
	e->pid = w->pid;
	e->tgid = w->tgid;
	e->gen = w->gen;
	e->arm_cpu = w->arm_cpu;
	e->run_cpu = cpu;
	if (w->holder_pid && w->holder_pid != pid) { /* what held the CPU when it was woken */
		e->holder_pid = w->holder_pid;
		__builtin_memcpy(e->holder_comm, w->holder_comm, WHY_COMM);
	} else { /* else what ran last before it */
		e->holder_pid = prev->pid;
		bpf_probe_read_kernel_str(e->holder_comm, sizeof(e->holder_comm), prev->comm);
	}
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), next->comm);
	/* the tracer is woken by a quarter-full buffer only: a wakeup per event would cost an
	 * interrupt and a switch per wait */
	bool full = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKE_BYTES;
	bpf_ringbuf_submit(e, full ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	w->fired = 0;
	w->woken = 0;
	w->holder_pid = 0;
	return 0;
}

/* A new process's tgid in its parent's namespace, the tracer's (seen() said so); 0 where
 * it has a namespace of its own. */
static __u32 child_tgid(struct task_struct *parent, struct task_struct *child)
{
	if (!ns_ino)
		return child->tgid;
	struct pid *pp = BPF_CORE_READ(parent, thread_pid), *cp = BPF_CORE_READ(child, thread_pid);
	unsigned int level = BPF_CORE_READ(pp, level);
	if (!cp || BPF_CORE_READ(cp, level) != level || level > 32)
		return 0;
	struct upid nr;
	void *at = (void *)cp + bpf_core_field_offset(struct pid, numbers) +
	           level * bpf_core_type_size(struct upid);
	if (bpf_probe_read_kernel(&nr, sizeof(nr), at))
		return 0;
	return nr.nr;
}

/* A traced process's child (not a thread: the same tgid) is traced from its fork. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(why_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid, pid;
	if (!target_tgid || child->tgid == parent->tgid)
		return 0;
	if (!seen(parent, &tgid, &pid) || tgid == self_tgid || !traced(tgid))
		return 0;
	__u32 gen = target_gen, key = child_tgid(parent, child);
	if (key)
		bpf_map_update_elem(&followed, &key, &gen, BPF_ANY);
	return 0;
}

/* A traced process is forgotten when its last thread exits: its tgid may be reused. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(why_exit, struct task_struct *p)
{
	__u32 tgid, pid;
	if (BPF_CORE_READ(p, signal, live.counter) == 0 && seen(p, &tgid, &pid))
		bpf_map_delete_elem(&followed, &tgid);
	return 0;
}

/* Device interrupts, and the softirqs that are not the timer's or the scheduler's. */
static void irq_enter(bool soft)
{
	__u32 zero = 0;
	struct irq_time *t = bpf_map_lookup_elem(&irqs, &zero);
	if (t) {
		if (soft)
			t->soft_at = bpf_ktime_get_ns();
		else
			t->hard_at = bpf_ktime_get_ns();
	}
}

static void irq_exit(bool soft)
{
	__u32 zero = 0;
	struct irq_time *t = bpf_map_lookup_elem(&irqs, &zero);
	if (!t)
		return;
	__u64 *at = soft ? &t->soft_at : &t->hard_at;
	if (*at)
		t->sum += bpf_ktime_get_ns() - *at;
	*at = 0;
}

static bool counted(unsigned int vec)
{
	return vec == 0 || (vec >= 2 && vec <= 6);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(why_irq_in)
{
	irq_enter(false);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(why_irq_out)
{
	irq_exit(false);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(why_soft_in, unsigned int vec)
{
	if (counted(vec))
		irq_enter(true);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(why_soft_out, unsigned int vec)
{
	if (counted(vec))
		irq_exit(true);
	return 0;
}
