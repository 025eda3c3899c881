/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe`'s "why late" section: its own short loop of 1 ms periodic sleeps gives
 * the cause of the late tail here and now; the cgroup's counters say whether the quota
 * throttles in general; where eBPF allows, the rest of the host is traced meanwhile. A
 * recommendation is made only when one cause holds most of the late deadlines, or for
 * the quota when it throttled the probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/hist.h>
#include "contract.h"
#include "measure/periodic.h"
#include "probe/probe.h"
#include "render/causes.h"
#include "util/diag.h"
#include "util/encode.h"
#include "util/json.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/prom.h"
#include "why/watch.h"

static int procs_running(void)
{
	char buf[8192];
	FILE *f = fopen("/proc/stat", "re");
	int n = -1;
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "procs_running %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The loop again, a third as long, in blocks alternating without and with
 * /dev/cpu_dma_latency held at 0 (dropped when the file closes, at any exit). A host's
 * burst lands in one block, not in both of a kind: the main loop before, compared with
 * the held loop after, once made a burst look like PM QoS's gain (late 2.5% -> 0.4%). */
static void measure_qos(struct probe_why *w, bool quick, struct periodic_result *r)
{
	struct periodic_config c = {.interval = w->interval,
	                            .duration =
	                                    (quick ? 350000000LL : 1000000000LL) / (2 * QOS_PAIRS),
	                            .nthreads = 1};
	struct pn_hist held, without;
	pn_hist_init(&held);
	pn_hist_init(&without);
	progress("probe: why late, with and without PM QoS (cpu_dma_latency 0), alternating");
	for (int k = 0; k < 2 * QOS_PAIRS; k++) {
		bool on = k % 2;
		int fd = -1;
		int32_t zero = 0;
		if (on && ((fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC)) < 0 ||
		           write(fd, &zero, sizeof(zero)) != sizeof(zero))) {
			w->qos.status = -errno;
			if (fd >= 0)
				close(fd);
			return;
		}
		int e = periodic_run(&c, 0, r);
		if (fd >= 0)
			close(fd);
		if (e < 0) {
			w->qos.status = e;
			periodic_free(r);
			return;
		}
		uint64_t *b = w->qos.block[k / 2][on];
		b[0] = pn_hist_count(&r->late);
		b[1] = probe_count_above(&r->late, 2 * w->p50);
		w->qos.block_p50[k / 2][on] = pn_hist_percentile(&r->late, 50);
		if (on) {
			w->qos.elapsed += r->elapsed;
			w->qos.cycles += b[0];
			w->qos.late += b[1];
			pn_hist_merge(&held, &r->late);
		} else {
			w->qos.cycles_without += b[0];
			w->qos.late_without += b[1];
			pn_hist_merge(&without, &r->late);
		}
		periodic_free(r);
	}
	w->qos.p50 = pn_hist_percentile(&held, 50);
	w->qos.p99 = pn_hist_percentile(&held, 99);
	w->qos.p50_without = pn_hist_percentile(&without, 50);
	w->qos.p99_without = pn_hist_percentile(&without, 99);
}

/* PM QoS made a figure worse beyond the noise: more late wakeups than its blocks without
 * it would give by chance (their rate plus 2 Poisson standard deviations), or a p99 higher
 * than theirs by a quarter. */
static bool qos_worse(const struct probe_why *w)
{
	double e =
	        (double)w->qos.late_without * (double)w->qos.cycles / (double)w->qos.cycles_without;
	return (double)w->qos.late > e + 2 * sqrt(e) || w->qos.p99 * 4 > w->qos.p99_without * 5;
}

/* Whether each pair's block with PM QoS had a lower late rate (median: by_p50) than the
 * block without. */
static bool qos_every_pair(const struct probe_why *w, bool by_p50)
{
	for (int i = 0; i < QOS_PAIRS; i++) {
		const uint64_t *off = w->qos.block[i][0], *on = w->qos.block[i][1];
		const int64_t *p50 = w->qos.block_p50[i];
		if (!off[0] || !on[0] ||
		    (by_p50 ? p50[1] >= p50[0] : on[1] * off[0] >= off[1] * on[0]))
			return false;
	}
	return true;
}

/* PM QoS helps when it made no figure worse and either halved the late wakeups per cycle
 * or cut a median over QOS_P50_MIN by a fifth, against its blocks without it. The halving
 * counts from QOS_LATE_MIN late wakeups without it, two standard deviations of a Poisson
 * count below what the rate without predicts; either holds in every pair of blocks. Below
 * that median is the wakeup's own path. */
#define QOS_LATE_MIN 5
#define QOS_P50_MIN  10000
static bool qos_helps(const struct probe_why *w)
{
	if (w->qos.status < 0 || !w->qos.cycles || !w->qos.cycles_without || qos_worse(w))
		return false;
	double before = (double)w->qos.late_without / (double)w->qos.cycles_without,
	       with = (double)w->qos.late / (double)w->qos.cycles,
	       e = before * (double)w->qos.cycles;
	return (w->qos.late_without >= QOS_LATE_MIN && with <= before / 2 &&
	        probe_fewer((double)w->qos.late, e) && qos_every_pair(w, false)) ||
	       (w->qos.p50_without > QOS_P50_MIN && w->qos.p50 <= w->qos.p50_without * 4 / 5 &&
	        qos_every_pair(w, true));
}

/* The host's other programs, traced during the loop where this process may: the watch,
 * or NULL with w->host saying why not. */
static struct why_watch *host_begin(struct probe_why *w, struct why_report *rep)
{
	const char *why = "", *step = "";
	struct why_watch *watch = NULL;
	rep->above = WHY_ALL_ABOVE;
	int r = why_can_trace(&why);
	if (r == 0 && (r = why_watch_open(&watch, 0, false, why_report_add, rep, &step)) == 0 &&
	    (r = why_watch_start(watch, 0)) < 0)
		step = "start";
	if (r < 0 && !*why)
		snprintf(w->host.why_not, sizeof(w->host.why_not), "eBPF tracing failed at %s: %s",
		         step, strerror(-r));
	else if (r < 0)
		snprintf(w->host.why_not, sizeof(w->host.why_not), "%s", why);
	w->host.status = r;
	if (r < 0) {
		why_watch_close(watch);
		return NULL;
	}
	return watch;
}

/* The trace stopped: the programs with a late wait, the most first, into w->host. */
static void host_end(struct probe_why *w, struct why_watch *watch, struct why_report *rep)
{
	struct why_run run;
	int r = watch ? why_watch_stop(watch, &run) : 0;
	why_watch_close(watch);
	if (r < 0) {
		w->host.status = r;
		snprintf(w->host.why_not, sizeof(w->host.why_not), "eBPF tracing failed: %s",
		         strerror(-r));
	}
	if (watch && r == 0) {
		why_report_sort(rep);
		w->host.elapsed = run.elapsed;
		w->host.programs = rep->nprocs;
		for (size_t i = 0; i < rep->nprocs && rep->procs[i].late; i++) {
			w->host.late++;
			if (w->host.ntop < PROBE_HOST_TOP) {
				why_report_name(rep->procs[i].tgid, rep->procs[i].comm,
				                sizeof(rep->procs[i].comm));
				w->host.top[w->host.ntop++] = rep->procs[i];
			}
		}
	}
	why_report_free(rep);
}

static void probe_why_measure(struct probe_why *w, bool quick)
{
	memset(w, 0, sizeof(*w));
	w->run = true;
	w->interval = 1000000;
	w->duration = quick ? 500000000LL : 2500000000LL;
	causes_cgroup_init(&w->cg);
	struct periodic_config c = {.interval = w->interval,
	                            .duration = w->duration,
	                            .explain = true,
	                            .cg = &w->cg,
	                            .nthreads = 1};
	struct periodic_result *r = malloc(sizeof(*r));
	if (!r)
		die(1, "out of memory");
	progress("probe: why late (%.0f s of 1 ms periodic sleeps)", (double)w->duration / 1e9);
	struct why_report *rep = calloc(1, sizeof(*rep));
	if (!rep)
		die(1, "out of memory");
	struct why_watch *host = host_begin(w, rep);
	struct others_snap before, after;
	w->others_status = others_take(&before, "");
	int e = periodic_run(&c, 0, r);
	host_end(w, host, rep);
	free(rep);
	if (w->others_status == 0 && (w->others_status = others_take(&after, "")) == 0)
		others_diff(&before, &after, r->elapsed, getpid(),
		            (int)sysconf(_SC_NPROCESSORS_ONLN), &w->others);
	others_free(&before);
	others_free(&after);
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(1, "the periodic loop failed: %s", pn_strerror(e));
	w->elapsed = r->elapsed;
	w->cycles = pn_hist_count(&r->late);
	w->missed = r->missed;
	w->early = r->early;
	w->p50 = pn_hist_percentile(&r->late, 50);
	w->p99 = pn_hist_percentile(&r->late, 99);
	w->max = pn_hist_max(&r->late);
	w->status = r->causes_status;
	cause_table_add(&w->tab, &r->causes, 2 * w->p50);
	for (int i = 0; i < w->cg.n; i++)
		w->st_status[i] = causes_cgroup_stat(&w->cg, i, &w->st[i]);
	w->runnable = procs_running();
	w->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	periodic_free(r);
	measure_qos(w, quick, r);
	free(r);
}

/* Other processes kept this many CPUs busy during the loop: the report names them. */
#define OTHERS_BUSY 0.25

/* " (name 0.95 CPU, name 0.10 CPU)": the busiest other processes, into buf. */
static const char *others_names(char *buf, size_t n, const struct others *o)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < o->ntop && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s %.2f CPU", i ? ", " : " (",
		                       o->top[i].comm, o->top[i].cpus);
	if (o->ntop && at < n)
		snprintf(buf + at, n - at, ")");
	return buf;
}

/* Other processes keeping this many CPUs busy can be what a late wakeup waited behind;
 * less is the odd daemon's wakeup. */
#define OTHERS_PREEMPT 0.1

/* Whether others kept CPUs busy enough to explain preempted wakeups: on a quiet host the
 * run-queue waits are the kernel's own, which no advice moves. */
static bool others_preempt(const struct probe_why *w)
{
	return w->others_status == 0 && w->others.cpus >= OTHERS_PREEMPT;
}

static bool others_busy(const struct probe_why *w)
{
	return w->others_status == 0 && w->others.cpus >= OTHERS_BUSY;
}

/* PM QoS, where holding cpu_dma_latency at 0 measurably helped: 1, else 0. */
static int qos_reco(const struct probe_why *w, struct probe_reco *r)
{
	if (!qos_helps(w))
		return 0;
	char a[32], b[32];
	*r = (struct probe_reco){.kind = "pm_qos",
	                         .measured = true,
	                         .figure = "late_share",
	                         .before = (double)w->qos.late_without /
	                                   (double)w->qos.cycles_without,
	                         .after = (double)w->qos.late / (double)w->qos.cycles};
	snprintf(r->command, sizeof(r->command), "hold /dev/cpu_dma_latency at 0");
	snprintf(
	        r->text, sizeof(r->text),
	        "Wakeups from idle: holding /dev/cpu_dma_latency at 0 (PM QoS: no CPU idles in "
	        "a state slower to leave): the 1 ms loop's late wakeups went from %.1f%% to %.1f%% "
	        "and its median from %s to %s (measured, %.1f s each, alternating; recommended "
	        "where the "
	        "late share halves or the median falls by a fifth, and no figure got worse). "
	        "Keep it held while the latency-sensitive work runs (tuned's latency-performance "
	        "profile, or any process that keeps the file open with 0; `punctual sleep "
	        "--periodic --dma-latency 0` shows it). Its cost: idle CPUs poll instead of "
	        "halting, which takes power, and on a VM the host sees those vCPUs busy.",
	        100.0 * (double)w->qos.late_without / (double)w->qos.cycles_without,
	        100.0 * (double)w->qos.late / (double)w->qos.cycles,
	        fmt_ns(a, sizeof(a), (double)w->qos.p50_without),
	        fmt_ns(b, sizeof(b), (double)w->qos.p50), (double)w->qos.elapsed / 1e9);
	return 1;
}

static int probe_why_reco(const struct probe_why *w, struct probe_reco *r)
{
	char *buf = r->text;
	size_t n = sizeof(r->text);
	const struct cause_table *t = &w->tab;
	int top = cause_table_top(t);
	char a[32], b[32], c[32], d[32];
	if (!w->run)
		return 0;
	/* a dominant cause, over enough deadlines to be no accident */
	if (w->status < 0 || top < 0 || t->late < 10 || 2 * t->c[top].count < t->late ||
	    t->c[top].wakeups < 2)
		return qos_reco(w, r);
	double share = 100.0 * (double)t->c[top].count / (double)t->late;
	fmt_ns(a, sizeof(a), (double)t->c[top].max_ns);
	if (top == PN__WHY_THROTTLED) {
		int lv = cause_table_level(t);
		if (lv < 0)
			return 0;
		const __typeof__(w->cg.lv[0]) *l = &w->cg.lv[lv];
		char path[4 * sizeof(l->path)];
		r->kind = "throttling";
		snprintf(buf, n,
		         "CFS throttling: %.0f%% of the late deadlines of a 1 ms loop (up to %s "
		         "late) "
		         "came from cgroup %.240s's quota, %s per %s (throttled in %llu of %llu "
		         "periods "
		         "since it was created). Raise the limit, shorten the period (a throttle "
		         "lasts up to period - quota), or allow bursts (%s).",
		         share, a, text_safe(path, sizeof(path), l->path),
		         fmt_ns(b, sizeof(b), (double)l->quota_us * 1e3),
		         fmt_ns(c, sizeof(c), (double)l->period_us * 1e3),
		         (unsigned long long)w->st[lv].nr_throttled,
		         (unsigned long long)w->st[lv].nr_periods,
		         w->cg.v2 ? "cpu.max.burst" : "cpu.cfs_burst_us");
		return 1;
	}
	char names[160];
	if (top == PN__WHY_PREEMPTED && others_preempt(w)) {
		r->kind = "preemption";
		snprintf(buf, n,
		         "Preemption: %.0f%% of the late deadlines of a 1 ms loop (up to %s late) "
		         "waited on the runqueue behind other runnable tasks (%.1f CPUs kept busy "
		         "by "
		         "other processes during the loop%s, on %d CPUs). Give the "
		         "latency-sensitive threads their own CPUs (taskset, cpusets), a better "
		         "nice "
		         "value, a short EEVDF slice, or SCHED_FIFO.",
		         share, a, w->others.cpus, others_names(names, sizeof(names), &w->others),
		         w->cpus);
		return 1;
	}
	/* the guest's own idle states before the host */
	if (qos_reco(w, r))
		return 1;
	if (others_busy(w) && (top == PN__WHY_STOLEN || top == PN__WHY_WAKEUP)) {
		r->kind = "busy";
		snprintf(buf, n,
		         "A busy machine: while the 1 ms loop ran (p99 %s late), other processes "
		         "kept %.1f of %d CPUs busy%s. Its late tail may be theirs, not the "
		         "host's: probe again when they are done before asking for other vCPUs.",
		         fmt_ns(d, sizeof(d), (double)w->p99), w->others.cpus, w->cpus,
		         others_names(names, sizeof(names), &w->others));
		return 1;
	}
	if (top == PN__WHY_STOLEN || (top == PN__WHY_WAKEUP && t->c[top].max_ns >= 1000000)) {
		r->kind = "host";
		snprintf(buf, n,
		         "%s: %.0f%% of the late deadlines of a 1 ms loop (up to %s late, p99 %s) "
		         "had no cause inside this machine%s: the hypervisor %s. Ask for dedicated "
		         "vCPUs or a less loaded host.",
		         top == PN__WHY_STOLEN ? "Steal time" : "Stalls", share, a,
		         fmt_ns(d, sizeof(d), (double)w->p99),
		         top == PN__WHY_STOLEN ? " but steal time" : "",
		         top == PN__WHY_STOLEN ? "ran something else on this CPU"
		                               : "most likely halted or descheduled the vCPU");
		return 1;
	}
	return 0;
}

/* The host's late programs: a line, then the first few with their main cause. */
static void host_text(FILE *f, const struct probe_why *w)
{
	char line[320], a[32], b[32], name[64];
	const char *lead = "  elsewhere       ", *pad = "                  ";
	if (w->host.status < 0) {
		snprintf(line, sizeof(line), "not traced: %s", w->host.why_not);
		out_wrap(f, lead, pad, line);
		return;
	}
	snprintf(line, sizeof(line),
	         "%zu of the %zu other programs with timed waits were late (over %s)%s",
	         w->host.late, w->host.programs, fmt_ns(a, sizeof(a), (double)WHY_ALL_ABOVE),
	         w->host.late ? ":" : "");
	out_wrap(f, lead, pad, line);
	for (size_t i = 0; i < w->host.ntop && i < PROBE_HOST_TEXT; i++) {
		const struct why_proc *p = &w->host.top[i];
		int top = why_proc_cause(p);
		snprintf(line, sizeof(line),
		         "%s (pid %u): %llu of %llu waits late, max %s, main cause %s",
		         text_safe(name, sizeof(name), p->comm), p->tgid,
		         (unsigned long long)p->late, (unsigned long long)p->waits,
		         fmt_ns(b, sizeof(b), (double)p->max), top < 0 ? "-" : pn__why_name(top));
		out_wrap(f, "    ", "      ", line);
	}
}

static void probe_why_text(FILE *f, const struct probe_why *w)
{
	char a[32], b[32], c[32], d[32], lv[700];
	fprintf(f, "\nwhy late (1 ms periodic sleeps, %.1f s)\n", (double)w->elapsed / 1e9);
	fprintf(f, "  lateness        p50 %s, p99 %s, max %s; missed periods %llu\n",
	        fmt_ns(a, sizeof(a), (double)w->p50), fmt_ns(b, sizeof(b), (double)w->p99),
	        fmt_ns(c, sizeof(c), (double)w->max), (unsigned long long)w->missed);
	if (w->others_status < 0) {
		fprintf(f, "  other tasks     unknown: %s\n", pn_strerror(w->others_status));
	} else {
		char names[160], line[320];
		snprintf(line, sizeof(line), "%.2f of %d CPUs busy during the loop%s%s",
		         w->others.cpus, w->cpus, others_names(names, sizeof(names), &w->others),
		         others_busy(w) ? ": a busy machine, not the host's normal" : "");
		out_wrap(f, "  other tasks     ", "                  ", line);
	}
	host_text(f, w);
	char line[320];
	if (w->qos.status < 0)
		snprintf(line, sizeof(line), "not measured: /dev/cpu_dma_latency: %s",
		         strerror(-w->qos.status));
	else
		snprintf(line, sizeof(line),
		         "cpu_dma_latency held at 0 for %.1f s, alternating with as long "
		         "without: p50 %s, p99 %s (%s, %s without); late share (over 2x the "
		         "main loop's median) %.1f%%, %.1f%% without",
		         (double)w->qos.elapsed / 1e9, fmt_ns(a, sizeof(a), (double)w->qos.p50),
		         fmt_ns(b, sizeof(b), (double)w->qos.p99),
		         fmt_ns(c, sizeof(c), (double)w->qos.p50_without),
		         fmt_ns(d, sizeof(d), (double)w->qos.p99_without),
		         w->qos.cycles ? 100.0 * (double)w->qos.late / (double)w->qos.cycles : 0,
		         w->qos.cycles_without ? 100.0 * (double)w->qos.late_without /
		                                         (double)w->qos.cycles_without
		                               : 0);
	out_wrap(f, "  PM QoS          ", "                  ", line);
	if (w->status < 0)
		fprintf(f, "  causes          unavailable: %s\n", pn_strerror(w->status));
	else if (!w->tab.late)
		fprintf(f, "  causes          no wakeup later than 2x the median\n");
	else {
		fprintf(f, "  causes of the %llu wakeups later than %s (2x the median):\n",
		        (unsigned long long)w->tab.late_wakeups,
		        fmt_ns(a, sizeof(a), (double)w->tab.threshold));
		cause_text_table(f, &w->tab, &w->cg, "    ");
	}
	if (!w->cg.n)
		fprintf(f, "  throttling      not possible: %s\n", w->cg.note);
	for (int i = 0; i < w->cg.n; i++) {
		cause_level_text(lv, sizeof(lv), &w->cg, i);
		if (w->st_status[i] < 0)
			fprintf(f, "  %s; cpu.stat unreadable: %s\n", lv,
			        pn_strerror(w->st_status[i]));
		else
			fprintf(f,
			        "  %s; throttled in %llu of %llu periods, %s in all, since "
			        "created\n",
			        lv, (unsigned long long)w->st[i].nr_throttled,
			        (unsigned long long)w->st[i].nr_periods,
			        fmt_ns(a, sizeof(a), (double)w->st[i].throttled_ns));
	}
}

/* The host's late programs: whether traced, or why not; their counts and the latest,
 * each a `why --all` row. */
static void host_json(struct json *j, const struct probe_why *w)
{
	json_obj(j, "host_late");
	json_bool(j, "traced", w->host.status == 0);
	if (w->host.status < 0) {
		json_str(j, "why_not", w->host.why_not);
		json_obj_end(j);
		return;
	}
	json_int(j, "elapsed_ns", w->host.elapsed);
	json_int(j, "above_ns", WHY_ALL_ABOVE);
	json_uint(j, "programs", w->host.programs);
	json_uint(j, "late_programs", w->host.late);
	json_arr(j, "top");
	for (size_t i = 0; i < w->host.ntop; i++)
		why_render_proc_json(j, &w->host.top[i]);
	json_arr_end(j);
	json_obj_end(j);
}

static void probe_why_json(struct json *j, const struct probe_why *w)
{
	json_obj(j, "why_late");
	json_int(j, "interval_ns", w->interval);
	json_int(j, "elapsed_ns", w->elapsed);
	json_uint(j, "cycles", w->cycles);
	json_uint(j, "missed_periods", w->missed);
	json_uint(j, "early", w->early);
	json_int(j, "p50_ns", w->p50);
	json_int(j, "p99_ns", w->p99);
	json_int(j, "max_ns", w->max);
	json_bool(j, "attributed", w->status == 0);
	json_int(j, "threshold_ns", w->tab.threshold);
	json_uint(j, "late_deadlines", w->tab.late);
	json_uint(j, "late_wakeups", w->tab.late_wakeups);
	cause_json_table(j, &w->tab, &w->cg);
	cause_json_cgroup(j, &w->cg);
	json_int_if(j, "runnable", w->runnable >= 0, w->runnable);
	json_obj(j, "pm_qos");
	json_bool(j, "measured", w->qos.status == 0);
	if (w->qos.status < 0) {
		json_str(j, "why_not", strerror(-w->qos.status));
	} else {
		json_int(j, "elapsed_ns", w->qos.elapsed);
		json_uint(j, "cycles", w->qos.cycles);
		json_int(j, "p50_ns", w->qos.p50);
		json_int(j, "p99_ns", w->qos.p99);
		json_uint(j, "late", w->qos.late);
		json_uint(j, "cycles_without", w->qos.cycles_without);
		json_int(j, "p50_without_ns", w->qos.p50_without);
		json_int(j, "p99_without_ns", w->qos.p99_without);
		json_uint(j, "late_without", w->qos.late_without);
		json_bool(j, "helps", qos_helps(w));
	}
	json_obj_end(j);
	if (w->others_status == 0) {
		json_obj(j, "others");
		json_num(j, "cpus", w->others.cpus);
		json_uint(j, "processes", w->others.nbusy);
		json_bool(j, "busy", others_busy(w));
		json_arr(j, "top");
		for (size_t i = 0; i < w->others.ntop; i++) {
			json_obj(j, NULL);
			json_int(j, "pid", w->others.top[i].pid);
			json_str(j, "comm", w->others.top[i].comm);
			json_num(j, "cpus", w->others.top[i].cpus);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	host_json(j, w);
	json_obj_end(j);
}

static void probe_why_prom(FILE *f, const struct probe_why *w)
{
	fprintf(f,
	        "# HELP punctual_late_deadlines Deadlines of the probe's 1 ms loop later than 2x "
	        "its median (with the periods they overran), by cause.\n"
	        "# TYPE punctual_late_deadlines gauge\n");
	for (int c = 0; c < PN__WHY_COUNT; c++)
		fprintf(f, "punctual_late_deadlines{cause=\"%s\"} %llu\n", pn__why_name(c),
		        (unsigned long long)w->tab.c[c].count);
	if (w->host.status == 0) {
		prom_help(f, "punctual_host_late_programs", "gauge",
		          "Other programs with a timed wait later than 100 us while the probe's "
		          "1 ms loop ran (eBPF, root).");
		fprintf(f, "punctual_host_late_programs %zu\n", w->host.late);
	}
	static const struct {
		const char *name, *help;
	} m[] = {{"punctual_cgroup_cfs_periods_total", "CFS periods of a cgroup with a quota."},
	         {"punctual_cgroup_cfs_throttled_periods_total",
	          "CFS periods in which a cgroup with a quota was throttled."},
	         {"punctual_cgroup_cfs_throttled_seconds_total",
	          "Time a cgroup with a quota was throttled."}};
	for (size_t k = 0; k < 3; k++) {
		prom_help(f, m[k].name, "counter", m[k].help);
		for (int i = 0; i < w->cg.n; i++) {
			if (w->st_status[i] < 0)
				continue;
			fprintf(f, "%s{cgroup=\"", m[k].name);
			prom_label(f, w->cg.lv[i].path);
			const struct pn__cgroup_stat *s = &w->st[i];
			if (k == 2)
				fprintf(f, "\"} %.9g\n", (double)s->throttled_ns / 1e9);
			else
				fprintf(f, "\"} %llu\n",
				        (unsigned long long)(k == 0 ? s->nr_periods
				                                    : s->nr_throttled));
		}
	}
}

/* ---- the section ----------------------------------------------------------------------- */

static void why_measure(struct probe *p)
{
	probe_why_measure(&p->why, p->quick);
	probe_quota_end(p);
}

/* only when one cause holds most of the late tail; the quota's when it throttled the probe */
static void why_recommend(struct probe *p)
{
	struct probe_reco *r = probe_reco_next(p);
	bool throttling = false;
	if (r && probe_why_reco(&p->why, r)) {
		if (!strcmp(r->kind, "preemption")) /* would a short slice have won them? */
			probe_shared_note(p, r->text, sizeof(r->text));
		throttling = !strcmp(r->kind, "throttling");
		p->nrecos++;
	}
	if (probe_throttled(p) && !throttling)
		probe_quota_reco(p);
}

static void why_text(const struct probe *p)
{
	probe_why_text(out, &p->why);
}

static void why_json(struct json *j, const struct probe *p)
{
	probe_why_json(j, &p->why);
}

static void why_prom(FILE *f, const struct probe *p)
{
	probe_why_prom(f, &p->why);
}

const struct probe_section probe_why = {.name = "why late",
                                        .measure = why_measure,
                                        .recommend = why_recommend,
                                        .text = why_text,
                                        .json = why_json,
                                        .prom = why_prom};
