/* SPDX-License-Identifier: MIT */
/*
 * run_runs.c: `punctual run --stats --runs N`: runs the command N times, one after the
 * other, and reports each run's waits and their spread across runs, as hyperfine does for
 * run times. The shim appends a record per thread to PUNCTUAL_STATS_FILE (stats.c: its
 * waits and lateness histogram); each run's histograms are merged, so a run's quantiles
 * are those of all its waits, every thread and child process included. With --explain,
 * the shim also appends its threads' tables of causes (records "pn-why"), summed into one
 * over the runs. A run that fails
 * (a status other than 0, or a signal) ends the series: its status is the tool's, as
 * make(1) stops at a failing command, with the runs so far reported.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"
#include "run_runs.h"
#include "wait/decay_hist.h"
#include "wait/why.h"

/* env(1)'s statuses when the command cannot be run, as cmd_run.c's. */
enum { EXIT_CANNOT_INVOKE = 126, EXIT_NOT_FOUND = 127 };

static char records[64] = ""; /* the records file; "" once removed */

static void records_remove(void)
{
	if (records[0])
		unlink(records);
}

/* With --explain, the runs' causes (their threads' tables): the late waits by cause and
 * lateness bucket, and each cause's largest lateness. */
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

/* "B:N,..." after a record's figures into h (n buckets). */
static void read_buckets(const char *s, uint64_t *h)
{
	while (*s && *s != '\n') {
		char *end;
		long b = strtol(s, &end, 10);
		if (*end != ':' || b < 0 || b >= PN__DECAY_HIST_BUCKETS)
			return;
		h[b] += strtoull(end + 1, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
}

/* One record line (stats.c, record and record_why) into f, or a cause's into why. */
static void read_record(const char *line, struct run_fig *f, struct run_causes *why, int *pids,
                        int *npids)
{
	int pid, tid, c, used;
	unsigned long long w, e, p;
	long long m;
	if (sscanf(line, "pn-why 1 %d %d %d %lld %n", &pid, &tid, &c, &m, &used) == 4) {
		if (!why || c < 0 || c >= PN__WHY_COUNT)
			return;
		why->max[c] = m > why->max[c] ? m : why->max[c];
		read_buckets(line + used, why->n[c]);
		return;
	}
	if (sscanf(line, "pn-stats 1 %d %d %llu %llu %llu %lld %n", &pid, &tid, &w, &e, &p, &m,
	           &used) != 6)
		return; /* not a record (a line cut short: none of ours) */
	f->threads++;
	f->waits += w;
	f->events += e;
	f->past += p;
	if (m > f->max)
		f->max = m;
	int i = 0;
	while (i < *npids && pids[i] != pid)
		i++;
	if (i == *npids && *npids < 256)
		pids[(*npids)++] = pid;
	read_buckets(line + used, f->h);
}

int run_records(FILE *in, struct run_fig *f, struct run_causes *why)
{
	int pids[256], npids = 0;
	char *line = NULL;
	size_t cap = 0;
	f->max = -1;
	while (getline(&line, &cap, in) > 0)
		read_record(line, f, why, pids, &npids);
	free(line);
	f->procs = (unsigned)npids;
	f->p50 = f->waits ? quantile(f->h, f->waits, 0.5, f->max) : -1;
	f->p99 = f->waits ? quantile(f->h, f->waits, 0.99, f->max) : -1;
	return ferror(in) ? -EIO : 0;
}

/* With --explain: the threads' tables of causes summed over the runs (each thread's
 * records hold what its table counted), under the threshold they shared: explain's ("auto"
 * or ns), the precision with --precise (precision >= 0), else each thread's own. */
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

/* first, then the items separated by ", ", a line broken (after the comma, "  " before
 * the next) before an item that would pass out_width(). */
static void items_line(FILE *f, const char *first, const char (*it)[48], int n)
{
	int width = out_width(), col = fprintf(f, "%s", first);
	for (int i = 0; i < n; i++) {
		int len = (int)strlen(it[i]);
		/* the next separator's comma stays on this line: room for it too */
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
	const char *dir = getenv("TMPDIR");
	if (!dir || dir[0] != '/' || strlen(dir) > sizeof(records) - 24)
		dir = "/tmp";
	snprintf(records, sizeof(records), "%s/punctual-runs.XXXXXX", dir);
	int fd = mkstemp(records);
	if (fd < 0)
		die(1, "cannot create a file in %s: %s", dir, strerror(errno));
	cleanup_on_signal(records_remove);
	if (setenv("PUNCTUAL_STATS_FILE", records, 1) != 0)
		die(1, "cannot set the environment: %s", strerror(errno));
	FILE *in = fdopen(fd, "r");
	double *v = calloc(4 * (size_t)n, sizeof(double));
	if (!in || !v)
		die(1, "out of memory");
	long done = 0;
	int status = 0;
	char a[24], b[24], c[24];
	struct run_causes why = {0}; /* a failing run's are never shown: the series stops */
	for (long i = 0; i < n; i++) {
		if (ftruncate(fd, 0) != 0)
			die(1, "cannot empty %s: %s", records, strerror(errno));
		status = run_once(cmd);
		struct run_fig f = {.status = status};
		rewind(in);
		if (run_records(in, &f, &why) < 0)
			die(1, "cannot read %s: %s", records, strerror(errno));
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
		done += f.waits > 0; /* a run without a wait has no lateness to spread */
	}
	fclose(in);
	records_remove();
	records[0] = '\0';
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
