/* SPDX-License-Identifier: MIT */
/*
 * test_slack.c: timer slack set and read back on the calling thread and on other threads
 * (through /proc/TID), inheritance by new threads, 0 resetting to the value a thread had
 * at creation, values beyond 32 and 63 bits, and every error of the contract: EINVAL,
 * ESRCH for a reaped process, EPERM for an unprivileged caller, ENOENT and EIO from
 * fixture trees.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/slack.h>
#include "internal.h"
#include "runner.h"

#ifndef PN_FIXTURES
#define PN_FIXTURES "tests/fixtures"
#endif

static const int64_t values[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
#define N_VALUES (sizeof(values) / sizeof(values[0]))

/* Realtime threads have slack 0 and the kernel ignores writes: nothing to test there. */
static void skip_if_realtime(void)
{
	int pol = sched_getscheduler(0);
	if (pol == SCHED_FIFO || pol == SCHED_RR)
		pn_skip("a realtime thread has slack 0 and the kernel ignores writes");
}

static int reset_root(void **state)
{
	(void)state;
	pn__fs_set_root(NULL);
	return 0;
}

/* ---- the calling thread ----------------------------------------------------------- */

static void set_get_self(void)
{
	pid_t tid = gettid();
	for (size_t i = 0; i < N_VALUES; i++) {
		assert_int_equal(pn_slack_set(values[i]), 0);
		assert_int_equal(pn_slack_get(), values[i]);
		assert_int_equal(pn_slack_get_pid(tid), values[i]);
	}
	/* and the other way round: written through /proc, read through prctl */
	for (size_t i = 0; i < N_VALUES; i++) {
		assert_int_equal(pn_slack_set_pid(tid, values[i]), 0);
		assert_int_equal(pn_slack_get(), values[i]);
	}
}

static void *set_get_self_thread(void *arg)
{
	(void)arg;
	set_get_self();
	return NULL;
}

static void test_self(void **state)
{
	(void)state;
	skip_if_realtime();
	int64_t orig = pn_slack_get();
	set_get_self();
	/* a thread other than the main one: its tid is not the pid */
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, set_get_self_thread, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(pn_slack_set(orig), 0);
}

/* 0 resets the main thread to its default, through prctl and through /proc. */
static void test_self_reset(void **state)
{
	(void)state;
	skip_if_realtime();
	int64_t orig = pn_slack_get();
	assert_int_equal(pn_slack_set(0), 0);
	int64_t def = pn_slack_get();
	assert_true(def > 0);
	assert_int_equal(pn_slack_set(123), 0);
	assert_int_equal(pn_slack_get(), 123);
	assert_int_equal(pn_slack_set(0), 0);
	assert_int_equal(pn_slack_get(), def);
	assert_int_equal(pn_slack_set(456), 0);
	assert_int_equal(pn_slack_set_pid(gettid(), 0), 0);
	assert_int_equal(pn_slack_get(), def);
	assert_int_equal(pn_slack_set(orig), 0);
}

/* Beyond 2^32 (glibc's prctl() returns int) and beyond 2^63 (the kernel's u64, written
 * through /proc, saturates). */
static void test_self_large(void **state)
{
	(void)state;
	skip_if_realtime();
	pn_skip_if_emulated("qemu-user answers PR_GET_TIMERSLACK through libc's prctl, an int: "
	                    "a slack beyond 2^31 comes back cut");
	int64_t orig = pn_slack_get();
	int64_t big = (1LL << 32) + 5;
	assert_int_equal(pn_slack_set(big), 0);
	assert_int_equal(pn_slack_get(), big);
	assert_int_equal(pn_slack_get_pid(gettid()), big);
	assert_int_equal(pn_slack_set(INT64_MAX), 0);
	assert_int_equal(pn_slack_get(), INT64_MAX);
	assert_int_equal(pn_slack_get_pid(gettid()), INT64_MAX);

	FILE *f = fopen("/proc/self/timerslack_ns", "w");
	assert_non_null(f);
	assert_true(fputs("18446744073709551615", f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pn_slack_get(), INT64_MAX);
	assert_int_equal(pn_slack_get_pid(gettid()), INT64_MAX);
	assert_int_equal(pn_slack_set(orig), 0);
}

/* ---- other threads ---------------------------------------------------------------- */

/* A thread that reports, on request, what pn_slack_get() says in it. */
struct worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pid_t tid;
	int64_t at_start; /* pn_slack_get() when it started */
	int64_t seen;
	int64_t set;  /* >= 0: the worker sets this before reading */
	int req, ack; /* a request is pending while req != ack */
	int stop;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pthread_mutex_lock(&w->mu);
	w->at_start = pn_slack_get();
	w->tid = gettid();
	pthread_cond_broadcast(&w->cv);
	for (;;) {
		while (w->req == w->ack && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		if (w->set >= 0 && pn_slack_set(w->set) != 0)
			w->seen = -1;
		else
			w->seen = pn_slack_get();
		w->ack = w->req;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void worker_start(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	assert_int_equal(pthread_create(&w->thread, NULL, worker_main, w), 0);
	pthread_mutex_lock(&w->mu);
	while (w->tid == 0)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Asks the worker to set its own slack (set >= 0) or not (-1), and returns what
 * pn_slack_get() then says in the worker. */
static int64_t worker_ask(struct worker *w, int64_t set)
{
	pthread_mutex_lock(&w->mu);
	w->set = set;
	w->req++;
	pthread_cond_broadcast(&w->cv);
	while (w->ack != w->req)
		pthread_cond_wait(&w->cv, &w->mu);
	int64_t v = w->seen;
	pthread_mutex_unlock(&w->mu);
	return v;
}

static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	assert_int_equal(pthread_join(w->thread, NULL), 0);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* Another thread's slack, even in the same process, needs CAP_SYS_NICE. */
static void skip_unless_sys_nice(struct worker *w)
{
	if (pn_slack_get_pid(w->tid) == -EPERM) {
		worker_stop(w);
		pn_skip("another thread's slack needs CAP_SYS_NICE");
	}
}

static void test_other_thread(void **state)
{
	(void)state;
	skip_if_realtime();
	int64_t mine = pn_slack_get();
	struct worker w;
	worker_start(&w);
	skip_unless_sys_nice(&w);
	assert_int_not_equal(w.tid, gettid());
	for (size_t i = 0; i < N_VALUES; i++) {
		assert_int_equal(pn_slack_set_pid(w.tid, values[i]), 0);
		assert_int_equal(worker_ask(&w, -1), values[i]);
		assert_int_equal(pn_slack_get_pid(w.tid), values[i]);
		/* per thread: the caller's own slack is untouched */
		assert_int_equal(pn_slack_get(), mine);
	}
	/* the worker sets its own; the caller reads it through /proc */
	for (size_t i = 0; i < N_VALUES; i++) {
		assert_int_equal(worker_ask(&w, values[i] + 1), values[i] + 1);
		assert_int_equal(pn_slack_get_pid(w.tid), values[i] + 1);
	}
	worker_stop(&w);
}

/* A new thread starts with its creator's current value, and 0 (from the thread itself or
 * from outside) brings it back to that value. */
static void test_inherit_and_reset(void **state)
{
	(void)state;
	skip_if_realtime();
	int64_t orig = pn_slack_get();
	for (size_t i = 0; i < N_VALUES; i++) {
		int64_t v = values[i] * 7;
		assert_int_equal(pn_slack_set(v), 0);
		struct worker w;
		worker_start(&w);
		skip_unless_sys_nice(&w);
		assert_int_equal(w.at_start, v);
		/* the creator changing its value later does not reach the thread */
		assert_int_equal(pn_slack_set(v + 3), 0);
		assert_int_equal(worker_ask(&w, -1), v);

		assert_int_equal(worker_ask(&w, 999), 999);
		assert_int_equal(worker_ask(&w, 0), v);

		assert_int_equal(pn_slack_set_pid(w.tid, 4321), 0);
		assert_int_equal(worker_ask(&w, -1), 4321);
		assert_int_equal(pn_slack_set_pid(w.tid, 0), 0);
		assert_int_equal(worker_ask(&w, -1), v);
		assert_int_equal(pn_slack_get_pid(w.tid), v);
		worker_stop(&w);
	}
	assert_int_equal(pn_slack_set(orig), 0);
}

/* ---- errors ----------------------------------------------------------------------- */

static void test_einval(void **state)
{
	(void)state;
	int64_t before = pn_slack_get();
	assert_int_equal(pn_slack_set(-1), -EINVAL);
	assert_int_equal(pn_slack_set(INT64_MIN), -EINVAL);
	assert_int_equal(pn_slack_get(), before);
	assert_int_equal(pn_slack_get_pid(0), -EINVAL);
	assert_int_equal(pn_slack_get_pid(-1), -EINVAL);
	assert_int_equal(pn_slack_get_pid(INT32_MIN), -EINVAL);
	assert_int_equal(pn_slack_set_pid(0, 1000), -EINVAL);
	assert_int_equal(pn_slack_set_pid(-1, 1000), -EINVAL);
	assert_int_equal(pn_slack_set_pid(INT32_MIN, 1000), -EINVAL);
	assert_int_equal(pn_slack_set_pid(getpid(), -1), -EINVAL);
	assert_int_equal(pn_slack_set_pid(getpid(), INT64_MIN), -EINVAL);
	assert_int_equal(pn_slack_get(), before);
}

static void test_esrch(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	/* reaped: /proc/PID is gone */
	assert_int_equal(pn_slack_get_pid(child), -ESRCH);
	assert_int_equal(pn_slack_set_pid(child, 1000), -ESRCH);
	assert_int_equal(pn_slack_set_pid(child, 0), -ESRCH);
	/* above any pid_max (4194304 at most) */
	assert_int_equal(pn_slack_get_pid(INT32_MAX), -ESRCH);
	assert_int_equal(pn_slack_set_pid(INT32_MAX, 1), -ESRCH);
}

/* The child's checks, as an exit status: 0 when all hold. */
static int unprivileged_child(void)
{
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
		return 10;
	if (pn_slack_get_pid(1) != -EPERM)
		return 11;
	if (pn_slack_set_pid(getppid(), 1000) != -EPERM)
		return 12;
	if (pn_slack_get_pid(getppid()) != -EPERM)
		return 13;
	/* its own slack needs no privilege */
	if (pn_slack_set(2000) != 0 || pn_slack_get() != 2000)
		return 14;
	if (pn_slack_get_pid(getpid()) != 2000)
		return 15;
	if (pn_slack_set_pid(getpid(), 3000) != 0 || pn_slack_get() != 3000)
		return 16;
	return 0;
}

static void test_eperm(void **state)
{
	(void)state;
	if (geteuid() != 0)
		pn_skip("EPERM needs root to drop privileges from");
	int64_t before = pn_slack_get();
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(unprivileged_child());
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(pn_slack_get(), before);
}

static void test_fixture_enoent(void **state)
{
	(void)state;
	pn__fs_set_root(PN_FIXTURES "/slack/nofile");
	assert_int_equal(pn_slack_get_pid(4242), -ENOENT);
	assert_int_equal(pn_slack_set_pid(4242, 1000), -ENOENT);
	assert_int_equal(pn_slack_get_pid(4243), -ESRCH);
	assert_int_equal(pn_slack_set_pid(4243, 1000), -ESRCH);
	pn__fs_set_root(NULL);
}

static void test_fixture_values(void **state)
{
	(void)state;
	pn__fs_set_root(PN_FIXTURES "/slack/valid");
	assert_int_equal(pn_slack_get_pid(4242), 50000);
	assert_int_equal(pn_slack_get_pid(4243), INT64_MAX);
	assert_int_equal(pn_slack_get_pid(4244), -ESRCH);

	pn__fs_set_root(PN_FIXTURES "/slack/malformed");
	for (pid_t pid = 1; pid <= 10; pid++) {
		if (pid == 9)
			continue;
		int64_t r = pn_slack_get_pid(pid);
		if (r != -EIO)
			fail_msg("malformed/proc/%d: %lld, expected -EIO", (int)pid, (long long)r);
	}
	/* /proc/9 is a file, not a task's directory */
	assert_int_equal(pn_slack_get_pid(9), -ESRCH);
	assert_int_equal(pn_slack_set_pid(9, 1), -ESRCH);
	pn__fs_set_root(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_self),
	        cmocka_unit_test(test_self_reset),
	        cmocka_unit_test(test_self_large),
	        cmocka_unit_test(test_other_thread),
	        cmocka_unit_test(test_inherit_and_reset),
	        cmocka_unit_test(test_einval),
	        cmocka_unit_test(test_esrch),
	        cmocka_unit_test(test_eperm),
	        cmocka_unit_test_teardown(test_fixture_enoent, reset_root),
	        cmocka_unit_test_teardown(test_fixture_values, reset_root),
	};
	return pn_run("slack", tests, argc, argv);
}
