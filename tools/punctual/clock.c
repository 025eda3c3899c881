/* SPDX-License-Identifier: MIT */
/*
 * `punctual clock`, the Linux counterpart of FreeBSD's timecounter cost table: every clock
 * source's cost per read, resolution, backward steps and path, and with --clocksources the
 * same table under each kernel clocksource, restoring the original one afterwards, also on
 * SIGINT, SIGTERM and on error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/host.h"
#include "commands.h"
#include "util/json.h"
#include "measure/clocks.h"
#include "render/figures.h"

#define CS_CURRENT "/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define MAX_CS     8

static const char usage[] =
        "usage: punctual clock [--json] [--duration D] [--clocksources]\n"
        "\n"
        "What every clock source costs on this machine: ns per read (min and median over\n"
        "rounds), resolution (clock_getres and the smallest step seen), backward steps\n"
        "(in one thread and across CPUs after a handoff), and whether a read is served by\n"
        "the vDSO, a system call or an instruction. Rank 1 is the cheapest tier: sorted\n"
        "by median cost, a new tier starts where a source costs over 1.35x the one before\n"
        "it, so equal ranks cost the same within run-to-run noise.\n"
        "\n"
        "  -j, --json          print JSON instead of a table\n"
        "  -d, --duration D    measuring budget per clocksource (default 2s)\n"
        "      --clocksources  measure under every available kernel clocksource (root\n"
        "                      only); the original is restored, also on SIGINT, SIGTERM\n"
        "                      or error\n"
        "      --wide          every column of the table, whatever the width (by default\n"
        "                      the least needed are left out to fit $COLUMNS, or 80)\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help          this text\n";

struct cs_run {
	char name[64];
	struct clock_result *res;
};

/* ---- clocksource switching, restored whatever happens ------------------------------ */

static char cs_original[64];
static volatile sig_atomic_t cs_changed;

static void cs_restore(void)
{
	if (cs_changed) {
		/* async-signal-safe: open, write, close */
		write_sysfs(CS_CURRENT, cs_original);
		cs_changed = 0;
	}
}

static void cs_on_signal(int sig)
{
	cs_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIGINT and SIGTERM stop the measuring (stop_on_signals: the runs so far are printed, and
 * cs_restore runs on the way out); a second one, SIGHUP and SIGQUIT restore and end it. */
static void cs_guard(void)
{
	cleanup_on_signal(cs_restore);
	struct sigaction sa = {.sa_handler = cs_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGQUIT, &sa, NULL);
	atexit(cs_restore);
}

static int cs_switch(const char *name)
{
	char cur[64];
	if (strcmp(name, cs_original) != 0)
		cs_changed = 1;
	int r = write_sysfs(CS_CURRENT, name);
	if (r < 0)
		return r;
	/* The switch happens at the next tick; wait until the kernel reports it. */
	for (int i = 0; i < 200; i++) {
		if (read_sysfs_line(CS_CURRENT, cur, sizeof(cur)) == 0 && strcmp(cur, name) == 0)
			return 0;
		nanosleep(&(struct timespec){0, 5000000}, NULL);
	}
	return -ETIMEDOUT;
}

/* ---- rendering -------------------------------------------------------------------- */

static void results_json(struct json *j, const struct clock_result *res, int n)
{
	json_arr(j, "sources");
	for (int i = 0; i < n; i++)
		clock_source_json(j, &res[i]);
	json_arr_end(j);
}

static void render_json(const struct host *host, const struct pn_cycles_info *ci, int64_t duration,
                        const struct cs_run *runs, int nruns, bool all_cs)
{
	int n = clock_sources_count();
	struct json j;
	json_report_begin(&j, out, "clock");
	host_json(&j, host); /* read before any clocksource switch: the one in force */
	json_obj(&j, "cycles");
	json_str(&j, "source", ci->name);
	json_str(&j, "reason", ci->reason);
	json_num(&j, "hz", ci->hz);
	json_int(&j, "calibration_base_ns", ci->base_ns);
	json_int(&j, "calibration_uncertainty_ns", ci->uncertainty_ns);
	json_obj_end(&j);
	json_int(&j, "duration_ns", duration);
	json_bool(&j, "interrupted", tool_stop != 0); /* the runs measured until a signal */
	/* The first run is under the clocksource in force; --clocksources adds the rest. */
	json_str(&j, "measured_clocksource", runs[0].name);
	results_json(&j, runs[0].res, n);
	if (all_cs) {
		json_arr(&j, "clocksources");
		for (int k = 0; k < nruns; k++) {
			json_obj(&j, NULL);
			json_str(&j, "clocksource", runs[k].name);
			results_json(&j, runs[k].res, n);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	}
	json_end(&j);
}

static bool wide;

static void render_table(const struct cs_run *run)
{
	fprintf(out, "\nclocksource %s\n", run->name);
	clock_table_text(run->res, clock_sources_count(), NULL, 0, wide, "--wide shows all");
}

static void render_text(const struct host *host, const struct pn_cycles_info *ci,
                        const struct cs_run *runs, int nruns)
{
	char b[32];
	fprintf(out, "punctual clock: what each clock source costs on this machine\n");
	fprintf(out, "kernel       %s\n", host->kernel);
	fprintf(out, "cpu          %s\n", host->cpu);
	fprintf(out, "clocksource  %s (available: %s)\n",
	        cs_original[0] ? cs_original : host->clocksource, host->clocksources);
	fprintf(out, "tsc          %s\n",
	        host->invariant_tsc < 0 ? "n/a"
	        : host->invariant_tsc   ? "invariant"
	                                : "not invariant");
	fprintf(out, "tick         %.0f Hz (coarse clock resolution %s)\n", host->tick_hz,
	        fmt_ns(b, sizeof(b), (double)host->coarse_res_ns));
	char cyc[320];
	snprintf(cyc, sizeof(cyc), "%s at %.3f MHz (%s)", ci->name, ci->hz / 1e6, ci->reason);
	out_wrap(out, "pn_cycles    ", "             ", cyc);
	for (int k = 0; k < nruns; k++)
		render_table(&runs[k]);
	fputc('\n', out);
	out_wrap(out, "", "",
	         "backward: consecutive reads in one thread that went back / reads after a "
	         "handoff between two CPUs that were below the read before it; nonzero is expected "
	         "only for unordered counters (unord.), or for an ordered counter where the CPUs' "
	         "counters disagree (a VM's host moving vCPUs: pn_cycles_warp_check).");
	if (tool_stop)
		fprintf(out, "interrupted by %s: the figures measured until then\n",
		        tool_stop == SIGINT ? "SIGINT" : "SIGTERM");
}

/* ---- the command ------------------------------------------------------------------ */

/* Fills avail and returns how many: the current clocksource, or every one (root only). */
static int list_clocksources(const struct host *host, bool all_cs, char avail[][64])
{
	int navail = 0;
	if (!all_cs) {
		snprintf(avail[navail++], sizeof(avail[0]), "%.63s", host->clocksource);
		return navail;
	}
	if (geteuid() != 0)
		die(EXIT_USAGE, "--clocksources needs root: it writes %s", CS_CURRENT);
	if (read_sysfs_line(CS_CURRENT, cs_original, sizeof(cs_original)) < 0)
		die(1, "cannot read %s: %s", CS_CURRENT, strerror(errno));
	char tmp[sizeof(host->clocksources)];
	snprintf(tmp, sizeof(tmp), "%s", host->clocksources);
	/* The original first, so the first table is the machine as it is. */
	snprintf(avail[navail++], sizeof(avail[0]), "%s", cs_original);
	for (char *save, *t = strtok_r(tmp, " ", &save); t && navail < MAX_CS;
	     t = strtok_r(NULL, " ", &save))
		if (strcmp(t, cs_original) != 0)
			snprintf(avail[navail++], sizeof(avail[0]), "%.63s", t);
	cs_guard();
	return navail;
}

/* Measures under each clocksource in avail; the original is back on return or at exit.
 * Returns how many were measured: fewer when a SIGINT or SIGTERM stopped it (at least one,
 * the first round of its costs). */
static int measure_runs(struct cs_run *runs, char avail[][64], int navail, bool all_cs,
                        int64_t duration)
{
	int n = clock_sources_count(), k;
	for (k = 0; k < navail && (k == 0 || !tool_stop); k++) {
		snprintf(runs[k].name, sizeof(runs[k].name), "%.63s", avail[k]);
		runs[k].res = calloc((size_t)n, sizeof(struct clock_result));
		if (!runs[k].res)
			die(1, "out of memory");
		if (all_cs) {
			progress("clock: switching to clocksource %s", avail[k]);
			int r = cs_switch(avail[k]);
			if (r < 0)
				die(1, "cannot switch to clocksource %s: %s", avail[k],
				    strerror(-r));
		}
		if (clock_measure_all(runs[k].res, duration) < 0)
			die(1, "out of memory"); /* the clocksource is put back at exit */
	}
	cs_restore();
	return k;
}

int cmd_clock(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"json", no_argument, NULL, 'j'},
	        {"duration", required_argument, NULL, 'd'},
	        {"clocksources", no_argument, NULL, 'c'},
	        {"wide", no_argument, NULL, 'w'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	bool json = false, all_cs = false;
	int64_t duration = 2 * 1000000000LL;
	tool_cmd = "clock";
	int c;
	while ((c = next_opt(argc, argv, ":jd:h", opts, usage)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'c':
			all_cs = true;
			break;
		case 'w':
			wide = true;
			break;
		case 'd':
			duration = opt_duration("--duration", optarg);
			if (duration < 10000000LL || duration > 3600 * 1000000000LL)
				usage_error("--duration: %s is out of range [10ms, 1h]", optarg);
			break;
		}
	}
	no_more_args(argc, argv);

	struct host host;
	host_read(&host);
	char avail[MAX_CS][64];
	int navail = list_clocksources(&host, all_cs, avail);
	struct cs_run runs[MAX_CS];
	stop_on_signals(); /* a first SIGINT or SIGTERM stops the runs, a second ends */
	navail = measure_runs(runs, avail, navail, all_cs, duration);
	stop_on_signals_end();

	struct pn_cycles_info ci;
	pn_cycles_info(&ci);
	out_open();
	if (json)
		render_json(&host, &ci, duration, runs, navail, all_cs);
	else
		render_text(&host, &ci, runs, navail);
	out_commit();
	for (int k = 0; k < navail; k++)
		free(runs[k].res);
	return 0;
}
