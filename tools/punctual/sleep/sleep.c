/* SPDX-License-Identifier: MIT */
/*
 * `punctual sleep`, the sleep-accuracy matrix: every sleep mechanism at a ladder of intervals,
 * once per timer slack value, side by side (the JDK ThreadSleep table's two halves; FreeBSD's
 * testsleep table), and `--periodic`, cyclictest's loop that also counts the periods it
 * missed. This file parses the options, sets up the scheduling and runs the matrix
 * (measure/matrix.c measures it, sleep/render.c renders it); sleep/periodic.c runs and
 * renders --periodic.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "util/host.h"
#include "commands.h"
#include "measure/matrix.h"
#include "measure/sleeps.h"
#include "sleep/periodic.h"
#include "sleep/render.h"

#define MAX_INTERVALS 32
#define MAX_SLACKS    8
#define MAX_INTERVAL  (10 * 1000000000LL)

static const char usage[] =
        "usage: punctual sleep [OPTIONS]\n"
        "       punctual sleep --periodic [--interval D] [--duration D] [--explain[=D]]\n"
        "                      [--smp | --threads N | --affinity LIST | --cpu N]\n"
        "                      [--fifo PRIO] [--slice D] [--mlock] [--histogram FILE]\n"
        "                      [--stop-above D]\n"
        "\n"
        "How late every sleep mechanism wakes: for each interval and timer slack value,\n"
        "the actual duration and the overshoot past the deadline (median, p99, max) and\n"
        "the count of early returns, which must be 0.\n"
        "\n"
        "  -j, --json            JSON, with every cell's histograms\n"
        "      --csv             one CSV row per cell\n"
        "  -d, --duration D      time budget, kept (default 20s)\n"
        "  -i, --interval LIST   intervals, e.g. 0,1us,10us,1ms\n"
        "  -l, --ladder NAME     default (0 1us 10us 100us 1ms 10ms 100ms),\n"
        "                        jdk (0, 1ns .. 1s by 10x: JMH ThreadSleep),\n"
        "                        freebsd (1 300 3000 30000 300000 us: testsleep)\n"
        "  -s, --slack LIST      timer slack values, e.g. 50us,1ns (default: the current\n"
        "                        value and 1ns); 'current' names the current value\n"
        "  -m, --mech LIST       mechanisms to measure (default: all; see --list);\n"
        "                        precise:PRECISION is pn_sleep_until, e.g. precise:1us;\n"
        "                        precise-poll:P and precise-epoll:P pn_poll_until and\n"
        "                        pn_epoll_wait_until\n"
        "      --list            list the mechanisms and exit\n"
        "  -n, --samples N       at most N samples per cell (default 1000)\n"
        "  -c, --cpu N           pin to CPU N\n"
        "  -f, --fifo PRIO       run as SCHED_FIFO at PRIO (1-99; root). The kernel\n"
        "                        ignores timer slack for realtime threads.\n"
        "      --slice D         every measuring thread asks for an EEVDF slice of D\n"
        "                        (100us-100ms; Linux 6.12+), pn_sleep_until's included;\n"
        "                        default: the kernel's own, for every mechanism\n"
        "      --dma-latency D   hold /dev/cpu_dma_latency at D (whole us) while\n"
        "                        measuring (keeps CPUs out of deep idle states; released\n"
        "                        when punctual exits); 'off': not held. --periodic holds\n"
        "                        0 by default where permitted (root), as cyclictest does\n"
        "      --periodic        cyclictest's loop: absolute deadlines, next += interval,\n"
        "                        counting missed periods; default interval 1ms,\n"
        "                        duration 5s (0: until Ctrl-C or SIGTERM, which print\n"
        "                        the figures so far and exit 0, as cyclictest)\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help            this text\n"
        "\n"
        "With --periodic:\n"
        "      --explain[=D]     name the cause of every wakeup later than D (default 2x\n"
        "                        the run's median): throttled (a cgroup's CFS quota),\n"
        "                        preempted, migrated, irq, stolen, slack or wakeup; a\n"
        "                        table, and \"causes\" in --json\n"
        "      --smp             one thread per CPU this process may use, each pinned\n"
        "                        (cyclictest -S)\n"
        "      --threads N       N measuring threads (pinned round robin with --affinity)\n"
        "      --affinity LIST   pin the threads to these CPUs, e.g. 0-3,8; one thread\n"
        "                        per CPU unless --threads\n"
        "      --priority PRIO   SCHED_FIFO at PRIO for every thread (as --fifo;\n"
        "                        cyclictest -p)\n"
        "      --mlock           lock memory (mlockall, cyclictest -m)\n"
        "      --histogram FILE  write each thread's 1 us histogram to FILE in\n"
        "                        cyclictest -h's format (also in --json)\n"
        "      --histogram-max D rows of that histogram, one a us (default 1ms: 1000)\n"
        "      --stop-above D    stop at the first wakeup later than D, print it with its\n"
        "                        cause and exit 3\n";

/* --dma-latency not given (--periodic holds 0 where permitted, as cyclictest; the matrix
 * nothing), and "off". */
#define DMA_DEFAULT (-2)
#define DMA_OFF     (-3)

struct opts {
	bool json, csv, periodic, list;
	struct periodic_opts p; /* the --periodic options */
	int64_t duration;
	int64_t intervals[MAX_INTERVALS];
	int nintervals;
	int64_t slacks[MAX_SLACKS];
	int nslacks;
	const struct sleep_mech *mechs[64];
	int nmechs;
	long samples;
	long cpu;
	long fifo;
	int64_t slice_ns; /* --slice; 0: the kernel's own */
	long dma_latency; /* -1: leave /dev/cpu_dma_latency alone; DMA_DEFAULT: --periodic's */
};

/* ---- option parsing ------------------------------------------------------------------ */

static int split(char *s, char **parts, int max, const char *opt)
{
	int n = 0;
	for (char *save, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			usage_error("%s: at most %d values", opt, max);
		parts[n++] = t;
	}
	if (n == 0)
		usage_error("%s: an empty list", opt);
	return n;
}

static void parse_intervals(struct opts *o, char *arg)
{
	char *parts[MAX_INTERVALS];
	int n = split(arg, parts, MAX_INTERVALS, "--interval");
	for (int i = 0; i < n; i++) {
		o->intervals[i] = opt_duration("--interval", parts[i]);
		if (o->intervals[i] > MAX_INTERVAL)
			usage_error("--interval: %s is over 10s", parts[i]);
	}
	o->nintervals = n;
}

static void parse_ladder(struct opts *o, const char *name)
{
	static const int64_t def[] = {0, 1000, 10000, 100000, 1000000, 10000000, 100000000};
	static const int64_t jdk[] = {0,      1,       10,       100,       1000,      10000,
	                              100000, 1000000, 10000000, 100000000, 1000000000};
	static const int64_t bsd[] = {1000, 300000, 3000000, 30000000, 300000000};
	const int64_t *l;
	int n;
	if (strcmp(name, "default") == 0)
		l = def, n = sizeof(def) / sizeof(def[0]);
	else if (strcmp(name, "jdk") == 0)
		l = jdk, n = sizeof(jdk) / sizeof(jdk[0]);
	else if (strcmp(name, "freebsd") == 0)
		l = bsd, n = sizeof(bsd) / sizeof(bsd[0]);
	else
		usage_error("--ladder: unknown ladder '%s' (default, jdk, freebsd)", name);
	memcpy(o->intervals, l, (size_t)n * sizeof(l[0]));
	o->nintervals = n;
}

static void parse_slacks(struct opts *o, char *arg)
{
	char *parts[MAX_SLACKS];
	int n = split(arg, parts, MAX_SLACKS, "--slack");
	for (int i = 0; i < n; i++) {
		if (strcmp(parts[i], "current") == 0)
			o->slacks[i] = pn_slack_get();
		else if ((o->slacks[i] = opt_slack("--slack", parts[i])) == 0)
			usage_error("--slack: 0 would mean the default slack; give it in ns");
	}
	o->nslacks = n;
}

static void parse_mechs(struct opts *o, char *arg)
{
	char *parts[64];
	int n = split(arg, parts, 64, "--mech");
	for (int i = 0; i < n; i++) {
		static const struct {
			const char *prefix;
			enum precise_kind kind;
		} kinds[] = {{"precise:", PRECISE_SLEEP},
		             {"precise-poll:", PRECISE_POLL},
		             {"precise-epoll:", PRECISE_EPOLL}};
		size_t k = 0;
		while (k < 3 && strncmp(parts[i], kinds[k].prefix, strlen(kinds[k].prefix)) != 0)
			k++;
		if (k < 3) {
			const char *v = parts[i] + strlen(kinds[k].prefix);
			int64_t p = opt_duration("--mech precise", v);
			o->mechs[i] = sleep_mech_precise(kinds[k].kind, p, v);
			if (!o->mechs[i])
				usage_error("--mech: too many precise mechanisms");
			continue;
		}
		o->mechs[i] = sleep_mech_find(parts[i]);
		if (!o->mechs[i])
			usage_error("--mech: unknown mechanism '%s' (see --list)", parts[i]);
	}
	o->nmechs = n;
}

/* Long-only options (cyclictest's names where it has one). */
enum {
	OPT_EXPLAIN = 256,
	OPT_SMP,
	OPT_THREADS,
	OPT_AFFINITY,
	OPT_PRIORITY,
	OPT_MLOCK,
	OPT_HISTOGRAM,
	OPT_HISTOGRAM_MAX,
	OPT_STOP_ABOVE,
	OPT_SLICE,
};

/* A positive lateness threshold. */
static int64_t positive(const char *opt, const char *s)
{
	int64_t v = opt_duration(opt, s);
	if (v <= 0)
		usage_error("%s: '%s' must be positive", opt, s);
	return v;
}

/* --explain takes its threshold as --explain=D or as the next word when that is a
 * number ("--explain 500us"). */
static void parse_explain(int argc, char **argv, struct opts *o)
{
	o->p.explain = true;
	if (optarg) {
		o->p.explain_above = positive("--explain", optarg);
		return;
	}
	if (optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
		o->p.explain_above = positive("--explain", argv[optind++]);
}

/* Whether a --periodic-only option was given without --periodic, and which. */
static const char *periodic_only(const struct opts *o)
{
	const struct periodic_opts *p = &o->p;
	return p->explain            ? "--explain"
	       : p->smp              ? "--smp"
	       : p->threads          ? "--threads"
	       : p->affinity         ? "--affinity"
	       : p->mlock            ? "--mlock"
	       : p->histogram        ? "--histogram"
	       : p->histogram_max_us ? "--histogram-max"
	       : p->stop_above       ? "--stop-above"
	                             : NULL;
}

static void check_periodic(struct opts *o, bool have_duration)
{
	struct periodic_opts *p = &o->p;
	if (o->nintervals > 1)
		usage_error("--periodic takes one --interval");
	if (o->nslacks > 1)
		usage_error("--periodic takes one --slack value");
	if (o->csv || o->nmechs)
		usage_error("--periodic has no --csv or --mech");
	if (!o->nintervals)
		o->intervals[o->nintervals++] = 1000000;
	if (o->intervals[0] <= 0)
		usage_error("--interval: a period must be positive");
	if (!have_duration)
		o->duration = 5 * 1000000000LL;
	if (p->smp && (p->threads || p->affinity))
		usage_error("--smp excludes --threads and --affinity (it is one thread per CPU)");
	if (o->cpu >= 0 && (p->smp || p->affinity))
		usage_error("--cpu excludes --smp and --affinity");
	if (p->histogram_max_us && !p->histogram)
		usage_error("--histogram-max needs --histogram");
	if (!p->histogram_max_us)
		p->histogram_max_us = 1000;
	p->json = o->json;
	p->interval = o->intervals[0];
	p->duration = o->duration;
	p->have_slack = o->nslacks == 1;
	p->slack = o->slacks[0];
	p->fifo = o->fifo;
	p->slice_ns = o->slice_ns;
	p->cpu = o->cpu;
	p->dma_latency = o->dma_latency;
	sleep_periodic_check(p);
}

/* The getopt table: the matrix's options, then the --periodic ones. */
static const struct option long_opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'C'},
        {"duration", required_argument, NULL, 'd'},
        {"interval", required_argument, NULL, 'i'},
        {"ladder", required_argument, NULL, 'l'},
        {"slack", required_argument, NULL, 's'},
        {"mech", required_argument, NULL, 'm'},
        {"list", no_argument, NULL, 'L'},
        {"samples", required_argument, NULL, 'n'},
        {"cpu", required_argument, NULL, 'c'},
        {"fifo", required_argument, NULL, 'f'},
        {"dma-latency", required_argument, NULL, 'D'},
        {"slice", required_argument, NULL, OPT_SLICE},
        {"periodic", no_argument, NULL, 'p'},
        {"explain", optional_argument, NULL, OPT_EXPLAIN},
        {"smp", no_argument, NULL, OPT_SMP},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"affinity", required_argument, NULL, OPT_AFFINITY},
        {"priority", required_argument, NULL, OPT_PRIORITY},
        {"mlock", no_argument, NULL, OPT_MLOCK},
        {"histogram", required_argument, NULL, OPT_HISTOGRAM},
        {"histogram-max", required_argument, NULL, OPT_HISTOGRAM_MAX},
        {"stop-above", required_argument, NULL, OPT_STOP_ABOVE},
        {"help", no_argument, NULL, 'h'},
        {0},
};

/* Which options were given, for the checks that only make sense once all are read. */
struct seen {
	bool duration, ladder;
};

/* Applies one option of the matrix (and --periodic itself); false if c is not one. */
static bool parse_matrix_opt(int c, struct opts *o, struct seen *seen)
{
	switch (c) {
	case 'j':
		o->json = true;
		return true;
	case 'C':
		o->csv = true;
		return true;
	case 'd':
		o->duration = opt_duration("--duration", optarg);
		if ((o->duration && o->duration < 1000000) ||
		    o->duration > 24 * 3600 * 1000000000LL)
			usage_error(
			        "--duration: %s is out of range [1ms, 24h] (or 0 with --periodic: "
			        "until interrupted)",
			        optarg);
		seen->duration = true;
		return true;
	case 'i':
		parse_intervals(o, optarg);
		return true;
	case 'l':
		parse_ladder(o, optarg);
		seen->ladder = true;
		return true;
	case 's':
		parse_slacks(o, optarg);
		return true;
	case 'm':
		parse_mechs(o, optarg);
		return true;
	case 'L':
		o->list = true;
		return true;
	case 'n':
		o->samples = opt_long("--samples", optarg, 1, 100000000);
		return true;
	case 'c':
		o->cpu = opt_long("--cpu", optarg, 0, CPU_SETSIZE - 1);
		return true;
	case 'f':
		o->fifo = opt_long("--fifo", optarg, 1, 99);
		return true;
	case OPT_SLICE: {
		int r = pn__slice_parse(optarg, &o->slice_ns);
		if (r == -ERANGE)
			usage_error("--slice: %s is out of the kernel's range [100us, 100ms]",
			            optarg);
		if (r < 0 || o->slice_ns <= 0)
			usage_error("--slice: '%s' is not a duration with its unit", optarg);
		return true;
	}
	case 'p':
		o->periodic = true;
		return true;
	case 'D':
		o->dma_latency = strcmp(optarg, "off") == 0
		                         ? DMA_OFF
		                         : opt_us("--dma-latency", optarg, 0, 2000000000);
		return true;
	}
	return false;
}

/* Applies one long-only option of --periodic; anything else is ignored. */
static void parse_periodic_opt(int argc, char **argv, int c, struct opts *o)
{
	switch (c) {
	case OPT_EXPLAIN:
		parse_explain(argc, argv, o);
		break;
	case OPT_SMP:
		o->p.smp = true;
		break;
	case OPT_THREADS:
		o->p.threads = opt_long("--threads", optarg, 1, 4096);
		break;
	case OPT_AFFINITY:
		if (!*optarg)
			usage_error("--affinity: an empty CPU list");
		o->p.affinity = optarg;
		break;
	case OPT_PRIORITY:
		o->fifo = opt_long("--priority", optarg, 1, 99);
		break;
	case OPT_MLOCK:
		o->p.mlock = true;
		break;
	case OPT_HISTOGRAM:
		if (!*optarg)
			usage_error("--histogram needs a file name");
		o->p.histogram = optarg;
		break;
	case OPT_HISTOGRAM_MAX:
		o->p.histogram_max_us = (int)opt_us("--histogram-max", optarg, 1, 1000000);
		break;
	case OPT_STOP_ABOVE:
		o->p.stop_above = positive("--stop-above", optarg);
		break;
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	struct seen seen = {0};
	int c;
	while ((c = next_opt(argc, argv, ":jd:i:l:s:m:n:c:f:h", long_opts, usage)) != -1)
		if (!parse_matrix_opt(c, o, &seen))
			parse_periodic_opt(argc, argv, c, o);
	no_more_args(argc, argv);
	if (o->json && o->csv)
		usage_error("--json and --csv exclude each other");
	if (o->slice_ns && o->fifo)
		usage_error("--slice excludes --fifo (a SCHED_FIFO thread has no EEVDF slice)");
	if (o->periodic) {
		if (seen.ladder)
			usage_error("--periodic takes one --interval");
		check_periodic(o, seen.duration);
	} else if (periodic_only(o)) {
		usage_error("%s needs --periodic", periodic_only(o));
	} else if (seen.duration && !o->duration) {
		usage_error("--duration 0 (until interrupted) needs --periodic");
	}
}

/* ---- the command --------------------------------------------------------------------- */

static void setup_sched(struct opts *o)
{
	if (o->dma_latency == DMA_OFF) {
		o->dma_latency = -1;
		o->p.dma_note = "off";
	}
	bool soft = o->dma_latency == DMA_DEFAULT; /* --periodic's default: where permitted */
	if (soft)
		o->dma_latency = o->periodic ? 0 : -1;
	if (o->dma_latency >= 0) {
		/* The request lasts while the file stays open: the kernel drops it when
		 * punctual exits, however it exits, so nothing is left changed. */
		int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
		int32_t v = (int32_t)o->dma_latency;
		if (fd < 0 || write(fd, &v, sizeof(v)) != sizeof(v)) {
			int e = errno;
			if (!soft)
				die(EXIT_USAGE, "--dma-latency: /dev/cpu_dma_latency: %s%s",
				    strerror(e), e == EACCES || e == EPERM ? " (needs root)" : "");
			if (fd >= 0)
				close(fd);
			o->dma_latency = -1;
			o->p.dma_note = e == EACCES || e == EPERM ? "not permitted (needs root)"
			                                          : "not available";
		} /* else held open until the process ends */
	}
	o->p.dma_latency = o->dma_latency;
	if (o->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			die(EXIT_USAGE, "--cpu %ld: %s", o->cpu, strerror(errno));
	}
	if (o->slice_ns) {
		int r = pn_sleep_set_slice(o->slice_ns);
		if (r < 0)
			die(EXIT_USAGE, "--slice: %s%s", pn_strerror(r),
			    r == -EOPNOTSUPP
			            ? " (this kernel keeps its own slice: Linux 6.12+ takes one)"
			            : "");
	}
	if (o->fifo) {
		struct sched_param sp = {.sched_priority = (int)o->fifo};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
			die(EXIT_USAGE, "--fifo %ld: %s%s", o->fifo, strerror(errno),
			    errno == EPERM ? " (needs root or CAP_SYS_NICE)" : "");
	}
}

int cmd_sleep(int argc, char **argv)
{
	tool_cmd = "sleep";
	struct opts o = {.duration = 20 * 1000000000LL,
	                 .samples = 1000,
	                 .cpu = -1,
	                 .dma_latency = DMA_DEFAULT};
	parse(argc, argv, &o);
	if (o.list) {
		for (int m = 0; m < sleep_mechs_count(); m++)
			printf("%-21s %s\n", sleep_mech(m)->id, sleep_mech(m)->desc);
		printf("%-21s %s\n", "precise:PRECISION",
		       "pn_sleep_until with that precision (libpunctual); default rows: 1us, 50us");
		printf("%-21s %s\n", "precise-poll:P", "pn_poll_until, no fds; default row: 1us");
		printf("%-21s %s\n", "precise-epoll:P",
		       "pn_epoll_wait_until, empty set; default row: 1us");
		return 0;
	}
	setup_sched(&o);
	/* a SIGINT or SIGTERM ends the run at the sample in progress: the cells so far */
	stop_on_signals();
	if (o.periodic)
		return sleep_periodic(&o.p);

	if (!o.nintervals)
		parse_ladder(&o, "default");
	if (!o.nslacks) {
		o.slacks[o.nslacks++] = pn_slack_get();
		if (o.slacks[0] != 1)
			o.slacks[o.nslacks++] = 1;
	}
	if (!o.nmechs) {
		for (int m = 0; m < sleep_mechs_count(); m++)
			o.mechs[o.nmechs++] = sleep_mech(m);
		o.mechs[o.nmechs++] = sleep_mech_precise(PRECISE_SLEEP, 1000, "1us");
		o.mechs[o.nmechs++] = sleep_mech_precise(PRECISE_SLEEP, 50000, "50us");
		o.mechs[o.nmechs++] = sleep_mech_precise(PRECISE_POLL, 1000, "1us");
		o.mechs[o.nmechs++] = sleep_mech_precise(PRECISE_EPOLL, 1000, "1us");
	}

	struct sleep_matrix x = {.intervals = o.intervals,
	                         .nintervals = o.nintervals,
	                         .slacks = o.slacks,
	                         .nslacks = o.nslacks,
	                         .m = o.mechs,
	                         .nm = o.nmechs,
	                         .samples = o.samples,
	                         .duration = o.duration};
	int r = sleep_matrix_run(&x);
	stop_on_signals_end();
	if (r == -ENOMEM)
		die(1, "out of memory");
	if (r < 0)
		die(1, "%s failed: %s", x.failed ? x.failed->id : "a mechanism", pn_strerror(r));
	struct host host;
	if (o.json)
		host_read(&host);
	out_open();
	struct matrix_sched sched = {
	        .fifo = o.fifo, .slice_ns = o.slice_ns, .cpu = o.cpu, .dma_latency = o.dma_latency};
	if (o.json)
		matrix_json(&x, &sched, &host);
	else if (o.csv)
		matrix_csv(&x);
	else
		matrix_text(&x, &sched);
	out_commit();
	char why[128];
	if (o.csv && tool_stop) /* the CSV rows have no place for it */
		fprintf(stderr, "punctual sleep: %s\n",
		        matrix_interrupted(why, sizeof(why), x.elapsed));
	uint64_t early = sleep_matrix_early(&x);
	if (early)
		fprintf(stderr, "punctual sleep: WARNING: %llu early returns\n",
		        (unsigned long long)early);
	sleep_matrix_free(&x);
	return 0;
}
