/* SPDX-License-Identifier: MIT */
/*
 * `punctual cpus`: how many CPUs this process may use and why (the affinity set, every cgroup
 * level walked with its quota and period, the level that imposes the limit, the rounding, any
 * override), as text or JSON; --watch re-evaluates every second and prints each change until
 * SIGINT; --bench measures pn_cpu_count() cached and fresh.
 *
 * What it prints comes from pn_cpu_info() alone, so the tool and an application linking
 * the library always agree on the count.
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

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include "render/figures.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "util/encode.h"
#include "util/progress.h"
#include "commands.h"
#include "util/json.h"

static const char usage[] =
        "usage: punctual cpus [--json | --quiet] [--rounding R] [--watch [--interval D] |\n"
        "                     --bench]\n"
        "\n"
        "How many CPUs this process may use: min(the affinity set, the cgroup CPU limit\n"
        "rounded by R), at least 1; what pn_cpu_count() answers, and why. The cgroup\n"
        "limit is the smallest quota/period from the process's cgroup up to the\n"
        "hierarchy's root (v1 cpu.cfs_quota_us, v2 cpu.max): a parent allowing 0.5 CPU\n"
        "limits its children. Shares and weights are shown but never limit the count.\n"
        "PUNCTUAL_CPU_COUNT=N overrides the answer;\n"
        "PUNCTUAL_CPU_ROUNDING selects the rounding.\n"
        "\n"
        "  -r, --rounding R    ceil (default: 0.5 -> 1, 2.5 -> 3), floor or nearest\n"
        "  -w, --watch         re-evaluate every interval and print each change, until\n"
        "                      Ctrl-C (SIGINT) or SIGTERM\n"
        "  -i, --interval D    the --watch interval (default 1s)\n"
        "  -b, --bench         calls per second of pn_cpu_count() (cached) and\n"
        "                      pn_cpu_count_fresh() (re-reads /proc and /sys)\n"
        "  -j, --json          print JSON instead of text (with --watch: one line per\n"
        "                      change)\n"
        "  -q, --quiet         print the bare count, like nproc:\n"
        "                      make -j\"$(punctual cpus -q)\"\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help          this text\n";

/* ---- rendering ---------------------------------------------------------------------- */

/* ---- --bench -------------------------------------------------------------------------- */

struct bench {
	double cached_per_s, fresh_per_s;
};

/* Calls per second of fn over about budget_ns, timed in batches of batch calls. */
static double rate(int (*fn)(void), long batch, int64_t budget_ns)
{
	volatile int sink = 0;
	long calls = 0;
	int64_t t0 = pn_now(), t;
	do {
		for (long i = 0; i < batch; i++)
			sink += fn();
		calls += batch;
		t = pn_now();
	} while (t - t0 < budget_ns);
	(void)sink;
	return (double)calls * 1e9 / (double)(t - t0);
}

static void run_bench(struct bench *b)
{
	progress("measuring pn_cpu_count()...");
	rate(pn_cpu_count, 100000, 50000000); /* warm up: caches, frequency */
	b->cached_per_s = rate(pn_cpu_count, 100000, 500000000);
	progress("measuring pn_cpu_count_fresh()...");
	b->fresh_per_s = rate(pn_cpu_count_fresh, 100, 500000000);
	progress_done();
}

static void bench_text(FILE *f, const struct bench *b)
{
	char t1[32], t2[32];
	fprintf(f,
	        "  bench:    cached %.3gM calls/s (%s a call), fresh %.3gk calls/s (%s a call)\n",
	        b->cached_per_s / 1e6, fmt_ns(t1, sizeof(t1), 1e9 / b->cached_per_s),
	        b->fresh_per_s / 1e3, fmt_ns(t2, sizeof(t2), 1e9 / b->fresh_per_s));
}

/* ---- --watch -------------------------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* What counts as a change worth a line. */
static bool same(const struct pn_cpu_info *a, const struct pn_cpu_info *b)
{
	return a->count == b->count && a->affinity == b->affinity && a->limit == b->limit &&
	       a->cgroup_error == b->cgroup_error && strcmp(a->limit_path, b->limit_path) == 0 &&
	       strcmp(a->cgroup_path, b->cgroup_path) == 0 &&
	       strcmp(a->affinity_list, b->affinity_list) == 0;
}

static void watch_line(bool json, const struct pn_cpu_info *in)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	if (json) {
		struct json j;
		json_begin(&j, stdout);
		json_str(&j, "time", ts);
		cpu_info_json(&j, in);
		json_end(&j);
	} else {
		char why[4 * PN_CPU_REASON_MAX];
		printf("%s cpus %d: %s\n", ts, in->count, text_safe(why, sizeof(why), in->reason));
	}
	if (fflush(stdout) != 0)
		die(1, "writing to stdout failed");
}

static int watch(bool json, int64_t interval_ns)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal ends the sleep at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	static struct pn_cpu_info prev, cur;
	pn_cpu_info(&prev);
	watch_line(json, &prev);
	int64_t next = pn_now();
	while (!stop) {
		next += interval_ns;
		struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (stop)
			break;
		pn_cpu_info(&cur);
		if (!same(&prev, &cur)) {
			watch_line(json, &cur);
			prev = cur;
		}
	}
	return 0;
}

/* ---- the command ---------------------------------------------------------------------- */

/* Sets the rounding --rounding names; exit 2 on any other name. */
static void set_rounding(const char *name)
{
	int p = -1;
	for (int k = PN_CPU_ROUND_CEIL; k <= PN_CPU_ROUND_NEAREST; k++)
		if (strcmp(name, pn_cpu_rounding_name(k)) == 0)
			p = k;
	if (p < 0)
		usage_error("--rounding must be ceil, floor or nearest, not '%s'", name);
	pn_cpu_set_rounding(p);
}

/* The JSON report; b is NULL without --bench, which prints "bench": null. */
static void report_json(const struct pn_cpu_info *info, const struct bench *b)
{
	struct json j;
	json_report_begin(&j, out, "cpus");
	cpu_info_json(&j, info);
	if (b) {
		json_obj(&j, "bench");
		json_num(&j, "cached_calls_per_s", b->cached_per_s);
		json_num(&j, "cached_ns_per_call", 1e9 / b->cached_per_s);
		json_num(&j, "fresh_calls_per_s", b->fresh_per_s);
		json_num(&j, "fresh_us_per_call", 1e6 / b->fresh_per_s);
		json_obj_end(&j);
	} else {
		json_none(&j, "bench");
	}
	json_end(&j);
}

/* The one-shot report; all is measured before the first byte is written. */
static int report(bool json, bool do_bench)
{
	static struct pn_cpu_info info;
	pn_cpu_info(&info);
	struct bench b = {0};
	if (do_bench)
		run_bench(&b);
	out_open();
	if (json) {
		report_json(&info, do_bench ? &b : NULL);
	} else {
		cpu_info_text(out, &info, true);
		if (do_bench)
			bench_text(out, &b);
	}
	out_commit();
	return 0;
}

int cmd_cpus(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"rounding", required_argument, NULL, 'r'}, {"watch", no_argument, NULL, 'w'},
	        {"interval", required_argument, NULL, 'i'}, {"bench", no_argument, NULL, 'b'},
	        {"json", no_argument, NULL, 'j'},           {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},           {0},
	};
	bool json = false, quiet = false, do_watch = false, do_bench = false, have_interval = false;
	int64_t interval = 1000000000;
	tool_cmd = "cpus";
	int c;
	while ((c = next_opt(argc, argv, ":r:wi:bjqh", opts, usage)) != -1) {
		switch (c) {
		case 'r':
			set_rounding(optarg);
			break;
		case 'w':
			do_watch = true;
			break;
		case 'i':
			interval = opt_duration("--interval", optarg);
			have_interval = true;
			if (interval < 1000000)
				usage_error("--interval must be at least 1ms");
			break;
		case 'b':
			do_bench = true;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	no_more_args(argc, argv);
	if (do_watch && do_bench)
		usage_error("--watch and --bench do not go together");
	if (have_interval && !do_watch)
		usage_error("--interval needs --watch");
	if (quiet && (json || do_watch || do_bench))
		usage_error("--quiet prints the bare count: not with --json, --watch or --bench");
	if (quiet) {
		out_open();
		fprintf(out, "%d\n", pn_cpu_count());
		out_commit();
		return 0;
	}
	if (do_watch)
		return watch(json, interval);
	return report(json, do_bench);
}
