/* SPDX-License-Identifier: MIT */
/*
 * punctual/cpus.h: how many CPUs this process may use, container-aware and cheap enough
 * to call in a loop.
 *
 * The count is min(the affinity set, the cgroup CPU limit rounded by the policy) and
 * always >= 1. The cgroup limit is the smallest quota/period found walking from the
 * process's cgroup up to the hierarchy's mount root (cgroup v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, v2 cpu.max), seeded with the leaf's own value: a parent allowing 0.5
 * CPU limits an unlimited child. Shares and weights are reported but never limit the
 * count (JDK 19+ and Go agree: they are relative, not a ceiling).
 *
 * Environment, read at every evaluation:
 * - PUNCTUAL_CPU_COUNT=N (1 <= N <= PN_CPU_COUNT_MAX) replaces the whole computation,
 *   like the JDK's -XX:ActiveProcessorCount. Any other value is ignored and reported in
 *   pn_cpu_info's override_invalid.
 * - PUNCTUAL_CPU_ROUNDING=ceil|floor|nearest: how a fractional limit becomes a count;
 *   ceil by default (JDK, .NET, Go: 0.5 -> 1, 2.5 -> 3). pn_cpu_set_rounding() wins over
 *   it. An unknown value is ignored (ceil) and reported in rounding_invalid.
 */
#ifndef PUNCTUAL_CPUS_H
#define PUNCTUAL_CPUS_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest count the library reports (and the largest override it accepts). */
#define PN_CPU_COUNT_MAX 1048575
/* How long pn_cpu_count() keeps an answer, on the coarse monotonic clock. */
#define PN_CPU_CACHE_NS 20000000LL

/* Fixed sizes of struct pn_cpu_info's arrays; longer values are truncated. */
#define PN_CPU_PATH_MAX   512
#define PN_CPU_LIST_MAX   256
#define PN_CPU_LEVELS_MAX 32
#define PN_CPU_REASON_MAX 256

enum pn_cgroup_version {
	PN_CGROUP_NONE = 0,   /* no cgroup file system (or /proc/self/cgroup unreadable) */
	PN_CGROUP_V1 = 1,     /* only v1 hierarchies */
	PN_CGROUP_V2 = 2,     /* only the unified hierarchy */
	PN_CGROUP_HYBRID = 3, /* both: v1 controllers and a controller-less (or partial) v2 */
};

enum pn_cpu_rounding {
	PN_CPU_ROUND_CEIL = 0,    /* 0.5 -> 1, 2.5 -> 3 (default) */
	PN_CPU_ROUND_FLOOR = 1,   /* 2.5 -> 2, 0.5 -> 0 -> 1 (never below 1) */
	PN_CPU_ROUND_NEAREST = 2, /* halves up: 2.5 -> 3, 2.4 -> 2, 0.4 -> 1 */
};

/* One cgroup on the walk from the process's cgroup (levels[0]) up to the mount root. */
struct pn_cpu_level {
	char path[PN_CPU_PATH_MAX]; /* cgroup path, as /proc/self/cgroup names it ("/a/b") */
	int64_t quota_us;           /* -1: unlimited ("max", v1 -1) or not read */
	int64_t period_us;          /* 0 when not read */
	int64_t shares;             /* v1 cpu.shares or v2 cpu.weight; -1 when absent */
	int status;                 /* 0 read; -errno why the limit files could not be read */
};

struct pn_cpu_info {
	int count;    /* the answer: what pn_cpu_count_fresh() returns, >= 1 */
	int online;   /* CPUs online (/sys/devices/system/cpu/online); -errno if unreadable */
	int affinity; /* CPUs in the affinity set; -errno if sched_getaffinity failed */
	char affinity_list[PN_CPU_LIST_MAX]; /* "0-3,8-11" */
	int cgroup_version;                  /* enum pn_cgroup_version */
	int cgroup_v1_cpu;                   /* 1 when the limit was read from a v1 cpu hierarchy */
	char cgroup_path[PN_CPU_PATH_MAX];   /* the process's cgroup in that hierarchy */
	char cgroup_dir[PN_CPU_PATH_MAX];    /* the directory read for it, under the root prefix */
	int n_levels; /* levels walked, leaf first; levels[] keeps the first PN_CPU_LEVELS_MAX */
	struct pn_cpu_level levels[PN_CPU_LEVELS_MAX];
	double limit;    /* effective limit in CPUs (quota/period, e.g. 0.5); 0: none */
	int limit_level; /* index into levels of the level that imposed it; -1: none */
	char limit_path[PN_CPU_PATH_MAX]; /* that level's cgroup path; "" when no limit */
	int limit_count;                  /* the limit rounded by the policy (>= 1); 0: no limit */
	int rounding;                     /* enum pn_cpu_rounding in force */
	int override;                     /* PUNCTUAL_CPU_COUNT in force; 0: none */
	char override_invalid[64];        /* an invalid PUNCTUAL_CPU_COUNT, ignored; "" if none */
	char rounding_invalid[64];      /* an invalid PUNCTUAL_CPU_ROUNDING, ignored; "" if none */
	int cgroup_error;               /* 0, or -errno: the limit could not be read */
	char reason[PN_CPU_REASON_MAX]; /* one line: why the count is what it is */
};

/* The number of CPUs this process may use, >= 1. Cached for PN_CPU_CACHE_NS on the coarse
 * monotonic clock: the read path is one atomic load and a clock read, lock-free, and
 * writes nothing shared while the answer is fresh. A refresh (10-30 us) reads /proc and
 * /sys, allocates 20 KiB and uses under 10 KiB of stack. Thread-safe; never fails. */
PN_API int pn_cpu_count(void);

/* Like pn_cpu_count() but always re-evaluates (and refreshes the cache): the affinity,
 * /proc/self/cgroup and every level's limit. The mount found in /proc/self/mountinfo is
 * reused while statx finds the same mount ID at its mount point. Never fails. */
PN_API int pn_cpu_count_fresh(void);

/* Evaluates the count now and explains it. Returns 0, or -EINVAL for NULL; a file that
 * cannot be read is reported in *info, never an error. Refreshes the cache. */
PN_API int pn_cpu_info(struct pn_cpu_info *info);

/* Selects the rounding policy for every later evaluation, over PUNCTUAL_CPU_ROUNDING;
 * -1 returns to the environment's (or the default) policy. Drops the cached count.
 * Returns 0, or -EINVAL for any other value. */
PN_API int pn_cpu_set_rounding(int policy);

/* "ceil", "floor", "nearest"; "v1", "v2", "hybrid", "none": names for the enums, NULL for
 * values outside them. */
PN_API const char *pn_cpu_rounding_name(int policy);
PN_API const char *pn_cgroup_version_name(int version);

#ifdef __cplusplus
}
#endif
#endif
