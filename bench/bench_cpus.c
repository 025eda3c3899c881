/* SPDX-License-Identifier: MIT */
/*
 * bench_cpus.c: pn_cpu_count() against its peers in one run, as ratios: cached calls/s on
 * one thread and per thread with two threads calling at once, pn_cpu_count_fresh()'s cost,
 * the JDK's Runtime.availableProcessors() (cached 20 ms, JDK-8227006; bench/CpuCount.java)
 * and Rust std's available_parallelism() (uncached; bench/cpu_count.rs). The peers are
 * compiled here, at bench time, into OUT_DIR; a missing javac or rustc leaves its row out.
 * Prints a Markdown section on stdout.
 *
 * Usage: bench_cpus BENCH_SOURCE_DIR OUT_DIR
 *
 * Each figure is the median of ROUNDS rounds of ROUND_MS: the machine is shared and one
 * round can be unlucky. Both threads of the two-thread row run the same rounds at once,
 * released together by a barrier.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include "bench_stats.h"

#define ROUNDS   7
#define ROUND_MS 200

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void sink(uint64_t v)
{
	__asm__ __volatile__("" ::"r"(v));
}

/* Median calls/s of expr over ROUNDS rounds, batch calls between clock reads. The call is
 * direct, as in an application (through the PLT into the shared library), not through a
 * function pointer. */
#define RATE_FN(name, expr)                                                                        \
	static double name(long batch, pthread_barrier_t *bar)                                     \
	{                                                                                          \
		double r[ROUNDS];                                                                  \
		for (int k = 0; k < ROUNDS; k++) {                                                 \
			if (bar)                                                                   \
				pthread_barrier_wait(bar);                                         \
			uint64_t acc = 0;                                                          \
			long calls = 0;                                                            \
			int64_t t0 = mono(), t;                                                    \
			do {                                                                       \
				for (long i = 0; i < batch; i++)                                   \
					acc += (uint64_t)(expr);                                   \
				calls += batch;                                                    \
				t = mono();                                                        \
			} while (t - t0 < ROUND_MS * 1000000LL);                                   \
			sink(acc);                                                                 \
			r[k] = (double)calls * 1e9 / (double)(t - t0);                             \
		}                                                                                  \
		return median(r, ROUNDS);                                                          \
	}

RATE_FN(rate_coarse, pn_now_coarse())
RATE_FN(rate_cached, pn_cpu_count())
RATE_FN(rate_fresh, pn_cpu_count_fresh())

struct worker {
	pthread_barrier_t *bar;
	double rate;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	w->rate = rate_cached(100000, w->bar);
	return NULL;
}

struct peer {
	int ok;
	int count;
	double per_s;
	char version[64];
};

/* Runs cmd and reads "count N", "calls_per_s X" and "version V" lines from it. */
static void run_peer(const char *cmd, struct peer *p)
{
	char line[256];
	memset(p, 0, sizeof(*p));
	FILE *f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "count %d", &p->count) == 1)
			continue;
		if (sscanf(line, "calls_per_s %lf", &p->per_s) == 1)
			continue;
		sscanf(line, "version %63s", p->version);
	}
	p->ok = pclose(f) == 0 && p->per_s > 0;
}

static void fmt_rate(char *buf, size_t n, double per_s)
{
	if (per_s >= 1e6)
		snprintf(buf, n, "%.1fM", per_s / 1e6);
	else
		snprintf(buf, n, "%.1fk", per_s / 1e3);
}

static void fmt_cost(char *buf, size_t n, double per_s)
{
	double ns = 1e9 / per_s;
	if (ns >= 1000)
		snprintf(buf, n, "%.1f us", ns / 1000);
	else
		snprintf(buf, n, "%.2f ns", ns);
}

static void row(const char *what, int threads, double per_s)
{
	char r[32], c[32];
	fmt_rate(r, sizeof(r), per_s);
	fmt_cost(c, sizeof(c), per_s);
	printf("| %s | %d | %s | %s |\n", what, threads, r, c);
}

/* ---- the same question in a real cgroup -------------------------------------------- */

static int put(const char *dir, const char *file, const char *val)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	int ok = fputs(val, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* In a child moved into leaf: pn_cpu_count_fresh() as the exit status. */
static int punctual_in(const char *leaf)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char me[32];
		snprintf(me, sizeof(me), "%d\n", (int)getpid());
		if (put(leaf, "cgroup.procs", me) < 0)
			_exit(255);
		_exit(pn_cpu_count_fresh());
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}

/* A peer's count when run inside leaf. */
static int peer_in(const char *leaf, const char *peer_cmd)
{
	char cmd[16384];
	struct peer p;
	snprintf(cmd, sizeof(cmd), "sh -c 'echo $$ >\"%s/cgroup.procs\" && exec %s'", leaf,
	         peer_cmd);
	run_peer(cmd, &p);
	return p.ok ? p.count : -1;
}

static void answer(const char *who, int n)
{
	if (n < 0)
		printf("| %s | (failed) | |\n", who);
	else
		printf("| %s | %d | %s |\n", who, n, n == 1 ? "right" : "wrong: misses the parent");
}

/* As root where the cpu controller is writable: a parent allowed 0.5 CPU above an
 * unlimited leaf; every peer is asked inside the leaf. The right answer is 1. The cgroups
 * are removed afterwards. */
static void real_cgroup(const char *dir, bool jdk, bool rust)
{
	static struct pn_cpu_info info;
	char parent[8192], leaf[8300], cmd[8192];
	pn_cpu_info(&info);
	printf("### The same question in a real cgroup\n\n");
	if (geteuid() != 0 || !info.cgroup_dir[0]) {
		printf("Skipped: needs root and a mounted cpu controller.\n\n");
		return;
	}
	snprintf(parent, sizeof(parent), "%s/pn_bench_%d", info.cgroup_dir, (int)getpid());
	snprintf(leaf, sizeof(leaf), "%s/leaf", parent);
	bool v1 = info.cgroup_v1_cpu;
	if (mkdir(parent, 0755) < 0) {
		printf("Skipped: cannot create a cgroup under %s.\n\n", info.cgroup_dir);
		return;
	}
	int ok = v1 ? put(parent, "cpu.cfs_quota_us", "50000")
	            : put(parent, "cpu.max", "50000 100000") |
	                         put(parent, "cgroup.subtree_control", "+cpu");
	if (ok == 0 && mkdir(leaf, 0755) == 0) {
		printf("A cgroup (%s) allowing 0.5 CPU (quota 50000 us a 100000 us period) holds "
		       "an\n"
		       "unlimited child; each runtime is asked inside the child. The right answer\n"
		       "is 1: the parent's quota bounds the child.\n\n",
		       v1 ? "v1" : "v2");
		printf("| runtime | answer | |\n|---|--:|---|\n");
		answer("punctual pn_cpu_count()", punctual_in(leaf));
		if (jdk) {
			snprintf(cmd, sizeof(cmd), "java -cp \"%s\" CpuCount 1 10", dir);
			answer("JDK Runtime.availableProcessors()", peer_in(leaf, cmd));
		}
		if (rust) {
			snprintf(cmd, sizeof(cmd), "\"%s/cpu_count\" 1 10", dir);
			answer("Rust std available_parallelism()", peer_in(leaf, cmd));
		}
		printf("\n");
		rmdir(leaf);
	} else {
		printf("Skipped: cannot set a CPU limit on %s.\n\n", parent);
	}
	rmdir(parent);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_cpus BENCH_SOURCE_DIR OUT_DIR\n");
		return 2;
	}
	const char *src = argv[1], *dir = argv[2];
	char cmd[4096];

	/* Peers first: they must not share the CPUs with our own threads. */
	struct peer jdk, rust;
	snprintf(cmd, sizeof(cmd),
	         "javac -d '%s' '%s/CpuCount.java' >/dev/null 2>&1 && "
	         "java -cp '%s' CpuCount %d %d 2>/dev/null",
	         dir, src, dir, ROUNDS, ROUND_MS);
	run_peer(cmd, &jdk);
	snprintf(cmd, sizeof(cmd),
	         "rustc -O -o '%s/cpu_count' '%s/cpu_count.rs' >/dev/null 2>&1 && "
	         "'%s/cpu_count' %d %d 2>/dev/null",
	         dir, src, dir, ROUNDS, ROUND_MS);
	run_peer(cmd, &rust);

	int count = pn_cpu_count();
	rate_cached(100000, NULL); /* warm-up: frequency, caches */
	double floor_rate = rate_coarse(100000, NULL);
	double one = rate_cached(100000, NULL);
	double fresh = rate_fresh(50, NULL);

	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	struct worker w[2] = {{&bar, 0}, {&bar, 0}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	double two = (w[0].rate + w[1].rate) / 2;
	double two_min = w[0].rate < w[1].rate ? w[0].rate : w[1].rate;

	printf("## CPU count: pn_cpu_count() against the JDK and Rust std\n\n");
	printf("`bench/bench_cpus` (median of %d rounds of %d ms each). pn_cpu_count() is cached\n"
	       "for 20 ms on the coarse clock, like the JDK's availableProcessors() since\n"
	       "JDK-8227006; Rust std's available_parallelism() re-reads the cgroup files at "
	       "every\n"
	       "call, which is what pn_cpu_count_fresh() does. Counts here: punctual %d",
	       ROUNDS, ROUND_MS, count);
	if (jdk.ok)
		printf(", JDK %d", jdk.count);
	if (rust.ok)
		printf(", Rust %d", rust.count);
	printf(".\n\n");
	printf("| call | threads | calls/s per thread | cost a call |\n");
	printf("|---|--:|--:|--:|\n");
	row("pn_now_coarse() alone (the floor of an honest TTL)", 1, floor_rate);
	row("pn_cpu_count(), cached", 1, one);
	row("pn_cpu_count(), cached, both threads at once", 2, two);
	if (jdk.ok) {
		char what[128];
		snprintf(what, sizeof(what), "JDK %s Runtime.availableProcessors(), cached",
		         jdk.version[0] ? jdk.version : "");
		row(what, 1, jdk.per_s);
	}
	row("pn_cpu_count_fresh()", 1, fresh);
	if (rust.ok)
		row("Rust std available_parallelism(), uncached", 1, rust.per_s);
	printf("\n");
	if (jdk.ok)
		printf("- cached pn_cpu_count() vs the JDK's cached call: %.1fx (target >= 10x)\n",
		       one / jdk.per_s);
	else
		printf("- JDK: not measured (javac or java missing or failed)\n");
	printf("- cached pn_cpu_count(): %.0fM calls/s, %.2f ns a call (target >= 150M, <= 7 ns);"
	       " %.2fx the cost of pn_now_coarse() alone\n",
	       one / 1e6, 1e9 / one, floor_rate / one);
	printf("- two threads: %.0f%% of one thread's rate per thread on average, %.0f%% for the "
	       "slower (target >= 80%%)\n",
	       100 * two / one, 100 * two_min / one);
	printf("- pn_cpu_count_fresh(): %.1f us a call (target <= 30 us)", 1e6 / fresh);
	if (rust.ok)
		printf("; %.2fx Rust std's rate", fresh / rust.per_s);
	printf("\n\n");
	real_cgroup(dir, jdk.ok, rust.ok);
	return 0;
}
