/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe`, the one-command timing report for a host or container: its options,
 * and its sections run in turn, with recommendations that quote a gain measured in the
 * same run. It changes nothing in the system but this process's own timer slack.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "commands.h"
#include "probe/probe.h"
#include "util/diag.h"
#include "util/files.h"
#include "util/host.h"
#include "util/json.h"
#include "util/opts.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/prom.h"

static const char usage_fmt[] =
        "usage: punctual probe [--quick] [--json] [--prom [FILE]] [--plot DIR]\n"
        "       punctual probe --compare BEFORE.json AFTER.json [--json]\n"
        "                      [--fail-on-worse]\n"
        "\n"
        "The timing report for this host or container: system facts, what clocks cost,\n"
        "how late sleeps wake (current timer slack, 1 ns, pn_sleep_until), timer\n"
        "coalescing, how many CPUs this process may use, why sleeps wake late (the\n"
        "causes of a 1 ms loop's late tail: CFS throttling, preemption, ...; as\n"
        "root, the host's other programs late meanwhile, through eBPF), and\n"
        "recommendations, each with the figure measured in this run, what precision\n"
        "costs here (lateness against CPU), and when the CPUs are shared (1 ms sleeps\n"
        "beside CPU hogs of its own, two per CPU on up to four CPUs, for about 1.8 s).\n"
        "About 19 s; --quick about 4 s (more on a busy machine). Changes nothing it\n"
        "does not put back.\n"
        "\n"
        "      --quick       shorter measurements (about 4 s)\n"
        "  -j, --json        JSON, valid against the schema named at the end\n"
        "      --prom FILE   also write Prometheus text metrics to FILE, atomically, for\n"
        "                    node_exporter's textfile collector (man punctual, FILES: how\n"
        "                    links, owners and modes are treated); FILE - (or none, as\n"
        "                    the last argument): the metrics on standard output, the\n"
        "                    report on standard error (a container's output is its\n"
        "                    standard output)\n"
        "      --plot DIR    also write PNG and SVG charts to DIR (needs gnuplot)\n"
        "      --compare     two --json reports side by side (punctual probe --compare\n"
        "                    --help)\n"
        "  -h, --help        this text\n"
        "\n"
        "The JSON schema (JSON Schema 2020-12):\n"
        "  %s\n";

/* The report's JSON schema beside this binary's install prefix, else where the build was
 * configured to install it. */
static const char *schema_path(void)
{
	static char p[PATH_MAX], real[PATH_MAX];
	const char *tail = PN_BIN_TO_DATA "/punctual/probe.schema.json";
	ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - strlen(tail) - 1);
	if (n > 0) {
		p[n] = '\0';
		char *slash = strrchr(p, '/');
		if (slash) {
			strcpy(slash + 1, tail);
			if (access(p, R_OK) == 0)
				return realpath(p, real) ? real : p;
		}
	}
	return PN_SCHEMA_PATH;
}

/* The report's sections, in order. The shared-CPU run comes after why-late: its hogs
 * would spend a quota, and the why-late loop would blame the probe's own throttling. */
static const struct probe_section *const sections[] = {
        &probe_host, &probe_clocks,   &probe_sleeps, &probe_timers,
        &probe_cpus, &probe_frontier, &probe_why,    &probe_shared,
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* The sections measured: every one, or those a stop let finish. */
static size_t nmeasured;

static void render_text(const struct probe *p)
{
	fprintf(out, "punctual probe: timing on this %s\n\n",
	        p->host.virt[0] == 'n' ? "host" : "guest");
	if (!tool_stop) /* the verdict quotes sections a signal may have cut */
		probe_verdict_text(p);
	for (size_t i = 0; i < nmeasured; i++)
		sections[i]->text(p);
	if (tool_stop) {
		char line[160];
		snprintf(line, sizeof(line),
		         "interrupted by %s after %.1f s: the figures measured until then (%zu of "
		         "%zu sections; no recommendations)",
		         tool_stop == SIGINT ? "SIGINT" : "SIGTERM", (double)p->elapsed / 1e9,
		         nmeasured, NSECTIONS);
		fputc('\n', out);
		out_wrap(out, "", "", line);
		return;
	}
	probe_reco_text(p);
	fprintf(out, "\nmeasured in %.1f s; `punctual probe --json` has every figure\n",
	        (double)p->elapsed / 1e9);
}

static void render_json(const struct probe *p)
{
	struct json j;
	json_report_begin(&j, out, "probe");
	json_bool(&j, "quick", p->quick);
	json_int(&j, "elapsed_ns", p->elapsed);
	/* when interrupted, the sections not measured are absent */
	json_bool(&j, "interrupted", tool_stop != 0);
	if (!tool_stop)
		probe_verdict_json(&j, p);
	for (size_t i = 0; i < nmeasured; i++)
		sections[i]->json(&j, p);
	probe_reco_json(&j, p); /* none when interrupted */
	json_end(&j);
}

static int render_prom(FILE *f, const void *arg)
{
	const struct probe *p = arg;
	for (size_t i = 0; i < NSECTIONS; i++)
		sections[i]->prom(f, p);
	prom_help(f, "punctual_probe_duration_seconds", "gauge", "How long the probe took.");
	fprintf(f, "punctual_probe_duration_seconds %.3f\n", (double)p->elapsed / 1e9);
	return 0;
}

/* Every section measured, then every one's recommendations, which may quote each other's
 * figures. A stop ends the section in progress: those before it are the report, without
 * recommendations. Returns how many sections ran. */
static size_t measure(struct probe *p)
{
	int64_t start = pn_now();
	size_t ran = 0;
	probe_quota_begin(p);
	host_cpu_ticks(p->ticks_before);
	progress("probe: system");
	stop_on_signals();
	for (; ran < NSECTIONS && !tool_stop; ran++) {
		sections[ran]->measure(p);
		if (!tool_stop)
			nmeasured = ran + 1;
	}
	host_cpu_ticks(p->ticks_after);
	if (tool_stop)
		progress_done();
	else
		for (size_t i = 0; i < NSECTIONS; i++)
			if (sections[i]->recommend)
				sections[i]->recommend(p);
	p->elapsed = pn_now() - start;
	stop_on_signals_end(); /* writing the files: a signal ends it, as ever */
	return ran;
}

/* The metrics on stdout (--prom -), all or nothing. */
static void prom_stdout(const struct probe *p)
{
	out_open();
	if (render_prom(out, p) < 0)
		die(1, "writing the metrics failed");
	out_commit();
}

/* --prom and --plot, then the report on stdout (stderr when --prom - takes stdout). */
static void write_out(const struct probe *p, const char *prom, const char *plot, bool json)
{
	bool prom_out = prom && strcmp(prom, "-") == 0;
	if (tool_stop && (prom || plot)) { /* a partial report goes in no file */
		fprintf(stderr, "punctual probe: interrupted: %s%s%s not written\n",
		        prom ? "--prom" : "", prom && plot ? " and " : "", plot ? "--plot" : "");
		prom = plot = NULL;
	}
	if (prom && prom_out) {
		prom_stdout(p);
	} else if (prom) {
		/* the collector must never read half a file */
		int r = file_write(prom, render_prom, p);
		if (r < 0)
			die(1, "--prom %s: %s", prom, strerror(-r));
	}
	if (plot) {
		char what[128];
		int r = probe_plot(p, plot, what, sizeof(what));
		/* DIR itself refused is bad input, as dir_check's refusals; a full disk is not */
		bool place = !*what && r != -ENOSPC && r != -EDQUOT && r != -EIO && r != -ENOMEM;
		if (r < 0)
			die(place ? EXIT_USAGE : 1, "--plot %s: %s%s%s", plot, what,
			    *what ? ": " : "", strerror(-r));
	}
	out_open();
	if (json)
		render_json(p);
	else
		render_text(p);
	out_commit_to(prom_out ? stderr : stdout);
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
	/* --prom last without a FILE: standard output, as --prom - */
	static char prom_stdout_arg[] = "--prom=-";
	if (argc > 1 && strcmp(argv[argc - 1], "--prom") == 0)
		argv[argc - 1] = prom_stdout_arg;
	static struct probe p;
	const char *prom = NULL, *plot = NULL;
	bool json = false;
	int c;
	static char usage[sizeof(usage_fmt) + PATH_MAX];
	snprintf(usage, sizeof(usage), usage_fmt, schema_path());
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
	/* before the seconds of measuring */
	if (prom && strcmp(prom, "-") != 0)
		file_check("--prom", prom);
	if (plot)
		probe_plot_check(plot);

	size_t ran = measure(&p);
	write_out(&p, prom, plot, json);
	for (size_t i = 0; i < ran; i++)
		if (sections[i]->done)
			sections[i]->done(&p);
	return 0;
}
