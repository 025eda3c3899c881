/* SPDX-License-Identifier: MIT */
/*
 * test_sleep_state.c: the lifetimes of a thread's sleep state (state.c). A report at
 * the process's exit may read a state while its thread exits (the state stays mapped); a
 * key destructor that sleeps after the state's own destructor leaves nothing behind; a
 * fork()ed child keeps only its own thread's state, its counts started anew. Each test
 * fails (crashes, or finds a state it should not) without the rule it checks.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/slack.h>
#include "wait/state.h"
#include "runner.h"

#define US 1000LL
#define MS 1000000LL

/* ---- a report at exit while a thread exits ----------------------------------------- */

static pthread_barrier_t exit_b;
static struct {
	pthread_t t;
	int tid, seen, tid_after;
	uint64_t sleeps;
	const struct pn__state *state; /* the thread's own, which its exit must leave mapped */
} exiting;

static void *exiter(void *a)
{
	assert_int_equal(pn_sleep_for(MS, 0), 0);
	exiting.tid = (int)syscall(SYS_gettid);
	exiting.state = pn__state_get();
	pthread_barrier_wait(&exit_b); /* the report starts */
	pthread_barrier_wait(&exit_b); /* the report holds this thread's state: exit now */
	return a;
}

/* The report's reader: lets the thread exit (its key destructor runs) while it holds the
 * thread's state, then reads it. */
static void read_late(const struct pn__state *s)
{
	if (s->tid != exiting.tid)
		return;
	pthread_barrier_wait(&exit_b);
	pthread_join(exiting.t, NULL);
	exiting.seen++;
	/* the report's copy, settled; a wait whose deadline passed before its plan (a thread's
	 * first maps its state) counts as past */
	exiting.sleeps = s->st.sleeps + s->st.past;
	exiting.tid_after = exiting.state->tid; /* unmapped memory, were the exit to unmap it */
}

static void test_drain_while_exiting(void **state)
{
	(void)state;
	pthread_barrier_init(&exit_b, NULL, 2);
	assert_int_equal(pthread_create(&exiting.t, NULL, exiter, NULL), 0);
	pthread_barrier_wait(&exit_b);
	pn__state_drain(read_late);
	assert_int_equal(exiting.seen, 1);
	assert_int_equal(exiting.sleeps, 1); /* its last sleep settled by the report */
	assert_int_equal(exiting.tid_after, exiting.tid);
	pthread_barrier_destroy(&exit_b);
}

/* ---- a key destructor that sleeps --------------------------------------------------- */

static pthread_key_t sleepy_key;
#define SLEEPY_THREADS 20
static int sleepy_tid[SLEEPY_THREADS];
static int found_leaked;

/* Sleeps in every destructor round glibc makes (it stops after
 * PTHREAD_DESTRUCTOR_ITERATIONS), after the state's own destructor (its key is older). */
static void sleepy_dtor(void *v)
{
	assert_int_equal(pn_sleep_for(10 * US, 0), 0);
	long round = (long)v;
	if (round < 8)
		pthread_setspecific(sleepy_key, (void *)(round + 1));
}

static void *sleepy(void *a)
{
	assert_int_equal(pn_sleep_for(10 * US, 0), 0);
	*(int *)a = (int)syscall(SYS_gettid);
	pthread_setspecific(sleepy_key, (void *)1L);
	return NULL;
}

static void find_leaked(const struct pn__state *s)
{
	for (int i = 0; i < SLEEPY_THREADS; i++)
		found_leaked += s->tid == sleepy_tid[i];
}

static void test_key_destructor_sleeps(void **state)
{
	(void)state;
	assert_int_equal(pthread_key_create(&sleepy_key, sleepy_dtor), 0);
	for (int i = 0; i < SLEEPY_THREADS; i++) {
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, sleepy, &sleepy_tid[i]), 0);
		pthread_join(t, NULL);
	}
	pn__state_drain(find_leaked);
	assert_int_equal(found_leaked, 0);
	pthread_key_delete(sleepy_key);
}

/* ---- fork ----------------------------------------------------------------------------- */

static pthread_barrier_t fork_b;
static int child_states, child_own;

static void *stays(void *a)
{
	assert_int_equal(pn_sleep_for(10 * US, 0), 0);
	pthread_barrier_wait(&fork_b); /* slept: the parent forks */
	pthread_barrier_wait(&fork_b); /* forked: exit */
	return a;
}

static void count_child(const struct pn__state *s)
{
	child_states++;
	child_own += s->tid == (int)syscall(SYS_gettid) && s->st.sleeps + s->st.past == 1;
}

/* The child's exit status: 0, or which rule failed. */
static int in_child(void)
{
	struct pn_sleep_stats st;
	if (pn_sleep_stats(&st) != 0 || st.sleeps + st.past != 0)
		return 1; /* the parent's sleeps are not the child's */
	if (pn_sleep_for(10 * US, 0) != 0 || pn_sleep_stats(&st) != 0 || st.sleeps + st.past != 1)
		return 2;
	pn__state_drain(count_child);
	if (child_states != 1)
		return 3; /* the parent's other thread is not the child's */
	return child_own == 1 ? 0 : 4;
}

static void test_fork_keeps_own(void **state)
{
	(void)state;
	pthread_barrier_init(&fork_b, NULL, 2);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, stays, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pn_sleep_for(10 * US, 0), 0);
	pthread_barrier_wait(&fork_b);
	pid_t c = fork();
	if (c == 0)
		_exit(in_child());
	int st = -1;
	assert_int_equal(waitpid(c, &st, 0), c);
	pthread_barrier_wait(&fork_b);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&fork_b);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Waits observed as the program made them (run --stats alone): one that timed out counts
 * its lateness and no spin, one whose deadline had passed at the call counts as past, one
 * its event ended apart; the slack is the thread's own, read at the first. */
static void test_observed(void **state)
{
	(void)state;
	struct pn__state *t = pn__state_new();
	assert_non_null(t);
	pn__state_observed(t, 1000, 2000, 2500, true);
	pn__state_observed(t, 3000, 2000, 3100, true);
	pn__state_observed(t, 4000, 9000, 5000, false);
	struct pn_sleep_stats st;
	pn__state_stats(t, &st);
	assert_int_equal(st.sleeps, 1);
	assert_int_equal(st.kernel_only, 1);
	assert_int_equal(st.past, 1);
	assert_int_equal(st.spun_ns, 0);
	assert_int_equal(st.early, 0);
	assert_int_equal(st.late_max_ns, 500);
	assert_int_equal(t->events, 1);
	assert_int_equal(st.slack_ns, pn_slack_get());
	pn__state_free(t);
}

int main(int argc, char **argv)
{
	/* the drain takes every state out of the list: it runs last */
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_observed),
	        cmocka_unit_test(test_fork_keeps_own),
	        cmocka_unit_test(test_key_destructor_sleeps),
	        cmocka_unit_test(test_drain_while_exiting),
	};
	return pn_run("sleep_state", tests, argc, argv);
}
