/* SPDX-License-Identifier: MIT */
/*
 * calls.c: every call libpunctual-preload.so interposes, with its observable contract
 * printed one line per case (return value, errno, whether the remaining time is in
 * range, whether the mutex is held): the output must be identical with and without the
 * shim. Exits 1 if any sleep returned early. Several threads sleep at once at the end
 * (run under TSan in the tsan build).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int early;

static long long ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec ts(long long v)
{
	return (struct timespec){v / 1000000000LL, v % 1000000000LL};
}

static void report(const char *name, int ret, int err, int extra)
{
	printf("%-34s ret=%d errno=%s extra=%d\n", name, ret, err ? strerrorname_np(err) : "0",
	       extra);
}

static void check_early(const char *name, long long start, long long want, clockid_t c)
{
	if (ns(c) - start < want) {
		fprintf(stderr, "EARLY: %s\n", name);
		early++;
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* a SIGALRM in 5 ms, without SA_RESTART */
static void alarm_in_5ms(void)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 5000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void t_nanosleep(void)
{
	struct timespec req = ts(2000000), rem = {0, 0};
	long long s = ns(CLOCK_MONOTONIC);
	errno = 0;
	int r = nanosleep(&req, &rem);
	report("nanosleep 2ms", r, errno, 0);
	check_early("nanosleep 2ms", s, 2000000, CLOCK_MONOTONIC);

	req = (struct timespec){0, 1000000000};
	errno = 0;
	r = nanosleep(&req, NULL);
	report("nanosleep nsec=1e9", r, errno, 0);
	req = (struct timespec){-1, 0};
	errno = 0;
	r = nanosleep(&req, NULL);
	report("nanosleep sec=-1", r, errno, 0);

	req = ts(50000000);
	alarm_in_5ms();
	s = ns(CLOCK_MONOTONIC);
	errno = 0;
	r = nanosleep(&req, &rem);
	long long left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	int in_range = left > 0 && left < 50000000 && ns(CLOCK_MONOTONIC) - s + left >= 49000000;
	report("nanosleep 50ms, SIGALRM at 5ms", r, errno, in_range);
}

static void t_clock_nanosleep(void)
{
	struct timespec req = ts(2000000), rem;
	long long s = ns(CLOCK_MONOTONIC);
	int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	report("clock_nanosleep MONO rel 2ms", r, 0, 0);
	check_early("clock_nanosleep MONO rel", s, 2000000, CLOCK_MONOTONIC);

	s = ns(CLOCK_MONOTONIC);
	req = ts(s + 3000000);
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, NULL);
	report("clock_nanosleep MONO abs +3ms", r, 0, 0);
	check_early("clock_nanosleep MONO abs", s, 3000000, CLOCK_MONOTONIC);

	s = ns(CLOCK_MONOTONIC);
	req = ts(s - 1000000000LL);
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, NULL);
	report("clock_nanosleep MONO abs past", r, 0, ns(CLOCK_MONOTONIC) - s < 500000000);

	s = ns(CLOCK_REALTIME);
	req = ts(s + 3000000);
	r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &req, NULL);
	report("clock_nanosleep REALTIME abs +3ms", r, 0, 0);
	check_early("clock_nanosleep REALTIME abs", s, 3000000, CLOCK_REALTIME);

	s = ns(CLOCK_MONOTONIC);
	req = ts(2000000);
	r = clock_nanosleep(CLOCK_REALTIME, 0, &req, NULL);
	report("clock_nanosleep REALTIME rel 2ms", r, 0, 0);
	check_early("clock_nanosleep REALTIME rel", s, 2000000, CLOCK_MONOTONIC);

	req = (struct timespec){0, 1000000000};
	report("clock_nanosleep nsec=1e9", clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), 0, 0);
	req = ts(1000);
	report("clock_nanosleep THREAD_CPUTIME",
	       clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL), 0, 0);
	report("clock_nanosleep clock 12345", clock_nanosleep(12345, 0, &req, NULL), 0, 0);

	req = ts(50000000);
	alarm_in_5ms();
	s = ns(CLOCK_MONOTONIC);
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	long long left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	report("clock_nanosleep rel 50ms, SIGALRM", r, 0,
	       left > 0 && left < 50000000 && ns(CLOCK_MONOTONIC) - s + left >= 49000000);
	alarm_in_5ms();
	req = ts(ns(CLOCK_MONOTONIC) + 50000000);
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &req, NULL);
	report("clock_nanosleep abs 50ms, SIGALRM", r, 0, 0);
}

static void t_usleep(void)
{
	long long s = ns(CLOCK_MONOTONIC);
	errno = 0;
	int r = usleep(2000);
	report("usleep 2000", r, errno, 0);
	check_early("usleep", s, 2000000, CLOCK_MONOTONIC);
	alarm_in_5ms();
	errno = 0;
	r = usleep(50000);
	report("usleep 50000, SIGALRM", r, errno, 0);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_rt = PTHREAD_COND_INITIALIZER, cv_mono;

static void *signaller(void *arg)
{
	(void)arg;
	struct timespec d = ts(5000000);
	nanosleep(&d, NULL);
	pthread_mutex_lock(&mu);
	pthread_cond_signal(&cv_mono);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void t_cond(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&cv_mono, &a);
	pthread_condattr_destroy(&a);

	pthread_mutex_lock(&mu);
	long long s = ns(CLOCK_MONOTONIC);
	struct timespec abs = ts(s + 3000000);
	int r = pthread_cond_timedwait(&cv_mono, &mu, &abs);
	report("cond_timedwait MONO 3ms", r, 0, pthread_mutex_trylock(&mu) == EBUSY);
	check_early("cond_timedwait MONO", s, 3000000, CLOCK_MONOTONIC);

	s = ns(CLOCK_REALTIME);
	abs = ts(s + 3000000);
	r = pthread_cond_timedwait(&cv_rt, &mu, &abs);
	report("cond_timedwait REALTIME 3ms", r, 0, pthread_mutex_trylock(&mu) == EBUSY);
	check_early("cond_timedwait REALTIME", s, 3000000, CLOCK_REALTIME);

	abs = ts(ns(CLOCK_REALTIME) - 1000000000LL);
	report("cond_timedwait past", pthread_cond_timedwait(&cv_rt, &mu, &abs), 0, 0);
	abs = (struct timespec){0, 2000000000};
	report("cond_timedwait nsec=2e9", pthread_cond_timedwait(&cv_rt, &mu, &abs), 0, 0);

	s = ns(CLOCK_MONOTONIC);
	abs = ts(s + 3000000);
	r = pthread_cond_clockwait(&cv_rt, &mu, CLOCK_MONOTONIC, &abs);
	report("cond_clockwait MONO 3ms", r, 0, pthread_mutex_trylock(&mu) == EBUSY);
	check_early("cond_clockwait MONO", s, 3000000, CLOCK_MONOTONIC);
	report("cond_clockwait PROCESS_CPUTIME",
	       pthread_cond_clockwait(&cv_rt, &mu, CLOCK_PROCESS_CPUTIME_ID, &abs), 0, 0);

	/* a signal still wakes the waiter long before its 2 s timeout */
	pthread_t t;
	pthread_create(&t, NULL, signaller, NULL);
	s = ns(CLOCK_MONOTONIC);
	abs = ts(s + 2000000000LL);
	r = 0;
	while ((r = pthread_cond_timedwait(&cv_mono, &mu, &abs)) == 0 &&
	       ns(CLOCK_MONOTONIC) - s < 4000000)
		; /* a wakeup before the signal could be sent is spurious */
	report("cond_timedwait signalled", r, 0, ns(CLOCK_MONOTONIC) - s < 1000000000LL);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
}

static void *sleeper(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;
	for (int i = 0; i < 200; i++) {
		long long len = 1000 + rand_r(&seed) % 300000;
		long long s = ns(CLOCK_MONOTONIC);
		struct timespec d = ts(len);
		if (i % 2)
			nanosleep(&d, NULL);
		else {
			d = ts(s + len);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
		}
		if (ns(CLOCK_MONOTONIC) - s < len)
			__atomic_add_fetch(&early, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_nanosleep();
	t_clock_nanosleep();
	t_usleep();
	t_cond();
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, sleeper, (void *)(size_t)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	/* on stderr, so that stdout stays the same with and without the shim */
	unsigned long (*handled)(void) =
	        (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "punctual_preload_handled");
	fprintf(stderr, "shim: %s, %lu calls made precise\n", handled ? "loaded" : "absent",
	        handled ? handled() : 0);
	return early ? 1 : 0;
}
