/* SPDX-License-Identifier: MIT */
/* `punctual why`'s report as text and JSON: the lateness, the main cause, the causes'
 * table (render/causes.c's, the table of `sleep --periodic --explain`) and what held the
 * CPU; with --all one row per process. */
#include <signal.h>
#include <stdio.h>

#include "contract.h"
#include "render/causes.h"
#include "util/encode.h"
#include "util/json.h"
#include "util/out.h"
#include "why/report.h"

static void table_of(const struct why_report *rep, struct cause_table *tab)
{
	*tab = (struct cause_table){0};
	cause_table_add(tab, &rep->recs, rep->above);
}

static void text_holders(const struct why_report *rep)
{
	char name[64], t[32];
	if (!rep->nholders)
		return;
	fprintf(out, "what held the CPU when a preempted thread was woken:\n");
	for (size_t i = 0; i < rep->nholders && i < 5; i++)
		fprintf(out, "  %-16s pid %-8u %8llu waits %10s\n",
		        text_safe(name, sizeof(name), rep->holders[i].comm), rep->holders[i].pid,
		        (unsigned long long)rep->holders[i].count,
		        fmt_ns(t, sizeof(t), (double)rep->holders[i].held_ns));
}

static void text_target(const struct why_report *rep)
{
	char a[32], b[32], c[32], d[32], name[64];
	struct cause_table tab;
	table_of(rep, &tab);
	fprintf(out, "pid %ld (%s): %s traced%s, %zu timed waits ended by their timer\n", rep->pid,
	        text_safe(name, sizeof(name), rep->comm),
	        fmt_ns(a, sizeof(a), (double)rep->elapsed), rep->exited ? " until it ended" : "",
	        rep->recs.nrec);
	if (!rep->recs.nrec)
		return;
	fprintf(out, "lateness: p50 %s  p99 %s  max %s (from the deadline asked for to the run)\n",
	        fmt_ns(b, sizeof(b), (double)why_report_quantile(rep, 0.5)),
	        fmt_ns(c, sizeof(c), (double)why_report_quantile(rep, 0.99)),
	        fmt_ns(d, sizeof(d), (double)why_report_quantile(rep, 1.0)));
	int top = cause_table_top(&tab);
	if (top < 0) {
		fprintf(out, "none later than %s\n", fmt_ns(a, sizeof(a), (double)rep->above));
		return;
	}
	fprintf(out, "main cause: %s, %llu of %llu waits later than %s (%.1f%%)\n",
	        pn__why_name(top), (unsigned long long)tab.c[top].count,
	        (unsigned long long)tab.late, fmt_ns(a, sizeof(a), (double)rep->above),
	        100.0 * (double)tab.c[top].count / (double)tab.late);
	cause_text_table(out, &tab, rep->cg, "  ");
	text_holders(rep);
}

static void text_all(const struct why_report *rep)
{
	char a[32], b[32], name[64];
	fprintf(out,
	        "every process: %s traced, %zu with timed waits ended by their timer; late: "
	        "more than %s past the deadline\n",
	        fmt_ns(a, sizeof(a), (double)rep->elapsed), rep->nprocs,
	        fmt_ns(b, sizeof(b), (double)rep->above));
	if (!rep->nprocs)
		return;
	fprintf(out, "%8s  %-16s %9s %9s %10s  %s\n", "pid", "command", "waits", "late", "max",
	        "main cause");
	for (size_t i = 0; i < rep->nprocs && i < 20; i++) {
		const struct why_proc *p = &rep->procs[i];
		int top = why_proc_cause(p);
		fprintf(out, "%8u  %-16s %9llu %9llu %10s  %s\n", p->tgid,
		        text_safe(name, sizeof(name), p->comm), (unsigned long long)p->waits,
		        (unsigned long long)p->late, fmt_ns(a, sizeof(a), (double)p->max),
		        top < 0 ? "-" : pn__why_name(top));
	}
}

void why_render_text(const struct why_report *rep)
{
	char a[32];
	if (rep->interrupted)
		fprintf(out, "interrupted by %s after %s: the waits traced until then\n",
		        rep->interrupted == SIGINT ? "SIGINT" : "SIGTERM",
		        fmt_ns(a, sizeof(a), (double)rep->elapsed));
	if (rep->pid)
		text_target(rep);
	else
		text_all(rep);
}

static void json_target(struct json *j, const struct why_report *rep)
{
	struct cause_table tab;
	table_of(rep, &tab);
	json_int(j, "pid", rep->pid);
	json_str(j, "comm", rep->comm);
	json_bool(j, "exited", rep->exited);
	json_uint(j, "waits", rep->recs.nrec);
	json_uint(j, "late_waits", tab.late);
	json_obj(j, "lateness_ns");
	json_int(j, "p50", why_report_quantile(rep, 0.5));
	json_int(j, "p90", why_report_quantile(rep, 0.9));
	json_int(j, "p99", why_report_quantile(rep, 0.99));
	json_int(j, "max", why_report_quantile(rep, 1.0));
	json_obj_end(j);
	int top = cause_table_top(&tab);
	if (top >= 0)
		json_str(j, "main_cause", pn__why_name(top));
	else
		json_none(j, "main_cause");
	cause_json_table(j, &tab, rep->cg);
	json_arr(j, "holders");
	for (size_t i = 0; i < rep->nholders; i++) {
		json_obj(j, NULL);
		json_int(j, "pid", rep->holders[i].pid);
		json_str(j, "comm", rep->holders[i].comm);
		json_uint(j, "count", rep->holders[i].count);
		json_int(j, "held_ns", rep->holders[i].held_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
	cause_json_cgroup(j, rep->cg);
}

void why_render_proc_json(struct json *j, const struct why_proc *p)
{
	int top = why_proc_cause(p);
	json_obj(j, NULL);
	json_int(j, "pid", p->tgid);
	json_str(j, "comm", p->comm);
	json_uint(j, "waits", p->waits);
	json_uint(j, "late_waits", p->late);
	json_int(j, "max_late_ns", p->max);
	if (top >= 0)
		json_str(j, "main_cause", pn__why_name(top));
	else
		json_none(j, "main_cause");
	json_obj(j, "causes");
	for (int c = 0; c < PN__WHY_COUNT; c++)
		json_uint(j, pn__why_name(c), p->n[c]);
	json_obj_end(j);
	json_obj_end(j);
}

static void json_all(struct json *j, const struct why_report *rep)
{
	json_arr(j, "processes");
	for (size_t i = 0; i < rep->nprocs; i++)
		why_render_proc_json(j, &rep->procs[i]);
	json_arr_end(j);
}

void why_render_json(const struct why_report *rep)
{
	struct json j;
	json_report_begin(&j, out, rep->pid ? "why" : "why --all");
	json_int(&j, "duration_ns", rep->elapsed);
	json_int(&j, "above_ns", rep->above);
	json_bool(&j, "interrupted", rep->interrupted != 0);
	if (rep->pid)
		json_target(&j, rep);
	else
		json_all(&j, rep);
	json_end(&j);
}
