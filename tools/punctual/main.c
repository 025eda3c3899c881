/* SPDX-License-Identifier: MIT */
/*
 * main.c: the punctual command: the subcommand table and the top-level options.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <punctual/sleep.h>
#include <punctual/version.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "commands.h"
#include "util/json.h"

struct subcmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcmd subcmds[] = {
        {"probe", cmd_probe, "the timing report for this host or container (the default)"},
        {"clock", cmd_clock, "what every clock source costs on this machine"},
        {"sleep", cmd_sleep, "how late every sleep mechanism wakes, per timer slack"},
        {"slack", cmd_slack, "show or set the timer slack of a process or its threads"},
        {"run", cmd_run, "run a command with a timer slack or precise sleeps"},
        {"cpus", cmd_cpus, "how many CPUs this process may use (affinity, cgroups), and why"},
        {"timers", cmd_timers, "how few wakeups a timer wheel with precision windows takes"},
        {"tune", cmd_tune, "measure the fixes for a program or service, keep the best"},
        {"why", cmd_why, "why a running program's timed waits end late (eBPF)"},
};

#define N_SUBCMDS (sizeof(subcmds) / sizeof(subcmds[0]))

static void help(FILE *f)
{
	fprintf(f, "usage: punctual [--help | --version [--json]] [COMMAND] [OPTIONS]\n"
	           "       punctual help COMMAND\n\n"
	           "Measure and control time on Linux.\n\ncommands:\n");
	for (size_t i = 0; i < N_SUBCMDS; i++)
		fprintf(f, "  %-10s %s\n", subcmds[i].name, subcmds[i].summary);
	fprintf(f, "\nWith no command (or only options, such as --quick), punctual runs\n"
	           "'punctual probe'. 'punctual help COMMAND' or 'punctual COMMAND --help'\n"
	           "describes a command; man punctual has them all.\n");
}

static const struct subcmd *find(const char *name)
{
	for (size_t i = 0; i < N_SUBCMDS; i++)
		if (strcmp(name, subcmds[i].name) == 0)
			return &subcmds[i];
	return NULL;
}

/* Exits 2 for an unknown command, with the nearest one's name when it is near. */
_Noreturn static void unknown(const char *a)
{
	const char *names[N_SUBCMDS];
	for (size_t i = 0; i < N_SUBCMDS; i++)
		names[i] = subcmds[i].name;
	const char *best = nearest(a, names, N_SUBCMDS);
	if (best)
		usage_error("unknown command '%s'; did you mean '%s'?", a, best);
	usage_error("unknown command '%s' (commands: probe, clock, sleep, slack, run, cpus, "
	            "timers, tune, why)",
	            a);
}

static int run(const struct subcmd *c, int argc, char **argv)
{
	int st = c->run(argc, argv);
	stdout_close();
	return st;
}

int main(int argc, char **argv)
{
	/* what the tool measures, it measures with the kernel's slice unless told (PUNCTUAL_SLICE,
	 * sleep --slice, the probe's shared-CPU variants): a slice the library set on a thread
	 * for a precise cell would stay for the cells after it */
	pn__slice_set_default(PN_SLEEP_SLICE_OFF);
	if (argc < 2)
		return run(find("probe"), 1, (char *[]){"probe", NULL});
	const char *a = argv[1];
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ||
	    (strcmp(a, "help") == 0 && argc == 2)) {
		help(stdout);
		stdout_close();
		return 0;
	}
	if (strcmp(a, "help") == 0) { /* help COMMAND: the command's own help */
		const struct subcmd *c = find(argv[2]);
		if (!c)
			unknown(argv[2]);
		if (argc > 3)
			usage_error("help takes one command: 'punctual help %s'", argv[2]);
		return run(c, 2, (char *[]){argv[2], "--help", NULL});
	}
	if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
		bool json =
		        argc == 3 && (strcmp(argv[2], "--json") == 0 || strcmp(argv[2], "-j") == 0);
		if (argc > 2 && !json)
			usage_error("--version takes only --json");
		if (json) { /* {"tool", "version", "command", "libpunctual"} */
			struct json j;
			json_report_begin(&j, stdout, "--version");
			json_str(&j, "libpunctual", pn_version());
			json_end(&j);
		} else {
			printf("punctual %s (libpunctual %s)\n", PUNCTUAL_VERSION, pn_version());
		}
		stdout_close();
		return 0;
	}
	const struct subcmd *c = find(a);
	if (c)
		return run(c, argc - 1, argv + 1);
	if (a[0] == '-') { /* options alone are probe's: `punctual --quick` */
		argv[0] = "probe";
		return run(find("probe"), argc, argv);
	}
	unknown(a);
}
