/* SPDX-License-Identifier: MIT */
/*
 * `punctual sleep --periodic`, cyclictest's loop in one thread or one per CPU (--smp), its T:
 * lines and histogram file (cyclictest -h's text format, so existing plotting scripts read
 * it), and --explain's table of why wakeups were late (measure/causes.c). sleep/sleep.c parses
 * the options; measure/periodic.c measures.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/hist.h>
#include <punctual/slack.h>
#include "contract.h"
#include "measure/causes.h"
#include "measure/periodic.h"
#include "render/causes.h"
#include "render/figures.h"
#include "sleep/periodic.h"
#include "util/diag.h"
#include "util/files.h"
#include "util/host.h"
#include "util/json.h"
#include "util/out.h"

struct run {
	const struct periodic_opts *o;
	struct periodic_config c;
	struct causes_cgroup cg;
	struct periodic_result *r;
	int *cpus;
	int64_t slack;
	struct cause_table *tab; /* per thread, with --explain */
	struct cause_table all;
	struct pn_hist merged;
	int stopped; /* the thread that hit --stop-above, or -1 */
	int signal;  /* the signal that ended the run (SIGINT, SIGTERM), or 0 */
};

/* SIGINT and SIGTERM end the run as its duration would (stop_on_signals): the loops stop
 * at their next wakeup (or at once, a sleep interrupted), the figures measured so far are
 * printed, marked as interrupted, and the exit status is 0, as cyclictest's. */

/* ---- the CPUs ------------------------------------------------------------------------ */

/* "0-3,8": the CPUs of a list into set; exits 2 on anything else. */
static void parse_cpus(const char *opt, const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	const char *p = s;
	if (!*p)
		usage_error("%s: an empty CPU list", opt);
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			usage_error("%s: '%s' is not a CPU list (like 0-3,8)", opt, s);
		long a = strtol(p, &end, 10), b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				usage_error("%s: '%s' is not a CPU list (like 0-3,8)", opt, s);
			b = strtol(p, &end, 10);
		}
		if (a > b || b >= CPU_SETSIZE)
			usage_error("%s: '%s' has a bad range (CPUs 0-%d, low-high)", opt, s,
			            CPU_SETSIZE - 1);
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			usage_error("%s: '%s' is not a CPU list (like 0-3,8)", opt, s);
	}
}

/* The CPUs each thread is pinned to (-1: not pinned), into o's run. */
static int plan_threads(const struct periodic_opts *o, int **cpus)
{
	cpu_set_t allowed, want;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		die(1, "sched_getaffinity: %s", strerror(errno));
	bool pinned = true;
	if (o->smp)
		want = allowed;
	else if (o->affinity)
		parse_cpus("--affinity", o->affinity, &want);
	else if (o->cpu >= 0) {
		CPU_ZERO(&want);
		CPU_SET((int)o->cpu, &want);
	} else
		pinned = false;
	int list[CPU_SETSIZE], n = 0;
	for (int c = 0; pinned && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &want)) {
			if (!CPU_ISSET(c, &allowed) && o->cpu < 0)
				usage_error("--affinity: CPU %d is not one this process may use",
				            c);
			list[n++] = c;
		}
	int threads = o->threads ? (int)o->threads : pinned ? n : 1;
	*cpus = calloc((size_t)threads, sizeof(**cpus));
	if (!*cpus)
		die(1, "out of memory");
	for (int i = 0; i < threads; i++) /* round robin, as cyclictest -a */
		(*cpus)[i] = pinned ? list[i % n] : -1;
	return threads;
}

void sleep_periodic_check(struct periodic_opts *o)
{
	if (o->affinity) {
		cpu_set_t set;
		parse_cpus("--affinity", o->affinity, &set);
	}
	if (o->histogram)
		file_check("--histogram", o->histogram);
}

/* ---- rendering ----------------------------------------------------------------------- */

void sleep_json_header(struct json *j, const char *command, const struct host *host)
{
	json_report_begin(j, out, command);
	host_json(j, host);
}

static const char *policy_name(const struct periodic_opts *o)
{
	return o->fifo ? "SCHED_FIFO" : "SCHED_OTHER";
}

const char *sleep_slice_text(int64_t slice_ns)
{
	static char t[40];
	char d[24];
	t[0] = '\0';
	if (slice_ns)
		snprintf(t, sizeof(t), ", slice %s", fmt_ns(d, sizeof(d), (double)slice_ns));
	return t;
}

static void thread_json(struct json *j, const struct run *u, int i)
{
	const struct periodic_result *r = &u->r[i];
	json_obj(j, NULL);
	json_int(j, "thread", i);
	json_int(j, "tid", r->tid);
	json_int_if(j, "cpu", r->cpu >= 0, r->cpu);
	json_uint(j, "cycles", pn_hist_count(&r->late));
	json_uint(j, "missed_periods", r->missed);
	json_uint(j, "early", r->early);
	json_int(j, "act_ns", r->last);
	json_hist(j, "latency_ns", &r->late, JSON_HIST_MEAN | JSON_HIST_BUCKETS);
	if (r->hist) {
		json_obj(j, "histogram_us");
		json_int(j, "rows", u->o->histogram_max_us);
		json_arr(j, "counts"); /* [us, count] for the rows that are not 0 */
		for (long b = 0; b < u->o->histogram_max_us; b++)
			if (r->hist[b]) {
				json_arr(j, NULL);
				json_int(j, NULL, b);
				json_uint(j, NULL, r->hist[b]);
				json_arr_end(j);
			}
		json_arr_end(j);
		json_uint(j, "overflows", r->overflow);
		json_arr(j, "overflow_cycles");
		for (size_t k = 0; k < r->n_overflow_cycles; k++)
			json_uint(j, NULL, r->overflow_cycles[k]);
		json_arr_end(j);
		json_obj_end(j);
	}
	if (u->tab) {
		json_bool(j, "attributed", r->causes_status == 0);
		json_int(j, "explain_threshold_ns", u->tab[i].threshold);
		json_uint(j, "late_deadlines", u->tab[i].late);
		json_uint(j, "late_wakeups", u->tab[i].late_wakeups);
		cause_json_table(j, &u->tab[i], &u->cg);
	}
	json_obj_end(j);
}

static void render_json(const struct run *u)
{
	const struct periodic_opts *o = u->o;
	struct json j;
	struct host host;
	host_read(&host);
	sleep_json_header(&j, "sleep --periodic", &host);
	json_str(&j, "policy", policy_name(o));
	json_int(&j, "priority", o->fifo);
	json_int(&j, "slice_ns", o->slice_ns);
	json_int(&j, "interval_ns", o->interval);
	json_int(&j, "duration_ns", o->duration);
	int64_t elapsed = 0;
	uint64_t missed = 0, early = 0;
	for (int i = 0; i < u->c.nthreads; i++) {
		elapsed = u->r[i].elapsed > elapsed ? u->r[i].elapsed : elapsed;
		missed += u->r[i].missed;
		early += u->r[i].early;
	}
	json_int(&j, "elapsed_ns", elapsed);
	json_bool(&j, "interrupted", u->signal != 0); /* the figures up to a SIGINT/SIGTERM */
	json_int(&j, "slack_ns", u->slack);
	json_bool(&j, "mlock", o->mlock);
	json_uint(&j, "cycles", pn_hist_count(&u->merged));
	json_uint(&j, "missed_periods", missed);
	json_int(&j, "dma_latency_us",
	         o->dma_latency); /* -1: not held, dma_latency_note says why */
	json_str(&j, "dma_latency_note",
	         o->dma_latency >= 0 ? NULL
	         : o->dma_note       ? o->dma_note
	                             : "off");
	json_uint(&j, "early", early);
	json_hist(&j, "latency_ns", &u->merged, JSON_HIST_MEAN | JSON_HIST_BUCKETS);
	if (o->stop_above) {
		json_obj(&j, "stop");
		json_int(&j, "above_ns", o->stop_above);
		json_bool(&j, "hit", u->stopped >= 0);
		if (u->stopped >= 0) {
			const struct periodic_result *r = &u->r[u->stopped];
			json_int(&j, "thread", u->stopped);
			json_uint(&j, "cycle", r->stop_cycle);
			json_int(&j, "late_ns", r->stop_late);
			json_str(&j, "cause",
			         r->stop_cause >= 0 ? pn__why_name(r->stop_cause) : "unknown");
			if (r->stop_level >= 0)
				json_str(&j, "cgroup", u->cg.lv[r->stop_level].path);
		}
		json_obj_end(&j);
	}
	if (u->tab) {
		json_obj(&j, "explain");
		json_int_if(&j, "threshold_ns", o->explain_above > 0, o->explain_above);
		json_str(&j, "threshold", o->explain_above ? "given" : "2x each thread's median");
		json_uint(&j, "late_deadlines", u->all.late);
		json_uint(&j, "late_wakeups", u->all.late_wakeups);
		cause_json_cgroup(&j, &u->cg);
		json_obj_end(&j);
		cause_json_table(&j, &u->all, &u->cg);
	}
	json_arr(&j, "threads");
	for (int i = 0; i < u->c.nthreads; i++)
		thread_json(&j, u, i);
	json_arr_end(&j);
	json_end(&j);
}

static void render_explain(const struct run *u)
{
	char a[64], b[32], lv[700];
	const struct cause_table *t = &u->all;
	if (u->o->explain_above)
		snprintf(a, sizeof(a), "%s", fmt_ns(b, sizeof(b), (double)u->o->explain_above));
	else
		snprintf(a, sizeof(a), "2x the median, %s%s",
		         fmt_ns(b, sizeof(b), (double)u->tab[0].threshold),
		         u->c.nthreads > 1 ? " in thread 0" : "");
	fprintf(out,
	        "\nwhy late: %llu wakeups later than %s, %llu late deadlines with the periods "
	        "they overran\n",
	        (unsigned long long)t->late_wakeups, a, (unsigned long long)t->late);
	cause_text_table(out, t, &u->cg, "");
	/* preempted wakeups waited for a task with a longer slice (or a realtime one) */
	char sl[24];
	if (t->c[PN__WHY_PREEMPTED].count && !u->o->fifo && !u->o->slice_ns)
		fprintf(out,
		        "preempted: behind tasks with longer slices; --slice 100us shows whether "
		        "a\n"
		        "  short EEVDF slice wins these wakeups, --fifo whether real time does\n");
	else if (t->c[PN__WHY_PREEMPTED].count && !u->o->fifo)
		fprintf(out,
		        "preempted: even with a slice of %s; --fifo shows whether real time wins "
		        "them\n",
		        fmt_ns(sl, sizeof(sl), (double)u->o->slice_ns));
	if (u->cg.n)
		for (int i = 0; i < u->cg.n; i++) {
			cause_level_text(lv, sizeof(lv), &u->cg, i);
			fprintf(out, "watched: %s\n", lv);
		}
	else
		fprintf(out, "throttling: not possible (%s)\n", u->cg.note);
	for (int i = 0; i < u->c.nthreads; i++)
		if (u->r[i].causes_status < 0)
			fprintf(out, "thread %d: no attribution: %s\n", i,
			        pn_strerror(u->r[i].causes_status));
}

static void render_text(const struct run *u)
{
	const struct periodic_opts *o = u->o;
	uint64_t missed = 0, early = 0;
	for (int i = 0; i < u->c.nthreads; i++) {
		const struct periodic_result *r = &u->r[i];
		const struct pn_hist *h = &r->late;
		missed += r->missed;
		early += r->early;
		/* cyclictest's summary line, in us, so both tools compare directly */
		fprintf(out,
		        "T:%2d (%5d) P:%2ld I:%lld C:%7llu Min:%7lld Act:%5lld Avg:%5.0f "
		        "Max:%8lld\n",
		        i, (int)r->tid, o->fifo, (long long)(o->interval / 1000),
		        (unsigned long long)pn_hist_count(h), (long long)pn_hist_min(h) / 1000,
		        (long long)r->last / 1000, pn_hist_mean(h) / 1e3,
		        (long long)pn_hist_max(h) / 1000);
	}
	const struct pn_hist *h = &u->merged;
	char dma[48];
	if (o->dma_latency >= 0)
		snprintf(dma, sizeof(dma), "%ld us", o->dma_latency);
	else
		snprintf(dma, sizeof(dma), "%s", o->dma_note ? o->dma_note : "off");
	fprintf(out,
	        "p50 %.1f us, p99 %.1f us, p99.9 %.1f us; missed periods %llu; early %llu; "
	        "slack %lld ns; %s%s; cpu_dma_latency %s\n",
	        (double)pn_hist_percentile(h, 50) / 1e3, (double)pn_hist_percentile(h, 99) / 1e3,
	        (double)pn_hist_percentile(h, 99.9) / 1e3, (unsigned long long)missed,
	        (unsigned long long)early, (long long)u->slack, policy_name(o),
	        sleep_slice_text(o->slice_ns), dma);
	if (u->stopped >= 0) {
		const struct periodic_result *r = &u->r[u->stopped];
		char a[32], lv[700] = "";
		if (r->stop_level >= 0) {
			lv[0] = ' ';
			lv[1] = '(';
			cause_level_text(lv + 2, sizeof(lv) - 3, &u->cg, r->stop_level);
			strcat(lv, ")");
		}
		fprintf(out, "stopped: thread %d woke %s late at cycle %llu: %s%s\n", u->stopped,
		        fmt_ns(a, sizeof(a), (double)r->stop_late),
		        (unsigned long long)r->stop_cycle,
		        r->stop_cause >= 0 ? pn__why_name(r->stop_cause) : "cause unknown", lv);
	}
	if (u->signal) {
		int64_t elapsed = 0;
		for (int i = 0; i < u->c.nthreads; i++)
			elapsed = u->r[i].elapsed > elapsed ? u->r[i].elapsed : elapsed;
		fprintf(out, "interrupted by %s after %.1f s: the figures measured until then\n",
		        u->signal == SIGINT ? "SIGINT" : "SIGTERM", (double)elapsed / 1e9);
	}
	if (u->tab)
		render_explain(u);
}

/* cyclictest -h's file: one row per us (each thread's count, tab-separated), then the
 * "# Total/Min/Avg/Max Latencies/Histogram Overflows" lines in us. */
static int render_histogram(FILE *f, const void *arg)
{
	const struct run *u = arg;
	int n = u->c.nthreads;
	fprintf(f, "# Histogram\n");
	for (long b = 0; b < u->o->histogram_max_us; b++) {
		fprintf(f, "%06ld ", b);
		for (int i = 0; i < n; i++)
			fprintf(f, "%06llu%s", (unsigned long long)u->r[i].hist[b],
			        i < n - 1 ? "\t" : "");
		fputc('\n', f);
	}
	fprintf(f, "# Total:");
	for (int i = 0; i < n; i++)
		fprintf(f, " %09llu",
		        (unsigned long long)(pn_hist_count(&u->r[i].late) - u->r[i].overflow));
	static const char *const what[] = {"Min", "Avg", "Max"};
	for (int k = 0; k < 3; k++) {
		fprintf(f, "\n# %s Latencies:", what[k]);
		for (int i = 0; i < n; i++) {
			const struct pn_hist *h = &u->r[i].late;
			double v = k == 0   ? (double)pn_hist_min(h)
			           : k == 1 ? pn_hist_mean(h)
			                    : (double)pn_hist_max(h);
			fprintf(f, " %05lld",
			        pn_hist_count(h) && v > 0 ? (long long)(v / 1000) : 0LL);
		}
	}
	fprintf(f, "\n# Histogram Overflows:");
	for (int i = 0; i < n; i++)
		fprintf(f, " %05llu", (unsigned long long)u->r[i].overflow);
	fprintf(f, "\n# Histogram Overflow at cycle number:\n");
	for (int i = 0; i < n; i++) {
		const struct periodic_result *r = &u->r[i];
		fprintf(f, "# Thread %d:", i);
		for (size_t k = 0; k < r->n_overflow_cycles; k++)
			fprintf(f, " %05llu", (unsigned long long)r->overflow_cycles[k]);
		if (r->n_overflow_cycles < r->overflow)
			fprintf(f, " # %05llu others",
			        (unsigned long long)(r->overflow - r->n_overflow_cycles));
		fputc('\n', f);
	}
	fputc('\n', f);
	return 0;
}

/* ---- the run ------------------------------------------------------------------------- */

static void tables(struct run *u)
{
	u->tab = calloc((size_t)u->c.nthreads, sizeof(*u->tab));
	if (!u->tab)
		die(1, "out of memory");
	for (int i = 0; i < u->c.nthreads; i++) {
		const struct periodic_result *r = &u->r[i];
		int64_t t = u->o->explain_above ? u->o->explain_above
		                                : 2 * pn_hist_percentile(&r->late, 50);
		cause_table_add(&u->tab[i], &r->causes, t);
		u->tab[i].threshold = t;
		cause_table_add(&u->all, &r->causes, t);
	}
	u->all.threshold = u->o->explain_above;
}

int sleep_periodic(struct periodic_opts *o)
{
	static struct run u;
	u.o = o;
	u.stopped = -1;
	u.slack = pn_slack_get();
	if (o->have_slack) {
		int e = pn_slack_set(o->slack);
		if (e < 0)
			die(1, "cannot set timer slack %lld ns: %s", (long long)o->slack,
			    pn_strerror(e));
		u.slack = pn_slack_get(); /* read back: a realtime thread ignores the write */
	}
	if (o->mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		die(EXIT_USAGE, "--mlock: mlockall: %s%s", strerror(errno),
		    errno == EPERM ? " (needs root or CAP_IPC_LOCK)" : "");
	u.c = (struct periodic_config){.interval = o->interval,
	                               .duration = o->duration,
	                               .explain = o->explain,
	                               .threshold = o->explain_above,
	                               .stop_above = o->stop_above,
	                               .slice_ns = o->slice_ns,
	                               .hist_us = o->histogram ? (int)o->histogram_max_us : 0,
	                               .cg = &u.cg};
	u.c.nthreads = plan_threads(o, &u.cpus);
	u.c.cpus = u.cpus;
	if (o->explain || o->stop_above)
		causes_cgroup_init(&u.cg);
	u.r = calloc((size_t)u.c.nthreads, sizeof(*u.r));
	if (!u.r)
		die(1, "out of memory");
	static atomic_bool stop_static;
	stop_on_signals();
	u.c.stop = &stop_static;
	int e = periodic_run_threads(&u.c, u.r);
	stop_on_signals_end(); /* the histogram file: a signal ends it, as ever */
	u.signal = tool_stop;
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(1, "the measuring loop failed: %s", pn_strerror(e));
	pn_hist_init(&u.merged);
	for (int i = 0; i < u.c.nthreads; i++) {
		pn_hist_merge(&u.merged, &u.r[i].late);
		if (u.r[i].stopped && u.stopped < 0)
			u.stopped = i;
	}
	if (o->explain)
		tables(&u);
	if (o->histogram) {
		int r = file_write(o->histogram, render_histogram, &u);
		if (r < 0)
			die(1, "--histogram %s: %s", o->histogram, strerror(-r));
	}
	out_open();
	if (o->json)
		render_json(&u);
	else
		render_text(&u);
	out_commit();
	for (int i = 0; i < u.c.nthreads; i++)
		periodic_free(&u.r[i]);
	free(u.r);
	free(u.cpus);
	free(u.tab);
	return u.stopped >= 0 ? EXIT_STOPPED : 0;
}
