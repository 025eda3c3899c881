/* SPDX-License-Identifier: MIT */
/* measure/causes.h: why a wakeup was late, from counters read around it. */
#ifndef PUNCTUAL_MEASURE_CAUSES_H
#define PUNCTUAL_MEASURE_CAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

/* The causes and the rule that names them are the library's (src/report/why.h): one rule
 * for the tool's loop and a program's waits under PUNCTUAL_EXPLAIN. */

#define CAUSES_LEVELS 16

/* The cgroup levels with a CFS quota, from this process's cgroup up to the mount root.
 * Read once, shared read-only by the measuring threads. */
struct causes_cgroup {
	bool v2;
	int walked; /* levels walked; 0: no cgroup could be read */
	int n;      /* levels with a quota, nearest first */
	struct {
		char dir[1024]; /* the directory holding cpu.stat */
		char path[512];
		int64_t quota_us, period_us, burst_us; /* burst -1 when absent */
	} lv[CAUSES_LEVELS];
	char note[256]; /* why no level is watched, or "" */
};
/* Fills cg; never fails (cg->note says what could not be read). */
void causes_cgroup_init(struct causes_cgroup *cg);
/* The same for process pid, through this process's mounts. */
void causes_cgroup_init_of(struct causes_cgroup *cg, long pid);

/* Level level's CFS counters: 0 or -errno. */
int causes_cgroup_stat(const struct causes_cgroup *cg, int level, struct pn__cgroup_stat *st);

/* The per-CPU files' parsers, pure functions of their text. */
/* CPU cpu's column of /proc/interrupts (without LOC and RES) plus /proc/softirqs' (HI
 * NET_TX NET_RX BLOCK IRQ_POLL TASKLET); either may be NULL; an offline CPU adds 0. */
uint64_t causes_irq_sum(const char *interrupts, const char *softirqs, int cpu);
/* CPU cpu's steal in /proc/stat, 0 where absent. */
uint64_t causes_steal(const char *stat, int cpu);

/* One wakeup later than the thread's candidate threshold, checked. */
struct cause_rec {
	int64_t late;      /* ns */
	int64_t run_delay; /* runqueue wait during the sleep, ns */
	uint64_t cycle;    /* the wakeup's number in its thread */
	uint32_t missed;   /* the periods it overran */
	uint8_t cause;
	int8_t level; /* throttled: the index into causes_cgroup.lv, else -1 */
	int16_t cpu;  /* the CPU it woke on */
};

/* One measuring thread's readers and what they last read, all in that thread. */
struct causes_thread {
	const struct causes_cgroup *cg;
	int sched_fd, irq_fd, softirq_fd, stat_fd;
	int cg_fd[CAUSES_LEVELS];
	int64_t slack;
	/* the last read, after the previous wakeup */
	int64_t run_delay;
	long nivcsw;
	int cpu;
	uint64_t thr[CAUSES_LEVELS]; /* nr_throttled + throttled_ns: either rising */
	/* the per-CPU counters' block snapshot */
	int64_t blk_at, base_at;
	int blk_cpu;
	uint64_t blk_irq, base_irq, blk_steal;
	uint64_t wakeups;
	struct cause_rec *rec;
	size_t nrec, cap;
	bool oom;
};
/* Opens the readers in the calling thread and takes the first reading: 0 or -errno (no
 * schedstat: nothing can be attributed). */
int causes_thread_open(struct causes_thread *t, const struct causes_cgroup *cg, int64_t now);
void causes_thread_close(struct causes_thread *t);
/* After a wakeup late ns after its deadline: reads the counters, the "before" of the next
 * sleep, and with check names and records the cause. The cause, or -1 unchecked. */
int causes_after(struct causes_thread *t, int64_t now, int64_t late, uint64_t cycle,
                 uint64_t missed, bool check, int8_t *level);
/* Appends r to t's records, the loop's and `punctual why`'s; out of memory it sets t->oom
 * and keeps those it has. */
void causes_record(struct causes_thread *t, const struct cause_rec *r);

/* The causes of the records later than threshold, over threads. count is late deadlines:
 * a wakeup plus every period it overran, so that a 70 ms throttle at 1 ms counts 71. */
struct cause_stat {
	uint64_t count;   /* late deadlines */
	uint64_t wakeups; /* late wakeups */
	int64_t total_ns, max_ns;
};
struct cause_table {
	int64_t threshold;
	uint64_t late;         /* late deadlines, all causes */
	uint64_t late_wakeups; /* wakeups later than threshold */
	struct cause_stat c[PN__WHY_COUNT];
	uint64_t level_count[CAUSES_LEVELS]; /* throttled wakeups per level */
};
void cause_table_add(struct cause_table *tab, const struct causes_thread *t, int64_t threshold);
/* The level most throttled wakeups named, or -1. */
int cause_table_level(const struct cause_table *tab);
/* The cause with the largest count, or -1 without late wakeups. */
int cause_table_top(const struct cause_table *tab);

#endif
