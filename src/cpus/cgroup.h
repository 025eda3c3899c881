/* SPDX-License-Identifier: MIT */
/*
 * cgroup.h: the cgroup parsers (cgroup_parse.c) and the limit walk behind pn_cpu_count
 * (cgroup.c), internal, pn__ names. The parsers are pure functions of NUL-terminated
 * text, so the fuzz harnesses and tests/unit/test_cgroup.c drive them without files;
 * pn__cgroup_limit does the I/O, every path under an explicit root prefix.
 */
#ifndef PUNCTUAL_CGROUP_H
#define PUNCTUAL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <punctual/cpus.h>

/* What /proc/self/cgroup says about this process. */
struct pn__cg_self {
	int has_v1;     /* at least one v1 hierarchy line */
	int has_v2;     /* a "0::" line (anywhere in the file) */
	int has_v1_cpu; /* a v1 line whose controllers include "cpu" */
	char v1_cpu_path[PN_CPU_PATH_MAX];
	char v2_path[PN_CPU_PATH_MAX];
};

/* Parses /proc/self/cgroup. Lines split on the first two colons only (paths hold
 * colons); malformed lines are skipped. Returns 0, or -EIO when no line was usable. */
int pn__cgroup_parse_self(const char *text, struct pn__cg_self *out);

/* A cgroup mount from /proc/self/mountinfo, escapes (\040...) decoded. */
struct pn__cg_mount {
	char root[PN_CPU_PATH_MAX];  /* the cgroup path mounted there ("/" on the host) */
	char point[PN_CPU_PATH_MAX]; /* where it is mounted */
	int outside;                 /* 1: cg_path does not lie under root (a "/.." path) */
	uint64_t id;                 /* the mount ID (mountinfo's first field) */
};

/* Finds the mount of the v1 hierarchy whose super options include "cpu" (v2 == 0) or the
 * cgroup2 mount (v2 == 1) to read cg_path in: among duplicates, the one with the longest
 * root containing cg_path, else the first (marked outside). Returns 0 or -ENOENT. */
int pn__cgroup_parse_mountinfo(const char *text, int v2, const char *cg_path,
                               struct pn__cg_mount *out);

/* v2 cpu.max: "max 100000", "50000 100000", "max" or "50000" (period 100000, the kernel's
 * default). *quota -1 for max. Returns 0, or -EIO (garbage, period 0, quota <= 0). */
int pn__cgroup_parse_max(const char *text, int64_t *quota, int64_t *period);

/* One signed decimal and an optional newline (v1 cpu.cfs_quota_us, periods, shares,
 * weights). Returns 0 or -EIO. */
int pn__cgroup_parse_int(const char *text, int64_t *v);

/* Counts the CPUs in a kernel cpu list ("0-3,8-11\n" is 8; "" is 0). Returns the count or
 * -EIO when malformed. */
int pn__cgroup_parse_cpulist(const char *text);

/* A cgroup level's CFS counters since it was created, from its cpu.stat: v1 nr_periods,
 * nr_throttled and throttled_time (ns), v2 the same with throttled_usec (ns here); a key
 * missing is 0. */
struct pn__cgroup_stat {
	uint64_t nr_periods, nr_throttled, throttled_ns;
};
/* cpu.stat's text into *st (the parser: cgroup_parse.c). */
void pn__cgroup_parse_stat(const char *text, bool v2, struct pn__cgroup_stat *st);

/* ---- the walk (cgroup.c) ---- */

/* The one reader of cpu.stat: the file in the cgroup directory dir, opened, read and
 * closed (0 or -errno); or, for a caller that reads it often, kept open (its descriptor,
 * or -errno) and read again. */
int pn__cgroup_stat(const char *dir, bool v2, struct pn__cgroup_stat *st);
int pn__cgroup_stat_open(const char *dir);
int pn__cgroup_stat_pread(int fd, bool v2, struct pn__cgroup_stat *st);

/* How many evaluations found their mount in the cache instead of mountinfo (tests). */
unsigned long pn__cgroup_mount_cache_hits(void);

/* Fills info's cgroup fields (version, path, dir, levels, limit as quota/period in
 * quota and period, -1 and 0 when none) reading under root. Never fails: errors go to
 * info->cgroup_error and note (a short phrase, "" when nothing to say). lean skips what
 * only explains (shares and weights). */
void pn__cgroup_limit(const char *root, struct pn_cpu_info *info, int64_t *quota, int64_t *period,
                      char *note, size_t note_size, bool lean);

/* pn__cgroup_limit for the process whose cgroup file (under root) is file, such as
 * "/proc/PID/cgroup"; the mounts are this process's (/proc/self/mountinfo), so the other
 * process must share its mount namespace's cgroup mounts (`punctual tune` on a host). */
void pn__cgroup_limit_of(const char *root, const char *file, struct pn_cpu_info *info,
                         int64_t *quota, int64_t *period, char *note, size_t note_size, bool lean);

/* The whole evaluation with an explicit root and, when affinity_list is not NULL, that
 * cpu list in place of sched_getaffinity (fixture trees). Returns 0 or -EINVAL. */
int pn__cpus_info_at(const char *root, const char *affinity_list, struct pn_cpu_info *info);

#endif
