/* SPDX-License-Identifier: MIT */
/*
 * Whether a CFS quota throttled `punctual probe` itself: each quota level's cpu.stat read
 * before any section measures and again at the why-late loop's end (the shared run's hogs
 * would throttle a quota by themselves). Where one did, no advice spins (a spin spends the
 * quota and is throttled in turn): the quota's advice instead.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "contract.h"
#include "probe/probe.h"
#include "util/encode.h"
#include "util/out.h"

void probe_quota_begin(struct probe *p)
{
	struct probe_quota *q = &p->quota;
	causes_cgroup_init(&q->cg);
	q->level = -1;
	for (int i = 0; i < q->cg.n; i++)
		q->status[i] = causes_cgroup_stat(&q->cg, i, &q->before[i]);
}

void probe_quota_end(struct probe *p)
{
	struct probe_quota *q = &p->quota;
	for (int i = 0; i < q->cg.n; i++) {
		struct pn__cgroup_stat now;
		if (q->status[i] < 0 || causes_cgroup_stat(&q->cg, i, &now) < 0 ||
		    now.nr_throttled <= q->before[i].nr_throttled)
			continue;
		int64_t ns = (int64_t)(now.throttled_ns - q->before[i].throttled_ns);
		if (q->level < 0 || ns > q->throttled_ns) {
			q->level = i;
			q->throttled = now.nr_throttled - q->before[i].nr_throttled;
			q->throttled_ns = ns;
		}
	}
}

bool probe_throttled(const struct probe *p)
{
	return p->quota.level >= 0;
}

void probe_quota_reco(struct probe *p)
{
	const struct probe_quota *q = &p->quota;
	const __typeof__(q->cg.lv[0]) *l = &q->cg.lv[q->level];
	char path[4 * sizeof(l->path)], a[32], b[32], c[32], cmd[160];
	text_safe(path, sizeof(path), l->path);
	snprintf(cmd, sizeof(cmd), "raise the CPU quota of cgroup %.100s (%s)", path,
	         q->cg.v2 ? "cpu.max" : "cpu.cfs_quota_us");
	probe_reco_add(p, "quota", cmd,
	               "CPU quota: cgroup %.240s's quota, %s per %s, throttled this probe in %llu "
	               "periods (%s in all). A precise sleep's spin would spend the quota and be "
	               "throttled in turn, so no advice here spins: raise the quota (%s) or allow "
	               "bursts (%s), then probe again.",
	               path, fmt_ns(a, sizeof(a), (double)l->quota_us * 1e3),
	               fmt_ns(b, sizeof(b), (double)l->period_us * 1e3),
	               (unsigned long long)q->throttled,
	               fmt_ns(c, sizeof(c), (double)q->throttled_ns),
	               q->cg.v2 ? "cpu.max" : "cpu.cfs_quota_us",
	               q->cg.v2 ? "cpu.max.burst" : "cpu.cfs_burst_us");
}
