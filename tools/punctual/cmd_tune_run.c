/* SPDX-License-Identifier: MIT */
/*
 * cmd_tune_run.c: `punctual tune`'s measuring: a command run under each setting through
 * `punctual run --stats` (this binary), the shim's records read back, each run's p99
 * lateness given an interval and judged against the run as it is by probe --compare's
 * noise rule (noise.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_tune.h"
#include "noise.h"
#include "tool.h"

/* The lateness histogram's resolution: 4 buckets an octave (decay_hist.h), so a bucket's
 * largest value is at most 2^(1/4) - 1 above its smallest. */
#define BUCKET_RES 0.19
/* How long a command has to end after SIGTERM before SIGKILL. */
#define TERM_GRACE_NS 2000000000LL
/* The exit status of a command that was not found (env(1)'s, as cmd_run.c's). */
#define EXIT_NOT_FOUND 127

static char records[64]; /* the records file; "" once removed */

void tune_records_remove(void)
{
	if (records[0])
		unlink(records);
}

void tune_records_create(const char *dir, char *path, size_t n)
{
	snprintf(records, sizeof(records), "%s/punctual-tune.XXXXXX", dir);
	int fd = mkstemp(records);
	if (fd < 0)
		die(1, "cannot create a file in %s: %s", dir, strerror(errno));
	fchmod(fd, 0666); /* a service's own user appends its records */
	close(fd);
	cleanup_on_signal(tune_records_remove);
	snprintf(path, n, "%s", records);
}

/* The child's argv: this binary's `run --stats`, s's options, then "--" and cmd. */
static char **run_argv(char **cmd, const struct tune_setting *s, char *budget, size_t nb,
                       char *slice, size_t ns)
{
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

static void child(char **argv, const char *path)
{
	setpgid(0, 0); /* its own group: a terminal's ^C is the tool's to handle */
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

/* Waits for c until deadline (then SIGTERM, and SIGKILL after TERM_GRACE_NS) or a signal
 * to the tool: its status, 128 + the signal that ended it. */
static int wait_child(pid_t c, int64_t deadline)
{
	bool termed = false;
	for (;;) {
		int st;
		pid_t r = waitpid(c, &st, WNOHANG);
		if (r == c)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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

void tune_run_cmd(char **cmd, int64_t for_ns, const char *path, const struct tune_setting *s,
                  struct run_fig *f)
{
	char budget[64], slice[64];
	char **argv = run_argv(cmd, s, budget, sizeof(budget), slice, sizeof(slice));
	if (truncate(path, 0) != 0)
		die(1, "cannot empty %s: %s", path, strerror(errno));
	fflush(NULL);
	pid_t c = fork();
	if (c < 0)
		die(1, "cannot run %s: %s", cmd[0], strerror(errno));
	if (c == 0)
		child(argv, path);
	setpgid(c, c);
	free(argv);
	memset(f, 0, sizeof(*f));
	f->status = wait_child(c, now_ns() + for_ns);
	FILE *in = fopen(path, "r");
	if (!in || run_records(in, f, NULL) < 0)
		die(1, "cannot read %s: %s", path, strerror(errno));
	fclose(in);
	if (tool_stop) {
		tune_records_remove();
		die(1, "interrupted: %s stopped, nothing changed", cmd[0]);
	}
}

void tune_cmd_runner(void *ctx, const struct tune_setting *s, struct run_fig *f)
{
	struct tune_cmd *t = ctx;
	tune_run_cmd(t->cmd, t->for_ns, t->records, s, f);
	if (f->status == EXIT_NOT_FOUND || f->status == EXIT_NOT_FOUND - 1)
		die(EXIT_USAGE, "%s: cannot be run (status %d)", t->cmd[0], f->status);
	if (f->status != 0 && f->status != 128 + SIGTERM)
		die(1, "%s exited with status %d under '%s'; tune measures runs that end well",
		    t->cmd[0], f->status, s->name);
}

/* at() for noise_interval: the value at quantile q of a run's lateness histogram, the
 * largest of its bucket, capped at its largest lateness. */
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

/* Whether a run's waits support a p99: one wait above it at least (noise.c's rule). */
static bool p99_supported(const struct run_fig *f)
{
	return f->waits >= 100 && f->p99 >= 0;
}

static void judge(struct tune_result *r, const struct tune_result *base, double z)
{
	const struct run_fig *f = &r->fig;
	r->verdict = 0;
	r->ratio = r->ratio_lo = r->ratio_hi = NAN;
	if (!p99_supported(f))
		return;
	noise_interval((double)f->p99, 0.99, (double)f->waits, z, BUCKET_RES, at_fig, f, &r->lo,
	               &r->hi);
	if (r == base)
		return;
	double b = fmax((double)base->fig.p99, 1);
	r->ratio = fmax((double)f->p99, 1) / b;
	r->ratio_lo = r->lo / base->hi;
	r->ratio_hi = base->lo > 0 ? r->hi / base->lo : INFINITY;
	r->verdict = noise_apart(base->lo, base->hi, r->lo, r->hi);
}

void tune_measure(tune_runner *run, void *ctx, const struct tune_setting *s, int n,
                  struct tune_result *res)
{
	stop_on_signals();
	for (int i = 0; i < n; i++) {
		progress("tune: run %d of %d: %s", i + 1, n, s[i].name);
		memset(&res[i], 0, sizeof(res[i]));
		run(ctx, &s[i], &res[i].fig);
	}
	progress_done();
	stop_on_signals_end();
	const struct run_fig *b = &res[0].fig;
	if (!b->waits && b->status == 128 + SIGTERM)
		die(1, "the program ran past --for and SIGTERM ended it before its exit handlers, "
		       "where the shim writes its statistics: give a --for it exits within");
	if (!b->waits)
		die(1, "no timed wait seen as it is: the shim times nanosleep, poll, epoll and "
		       "the cond waits of dynamically linked programs");
	if (!p99_supported(b))
		die(1, "%llu timed waits as it is: a p99 needs 100; give a longer --for",
		    (unsigned long long)b->waits);
	double z = noise_z((size_t)(n - 1));
	judge(&res[0], &res[0], z);
	for (int i = 1; i < n; i++)
		judge(&res[i], &res[0], z);
}

int tune_best(const struct tune_result *res, int n)
{
	int best = -1;
	for (int i = 1; i < n; i++)
		if (res[i].verdict < 0 && (best < 0 || res[i].fig.p99 < res[best].fig.p99))
			best = i;
	return best;
}
