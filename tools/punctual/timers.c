/* SPDX-License-Identifier: MIT */
/*
 * `punctual timers`, the timer wheel's coalescing in real time: the options describe the
 * workload (N timers, delays from a distribution, a precision, one-shot or periodic). The
 * report gives the wakeups taken against the offline optimum for the windows realized,
 * what no coalescing would cost, lateness, windows overshot, and early fires (must be 0).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/hist.h>
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "commands.h"
#include "util/json.h"
#include "measure/timers.h"
#include "render/figures.h"

#define MAX_COUNT 1000000
#define MAX_DELAY (3600 * 1000000000LL)

static const char usage[] =
        "usage: punctual timers [OPTIONS]\n"
        "\n"
        "Runs N timers on a pn_wheel in real time and reports its wakeups against the\n"
        "offline optimum for the same windows, timers per wakeup, lateness and early\n"
        "fires (must be 0).\n"
        "\n"
        "      --count N        timers (default 1000; at most 1000000)\n"
        "  -D, --delay DIST     delays (periods with --periodic):\n"
        "                         uniform:MIN-MAX  e.g. uniform:1ms-100ms (the default)\n"
        "                         bimodal[:A,B]    half near A, half near B (each +-50%;\n"
        "                                          default 1ms,100ms)\n"
        "                         fixed:D          all equal\n"
        "                       every delay at most 1h (bimodal: A and B up to 2400s)\n"
        "      --precision P    each timer's window: a duration (100us) or\n"
        "                       a percentage of its delay (10%, the default)\n"
        "      --periodic       periodic timers at random phases, for --duration\n"
        "  -d, --duration D     run time (periodic: default 2s; one-shot: a limit,\n"
        "                       default 60s)\n"
        "      --seed N         random seed (default 1)\n"
        "  -j, --json           JSON\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help           this text\n";

struct opts {
	struct timers_config c;
	char dist_text[128];
	bool json, have_duration;
};

/* ---- options --------------------------------------------------------------------------- */

/* The two durations of --delay's "KIND:A<sep>B" (arg, whole; buf, a copy after the
 * colon) into *a and *b; form names the syntax in the error. */
static void parse_two(const char *arg, char *buf, char sep, const char *form, int64_t *a,
                      int64_t *b)
{
	char *mid = strchr(buf, sep);
	if (!mid)
		usage_error("--delay: '%s' is not %s", arg, form);
	*mid = '\0';
	*a = opt_duration("--delay", buf);
	*b = opt_duration("--delay", mid + 1);
}

static void parse_delay(struct opts *o, const char *s)
{
	snprintf(o->dist_text, sizeof(o->dist_text), "%s", s);
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	if (strncmp(buf, "uniform:", 8) == 0) {
		o->c.dist = TIMERS_UNIFORM;
		parse_two(s, buf + 8, '-', "uniform:MIN-MAX", &o->c.a, &o->c.b);
		if (o->c.a > o->c.b)
			usage_error("--delay: MIN is above MAX in '%s'", s);
	} else if (strcmp(buf, "bimodal") == 0) {
		o->c.dist = TIMERS_BIMODAL;
		o->c.a = 1000000;
		o->c.b = 100000000;
	} else if (strncmp(buf, "bimodal:", 8) == 0) {
		o->c.dist = TIMERS_BIMODAL;
		parse_two(s, buf + 8, ',', "bimodal:A,B", &o->c.a, &o->c.b);
	} else if (strncmp(buf, "fixed:", 6) == 0) {
		o->c.dist = TIMERS_FIXED;
		o->c.a = o->c.b = opt_duration("--delay", buf + 6);
	} else {
		usage_error("--delay: unknown distribution '%s' (uniform:MIN-MAX, bimodal, "
		            "fixed:D)",
		            s);
	}
	/* Every delay drawn is at most 1 h: bimodal's reach +50% past their mode. */
	if (o->c.dist == TIMERS_BIMODAL) {
		int64_t m = o->c.a > o->c.b ? o->c.a : o->c.b;
		if (m > MAX_DELAY / 3 * 2)
			usage_error("--delay: '%s' goes beyond 1h (a mode's delays reach +50%%: "
			            "A and B at most 2400s)",
			            s);
	} else if (o->c.b > MAX_DELAY) {
		usage_error("--delay: '%s' goes beyond 1h", s);
	}
}

static void parse_precision(struct opts *o, const char *s)
{
	size_t n = strlen(s);
	if (n > 1 && s[n - 1] == '%') {
		char *end;
		errno = 0;
		double p = strtod(s, &end);
		if (errno || end != s + n - 1 || !(p >= 0 && p <= 1000))
			usage_error("--precision: '%s' is not a percentage in [0, 1000]%%", s);
		o->c.percent = p;
		return;
	}
	o->c.percent = -1;
	o->c.precision = opt_duration("--precision", s);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	        {"count", required_argument, NULL, 'n'},
	        {"delay", required_argument, NULL, 'D'},
	        {"precision", required_argument, NULL, 'P'},
	        {"periodic", no_argument, NULL, 'p'},
	        {"duration", required_argument, NULL, 'd'},
	        {"seed", required_argument, NULL, 's'},
	        {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	int c;
	while ((c = next_opt(argc, argv, ":D:d:jh", lo, usage)) != -1) {
		switch (c) {
		case 'n':
			o->c.count = opt_long("--count", optarg, 1, MAX_COUNT);
			break;
		case 'D':
			parse_delay(o, optarg);
			break;
		case 'P':
			parse_precision(o, optarg);
			break;
		case 'p':
			o->c.periodic = true;
			break;
		case 'd':
			o->c.duration = opt_duration("--duration", optarg);
			if (o->c.duration < 1000000 || o->c.duration > 24 * 3600 * 1000000000LL)
				usage_error("--duration: %s is out of range [1ms, 24h]", optarg);
			o->have_duration = true;
			break;
		case 's':
			o->c.seed = (uint64_t)opt_long("--seed", optarg, 0, 2147483647);
			break;
		case 'j':
			o->json = true;
			break;
		}
	}
	no_more_args(argc, argv);
	if (o->c.periodic && o->c.a == 0)
		usage_error("--periodic: a period must be positive (the delay's minimum is 0)");
	if (!o->have_duration)
		o->c.duration = (o->c.periodic ? 2 : 60) * 1000000000LL;
}

/* ---- rendering ------------------------------------------------------------------------- */

static void render_text(const struct opts *o, const struct timers_result *r)
{
	char b1[32], b2[32], b3[32], b4[32];
	fprintf(out, "timers: %ld %s, delay %s, precision ", o->c.count,
	        o->c.periodic ? "periodic" : "one-shot", o->dist_text);
	if (o->c.percent >= 0)
		fprintf(out, "%g%% of the delay\n", o->c.percent);
	else
		fprintf(out, "%s\n", fmt_ns(b1, sizeof(b1), (double)o->c.precision));
	fprintf(out, "elapsed              %s\n", fmt_ns(b1, sizeof(b1), (double)r->elapsed));
	fprintf(out, "fired                %llu\n", (unsigned long long)r->fired);
	if (r->unfired)
		fprintf(out, "unfired              %ld (the --duration limit came first)\n",
		        r->unfired);
	if (r->truncated)
		fprintf(out, "stopped early        after %d firings (the most it keeps)\n",
		        TIMERS_MAX_WINDOWS);
	fprintf(out, "wakeups              %llu\n", (unsigned long long)r->wakeups);
	fprintf(out, "offline optimum      %llu (wakeups / optimum %.3f)\n",
	        (unsigned long long)r->optimum,
	        r->optimum ? (double)r->wakeups / (double)r->optimum : 0.0);
	fprintf(out, "without coalescing   %llu\n", (unsigned long long)r->uncoalesced);
	fprintf(out, "timers per wakeup    %.2f\n",
	        r->wakeups ? (double)r->fired / (double)r->wakeups : 0.0);
	if (o->c.periodic)
		fprintf(out, "missed periods       %llu\n", (unsigned long long)r->missed);
	if (!r->fired)
		fprintf(out, "lateness             none (no timer fired)\n");
	else
		fprintf(out, "lateness             p50 %s  p99 %s  p99.9 %s  max %s\n",
		        fmt_ns(b1, sizeof(b1), (double)pn_hist_percentile(&r->late, 50)),
		        fmt_ns(b2, sizeof(b2), (double)pn_hist_percentile(&r->late, 99)),
		        fmt_ns(b3, sizeof(b3), (double)pn_hist_percentile(&r->late, 99.9)),
		        fmt_ns(b4, sizeof(b4), (double)pn_hist_max(&r->late)));
	fprintf(out, "past their window    %llu\n", (unsigned long long)r->past_window);
	fprintf(out, "early fires: %llu\n", (unsigned long long)r->early);
	if (tool_stop)
		fprintf(out, "interrupted by %s after %.1f s: the figures measured until then\n",
		        tool_stop == SIGINT ? "SIGINT" : "SIGTERM", (double)r->elapsed / 1e9);
}

static void render_json(const struct opts *o, const struct timers_result *r)
{
	struct json j;
	json_report_begin(&j, out, "timers");
	timers_json(&j, &o->c, r, tool_stop != 0); /* the firings until a signal */
	json_end(&j);
}

int cmd_timers(int argc, char **argv)
{
	tool_cmd = "timers";
	struct opts o = {.c = {.count = 1000,
	                       .dist = TIMERS_UNIFORM,
	                       .a = 1000000,
	                       .b = 100000000,
	                       .percent = 10,
	                       .seed = 1},
	                 .dist_text = "uniform:1ms-100ms"};
	parse(argc, argv, &o);
	static struct timers_result r; /* the histogram is large */
	stop_on_signals();             /* a SIGINT or SIGTERM ends the run at its next wakeup */
	o.c.stop = &tool_stop;
	int e = timers_run(&o.c, &r);
	stop_on_signals_end();
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(1, "the timer wheel failed: %s", pn_strerror(e));
	out_open();
	if (o.json)
		render_json(&o, &r);
	else
		render_text(&o, &r);
	out_commit();
	if (r.early)
		fprintf(stderr, "punctual timers: WARNING: %llu early fires\n",
		        (unsigned long long)r.early);
	return 0;
}
