/* SPDX-License-Identifier: MIT */
/*
 * `punctual run --stats --runs N`: runs the command N times, one after the other, and
 * reports each run's waits and their spread across runs, as hyperfine does for run times.
 * A run's quantiles are over all its waits, every thread and child process. A failing run
 * ends the series with its status, as make(1) stops, the runs so far reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract.h"
#include "util/diag.h"
#include "util/out.h"
#include "run/runs.h"

/* env(1)'s statuses when the command cannot be run. */
enum { EXIT_CANNOT_INVOKE = 126, EXIT_NOT_FOUND = 127 };

static char records[64] = ""; /* the newest records file; "" once removed */

void run_records_remove(void)
{
	if (records[0])
		unlink(records);
	records[0] = '\0';
}

void run_records_new(const char *dir, const char *name, char *path, size_t n)
{
	run_records_remove();
	if (!dir || dir[0] != '/' || strlen(dir) + strlen(name) + 16 > sizeof(records))
		dir = "/tmp";
	snprintf(records, sizeof(records), "%s/punctual-%s.XXXXXX", dir, name);
	int fd = mkstemp(records); /* 0600, the user's: the shim maps no other */
	if (fd < 0)
		die(1, "cannot create a file in %s: %s", dir, strerror(errno));
	close(fd);
	static bool cleans;
	if (!cleans)
		cleanup_on_signal(run_records_remove);
	cleans = true;
	snprintf(path, n, "%s", records);
}

/* With --explain, the runs' late waits by cause and lateness bucket, and each cause's
 * largest. */
struct run_causes {
	uint64_t n[PN__WHY_COUNT][PN__DECAY_HIST_BUCKETS];
	int64_t max[PN__WHY_COUNT];
};

/* The q-quantile of h (n counts): the largest value of its bucket, capped at max. */
static int64_t quantile(const uint64_t *h, uint64_t n, double q, int64_t max)
{
	uint64_t rank = (uint64_t)(q * (double)n), seen = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		if ((seen += h[b]) > rank) {
			int64_t hi = pn__decay_hist_bucket_hi(b);
			return hi < max ? hi : max;
		}
	return max;
}

int run_records(const char *path, struct run_fig *f, struct run_causes *why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = run_records_fd(fd, f, why);
	close(fd);
	return r;
}

int run_records_fd(int fd, struct run_fig *f, struct run_causes *why)
{
	struct pn__records_sum *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	int r = pn__records_sum(fd, s);
	f->procs = s->procs;
	f->threads = s->threads;
	f->waits = s->waits;
	f->events = s->events;
	f->past = s->past;
	f->max = s->max;
	memcpy(f->h, s->late, sizeof(f->h));
	for (int c = 0; why && c < PN__WHY_COUNT; c++) {
		why->max[c] = s->why_max[c] > why->max[c] ? s->why_max[c] : why->max[c];
		for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
			why->n[c][b] += s->why_n[c][b];
	}
	free(s);
	f->p50 = f->waits ? quantile(f->h, f->waits, 0.5, f->max) : -1;
	f->p99 = f->waits ? quantile(f->h, f->waits, 0.99, f->max) : -1;
	return r;
}

/* With --explain: the threads' causes summed over the runs, under the threshold they
 * shared. */
static void causes_lines(const struct run_causes *why, long runs, const char *explain,
                         int64_t precision)
{
	if (!explain)
		return;
	char t[24], above[64];
	int64_t given;
	if (strcmp(explain, "auto") != 0 && pn__duration_parse(explain, 1, &given) == 0)
		fmt_ns(above, sizeof(above), (double)given);
	else if (precision >= 0)
		fmt_ns(above, sizeof(above), (double)precision);
	else
		snprintf(above, sizeof(above), "twice their thread's median");
	uint64_t count[PN__WHY_COUNT] = {0}, late = 0;
	for (int c = 0; c < PN__WHY_COUNT; c++) {
		for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
			count[c] += why->n[c][b];
		late += count[c];
	}
	if (!late) {
		fprintf(stderr, "punctual: over the %ld runs, no wait later than %s\n", runs,
		        above);
		return;
	}
	fprintf(stderr, "punctual: over the %ld runs, %llu waits later than %s, why:\n", runs,
	        (unsigned long long)late, above);
	for (int c = 0; c < PN__WHY_COUNT; c++)
		if (count[c])
			fprintf(stderr, "    %-10s %8llu %5.1f%%  max %s\n", pn__why_name(c),
			        (unsigned long long)count[c],
			        100.0 * (double)count[c] / (double)late,
			        fmt_ns(t, sizeof(t), (double)why->max[c]));
}

/* Runs cmd once: its status (128 + the signal that killed it). */
static int run_once(char **cmd)
{
	fflush(NULL);
	pid_t c = fork();
	if (c < 0)
		die(1, "cannot run %s: %s", cmd[0], strerror(errno));
	if (c == 0) {
		execvp(cmd[0], cmd);
		int e = errno;
		fprintf(stderr, "punctual run: %s: %s\n", cmd[0], strerror(e));
		_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE);
	}
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			die(1, "cannot wait for %s: %s", cmd[0], strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Mean and sample standard deviation of v[0..n-1] (sd 0 for one value). */
static void spread(const double *v, long n, double *mean, double *sd, double *lo, double *hi)
{
	double s = 0, ss = 0;
	*lo = *hi = v[0];
	for (long i = 0; i < n; i++) {
		s += v[i];
		*lo = v[i] < *lo ? v[i] : *lo;
		*hi = v[i] > *hi ? v[i] : *hi;
	}
	*mean = s / (double)n;
	for (long i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

/* first, then the items separated by ", ", broken before an item that would pass
 * out_width(). */
static void items_line(FILE *f, const char *first, const char (*it)[48], int n)
{
	int width = out_width(), col = fprintf(f, "%s", first);
	for (int i = 0; i < n; i++) {
		int len = (int)strlen(it[i]);
		/* room for the next separator's comma too */
		if (i && col + 2 + len + (i + 1 < n) > width) {
			fputs(",\n  ", f);
			col = 2;
		} else if (i) {
			fputs(", ", f);
			col += 2;
		}
		col += fprintf(f, "%s", it[i]);
	}
	fputc('\n', f);
}

/* "  NAME  MEAN ± SD  (MIN .. MAX)", durations when ns, counts otherwise. */
static void spread_line(const char *name, const double *v, long n, bool ns)
{
	double mean, sd, lo, hi;
	char a[24], b[24], c[24], d[24];
	spread(v, n, &mean, &sd, &lo, &hi);
	if (ns)
		fprintf(stderr, "  %-9s %10s ± %-10s (%s .. %s)\n", name,
		        fmt_ns(a, sizeof(a), mean), fmt_ns(b, sizeof(b), sd),
		        fmt_ns(c, sizeof(c), lo), fmt_ns(d, sizeof(d), hi));
	else
		fprintf(stderr, "  %-9s %10.1f ± %-10.1f (%.0f .. %.0f)\n", name, mean, sd, lo, hi);
}

int run_runs(char **cmd, long n, const char *explain, int64_t precision)
{
	double *v = calloc(4 * (size_t)n, sizeof(double));
	if (!v)
		die(1, "out of memory");
	long done = 0;
	int status = 0;
	char a[24], b[24], c[24], path[64];
	struct run_causes why = {0}; /* a failing run's are never shown */
	for (long i = 0; i < n; i++) {
		/* a file per run: a process of the last run may still hold its page */
		run_records_new(getenv("TMPDIR"), "runs", path, sizeof(path));
		if (setenv("PUNCTUAL_STATS_FILE", path, 1) != 0)
			die(1, "cannot set the environment: %s", strerror(errno));
		status = run_once(cmd);
		struct run_fig f = {.status = status};
		int r = run_records(path, &f, &why);
		if (r < 0 && r != -EINVAL)
			die(1, "cannot read %s: %s", path, strerror(-r));
		char it[5][48];
		int k = 0;
		snprintf(it[k++], sizeof(it[0]), "%llu waits", (unsigned long long)f.waits);
		snprintf(it[k++], sizeof(it[0]), "late p50 %s",
		         f.waits ? fmt_ns(a, sizeof(a), (double)f.p50) : "-");
		snprintf(it[k++], sizeof(it[0]), "p99 %s",
		         f.waits ? fmt_ns(b, sizeof(b), (double)f.p99) : "-");
		snprintf(it[k++], sizeof(it[0]), "max %s",
		         f.waits ? fmt_ns(c, sizeof(c), (double)f.max) : "-");
		if (status)
			snprintf(it[k++], sizeof(it[0]), "exit %d", status);
		char head[64];
		snprintf(head, sizeof(head), "punctual: run %ld/%ld: ", i + 1, n);
		items_line(stderr, head, it, k);
		if (status != 0)
			break;
		v[done] = (double)f.waits;
		v[n + done] = (double)f.p50;
		v[2 * n + done] = (double)f.p99;
		v[3 * n + done] = (double)f.max;
		done += f.waits > 0; /* a run without a wait has no lateness */
	}
	run_records_remove();
	if (status == 0 && done > 0) {
		fprintf(stderr,
		        "punctual: %ld runs, %ld with timed waits: mean ± sd (min .. max)\n", n,
		        done);
		spread_line("waits", v, done, false);
		spread_line("late p50", v + n, done, true);
		spread_line("late p99", v + 2 * n, done, true);
		spread_line("late max", v + 3 * n, done, true);
		causes_lines(&why, n, explain, precision);
	}
	free(v);
	return status;
}
