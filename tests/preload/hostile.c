/* SPDX-License-Identifier: MIT */
/*
 * hostile.c: the fourth reliability round's cases (an unlucky daemon, a sandbox, a clock
 * stepped back), each a subcommand whose lines are the same with and without the shim
 * (tests/cli/test_preload_hostile.sh runs both and compares):
 *   stdio    a daemon with stderr closed reopens its log onto fd 2 from a SIGHUP handler
 *            during an epoll_wait: fd 2 is still the log afterwards
 *   dup2     ... from another thread with dup2
 *   noppoll [K]  a seccomp filter denies ppoll (EPERM): every interposed wait, 20 times
 *            each, from the K-th (0-11: which one meets the filter first), gives what the
 *            real call gives, never early
 *   keydtor  3000 threads whose key destructor sleeps in every round: the process's data
 *            does not grow by their states
 *   fork     (for run --stats) two threads sleep, the main one forks, the child sleeps once
 *   exits    (for run --stats) 400 threads leave a barrier as the main one exits
 *   explainfd (for run --stats --explain) a thread waits; the main one closes every
 *            descriptor from 3 up and opens a file of its own, which takes the first
 *            number; the thread exits; the file is still the program's (a write to it
 *            works)
 *   dlclose PATH   a thread sleeps through PATH (libpunctual.so), which is dlclosed before
 *            the thread exits
 *   taistep  (root) CLOCK_TAI stepped back 1 s three times while a thread makes 20 us
 *            absolute TAI sleeps: the longest one waits, it does not spin
 *   rtstep   (root) CLOCK_REALTIME stepped back 1 s three times under 20 us
 *            pthread_cond_timedwait waits; the clock is put back
 * Exits 1 if a sleep returned early, 77 (printing why) where the case cannot run here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/deny.h"

static long long ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec ts_of(long long v)
{
	return (struct timespec){v / 1000000000LL, v % 1000000000LL};
}

static const char *err_name(int e)
{
	return e ? strerrorname_np(e) : "0";
}

/* ---- the program's fd 2 ------------------------------------------------------------- */

static char log_path[64];

static void reopen_log(int sig)
{
	(void)sig;
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0 && fd != 2) {
		dup2(fd, 2);
		close(fd);
	}
}

static void fd2_after(const char *how)
{
	int fl = fcntl(2, F_GETFD), e = errno;
	printf("%s: fd 2 after the wait: %s\n", how, fl < 0 ? err_name(e) : "the log");
	if (fl >= 0 && write(2, "", 0) < 0)
		printf("%s: the log cannot be written: %s\n", how, err_name(errno));
}

static int t_stdio(void)
{
	snprintf(log_path, sizeof(log_path), "/tmp/pn-hostile-%d.log", (int)getpid());
	int ep = epoll_create1(EPOLL_CLOEXEC);
	close(2);
	struct sigaction sa = {.sa_handler = reopen_log};
	sigaction(SIGHUP, &sa, NULL);
	timer_t tm;
	struct sigevent se = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGHUP};
	timer_create(CLOCK_MONOTONIC, &se, &tm);
	struct itimerspec it = {{0, 0}, {0, 50000000}};
	timer_settime(tm, 0, &it, NULL);
	struct epoll_event ev;
	int r = epoll_wait(ep, &ev, 1, 200), e = r < 0 ? errno : 0;
	printf("stdio: epoll_wait %d %s\n", r, err_name(e));
	fd2_after("stdio");
	unlink(log_path);
	return 0;
}

static int dup_ep;

static void *dup_waiter(void *a)
{
	struct epoll_event ev;
	int r = epoll_wait(dup_ep, &ev, 1, 200), e = r < 0 ? errno : 0;
	printf("dup2: epoll_wait %d %s\n", r, err_name(e));
	return a;
}

static int t_dup2(void)
{
	snprintf(log_path, sizeof(log_path), "/tmp/pn-hostile-%d.log", (int)getpid());
	dup_ep = epoll_create1(EPOLL_CLOEXEC);
	int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	close(2);
	pthread_t t;
	pthread_create(&t, NULL, dup_waiter, NULL);
	usleep(50000);
	if (dup2(log, 2) != 2)
		printf("dup2: %s\n", err_name(errno));
	close(log);
	pthread_join(t, NULL);
	fd2_after("dup2");
	unlink(log_path);
	return 0;
}

/* ---- ppoll denied ------------------------------------------------------------------- */

static struct timespec rt_in(long len)
{
	return ts_of(ns(CLOCK_REALTIME) + len);
}

#define NWAITS 12
static const char *wait_name[NWAITS] = {"nanosleep",     "clock_nanosleep", "usleep",
                                        "poll",          "ppoll",           "select",
                                        "pselect",       "epoll_wait",      "epoll_pwait2",
                                        "sem_timedwait", "sigtimedwait",    "cond_timedwait"};

/* Wait i of length len: its result as "r errno". */
static void one_wait(int i, long len, int ep, sem_t *s, const sigset_t *ss, char *out, size_t n)
{
	struct timespec t = ts_of(len), ab;
	struct timeval tv = {0, len / 1000};
	struct epoll_event ev;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	long r = 0;
	errno = 0;
	switch (i) {
	case 0:
		r = nanosleep(&t, NULL);
		break;
	case 1:
		r = clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL);
		break;
	case 2:
		r = usleep((useconds_t)(len / 1000));
		break;
	case 3:
		r = poll(NULL, 0, (int)(len / 1000000));
		break;
	case 4:
		r = ppoll(NULL, 0, &t, NULL);
		break;
	case 5:
		r = select(0, NULL, NULL, NULL, &tv);
		break;
	case 6:
		r = pselect(0, NULL, NULL, NULL, &t, NULL);
		break;
	case 7:
		r = epoll_wait(ep, &ev, 1, (int)(len / 1000000));
		break;
	case 8:
		r = epoll_pwait2(ep, &ev, 1, &t, NULL);
		break;
	case 9:
		ab = rt_in(len);
		r = sem_timedwait(s, &ab);
		break;
	case 10:
		r = sigtimedwait(ss, NULL, &t);
		break;
	case 11:
		pthread_mutex_lock(&m);
		ab = rt_in(len);
		r = pthread_cond_timedwait(&c, &m, &ab);
		pthread_mutex_unlock(&m);
		break;
	}
	snprintf(out, n, "%ld %s", r, err_name(r < 0 ? errno : 0));
}

static int t_noppoll(int first_wait)
{
	int ep = epoll_create1(0);
	sem_t s;
	sem_init(&s, 0, 0);
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR2);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (pn_deny_syscall(SYS_ppoll, EPERM)) {
		printf("noppoll: SKIP: seccomp: %s\n", err_name(errno));
		return 77;
	}
	int early = 0;
	for (int j = 0; j < NWAITS; j++) {
		int i = (first_wait + j) % NWAITS; /* the first one meets the filter first */
		char first[64] = "", r[64];
		int same = 1;
		for (int k = 0; k < 20; k++) {
			long len = (k % 2 ? 1000000 : 200000) + (i >= 9 ? 2000 : 0);
			if (i == 3 || i == 7) /* poll and epoll_wait: whole ms, some of them long */
				len = k % 4 ? 1000000 : 20000000;
			long long t0 = ns(CLOCK_MONOTONIC);
			one_wait(i, len, ep, &s, &ss, r, sizeof(r));
			/* the realtime waits' deadline is read before t0: it may be a little short
			 */
			if (ns(CLOCK_MONOTONIC) - t0 < len - (i >= 9 ? 2000 : 0) &&
			    strchr(r, '-') == NULL)
				early++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s", r);
			same &= !strcmp(first, r);
		}
		printf("noppoll: %s: %s%s\n", wait_name[i], first, same ? "" : " (then others)");
	}
	printf("noppoll: early %d\n", early);
	return early ? 1 : 0;
}

/* ---- thread exits ------------------------------------------------------------------- */

static long vm_data_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char l[256];
	long kb = -1;
	while (f && fgets(l, sizeof(l), f))
		if (!strncmp(l, "VmData:", 7))
			kb = atol(l + 7);
	if (f)
		fclose(f);
	return kb;
}

static pthread_key_t sleepy_key;

static void sleepy_dtor(void *v)
{
	nanosleep(&(struct timespec){0, 50000}, NULL);
	long round = (long)v;
	if (round < 8)
		pthread_setspecific(sleepy_key, (void *)(round + 1));
}

static void *sleepy(void *a)
{
	nanosleep(&(struct timespec){0, 50000}, NULL);
	pthread_setspecific(sleepy_key, (void *)1L);
	return a;
}

/* A thread's stack (8 MB) stays cached after the first, so the data grows by it alone;
 * 3000 leaked states (10.7 KB each) would add 32 MB. */
static int t_keydtor(void)
{
	pthread_key_create(&sleepy_key, sleepy_dtor);
	long before = vm_data_kb();
	for (int i = 0; i < 3000; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, sleepy, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
	}
	long grew = vm_data_kb() - before;
	printf("keydtor: 3000 threads: the data %s\n",
	       grew <= 16 * 1024 ? "grew by a thread's stack at most" : "grew by their states");
	return 0;
}

static void *sleeps_then_waits(void *a)
{
	for (int i = 0; i < 70; i++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	pause();
	return a;
}

static int t_fork(void)
{
	pthread_t w;
	pthread_create(&w, NULL, sleeps_then_waits, NULL);
	for (int i = 0; i < 50; i++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	usleep(50000);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		nanosleep(&(struct timespec){0, 100000}, NULL);
		printf("fork: child %d slept once\n", (int)getpid());
		exit(0);
	}
	waitpid(c, NULL, 0);
	printf("fork: parent %d\n", (int)getpid());
	return 0;
}

static pthread_barrier_t exit_b;

static void *leaves(void *a)
{
	nanosleep(&(struct timespec){0, 20000}, NULL);
	pthread_barrier_wait(&exit_b);
	return a;
}

static int t_exits(void)
{
	enum { N = 400 };
	pthread_barrier_init(&exit_b, NULL, N + 1);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 65536);
	for (int i = 0; i < N; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, leaves, NULL))
			return 2;
		pthread_detach(t);
	}
	nanosleep(&(struct timespec){0, 20000}, NULL);
	pthread_barrier_wait(&exit_b);
	exit(0);
}

static pthread_barrier_t dl_b;
static int (*lib_sleep_for)(int64_t, int64_t);

static void *lib_sleeper(void *a)
{
	int r = lib_sleep_for(1000000, 10000);
	printf("dlclose: pn_sleep_for %d\n", r);
	pthread_barrier_wait(&dl_b); /* main dlcloses */
	pthread_barrier_wait(&dl_b);
	return a; /* the library's key destructor runs now */
}

static int t_dlclose(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || !(lib_sleep_for = (int (*)(int64_t, int64_t))dlsym(h, "pn_sleep_for"))) {
		printf("dlclose: %s\n", dlerror());
		return 2;
	}
	pthread_barrier_init(&dl_b, NULL, 2);
	pthread_t t;
	pthread_create(&t, NULL, lib_sleeper, NULL);
	pthread_barrier_wait(&dl_b);
	printf("dlclose: %d\n", dlclose(h));
	pthread_barrier_wait(&dl_b);
	pthread_join(t, NULL);
	printf("dlclose: the thread exited\n");
	return 0;
}

/* ---- clocks stepped back ------------------------------------------------------------ */

struct stepped {
	clockid_t clk;
	int cond;
	volatile int stop;
	long long longest_wall, longest_cpu;
};

static void *step_waiter(void *a)
{
	struct stepped *s = a;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	while (!s->stop) {
		struct timespec d = ts_of(ns(s->clk) + 20000);
		long long w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID);
		if (s->cond) {
			pthread_mutex_lock(&m);
			pthread_cond_timedwait(&c, &m, &d);
			pthread_mutex_unlock(&m);
		} else {
			clock_nanosleep(s->clk, TIMER_ABSTIME, &d, NULL);
		}
		long long w = ns(CLOCK_MONOTONIC) - w0;
		if (w > s->longest_wall) {
			s->longest_wall = w;
			s->longest_cpu = ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		}
	}
	return NULL;
}

static int tai0 = -1;           /* the TAI offset to put back */
static long long rt_minus_mono; /* REALTIME - MONOTONIC to put back; 0: nothing */

static int tai_set(int offset)
{
	struct timex t = {.modes = ADJ_TAI, .constant = offset};
	return adjtimex(&t) < 0 ? -errno : 0;
}

static void clocks_back(void)
{
	if (tai0 >= 0)
		tai_set(tai0);
	if (rt_minus_mono) {
		struct timespec t = ts_of(ns(CLOCK_MONOTONIC) + rt_minus_mono);
		clock_settime(CLOCK_REALTIME, &t);
	}
}

static void on_term(int sig)
{
	clocks_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One step of clk: forwards (+1) or back (-1) by a second. */
static int step(clockid_t clk, int dir)
{
	if (clk == CLOCK_TAI) {
		struct timex q = {0};
		adjtimex(&q);
		return tai_set(q.tai + dir);
	}
	struct timespec t = ts_of(ns(CLOCK_REALTIME) + dir * 1000000000LL);
	return clock_settime(CLOCK_REALTIME, &t) ? -errno : 0;
}

static int t_stepped(const char *name, clockid_t clk, int cond)
{
	struct timex q = {0};
	adjtimex(&q);
	tai0 = clk == CLOCK_TAI ? q.tai : -1;
	rt_minus_mono = clk == CLOCK_REALTIME ? ns(CLOCK_REALTIME) - ns(CLOCK_MONOTONIC) : 0;
	signal(SIGINT, on_term);
	signal(SIGTERM, on_term);
	atexit(clocks_back);
	int r = step(clk, 1);
	if (r) {
		tai0 = -1;
		rt_minus_mono = 0;
		printf("%s: SKIP: cannot step the clock: %s\n", name, err_name(-r));
		return 77;
	}
	int heavy = 0;
	for (int round = 0; round < 3; round++) {
		struct stepped s = {.clk = clk, .cond = cond};
		pthread_t t;
		pthread_create(&t, NULL, step_waiter, &s);
		usleep(20000);
		step(clk, -1); /* the wait in progress is a second further now */
		s.stop = 1;    /* the join waits it out */
		pthread_join(t, NULL);
		/* a wait that the step made last (it spans the second), and used the CPU for it */
		heavy += s.longest_wall > 500000000 && s.longest_cpu * 2 > s.longest_wall;
		if (round < 2)
			step(clk, 1);
	}
	clocks_back();
	printf("%s: the longest waits spun through the step: %d of 3\n", name, heavy);
	return 0;
}

static void *explainfd_thread(void *arg)
{
	volatile int *stage = arg;
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 20; i++)
		nanosleep(&ms, NULL);
	*stage = 1;
	while (*stage != 2)
		nanosleep(&ms, NULL);
	return NULL;
}

static int t_explainfd(void)
{
	volatile int stage = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, explainfd_thread, (void *)&stage) != 0)
		return 3;
	while (stage != 1)
		usleep(1000);
	for (int fd = 3; fd < 1024; fd++) /* close_range(3, ~0) where libc lacks it */
		close(fd);
	char path[] = "/tmp/pn-explainfd-XXXXXX";
	int mine = mkstemp(path);
	unlink(path);
	stage = 2;
	pthread_join(t, NULL);
	int ok = mine >= 0 && write(mine, "x", 1) == 1;
	printf("explainfd: fd %d %s\n", mine, ok ? "still the program's" : "lost");
	if (mine >= 0)
		close(mine);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *w = argc > 1 ? argv[1] : "";
	if (!strcmp(w, "stdio"))
		return t_stdio();
	if (!strcmp(w, "dup2"))
		return t_dup2();
	if (!strcmp(w, "noppoll"))
		return t_noppoll(argc > 2 ? abs(atoi(argv[2])) % NWAITS : 0);
	if (!strcmp(w, "keydtor"))
		return t_keydtor();
	if (!strcmp(w, "fork"))
		return t_fork();
	if (!strcmp(w, "exits"))
		return t_exits();
	if (!strcmp(w, "explainfd"))
		return t_explainfd();
	if (!strcmp(w, "dlclose") && argc > 2)
		return t_dlclose(argv[2]);
	if (!strcmp(w, "taistep"))
		return t_stepped("taistep", CLOCK_TAI, 0);
	if (!strcmp(w, "rtstep"))
		return t_stepped("rtstep", CLOCK_REALTIME, 1);
	fprintf(stderr,
	        "usage: %s stdio|dup2|noppoll [K]|keydtor|fork|exits|explainfd|dlclose PATH|"
	        "taistep|rtstep\n",
	        argv[0]);
	return 2;
}
