/* SPDX-License-Identifier: MIT */
/*
 * punctual/cpus.h: how many CPUs this process may use, container-aware and cheap enough
 * to call in a loop: min(the affinity set, the smallest cgroup quota/period from the
 * process's cgroup up to the mount root, rounded), always >= 1. Shares and weights never
 * limit it. PUNCTUAL_CPU_COUNT and PUNCTUAL_CPU_ROUNDING are read at every evaluation.
 */
#ifndef PUNCTUAL_CPUS_H
#define PUNCTUAL_CPUS_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest count reported, and the largest override accepted. */
#define PN_CPU_COUNT_MAX 1048575
/* How long pn_cpu_count() keeps an answer, on the coarse monotonic clock. */
#define PN_CPU_CACHE_NS 20000000LL

/* struct pn_cpu_info's array sizes; longer values are truncated. */
#define PN_CPU_PATH_MAX   512
#define PN_CPU_LIST_MAX   256
#define PN_CPU_LEVELS_MAX 32
#define PN_CPU_REASON_MAX 256

enum pn_cgroup_version {
	PN_CGROUP_NONE = 0, /* none, or /proc/self/cgroup unreadable */
	PN_CGROUP_V1 = 1,
	PN_CGROUP_V2 = 2,
	PN_CGROUP_HYBRID = 3, /* v1 controllers beside a v2 hierarchy */
};

enum pn_cpu_rounding {
	PN_CPU_ROUND_CEIL = 0,    /* 0.5 -> 1, 2.5 -> 3 (default) */
	PN_CPU_ROUND_FLOOR = 1,   /* 2.5 -> 2, never below 1 */
	PN_CPU_ROUND_NEAREST = 2, /* halves up, never below 1 */
};

/* One cgroup on the walk up from the process's (levels[0]). */
struct pn_cpu_level {
	char path[PN_CPU_PATH_MAX]; /* as /proc/self/cgroup names it */
	int64_t quota_us;           /* -1: unlimited or not read */
	int64_t period_us;          /* 0: not read */
	int64_t shares;             /* cpu.shares or cpu.weight; -1: absent */
	int status;                 /* 0 read, or -errno */
};

struct pn_cpu_info {
	int count;                           /* what pn_cpu_count_fresh() returns */
	int online;                          /* CPUs online; -errno if unreadable */
	int affinity;                        /* CPUs in the affinity set; -errno */
	char affinity_list[PN_CPU_LIST_MAX]; /* "0-3,8-11" */
	int cgroup_version;                  /* enum pn_cgroup_version */
	int cgroup_v1_cpu;                   /* 1: the limit came from a v1 cpu hierarchy */
	char cgroup_path[PN_CPU_PATH_MAX];
	char cgroup_dir[PN_CPU_PATH_MAX]; /* the directory read */
	int n_levels; /* levels walked; levels[] keeps the first PN_CPU_LEVELS_MAX */
	struct pn_cpu_level levels[PN_CPU_LEVELS_MAX];
	double limit;    /* in CPUs; 0: none */
	int limit_level; /* the level that imposed it; -1: none */
	char limit_path[PN_CPU_PATH_MAX];
	int limit_count;                /* the limit rounded; 0: no limit */
	int rounding;                   /* enum pn_cpu_rounding */
	int override;                   /* PUNCTUAL_CPU_COUNT in force; 0: none */
	char override_invalid[64];      /* an ignored PUNCTUAL_CPU_COUNT; "": none */
	char rounding_invalid[64];      /* an ignored PUNCTUAL_CPU_ROUNDING; "": none */
	int cgroup_error;               /* -errno: the limit could not be read */
	char reason[PN_CPU_REASON_MAX]; /* one line: why the count is what it is */
};

/* The count, cached for PN_CPU_CACHE_NS: lock-free, writing nothing shared while fresh. A
 * refresh allocates 20 KiB and uses under 10 KiB of stack. Thread-safe; never fails. */
PN_API int pn_cpu_count(void);

/* pn_cpu_count() re-evaluated now, the cache refreshed. Never fails. */
PN_API int pn_cpu_count_fresh(void);

/* Evaluates the count now and explains it. 0, or -EINVAL for NULL; an unreadable file is
 * reported in *info. Refreshes the cache. */
PN_API int pn_cpu_info(struct pn_cpu_info *info);

/* The rounding for later evaluations, over PUNCTUAL_CPU_ROUNDING; -1 returns to the
 * environment's. Drops the cache. 0, or -EINVAL. */
PN_API int pn_cpu_set_rounding(int policy);

/* The enums' names; NULL out of range. */
PN_API const char *pn_cpu_rounding_name(int policy);
PN_API const char *pn_cgroup_version_name(int version);

#ifdef __cplusplus
}
#endif
#endif
