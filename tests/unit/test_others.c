/* SPDX-License-Identifier: MIT */
/*
 * test_others.c: what else ran during a measurement (tools/punctual/measure/others.c): the
 * CPU time of each process between two snapshots of a fixture /proc, with a comm holding
 * parentheses and spaces, a process born and one gone in between, a reaped child's time
 * counted for its parent, the measuring process left out, the top three in order, a reaped
 * long-lived child bounded by the CPUs (each process and the sum); and one real snapshot of
 * this machine that finds this process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "measure/others.h"

static char root[64];

/* root/proc/PID/stat with comm and utime, stime, cutime, cstime in ticks */
static void put(int pid, const char *comm, int ut, int st, int cut, int cst)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
	mkdir(path, 0755);
	strcat(path, "/stat");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 1 0 12 0 0\n", pid,
	        comm, pid, pid, ut, st, cut, cst);
	fclose(f);
}

static void gone(int pid)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
	rmdir(path);
}

static void fixture(void **state)
{
	(void)state;
	long hz = sysconf(_SC_CLK_TCK);
	snprintf(root, sizeof(root), "/tmp/pn-others-XXXXXX");
	assert_non_null(mkdtemp(root));
	char proc[96];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	mkdir(proc, 0755);
	put(1, "init", 10, 5, 0, 0);
	put(42, "cc1 (x) y", 100, 0, 0, 0);
	put(50, "make", 1, 1, 0, 0);
	put(77, "self", 0, 0, 0, 0);
	put(90, "dies", 3, 0, 0, 0);
	struct others_snap a, b;
	assert_int_equal(others_take(&a, root), 0);
	assert_int_equal(a.n, 5);
	/* over one second: init +0, cc1 +hz (1 CPU), make +hz/2 of a reaped child, self +hz
	 * (left out), dies gone, born +hz/4 */
	put(42, "cc1 (x) y", 100 + (int)hz, 0, 0, 0);
	put(50, "make", 1, 1, (int)hz / 2, 0);
	put(77, "self", (int)hz, 0, 0, 0);
	gone(90);
	put(120, "born", 0, (int)hz / 4, 0, 0);
	assert_int_equal(others_take(&b, root), 0);
	struct others o;
	others_diff(&a, &b, 1000000000, 77, 4, &o);
	assert_int_equal(o.nbusy, 3);
	assert_int_equal(o.ntop, 3);
	assert_string_equal(o.top[0].comm, "cc1 (x) y");
	assert_int_equal(o.top[0].pid, 42);
	assert_true(o.top[0].cpus > 0.99 && o.top[0].cpus < 1.01);
	assert_string_equal(o.top[1].comm, "make");
	assert_string_equal(o.top[2].comm, "born");
	double want = 1.0 + (double)(hz / 2) / (double)hz + (double)(hz / 4) / (double)hz;
	assert_true(o.cpus > want - 0.01 && o.cpus < want + 0.01);
	/* no time between, or no CPU: nothing */
	others_diff(&a, &b, 0, 77, 4, &o);
	assert_int_equal(o.nbusy, 0);
	others_diff(&a, &b, 1000000000, 77, 0, &o);
	assert_int_equal(o.nbusy, 0);
	others_free(&b);
	/* a shell reaps a child that ran 100 s (its time before the stretch too), on 2 CPUs: the
	 * shell counts for what the CPUs could give beside its own, and the sum for 2 CPUs */
	put(50, "make", 1 + (int)hz / 2, 1, 100 * (int)hz, 0);
	assert_int_equal(others_take(&b, root), 0);
	others_diff(&a, &b, 1000000000, 77, 2, &o);
	assert_string_equal(o.top[0].comm, "make");
	assert_true(o.top[0].cpus > 1.99 && o.top[0].cpus < 2.01);
	assert_true(o.cpus > 1.99 && o.cpus < 2.01);
	others_free(&a);
	others_free(&b);
	/* a root without /proc */
	char none[96];
	snprintf(none, sizeof(none), "%s/nothing", root);
	assert_int_equal(others_take(&a, none), -2 /* -ENOENT */);
	assert_int_equal(a.n, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void real(void **state)
{
	(void)state;
	struct others_snap s;
	assert_int_equal(others_take(&s, ""), 0);
	bool found = false;
	for (size_t i = 0; i < s.n; i++)
		found |= s.p[i].pid == getpid();
	assert_true(found);
	others_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(fixture), cmocka_unit_test(real)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
