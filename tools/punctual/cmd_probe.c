/* SPDX-License-Identifier: MIT */
/*
 * cmd_probe.c: `punctual probe`, the one-command timing report for a host or container:
 * system facts, what clocks cost, how late sleeps wake with the current slack and with
 * 1 ns and with pn_sleep_until, the timer wheel's coalescing, the CPU count and why, and
 * recommendations that quote a gain measured in the same run. It changes nothing in
 * the system: only this process's own timer slack, which dies with it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include <punctual/hist.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include "measure/timers.h"
#include "probe.h"

static const char usage[] =
        "usage: punctual probe [--quick] [--json] [--prom FILE] [--plot DIR]\n"
        "       punctual probe --compare BEFORE.json AFTER.json [--json] [--fail-on-worse]\n"
        "\n"
        "The timing report for this host or container: system facts, what clocks cost,\n"
        "how late sleeps wake (current timer slack, 1 ns, pn_sleep_until), timer\n"
        "coalescing, how many CPUs this process may use, why sleeps wake late (the causes\n"
        "of a 1 ms loop's late tail: CFS throttling, preemption, ...), and recommendations,\n"
        "each with the figure measured in this run, and what precision costs here (lateness\n"
        "against CPU). About 26 s; --quick about 7 s (more on a busy machine). Changes\n"
        "nothing it does not put back.\n"
        "\n"
        "      --quick       shorter measurements (about 7 s)\n"
        "  -j, --json        JSON (its schema: " PN_SCHEMA_PATH ")\n"
        "      --prom FILE   also write Prometheus text metrics to FILE, atomically, for\n"
        "                    node_exporter's textfile collector (man punctual, FILES: how\n"
        "                    links, owners and modes are treated)\n"
        "      --plot DIR    also write PNG and SVG charts to DIR (needs gnuplot)\n"
        "      --compare     two --json reports side by side (punctual probe --compare\n"
        "                    --help)\n"
        "  -h, --help        this text\n";

/* ---- system ---------------------------------------------------------------------- */

static void virtualization(struct probe *p)
{
	snprintf(p->virt, sizeof(p->virt), "none");
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31) & 1) {
		unsigned sig[3];
		__cpuid(0x40000000, a, sig[0], sig[1], sig[2]);
		char id[13];
		memcpy(id, sig, 12);
		id[12] = '\0';
		static const struct {
			const char *sig, *name;
		} known[] = {{"KVMKVMKVM", "KVM"},         {"Microsoft Hv", "Hyper-V"},
		             {"VMwareVMware", "VMware"},   {"XenVMMXenVMM", "Xen"},
		             {"TCGTCGTCGTCG", "QEMU TCG"}, {"ACRNACRNACRN", "ACRN"},
		             {"bhyve bhyve ", "bhyve"},    {" lrpepyh  vr", "Parallels"}};
		const char *name = NULL;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strncmp(id, known[i].sig, strlen(known[i].sig)) == 0)
				name = known[i].name;
		for (int i = 0; i < 12; i++)
			if (id[i] < 0x20 || id[i] > 0x7e)
				id[i] = '.';
		snprintf(p->virt, sizeof(p->virt), "%s (CPUID hypervisor bit, \"%s\")",
		         name ? name : "unknown hypervisor", id);
	}
#endif
	char vendor[64] = "", product[64] = "";
	read_sysfs_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	read_sysfs_line("/sys/class/dmi/id/product_name", product, sizeof(product));
	snprintf(p->dmi, sizeof(p->dmi), "%s%s%s", vendor, *vendor && *product ? " " : "", product);
}

static void system_facts(struct probe *p)
{
	host_read(&p->host);
	virtualization(p);
	if (read_sysfs_line("/sys/devices/system/cpu/nohz_full", p->nohz_full,
	                    sizeof(p->nohz_full)) < 0 ||
	    strcmp(p->nohz_full, "(null)") == 0)
		p->nohz_full[0] = '\0';
	if (read_sysfs_line("/sys/devices/system/cpu/isolated", p->isolated, sizeof(p->isolated)) <
	    0)
		p->isolated[0] = '\0';
	p->slack_self = pn_slack_get();
	p->slack_pid1 = pn_slack_get_pid(1);
}

/* ---- measurements ---------------------------------------------------------------- */

static void measure_clocks(struct probe *p)
{
	p->nclocks = clock_sources_count();
	p->clocks = calloc((size_t)p->nclocks, sizeof(*p->clocks));
	if (!p->clocks)
		die(1, "out of memory");
	if (clock_measure_all(p->clocks, p->quick ? 300000000LL : 1500000000LL) < 0)
		die(1, "out of memory");
	pn_cycles_info(&p->cycles);
}

static void measure_sleeps(struct probe *p)
{
	static const int64_t iv[PROBE_INTERVALS] = {1000, 100000, 1000000};
	memcpy(p->intervals, iv, sizeof(iv));
	p->slacks[0] = p->slack_self;
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
	        .nslacks = p->slack_self == 1 ? 1 : PROBE_SLACKS,
	        .m = p->mechs,
	        .nm = n,
	        .samples = p->quick ? 300 : 1000,
	        .duration = p->quick ? 2500000000LL : 12000000000LL,
	};
	pn_sleep_stats_reset();
	int r = sleep_matrix_run(&p->sleeps);
	if (r == -ENOMEM)
		die(1, "out of memory");
	if (r < 0)
		die(1, "%s failed: %s", p->sleeps.failed ? p->sleeps.failed->id : "a sleep",
		    pn_strerror(r));
}

/* ---- timers: coalescing in real time ---------------------------------------------- */

/* The workload of `punctual timers`, one-shot, run twice: with no precision window and
 * with percent of each delay. */
static void measure_timers(struct probe *p)
{
	struct probe_timers *tm = &p->timers;
	*tm = (struct probe_timers){.run = true,
	                            .timers = p->quick ? 100 : 300,
	                            .min_delay = 1000000,
	                            .max_delay = p->quick ? 20000000 : 60000000,
	                            .percent = 10};
	struct timers_config c = {.count = tm->timers,
	                          .dist = TIMERS_UNIFORM,
	                          .a = tm->min_delay,
	                          .b = tm->max_delay,
	                          .percent = 0,
	                          .duration = 60 * 1000000000LL, /* a limit, never reached */
	                          .seed = 0x5eed};
	struct timers_result *r = malloc(sizeof(*r));
	if (!r)
		die(1, "out of memory");
	progress("probe: timers, no precision window");
	int e = timers_run(&c, r);
	tm->wakeups_exact = r->wakeups;
	tm->early = r->early;
	if (e == 0) {
		progress("probe: timers, precision %d%% of the delay", tm->percent);
		c.percent = tm->percent;
		e = timers_run(&c, r);
	}
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(1, "the timer wheel failed: %s", pn_strerror(e));
	tm->wakeups_window = r->wakeups;
	tm->optimum_window = r->optimum;
	tm->early += r->early;
	tm->late_p99 = pn_hist_percentile(&r->late, 99);
	free(r);
}

/* ---- recommendations: each quotes a gain measured above ----------------------------- */

/* Appends a recommendation of kind (naming command, "" none), its text from fmt; returns it,
 * so that a measured one can say what it moved (NULL when the list is full). */
PN_FMT(4, 5)
static struct probe_reco *reco(struct probe *p, const char *kind, const char *command,
                               const char *fmt, ...)
{
	if (p->nrecos == PROBE_RECOS)
		return NULL;
	struct probe_reco *r = &p->recos[p->nrecos++];
	*r = (struct probe_reco){.kind = kind};
	snprintf(r->command, sizeof(r->command), "%s", command);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	return r;
}

/* What r's change moved, measured: figure from before to after. */
static void measured(struct probe_reco *r, const char *figure, double before, double after)
{
	if (!r)
		return;
	r->measured = true;
	r->figure = figure;
	r->before = before;
	r->after = after;
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
	uint64_t n = pn_hist_count(&c->overshoot);
	return n ? (double)c->spun_ns / (double)n : 0;
}

static void recommend(struct probe *p)
{
	char a[32], b[32], c[32], e4[32];
	/* timer slack: nanosleep at 100 us, current slack vs 1 ns */
	const struct sleep_cell *d = cell(p, "nanosleep", 1, 0), *s1 = cell(p, "nanosleep", 1, 1);
	if (d && s1 && p->slack_self > 1) {
		int64_t md = pn_hist_percentile(&d->overshoot, 50),
		        m1 = pn_hist_percentile(&s1->overshoot, 50);
		if (md - m1 > 5000 && md - m1 > md / 5)
			measured(reco(p, "slack", "punctual run --slack 1ns -- APP",
			              "Sleeps overshoot by %s at the median (nanosleep, 100 us), "
			              "%s of it "
			              "timer slack (%s): `punctual run --slack 1ns -- APP`, or "
			              "TimerSlackNSec=1ns in its systemd unit (measured: %s).",
			              fmt_ns(a, sizeof(a), (double)md),
			              fmt_ns(b, sizeof(b), (double)(md - m1)),
			              fmt_ns(c, sizeof(c), (double)p->slack_self),
			              fmt_ns(e4, sizeof(e4), (double)m1)),
			         "p50_ns", (double)md, (double)m1);
	}
	/* precise sleeps: p99 at 100 us, best kernel-only vs pn_sleep_until(1 us) */
	int best = p->sleeps.nslacks - 1;
	const struct sleep_cell *k = cell(p, "clock_nanosleep_abs", 1, best),
	                        *pr = cell(p, "precise:1us", 1, best);
	if (k && pr) {
		int64_t kp = pn_hist_percentile(&k->overshoot, 99),
		        pp = pn_hist_percentile(&pr->overshoot, 99);
		if (kp > 10000 && pp * 2 < kp)
			measured(reco(p, "precise", "punctual run --precise=1us -- APP",
			              "Deadlines that matter: even with slack 1 ns the kernel "
			              "wakes %s late "
			              "at "
			              "p99 (clock_nanosleep, 100 us). pn_sleep_until(deadline, "
			              "1us) in "
			              "code, or "
			              "`punctual run --precise=1us -- APP` for a program you "
			              "cannot change, "
			              "measured %s at p99, for %s of spinning per sleep.",
			              fmt_ns(a, sizeof(a), (double)kp),
			              fmt_ns(b, sizeof(b), (double)pp),
			              fmt_ns(c, sizeof(c), cell_spin(pr))),
			         "p99_ns", (double)kp, (double)pp);
	}
	/* poll/epoll_wait round short timeouts up to a millisecond */
	const struct sleep_cell *ep = cell(p, "epoll_wait", 0, best);
	const struct sleep_cell *ns = cell(p, "nanosleep", 0, best);
	if (ep && ns) {
		int64_t e = pn_hist_percentile(&ep->duration, 50),
		        n = pn_hist_percentile(&ns->duration, 50);
		if (e > 4 * n && e > 500000)
			reco(p, "epoll", "",
			     "epoll_wait takes milliseconds: a 1 us timeout lasted %s at the "
			     "median, "
			     "against %s for nanosleep. Event loops that need sub-millisecond "
			     "timers "
			     "should use epoll_pwait2 or a timerfd (pn_wheel_timerfd).",
			     fmt_ns(a, sizeof(a), (double)e), fmt_ns(b, sizeof(b), (double)n));
	}
	/* clocks: system calls where the vDSO should serve */
	int mono = probe_clock(p, "libc:CLOCK_MONOTONIC"), cyc = probe_clock(p, "pn_cycles");
	if (mono >= 0 && cyc >= 0 && strcmp(p->clocks[mono].path, "syscall") == 0)
		reco(p, "clock", "punctual clock --clocksources",
		     "clock_gettime is a system call here (%s per read, clocksource %s): for "
		     "timestamps use pn_cycles (%s, measured), or a clocksource with a vDSO mode "
		     "(`punctual clock --clocksources` measures each).",
		     fmt_ns(a, sizeof(a), p->clocks[mono].cost_median), p->host.clocksource,
		     fmt_ns(b, sizeof(b), p->clocks[cyc].cost_median));
	/* CPUs */
	if (p->cpu_status == 0 && p->cpu.online > 0 && p->cpu.count < p->cpu.online)
		reco(p, "cpus", "punctual cpus",
		     "This process may use %d CPU%s, not the %d online (%s): size thread pools "
		     "with pn_cpu_count() or `punctual cpus`, not nproc or "
		     "sysconf(_SC_NPROCESSORS_ONLN).",
		     p->cpu.count, p->cpu.count == 1 ? "" : "s", p->cpu.online, p->cpu.reason);
	/* what precision costs: the budget that buys the most per CPU, of those no fixed margin
	 * beats */
	if (p->nrecos < PROBE_RECOS && probe_frontier_reco(&p->frontier, &p->recos[p->nrecos]))
		p->nrecos++;
	/* why late: only when one cause holds most of the late tail */
	if (p->nrecos < PROBE_RECOS && probe_why_reco(&p->why, &p->recos[p->nrecos]))
		p->nrecos++;
	/* coalescing */
	struct probe_timers *t = &p->timers;
	if (t->run && t->wakeups_window < t->wakeups_exact)
		measured(reco(p, "timers", "pn_wheel_add(timer, deadline, precision)",
		              "Give timers a precision window: %d timers woke the loop %llu times "
		              "with no "
		              "window and %llu times with %d%% of their delay (measured; offline "
		              "optimum "
		              "%llu), never early.",
		              t->timers, (unsigned long long)t->wakeups_exact,
		              (unsigned long long)t->wakeups_window, t->percent,
		              (unsigned long long)t->optimum_window),
		         "wakeups", (double)t->wakeups_exact, (double)t->wakeups_window);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"quick", no_argument, NULL, 'q'},      {"json", no_argument, NULL, 'j'},
	        {"prom", required_argument, NULL, 'p'}, {"plot", required_argument, NULL, 'P'},
	        {"help", no_argument, NULL, 'h'},       {0},
	};
	tool_cmd = "probe";
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--compare") == 0)
			return probe_compare(argc, argv);
	static struct probe p;
	const char *prom = NULL, *plot = NULL;
	bool json = false;
	int c;
	while ((c = next_opt(argc, argv, ":jh", opts, usage)) != -1) {
		switch (c) {
		case 'q':
			p.quick = true;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			prom = optarg;
			break;
		case 'P':
			plot = optarg;
			break;
		}
	}
	no_more_args(argc, argv);
	if (prom && !*prom)
		usage_error("--prom needs a file name");
	if (plot && !*plot)
		usage_error("--plot needs a directory");
	/* before the seconds of measuring, not after */
	if (prom)
		file_check("--prom", prom);
	if (plot)
		probe_plot_check(plot);

	int64_t start = pn_now();
	progress("probe: system");
	system_facts(&p);
	p.cpu_status = pn_cpu_info(&p.cpu);
	p.cpu_count = pn_cpu_count();
	measure_clocks(&p);
	measure_sleeps(&p);
	measure_timers(&p);
	probe_frontier_measure(&p.frontier, p.quick);
	probe_why_measure(&p.why, p.quick);
	recommend(&p);
	p.elapsed = pn_now() - start;

	if (prom) {
		int r = probe_write_prom(&p, prom);
		if (r < 0)
			die(1, "--prom %s: %s", prom, strerror(-r));
	}
	if (plot) {
		char what[128];
		int r = probe_plot(&p, plot, what, sizeof(what));
		if (r < 0)
			die(1, "--plot %s: %s%s%s", plot, what, *what ? ": " : "", strerror(-r));
	}
	out_open();
	if (json)
		probe_render_json(&p);
	else
		probe_render_text(&p);
	out_commit();
	sleep_matrix_free(&p.sleeps);
	free(p.clocks);
	return 0;
}
