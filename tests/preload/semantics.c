/* SPDX-License-Identifier: MIT */
/*
 * semantics.c: the cases where libpunctual-preload.so once differed from the real calls,
 * each a subcommand that prints one line, the same with and without the shim
 * (tests/cli/test_preload_semantics.sh runs both and compares):
 *   stack    a thread with a PTHREAD_STACK_MIN stack is created, and makes a sleep and a
 *            wait of each kind on it
 *   sigign   sigtimedwait discards a signal of its set that is not blocked and ignored
 *            (SIGURG's default, SIGUSR1 set to SIG_IGN), as the kernel does: EAGAIN
 *   cancel   a pending cancel ends a short nanosleep, usleep, clock_nanosleep and
 *            sem_timedwait (cancellation points), and a loop of 20 us nanosleeps stops
 *            at the first one after the cancel
 *   eintr    no nanosleep returns EINTR with nothing remaining, beside a 997 us
 *            interval timer (the kernel returns 0 once the time has passed); it and
 *            usleep never early
 *   eperm    epoll_wait where a seccomp filter denies epoll_pwait2 with EPERM
 *   enosys   the same with ENOSYS (a kernel before 5.11)
 *   close    another thread closes the epoll fd 20 ms into a 100 ms epoll_wait
 *   reuse    ... and reuses its number for a new epoll set with a ready EPOLLONESHOT
 *            event, which its owner must still see
 *   semclock sem_clockwait on CLOCK_MONOTONIC and CLOCK_REALTIME, nobody posts (with
 *            "monotonic": the first alone, for strace)
 *   clocks   clock_nanosleep on CLOCK_BOOTTIME and CLOCK_TAI, relative and absolute:
 *            never early (on stderr: whether the shim made them precise)
 * Exits 1 if a sleep returned early.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void *nop(void *a)
{
	return a;
}

/* In a thread of PTHREAD_STACK_MIN: one of each kind of call the shim makes precise (a
 * shim that used kilobytes of the stack would overflow it here). */
static void *small_calls(void *a)
{
	int p[2];
	if (pipe(p))
		return a;
	struct pollfd pf = {p[0], POLLIN, 0};
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN}, out[2];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {0, 200};
	sem_t s;
	sem_init(&s, 0, 0);
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec = abs.tv_nsec < 999000000 ? abs.tv_nsec + 200000 : abs.tv_nsec;
	nanosleep(&(struct timespec){0, 200000}, NULL);
	usleep(200);
	poll(&pf, 1, 1);
	epoll_wait(ep, out, 2, 1);
	select(p[0] + 1, &r, NULL, NULL, &tv);
	sem_timedwait(&s, &abs);
	close(ep);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static int t_stack(void)
{
	pthread_attr_t at;
	pthread_t t;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN);
	int r = pthread_create(&t, &at, nop, NULL);
	if (r == 0)
		pthread_join(t, NULL);
	printf("stack: pthread_create %s\n", err_name(r));
	if (r == 0 && (r = pthread_create(&t, &at, small_calls, NULL)) == 0)
		pthread_join(t, NULL);
	pthread_attr_destroy(&at);
	printf("stack: sleeps and waits on it %s\n", err_name(r));
	return 0;
}

/* sigtimedwait(500 ms) for sig, not blocked, which a child sends 100 ms in */
static void sigign_one(int sig, const char *how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pid_t c = fork();
	if (c == 0) {
		usleep(100000);
		kill(getppid(), sig);
		_exit(0);
	}
	int r = sigtimedwait(&set, NULL, &(struct timespec){0, 500000000}), e = r < 0 ? errno : 0;
	waitpid(c, NULL, 0);
	printf("sigign: %s: %d %s\n", how, r, err_name(e));
}

static int t_sigign(void)
{
	sigign_one(SIGURG, "SIGURG by default");
	signal(SIGUSR1, SIG_IGN);
	sigign_one(SIGUSR1, "SIGUSR1 set to SIG_IGN");
	return 0;
}

static sem_t never;
static volatile int cancel_sent;
static long after_cancel;

static void *pending_cancel(void *what)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cancel(pthread_self());
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	struct timespec abs;
	switch (*(const char *)what) {
	case 'n':
		nanosleep(&(struct timespec){0, 20000}, NULL);
		break;
	case 'u':
		usleep(20);
		break;
	case 'c':
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 20000}, NULL);
		break;
	case 's':
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_nsec += 20000;
		if (abs.tv_nsec >= 1000000000) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000;
		}
		sem_timedwait(&never, &abs);
		break;
	}
	puts("cancel: ran on after a cancellation point");
	return NULL;
}

static void *sleep_loop(void *a)
{
	for (;;) {
		if (cancel_sent)
			after_cancel++;
		nanosleep(&(struct timespec){0, 20000}, NULL);
	}
	return a;
}

static int t_cancel(void)
{
	static const char *calls[] = {"nanosleep", "usleep", "clock_nanosleep", "sem_timedwait"};
	sem_init(&never, 0, 0);
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		void *r;
		pthread_create(&t, NULL, pending_cancel, (void *)calls[i]);
		pthread_join(t, &r);
		printf("cancel: %s with a cancel pending: %s\n", calls[i],
		       r == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	}
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, sleep_loop, NULL);
	usleep(20000);
	pthread_cancel(t);
	cancel_sent = 1;
	pthread_join(t, &r);
	/* the loop may see the flag once, before the sleep that acts on the cancel */
	printf("cancel: 20 us sleep loop: %s, %s\n", r == PTHREAD_CANCELED ? "cancelled" : "not",
	       after_cancel <= 1 ? "stopped at the next sleep" : "ran on");
	return 0;
}

static void on_alrm(int s)
{
	(void)s;
}

static int t_eintr(int n)
{
	struct sigaction sa = {.sa_handler = on_alrm};
	sigaction(SIGALRM, &sa, NULL);
	timer_t tm;
	struct sigevent se = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
	timer_create(CLOCK_MONOTONIC, &se, &tm);
	struct itimerspec it = {{0, 997000}, {0, 997000}};
	timer_settime(tm, 0, &it, NULL);
	int zero = 0, early = 0;
	for (int i = 0; i < n; i++) {
		struct timespec req = {0, 1000000}, rem = {-1, -1};
		long long t0 = ns(CLOCK_MONOTONIC);
		int r = nanosleep(&req, &rem);
		if (r == -1 && errno == EINTR && !rem.tv_sec && !rem.tv_nsec)
			zero++;
		if (r == 0 && ns(CLOCK_MONOTONIC) - t0 < 1000000)
			early++;
		/* usleep has no remaining time to show: never early is what it can show */
		t0 = ns(CLOCK_MONOTONIC);
		if (usleep(100) == 0 && ns(CLOCK_MONOTONIC) - t0 < 100000)
			early++;
	}
	timer_delete(tm);
	printf("eintr: %d nanosleeps of 1 ms: EINTR with nothing left %d, early %d\n", n, zero,
	       early);
	return early ? 1 : 0;
}

static int deny_pwait2(int err)
{
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_epoll_pwait2, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* epoll_wait(10 ms) on an idle pipe, twice, then once with it readable */
static int t_denied(int err)
{
	if (deny_pwait2(err)) {
		perror("seccomp");
		return 2;
	}
	int p[2];
	if (pipe(p))
		return 2;
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7}, out[4];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	for (int i = 0; i < 3; i++) {
		if (i == 2 && write(p[1], "x", 1) != 1)
			return 2;
		long long t0 = ns(CLOCK_MONOTONIC);
		int r = epoll_wait(ep, out, 4, 10), e = r < 0 ? errno : 0;
		int early = r == 0 && ns(CLOCK_MONOTONIC) - t0 < 10000000;
		printf("%s: epoll_wait %d %s%s%s\n", err == EPERM ? "eperm" : "enosys", r,
		       err_name(e), r > 0 && out[0].data.u32 == 7 ? " data 7" : "",
		       early ? " EARLY" : "");
	}
	return 0;
}

static int ep, other_ep;
static int pipe_fds[2];
static volatile int entering; /* the main thread is about to call epoll_wait */

/* 20 ms after the main thread reaches its epoll_wait (on a loaded machine the thread may
 * start much later than its creator, and a close before the call is another case). */
static void *closer(void *reuse)
{
	while (!entering)
		usleep(100);
	usleep(20000);
	close(ep);
	if (reuse) { /* the number again, for another set with a ready one-shot event */
		other_ep = epoll_create1(0);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = 42};
		epoll_ctl(other_ep, EPOLL_CTL_ADD, pipe_fds[0], &ev);
		if (write(pipe_fds[1], "x", 1) != 1)
			return NULL;
	}
	return NULL;
}

static int t_close(int reuse)
{
	int idle[2];
	if (pipe(idle) || pipe(pipe_fds))
		return 2;
	ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1}, out[4];
	epoll_ctl(ep, EPOLL_CTL_ADD, idle[0], &ev);
	pthread_t t;
	pthread_create(&t, NULL, closer, reuse ? &t : NULL);
	entering = 1;
	int r = epoll_wait(ep, out, 4, 100), e = r < 0 ? errno : 0;
	pthread_join(t, NULL);
	printf("%s: the wait: %d %s%s\n", reuse ? "reuse" : "close", r, err_name(e),
	       r > 0 && out[0].data.u32 == 42 ? " (the other set's event)" : "");
	if (reuse) {
		r = epoll_wait(other_ep, out, 4, 0);
		printf("reuse: the other set's owner: %d%s\n", r,
		       r > 0 && out[0].data.u32 == 42 ? " data 42" : "");
	}
	return 0;
}

static int t_semclock(int only_monotonic)
{
	static const clockid_t clk[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
	static const char *name[] = {"CLOCK_MONOTONIC", "CLOCK_REALTIME"};
	sem_t s;
	sem_init(&s, 0, 0);
	int early = 0;
	for (int i = 0; i < 2 - only_monotonic; i++) {
		long long d = ns(clk[i]) + 20000000;
		struct timespec abs = ts_of(d);
		int r = sem_clockwait(&s, clk[i], &abs), e = r < 0 ? errno : 0;
		if (ns(clk[i]) < d)
			early++;
		printf("semclock: sem_clockwait %s 20 ms: %d %s\n", name[i], r, err_name(e));
	}
	return early ? 1 : 0;
}

static int t_clocks(void)
{
	static const clockid_t clk[] = {CLOCK_BOOTTIME, CLOCK_TAI};
	static const char *name[] = {"CLOCK_BOOTTIME", "CLOCK_TAI"};
	unsigned long (*handled)(void) =
	        (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "punctual_preload_handled");
	int early = 0;
	for (int i = 0; i < 2; i++)
		for (int abs = 0; abs < 2; abs++) {
			unsigned long before = handled ? handled() : 0;
			int bad = 0, r = 0;
			for (int n = 0; n < 50; n++) {
				long long len = 100000 + n * 20000, t0 = ns(clk[i]);
				struct timespec req = ts_of(abs ? t0 + len : len);
				r |= clock_nanosleep(clk[i], abs ? TIMER_ABSTIME : 0, &req, NULL);
				if (ns(clk[i]) < t0 + len)
					bad++;
			}
			early += bad;
			printf("clocks: %s %s: %d, early %d\n", name[i],
			       abs ? "absolute" : "relative", r, bad);
			if (handled)
				fprintf(stderr, "clocks: %s %s: %lu of 50 made precise\n", name[i],
				        abs ? "absolute" : "relative", handled() - before);
		}
	return early ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *w = argc > 1 ? argv[1] : "";
	if (!strcmp(w, "stack"))
		return t_stack();
	if (!strcmp(w, "sigign"))
		return t_sigign();
	if (!strcmp(w, "cancel"))
		return t_cancel();
	if (!strcmp(w, "eintr"))
		return t_eintr(argc > 2 ? atoi(argv[2]) : 2000);
	if (!strcmp(w, "eperm"))
		return t_denied(EPERM);
	if (!strcmp(w, "enosys"))
		return t_denied(ENOSYS);
	if (!strcmp(w, "close"))
		return t_close(0);
	if (!strcmp(w, "reuse"))
		return t_close(1);
	if (!strcmp(w, "semclock"))
		return t_semclock(argc > 2 && !strcmp(argv[2], "monotonic"));
	if (!strcmp(w, "clocks"))
		return t_clocks();
	fprintf(stderr,
	        "usage: %s stack|sigign|cancel|eintr [N]|eperm|enosys|close|reuse|"
	        "semclock [monotonic]|clocks\n",
	        argv[0]);
	return 2;
}
