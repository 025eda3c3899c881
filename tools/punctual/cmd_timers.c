/* SPDX-License-Identifier: MIT */
/*
 * cmd_timers.c: `punctual timers`, the timer wheel's coalescing in real time: N timers
 * with delays from a distribution and a precision (absolute or a percentage of the
 * delay), one-shot or periodic at random phases, run by a pn_wheel loop that sleeps with
 * pn_sleep_until over each coalesced window. It reports the wakeups it took against the
 * offline optimum for the windows that were actually realized (sort by right end, wake
 * at the smallest, take every window already open: the fewest wakeups possible), timers
 * per wakeup, what no coalescing would cost (one wakeup per firing), lateness
 * percentiles, windows overshot, and early fires, which must be 0.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/clock.h>
#include <punctual/hist.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "measure/windows.h"
#include "splitmix.h"
#include "tool.h"

#define MAX_COUNT 1000000
#define MAX_DELAY (3600 * 1000000000LL)
/* Firings whose windows are kept for the optimum (16 bytes each): past it the run stops. */
#define MAX_WINDOWS (1 << 24)

static const char usage[] =
        "usage: punctual timers [OPTIONS]\n"
        "\n"
        "Runs N timers on a pn_wheel in real time and reports its wakeups against the offline\n"
        "optimum for the same windows, timers per wakeup, lateness and early fires (must be 0).\n"
        "\n"
        "  -n, --count N        timers (default 1000; at most 1000000)\n"
        "  -D, --delay DIST     delays (periods with --periodic):\n"
        "                         uniform:MIN-MAX  e.g. uniform:1ms-100ms (the default)\n"
        "                         bimodal[:A,B]    half near A, half near B (each +-50%;\n"
        "                                          default 1ms,100ms)\n"
        "                         fixed:D          all equal\n"
        "                       every delay at most 1h (bimodal: A and B up to 2400s)\n"
        "  -P, --precision P    each timer's window: a duration (100us; bare number: ns) or\n"
        "                       a percentage of its delay (10%, the default)\n"
        "  -p, --periodic       periodic timers at random phases, for --duration\n"
        "  -d, --duration D     run time (periodic: default 2s; one-shot: a limit, default\n"
        "                       60s; bare number: seconds)\n"
        "  -s, --seed N         random seed (default 1)\n"
        "  -j, --json           JSON\n"
        "  -h, --help           this text\n";

enum dist { UNIFORM, BIMODAL, FIXED };

struct opts {
	long count;
	enum dist dist;
	int64_t a, b; /* uniform: min, max; bimodal: the two modes; fixed: a */
	char dist_text[128];
	double percent; /* < 0: absolute precision */
	int64_t precision;
	bool periodic, json;
	int64_t duration;
	bool have_duration;
	unsigned long seed;
};

struct job {
	struct pn_timer t;
	int64_t deadline; /* the one it is armed for (the wheel re-arms periodic ones) */
};

struct run {
	struct opts *o;
	struct job *jobs;
	struct window *win;
	size_t nwin, capwin;
	int64_t now; /* of the expiry in progress */
	uint64_t fired, early, past_window, missed, wakeups;
	struct pn_hist late;
	int64_t elapsed;
	long unfired;
	bool truncated; /* stopped at MAX_WINDOWS firings */
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
	*a = opt_duration("--delay", buf, 1);
	*b = opt_duration("--delay", mid + 1, 1);
}

static void parse_delay(struct opts *o, const char *s)
{
	snprintf(o->dist_text, sizeof(o->dist_text), "%s", s);
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	if (strncmp(buf, "uniform:", 8) == 0) {
		o->dist = UNIFORM;
		parse_two(s, buf + 8, '-', "uniform:MIN-MAX", &o->a, &o->b);
		if (o->a > o->b)
			usage_error("--delay: MIN is above MAX in '%s'", s);
	} else if (strcmp(buf, "bimodal") == 0) {
		o->dist = BIMODAL;
		o->a = 1000000;
		o->b = 100000000;
	} else if (strncmp(buf, "bimodal:", 8) == 0) {
		o->dist = BIMODAL;
		parse_two(s, buf + 8, ',', "bimodal:A,B", &o->a, &o->b);
	} else if (strncmp(buf, "fixed:", 6) == 0) {
		o->dist = FIXED;
		o->a = o->b = opt_duration("--delay", buf + 6, 1);
	} else {
		usage_error("--delay: unknown distribution '%s' (uniform:MIN-MAX, bimodal, "
		            "fixed:D)",
		            s);
	}
	/* Every delay drawn is at most 1 h: bimodal's reach +50% past their mode. */
	if (o->dist == BIMODAL) {
		int64_t m = o->a > o->b ? o->a : o->b;
		if (m > MAX_DELAY / 3 * 2)
			usage_error("--delay: '%s' goes beyond 1h (a mode's delays reach +50%%: "
			            "A and B at most 2400s)",
			            s);
	} else if (o->b > MAX_DELAY) {
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
		o->percent = p;
		return;
	}
	o->percent = -1;
	o->precision = opt_duration("--precision", s, 1);
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
	while ((c = next_opt(argc, argv, ":n:D:P:pd:s:jh", lo, usage)) != -1) {
		switch (c) {
		case 'n':
			o->count = opt_long("--count", optarg, 1, MAX_COUNT);
			break;
		case 'D':
			parse_delay(o, optarg);
			break;
		case 'P':
			parse_precision(o, optarg);
			break;
		case 'p':
			o->periodic = true;
			break;
		case 'd':
			o->duration = opt_duration("--duration", optarg, 1000000000LL);
			if (o->duration < 1000000 || o->duration > 24 * 3600 * 1000000000LL)
				usage_error("--duration: %s is out of range [1ms, 24h]", optarg);
			o->have_duration = true;
			break;
		case 's':
			o->seed = (unsigned long)opt_long("--seed", optarg, 0, 2147483647);
			break;
		case 'j':
			o->json = true;
			break;
		}
	}
	no_more_args(argc, argv);
	if (o->periodic && o->a == 0)
		usage_error("--periodic: a period must be positive (the delay's minimum is 0)");
	if (!o->have_duration)
		o->duration = (o->periodic ? 2 : 60) * 1000000000LL;
}

/* ---- the workload ---------------------------------------------------------------------- */

static int64_t uniform(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(pn__splitmix64(s) % (uint64_t)(hi - lo + 1));
}

static int64_t draw_delay(const struct opts *o, uint64_t *s)
{
	switch (o->dist) {
	case UNIFORM:
		return uniform(s, o->a, o->b);
	case BIMODAL: {
		int64_t m = pn__splitmix64(s) & 1 ? o->b : o->a;
		return uniform(s, m - m / 2, m + m / 2);
	}
	case FIXED:
		break;
	}
	return o->a;
}

static int64_t precision_for(const struct opts *o, int64_t delay)
{
	if (o->percent < 0)
		return o->precision;
	return (int64_t)((double)delay * o->percent / 100.0);
}

static void add_window(struct run *r, int64_t lo, int64_t hi)
{
	if (r->nwin == r->capwin) {
		r->capwin = r->capwin ? r->capwin * 2 : 4096;
		r->win = realloc(r->win, r->capwin * sizeof(*r->win));
		if (!r->win)
			die(1, "out of memory");
	}
	r->win[r->nwin++] = (struct window){lo, hi};
}

static void on_fire(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	struct run *r = arg;
	struct job *j = (struct job *)t;
	int64_t d = j->deadline;
	int64_t hi = d + (t->latest - t->deadline); /* the fired window's right end */
	r->fired++;
	if (r->now < d)
		r->early++;
	else if (r->now > hi)
		r->past_window++;
	pn_hist_record(&r->late, r->now - d);
	add_window(r, d, hi);
	if (t->period > 0) {
		r->missed += (uint64_t)((t->deadline - d) / t->period - 1);
		j->deadline = t->deadline;
	}
}

static void run_workload(struct run *r)
{
	struct opts *o = r->o;
	struct pn_wheel *w;
	int e = pn_wheel_new(&w);
	if (e < 0)
		die(1, "pn_wheel_new: %s", pn_strerror(e));
	r->jobs = calloc((size_t)o->count, sizeof(*r->jobs));
	if (!r->jobs)
		die(1, "out of memory");
	uint64_t seed = o->seed;
	/* Delays count from a start a little ahead (5 ms + 100 ns per timer), so that adding
	 * them all is done before the first is due: setup is not what is measured. */
	int64_t start = pn_now() + 5000000 + o->count * 100, end = start + o->duration;
	for (long i = 0; i < o->count; i++) {
		struct job *j = &r->jobs[i];
		int64_t delay = draw_delay(o, &seed), p = precision_for(o, delay);
		pn_timer_init(&j->t, on_fire, r);
		if (o->periodic) {
			j->deadline = start + uniform(&seed, 1, delay); /* a random phase */
			e = pn_wheel_add_periodic(w, &j->t, j->deadline, p, delay);
		} else {
			j->deadline = start + delay;
			e = pn_wheel_add(w, &j->t, j->deadline, p);
		}
		if (e < 0)
			die(1, "pn_wheel_add: %s", pn_strerror(e));
	}
	int64_t lo, hi, last_progress = start;
	while (pn_wheel_window(w, &lo, &hi) == 0 && lo < end) {
		if (r->nwin >= MAX_WINDOWS) {
			r->truncated = true;
			break;
		}
		/* Waking anywhere in [lo, hi] fires the same timers, each in its window. */
		pn_sleep_until(lo, hi - lo);
		r->now = pn_now();
		pn_wheel_expire(w, r->now);
		r->wakeups++;
		if (r->now - last_progress > 250000000) {
			last_progress = r->now;
			progress("timers: %llu fired, %llu wakeups, %.1f s left",
			         (unsigned long long)r->fired, (unsigned long long)r->wakeups,
			         (double)(end - r->now) / 1e9);
		}
	}
	progress_done();
	/* Stopped by --duration, not by the last firing: the run lasts the duration, and
	 * never less than nothing (start is ahead of the setup, maybe of every wakeup). */
	if (!r->truncated && pn_wheel_count(w) > 0)
		pn_sleep_until(end, 1000000);
	r->elapsed = pn_now() - start;
	r->unfired = o->periodic ? 0 : (long)pn_wheel_count(w);
	pn_wheel_free(w);
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* One wakeup per distinct deadline: what a loop without precision windows does. */
static uint64_t uncoalesced(const struct window *win, size_t n)
{
	int64_t *d = malloc((n ? n : 1) * sizeof(*d));
	if (!d)
		die(1, "out of memory");
	for (size_t i = 0; i < n; i++)
		d[i] = win[i].lo;
	qsort(d, n, sizeof(*d), by_value);
	uint64_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += i == 0 || d[i] != d[i - 1];
	free(d);
	return count;
}

/* ---- rendering ------------------------------------------------------------------------- */

static void render_text(const struct run *r, uint64_t opt, uint64_t plain)
{
	const struct opts *o = r->o;
	char b1[32], b2[32], b3[32], b4[32];
	fprintf(out, "timers: %ld %s, delay %s, precision ", o->count,
	        o->periodic ? "periodic" : "one-shot", o->dist_text);
	if (o->percent >= 0)
		fprintf(out, "%g%% of the delay\n", o->percent);
	else
		fprintf(out, "%s\n", fmt_ns(b1, sizeof(b1), (double)o->precision));
	fprintf(out, "elapsed              %s\n", fmt_ns(b1, sizeof(b1), (double)r->elapsed));
	fprintf(out, "fired                %llu\n", (unsigned long long)r->fired);
	if (r->unfired)
		fprintf(out, "unfired              %ld (the --duration limit came first)\n",
		        r->unfired);
	if (r->truncated)
		fprintf(out, "stopped early        after %d firings (the most it keeps)\n",
		        MAX_WINDOWS);
	fprintf(out, "wakeups              %llu\n", (unsigned long long)r->wakeups);
	fprintf(out, "offline optimum      %llu (wakeups / optimum %.3f)\n",
	        (unsigned long long)opt, opt ? (double)r->wakeups / (double)opt : 0.0);
	fprintf(out, "without coalescing   %llu\n", (unsigned long long)plain);
	fprintf(out, "timers per wakeup    %.2f\n",
	        r->wakeups ? (double)r->fired / (double)r->wakeups : 0.0);
	if (o->periodic)
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
}

static void render_json(const struct run *r, uint64_t opt, uint64_t plain)
{
	const struct opts *o = r->o;
	struct json j;
	json_report_begin(&j, out, "timers");
	json_int(&j, "count", o->count);
	json_bool(&j, "periodic", o->periodic);
	json_obj(&j, "delay");
	json_str(&j, "distribution",
	         o->dist == UNIFORM   ? "uniform"
	         : o->dist == BIMODAL ? "bimodal"
	                              : "fixed");
	json_int(&j, "a_ns", o->a);
	json_int(&j, "b_ns", o->b);
	json_obj_end(&j);
	if (o->percent >= 0) {
		json_num(&j, "precision_percent", o->percent);
		json_null(&j, "precision_ns");
	} else {
		json_null(&j, "precision_percent");
		json_int(&j, "precision_ns", o->precision);
	}
	json_uint(&j, "seed", o->seed);
	json_int(&j, "duration_ns", o->duration);
	json_int(&j, "elapsed_ns", r->elapsed);
	json_uint(&j, "fired", r->fired);
	json_int(&j, "unfired", r->unfired);
	json_bool(&j, "truncated", r->truncated);
	json_uint(&j, "wakeups", r->wakeups);
	json_uint(&j, "offline_optimum", opt);
	json_num(&j, "ratio_to_optimum", opt ? (double)r->wakeups / (double)opt : 0.0);
	json_uint(&j, "uncoalesced_wakeups", plain);
	json_num(&j, "timers_per_wakeup", r->wakeups ? (double)r->fired / (double)r->wakeups : 0.0);
	json_uint(&j, "missed_periods", r->missed);
	json_uint(&j, "past_window", r->past_window);
	json_uint(&j, "early", r->early);
	json_obj(&j, "lateness_ns");
	json_uint(&j, "count", pn_hist_count(&r->late));
	json_int(&j, "min", pn_hist_min(&r->late));
	json_int(&j, "p50", pn_hist_percentile(&r->late, 50));
	json_int(&j, "p99", pn_hist_percentile(&r->late, 99));
	json_int(&j, "p999", pn_hist_percentile(&r->late, 99.9));
	json_int(&j, "max", pn_hist_max(&r->late));
	json_num(&j, "mean", pn_hist_mean(&r->late));
	json_obj_end(&j);
	json_end(&j);
}

int cmd_timers(int argc, char **argv)
{
	tool_cmd = "timers";
	struct opts o = {.count = 1000,
	                 .dist = UNIFORM,
	                 .a = 1000000,
	                 .b = 100000000,
	                 .dist_text = "uniform:1ms-100ms",
	                 .percent = 10,
	                 .seed = 1};
	parse(argc, argv, &o);
	static struct run r; /* the histogram is large */
	memset(&r, 0, sizeof(r));
	r.o = &o;
	pn_hist_init(&r.late);
	run_workload(&r);
	uint64_t plain = uncoalesced(r.win, r.nwin);
	uint64_t opt = offline_optimum(r.win, r.nwin);
	out_open();
	if (o.json)
		render_json(&r, opt, plain);
	else
		render_text(&r, opt, plain);
	out_commit();
	if (r.early)
		fprintf(stderr, "punctual timers: WARNING: %llu early fires\n",
		        (unsigned long long)r.early);
	free(r.win);
	free(r.jobs);
	return 0;
}
