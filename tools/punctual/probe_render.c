/* SPDX-License-Identifier: MIT */
/*
 * probe_render.c: `punctual probe` as a report for people (a section per subject, in
 * aligned columns), as JSON (docs/probe.schema.json) and as Prometheus text for
 * node_exporter's textfile collector (base units: seconds; host facts in
 * punctual_host_info).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "prom.h"

int probe_mech(const struct probe *p, const char *id)
{
	for (int m = 0; m < p->sleeps.nm; m++)
		if (strcmp(p->mechs[m]->id, id) == 0)
			return m;
	return -1;
}

int probe_clock(const struct probe *p, const char *id)
{
	for (int i = 0; i < p->nclocks; i++)
		if (strcmp(p->clocks[i].id, id) == 0)
			return i;
	return -1;
}

/* The clock rows the short table shows, in this order. */
static const char *const short_clocks[] = {
        "pn_now",
        "libc:CLOCK_MONOTONIC",
        "syscall:CLOCK_MONOTONIC",
        "libc:CLOCK_MONOTONIC_COARSE",
        "pn_now_coarse",
        "libc:CLOCK_REALTIME",
        "gettimeofday",
        "libc:CLOCK_THREAD_CPUTIME_ID",
        "rdtsc",
        "pn_cycles",
        "cntvct",
};
#define N_SHORT (int)(sizeof(short_clocks) / sizeof(short_clocks[0]))

static const char *slack_name(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "unreadable (%s)", pn_strerror((int)v));
	else
		fmt_ns(buf, n, (double)v);
	return buf;
}

/* ---- text -------------------------------------------------------------------------- */

static void text_system(const struct probe *p)
{
	char a[48], b[48], c[32];
	fprintf(out, "punctual probe: timing on this %s\n\n", p->virt[0] == 'n' ? "host" : "guest");
	fprintf(out, "system\n");
	fprintf(out, "  kernel          %s\n", p->host.kernel);
	fprintf(out, "  cpu             %s\n", p->host.cpu);
	fprintf(out, "  virtualization  %s%s%s\n", p->virt, *p->dmi ? "; DMI: " : "", p->dmi);
	fprintf(out, "  clocksource     %s (available: %s)\n", p->host.clocksource,
	        p->host.clocksources);
	fprintf(out, "  tick            %.0f Hz (coarse clock resolution %s)\n", p->host.tick_hz,
	        fmt_ns(c, sizeof(c), (double)p->host.coarse_res_ns));
	fprintf(out, "  nohz_full       %s; isolated CPUs: %s\n",
	        *p->nohz_full ? p->nohz_full : "none", *p->isolated ? p->isolated : "none");
	fprintf(out, "  timer slack     this process %s, PID 1 %s\n",
	        slack_name(a, sizeof(a), p->slack_self), slack_name(b, sizeof(b), p->slack_pid1));
}

static void text_clocks(const struct probe *p)
{
	fprintf(out, "\nclocks (ns per read)            median  path         rank\n");
	for (int k = 0; k < N_SHORT; k++) {
		int i = probe_clock(p, short_clocks[k]);
		if (i < 0)
			continue;
		const struct clock_result *r = &p->clocks[i];
		char name[48];
		snprintf(name, sizeof(name), "%s%s", r->name,
		         strcmp(r->via, "syscall") == 0 ? " (syscall)" : "");
		fprintf(out, "  %-28s %8.1f  %-11s  %4d\n", name, r->cost_median, r->path, r->rank);
	}
	fprintf(out, "  pn_cycles: %s at %.3f MHz\n", p->cycles.name, p->cycles.hz / 1e6);
}

/* A p50 / p99 pair in us: the p99 only from 100 sleeps ("-" under). */
static const char *pair(char *buf, size_t n, const struct pn_hist *h)
{
	double p50 = (double)pn_hist_percentile(h, 50) / 1e3;
	if (pn_hist_count(h) < 100)
		snprintf(buf, n, "%.1f / -", p50);
	else
		snprintf(buf, n, "%.1f / %.1f", p50, (double)pn_hist_percentile(h, 99) / 1e3);
	return buf;
}

static void text_sleeps(const struct probe *p)
{
	char b[32], c[32];
	const struct sleep_matrix *x = &p->sleeps;
	fprintf(out,
	        "\nsleeps: overshoot past the deadline in us, p50 / p99 (early returns: %llu)\n",
	        (unsigned long long)sleep_matrix_early(x));
	fprintf(out, "  %-20s %-8s", "", "sleep");
	for (int s = 0; s < x->nslacks; s++) {
		char h[48];
		snprintf(h, sizeof(h), "slack %s", fmt_ns(b, sizeof(b), (double)x->slacks[s]));
		fprintf(out, "  %18s", h);
	}
	fputc('\n', out);
	for (int m = 0; m < x->nm; m++)
		for (int i = 0; i < x->nintervals; i++) {
			fprintf(out, "  %-20s %-8s", i ? "" : x->m[m]->id,
			        fmt_ns(c, sizeof(c), (double)x->intervals[i]));
			for (int s = 0; s < x->nslacks; s++) {
				char v[48];
				if (x->unsupported[m])
					snprintf(v, sizeof(v), "unsupported");
				else
					pair(v, sizeof(v),
					     &sleep_matrix_cell(x, i, s, m)->overshoot);
				fprintf(out, "  %18s", v);
			}
			fputc('\n', out);
		}
	out_wrap(out, "  ", "  ",
	         "(precise:P rows are pn_sleep_until with precision P and its default budget; they "
	         "set their own slack. A p99 needs 100 sleeps: under that, -.)");
}

static void text_timers(const struct probe *p)
{
	const struct probe_timers *t = &p->timers;
	if (!t->run)
		return;
	char a[32], b[32];
	fprintf(out, "\ntimers: %d one-shot timers, delays %s to %s, on a pn_wheel in real time\n",
	        t->timers, fmt_ns(a, sizeof(a), (double)t->min_delay),
	        fmt_ns(b, sizeof(b), (double)t->max_delay));
	fprintf(out, "  wakeups without a precision window   %llu\n",
	        (unsigned long long)t->wakeups_exact);
	fprintf(out, "  wakeups with %d%% of the delay        %llu (offline optimum %llu)\n",
	        t->percent, (unsigned long long)t->wakeups_window,
	        (unsigned long long)t->optimum_window);
	fprintf(out, "  lateness p99 %s inside windows of up to %s, early fires %llu\n",
	        fmt_ns(a, sizeof(a), (double)t->late_p99),
	        fmt_ns(b, sizeof(b), (double)(t->max_delay * t->percent / 100)),
	        (unsigned long long)t->early);
}

static void text_cpus(const struct probe *p)
{
	fprintf(out, "\ncpus\n");
	if (p->cpu_status < 0) {
		fprintf(out, "  unavailable: %s\n", pn_strerror(p->cpu_status));
		return;
	}
	fprintf(out, "  may use         %d (online ", p->cpu.count);
	if (p->cpu.online > 0)
		fprintf(out, "%d", p->cpu.online);
	else
		fprintf(out, "unreadable");
	if (p->cpu.affinity > 0)
		fprintf(out, ", affinity %d: %s)\n", p->cpu.affinity, p->cpu.affinity_list);
	else
		fprintf(out, ", affinity unreadable)\n");
	char s1[4 * PN_CPU_PATH_MAX];
	fprintf(out, "  cgroup          %s %s\n", pn_cgroup_version_name(p->cpu.cgroup_version),
	        text_safe(s1, sizeof(s1), p->cpu.cgroup_path));
	fprintf(out, "  why             %s\n", text_safe(s1, sizeof(s1), p->cpu.reason));
}

void probe_render_text(const struct probe *p)
{
	text_system(p);
	text_clocks(p);
	text_sleeps(p);
	text_timers(p);
	text_cpus(p);
	probe_frontier_text(out, &p->frontier);
	probe_why_text(out, &p->why);
	fprintf(out, "\nrecommendations\n");
	if (!p->nrecos)
		fprintf(out, "  none: nothing measured here calls for a change\n");
	for (int i = 0; i < p->nrecos; i++) {
		char first[16];
		snprintf(first, sizeof(first), "  %d. ", i + 1);
		out_wrap(out, first, "     ", p->recos[i].text);
	}
	fprintf(out, "\nmeasured in %.1f s; `punctual probe --json` has every figure\n",
	        (double)p->elapsed / 1e9);
}

/* ---- JSON -------------------------------------------------------------------------- */

void probe_render_json(const struct probe *p)
{
	struct json j;
	json_report_begin(&j, out, "probe");
	json_bool(&j, "quick", p->quick);
	json_int(&j, "elapsed_ns", p->elapsed);

	json_obj(&j, "system");
	json_str(&j, "kernel", p->host.kernel);
	json_str(&j, "cpu", p->host.cpu);
	json_str(&j, "virtualization", p->virt);
	json_str(&j, "dmi", p->dmi);
	json_str(&j, "clocksource", p->host.clocksource);
	json_words(&j, "available_clocksources", p->host.clocksources);
	json_num(&j, "tick_hz_estimate", p->host.tick_hz);
	json_int(&j, "coarse_resolution_ns", p->host.coarse_res_ns);
	json_str(&j, "nohz_full", p->nohz_full);
	json_str(&j, "isolated_cpus", p->isolated);
	json_int_if(&j, "slack_self_ns", p->slack_self >= 0, p->slack_self); /* or -errno */
	json_int_if(&j, "slack_pid1_ns", p->slack_pid1 >= 0, p->slack_pid1);
	json_obj_end(&j);

	json_obj(&j, "clocks");
	json_str(&j, "cycles_source", p->cycles.name);
	json_num(&j, "cycles_hz", p->cycles.hz);
	json_arr(&j, "sources");
	for (int i = 0; i < p->nclocks; i++) {
		const struct clock_result *r = &p->clocks[i];
		json_obj(&j, NULL);
		json_str(&j, "id", r->id);
		json_str(&j, "path", r->path);
		json_num(&j, "ns_per_read", r->cost_median);
		json_num(&j, "ns_per_read_min", r->cost_min); /* probe --compare's noise */
		json_int(&j, "rank", r->rank);
		json_uint(&j, "backward", r->backward_same + (r->ordered ? r->backward_cross : 0));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);

	const struct sleep_matrix *x = &p->sleeps;
	json_obj(&j, "sleeps");
	json_uint(&j, "early_total", sleep_matrix_early(x));
	json_arr(&j, "cells");
	for (int i = 0; i < x->nintervals; i++)
		for (int s = 0; s < x->nslacks; s++)
			for (int m = 0; m < x->nm; m++) {
				const struct sleep_cell *c = sleep_matrix_cell(x, i, s, m);
				json_obj(&j, NULL);
				json_str(&j, "mechanism", x->m[m]->id);
				json_int(&j, "interval_ns", x->intervals[i]);
				json_int(&j, "slack_ns", x->slacks[s]);
				json_bool(&j, "supported", !x->unsupported[m]);
				json_uint(&j, "early", c->early);
				json_hist(&j, "overshoot_ns", &c->overshoot, 0);
				if (strncmp(x->m[m]->id, "precise", 7) == 0 &&
				    pn_hist_count(&c->overshoot))
					json_num(&j, "spin_per_sleep_ns",
					         (double)c->spun_ns /
					                 (double)pn_hist_count(&c->overshoot));
				json_obj_end(&j);
			}
	json_arr_end(&j);
	json_obj_end(&j);

	const struct probe_timers *t = &p->timers;
	json_obj(&j, "timers");
	json_int(&j, "timers", t->timers);
	json_int(&j, "min_delay_ns", t->min_delay);
	json_int(&j, "max_delay_ns", t->max_delay);
	json_int(&j, "precision_percent", t->percent);
	json_uint(&j, "wakeups_without_window", t->wakeups_exact);
	json_uint(&j, "wakeups_with_window", t->wakeups_window);
	json_uint(&j, "offline_optimum", t->optimum_window);
	json_uint(&j, "early", t->early);
	json_int(&j, "late_p99_ns", t->late_p99);
	json_obj_end(&j);

	json_obj(&j, "cpus");
	if (p->cpu_status == 0) {
		json_int(&j, "count", p->cpu.count);
		/* -errno when unreadable: null, as in `punctual cpus --json` */
		json_int_if(&j, "online", p->cpu.online > 0, p->cpu.online);
		json_int_if(&j, "affinity", p->cpu.affinity > 0, p->cpu.affinity);
		json_str(&j, "affinity_list", p->cpu.affinity_list);
		json_str(&j, "cgroup_version", pn_cgroup_version_name(p->cpu.cgroup_version));
		json_str(&j, "cgroup_path", p->cpu.cgroup_path);
		json_num(&j, "limit", p->cpu.limit);
		json_str(&j, "reason", p->cpu.reason);
	} else {
		json_int(&j, "count", p->cpu_count);
		json_str(&j, "error", pn_strerror(p->cpu_status));
	}
	json_obj_end(&j);

	probe_frontier_json(&j, &p->frontier);
	probe_why_json(&j, &p->why);
	json_arr(&j, "recommendations");
	for (int i = 0; i < p->nrecos; i++) {
		const struct probe_reco *r = &p->recos[i];
		json_obj(&j, NULL);
		json_str(&j, "kind", r->kind);
		if (*r->command)
			json_str(&j, "command", r->command);
		if (r->measured) {
			json_obj(&j, "effect");
			json_str(&j, "figure", r->figure);
			json_num(&j, "before", r->before);
			json_num(&j, "after", r->after);
			json_obj_end(&j);
		}
		json_str(&j, "text", r->text);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
}

/* ---- Prometheus -------------------------------------------------------------------- */

static int render_prom(FILE *f, const void *arg)
{
	const struct probe *p = arg;
	prom_help(f, "punctual_host_info", "gauge", "Host facts from punctual probe (always 1).");
	fputs("punctual_host_info{kernel=\"", f);
	prom_label(f, p->host.kernel);
	fputs("\",cpu=\"", f);
	prom_label(f, p->host.cpu);
	fputs("\",virtualization=\"", f);
	prom_label(f, p->virt);
	fputs("\",clocksource=\"", f);
	prom_label(f, p->host.clocksource);
	fprintf(f, "\",version=\"%s\"} 1\n", PUNCTUAL_VERSION);

	prom_help(f, "punctual_tick_hertz", "gauge",
	          "Kernel tick rate estimated from the coarse clock.");
	fprintf(f, "punctual_tick_hertz %.0f\n", p->host.tick_hz);
	prom_help(f, "punctual_timer_slack_seconds", "gauge",
	          "Timer slack of this process and of PID 1.");
	fprintf(f, "punctual_timer_slack_seconds{process=\"self\"} %.9g\n",
	        (double)p->slack_self / 1e9);
	if (p->slack_pid1 >= 0)
		fprintf(f, "punctual_timer_slack_seconds{process=\"pid1\"} %.9g\n",
		        (double)p->slack_pid1 / 1e9);

	prom_help(f, "punctual_clock_read_seconds", "gauge", "Median cost of one clock read.");
	for (int i = 0; i < p->nclocks; i++) {
		fprintf(f, "punctual_clock_read_seconds{source=\"");
		prom_label(f, p->clocks[i].id);
		fprintf(f, "\",path=\"%s\"} %.6g\n", p->clocks[i].path,
		        p->clocks[i].cost_median / 1e9);
	}

	const struct sleep_matrix *x = &p->sleeps;
	prom_help(f, "punctual_sleep_overshoot_seconds", "gauge",
	          "Sleep overshoot past the deadline, by mechanism, interval, timer slack and "
	          "quantile.");
	static const double qs[] = {0.5, 0.99, 0.999};
	for (int i = 0; i < x->nintervals; i++)
		for (int s = 0; s < x->nslacks; s++)
			for (int m = 0; m < x->nm; m++) {
				if (x->unsupported[m])
					continue;
				const struct sleep_cell *c = sleep_matrix_cell(x, i, s, m);
				for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
					fprintf(f,
					        "punctual_sleep_overshoot_seconds{mechanism=\"%s\","
					        "interval_seconds=\"%.9g\",slack_seconds=\"%.9g\","
					        "percentile=\"%g\"} %.9g\n",
					        x->m[m]->id, (double)x->intervals[i] / 1e9,
					        (double)x->slacks[s] / 1e9, qs[q] * 100,
					        (double)pn_hist_percentile(&c->overshoot,
					                                   qs[q] * 100) /
					                1e9);
			}
	prom_help(f, "punctual_sleep_early_returns", "gauge",
	          "Sleeps that returned before their deadline in this probe (must be 0).");
	fprintf(f, "punctual_sleep_early_returns %llu\n",
	        (unsigned long long)sleep_matrix_early(x));

	const struct probe_timers *t = &p->timers;
	prom_help(f, "punctual_timer_wakeups", "gauge",
	          "Wakeups of the timer coalescing demo, by precision window.");
	fprintf(f, "punctual_timer_wakeups{window=\"none\"} %llu\n",
	        (unsigned long long)t->wakeups_exact);
	fprintf(f, "punctual_timer_wakeups{window=\"%d%%\"} %llu\n", t->percent,
	        (unsigned long long)t->wakeups_window);
	fprintf(f, "punctual_timer_wakeups{window=\"optimum\"} %llu\n",
	        (unsigned long long)t->optimum_window);

	prom_help(f, "punctual_cpus", "gauge",
	          "CPUs: what this process may use, online, in its affinity.");
	if (p->cpu_status == 0) {
		fprintf(f, "punctual_cpus{kind=\"usable\"} %d\n", p->cpu.count);
		if (p->cpu.online > 0)
			fprintf(f, "punctual_cpus{kind=\"online\"} %d\n", p->cpu.online);
		if (p->cpu.affinity > 0)
			fprintf(f, "punctual_cpus{kind=\"affinity\"} %d\n", p->cpu.affinity);
		if (p->cpu.limit > 0)
			fprintf(f, "punctual_cpus{kind=\"cgroup_limit\"} %g\n", p->cpu.limit);
	} else {
		fprintf(f, "punctual_cpus{kind=\"usable\"} %d\n", p->cpu_count);
	}
	probe_frontier_prom(f, &p->frontier);
	probe_why_prom(f, &p->why);
	prom_help(f, "punctual_probe_duration_seconds", "gauge", "How long the probe took.");
	fprintf(f, "punctual_probe_duration_seconds %.3f\n", (double)p->elapsed / 1e9);
	return 0;
}

int probe_write_prom(const struct probe *p, const char *path)
{
	/* the collector must never read half a file: write beside it, then rename */
	return file_write(path, render_prom, p);
}
