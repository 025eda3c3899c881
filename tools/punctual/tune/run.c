/* SPDX-License-Identifier: MIT */
/*
 * `punctual tune`'s measuring: the settings run in turns, each setting's runs merged and
 * its lateness quantile judged against the program as it is by probe --compare's noise
 * rule; the setting kept is the cheapest not worse than the best beyond noise.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "util/diag.h"
#include "util/host.h"
#include "util/progress.h"
#include "tune/tune.h"
#include "util/noise.h"

/* How long a command has to end after SIGTERM before SIGKILL. */
#define TERM_GRACE_NS 2000000000LL
/* The exit status of a command not found, as env(1)'s. */
#define EXIT_NOT_FOUND 127

/* The child's argv: `run --stats`, s's options (the command's own slack where s sets
 * none), "--" and the command. */
static char **run_argv(const struct tune_cmd *t, const struct tune_setting *s, char *budget,
                       size_t nb, char *slice, size_t ns)
{
	char **cmd = t->cmd;
	size_t n = 0;
	while (cmd[n])
		n++;
	char **v = calloc(n + 10, sizeof(*v));
	if (!v)
		die(1, "out of memory");
	size_t k = 0;
	v[k++] = "punctual";
	v[k++] = "run";
	v[k++] = "--stats";
	if (s->slack)
		v[k++] = "--slack=1ns";
	else if (t->slack[0])
		v[k++] = (char *)t->slack;
	if (s->precise)
		v[k++] = "--precise";
	if (s->precise && s->budget) {
		snprintf(budget, nb, "--budget=%s", s->budget);
		v[k++] = budget;
	}
	if (s->slice) {
		snprintf(slice, ns, "--slice=%s", s->slice);
		v[k++] = slice;
	}
	v[k++] = "--";
	memcpy(v + k, cmd, (n + 1) * sizeof(*v));
	return v;
}

/* The run's process: with go >= 0, it waits for go's end (the trace begun) before it runs
 * the command, so that no child it forks escapes the trace. */
static void child(char **argv, const char *path, int go)
{
	setpgid(0, 0); /* a terminal's ^C is the tool's to handle */
	char b;
	while (go >= 0 && read(go, &b, 1) < 0 && errno == EINTR)
		;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 1);
		dup2(null, 2);
	}
	setenv("PUNCTUAL_STATS_FILE", path, 1);
	execv("/proc/self/exe", argv);
	_exit(EXIT_NOT_FOUND + 1);
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Waits for c until deadline (then SIGTERM, SIGKILL after TERM_GRACE_NS) or a signal:
 * its status, 128 + a signal; the CPU it and its waited-for children used into *cpu_ns. */
static int wait_child(pid_t c, int64_t deadline, int64_t *cpu_ns)
{
	bool termed = false;
	for (;;) {
		int st;
		struct rusage ru;
		pid_t r = wait4(c, &st, WNOHANG, &ru);
		if (r == c) {
			*cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			          (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		if (r < 0 && errno != EINTR)
			die(1, "cannot wait for the command: %s", strerror(errno));
		int64_t t = now_ns();
		if (!termed && (t >= deadline || tool_stop)) {
			kill(-c, SIGTERM);
			termed = true;
			deadline = t + TERM_GRACE_NS;
		} else if (termed && t >= deadline) {
			kill(-c, SIGKILL);
		}
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
}

void tune_cmd_runner(void *ctx, const struct tune_setting *s, int64_t for_ns,
                     struct tune_trace *trace, struct tune_run *r)
{
	const struct tune_cmd *t = ctx;
	char **cmd = t->cmd, budget[64], slice[64], path[64];
	char **argv = run_argv(t, s, budget, sizeof(budget), slice, sizeof(slice));
	/* a file per run: a process of the last run may still hold its page */
	run_records_new(getenv("TMPDIR"), "tune", path, sizeof(path));
	int go[2] = {-1, -1};
	if (trace && pipe2(go, O_CLOEXEC) != 0)
		die(1, "cannot run %s: %s", cmd[0], strerror(errno));
	fflush(NULL);
	int64_t t0 = now_ns();
	pid_t c = fork();
	if (c < 0)
		die(1, "cannot run %s: %s", cmd[0], strerror(errno));
	if (c == 0) {
		if (go[1] >= 0)
			close(go[1]);
		child(argv, path, go[0]);
	}
	setpgid(c, c);
	free(argv);
	memset(r, 0, sizeof(*r));
	if (trace) { /* `run` execs the command: c is it */
		close(go[0]);
		tune_trace_begin(trace, c, &r->traced);
		close(go[1]);
	}
	r->fig.status = wait_child(c, t0 + for_ns, &r->cpu_ns);
	r->wall_ns = now_ns() - t0;
	if (trace)
		tune_trace_end(trace);
	int e = run_records(path, &r->fig, NULL);
	if (e < 0 && e != -EINVAL)
		die(1, "cannot read %s: %s", path, strerror(-e));
	if (tool_stop)
		die(1, "interrupted: %s stopped, nothing changed", cmd[0]);
	int st = r->fig.status;
	if (st == EXIT_NOT_FOUND || st == EXIT_NOT_FOUND - 1)
		die(EXIT_USAGE, "%s: cannot be run (status %d)", cmd[0], st);
	if (st != 0 && st != 128 + SIGTERM)
		die(1, "%s exited with status %d under '%s'; tune measures runs that end well",
		    cmd[0], st, s->name);
}

/* ---- judging -------------------------------------------------------------------------- */

double tune_quantile(const struct run_fig *f, double q)
{
	double rank = q * (double)f->waits;
	uint64_t seen = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++) {
		if (!f->h[b] || (double)(seen + f->h[b]) <= rank) {
			seen += f->h[b];
			continue;
		}
		double lo = b ? (double)pn__decay_hist_bucket_hi(b - 1) + 1 : 0;
		double hi = (double)pn__decay_hist_bucket_hi(b);
		double v = lo + (hi - lo) * (rank - (double)seen + 0.5) / (double)f->h[b];
		return fmin(fmin(v, hi), (double)f->max);
	}
	return (double)f->max;
}

/* The histogram's resolution: 4 buckets an octave. */
#define BUCKET_RES 0.19

/* The value at quantile q of a setting's lateness, its bucket's largest, capped at its
 * largest lateness. */
static double at_fig(const void *arg, double q)
{
	const struct run_fig *f = arg;
	uint64_t rank = (uint64_t)(q * (double)f->waits), seen = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		if ((seen += f->h[b]) > rank) {
			int64_t hi = pn__decay_hist_bucket_hi(b);
			return (double)(hi < f->max ? hi : f->max);
		}
	return (double)f->max;
}

/* r's quantile q and its interval; against base, the ratio, its interval and the verdict.
 * A setting without a wait has none (NAN). */
static void judge(struct tune_result *r, const struct tune_result *base, double q, double z)
{
	const struct run_fig *f = &r->fig;
	r->verdict = 0;
	r->v = r->lo = r->hi = NAN;
	r->ratio = r->ratio_lo = r->ratio_hi = NAN;
	if (!f->waits)
		return;
	r->v = at_fig(f, q);
	noise_interval(r->v, q, (double)f->waits, z, TUNE_RESOLUTION, at_fig, f, &r->lo, &r->hi);
	if (r == base || isnan(base->v))
		return;
	r->ratio = fmax(r->v, 1) / fmax(base->v, 1);
	r->ratio_lo = r->lo / base->hi;
	r->ratio_hi = base->lo > 0 ? r->hi / base->lo : INFINITY;
	r->verdict = noise_apart(base->lo, base->hi, r->lo, r->hi);
}

/* Judges every setting: the best (the lowest quantile better than as it is) and the one
 * kept, the cheapest better than as it is and not worse than the best beyond noise. */
static void judge_all(struct tune_outcome *o)
{
	o->q = o->res[0].fig.waits >= 100 ? 0.99 : 0.5;
	double z = noise_z((size_t)(o->n - 1));
	for (int i = 0; i < o->n; i++)
		judge(&o->res[i], &o->res[0], o->q, z);
	o->best = o->kept = -1;
	for (int i = 1; i < o->n; i++)
		if (o->res[i].verdict < 0 && (o->best < 0 || o->res[i].v < o->res[o->best].v))
			o->best = i;
	for (int i = 1; o->best >= 0 && o->kept < 0; i++) {
		const struct tune_result *b = &o->res[o->best], *r = &o->res[i];
		if (r->verdict < 0 && noise_apart(b->lo, b->hi, r->lo, r->hi) <= 0)
			o->kept = i;
	}
}

/* Whether every fix stands apart from the program as it is on its p99. */
static bool decided(const struct tune_outcome *o)
{
	if (o->q < 0.9)
		return false;
	for (int i = 1; i < o->n; i++)
		if (o->res[i].verdict == 0)
			return false;
	return true;
}

/* Adds run r into m. */
static void merge(struct tune_result *m, const struct tune_run *r)
{
	struct run_fig *f = &m->fig;
	const struct run_fig *g = &r->fig;
	if (!m->runs)
		f->max = -1;
	f->status = g->status;
	f->procs += g->procs;
	f->threads += g->threads;
	f->waits += g->waits;
	f->events += g->events;
	f->past += g->past;
	f->max = g->max > f->max ? g->max : f->max;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		f->h[b] += g->h[b];
	f->p50 = f->waits ? (int64_t)at_fig(f, 0.5) : -1;
	f->p99 = f->waits ? (int64_t)at_fig(f, 0.99) : -1;
	if (g->p99 >= 0 && (!m->run_p99_lo || g->p99 < m->run_p99_lo))
		m->run_p99_lo = g->p99 ? g->p99 : 1;
	if (g->p99 > m->run_p99_hi)
		m->run_p99_hi = g->p99;
	m->wall_ns += r->wall_ns;
	m->cpu_ns = m->cpu_ns < 0 || r->cpu_ns < 0 ? -1 : m->cpu_ns + r->cpu_ns;
	m->runs++;
}

/* A run's length: the measuring time over four rounds, within [RUN_MIN, RUN_MAX] (a
 * unit's restart and first waits are in every run). */
#define ROUNDS_PLANNED 4
#define ROUNDS_MIN     2
#define RUN_MIN_NS     500000000LL
#define RUN_MAX_NS     10000000000LL

/* The program as it is made no timed wait: said at once; refused: why no trace (NULL:
 * traced). */
static void no_waits(const struct tune_run *r, const char *refused)
{
	if (!refused)
		die(1,
		    "no timed wait seen as it is in %.3g s of its run, by the shim or by eBPF "
		    "tracing of its processes: one that only computes has no lateness to tune",
		    (double)r->wall_ns / 1e9);
	die(1,
	    "no timed wait seen as it is in %.3g s of its run: the shim times nanosleep, "
	    "poll, epoll and the cond waits of dynamically linked programs (one that only "
	    "computes has no lateness to tune), and eBPF tracing, for the others, is not "
	    "possible here: %s",
	    (double)r->wall_ns / 1e9, refused);
}

static int64_t run_length(int64_t for_ns, int n)
{
	int64_t len = n > 0 ? for_ns / (ROUNDS_PLANNED * n) : RUN_MIN_NS;
	return len < RUN_MIN_NS ? RUN_MIN_NS : len > RUN_MAX_NS ? RUN_MAX_NS : len;
}

/* The first run: again while it ended by its length before a wait was seen (by the trace
 * where one is given, else the shim), each time twice as long, to for_ns at most. A slow
 * start (a loaded host, a sanitized runtime) is no lateness to judge. */
static void first_run(tune_runner *run, void *ctx, struct tune_setting *s, int64_t *len,
                      int64_t for_ns, struct tune_trace *trace, struct tune_run *r,
                      struct tune_outcome *o)
{
	for (;;) {
		run(ctx, s, *len, trace, r);
		o->spent_ns += r->wall_ns;
		bool seen = r->fig.waits || (trace && r->traced.waits);
		if (seen || r->fig.status != 128 + SIGTERM || 2 * *len > for_ns)
			return;
		*len *= 2;
		progress("tune: round 1, run 1 of %d again, %.3g s long%s: %s", o->n,
		         (double)*len / 1e9, trace ? ", traced" : "", s->name);
	}
}

/* The first run made no timed wait the shim saw: run again, traced where this process may.
 * Where the trace alone sees waits, every run is traced from now on (*trace), without the
 * shim's settings. Where neither sees one, exits saying so. */
static void first_unseen(tune_runner *run, void *ctx, struct tune_setting *s, int64_t *len,
                         int64_t for_ns, struct tune_run *r, struct tune_outcome *o,
                         struct tune_trace **trace)
{
	const char *refused = tune_trace_refused();
	if (refused)
		no_waits(r, refused);
	*trace = tune_trace_open();
	progress("tune: round 1, run 1 of %d again, traced: %s", o->n, s[0].name);
	first_run(run, ctx, &s[0], len, for_ns, *trace, r, o);
	if (r->fig.waits) { /* the shim's after all */
		tune_trace_close(*trace);
		*trace = NULL;
		return;
	}
	if (!r->traced.waits)
		no_waits(r, NULL);
	int k = 0;
	for (int i = 0; i < o->n; i++)
		if (!s[i].shim)
			s[k++] = s[i];
	o->n = k;
	o->traced = true;
}

void tune_measure(tune_runner *run, void *ctx, struct tune_setting *s, int n, int64_t for_ns,
                  struct tune_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->n = n;
	int64_t len = run_length(for_ns, n);
	struct tune_trace *trace = NULL;
	uint64_t before[2], after[2];
	host_cpu_ticks(before);
	stop_on_signals();
	for (int round = 0;; round++) {
		for (int j = 0; j < o->n; j++) {
			int i = (j + round) % o->n;
			progress("tune: round %d, run %d of %d: %s", round + 1, j + 1, o->n,
			         s[i].name);
			struct tune_run r;
			if (round == 0 && i == 0) {
				first_run(run, ctx, &s[i], &len, for_ns, trace, &r, o);
				if (!r.fig.waits) {
					first_unseen(run, ctx, s, &len, for_ns, &r, o, &trace);
					int64_t planned = run_length(for_ns, o->n);
					len = planned > len ? planned : len;
				}
			} else {
				run(ctx, &s[i], len, trace, &r);
				o->spent_ns += r.wall_ns;
			}
			if (o->traced) {
				r.traced.status = r.fig.status;
				r.fig = r.traced;
			}
			merge(&o->res[i], &r);
		}
		o->rounds = round + 1;
		judge_all(o);
		int64_t per_round = o->spent_ns / o->rounds;
		if (o->rounds >= ROUNDS_MIN && (decided(o) || o->spent_ns + per_round > for_ns))
			break;
	}
	tune_trace_close(trace);
	host_cpu_ticks(after);
	o->steal = host_steal(before, after);
	progress_done();
	stop_on_signals_end();
}
