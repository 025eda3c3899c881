/* SPDX-License-Identifier: MIT */
/*
 * The real time a wait lends a shared thread stays with the wait and the work its wakeup
 * starts (src/sched/sched.h), run under `punctual run --precise` as root. The program pins
 * itself and two CPU hogs to one CPU, so that its waits are shared ones, then checks with
 * the raw system calls (which the shim does not see):
 * - the lend happens (SCHED_FIFO right after a wait), and a wakeup's long work loses it
 *   (the CPU bound): never SCHED_FIFO after 50 ms of computing;
 * - a handler that runs during a wait runs under the thread's own policy, and so does a
 *   child it forks; a raw fork's child starts SCHED_OTHER;
 * - setcontext out of a handler leaves the thread SCHED_OTHER;
 * - what another thread sets meanwhile (SCHED_BATCH, nice 10, a 5 ms slack through /proc)
 *   stands after the wait (read through libc: the shim's prctl ends the lend first, as the
 *   kernel reports no slack for a real-time thread);
 * - the bound's signal never makes a wait fail: 0 EINTR in 2000 waits with no handler;
 * - sigaction's old action is the program's handler;
 * - a thread that exits right after a wait, whose key destructor then computes 20 ms, is
 *   neither ended by the bound's signal nor left SCHED_FIFO.
 * Exit 0, 1 with the failed check on stderr, 77 (skip) where SCHED_FIFO is denied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* fork as a raw system call, no atfork handler run (clone: aarch64 has no SYS_fork) */
static pid_t raw_fork(void)
{
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}
static int raw_policy(void)
{
	return (int)syscall(SYS_sched_getscheduler, 0) & ~SCHED_RESET_ON_FORK;
}

static void fail(const char *what)
{
	fprintf(stderr, "lend: %s\n", what);
	exit(1);
}

static void sleep_ns(long ns)
{
	struct timespec t = {ns / 1000000000, ns % 1000000000};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* After a wait that takes the lend, sig arrives 0.5 ms into a nanosleep of ns. */
static void signal_during_wait(int sig, long ns)
{
	sleep_ns(1000000);
	timer_t tm;
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig};
	timer_create(CLOCK_MONOTONIC, &ev, &tm);
	struct itimerspec its = {{0, 0}, {0, 500000}};
	timer_settime(tm, 0, &its, NULL);
	struct timespec t = {0, ns};
	nanosleep(&t, NULL);
	timer_delete(tm);
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile sig_atomic_t in_handler_policy = -1, child_policy = -1;
static ucontext_t back;
static volatile sig_atomic_t jumped;

static void on_alarm(int sig)
{
	(void)sig;
	in_handler_policy = raw_policy();
}

static void on_usr1(int sig)
{
	(void)sig;
	pid_t c = raw_fork();
	if (c == 0)
		_exit(raw_policy() == SCHED_OTHER ? 0 : 1);
	int st;
	if (c > 0 && waitpid(c, &st, 0) == c)
		child_policy = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? SCHED_OTHER : SCHED_FIFO;
}

static void on_usr2(int sig)
{
	(void)sig;
	jumped = 1;
	setcontext(&back);
}

static pid_t hog(int cpu)
{
	pid_t p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, whatever ends it */
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(cpu, &s);
		sched_setaffinity(0, sizeof(s), &s);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	return p;
}

static int tid_of_waiter;
static void *outside(void *arg)
{
	int what = *(int *)arg;
	usleep(300000);
	if (what == 0) {
		struct sched_param p = {0};
		sched_setscheduler(tid_of_waiter, SCHED_BATCH, &p);
	} else if (what == 1) {
		setpriority(PRIO_PROCESS, (id_t)tid_of_waiter, 10);
	} else {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", tid_of_waiter);
		int fd = open(path, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "5000000", 7) != 7)
				perror("timerslack_ns");
			close(fd);
		}
	}
	return NULL;
}

/* A 1 s sleep during which another thread changes the waiter: what it set stands. */
static void outside_change(int what)
{
	tid_of_waiter = gettid();
	pthread_t th;
	pthread_create(&th, NULL, outside, &what);
	sleep_ns(1000000000);
	pthread_join(th, NULL);
	struct sched_param p = {0};
	if (what == 0 && raw_policy() != SCHED_BATCH)
		fail("a SCHED_BATCH set from outside during a wait was undone");
	if (what == 0)
		sched_setscheduler(0, SCHED_OTHER, &p);
	if (what == 1 && getpriority(PRIO_PROCESS, 0) != 10)
		fail("a nice 10 set from outside during a wait was undone");
	if (what == 1)
		setpriority(PRIO_PROCESS, 0, 0);
	if (what == 2 && prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) != 5000000)
		fail("a 5 ms slack set from outside during a wait was undone");
}

/* A thread's last work, after its state's destructor (its key came first): 20 ms of CPU. */
static pthread_key_t late_key;
static volatile sig_atomic_t late_policy = -1;
static void late_work(void *v)
{
	(void)v;
	double c0 = cpu_now();
	while (cpu_now() - c0 < 0.02)
		;
	late_policy = raw_policy();
}
static void *exits_after_wait(void *arg)
{
	(void)arg;
	pthread_setspecific(late_key, &late_key);
	for (int i = 0; i < 20; i++)
		sleep_ns(1000000);
	return NULL;
}

int main(void)
{
	if (getenv("PUNCTUAL_EMULATOR")) { /* qemu-user: its own signals, timers and CPU clocks */
		fprintf(stderr, "lend: SKIP: under %s, CPU timers and real time are the host's\n",
		        getenv("PUNCTUAL_EMULATOR"));
		return 77;
	}
	struct sched_param fp = {1}, op = {0};
	if (geteuid() != 0 || syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &fp) != 0)
		return 77; /* no real time to lend */
	syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &op);
	int cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
	pid_t h1 = hog(cpu), h2 = hog(cpu);
	int fifo_seen = 0, eintr = 0;
	for (int i = 0; i < 2000; i++) {
		struct timespec t = {0, 1000000};
		if (nanosleep(&t, NULL) != 0 && errno == EINTR)
			eintr++;
		if (raw_policy() == SCHED_FIFO)
			fifo_seen++;
		if (i % 100 == 99) { /* a long reaction: 50 ms of CPU */
			double c0 = cpu_now();
			while (cpu_now() - c0 < 0.05)
				;
			if (raw_policy() == SCHED_FIFO)
				fail("still SCHED_FIFO after 50 ms of computing after a wait");
		}
	}
	if (eintr)
		fail("a nanosleep without a handler said EINTR");

	struct sigaction a, old;
	memset(&a, 0, sizeof(a));
	a.sa_handler = on_alarm;
	sigaction(SIGALRM, &a, NULL);
	if (sigaction(SIGALRM, NULL, &old) != 0 || old.sa_handler != on_alarm ||
	    (old.sa_flags & SA_SIGINFO))
		fail("sigaction's old action is not the program's handler");
	a.sa_handler = on_usr1;
	sigaction(SIGUSR1, &a, NULL);
	a.sa_handler = on_usr2;
	a.sa_flags = SA_NODEFER;
	sigaction(SIGUSR2, &a, NULL);
	for (int i = 0; i < 50 && in_handler_policy < 0; i++) {
		signal_during_wait(SIGALRM, 2000000);
	}
	if (in_handler_policy != SCHED_OTHER)
		fail("a handler that ran during a wait was not under the thread's own policy");
	for (int i = 0; i < 50 && child_policy < 0; i++) {
		signal_during_wait(SIGUSR1, 2000000);
	}
	if (child_policy != SCHED_OTHER)
		fail("a child forked by a handler during a wait was not SCHED_OTHER");
	getcontext(&back);
	if (!jumped) {
		signal_during_wait(SIGUSR2, 5000000);
	}
	if (jumped && raw_policy() != SCHED_OTHER)
		fail("setcontext out of a handler left the thread SCHED_FIFO");
	pid_t c = raw_fork();
	if (c == 0)
		_exit(raw_policy() == SCHED_OTHER ? 0 : 1);
	int st;
	waitpid(c, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("a raw fork's child did not start SCHED_OTHER");
	for (int w = 0; w < 3; w++)
		outside_change(w);
	pthread_key_create(&late_key, late_work);
	for (int i = 0; i < 10; i++) {
		pthread_t th;
		late_policy = -1;
		pthread_create(&th, NULL, exits_after_wait, NULL);
		pthread_join(th, NULL);
		if (late_policy != SCHED_OTHER)
			fail("a thread's work after its exit began was not under its own policy");
	}
	kill(h1, SIGKILL);
	kill(h2, SIGKILL);
	printf("lend: %d of 2000 wakeups lent, handlers, children, setcontext and outside "
	       "changes kept\n",
	       fifo_seen);
	return 0;
}
