/* SPDX-License-Identifier: MIT */
/*
 * measure/causes.c: names the cause of a late wakeup from counters the kernel keeps
 * anyway, without tracefs. Most specific first:
 *   throttled  cpu.stat's throttling rose during the sleep at a level with a quota;
 *   preempted  schedstat's run_delay rose by half the lateness or more;
 *   migrated   it woke on another CPU than it slept on;
 *   irq        device interrupts and softirqs on its CPU came above twice their usual rate;
 *   stolen     its CPU's steal time rose;
 *   slack      the lateness is within the thread's timer slack;
 *   wakeup     none of these: the kernel's own wakeup latency.
 * The reading after a wakeup is also the next sleep's "before"; the per-CPU files are read
 * in blocks, so irq and steal are "around the wakeup" (docs/DESIGN.md, "Why late from the
 * kernel's counters").
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <punctual/cpus.h>
#include "contract.h"
#include "measure/causes.h"

#define BLOCK 64 /* wakeups between two readings of the per-CPU files */

/* ---- the cgroup levels ---------------------------------------------------------------- */

static int read_small(const char *dir, const char *file, char *buf, size_t n)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, n - 1);
	int e = r < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return e;
	buf[r] = '\0';
	return 0;
}

/* The levels with a quota of info's walk (read by the caller) into cg. */
static void cgroup_from(struct causes_cgroup *cg, const struct pn_cpu_info *info)
{
	if (!info->cgroup_dir[0] || info->cgroup_version == PN_CGROUP_NONE) {
		snprintf(cg->note, sizeof(cg->note), "no cgroup with a cpu controller");
		return;
	}
	cg->v2 = !info->cgroup_v1_cpu;
	char dir[sizeof(cg->lv[0].dir)];
	snprintf(dir, sizeof(dir), "%s", info->cgroup_dir);
	int n = info->n_levels < PN_CPU_LEVELS_MAX ? info->n_levels : PN_CPU_LEVELS_MAX;
	cg->walked = n;
	for (int i = 0; i < n; i++) {
		const struct pn_cpu_level *l = &info->levels[i];
		if (l->status == 0 && l->quota_us > 0 && cg->n < CAUSES_LEVELS) {
			__typeof__(cg->lv[0]) *v = &cg->lv[cg->n++];
			snprintf(v->dir, sizeof(v->dir), "%s", dir);
			snprintf(v->path, sizeof(v->path), "%s", l->path);
			v->quota_us = l->quota_us;
			v->period_us = l->period_us;
			char b[64];
			v->burst_us = -1;
			if (read_small(dir, cg->v2 ? "cpu.max.burst" : "cpu.cfs_burst_us", b,
			               sizeof(b)) == 0)
				v->burst_us = strtoll(b, NULL, 10);
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	if (!cg->n)
		snprintf(cg->note, sizeof(cg->note), "no CFS quota from %.200s up to the root",
		         info->cgroup_path);
}

void causes_cgroup_init(struct causes_cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	struct pn_cpu_info *info = malloc(sizeof(*info));
	if (!info || pn_cpu_info(info) < 0)
		snprintf(cg->note, sizeof(cg->note), "the cgroup could not be read");
	else
		cgroup_from(cg, info);
	free(info);
}

void causes_cgroup_init_of(struct causes_cgroup *cg, long pid)
{
	memset(cg, 0, sizeof(*cg));
	struct pn_cpu_info *info = calloc(1, sizeof(*info));
	if (!info) {
		snprintf(cg->note, sizeof(cg->note), "the cgroup could not be read");
		return;
	}
	char file[64], note[256];
	int64_t quota, period;
	snprintf(file, sizeof(file), "/proc/%ld/cgroup", pid);
	pn__cgroup_limit_of(pn__fs_root(), file, info, &quota, &period, note, sizeof(note), true);
	cgroup_from(cg, info);
	free(info);
}

int causes_cgroup_stat(const struct causes_cgroup *cg, int level, struct pn__cgroup_stat *st)
{
	if (level < 0 || level >= cg->n)
		return -EINVAL;
	return pn__cgroup_stat(cg->lv[level].dir, cg->v2, st);
}

/* ---- readers -------------------------------------------------------------------------- */

static int64_t read_run_delay(int fd)
{
	struct pn__runs r;
	return fd >= 0 && pn__runs_pread(fd, &r) == 0 ? (int64_t)r.queued_ns : -1;
}

static uint64_t read_throttle(int fd, bool v2)
{
	struct pn__cgroup_stat st;
	if (fd < 0 || pn__cgroup_stat_pread(fd, v2, &st) < 0)
		return 0;
	return st.nr_throttled + st.throttled_ns;
}

/* A whole /proc file into a heap buffer: 0 or -errno. */
static int pread_all(int fd, char **buf)
{
	size_t cap = 16384;
	for (;;) {
		char *b = malloc(cap);
		if (!b)
			return -ENOMEM;
		ssize_t r = pread(fd, b, cap - 1, 0);
		if (r < 0) {
			int e = errno; /* before free */
			free(b);
			return e > 0 ? -e : -EIO;
		}
		if ((size_t)r < cap - 1) {
			b[r] = '\0';
			*buf = b;
			return 0;
		}
		free(b);
		if (cap >= (8u << 20))
			return -EFBIG;
		cap *= 2;
	}
}

/* CPU cpu's column in a per-CPU table's header (offline CPUs have none), or -1. */
static int cpu_column(const char *text, int cpu)
{
	int col = 0;
	const char *eol = strchr(text, '\n');
	for (const char *p = text; (p = strstr(p, "CPU")) && (!eol || p < eol); p += 3, col++)
		if (atoi(p + 3) == cpu)
			return col;
	return -1;
}

static bool skipped(const char *name, size_t len, const char *const *skip)
{
	for (; *skip; skip++)
		if (strlen(*skip) == len && strncmp(name, *skip, len) == 0)
			return true;
	return false;
}

/* The sum of column col over a per-CPU table's rows but those in skip (or, with only,
 * only those in only). */
static uint64_t column_sum(const char *text, int col, const char *const *skip,
                           const char *const *only)
{
	uint64_t sum = 0;
	const char *p = strchr(text, '\n');
	while (p && *++p) {
		while (*p == ' ')
			p++;
		const char *colon = strchr(p, ':'), *eol = strchr(p, '\n');
		if (!colon || (eol && colon > eol))
			goto next;
		size_t len = (size_t)(colon - p);
		if ((skip && skipped(p, len, skip)) || (only && !skipped(p, len, only)))
			goto next;
		const char *q = colon + 1;
		for (int c = 0; c <= col; c++) {
			char *end;
			unsigned long long v = strtoull(q, &end, 10);
			if (end == q || (eol && end > eol))
				goto next;
			if (c == col)
				sum += v;
			q = end;
		}
	next:
		p = eol;
	}
	return sum;
}

uint64_t causes_irq_sum(const char *interrupts, const char *softirqs, int cpu)
{
	static const char *const no_irq[] = {"LOC", "RES", NULL};
	static const char *const softirq[] = {"HI",       "NET_TX",  "NET_RX", "BLOCK",
	                                      "IRQ_POLL", "TASKLET", NULL};
	uint64_t sum = 0;
	int col;
	if (interrupts && (col = cpu_column(interrupts, cpu)) >= 0)
		sum += column_sum(interrupts, col, no_irq, NULL);
	if (softirqs && (col = cpu_column(softirqs, cpu)) >= 0)
		sum += column_sum(softirqs, col, NULL, softirq);
	return sum;
}

static uint64_t read_irqs(struct causes_thread *t, int cpu)
{
	char *irq = NULL, *soft = NULL;
	if (t->irq_fd >= 0 && pread_all(t->irq_fd, &irq) < 0)
		irq = NULL;
	if (t->softirq_fd >= 0 && pread_all(t->softirq_fd, &soft) < 0)
		soft = NULL;
	uint64_t sum = causes_irq_sum(irq, soft, cpu);
	free(irq);
	free(soft);
	return sum;
}

uint64_t causes_steal(const char *text, int cpu)
{
	char key[24];
	int klen = snprintf(key, sizeof(key), "\ncpu%d ", cpu);
	const char *p = strstr(text, key);
	unsigned long long v[8];
	if (p && sscanf(p + klen, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
	                &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
		return v[7];
	return 0;
}

/* Steal time of CPU cpu in /proc/stat (USER_HZ ticks), 0 where unknown. */
static uint64_t read_steal(struct causes_thread *t, int cpu)
{
	char *text = NULL;
	/* !text: for scan-build */
	if (t->stat_fd < 0 || pread_all(t->stat_fd, &text) < 0 || !text)
		return 0;
	uint64_t steal = causes_steal(text, cpu);
	free(text);
	return steal;
}

static void block_snapshot(struct causes_thread *t, int64_t now, int cpu, uint64_t irq)
{
	if (cpu != t->blk_cpu) { /* another CPU: its own rate */
		t->base_at = now;
		t->base_irq = irq;
	}
	t->blk_at = now;
	t->blk_cpu = cpu;
	t->blk_irq = irq;
	t->blk_steal = read_steal(t, cpu);
}

int causes_thread_open(struct causes_thread *t, const struct causes_cgroup *cg, int64_t now)
{
	memset(t, 0, sizeof(*t));
	t->cg = cg;
	t->sched_fd = pn__runs_open();
	int open_err = t->sched_fd < 0 ? t->sched_fd : 0;
	t->irq_fd = open("/proc/interrupts", O_RDONLY | O_CLOEXEC);
	t->softirq_fd = open("/proc/softirqs", O_RDONLY | O_CLOEXEC);
	t->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < CAUSES_LEVELS; i++) {
		t->cg_fd[i] = i < cg->n ? pn__cgroup_stat_open(cg->lv[i].dir) : -1;
		t->thr[i] = i < cg->n ? read_throttle(t->cg_fd[i], cg->v2) : 0;
	}
	int pol = sched_getscheduler(0);
	t->slack = pol == SCHED_FIFO || pol == SCHED_RR ? 0 : prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	t->run_delay = read_run_delay(t->sched_fd);
	t->cpu = sched_getcpu();
	t->blk_cpu = -1;
	block_snapshot(t, now, t->cpu, read_irqs(t, t->cpu));
	if (t->run_delay < 0) {
		causes_thread_close(t);
		return open_err ? open_err : -EIO;
	}
	return 0;
}

void causes_thread_close(struct causes_thread *t)
{
	int *fds[] = {&t->sched_fd, &t->irq_fd, &t->softirq_fd, &t->stat_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	for (int i = 0; i < CAUSES_LEVELS; i++)
		if (t->cg_fd[i] >= 0) {
			close(t->cg_fd[i]);
			t->cg_fd[i] = -1;
		}
}

void causes_record(struct causes_thread *t, const struct cause_rec *r)
{
	if (t->nrec == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct cause_rec *n = t->oom ? NULL : realloc(t->rec, cap * sizeof(*n));
		if (!n) {
			t->oom = true;
			return;
		}
		t->rec = n;
		t->cap = cap;
	}
	t->rec[t->nrec++] = *r;
}

int causes_after(struct causes_thread *t, int64_t now, int64_t late, uint64_t cycle,
                 uint64_t missed, bool check, int8_t *level)
{
	int throttled = -1;
	for (int i = 0; i < t->cg->n; i++) {
		uint64_t v = read_throttle(t->cg_fd[i], t->cg->v2);
		if (v != t->thr[i] && throttled < 0)
			throttled = i;
		t->thr[i] = v;
	}
	int64_t rd = read_run_delay(t->sched_fd);
	int cpu = sched_getcpu();
	int64_t waited = rd >= 0 && t->run_delay >= 0 ? rd - t->run_delay : 0;
	bool moved = cpu != t->cpu;
	t->run_delay = rd;
	t->cpu = cpu;
	t->wakeups++;
	if (!check) {
		if (t->wakeups % BLOCK == 0)
			block_snapshot(t, now, cpu, read_irqs(t, cpu));
		return -1;
	}
	uint64_t irq = read_irqs(t, cpu);
	struct pn__why_evidence ev = {.late = late,
	                              .throttled = throttled >= 0,
	                              .waited = waited,
	                              .moved = moved,
	                              .slack = t->slack};
	if (cpu == t->blk_cpu && now > t->blk_at) { /* the per-CPU files, since the last block */
		double span = (double)(t->blk_at - t->base_at);
		double rate = span > 0 ? (double)(t->blk_irq - t->base_irq) / span : 0;
		uint64_t d = irq - t->blk_irq;
		ev.irqs = d > 0 && (double)d > 2 * rate * (double)(now - t->blk_at);
		ev.stolen = read_steal(t, cpu) > t->blk_steal;
	}
	int c = pn__why_classify(&ev);
	block_snapshot(t, now, cpu, irq);
	struct cause_rec r = {.late = late,
	                      .run_delay = waited,
	                      .cycle = cycle,
	                      .missed = missed > UINT32_MAX ? UINT32_MAX : (uint32_t)missed,
	                      .cause = (uint8_t)c,
	                      .level = (int8_t)(c == PN__WHY_THROTTLED ? throttled : -1),
	                      .cpu = (int16_t)cpu};
	causes_record(t, &r);
	if (level)
		*level = r.level;
	return c;
}

/* ---- the table ------------------------------------------------------------------------ */

void cause_table_add(struct cause_table *tab, const struct causes_thread *t, int64_t threshold)
{
	tab->threshold = threshold;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct cause_rec *r = &t->rec[i];
		if (r->late <= threshold)
			continue;
		struct cause_stat *s = &tab->c[r->cause];
		tab->late += 1 + r->missed;
		tab->late_wakeups++;
		s->count += 1 + r->missed;
		s->wakeups++;
		s->total_ns += r->late;
		if (r->late > s->max_ns)
			s->max_ns = r->late;
		if (r->level >= 0 && r->level < CAUSES_LEVELS)
			tab->level_count[r->level]++;
	}
}

int cause_table_level(const struct cause_table *tab)
{
	int best = -1;
	for (int i = 0; i < CAUSES_LEVELS; i++)
		if (tab->level_count[i] &&
		    (best < 0 || tab->level_count[i] > tab->level_count[best]))
			best = i;
	return best;
}

int cause_table_top(const struct cause_table *tab)
{
	int best = -1;
	for (int c = 0; c < PN__WHY_COUNT; c++)
		if (tab->c[c].count && (best < 0 || tab->c[c].count > tab->c[best].count))
			best = c;
	return best;
}
