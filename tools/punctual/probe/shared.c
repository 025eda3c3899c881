/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe`'s section "when the CPUs are shared": 1 ms sleeps beside CPU hogs of
 * the probe's own, alternating: a plain program, the kernel with a 100 us slice, a fixed
 * margin and punctual's default (also without SCHED_FIFO where this process may take it).
 * The recommendation names the default or the short slice, the lower p99, where it beats
 * the plain program's.
 */
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/probe.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/prom.h"

#define US 1000LL
#define MS 1000000LL

enum { PLAIN, SLICE, FIXED, DEFAULT, NORT, NVAR };

/* Whether this process may take SCHED_FIFO, tried in a child. */
static bool fifo_permitted(void)
{
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		struct sched_param sp = {.sched_priority = 1};
		_exit(sched_setscheduler(0, SCHED_FIFO, &sp) == 0 ? 0 : 1);
	}
	int st;
	return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void shared_config(struct frontier_config *c, bool quick)
{
	memset(c, 0, sizeof(*c));
	c->nlen = 1;
	c->len[0] = 1 * MS;
	c->rounds[0] = quick ? 110 : 400;
	c->nvar = fifo_permitted() ? NVAR : NORT;
	c->var[PLAIN] = (struct frontier_variant){FR_KERNEL, 50 * US};
	c->var[SLICE] = (struct frontier_variant){FR_SLICE, 100 * US};
	c->var[FIXED] = (struct frontier_variant){FR_FIXED, 125 * US};
	c->var[DEFAULT] = (struct frontier_variant){FR_AUTO, 0};
	c->var[NORT] = (struct frontier_variant){FR_AUTO_NORT, 0};
	c->precision = 10 * US; /* run --precise's default */
	c->hogs = 2;
	c->hog_cpus = 4;
	c->slice_auto = true;
}

static void shared_measure(struct probe *p)
{
	struct probe_shared *ps = &p->shared;
	struct frontier_config c;
	shared_config(&c, p->quick);
	progress("probe: when the CPUs are shared (%d hogs per CPU, alternating)", c.hogs);
	int e = probe_frontier_run(&c, &ps->f);
	if (e < 0) { /* no hogs here (a pids limit, a sandbox): the section says so */
		ps->error = e;
		return;
	}
	ps->run = true;
}

static int64_t p99(const struct probe_shared *ps, int v)
{
	const struct frontier_cell *x = &ps->f->cell[0][v];
	return pn_hist_count(&x->late) >= FRONTIER_MIN_P99 ? pn_hist_percentile(&x->late, 99) : -1;
}

/* b's sleeps later than twice a's p99 that make a sure: from this many. */
#define SURE_LATE_MIN 5

/* Whether a beats b beyond a host's bursts: a p99 at most half b's, and fewer of a's
 * sleeps later than twice a's p99 than of b's by two Poisson standard deviations of b's
 * count (the variants alternate sleep by sleep, so a burst falls on them alike). A p99 of
 * 400 sleeps rests on its 4 latest, and its interval reaches the largest: one stall in a
 * fix's sleeps made it "too noisy" (docs/DESIGN.md, "The probe's advice on a noisy
 * host"). */
static bool sure(const struct probe_shared *ps, int a, int b)
{
	int64_t pa = p99(ps, a), pb = p99(ps, b);
	if (pa < 0 || pb < 0 || 2 * pa > pb)
		return false;
	const struct pn_hist *ha = &ps->f->cell[0][a].late, *hb = &ps->f->cell[0][b].late;
	double na = (double)probe_count_above(ha, 2 * pa),
	       nb = (double)probe_count_above(hb, 2 * pa),
	       e = nb * (double)pn_hist_count(ha) / (double)pn_hist_count(hb);
	return nb >= SURE_LATE_MIN && probe_fewer(na, e);
}

/* Of the default and the bare short slice, the one that beats the plain program; the
 * slice only where it beats the default too, or the default did not. -1: neither. */
static int shared_best(const struct probe_shared *ps)
{
	if (p99(ps, PLAIN) < 0 || p99(ps, DEFAULT) < 0 || p99(ps, SLICE) < 0)
		return -1;
	bool d = sure(ps, DEFAULT, PLAIN), s = sure(ps, SLICE, PLAIN);
	if (s && (!d || sure(ps, SLICE, DEFAULT)))
		return SLICE;
	return d ? DEFAULT : -1;
}

/* Whether the default or the slice was lower than the plain program within the noise. */
static bool shared_lower(const struct probe_shared *ps)
{
	int64_t plain = p99(ps, PLAIN), d = p99(ps, DEFAULT), s = p99(ps, SLICE);
	return plain >= 0 && ((d >= 0 && d < plain) || (s >= 0 && s < plain));
}

void probe_shared_note(const struct probe *p, char *buf, size_t n)
{
	const struct probe_shared *ps = &p->shared;
	int best = ps->run ? shared_best(ps) : -1;
	size_t used = strlen(buf);
	char a[16], b[16];
	if (used >= n)
		return;
	if (best < 0) {
		if (ps->run)
			snprintf(buf + used, n - used,
			         " Neither punctual's default nor a short EEVDF slice won such "
			         "wakeups here (the section \"when the CPUs are shared\").");
		return;
	}
	snprintf(buf + used, n - used,
	         " Beside CPU hogs, 1 ms sleeps' p99 went from %s (a plain program) to %s (%s).",
	         fmt_ns(a, sizeof(a), (double)p99(ps, PLAIN)),
	         fmt_ns(b, sizeof(b), (double)p99(ps, best)),
	         best == SLICE          ? "the kernel with a 100 us slice"
	         : ps->f->c.nvar > NORT ? "`punctual run --precise`, real time for its waits"
	                                : "`punctual run --precise`");
}

/* Whether chrt(1) sets a SCHED_OTHER slice (util-linux 2.41 and later). */
static bool chrt_has_slice(void)
{
	FILE *f = popen("chrt --version 2>/dev/null", "r");
	char line[128] = "";
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	const char *v = strstr(line, "util-linux ");
	int major = 0, minor = 0;
	return v && sscanf(v + 11, "%d.%d", &major, &minor) == 2 &&
	       (major > 2 || (major == 2 && minor >= 41));
}

static void shared_recommend(struct probe *p)
{
	const struct probe_shared *ps = &p->shared;
	int best = ps->run ? shared_best(ps) : -1;
	if (probe_throttled(p)) /* its hogs met the quota */
		return;
	if (best < 0 && ps->run && shared_lower(ps))
		probe_unsure(p, "punctual's default or a short slice helps when the CPUs are "
		                "shared");
	if (best < 0)
		return;
	char a[16], b[16], cmd[96];
	if (best == DEFAULT)
		snprintf(cmd, sizeof(cmd), "punctual run --precise -- APP");
	else if (chrt_has_slice())
		snprintf(cmd, sizeof(cmd), "chrt -o -T 100000 0 APP");
	else
		snprintf(cmd, sizeof(cmd), "punctual run --slack 1ns --slice=100us -- APP");
	char rt[192] = "";
	if (best == DEFAULT && ps->f->c.nvar > NORT && p99(ps, NORT) >= 0)
		snprintf(rt, sizeof(rt),
		         " Its kernel waits run under SCHED_FIFO, as this process may (root, or "
		         "CAP_SYS_NICE: a unit's AmbientCapabilities=CAP_SYS_NICE); without, p99 "
		         "%s.",
		         fmt_ns(b, sizeof(b), (double)p99(ps, NORT)));
	struct probe_reco *r = probe_reco_add(
	        p, "shared", cmd,
	        "When the CPUs are shared (%d hogs on %d CPUs), %s wakes 1 ms sleeps at p99 %s "
	        "against a plain program's %s, the hogs keeping %.0f%% of a fair share: `%s`.%s",
	        ps->f->nhogs, ps->f->hog_ncpus,
	        best == DEFAULT ? "punctual's default" : "the kernel with a 100 us slice",
	        fmt_ns(a, sizeof(a), (double)p99(ps, best)),
	        fmt_ns(b, sizeof(b), (double)p99(ps, PLAIN)),
	        frontier_fair_pct(ps->f, &ps->f->cell[0][best]), cmd, rt);
	probe_reco_measured(r, "p99_ns", (double)p99(ps, PLAIN), (double)p99(ps, best));
}

static void shared_text(const struct probe *p)
{
	const struct probe_shared *ps = &p->shared;
	if (ps->error)
		fprintf(out, "\nwhen the CPUs are shared: not measured (hogs: %s)\n",
		        pn_strerror(ps->error));
	if (!ps->run)
		return;
	const struct frontier *f = ps->f;
	char name[40], a[16], b[16];
	fprintf(out,
	        "\nwhen the CPUs are shared (%d hogs on %d CPU%s, 1 ms sleeps on CPU %d, "
	        "alternating)\n",
	        f->nhogs, f->hog_ncpus, f->hog_ncpus == 1 ? "" : "s", f->sleeper_cpu);
	fprintf(out, "  %-22s %10s %10s %6s %6s %6s\n", "", "p50", "p99", "CPU", "hogs", "fair");
	for (int v = 0; v < f->c.nvar; v++) {
		const struct frontier_cell *x = &f->cell[0][v];
		int64_t q = p99(ps, v);
		fprintf(out, "  %-22s %10s %10s %5.1f%% %5.0f%% %5.0f%%\n",
		        frontier_name(&f->c.var[v], name, sizeof(name)),
		        fmt_ns(a, sizeof(a), (double)pn_hist_percentile(&x->late, 50)),
		        q < 0 ? "-" : fmt_ns(b, sizeof(b), (double)q), frontier_cpu_pct(x),
		        frontier_hog_pct(f, x), frontier_fair_pct(f, x));
	}
	fprintf(out, "  (hogs: their share of their CPUs; fair: their CPU against what the\n"
	             "  sleeper left them, 100%% when it took only its own)\n");
}

static void shared_json(struct json *j, const struct probe *p)
{
	const struct probe_shared *ps = &p->shared;
	if (!ps->run)
		return;
	const struct frontier *f = ps->f;
	char id[32], name[40];
	json_obj(j, "shared");
	json_int(j, "length_ns", f->c.len[0]);
	json_int(j, "precision_ns", f->c.precision);
	json_int(j, "hogs", f->nhogs);
	json_int(j, "hog_cpus", f->hog_ncpus);
	json_int(j, "sleeper_cpu", f->sleeper_cpu);
	json_arr(j, "variants");
	for (int v = 0; v < f->c.nvar; v++) {
		const struct frontier_cell *x = &f->cell[0][v];
		json_obj(j, NULL);
		json_str(j, "variant", frontier_id(&f->c.var[v], id, sizeof(id)));
		json_str(j, "name", frontier_name(&f->c.var[v], name, sizeof(name)));
		json_uint(j, "n", pn_hist_count(&x->late));
		json_int(j, "p50_ns", pn_hist_percentile(&x->late, 50));
		json_int_if(j, "p99_ns", p99(ps, v) >= 0, p99(ps, v));
		json_num(j, "cpu_pct", frontier_cpu_pct(x));
		json_num(j, "hog_pct", frontier_hog_pct(f, x));
		json_num(j, "fair_pct", frontier_fair_pct(f, x));
		if (x->mode != PN_SLEEP_MODE_NONE)
			json_str(j, "mode", pn_sleep_mode_name(x->mode));
		json_int(j, "early", x->early);
		json_obj_end(j);
	}
	json_arr_end(j);
	int best = shared_best(ps);
	if (best >= 0)
		json_str(j, "best", frontier_id(&f->c.var[best], id, sizeof(id)));
	else
		json_none(j, "best");
	json_obj_end(j);
}

static void shared_prom(FILE *fp, const struct probe *p)
{
	const struct probe_shared *ps = &p->shared;
	if (!ps->run)
		return;
	const struct frontier *f = ps->f;
	char id[32];
	prom_help(fp, "punctual_shared_lateness_seconds", "gauge",
	          "Lateness past the deadline of the probe's 1 ms sleeps beside CPU hogs, by "
	          "variant (plain, short slice, fixed margin, punctual's default, and without real "
	          "time where this process may use it) and percentile.");
	for (int v = 0; v < f->c.nvar; v++) {
		int64_t q[2] = {pn_hist_percentile(&f->cell[0][v].late, 50), p99(ps, v)};
		for (int i = 0; i < 2; i++)
			if (q[i] >= 0)
				fprintf(fp,
				        "punctual_shared_lateness_seconds{variant=\"%s\","
				        "percentile=\"%d\"} %.9f\n",
				        frontier_id(&f->c.var[v], id, sizeof(id)), i ? 99 : 50,
				        (double)q[i] / 1e9);
	}
	prom_help(fp, "punctual_shared_cpu_ratio", "gauge",
	          "CPU time over wall time of the probe's sleeps beside CPU hogs, by variant.");
	for (int v = 0; v < f->c.nvar; v++)
		fprintf(fp, "punctual_shared_cpu_ratio{variant=\"%s\"} %.4f\n",
		        frontier_id(&f->c.var[v], id, sizeof(id)),
		        frontier_cpu_pct(&f->cell[0][v]) / 100);
	prom_help(fp, "punctual_shared_hog_fair_ratio", "gauge",
	          "The hogs' CPU time against what the sleeper left them, by variant (1: fair).");
	for (int v = 0; v < f->c.nvar; v++)
		fprintf(fp, "punctual_shared_hog_fair_ratio{variant=\"%s\"} %.4f\n",
		        frontier_id(&f->c.var[v], id, sizeof(id)),
		        frontier_fair_pct(f, &f->cell[0][v]) / 100);
}

static void shared_done(struct probe *p)
{
	free(p->shared.f);
	p->shared.f = NULL;
}

const struct probe_section probe_shared = {.name = "shared",
                                           .measure = shared_measure,
                                           .recommend = shared_recommend,
                                           .text = shared_text,
                                           .json = shared_json,
                                           .prom = shared_prom,
                                           .done = shared_done};
