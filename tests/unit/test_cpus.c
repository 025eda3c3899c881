/* SPDX-License-Identifier: MIT */
/*
 * test_cpus.c: pn_cpu_count and pn_cpu_info on every fixture tree under
 * tests/fixtures/cgroup/ (each case's EXPECTED file says the count and why: adding a case
 * needs no code), the parsers on their edge cases, the cache (refreshed after its TTL,
 * dropped by pn_cpu_set_rounding, refreshed by pn_cpu_info, consistent across threads),
 * the environment (PUNCTUAL_CPU_COUNT, PUNCTUAL_CPU_ROUNDING) and the rounding API, and
 * real cgroups: as root, a v1 (or delegated v2) parent limited to 0.5 CPU with an
 * unlimited child, and a leaf stricter than its parent, each checked from a child process
 * moved into the leaf. Real cgroups are always removed; where they cannot be created the
 * test says why and reports itself skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include "cpus/cgroup.h"
#include "internal.h"
#include "runner.h"

#ifndef PN_FIXTURES
#define PN_FIXTURES "tests/fixtures"
#endif
#define CASES PN_FIXTURES "/cgroup"

static int reset(void **state)
{
	(void)state;
	pn__fs_set_root(NULL);
	unsetenv("PUNCTUAL_CPU_COUNT");
	unsetenv("PUNCTUAL_CPU_ROUNDING");
	pn_cpu_set_rounding(-1);
	return 0;
}

/* The affinity set's size, straight from the kernel. */
static int real_affinity(void)
{
	cpu_set_t *set = CPU_ALLOC(1 << 16);
	size_t sz = CPU_ALLOC_SIZE(1 << 16);
	assert_non_null(set);
	assert_int_equal(sched_getaffinity(0, sz, set), 0);
	int n = CPU_COUNT_S(sz, set);
	CPU_FREE(set);
	return n;
}

/* ---- fixture cases ---------------------------------------------------------------------- */

struct expected {
	int count;
	char why[512];
	char affinity[64];
	char limit_path[PN_CPU_PATH_MAX];
	char version[16];
	char rounding[32];
	char env_count[32];
	int error; /* -1: not stated */
};

/* EXPECTED: "key value" lines; count and why are required. */
static int read_expected(const char *dir, struct expected *e)
{
	char path[PATH_MAX + 16], line[1024];
	snprintf(path, sizeof(path), "%s/EXPECTED", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	memset(e, 0, sizeof(*e));
	e->count = -1;
	e->error = -1;
	snprintf(e->affinity, sizeof(e->affinity), "0-7");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		if (strcmp(line, "count") == 0)
			e->count = atoi(v);
		else if (strcmp(line, "why") == 0)
			snprintf(e->why, sizeof(e->why), "%s", v);
		else if (strcmp(line, "affinity") == 0)
			snprintf(e->affinity, sizeof(e->affinity), "%s", v);
		else if (strcmp(line, "limit_path") == 0)
			snprintf(e->limit_path, sizeof(e->limit_path), "%s", v);
		else if (strcmp(line, "version") == 0)
			snprintf(e->version, sizeof(e->version), "%s", v);
		else if (strcmp(line, "rounding") == 0)
			snprintf(e->rounding, sizeof(e->rounding), "%s", v);
		else if (strcmp(line, "env_count") == 0)
			snprintf(e->env_count, sizeof(e->env_count), "%s", v);
		else if (strcmp(line, "error") == 0)
			e->error = atoi(v);
	}
	fclose(f);
	return e->count >= 1 && e->why[0] ? 0 : -EINVAL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one case; returns true when it holds, printing why not. */
static bool run_case(const char *name)
{
	char dir[PATH_MAX];
	struct expected e;
	struct pn_cpu_info info;
	snprintf(dir, sizeof(dir), "%s/%s", CASES, name);
	if (read_expected(dir, &e) < 0) {
		print_error("%s: EXPECTED missing or without count/why\n", name);
		return false;
	}
	if (e.rounding[0])
		setenv("PUNCTUAL_CPU_ROUNDING", e.rounding, 1);
	else
		unsetenv("PUNCTUAL_CPU_ROUNDING");
	if (e.env_count[0])
		setenv("PUNCTUAL_CPU_COUNT", e.env_count, 1);
	else
		unsetenv("PUNCTUAL_CPU_COUNT");
	assert_int_equal(pn__cpus_info_at(dir, e.affinity, &info), 0);
	unsetenv("PUNCTUAL_CPU_ROUNDING");
	unsetenv("PUNCTUAL_CPU_COUNT");

	bool ok = info.count == e.count && info.count >= 1;
	if (e.limit_path[0])
		ok = ok && strcmp(info.limit_path, e.limit_path) == 0 && info.limit > 0;
	if (e.version[0])
		ok = ok && strcmp(pn_cgroup_version_name(info.cgroup_version), e.version) == 0;
	if (e.error == 0)
		ok = ok && info.cgroup_error == 0;
	if (e.error == 1)
		ok = ok && info.cgroup_error < 0;
	if (e.env_count[0] && info.override == 0)
		ok = ok && strcmp(info.override_invalid, e.env_count) == 0;
	if (e.rounding[0] && !strstr("ceil floor nearest", e.rounding))
		ok = ok && strcmp(info.rounding_invalid, e.rounding) == 0;
	if (!ok)
		print_error("%s: count %d (expected %d: %s); limit %g at '%s' (expected '%s'); "
		            "version %s; cgroup_error %d; reason: %s\n",
		            name, info.count, e.count, e.why, info.limit, info.limit_path,
		            e.limit_path, pn_cgroup_version_name(info.cgroup_version),
		            info.cgroup_error, info.reason);
	return ok;
}

static void test_fixtures(void **state)
{
	(void)state;
	DIR *d = opendir(CASES);
	assert_non_null(d);
	char *names[256];
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d)) && n < 256;) {
		char p[PATH_MAX];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s/EXPECTED", CASES, de->d_name);
		if (de->d_name[0] != '.' && stat(p, &st) == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (!run_case(names[i]))
			failed++;
		free(names[i]);
	}
	print_message("  %zu fixture cases, %zu failed\n", n, failed);
	assert_true(n >= 30);
	assert_int_equal(failed, 0);
}

static void test_einval(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	assert_int_equal(pn_cpu_info(NULL), -EINVAL);
	assert_int_equal(pn__cpus_info_at(NULL, NULL, &info), -EINVAL);
	assert_int_equal(pn__cpus_info_at("", NULL, NULL), -EINVAL);
	assert_int_equal(pn_cpu_set_rounding(3), -EINVAL);
	assert_int_equal(pn_cpu_set_rounding(-2), -EINVAL);
	assert_null(pn_cpu_rounding_name(3));
	assert_null(pn_cgroup_version_name(4));
	assert_string_equal(pn_cpu_rounding_name(PN_CPU_ROUND_NEAREST), "nearest");
	assert_string_equal(pn_cgroup_version_name(PN_CGROUP_HYBRID), "hybrid");
}

/* What pn_cpu_info says beyond the count: levels past the kept 32, and unreadable told
 * apart from unlimited. */
static void test_info_fields(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	assert_int_equal(pn__cpus_info_at(CASES "/v2_deeper_than_levels_max", "0-7", &info), 0);
	assert_int_equal(info.n_levels, 35);
	assert_int_equal(info.limit_level, -1); /* beyond levels[] */
	assert_string_equal(info.limit_path, "/l1");
	assert_string_equal(info.levels[0].path + strlen(info.levels[0].path) - 4, "/l34");
	assert_true(info.limit > 0.49 && info.limit < 0.51);

	assert_int_equal(pn__cpus_info_at(CASES "/v1_quota_garbage", "0-7", &info), 0);
	assert_int_equal(info.levels[0].status, -EIO);
	assert_int_equal(info.cgroup_error, -EIO);
	assert_int_equal(info.levels[1].status, 0);
	assert_int_equal(info.levels[1].quota_us, -1);
	assert_non_null(strstr(info.reason, "unknown"));

	assert_int_equal(pn__cpus_info_at(CASES "/v2_controller_off", "0-7", &info), 0);
	assert_int_equal(info.cgroup_error, 0);
	assert_int_equal(info.levels[0].status, 0);
	assert_int_equal(info.levels[0].shares, 100);
	assert_non_null(strstr(info.reason, "no cgroup CPU limit"));

	assert_int_equal(pn__cpus_info_at(CASES "/proc_unreadable", "0-7", &info), 0);
	assert_int_equal(info.cgroup_version, PN_CGROUP_NONE);
	assert_int_equal(info.cgroup_error, -ENOENT);
	assert_int_equal(info.n_levels, 0);
	assert_non_null(strstr(info.reason, "/proc/self/cgroup"));

	assert_int_equal(pn__cpus_info_at(CASES "/affinity_2048", "0-2047", &info), 0);
	assert_int_equal(info.affinity, 2048);
	assert_int_equal(info.online, 2048);
	assert_string_equal(info.affinity_list, "0-2047");
}

/* ---- this machine ------------------------------------------------------------------------- */

static void test_live(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	int aff = real_affinity();
	assert_int_equal(pn_cpu_info(&info), 0);
	assert_true(info.count >= 1 && info.count <= aff);
	assert_int_equal(info.affinity, aff);
	assert_true(info.affinity_list[0] != '\0');
	assert_true(info.reason[0] != '\0');
	int n = pn_cpu_count_fresh();
	assert_true(n >= 1 && n <= aff);
	n = pn_cpu_count();
	assert_true(n >= 1 && n <= aff);
	if (info.limit > 0)
		assert_true(info.limit_count >= 1 && info.limit_path[0] == '/');
}

/* PUNCTUAL_CPU_COUNT and the cache: a fresh call sees the new value at once; the cached
 * call sees it once the TTL has passed (asserted only after waiting, never as a speed). */
static void test_override_and_cache(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	int64_t t0 = pn_now_coarse();
	setenv("PUNCTUAL_CPU_COUNT", "7", 1);
	assert_int_equal(pn_cpu_count_fresh(), 7);
	assert_int_equal(pn_cpu_count(), 7);
	setenv("PUNCTUAL_CPU_COUNT", "11", 1);
	int n = pn_cpu_count();
	if (pn_now_coarse() - t0 < PN_CPU_CACHE_NS / 2)
		assert_int_equal(n, 7); /* still cached */
	struct timespec ts = {0, 2 * PN_CPU_CACHE_NS};
	nanosleep(&ts, NULL);
	assert_int_equal(pn_cpu_count(), 11);

	setenv("PUNCTUAL_CPU_COUNT", "many", 1);
	assert_int_equal(pn_cpu_info(&info), 0);
	assert_int_equal(info.override, 0);
	assert_string_equal(info.override_invalid, "many");
	assert_non_null(strstr(info.reason, "ignored"));
	assert_true(info.count >= 1 && info.count <= real_affinity());
	setenv("PUNCTUAL_CPU_COUNT", "1048576", 1);
	assert_int_equal(pn_cpu_info(&info), 0);
	assert_int_equal(info.override, 0);
	setenv("PUNCTUAL_CPU_COUNT", "1048575", 1);
	assert_int_equal(pn_cpu_count_fresh(), PN_CPU_COUNT_MAX);
	unsetenv("PUNCTUAL_CPU_COUNT");
}

/* The rounding API wins over the environment; -1 gives the environment back. */
static void test_rounding_api(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	const char *dir = CASES "/round_floor"; /* 2.5 CPUs */
	setenv("PUNCTUAL_CPU_ROUNDING", "nearest", 1);
	assert_int_equal(pn__cpus_info_at(dir, "0-7", &info), 0);
	assert_int_equal(info.count, 3);
	assert_int_equal(info.rounding, PN_CPU_ROUND_NEAREST);
	assert_int_equal(pn_cpu_set_rounding(PN_CPU_ROUND_FLOOR), 0);
	assert_int_equal(pn__cpus_info_at(dir, "0-7", &info), 0);
	assert_int_equal(info.count, 2);
	assert_int_equal(info.rounding, PN_CPU_ROUND_FLOOR);
	assert_true(info.limit > 2.49 && info.limit < 2.51);
	assert_int_equal(pn_cpu_set_rounding(PN_CPU_ROUND_CEIL), 0);
	assert_int_equal(pn__cpus_info_at(dir, "0-7", &info), 0);
	assert_int_equal(info.count, 3);
	assert_int_equal(pn_cpu_set_rounding(-1), 0);
	unsetenv("PUNCTUAL_CPU_ROUNDING");
	assert_int_equal(pn__cpus_info_at(dir, "0-7", &info), 0);
	assert_int_equal(info.rounding, PN_CPU_ROUND_CEIL);
}

/* For the tests of what must reach pn_cpu_count() at once, before its cache expires: true
 * when less than half the TTL has passed since `since` (a count read meanwhile came from
 * a cache that was kept), or after 10 tries (a machine too slow for that: the checks
 * still hold, they only prove less). */
static bool judged(int64_t since, int *tries)
{
	return pn_now_coarse() - since < PN_CPU_CACHE_NS / 2 || ++*tries >= 10;
}

/* pn_cpu_set_rounding drops the cached count: a 1.5 CPU limit (v2_limit) rounded up is
 * 2, down 1, and the next pn_cpu_count() says so at once. */
static void test_rounding_drops_cache(void **state)
{
	(void)state;
	if (real_affinity() < 2)
		pn_skip("a 1.5 CPU limit rounds to 1 either way with fewer than 2 CPUs");
	pn__fs_set_root(CASES "/v2_limit");
	int tries = 0, up, down;
	int64_t t0;
	do {
		t0 = pn_now_coarse();
		assert_int_equal(pn_cpu_set_rounding(PN_CPU_ROUND_CEIL), 0);
		assert_int_equal(pn_cpu_count_fresh(), 2);
		assert_int_equal(pn_cpu_set_rounding(PN_CPU_ROUND_FLOOR), 0);
		down = pn_cpu_count();
		assert_int_equal(pn_cpu_set_rounding(PN_CPU_ROUND_CEIL), 0);
		up = pn_cpu_count();
	} while (!judged(t0, &tries));
	assert_int_equal(down, 1);
	assert_int_equal(up, 2);
	pn__fs_set_root(NULL);
}

/* pn_cpu_info evaluates and stores what it found: after the tree under the root prefix
 * changes (which the cache cannot see), pn_cpu_count() answers from the stale cache until
 * pn_cpu_info, then with its count. */
static void test_info_refreshes_cache(void **state)
{
	(void)state;
	if (real_affinity() < 2)
		pn_skip("a limit of 1 CPU is no change with fewer than 2 CPUs");
	struct pn_cpu_info info;
	int all = real_affinity(), tries = 0, stale, after;
	int64_t t0;
	do {
		pn__fs_set_root(CASES
		                "/v2_limit_above_affinity"); /* no lower limit: the affinity */
		t0 = pn_now_coarse();
		assert_int_equal(pn_cpu_count_fresh(), all);
		pn__fs_set_root(CASES "/v1_parent_limits_child"); /* 0.5 CPU: 1 */
		stale = pn_cpu_count();
		assert_int_equal(pn_cpu_info(&info), 0);
		after = pn_cpu_count();
	} while (!judged(t0, &tries));
	if (tries < 10)
		assert_int_equal(stale, all); /* the cache was in force */
	assert_int_equal(info.count, 1);
	assert_int_equal(after, 1);
	pn__fs_set_root(NULL);
}

/* pn__fs_set_root reaches pn_cpu_count's own path: a parent limiting to 0.5 CPU gives 1
 * whatever this machine's affinity. */
static void test_root_prefix(void **state)
{
	(void)state;
	struct pn_cpu_info info;
	pn__fs_set_root(CASES "/v1_parent_limits_child");
	assert_int_equal(pn_cpu_count_fresh(), 1);
	assert_int_equal(pn_cpu_count(), 1);
	assert_int_equal(pn_cpu_info(&info), 0);
	assert_string_equal(info.limit_path, "/a");
	assert_int_equal(info.limit_level, 1);
	assert_string_equal(info.levels[0].path, "/a/b");
	assert_int_equal(info.levels[0].quota_us, -1);
	assert_int_equal(info.levels[1].quota_us, 50000);
	assert_int_equal(info.levels[1].period_us, 100000);
	assert_int_equal(info.levels[1].shares, 1024);
	assert_int_equal(info.n_levels, 3);
	assert_string_equal(info.cgroup_dir, "/sys/fs/cgroup/cpu/a/b");
	pn__fs_set_root(NULL);
}

/* The mount found in mountinfo is reused while statx says it is still there; fixture
 * trees never use it. Either way the answers are the same. */
static void test_mount_cache(void **state)
{
	(void)state;
	struct pn_cpu_info a, b;
	assert_int_equal(pn_cpu_info(&a), 0);
	if (!a.cgroup_dir[0]) {
		pn_skip("no cgroup hierarchy mounted here");
	}
	unsigned long h0 = pn__cgroup_mount_cache_hits();
	assert_int_equal(pn_cpu_info(&b), 0);
	int n = pn_cpu_count_fresh();
	unsigned long h1 = pn__cgroup_mount_cache_hits();
	assert_int_equal(b.count, a.count);
	assert_int_equal(n, a.count);
	assert_string_equal(b.cgroup_dir, a.cgroup_dir);
	assert_string_equal(b.limit_path, a.limit_path);
	struct statx stx;
	if (pn_emulator())
		print_message("  qemu-user's statx gives STATX_MNT_ID as 0: no cache to check\n");
	else if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
		assert_true(h1 >= h0 + 2);
	else
		print_message("  no STATX_MNT_ID: mountinfo read every time\n");

	pn__fs_set_root(CASES "/v1_parent_limits_child");
	assert_int_equal(pn_cpu_count_fresh(), 1);
	assert_int_equal(pn_cpu_count_fresh(), 1);
	assert_true(pn__cgroup_mount_cache_hits() == h1);
	pn__fs_set_root(NULL);
}

/* ---- threads -------------------------------------------------------------------------------- */

#define THREADS 4

static void *hammer(void *arg)
{
	long bad = 0;
	for (int i = 0; i < 200000; i++) {
		int n = (i % 5000 == 4999) ? pn_cpu_count_fresh() : pn_cpu_count();
		if (n != 1)
			bad++;
	}
	*(long *)arg = bad;
	return NULL;
}

/* Concurrent cached reads and refreshes all give the one right answer (and, under TSan,
 * race on nothing). */
static void test_threads(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	long bad[THREADS];
	pn__fs_set_root(CASES "/v2_parent_limits_child");
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, &bad[i]), 0);
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(bad[i], 0);
	}
	pn__fs_set_root(NULL);
}

/* ---- real cgroups --------------------------------------------------------------------------- */

struct realcg {
	bool v2;
	char home[PATH_MAX];    /* the directory of our own cgroup, where the test nests */
	char home_cg[PATH_MAX]; /* its cgroup path */
	char parent[PATH_MAX + 32];
	char child[PATH_MAX + 64];
	bool made_parent, made_child;
	bool enabled_home; /* we enabled +cpu in home's subtree_control: undo it */
	pid_t pid;
};

static struct realcg rc;

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, s, strlen(s));
	int e = w < 0 ? -errno : 0;
	close(fd);
	return e;
}

static int file_write(const char *dir, const char *file, const char *s)
{
	char p[PATH_MAX + 64];
	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, file) >= sizeof(p))
		return -ENAMETOOLONG;
	return write_str(p, s);
}

/* Moves every process left in dir's cgroup back home, then removes dir. */
static void evacuate(const char *dir)
{
	char p[PATH_MAX + 64], line[64];
	FILE *f = NULL;
	if ((size_t)snprintf(p, sizeof(p), "%s/cgroup.procs", dir) < sizeof(p))
		f = fopen(p, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			file_write(rc.home, "cgroup.procs", line);
		fclose(f);
	}
	for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
		usleep(10000);
}

static int real_teardown(void **state)
{
	(void)state;
	if (rc.pid > 0) {
		kill(rc.pid, SIGKILL);
		waitpid(rc.pid, NULL, 0);
		rc.pid = 0;
	}
	if (rc.made_child)
		evacuate(rc.child);
	if (rc.made_parent)
		evacuate(rc.parent);
	rc.made_child = rc.made_parent = false;
	if (rc.enabled_home)
		file_write(rc.home, "cgroup.subtree_control", "-cpu");
	rc.enabled_home = false;
	return reset(state);
}

/* Finds our own cgroup's directory in the v1 cpu hierarchy or in v2. Returns a reason
 * to skip, or NULL. */
static const char *find_home(bool v2)
{
	char *self = malloc(65536), *mi = malloc(1 << 20);
	struct pn__cg_self s;
	struct pn__cg_mount m;
	const char *why = NULL;
	assert_true(self && mi);
	if (pn__fs_read_at("", "/proc/self/cgroup", self, 65536) < 0 ||
	    pn__fs_read_at("", "/proc/self/mountinfo", mi, 1 << 20) < 0 ||
	    pn__cgroup_parse_self(self, &s) < 0)
		why = "cannot read /proc/self/cgroup or mountinfo";
	else if (v2 ? !s.has_v2 : !s.has_v1_cpu)
		why = v2 ? "no cgroup v2 hierarchy" : "no v1 cpu controller";
	else if (pn__cgroup_parse_mountinfo(mi, v2, v2 ? s.v2_path : s.v1_cpu_path, &m) < 0)
		why = "the hierarchy is not mounted";
	else if (m.outside)
		why = "our cgroup is outside the mount's root";
	if (!why) {
		const char *path = v2 ? s.v2_path : s.v1_cpu_path;
		const char *below = strcmp(m.root, "/") == 0 ? path : path + strlen(m.root);
		snprintf(rc.home, sizeof(rc.home), "%s%s", m.point,
		         strcmp(below, "/") ? below : "");
		snprintf(rc.home_cg, sizeof(rc.home_cg), "%s", strcmp(path, "/") ? path : "");
	}
	free(self);
	free(mi);
	return why;
}

/* v2: the cpu controller must be available in our cgroup and enabled for its children
 * (our parent cgroup) and for the test parent's children. */
static const char *v2_enable(void)
{
	char p[PATH_MAX + 64], buf[512];
	snprintf(p, sizeof(p), "%s/cgroup.controllers", rc.home);
	if (pn__fs_read_at("", p, buf, sizeof(buf)) < 0 || !strstr(buf, "cpu"))
		return "the cpu controller is not available in our v2 cgroup (bound to v1, or "
		       "not delegated)";
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", rc.home);
	if (pn__fs_read_at("", p, buf, sizeof(buf)) >= 0 && strstr(buf, "cpu"))
		return NULL;
	if (file_write(rc.home, "cgroup.subtree_control", "+cpu") < 0)
		return "cannot enable the cpu controller below our v2 cgroup (not delegated)";
	rc.enabled_home = true;
	return NULL;
}

/* In the child: moves itself into rc.child and checks the count and the limiting level.
 * Returns an exit status: 0 when everything holds. */
static int child_checks(const char *limit_cg)
{
	char pid[32];
	struct pn_cpu_info info;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (file_write(rc.child, "cgroup.procs", pid) < 0)
		return 10;
	/* fresh first: the cache came with fork from the parent */
	if (pn_cpu_count_fresh() != 1)
		return 11;
	if (pn_cpu_count() != 1)
		return 12;
	if (pn_cpu_info(&info) < 0 || info.count != 1)
		return 13;
	if (strcmp(info.limit_path, limit_cg) != 0)
		return 14;
	if (info.cgroup_v1_cpu == rc.v2)
		return 15;
	return 0;
}

/* Parent limit and child limit as cpu.cfs_quota_us (v1) or cpu.max (v2) values;
 * expect_parent: which level must be named. */
static void real_case(bool v2, const char *parent_limit, const char *child_limit,
                      bool expect_parent)
{
	const char *why;
	memset(&rc, 0, sizeof(rc));
	rc.v2 = v2;
	if (geteuid() != 0)
		why = "needs root to create cgroups";
	else
		why = find_home(v2);
	if (!why && v2)
		why = v2_enable();
	if (!why) {
		snprintf(rc.parent, sizeof(rc.parent), "%s/pn_test_%d", rc.home, (int)getpid());
		if (mkdir(rc.parent, 0755) < 0)
			why = "cannot create a cgroup (read-only or not delegated)";
		else
			rc.made_parent = true;
	}
	if (why) {
		pn_skip("real %s cgroups: %s", v2 ? "v2" : "v1", why);
	}
	snprintf(rc.child, sizeof(rc.child), "%s/leaf", rc.parent);
	if (v2)
		assert_int_equal(file_write(rc.parent, "cgroup.subtree_control", "+cpu"), 0);
	assert_int_equal(mkdir(rc.child, 0755), 0);
	rc.made_child = true;
	if (v2) {
		assert_int_equal(file_write(rc.parent, "cpu.max", parent_limit), 0);
		assert_int_equal(file_write(rc.child, "cpu.max", child_limit), 0);
	} else {
		assert_int_equal(file_write(rc.parent, "cpu.cfs_period_us", "100000"), 0);
		assert_int_equal(file_write(rc.child, "cpu.cfs_period_us", "100000"), 0);
		assert_int_equal(file_write(rc.parent, "cpu.cfs_quota_us", parent_limit), 0);
		assert_int_equal(file_write(rc.child, "cpu.cfs_quota_us", child_limit), 0);
	}
	char limit_cg[PATH_MAX + 32];
	snprintf(limit_cg, sizeof(limit_cg), "%s/pn_test_%d%s", rc.home_cg, (int)getpid(),
	         expect_parent ? "" : "/leaf");

	rc.pid = fork();
	assert_true(rc.pid >= 0);
	if (rc.pid == 0)
		_exit(child_checks(limit_cg));
	int st;
	assert_int_equal(waitpid(rc.pid, &st, 0), rc.pid);
	rc.pid = 0;
	/* remove first, then judge: a failed check must not leave cgroups behind */
	evacuate(rc.child);
	evacuate(rc.parent);
	struct stat sb;
	bool left = stat(rc.child, &sb) == 0 || stat(rc.parent, &sb) == 0;
	rc.made_child = rc.made_parent = false;
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) != 0)
		fail_msg("child check %d failed (10 move, 11 fresh, 12 cached, 13 info, 14 level "
		         "is not %s, 15 version)",
		         WEXITSTATUS(st), limit_cg);
	assert_false(left);
}

static void test_real_v1_parent_limits(void **state)
{
	(void)state;
	real_case(false, "50000", "-1", true);
}

static void test_real_v1_leaf_stricter(void **state)
{
	(void)state;
	real_case(false, "150000", "50000", false);
}

static void test_real_v2_parent_limits(void **state)
{
	(void)state;
	real_case(true, "50000 100000", "max 100000", true);
}

static void test_real_v2_leaf_stricter(void **state)
{
	(void)state;
	real_case(true, "150000 100000", "50000 100000", false);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_teardown(test_fixtures, reset),
	        cmocka_unit_test(test_einval),
	        cmocka_unit_test_teardown(test_info_fields, reset),
	        cmocka_unit_test_teardown(test_live, reset),
	        cmocka_unit_test_teardown(test_override_and_cache, reset),
	        cmocka_unit_test_teardown(test_rounding_api, reset),
	        cmocka_unit_test_teardown(test_rounding_drops_cache, reset),
	        cmocka_unit_test_teardown(test_info_refreshes_cache, reset),
	        cmocka_unit_test_teardown(test_root_prefix, reset),
	        cmocka_unit_test_teardown(test_mount_cache, reset),
	        cmocka_unit_test_teardown(test_threads, reset),
	        cmocka_unit_test_teardown(test_real_v1_parent_limits, real_teardown),
	        cmocka_unit_test_teardown(test_real_v1_leaf_stricter, real_teardown),
	        cmocka_unit_test_teardown(test_real_v2_parent_limits, real_teardown),
	        cmocka_unit_test_teardown(test_real_v2_leaf_stricter, real_teardown),
	};
	return pn_run("cpus", tests, argc, argv);
}
