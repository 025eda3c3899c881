/* SPDX-License-Identifier: MIT */
/*
 * main.c: the punctual command: the subcommand table and the top-level options.
 */
#include <stdio.h>
#include <string.h>

#include <punctual/version.h>
#include "tool.h"

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
};

#define N_SUBCMDS (sizeof(subcmds) / sizeof(subcmds[0]))

static void help(FILE *f)
{
	fprintf(f, "usage: punctual [--help | --version] COMMAND [OPTIONS]\n\n"
	           "Measure and control time on Linux.\n\ncommands:\n");
	for (size_t i = 0; i < N_SUBCMDS; i++)
		fprintf(f, "  %-10s %s\n", subcmds[i].name, subcmds[i].summary);
	fprintf(f, "\nWith no command, punctual runs 'punctual probe'.\n"
	           "'punctual COMMAND --help' describes a command; man punctual has them all.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		int st = cmd_probe(1, (char *[]){"probe", NULL});
		stdout_close();
		return st;
	}
	const char *a = argv[1];
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0) {
		help(stdout);
		stdout_close();
		return 0;
	}
	if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
		printf("punctual %s (libpunctual %s)\n", PUNCTUAL_VERSION, pn_version());
		stdout_close();
		return 0;
	}
	for (size_t i = 0; i < N_SUBCMDS; i++)
		if (strcmp(a, subcmds[i].name) == 0) {
			int st = subcmds[i].run(argc - 1, argv + 1);
			stdout_close();
			return st;
		}
	if (a[0] == '-')
		usage_error("unknown option '%s'", a);
	usage_error("unknown command '%s'", a);
}
