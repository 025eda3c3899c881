/* SPDX-License-Identifier: MIT */
/* The figures of `punctual why`, gathered wait by wait: a target's records (the causes'
 * table is built from them at the end), the tasks that held its CPU, or, with --all, one
 * row per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "why/report.h"

static void add_holder(struct why_report *rep, const struct why_event *e, int64_t held)
{
	for (size_t i = 0; i < rep->nholders; i++)
		if (rep->holders[i].pid == e->holder_pid &&
		    strncmp(rep->holders[i].comm, e->holder_comm, WHY_COMM) == 0) {
			rep->holders[i].count++;
			rep->holders[i].held_ns += held;
			return;
		}
	if (rep->nholders == WHY_HOLDERS) {
		rep->other_holders++;
		return;
	}
	struct why_holder *h = &rep->holders[rep->nholders++];
	h->pid = e->holder_pid;
	memcpy(h->comm, e->holder_comm, WHY_COMM);
	h->comm[WHY_COMM - 1] = '\0';
	h->count = 1;
	h->held_ns = held;
}

static struct why_proc *proc_of(struct why_report *rep, const struct why_event *e)
{
	for (size_t i = 0; i < rep->nprocs; i++)
		if (rep->procs[i].tgid == e->tgid)
			return &rep->procs[i];
	if (rep->nprocs == rep->cap) {
		size_t cap = rep->cap ? 2 * rep->cap : 64;
		struct why_proc *n = rep->oom ? NULL : realloc(rep->procs, cap * sizeof(*n));
		if (!n) {
			rep->oom = true;
			return NULL;
		}
		rep->procs = n;
		rep->cap = cap;
	}
	struct why_proc *p = &rep->procs[rep->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tgid = e->tgid;
	memcpy(p->comm, e->comm, WHY_COMM);
	p->comm[WHY_COMM - 1] = '\0';
	return p;
}

void why_report_add(void *report, const struct why_event *e, const struct cause_rec *r)
{
	struct why_report *rep = report;
	if (rep->pid == 0) {
		struct why_proc *p = proc_of(rep, e);
		if (!p)
			return;
		if (e->pid == e->tgid) /* the main thread's name names the process */
			memcpy(p->comm, e->comm, WHY_COMM - 1);
		p->waits++;
		if (r->late > rep->above) {
			p->late++;
			p->n[r->cause]++;
		}
		if (r->late > p->max)
			p->max = r->late;
		return;
	}
	causes_record(&rep->recs, r);
	if (r->cause == PN__WHY_PREEMPTED && r->late > rep->above)
		add_holder(rep, e, r->run_delay);
}

static int cmp_late(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t why_report_quantile(const struct why_report *rep, double q)
{
	size_t n = rep->recs.nrec;
	if (!n)
		return 0;
	int64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = rep->recs.rec[i].late;
	qsort(v, n, sizeof(*v), cmp_late);
	size_t k = (size_t)(q * (double)(n - 1) + 0.5);
	int64_t r = v[k < n ? k : n - 1];
	free(v);
	return r;
}

static int cmp_holder(const void *a, const void *b)
{
	const struct why_holder *x = a, *y = b;
	return (x->held_ns < y->held_ns) - (x->held_ns > y->held_ns);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct why_proc *x = a, *y = b;
	if (x->late != y->late)
		return (x->late < y->late) - (x->late > y->late);
	return (x->max < y->max) - (x->max > y->max);
}

void why_report_sort(struct why_report *rep)
{
	qsort(rep->holders, rep->nholders, sizeof(rep->holders[0]), cmp_holder);
	if (rep->nprocs)
		qsort(rep->procs, rep->nprocs, sizeof(rep->procs[0]), cmp_proc);
}

void why_report_free(struct why_report *rep)
{
	free(rep->recs.rec);
	free(rep->procs);
	rep->recs.rec = NULL;
	rep->procs = NULL;
}

void why_report_name(long pid, char *buf, size_t n)
{
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	int r = pn__fs_read_file(path, name, sizeof(name));
	if (r > 0 && name[r - 1] == '\n')
		name[r - 1] = '\0';
	if (r > 0) {
		size_t len = strnlen(name, n - 1);
		memcpy(buf, name, len);
		buf[len] = '\0';
	} else if (!buf[0])
		snprintf(buf, n, "?");
}

void why_report_names(struct why_report *rep)
{
	for (size_t i = 0; i < rep->nprocs; i++)
		why_report_name(rep->procs[i].tgid, rep->procs[i].comm, sizeof(rep->procs[i].comm));
}

int why_proc_cause(const struct why_proc *p)
{
	int best = -1;
	for (int c = 0; c < PN__WHY_COUNT; c++)
		if (p->n[c] && (best < 0 || p->n[c] > p->n[best]))
			best = c;
	return best;
}
