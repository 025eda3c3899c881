/* SPDX-License-Identifier: MIT */
/*
 * smoke.c: the library's invariants without cmocka, for a C library the unit tests cannot
 * be built against (musl: `make test-musl`). The clock never goes back and stays within
 * CLOCK_MONOTONIC's reads around it; pn_sleep_until never returns before its deadline;
 * pn_cpu_info reads every cgroup fixture tree as its EXPECTED file says. Prints
 * "smoke: N passed, N failed" and exits 1 when a check failed.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <punctual/punctual.h>
#include "cpus/cgroup.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                     \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* pn_now: never backwards, and between the CLOCK_MONOTONIC reads made around it. */
static void clock_monotonic(void)
{
	int back = 0, outside = 0;
	int64_t prev = pn_now();
	for (int i = 0; i < 200000; i++) {
		int64_t a = mono(), t = pn_now(), b = mono();
		back += t < prev;
		outside += t < a || t > b;
		prev = t;
	}
	CHECK(back == 0, "pn_now went back %d times in 200000 reads", back);
	CHECK(outside == 0, "pn_now fell outside CLOCK_MONOTONIC's reads around it %d times",
	      outside);
}

/* pn_sleep_until: never before its deadline, by pn_now and by CLOCK_MONOTONIC. */
static void sleep_never_early(void)
{
	static const int64_t delays[] = {0, 1000, 50000, 200000, 1000000, 3000000};
	static const int64_t precisions[] = {0, 1000, 50000};
	int early = 0, errors = 0;
	for (size_t p = 0; p < sizeof(precisions) / sizeof(precisions[0]); p++)
		for (size_t d = 0; d < sizeof(delays) / sizeof(delays[0]); d++)
			for (int i = 0; i < 5; i++) {
				int64_t deadline = pn_now() + delays[d];
				errors += pn_sleep_until(deadline, precisions[p]) != 0;
				early += pn_now() < deadline || mono() < deadline;
			}
	CHECK(errors == 0, "pn_sleep_until failed %d times", errors);
	CHECK(early == 0, "pn_sleep_until returned early %d times", early);
	CHECK(pn_sleep_until(pn_now(), -1) == -EINVAL, "a negative precision is not -EINVAL");
}

/* The value of KEY in a fixture's EXPECTED ("key value" lines), or "" without it. */
static void expected(const char *dir, const char *key, char *out, size_t size)
{
	char path[PATH_MAX], line[1024];
	snprintf(path, sizeof(path), "%s/EXPECTED", dir);
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ' ') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, size, "%s", line + n + 1);
			break;
		}
	fclose(f);
}

static void set_or_unset(const char *name, const char *value)
{
	if (value[0])
		setenv(name, value, 1);
	else
		unsetenv(name);
}

/* Every case under DIR: its count, and its limit's cgroup where EXPECTED names one. */
static void cgroup_fixtures(const char *cases)
{
	DIR *d = opendir(cases);
	CHECK(d != NULL, "cannot open %s", cases);
	if (!d)
		return;
	int n = 0;
	for (struct dirent *de; (de = readdir(d));) {
		char dir[PATH_MAX], count[32], limit_path[PN_CPU_PATH_MAX], affinity[64];
		char rounding[32], env_count[32];
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", cases, de->d_name);
		expected(dir, "count", count, sizeof(count));
		if (!count[0])
			continue;
		expected(dir, "limit_path", limit_path, sizeof(limit_path));
		expected(dir, "affinity", affinity, sizeof(affinity));
		expected(dir, "rounding", rounding, sizeof(rounding));
		expected(dir, "env_count", env_count, sizeof(env_count));
		set_or_unset("PUNCTUAL_CPU_ROUNDING", rounding);
		set_or_unset("PUNCTUAL_CPU_COUNT", env_count);
		struct pn_cpu_info info;
		int r = pn__cpus_info_at(dir, affinity[0] ? affinity : "0-7", &info);
		CHECK(r == 0 && info.count == atoi(count), "%s: count %d (%d), expected %s",
		      de->d_name, info.count, r, count);
		if (limit_path[0])
			CHECK(strcmp(info.limit_path, limit_path) == 0,
			      "%s: limit at '%s', expected '%s'", de->d_name, info.limit_path,
			      limit_path);
		n++;
	}
	closedir(d);
	unsetenv("PUNCTUAL_CPU_ROUNDING");
	unsetenv("PUNCTUAL_CPU_COUNT");
	CHECK(n >= 30, "only %d fixture cases under %s", n, cases);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_CGROUP_DIR\n", argv[0]);
		return 2;
	}
	clock_monotonic();
	sleep_never_early();
	cgroup_fixtures(argv[1]);
	printf("smoke: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
