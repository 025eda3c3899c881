/* SPDX-License-Identifier: MIT */
/*
 * cpus.c: pn_cpu_count(), the container-aware CPU count, and its cache: one 64-bit word,
 * the expiry (coarse monotonic ns) with its low 20 bits replaced by the count, so that no
 * reader sees a count with another refresh's expiry. A fresh read is a load, a coarse
 * clock read and a compare: no lock, no store, threads share the line read-only.
 *
 * The thread that finds the word expired claims it with a CAS pushing the expiry CLAIM_NS
 * ahead, keeping the stale count, then evaluates; others return the stale count. The
 * claim is a deadline, not a lock: one that never stores only delays the next refresh.
 * Evaluations use only their own stack, and the last store wins.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include "cpus/cgroup.h"
#include "internal.h"

#define COUNT_BITS 20
#define COUNT_MASK ((UINT64_C(1) << COUNT_BITS) - 1)
/* Two expiry units (2.1 ms): a claim's truncated expiry is still ahead of now. */
#define CLAIM_NS (INT64_C(2) << COUNT_BITS)

_Static_assert(PN_CPU_COUNT_MAX == COUNT_MASK, "the count must fit the cache word");

static _Atomic uint64_t cache;
static _Atomic int rounding_api = -1;
/* The vDSO's coarse clock_gettime, set by the first refresh: one indirect call. */
static _Atomic(pn__clock_gettime_fn) coarse_fn;

PN_API const char *pn_cpu_rounding_name(int policy)
{
	switch (policy) {
	case PN_CPU_ROUND_CEIL:
		return "ceil";
	case PN_CPU_ROUND_FLOOR:
		return "floor";
	case PN_CPU_ROUND_NEAREST:
		return "nearest";
	}
	return NULL;
}

PN_API const char *pn_cgroup_version_name(int version)
{
	switch (version) {
	case PN_CGROUP_NONE:
		return "none";
	case PN_CGROUP_V1:
		return "v1";
	case PN_CGROUP_V2:
		return "v2";
	case PN_CGROUP_HYBRID:
		return "hybrid";
	}
	return NULL;
}

PN_API int pn_cpu_set_rounding(int policy)
{
	if (policy != -1 && !pn_cpu_rounding_name(policy))
		return -EINVAL;
	atomic_store(&rounding_api, policy);
	atomic_store(&cache, 0);
	return 0;
}

/* ---- inputs --------------------------------------------------------------------------- */

/* Appends "a" or "a-b" to the list; on overflow ends it with "..." for good. */
static void list_add(char *buf, size_t size, size_t *len, long a, long b)
{
	char item[48];
	int n = a == b ? snprintf(item, sizeof(item), "%s%ld", *len ? "," : "", a)
	               : snprintf(item, sizeof(item), "%s%ld-%ld", *len ? "," : "", a, b);
	if (*len >= size - 1)
		return;
	if (*len + (size_t)n + 4 > size) {
		snprintf(buf + *len, size - *len, "...");
		*len = size - 1;
		return;
	}
	memcpy(buf + *len, item, (size_t)n + 1);
	*len += (size_t)n;
}

/* The affinity set, the CPU_ALLOC'd set grown until the kernel accepts its size. */
static int affinity_read(char *list, size_t size)
{
	for (int n = 1024; n <= (1 << 22); n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);
		if (!set)
			return -ENOMEM;
		size_t sz = CPU_ALLOC_SIZE(n);
		if (sched_getaffinity(0, sz, set) == 0) {
			int count = CPU_COUNT_S(sz, set);
			size_t len = 0;
			if (list)
				list[0] = '\0';
			for (long i = 0; list && i < n; i++) {
				if (!CPU_ISSET_S((size_t)i, sz, set))
					continue;
				long j = i;
				while (j + 1 < n && CPU_ISSET_S((size_t)j + 1, sz, set))
					j++;
				list_add(list, size, &len, i, j);
				i = j;
			}
			CPU_FREE(set);
			return count;
		}
		int e = errno;
		CPU_FREE(set);
		if (e != EINVAL)
			return -e;
	}
	return -EINVAL;
}

/* PUNCTUAL_CPU_COUNT in [1, PN_CPU_COUNT_MAX]; unset or empty: none. */
static int override_read(char *invalid, size_t size)
{
	const char *s = getenv("PUNCTUAL_CPU_COUNT");
	if (!s || !*s)
		return 0;
	long v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9' && v <= PN_CPU_COUNT_MAX; p++)
		v = v * 10 + (*p - '0');
	if (*p || v < 1 || v > PN_CPU_COUNT_MAX) {
		snprintf(invalid, size, "%s", s);
		return 0;
	}
	return (int)v;
}

static int rounding_read(char *invalid, size_t size)
{
	int api = atomic_load(&rounding_api);
	if (api >= 0)
		return api;
	const char *s = getenv("PUNCTUAL_CPU_ROUNDING");
	if (!s || !*s)
		return PN_CPU_ROUND_CEIL;
	for (int p = PN_CPU_ROUND_CEIL; p <= PN_CPU_ROUND_NEAREST; p++)
		if (strcmp(s, pn_cpu_rounding_name(p)) == 0)
			return p;
	snprintf(invalid, size, "%s", s);
	return PN_CPU_ROUND_CEIL;
}

/* quota/period rounded in integers: no floating-point edge at x.5. */
static int64_t round_limit(int64_t q, int64_t p, int policy)
{
	__int128 n;
	if (policy == PN_CPU_ROUND_FLOOR)
		n = (__int128)q / p;
	else if (policy == PN_CPU_ROUND_NEAREST)
		n = ((__int128)q * 2 + p) / ((__int128)p * 2);
	else
		n = ((__int128)q + p - 1) / p;
	if (n < 1)
		return 1;
	return n > PN_CPU_COUNT_MAX ? PN_CPU_COUNT_MAX : (int64_t)n;
}

/* ---- the evaluation ------------------------------------------------------------------- */

static void online_read(const char *root, struct pn_cpu_info *info)
{
	char buf[4096];
	int r = pn__fs_read_at(root, "/sys/devices/system/cpu/online", buf, sizeof(buf));
	info->online = r < 0 ? r : pn__cgroup_parse_cpulist(buf);
	if (info->online == 0)
		info->online = -EIO;
}

static void explain(struct pn_cpu_info *info, int base, int64_t q, int64_t p, const char *note);

/* lean: only what the count needs, at ~1 us a system call: no shares, the online CPUs only
 * when the affinity is unknown. */
static int evaluate_at(const char *root, const char *affinity_list, struct pn_cpu_info *info,
                       bool lean)
{
	if (!root || !info)
		return -EINVAL;
	char note[PN_CPU_REASON_MAX];
	memset(info, 0, sizeof(*info));
	note[0] = '\0';

	if (!lean)
		online_read(root, info);

	if (affinity_list) {
		info->affinity = pn__cgroup_parse_cpulist(affinity_list);
		snprintf(info->affinity_list, sizeof(info->affinity_list), "%s", affinity_list);
		info->affinity_list[strcspn(info->affinity_list, "\n")] = '\0';
		if (info->affinity == 0)
			info->affinity = -EIO;
	} else {
		info->affinity = affinity_read(lean ? NULL : info->affinity_list,
		                               sizeof(info->affinity_list));
	}

	if (lean && info->affinity <= 0)
		online_read(root, info);
	info->rounding = rounding_read(info->rounding_invalid, sizeof(info->rounding_invalid));
	info->override = override_read(info->override_invalid, sizeof(info->override_invalid));

	int64_t q, p;
	pn__cgroup_limit(root, info, &q, &p, note, sizeof(note), lean);

	/* what the scheduler lets us run on, else what is online, else 1 */
	int base = info->affinity > 0 ? info->affinity : info->online > 0 ? info->online : 1;
	if (base > PN_CPU_COUNT_MAX)
		base = PN_CPU_COUNT_MAX;
	int count = base;
	if (q > 0) {
		info->limit = (double)q / (double)p;
		info->limit_count = (int)round_limit(q, p, info->rounding);
		if (info->limit_count < count)
			count = info->limit_count;
	}
	if (info->override)
		count = info->override;
	info->count = count < 1 ? 1 : count;
	if (!lean)
		explain(info, base, q, p, note);
	return 0;
}

static void explain(struct pn_cpu_info *info, int base, int64_t q, int64_t p, const char *note)
{
	const char *base_what = info->affinity > 0 ? "affinity allows"
	                        : info->online > 0 ? "affinity unreadable; online"
	                                           : "affinity and online unreadable; assume";
	const char *rname = pn_cpu_rounding_name(info->rounding);
	int n, count = base;
	if (q > 0 && info->limit_count < count)
		count = info->limit_count;
	if (info->override) {
		n = snprintf(info->reason, sizeof(info->reason),
		             "PUNCTUAL_CPU_COUNT=%d overrides the computed %d", info->override,
		             count);
	} else if (q > 0 && info->limit_count < base) {
		n = snprintf(info->reason, sizeof(info->reason),
		             "cgroup %s limits to %.6g CPUs (%lld/%lld us), %s -> %d; %s %d",
		             info->limit_path, info->limit, (long long)q, (long long)p, rname,
		             info->limit_count, base_what, base);
	} else if (q > 0) {
		n = snprintf(info->reason, sizeof(info->reason),
		             "%s %d; the cgroup limit at %s (%.6g CPUs, %s -> %d) is not lower",
		             base_what, base, info->limit_path, info->limit, rname,
		             info->limit_count);
	} else if (info->cgroup_error) {
		n = snprintf(info->reason, sizeof(info->reason), "%s %d; cgroup limit unknown (%s)",
		             base_what, base, note);
	} else {
		n = snprintf(info->reason, sizeof(info->reason), "%s %d; no cgroup CPU limit",
		             base_what, base);
	}
	if (note[0] && (q > 0 || !info->cgroup_error) && n > 0 && (size_t)n < sizeof(info->reason))
		n += snprintf(info->reason + n, sizeof(info->reason) - (size_t)n, " (%s)", note);
	if (info->override_invalid[0] && n > 0 && (size_t)n < sizeof(info->reason))
		snprintf(info->reason + n, sizeof(info->reason) - (size_t)n,
		         "; PUNCTUAL_CPU_COUNT='%s' ignored", info->override_invalid);
}

int pn__cpus_info_at(const char *root, const char *affinity_list, struct pn_cpu_info *info)
{
	return evaluate_at(root, affinity_list, info, false);
}

/* ---- the cache ------------------------------------------------------------------------ */

static int store(int count)
{
	uint64_t expiry = (uint64_t)(pn_now_coarse() + PN_CPU_CACHE_NS);
	atomic_store_explicit(&cache, (expiry & ~COUNT_MASK) | (uint64_t)count,
	                      memory_order_relaxed);
	return count;
}

/* The info is 20 KiB: on the heap, so that a refresh needs little stack. Without memory,
 * or if evaluate_at failed, the affinity alone, uncached. */
static int evaluate(void)
{
	struct pn_cpu_info *info = malloc(sizeof(*info));
	if (info && evaluate_at(pn__fs_root(), NULL, info, true) == 0) {
		int n = store(info->count);
		free(info);
		return n;
	}
	free(info);
	char list[8];
	int n = affinity_read(list, sizeof(list));
	return n > 0 ? (n > PN_CPU_COUNT_MAX ? PN_CPU_COUNT_MAX : n) : 1;
}

PN_API int pn_cpu_count_fresh(void)
{
	return evaluate();
}

PN_API int pn_cpu_info(struct pn_cpu_info *info)
{
	if (!info)
		return -EINVAL;
	pn__cpus_info_at(pn__fs_root(), NULL, info);
	store(info->count);
	return 0;
}

/* Out of line, so that the fresh path stays a few instructions. */
static __attribute__((noinline)) int refresh(uint64_t stale)
{
	if (!atomic_load_explicit(&coarse_fn, memory_order_relaxed)) {
		pn__clock_gettime_fn f = pn__clock_vdso_gettime();
		atomic_store_explicit(&coarse_fn, f ? f : clock_gettime, memory_order_relaxed);
	}
	if (stale & COUNT_MASK) {
		uint64_t claim = ((uint64_t)(pn_now_coarse() + CLAIM_NS) & ~COUNT_MASK) |
		                 (stale & COUNT_MASK);
		/* lost: the word holds a count to return, unless pn_cpu_set_rounding dropped it */
		if (!atomic_compare_exchange_strong_explicit(
		            &cache, &stale, claim, memory_order_relaxed, memory_order_relaxed) &&
		    (stale & COUNT_MASK))
			return (int)(stale & COUNT_MASK);
	}
	return evaluate();
}

PN_API int pn_cpu_count(void)
{
	uint64_t c = atomic_load_explicit(&cache, memory_order_relaxed);
	pn__clock_gettime_fn f = atomic_load_explicit(&coarse_fn, memory_order_relaxed);
	if (PN_LIKELY(f != NULL)) {
		struct timespec ts;
		f(CLOCK_MONOTONIC_COARSE, &ts);
		if (PN_LIKELY((int64_t)(c & ~COUNT_MASK) > pn__ts_ns(&ts)))
			return (int)(c & COUNT_MASK);
	}
	return refresh(c);
}
