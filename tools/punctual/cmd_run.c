/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c: `punctual run`: runs a command with timing settings it inherits, the way
 * nice(1) and taskset(1) do for priority and affinity. Each setting is parsed into
 * struct run_settings, checked, then applied by its own function just before exec, which
 * replaces this process: the command's exit status is the status, and a setting that
 * survives exec (timer slack does) is in force from the command's first instruction.
 *
 * A new setting adds a member, a case in the option loop, a check in run_check() and a
 * step in run_apply().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "tool.h"

/* env(1)'s statuses when the command cannot be run. */
enum { EXIT_CANNOT_INVOKE = 126, EXIT_NOT_FOUND = 127 };

static const char usage[] =
        "usage: punctual run --slack VALUE [--] CMD [ARGS...]\n"
        "\n"
        "Runs CMD with the given settings, which it and its threads and children inherit.\n"
        "The exit status is CMD's; 127 if CMD is not found, 126 if it cannot be run.\n"
        "Options end at CMD: what follows it is CMD's.\n"
        "\n"
        "  -s, --slack VALUE  timer slack for CMD (required): a duration (1, 1ns, 50us,\n"
        "                     1ms; a bare number is ns); 0 or 'default' is the default\n"
        "                     this process inherited\n"
        "  -h, --help         this text\n";

struct run_settings {
	bool slack;
	int64_t slack_ns;
};

static void run_check(const struct run_settings *s)
{
	if (!s->slack)
		usage_error("--slack VALUE is required");
}

static void run_apply(const struct run_settings *s)
{
	if (s->slack) {
		int r = pn_slack_set(s->slack_ns);
		if (r < 0)
			die(EXIT_USAGE, "--slack: %lld ns: %s", (long long)s->slack_ns,
			    pn_strerror(r));
	}
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"slack", required_argument, NULL, 's'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	struct run_settings set = {0};
	tool_cmd = "run";
	int c;
	/* "+": stop at CMD, so that its own options stay its own. */
	while ((c = next_opt(argc, argv, "+:s:h", opts, usage)) != -1) {
		switch (c) {
		case 's':
			set.slack = true;
			set.slack_ns = opt_slack("--slack", optarg);
			break;
		}
	}
	run_check(&set);
	if (optind >= argc)
		usage_error("missing the command to run");

	run_apply(&set);
	char **cmd = argv + optind;
	execvp(cmd[0], cmd);
	int e = errno;
	die(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE, "%s: %s", cmd[0], strerror(e));
}
