/* SPDX-License-Identifier: MIT */
/*
 * cgroup.h: the cgroup parsers, pure functions of NUL-terminated text so that tests and
 * fuzzers drive them without files, and the limit walk behind pn_cpu_count. Internal.
 */
#ifndef PUNCTUAL_CGROUP_H
#define PUNCTUAL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <punctual/cpus.h>

/* What /proc/self/cgroup says about this process. */
struct pn__cg_self {
	int has_v1;     /* a v1 hierarchy line */
	int has_v2;     /* a "0::" line */
	int has_v1_cpu; /* a v1 line with the "cpu" controller */
	char v1_cpu_path[PN_CPU_PATH_MAX];
	char v2_path[PN_CPU_PATH_MAX];
};

/* Parses /proc/self/cgroup, malformed lines skipped: 0, or -EIO when no line was usable. */
int pn__cgroup_parse_self(const char *text, struct pn__cg_self *out);

/* A cgroup mount from mountinfo, escapes decoded. */
struct pn__cg_mount {
	char root[PN_CPU_PATH_MAX];  /* the cgroup path mounted there */
	char point[PN_CPU_PATH_MAX]; /* where it is mounted */
	int outside;                 /* 1: cg_path is not under root (a "/.." path) */
	uint64_t id;                 /* the mount ID */
};

/* The v1 cpu hierarchy's mount (v2 == 0) or cgroup2's (v2 == 1) to read cg_path in: of
 * duplicates, the longest root containing cg_path, else the first (marked outside). 0 or
 * -ENOENT. */
int pn__cgroup_parse_mountinfo(const char *text, int v2, const char *cg_path,
                               struct pn__cg_mount *out);

/* v2 cpu.max (*quota -1 for max; the period defaults to 100000): 0, or -EIO. */
int pn__cgroup_parse_max(const char *text, int64_t *quota, int64_t *period);

/* One signed decimal and an optional newline: 0 or -EIO. */
int pn__cgroup_parse_int(const char *text, int64_t *v);

/* The CPUs in a kernel cpu list ("0-3,8-11\n" is 8), or -EIO. */
int pn__cgroup_parse_cpulist(const char *text);

/* A cgroup level's CFS counters since it was created (ns); a missing key is 0. */
struct pn__cgroup_stat {
	uint64_t nr_periods, nr_throttled, throttled_ns;
};
/* cpu.stat's text into *st. */
void pn__cgroup_parse_stat(const char *text, bool v2, struct pn__cgroup_stat *st);

/* ---- the walk (cgroup.c) ---- */

/* The one reader of cpu.stat in the cgroup directory dir: opened, read and closed (0 or
 * -errno); or kept open (its descriptor, or -errno) and read again. */
int pn__cgroup_stat(const char *dir, bool v2, struct pn__cgroup_stat *st);
int pn__cgroup_stat_open(const char *dir);
int pn__cgroup_stat_pread(int fd, bool v2, struct pn__cgroup_stat *st);

/* Evaluations that found their mount in the cache (tests). */
unsigned long pn__cgroup_mount_cache_hits(void);

/* Fills info's cgroup fields and the limit (quota -1, period 0: none) reading under root.
 * Never fails: errors go to info->cgroup_error and note. lean skips what only explains. */
void pn__cgroup_limit(const char *root, struct pn_cpu_info *info, int64_t *quota, int64_t *period,
                      char *note, size_t note_size, bool lean);

/* pn__cgroup_limit for another process's cgroup file, through this process's mounts (the
 * two must share their cgroup mounts). */
void pn__cgroup_limit_of(const char *root, const char *file, struct pn_cpu_info *info,
                         int64_t *quota, int64_t *period, char *note, size_t note_size, bool lean);

/* The whole evaluation under root, with affinity_list (not NULL) in place of
 * sched_getaffinity. 0 or -EINVAL. */
int pn__cpus_info_at(const char *root, const char *affinity_list, struct pn_cpu_info *info);

#endif
