/* SPDX-License-Identifier: MIT */
/*
 * test_budget.c: precise sleeps under CPU budgets, through the real calls: never early under
 * any budget (10^4 mixed sleeps and waits); a budget of 0 never spins; the spin share
 * pn_sleep_stats reports is the thread's CPU time in the spin phase (within 10% and the
 * host's stolen time, measured with CLOCK_THREAD_CPUTIME_ID around it); the budget's API (thread,
 * process default, bounds); the statistics' new fields hold together. No test asserts a lateness or
 * a CPU share of the machine: those live in bench/.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wait.h>
#include "kernel.h"
#include "wait/plan.h"
#include "wait/spin.h"
#include "splitmix.h"

#define US 1000LL
#define MS 1000000LL

static const int32_t budgets[] = {
        0, 10000, 50000, 250000, PN_SLEEP_BUDGET_AUTO, PN_SLEEP_BUDGET_FULL};
#define NB (sizeof(budgets) / sizeof(budgets[0]))

static int64_t thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *never_early(void *arg)
{
	int32_t budget = *(const int32_t *)arg;
	if (pn_sleep_set_budget(budget) != 0)
		return "pn_sleep_set_budget failed";
	uint64_t seed = (uint64_t)budget + 7;
	int p[2];
	if (pipe(p))
		return "pipe";
	struct pollfd pf = {p[0], POLLIN, 0};
	for (int i = 0; i < 10000 / (int)NB; i++) {
		uint64_t r = pn__splitmix64(&seed);
		int64_t len = (int64_t)(r % 1500) * US / (r % 7 ? 10 : 1); /* 0-150 us, to 1.5 ms */
		int64_t precision = (int64_t[]){0, 1 * US, 50 * US, 500 * US}[(r >> 20) % 4];
		int64_t d = pn_now() + len;
		int rc = (r >> 30) % 3 ? pn_sleep_until(d, precision)
		                       : pn_poll_until(&pf, 1, d, precision);
		if (rc != 0)
			return "a sleep or a wait failed";
		if (pn_now() < d)
			return "EARLY";
	}
	close(p[0]);
	close(p[1]);
	struct pn_sleep_stats st;
	pn_sleep_stats(&st);
	if (st.early)
		return "the statistics count an early return";
	if (budget == 0 && st.spun_ns != 0)
		return "a budget of 0 spun";
	if (budget == 0 && st.kernel_only != st.sleeps)
		return "a budget of 0 made a sleep that was not the kernel's alone";
	if (st.late_budget > st.late)
		return "more late sleeps for the budget than late sleeps";
	if (st.spun_ns > st.wall_ns)
		return "more spin than time";
	if (st.late_p50_ns < 0 || st.late_p50_ns > st.late_p99_ns ||
	    st.late_p99_ns > st.late_p999_ns || st.late_p999_ns > st.late_max_ns)
		return "the lateness quantiles are out of order";
	return NULL;
}

/* 10^4 mixed sleeps and waits over the budgets, a thread each: none early. */
static void test_never_early(void **state)
{
	(void)state;
	pthread_t t[NB];
	for (size_t i = 0; i < NB; i++)
		assert_int_equal(pthread_create(&t[i], NULL, never_early, (void *)&budgets[i]), 0);
	for (size_t i = 0; i < NB; i++) {
		void *failed;
		assert_int_equal(pthread_join(t[i], &failed), 0);
		if (failed)
			fail_msg("budget %d: %s", budgets[i], (const char *)failed);
	}
}

/* The spin phase alone (the plan's steps, as the shim takes them): the thread's CPU time
 * in it against what pn_sleep_stats adds to spun_ns. Spin-heavy (precision at any cost,
 * 300 us sleeps) so that the spin is most of the phase. */
/* The machine's stolen time so far, in ns (/proc/stat's cpu line, 8th field: time the
 * hypervisor ran something else while a vCPU wanted to run), or 0 where unknown. */
static int64_t steal_ns(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = {0};
	if (!f)
		return 0;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	               &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	return n == 8 && hz > 0 ? (int64_t)(v[7] * (1000000000ULL / (unsigned long long)hz)) : 0;
}

/* The calling thread's run-queue wait so far (schedstat's second field), ns; 0 unread. */
static int64_t queued_ns(void)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run = 0, wait = 0;
	if (!f)
		return 0;
	int n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (int64_t)wait : 0;
}

static void *spin_share(void *arg)
{
	(void)arg;
	pn_sleep_set_budget(PN_SLEEP_BUDGET_FULL);
	for (int i = 0; i < 200; i++) /* learn first */
		pn_sleep_until(pn_now() + 300 * US, 1 * US);
	struct pn_sleep_stats a, b;
	pn_sleep_stats(&a);
	int64_t cpu = 0, steal = steal_ns(), queued = 0;
	for (int i = 0; i < 1000; i++) {
		struct pn__plan p = PN__PLAN_INIT;
		pn__plan_make(&p, CLOCK_MONOTONIC, pn_now() + 300 * US, 1 * US, 0, NULL);
		if (p.past)
			continue;
		if (p.kernel) {
			while (pn__kernel_raw.sleep_abs(CLOCK_MONOTONIC, p.target) == -EINTR)
				;
			pn__plan_woke(&p, true);
		}
		int64_t q0 = queued_ns(), c0 = thread_cpu();
		pn__spin_finish(&p);
		cpu += thread_cpu() - c0;
		queued += queued_ns() - q0;
	}
	pn_sleep_stats(&b);
	steal = steal_ns() - steal;
	int64_t spun = b.spun_ns - a.spun_ns;
	if (cpu < 10 * MS)
		return "the sleeps hardly spun: nothing to compare";
	/* Never more than the spin's CPU (the CPU time read itself, two system calls a sleep,
	 * is in cpu, not in spun): a spin preempted, its stretch counted, would exceed it.
	 * In a VM the kernel takes the stolen time it learns of out of the task running when
	 * it learns it (steal accounting, at a clock update), time that may have been stolen
	 * outside the spin: so the bound is 110% plus the machine's steal meanwhile (a busy
	 * host, CI of 2026-12-06: spun 111% of cpu). Less, within reason: a gap of over
	 * PN__GAP_NS between two clock reads is taken as the CPU taken away, but an interrupt
	 * handled on the thread's own CPU is charged to its CPU time too (beside stress-ng
	 * under TSan: spun 82% of cpu). A preemption shorter than PN__GAP_NS is counted in
	 * the spin, at most the run-queue wait of the spins (CI under TSan, a loaded guest
	 * that reports no steal: spun 119%). */
	if (spun > cpu + cpu / 10 + steal + queued || spun < cpu / 2) {
		static char why[240];
		snprintf(why, sizeof(why),
		         "spun_ns grew by %lld ns, the spin phase took %lld ns of CPU: not within "
		         "[50%%, 110%% + %lld ns stolen + %lld ns queued]",
		         (long long)spun, (long long)cpu, (long long)steal, (long long)queued);
		return why;
	}
	return NULL;
}

static void test_spin_share(void **state)
{
	(void)state;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, spin_share, NULL), 0);
	void *failed;
	assert_int_equal(pthread_join(t, &failed), 0);
	if (failed)
		fail_msg("%s", (const char *)failed);
}

static void *api(void *arg)
{
	(void)arg;
	/* a new thread follows the process's default */
	if (pn_sleep_budget() != 123456)
		return "a new thread does not follow the process's default";
	if (pn_sleep_set_budget(50000) != 0 || pn_sleep_budget() != 50000)
		return "the thread's own budget";
	if (pn_sleep_set_budget(PN_SLEEP_BUDGET_AUTO) != 0 || pn_sleep_budget() != 123456)
		return "AUTO does not go back to the process's default";
	return NULL;
}

static void test_api(void **state)
{
	(void)state;
	int32_t was = pn_sleep_budget();
	assert_int_equal(pn_sleep_set_budget(-2), -EINVAL);
	assert_int_equal(pn_sleep_set_budget(PN_SLEEP_BUDGET_FULL + 1), -EINVAL);
	assert_int_equal(pn_sleep_set_default_budget(-5), -EINVAL);
	assert_int_equal(pn_sleep_set_default_budget(2000000), -EINVAL);
	assert_int_equal(pn_sleep_budget(), was); /* untouched by the failures */
	assert_int_equal(pn_sleep_set_default_budget(123456), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, api, NULL), 0);
	void *failed;
	assert_int_equal(pthread_join(t, &failed), 0);
	assert_int_equal(pn_sleep_set_default_budget(PN_SLEEP_BUDGET_AUTO), 0);
	if (failed)
		fail_msg("%s", (const char *)failed);
	/* the statistics of a thread that never slept */
	struct pn_sleep_stats st;
	assert_int_equal(pn_sleep_stats(&st), 0);
	assert_int_equal(st.sleeps, 0);
	assert_int_equal(st.late_p50_ns, -1);
	assert_int_equal(st.late_max_ns, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_api),
	        cmocka_unit_test(test_never_early),
	        cmocka_unit_test(test_spin_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
