/* SPDX-License-Identifier: MIT */
/*
 * test_cgroup.c: the cgroup parsers (src/cgroup_parse.c, declared in src/cgroup.h), pure
 * functions of text: /proc/self/cgroup (paths with colons, v1 controller lists, the v2
 * line anywhere), mountinfo (escapes, optional fields, the root a path lies under),
 * cpu.max, v1 integers and kernel cpu lists, and what each rejects. The walk that reads
 * real and fixture trees is tested in test_cpus.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpus/cgroup.h"

static void test_parse_self(void **state)
{
	(void)state;
	struct pn__cg_self s;
	assert_int_equal(pn__cgroup_parse_self("0::/a:b\n", &s), 0);
	assert_true(s.has_v2 && !s.has_v1);
	assert_string_equal(s.v2_path, "/a:b");
	assert_int_equal(pn__cgroup_parse_self("5:cpuacct:/x\n4:cpuset:/y\n3:cpuacct,cpu:/z", &s),
	                 0);
	assert_true(s.has_v1_cpu && s.has_v1 && !s.has_v2);
	assert_string_equal(s.v1_cpu_path, "/z");
	/* "cpuset" and "cpuacct" are not "cpu" */
	assert_int_equal(pn__cgroup_parse_self("4:cpuset:/y\n2:cpuacct:/q\n", &s), 0);
	assert_false(s.has_v1_cpu);
	assert_int_equal(pn__cgroup_parse_self("", &s), -EIO);
	assert_int_equal(pn__cgroup_parse_self("garbage\n:::\nx:cpu:/a\n4:cpu:rel\n", &s), -EIO);
	assert_int_equal(pn__cgroup_parse_self(NULL, &s), -EINVAL);
}

static void test_parse_mountinfo(void **state)
{
	(void)state;
	struct pn__cg_mount m;
	const char *mi = "1 0 0:1 / /sys/fs/cgroup/a\\040b rw - cgroup cgroup rw,cpuacct,cpu\n"
	                 "2 0 0:2 / /sys/fs/cgroup/u rw shared:1 master:2 - cgroup2 none rw\n";
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 0, "/x", &m), 0);
	assert_string_equal(m.point, "/sys/fs/cgroup/a b");
	assert_string_equal(m.root, "/");
	assert_false(m.outside);
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 1, "/x", &m), 0);
	assert_string_equal(m.point, "/sys/fs/cgroup/u");
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 1, "/../x", &m), 0);
	assert_true(m.outside);
	assert_int_equal(
	        pn__cgroup_parse_mountinfo("1 0 0:1 / /p rw - cgroup c rw,cpuacct\n", 0, "/", &m),
	        -ENOENT);
	/* no " - " separator, too few fields */
	assert_int_equal(
	        pn__cgroup_parse_mountinfo("1 0 0:1 / /p rw cgroup c rw,cpu\n1 2\n", 0, "/", &m),
	        -ENOENT);
	/* a decoded NUL cannot be in a path */
	assert_int_equal(
	        pn__cgroup_parse_mountinfo("1 0 0:1 / /p\\000 rw - cgroup2 c rw\n", 1, "/", &m),
	        -ENOENT);
}

static void test_parse_numbers(void **state)
{
	(void)state;
	int64_t q, p, v;
	assert_int_equal(pn__cgroup_parse_max("max 100000\n", &q, &p), 0);
	assert_true(q == -1 && p == 100000);
	assert_int_equal(pn__cgroup_parse_max("max", &q, &p), 0);
	assert_true(q == -1 && p == 100000);
	assert_int_equal(pn__cgroup_parse_max("50000 200000", &q, &p), 0);
	assert_true(q == 50000 && p == 200000);
	assert_int_equal(pn__cgroup_parse_max("50000", &q, &p), 0);
	assert_true(q == 50000 && p == 100000);
	static const char *bad_max[] = {"",          "\n",      "50000 0",   "0 100000",
	                                "-1 100000", "max -5",  "max  1000", "50000 1000 3",
	                                "1e5 1000",  "max 10x", " max"};
	for (size_t i = 0; i < sizeof(bad_max) / sizeof(bad_max[0]); i++)
		if (pn__cgroup_parse_max(bad_max[i], &q, &p) != -EIO)
			fail_msg("cpu.max '%s' accepted", bad_max[i]);

	assert_int_equal(pn__cgroup_parse_int("-1\n", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(pn__cgroup_parse_int("9223372036854775807", &v), 0);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(pn__cgroup_parse_int("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	static const char *bad_int[] = {"", "-", "9223372036854775808", "1 2", "0x10", "5\n\n"};
	for (size_t i = 0; i < sizeof(bad_int) / sizeof(bad_int[0]); i++)
		if (pn__cgroup_parse_int(bad_int[i], &v) != -EIO)
			fail_msg("'%s' accepted", bad_int[i]);

	assert_int_equal(pn__cgroup_parse_cpulist("0-3,8-11\n"), 8);
	assert_int_equal(pn__cgroup_parse_cpulist("0"), 1);
	assert_int_equal(pn__cgroup_parse_cpulist(""), 0);
	assert_int_equal(pn__cgroup_parse_cpulist("0-4095"), 4096);
	static const char *bad_list[] = {"3-1", "0-", "-1", "0,,1", "a", "0-3,", "99999999999"};
	for (size_t i = 0; i < sizeof(bad_list) / sizeof(bad_list[0]); i++)
		if (pn__cgroup_parse_cpulist(bad_list[i]) != -EIO)
			fail_msg("cpu list '%s' accepted", bad_list[i]);
}

/* Duplicate mounts of a hierarchy: the one whose root holds the path, the longest such;
 * a path under none of them is read at the first, marked outside. */
static void test_mountinfo_duplicates(void **state)
{
	(void)state;
	struct pn__cg_mount m;
	const char *mi = "1 0 0:1 /a /mnt/one rw - cgroup c rw,cpu\n"
	                 "2 0 0:1 / /mnt/all rw - cgroup c rw,cpu\n"
	                 "3 0 0:1 /a/b /mnt/ab rw - cgroup c rw,cpu\n";
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 0, "/a/b/c", &m), 0);
	assert_string_equal(m.point, "/mnt/ab");
	assert_string_equal(m.root, "/a/b");
	assert_false(m.outside);
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 0, "/a/x", &m), 0);
	assert_string_equal(m.root, "/a");
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 0, "/z", &m), 0);
	assert_string_equal(m.point, "/mnt/all");
	/* /a/bc is not under /a/b */
	assert_int_equal(pn__cgroup_parse_mountinfo(mi, 0, "/a/bc", &m), 0);
	assert_string_equal(m.root, "/a");
	const char *only = "1 0 0:1 /a /mnt/one rw - cgroup c rw,cpu\n";
	assert_int_equal(pn__cgroup_parse_mountinfo(only, 0, "/z", &m), 0);
	assert_true(m.outside);
	assert_string_equal(m.point, "/mnt/one");
	assert_int_equal(m.id, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse_self),
	        cmocka_unit_test(test_parse_mountinfo),
	        cmocka_unit_test(test_mountinfo_duplicates),
	        cmocka_unit_test(test_parse_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
