/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "sleeps": how late sleep mechanisms wake with this process's
 * timer slack and with 1 ns, beside pn_sleep_until (measure/matrix.c); the advice on slack,
 * precise sleeps and millisecond timeouts it measured. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <punctual/sleep.h>
#include "probe/probe.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/out.h"
#include "util/prom.h"

static void sleeps_measure(struct probe *p)
{
	static const int64_t iv[PROBE_INTERVALS] = {1000, 100000, 1000000};
	memcpy(p->intervals, iv, sizeof(iv));
	p->slacks[0] = p->host.slack_self;
	p->slacks[1] = 1;
	const char *ids[] = {"nanosleep", "clock_nanosleep_abs", "epoll_wait", "select"};
	int n = 0;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		p->mechs[n++] = sleep_mech_find(ids[i]);
	p->mechs[n++] = sleep_mech_precise(PRECISE_SLEEP, 1000, "1us");
	p->mechs[n++] = sleep_mech_precise(PRECISE_SLEEP, 50000, "50us");
	p->sleeps = (struct sleep_matrix){
	        .intervals = p->intervals,
	        .nintervals = PROBE_INTERVALS,
	        .slacks = p->slacks,
	        .nslacks = p->host.slack_self == 1 ? 1 : PROBE_SLACKS,
	        .m = p->mechs,
	        .nm = n,
	        .samples = p->quick ? 200 : 1000,
	        .duration = p->quick ? 800000000LL : 7000000000LL,
	};
	pn_sleep_stats_reset();
	int r = sleep_matrix_run(&p->sleeps);
	if (r == -ENOMEM)
		die(1, "out of memory");
	if (r < 0)
		die(1, "%s failed: %s", p->sleeps.failed ? p->sleeps.failed->id : "a sleep",
		    pn_strerror(r));
}

int probe_mech(const struct probe *p, const char *id)
{
	for (int m = 0; m < p->sleeps.nm; m++)
		if (strcmp(p->mechs[m]->id, id) == 0)
			return m;
	return -1;
}

static const struct sleep_cell *cell(const struct probe *p, const char *mech, int interval,
                                     int slack)
{
	int m = probe_mech(p, mech);
	if (m < 0 || slack >= p->sleeps.nslacks || p->sleeps.unsupported[m])
		return NULL;
	return sleep_matrix_cell(&p->sleeps, interval, slack, m);
}

/* The mean spin per sleep of a precise cell. */
static double cell_spin(const struct sleep_cell *c)
{
	uint64_t n = pn_hist_count(&c->late);
	return n ? (double)c->spun_ns / (double)n : 0;
}

/* Advice only for a gain a program feels: slack 1 ns when it saves over SLACK_GAIN_MIN and
 * a fifth of the median; precise sleeps when the kernel's best p99 is over PRECISE_P99_MIN
 * and pn_sleep_until halves it beyond the noise of repeated runs (probe_sure); epoll's rounding
 * when a 1 us timeout lasts over EPOLL_ROUNDED_MIN (half of epoll_wait's 1 ms unit) and
 * 4 times nanosleep's. */
#define SLACK_GAIN_MIN    5000
#define PRECISE_P99_MIN   10000
#define EPOLL_ROUNDED_MIN 500000

static void sleeps_recommend(struct probe *p)
{
	char a[32], b[32], c[32], e4[32];
	/* timer slack: nanosleep at 100 us, current slack vs 1 ns */
	const struct sleep_cell *d = cell(p, "nanosleep", 1, 0), *s1 = cell(p, "nanosleep", 1, 1);
	if (d && s1 && p->host.slack_self > 1) {
		int64_t md = pn_hist_percentile(&d->late, 50),
		        m1 = pn_hist_percentile(&s1->late, 50);
		if (md - m1 > SLACK_GAIN_MIN && md - m1 > md / 5)
			probe_reco_measured(
			        probe_reco_add(
			                p, "slack", "punctual run --slack 1ns -- APP",
			                "Sleeps overshoot by %s at the median (nanosleep, 100 us), "
			                "%s of it "
			                "timer slack (%s): `punctual run --slack 1ns -- APP`, or "
			                "TimerSlackNSec=1ns in its systemd unit (measured: %s).",
			                fmt_ns(a, sizeof(a), (double)md),
			                fmt_ns(b, sizeof(b), (double)(md - m1)),
			                fmt_ns(c, sizeof(c), (double)p->host.slack_self),
			                fmt_ns(e4, sizeof(e4), (double)m1)),
			        "p50_ns", (double)md, (double)m1);
	}
	/* precise sleeps: p99 at 100 us, best kernel-only vs pn_sleep_until(1 us) */
	int best = p->sleeps.nslacks - 1;
	const struct sleep_cell *k = cell(p, "clock_nanosleep_abs", 1, best),
	                        *pr = cell(p, "precise:1us", 1, best);
	if (k && pr && !probe_throttled(p)) { /* a spin would spend a quota that throttles */
		int64_t kp = probe_p99(&k->late), pp = probe_p99(&pr->late);
		char spin[64] = ", without spinning";
		if (pr->spun_ns > 0)
			snprintf(spin, sizeof(spin), ", for %s of spinning per sleep",
			         fmt_ns(c, sizeof(c), cell_spin(pr)));
		bool gain = pp >= 0 && kp > PRECISE_P99_MIN && pp * 2 < kp;
		if (gain && !probe_sure(&pr->late, &k->late))
			probe_unsure(p, "pn_sleep_until halves 100 us sleeps' p99");
		else if (gain)
			probe_reco_measured(
			        probe_reco_add(
			                p, "precise", "punctual run --precise=1us -- APP",
			                "Deadlines that matter: even with slack 1 ns the kernel "
			                "wakes %s late at p99 (clock_nanosleep, 100 us). "
			                "pn_sleep_until(deadline, 1us) in code, or `punctual run "
			                "--precise=1us -- APP` for a program you cannot change, "
			                "measured %s at p99%s.",
			                fmt_ns(a, sizeof(a), (double)kp),
			                fmt_ns(b, sizeof(b), (double)pp), spin),
			        "p99_ns", (double)kp, (double)pp);
	}
	/* poll/epoll_wait round short timeouts up to a millisecond */
	const struct sleep_cell *ep = cell(p, "epoll_wait", 0, best);
	const struct sleep_cell *ns = cell(p, "nanosleep", 0, best);
	if (ep && ns) {
		int64_t e = pn_hist_percentile(&ep->duration, 50),
		        n = pn_hist_percentile(&ns->duration, 50);
		if (e > 4 * n && e > EPOLL_ROUNDED_MIN)
			probe_reco_add(
			        p, "epoll", "",
			        "epoll_wait takes milliseconds: a 1 us timeout lasted %s at the "
			        "median, "
			        "against %s for nanosleep. Event loops that need sub-millisecond "
			        "timers "
			        "should use epoll_pwait2 or a timerfd (pn_wheel_timerfd).",
			        fmt_ns(a, sizeof(a), (double)e), fmt_ns(b, sizeof(b), (double)n));
	}
}

/* A p50 / p99 pair in us: the p99 that probe_p99 shows, else "-". */
static const char *pair(char *buf, size_t n, const struct pn_hist *h)
{
	double p50 = (double)pn_hist_percentile(h, 50) / 1e3;
	int64_t p99 = probe_p99(h);
	if (p99 < 0)
		snprintf(buf, n, "%.1f / -", p50);
	else
		snprintf(buf, n, "%.1f / %.1f", p50, (double)p99 / 1e3);
	return buf;
}

static void sleeps_text(const struct probe *p)
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
					pair(v, sizeof(v), &sleep_matrix_cell(x, i, s, m)->late);
				fprintf(out, "  %18s", v);
			}
			fputc('\n', out);
		}
	char note[192];
	snprintf(note, sizeof(note),
	         "(precise:P rows are pn_sleep_until with precision P and its default budget; they "
	         "set their own slack. A p99 needs %d sleeps: under that, -.)",
	         FRONTIER_MIN_P99);
	out_wrap(out, "  ", "  ", note);
}

static void sleeps_json(struct json *j, const struct probe *p)
{
	const struct sleep_matrix *x = &p->sleeps;
	json_obj(j, "sleeps");
	json_uint(j, "early_total", sleep_matrix_early(x));
	json_arr(j, "cells");
	for (int i = 0; i < x->nintervals; i++)
		for (int s = 0; s < x->nslacks; s++)
			for (int m = 0; m < x->nm; m++) {
				const struct sleep_cell *c = sleep_matrix_cell(x, i, s, m);
				json_obj(j, NULL);
				json_str(j, "mechanism", x->m[m]->id);
				json_int(j, "interval_ns", x->intervals[i]);
				json_int(j, "slack_ns", x->slacks[s]);
				json_bool(j, "supported", !x->unsupported[m]);
				json_uint(j, "early", c->early);
				json_hist(j, "overshoot_ns", &c->late, 0);
				if (strncmp(x->m[m]->id, "precise", 7) == 0 &&
				    pn_hist_count(&c->late))
					json_num(j, "spin_per_sleep_ns",
					         (double)c->spun_ns /
					                 (double)pn_hist_count(&c->late));
				json_obj_end(j);
			}
	json_arr_end(j);
	json_obj_end(j);
}

static void sleeps_prom(FILE *f, const struct probe *p)
{
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
					        (double)pn_hist_percentile(&c->late, qs[q] * 100) /
					                1e9);
			}
	prom_help(f, "punctual_sleep_early_returns", "gauge",
	          "Sleeps that returned before their deadline in this probe (must be 0).");
	fprintf(f, "punctual_sleep_early_returns %llu\n",
	        (unsigned long long)sleep_matrix_early(x));
}

static void sleeps_done(struct probe *p)
{
	sleep_matrix_free(&p->sleeps);
}

const struct probe_section probe_sleeps = {.name = "sleeps",
                                           .measure = sleeps_measure,
                                           .recommend = sleeps_recommend,
                                           .text = sleeps_text,
                                           .json = sleeps_json,
                                           .prom = sleeps_prom,
                                           .done = sleeps_done};
