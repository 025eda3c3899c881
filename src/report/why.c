/* SPDX-License-Identifier: MIT */
/*
 * why.c: the causes of a thread's late waits, for `run --stats --explain`, by the rule of
 * why.h without the per-CPU files. A program works between its waits, so the counters are
 * read just before each wait and just after it, only while PUNCTUAL_EXPLAIN is set; the
 * "before" read delays the call, so a relative wait's lateness includes it. Each read
 * opens, reads and closes its file: the shim holds no descriptor a program could close
 * and reuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/cpus.h>
#include "internal.h"
#include "cpus/cgroup.h"
#include "report/record.h"
#include "report/why.h"
#include "sched/runs.h"
#include "wait/state.h"

#define WHY_LEVELS 4

static int64_t threshold = -1; /* ns; -1: twice each thread's median */
static char cg_dir[WHY_LEVELS][sizeof(((struct pn_cpu_info *)0)->cgroup_dir)];
static int cg_n;
static bool cg_v2;

const char *pn__why_name(int c)
{
	static const char *const names[PN__WHY_COUNT] = {
	        "throttled", "preempted", "migrated", "irq", "stolen", "slack", "wakeup"};
	return c >= 0 && c < PN__WHY_COUNT ? names[c] : "unknown";
}

int pn__why_classify(const struct pn__why_evidence *e)
{
	if (e->throttled)
		return PN__WHY_THROTTLED;
	if (e->waited >= 0 && 2 * e->waited >= e->late)
		return PN__WHY_PREEMPTED;
	if (e->moved)
		return PN__WHY_MIGRATED;
	if (e->irqs)
		return PN__WHY_IRQ;
	if (e->stolen)
		return PN__WHY_STOLEN;
	return e->late <= e->slack ? PN__WHY_SLACK : PN__WHY_WAKEUP;
}

bool pn__why_setup(const char *explain)
{
	if (!explain || !*explain || strcmp(explain, "0") == 0)
		return false;
	int64_t v;
	if (strcmp(explain, "auto") != 0 && pn__duration_parse(explain, 1, &v) == 0 && v > 0)
		threshold = v;
	struct pn_cpu_info *info = malloc(sizeof(*info)); /* the constructor: not a handler */
	if (!info)                                        /* the causes but throttling */
		return true;
	if (pn_cpu_info(info) == 0 && info->cgroup_dir[0]) {
		char dir[sizeof(info->cgroup_dir)];
		snprintf(dir, sizeof(dir), "%s", info->cgroup_dir);
		cg_v2 = info->cgroup_version == PN_CGROUP_V2;
		int n = info->n_levels < PN_CPU_LEVELS_MAX ? info->n_levels : PN_CPU_LEVELS_MAX;
		struct pn__cgroup_stat st;
		for (int i = 0; i < n && cg_n < WHY_LEVELS; i++) {
			const struct pn_cpu_level *l = &info->levels[i];
			if (l->status == 0 && l->quota_us > 0 &&
			    pn__cgroup_stat(dir, cg_v2, &st) == 0)
				snprintf(cg_dir[cg_n++], sizeof(cg_dir[0]), "%s", dir);
			char *slash = strrchr(dir, '/');
			if (!slash || slash == dir)
				break;
			*slash = '\0';
		}
	}
	free(info);
	return true;
}

static uint64_t read_throttled(void)
{
	uint64_t sum = 0;
	struct pn__cgroup_stat st;
	for (int i = 0; i < cg_n; i++)
		if (pn__cgroup_stat(cg_dir[i], cg_v2, &st) == 0)
			sum += st.nr_throttled + st.throttled_ns;
	return sum;
}

static int64_t read_run_delay(void)
{
	struct pn__runs r;
	return pn__runs_read(&r) == 0 ? (int64_t)r.queued_ns : -1;
}

/* The calling thread's why, mapped at its first wait; NULL if that fails. */
static struct pn__why *why_get(void)
{
	struct pn__state *t = pn__state_make();
	if (!t)
		return NULL;
	if (PN_LIKELY(t->why != NULL))
		return t->why;
	void *m = mmap(NULL, sizeof(struct pn__why), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct pn__why *w = m;
	int pol = (int)syscall(SYS_sched_getscheduler, 0); /* the shim's would end a lend */
	w->rt = pol == SCHED_FIFO || pol == SCHED_RR;
	return t->why = w;
}

static void why_before(struct pn__why_snap *s)
{
	int e = errno;
	struct pn__why *w = why_get();
	s->run_delay = w ? read_run_delay() : -1;
	s->throttled = read_throttled();
	s->slack = w && !w->rt ? syscall(SYS_prctl, PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L) : 0;
	s->cpu = sched_getcpu();
	errno = e;
}

static void why_after(const struct pn__why_snap *s, int64_t late)
{
	int e = errno;
	struct pn__why *w = why_get();
	if (!w)
		goto out;
	int64_t rd = read_run_delay();
	uint64_t thr = read_throttled();
	int cpu = sched_getcpu();
	if (threshold >= 0 && late <= threshold) /* given: counted exactly */
		goto out;
	if (rd < 0 || s->run_delay < 0) {
		w->unread++;
		goto out;
	}
	struct pn__why_evidence ev = {.late = late,
	                              .throttled = thr != s->throttled,
	                              .waited = rd - s->run_delay,
	                              .moved = cpu != s->cpu,
	                              .slack = s->slack};
	int c = pn__why_classify(&ev);
	w->n[c][pn__decay_hist_bucket_of(late)]++;
	if (late > w->max[c])
		w->max[c] = late;
	pn__record_why(pn__state_get()->rec, c, late);
out:
	errno = e;
}

/* A table's threshold (the given one, else above_auto) and its first lateness bucket: 0
 * where it was given (applied wait by wait), else the first wholly above it. */
static int table_from(int64_t above_auto, int64_t *above)
{
	*above = threshold >= 0 ? threshold : above_auto > 0 ? above_auto : 0;
	return threshold >= 0 ? 0 : pn__decay_hist_bucket_above(*above);
}

int64_t pn__why_threshold(void)
{
	return threshold;
}

int pn__why_table_from(int64_t above_auto)
{
	int64_t above;
	return table_from(above_auto, &above);
}

size_t pn__why_render(const struct pn__why *why, int64_t above_auto, const char *prefix, char *buf,
                      size_t n)
{
	int64_t above;
	int from = table_from(above_auto, &above);
	uint64_t count[PN__WHY_COUNT] = {0}, all = 0;
	for (int c = 0; c < PN__WHY_COUNT; c++) {
		for (int b = from; b < PN__DECAY_HIST_BUCKETS; b++)
			count[c] += why->n[c][b];
		all += count[c];
	}
	if (!all || n == 0)
		return 0;
	char t[16];
	int w = snprintf(buf, n, "%s%llu waits later than %s, why:\n", prefix,
	                 (unsigned long long)all, pn__duration_format(t, sizeof(t), (double)above));
	size_t len = w > 0 ? (size_t)w : 0;
	for (int c = 0; c < PN__WHY_COUNT && len < n; c++) {
		if (!count[c])
			continue;
		w = snprintf(buf + len, n - len, "%s  %-10s %8llu %5.1f%%  max %s\n", prefix,
		             pn__why_name(c), (unsigned long long)count[c],
		             100.0 * (double)count[c] / (double)all,
		             pn__duration_format(t, sizeof(t), (double)why->max[c]));
		len += w > 0 ? (size_t)w : 0;
	}
	return len < n ? len : n - 1;
}

void pn__why_step(struct pn__why_snap *s, int64_t late)
{
	if (late == PN__WHY_BEFORE)
		why_before(s);
	else
		why_after(s, late);
}
