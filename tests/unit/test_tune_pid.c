/* SPDX-License-Identifier: MIT */
/*
 * test_tune_pid.c: what `punctual tune` reads of another process (tools/punctual/
 * tune/pid.c), on a fixture /proc and /sys/fs/cgroup: the service unit of a v2, a
 * hybrid (name=systemd) and a delegated cgroup; the refusals of bad input, a missing
 * process, a session scope and a user's manager; the CPU quota of a cgroup and its parents,
 * in the unified hierarchy and in a hybrid host's v1 cpu hierarchy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "contract.h"
#include "tune/tune.h"
#include "util/diag.h"

static char root[64];
static char refusal[512];
static jmp_buf refused;

/* The tool's usage_error: the message kept, back to the test. */
void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal, sizeof(refusal), fmt, ap);
	va_end(ap);
	longjmp(refused, 1);
}

/* root + rel's directories made, then text written to it. */
static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/pn-tune-pid-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	pn__fs_set_root(root);
	put("/proc/10/cgroup", "0::/system.slice/foo.service\n");
	put("/proc/11/cgroup", "2:cpu:/\n1:name=systemd:/system.slice/bar.service\n0::/\n");
	put("/proc/12/cgroup", "0::/system.slice/baz.service/worker\n");
	put("/proc/13/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
	put("/proc/14/cgroup",
	    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.service\n");
	put("/proc/15/cgroup", "3:cpu,cpuacct:/system.slice/qux.service\n"
	                       "1:name=systemd:/system.slice/qux.service\n0::/\n");
	put("/proc/16/cgroup", "3:cpu,cpuacct:/system.slice/quux.service\n0::/\n");
	/* the library's walk reads the mounts: v2 here, v1's cpu beside it (hybrid) */
	put("/proc/self/mountinfo",
	    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
	    "35 23 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n");
	put("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	put("/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.cfs_quota_us", "-1\n");
	put("/sys/fs/cgroup/cpu,cpuacct/system.slice/qux.service/cpu.cfs_quota_us", "250000\n");
	put("/sys/fs/cgroup/cpu,cpuacct/system.slice/qux.service/cpu.cfs_period_us", "100000\n");
	put("/sys/fs/cgroup/cpu,cpuacct/system.slice/quux.service/cpu.cfs_quota_us", "-1\n");
	put("/sys/fs/cgroup/system.slice/cpu.max", "150000 100000\n");
	put("/sys/fs/cgroup/system.slice/foo.service/cpu.max", "max 100000\n");
	put("/sys/fs/cgroup/system.slice/baz.service/cpu.max", "50000 100000\n");
	put("/sys/fs/cgroup/system.slice/baz.service/worker/cpu.max", "max 100000\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pn__fs_set_root(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* tune_pid_unit(arg): the unit, or "!" and the refusal's message in refusal. */
static const char *unit_of(const char *arg)
{
	static char name[256];
	refusal[0] = '\0';
	if (setjmp(refused))
		return "!";
	tune_pid_unit(arg, name, sizeof(name));
	return name;
}

static void services(void **state)
{
	(void)state;
	assert_string_equal(unit_of("10"), "foo.service");
	assert_string_equal(unit_of("11"), "bar.service"); /* hybrid: v2 says only "/" */
	assert_string_equal(unit_of("12"), "baz.service"); /* below it: delegated */
}

static void refusals(void **state)
{
	(void)state;
	const char *bad[] = {"abc", "", "-3", "0", "12x", "99999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_string_equal(unit_of(bad[i]), "!");
		assert_non_null(strstr(refusal, "is not a process ID"));
	}
	assert_string_equal(unit_of("99"), "!");
	assert_non_null(strstr(refusal, "no such process"));
	assert_string_equal(unit_of("13"), "!");
	assert_non_null(strstr(refusal, "is in no service unit"));
	assert_non_null(strstr(refusal, "punctual tune -- CMD"));
	assert_string_equal(unit_of("14"), "!");
	assert_non_null(strstr(refusal, "user's service manager"));
}

static void quotas(void **state)
{
	(void)state;
	assert_int_equal(tune_pid_cpus(10), 2); /* the slice's 1.5 CPUs, rounded up */
	assert_int_equal(tune_pid_cpus(12), 1); /* the unit's 0.5 under the slice's 1.5 */
	assert_int_equal(tune_pid_cpus(13), 0); /* no cpu.max on the way up */
	assert_int_equal(tune_pid_cpus(99), 0); /* no such process */
	assert_int_equal(tune_pid_cpus(15), 3); /* hybrid: v1's 2.5 CPUs, rounded up */
	assert_int_equal(tune_pid_cpus(16), 0); /* hybrid, no v1 quota on the way up */
	assert_int_equal(tune_pid_cpus(11), 0); /* v1's root: never a quota */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(services),
	        cmocka_unit_test(refusals),
	        cmocka_unit_test(quotas),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
