/* SPDX-License-Identifier: MIT */
/*
 * `punctual why PID`: the late wakeups of a program already running, explained without
 * restarting it and without the shim. Checks what tracing needs (an eBPF build, the
 * kernel's BTF, the privileges), traces the target (trace.c) and prints the report.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract.h"
#include "commands.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "why/report.h"
#include "why/watch.h"

static const char usage[] =
        "usage: punctual why PID [--for DURATION] [--above DURATION] [--json]\n"
        "       punctual why --all [--for DURATION] [--above DURATION] [--json]\n"
        "\n"
        "Why a running program's timed waits end late, without restarting it: every\n"
        "thread of PID is traced through eBPF (its nanosleep, clock_nanosleep, futex,\n"
        "poll, epoll and select timeouts) for DURATION, until it ends or until Ctrl-C.\n"
        "Each wait that its timer ended gets the deadline asked for, when the timer\n"
        "fired, when the thread was woken and when it ran, and one cause: throttled,\n"
        "preempted (with what held the CPU), migrated, irq, stolen, slack or wakeup, by\n"
        "the rule of 'run --stats --explain'. With --all, the host's programs ranked by\n"
        "their late waits, each with its main cause.\n"
        "\n"
        "  -a, --all             every process of the host\n"
        "      --for DURATION    trace this long (default: until PID ends or Ctrl-C;\n"
        "                        10s with --all)\n"
        "      --above DURATION  late means later than this past the deadline (default\n"
        "                        0 for a PID, 100us for --all)\n"
        "  -j, --json            print JSON instead of text (times in ns)\n"
        "  -h, --help            this text\n"
        "Needs root, or CAP_BPF and CAP_PERFMON, and a kernel with BTF\n"
        "(/sys/kernel/btf/vmlinux).\n";

/* Exits with one line where tracing cannot work here. */
static void check_can_trace(void)
{
	const char *why;
	int r = why_can_trace(&why);
	if (r < 0)
		die(r == -EPERM ? EXIT_USAGE : 1, "%s", why);
}

#ifdef PN_HAVE_BPF
static void trace(struct why_report *rep, int64_t duration, const struct causes_cgroup *cg)
{
	struct why_target target = {.pid = rep->pid, .duration = duration, .cg = cg};
	struct why_run run;
	const char *step = "";
	stop_on_signals();
	int r = why_trace(&target, why_report_add, rep, &run, &step);
	stop_on_signals_end();
	if (r == -EPERM || r == -EACCES)
		die(EXIT_USAGE,
		    "the kernel refused the eBPF programs (%s: %s): tracing needs root, or "
		    "CAP_BPF and CAP_PERFMON",
		    step, strerror(-r));
	if (r < 0)
		die(1, "eBPF tracing failed at %s: %s", step, strerror(-r));
	rep->elapsed = run.elapsed;
	rep->exited = run.exited;
	rep->interrupted = tool_stop;
}
#else
static void trace(struct why_report *rep, int64_t duration, const struct causes_cgroup *cg)
{
	(void)rep, (void)duration, (void)cg;
}
#endif

int cmd_why(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"all", no_argument, NULL, 'a'},         {"for", required_argument, NULL, 'F'},
	        {"above", required_argument, NULL, 'B'}, {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},        {0},
	};
	bool json = false, all = false;
	int64_t duration = 0, above = -1;
	tool_cmd = "why";
	int c;
	while ((c = next_opt(argc, argv, ":ajh", opts, usage)) != -1) {
		if (c == 'a')
			all = true;
		else if (c == 'F')
			duration = opt_duration("--for", optarg);
		else if (c == 'B')
			above = opt_duration("--above", optarg);
		else if (c == 'j')
			json = true;
	}
	long pid = 0;
	if (!all && optind >= argc)
		usage_error("which process? 'punctual why PID', or --all for every one");
	if (!all)
		pid = opt_long("PID", argv[optind++], 1, INT_MAX);
	no_more_args(argc, argv);
	if (duration <= 0 && all)
		duration = 10 * (int64_t)1000000000;
	char dir[64];
	struct stat st;
	snprintf(dir, sizeof(dir), "/proc/%ld", pid);
	if (pid && stat(dir, &st) != 0) /* bad input first, whatever this build can trace */
		die(EXIT_USAGE, "no process %ld", pid);
	check_can_trace();
	static struct why_report rep;
	static struct causes_cgroup cg;
	rep.pid = pid;
	rep.above = above >= 0 ? above : all ? WHY_ALL_ABOVE : 0;
	if (pid) {
		why_report_name(pid, rep.comm, sizeof(rep.comm));
		causes_cgroup_init_of(&cg, pid);
	}
	rep.cg = &cg;
	trace(&rep, duration, pid ? &cg : NULL);
	why_report_names(&rep);
	why_report_sort(&rep);
	out_open();
	if (json)
		why_render_json(&rep);
	else
		why_render_text(&rep);
	out_commit();
	why_report_free(&rep);
	return 0;
}
