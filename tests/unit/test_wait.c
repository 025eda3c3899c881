/* SPDX-License-Identifier: MIT */
/*
 * test_wait.c: pn_poll_until and pn_epoll_wait_until: never 0 before the deadline over
 * 10^4 mixed timeouts; an fd ready before or during the wait (in the kernel part and in
 * the spin) is reported, and a 0 only ever comes when the write came after the deadline
 * or in the last PN__LOOK_WINDOW_NS before it (where the spin's last look ends);
 * a signal handler ends the wait with -EINTR in every phase, an ignored signal does not;
 * a past deadline is one non-blocking poll; a check stalled across the deadline is
 * followed by one more look; bad arguments give -errno; threads at once; where a seccomp
 * filter denies epoll_pwait2 (ENOSYS as before Linux 5.11, or EPERM), the waits fall back
 * to epoll_pwait after one attempt. No test asserts lateness.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wait.h>
#include "wait/plan.h"
#include "wait/wait.h"
#include "deny.h"
#include "runner.h"
#include "splitmix.h"

#define US 1000LL
#define MS 1000000LL

static const int64_t precisions[] = {0, 1, 1000, 10000, 50000, 1000000};
#define NPREC (sizeof(precisions) / sizeof(precisions[0]))

struct fds {
	int pipe[2];
	int ep;
	struct pollfd pfd;
};

static void fds_open(struct fds *f)
{
	assert_int_equal(pipe2(f->pipe, O_NONBLOCK | O_CLOEXEC), 0);
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(f->ep >= 0);
	struct epoll_event e = {.events = EPOLLIN, .data.u64 = 42};
	assert_int_equal(epoll_ctl(f->ep, EPOLL_CTL_ADD, f->pipe[0], &e), 0);
	f->pfd = (struct pollfd){.fd = f->pipe[0], .events = POLLIN};
}

static void fds_close(struct fds *f)
{
	close(f->pipe[0]);
	close(f->pipe[1]);
	close(f->ep);
}

static void drain(struct fds *f)
{
	char b[64];
	while (read(f->pipe[0], b, sizeof(b)) > 0)
		;
}

/* One wait of either kind; the event or revents it reports checked. */
static int wait_one(struct fds *f, bool epoll, int64_t deadline, int64_t precision)
{
	if (epoll) {
		struct epoll_event ev[2];
		memset(ev, 0, sizeof(ev));
		int r = pn_epoll_wait_until(f->ep, ev, 2, deadline, precision);
		if (r == 1)
			assert_true(ev[0].data.u64 == 42 && (ev[0].events & EPOLLIN));
		return r;
	}
	f->pfd.revents = -1;
	int r = pn_poll_until(&f->pfd, 1, deadline, precision);
	if (r == 1)
		assert_true(f->pfd.revents & POLLIN);
	if (r == 0)
		assert_int_equal(f->pfd.revents, 0);
	return r;
}

static void test_never_early(void **state)
{
	(void)state;
	struct fds f;
	fds_open(&f);
	uint64_t seed = 7;
	for (int i = 0; i < 10000; i++) {
		int64_t len = (int64_t)(pn__splitmix64(&seed) % 300000) - 20000; /* some past */
		int64_t p = precisions[pn__splitmix64(&seed) % NPREC];
		bool ep = i & 1;
		int64_t deadline = pn_now() + len;
		assert_int_equal(wait_one(&f, ep, deadline, p), 0);
		int64_t now = pn_now();
		if (now < deadline)
			fail_msg("%s returned 0 early by %lld ns (len %lld, precision %lld)",
			         ep ? "epoll" : "poll", (long long)(deadline - now), (long long)len,
			         (long long)p);
	}
	fds_close(&f);
}

static void test_ready_before_and_past(void **state)
{
	(void)state;
	struct fds f;
	fds_open(&f);
	assert_int_equal(write(f.pipe[1], "x", 1), 1);
	for (int ep = 0; ep < 2; ep++) {
		int64_t t0 = pn_now();
		assert_int_equal(wait_one(&f, ep, t0 + 5000 * MS, 0), 1); /* at once */
		assert_int_equal(wait_one(&f, ep, t0 - MS, 0), 1);        /* past: one poll */
	}
	drain(&f);
	for (int ep = 0; ep < 2; ep++)
		assert_int_equal(wait_one(&f, ep, pn_now() - MS, 0), 0);
	fds_close(&f);
}

struct writer {
	struct fds *f;
	int64_t at;          /* write at this instant */
	int64_t after_write; /* when the write had returned */
};

static void *write_at(void *arg)
{
	struct writer *w = arg;
	while (pn_now() < w->at)
		;
	assert_int_equal(write(w->f->pipe[1], "x", 1), 1);
	__atomic_store_n(&w->after_write, pn_now(), __ATOMIC_RELEASE);
	return NULL;
}

/* A write at a random instant of a wait: 1 once it lands (never before the write); 0
 * only at the deadline and only if the write came after it, or after the last look had
 * started (PN__LOOK_WINDOW_NS at most before the deadline). */
static void ready_during(bool spin_only)
{
	struct fds f;
	fds_open(&f);
	uint64_t seed = spin_only ? 11 : 13;
	if (spin_only) /* wakeups later than the waits: the whole wait is the spin */
		for (int i = 0; i < 64; i++)
			pn__plan_learn(2 * MS, 20 * MS);
	int ones = 0;
	for (int i = 0; i < 200; i++) {
		bool ep = i & 1;
		int64_t start = pn_now(), deadline = start + 2 * MS;
		struct writer w = {&f, start + (int64_t)(pn__splitmix64(&seed) % (3 * MS)), 0};
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, write_at, &w), 0);
		int r = wait_one(&f, ep, deadline, precisions[i % NPREC]);
		int64_t ret = pn_now();
		pthread_join(t, NULL);
		assert_true(r == 0 || r == 1);
		if (r == 0) {
			assert_true(ret >= deadline);
			if (w.after_write < deadline - PN__LOOK_WINDOW_NS)
				fail_msg("a write done %lld ns before the deadline was missed",
				         (long long)(deadline - w.after_write));
		} else {
			assert_true(ret >= w.at);
			ones++;
		}
		drain(&f);
	}
	assert_true(ones > 0);
	fds_close(&f);
}

static void test_ready_during(void **state)
{
	(void)state;
	ready_during(false);
}

static void *spin_thread(void *arg)
{
	(void)arg;
	ready_during(true);
	return NULL;
}

static void test_ready_during_spin(void **state)
{
	(void)state;
	pthread_t t; /* a thread of its own: what it learns stays there */
	assert_int_equal(pthread_create(&t, NULL, spin_thread, NULL), 0);
	pthread_join(t, NULL);
}

static volatile sig_atomic_t handled;
static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

/* SIGALRM to this thread in us microseconds: a thread-directed timer, so that an ignored
 * signal is discarded where it is sent, as for a program that blocks it nowhere. */
static void alarm_in(timer_t *t, long us, void (*h)(int))
{
	signal(SIGALRM, h);
	struct itimerspec its = {{0, 0}, {0, us * 1000}};
	timer_settime(*t, 0, &its, NULL);
}

/* A handler ends the wait with -EINTR, in the kernel part (a long wait) and in the spin
 * (a thread whose class only spins); an ignored signal does not end it. */
static void *signalled(void *arg)
{
	bool spin_only = arg != NULL;
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM};
	sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id, which glibc 2.36 lacks */
	timer_t timer;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0)
		return "timer_create";
	if (spin_only)
		for (int i = 0; i < 64; i++)
			pn__plan_learn(30 * MS, 300 * MS);
	struct fds f;
	fds_open(&f);
	for (int ep = 0; ep < 2; ep++) {
		/* a thread kept off the CPU past the deadline after its handler returned gets
		 * 0, as from the real call: such a try is retried, never early, up to TRIES */
		enum { TRIES = 8 };
		int tries = 0, r;
		do {
			handled = 0;
			alarm_in(&timer, 3000, on_signal);
			int64_t deadline = pn_now() + 30 * MS;
			r = wait_one(&f, ep, deadline, 10 * US);
			int64_t ret = pn_now();
			for (int i = 0; i < 100 && !handled; i++)
				usleep(100); /* under TSan the handler runs at an intercepted call
				              */
			if (handled != 1 || (r != -EINTR && r != 0) || (r == 0 && ret < deadline))
				return "a handled signal did not end the wait with -EINTR";
		} while (r != -EINTR && ++tries < TRIES);
		if (r != -EINTR)
			return "a handled signal never ended the wait with -EINTR (8 tries)";
		alarm_in(&timer, 3000, SIG_IGN);
		int64_t deadline = pn_now() + 20 * MS;
		if (wait_one(&f, ep, deadline, 10 * US) != 0 || pn_now() < deadline)
			return "an ignored signal ended the wait";
	}
	timer_delete(timer);
	signal(SIGALRM, SIG_DFL);
	fds_close(&f);
	return NULL;
}

static void test_eintr(void **state)
{
	(void)state;
	for (int spin = 0; spin < 2; spin++) {
		pthread_t t;
		void *failed;
		assert_int_equal(pthread_create(&t, NULL, signalled, spin ? (void *)1 : NULL), 0);
		pthread_join(t, &failed);
		if (failed)
			fail_msg("%s (%s)", (const char *)failed, spin ? "spin" : "kernel part");
	}
}

static void test_invalid(void **state)
{
	(void)state;
	struct fds f;
	fds_open(&f);
	struct epoll_event ev;
	int64_t d = pn_now() + MS;
	assert_int_equal(pn_poll_until(&f.pfd, 1, d, -1), -EINVAL);
	assert_int_equal(pn_epoll_wait_until(f.ep, &ev, 1, d, -1), -EINVAL);
	assert_int_equal(pn_epoll_wait_until(f.ep, &ev, 0, d, 0), -EINVAL);
	assert_int_equal(pn_epoll_wait_until(-1, &ev, 1, d, 0), -EBADF);
	assert_int_equal(pn_epoll_wait_until(f.pipe[0], &ev, 1, d, 0), -EINVAL); /* not epoll */
	/* ... whatever path the wait takes: past, a spin from the start with no room for a
	 * probe (5 us), a kernel part first */
	assert_int_equal(pn_epoll_wait_until(f.pipe[0], &ev, 1, pn_now() - 1, 0), -EINVAL);
	for (int i = 0; i < 100; i++)
		assert_int_equal(pn_epoll_wait_until(f.pipe[0], &ev, 1, pn_now() + 5 * US, 0),
		                 -EINVAL);
	assert_int_equal(pn_epoll_wait_until(f.pipe[0], &ev, 1, pn_now() + 20 * MS, 0), -EINVAL);
	/* a closed fd: poll reports it (POLLNVAL), it does not fail */
	struct pollfd bad = {.fd = 1000000, .events = POLLIN};
	assert_int_equal(pn_poll_until(&bad, 1, d, 0), 1);
	assert_true(bad.revents & POLLNVAL);
	/* no fds: a plain precise wait */
	d = pn_now() + MS;
	assert_int_equal(pn_poll_until(NULL, 0, d, 1000), 0);
	assert_true(pn_now() >= d);
	errno = 4242;
	assert_int_equal(pn_poll_until(NULL, 0, pn_now() + 100 * US, 0), 0);
	assert_int_equal(errno, 4242); /* errno kept */
	fds_close(&f);
}

/* In a child (the filter stays with the process): system call nr denied with err, then
 * pn_epoll_wait_until times out on an idle set and reports a ready one, never early, and
 * pn_sleep_for sleeps; the child's exit status says which step failed. */
static int denied_child(long nr, int err)
{
	if (pn_deny_syscall(nr, err) != 0)
		return 10;
	if (syscall(nr, -1, NULL, 1, NULL, NULL, 0) != -1 || errno != err)
		return 11;             /* the filter does not deny it */
	for (int i = 0; i < 20; i++) { /* a plain sleep: its probes are the library's own */
		int64_t d = pn_now() + (i % 2 ? 2 * MS : 100 * US);
		if (pn_sleep_until(d, 0) != 0 || pn_now() < d)
			return 30;
	}
	struct fds fs;
	fds_open(&fs);
	struct epoll_event ev;
	for (int i = 0; i < 3; i++) {
		int64_t d = pn_now() + 2 * MS;
		if (pn_epoll_wait_until(fs.ep, &ev, 1, d, 1000) != 0)
			return 12 + i;
		if (pn_now() < d)
			return 20;
	}
	if (write(fs.pipe[1], "x", 1) != 1)
		return 21;
	if (pn_epoll_wait_until(fs.ep, &ev, 1, pn_now() + 2 * MS, 1000) != 1)
		return 22;
	fds_close(&fs);
	return 0;
}

static void test_pwait2_denied(void **state)
{
	(void)state;
	pn_skip_if_emulated("qemu-user refuses seccomp filters (they would deny its own calls)");
	static const int errs[] = {ENOSYS, EPERM, EACCES};
	/* epoll_pwait2 (the wait's own call, replaced by epoll_pwait), ppoll (the probes' and
	 * the spin's looks: the library does without them), and clock_nanosleep (a sleep's
	 * kernel part: pn_sleep_until never fails, it spins) */
	static const long nrs[] = {SYS_epoll_pwait2, SYS_ppoll, SYS_clock_nanosleep};
	static const char *names[] = {"epoll_pwait2", "ppoll", "clock_nanosleep"};
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
			pid_t c = fork();
			assert_true(c >= 0);
			if (c == 0)
				_exit(denied_child(nrs[k], errs[i]));
			int st;
			assert_int_equal(waitpid(c, &st, 0), c);
			assert_true(WIFEXITED(st));
			if (WEXITSTATUS(st) != 0)
				print_error("%s denied with %s: step %d failed\n", names[k],
				            strerror(errs[i]), WEXITSTATUS(st));
			assert_int_equal(WEXITSTATUS(st), 0);
		}
}

static void *threaded(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	struct fds f;
	fds_open(&f);
	for (int i = 0; i < 500; i++) {
		int64_t deadline = pn_now() + (int64_t)(pn__splitmix64(&seed) % (500 * US));
		if (wait_one(&f, i & 1, deadline, precisions[i % NPREC]) != 0 ||
		    pn_now() < deadline)
			return "early or not 0";
	}
	fds_close(&f);
	return NULL;
}

/* A stall across the deadline in one of the spin's checks: the spin reaches the deadline
 * without its last look, and the wait looks once more after it, so an fd that became
 * ready during the stalled check (after that check had looked) is reported, not a
 * timeout. The stall is a waiter whose zero-timeout look, the first one within 50 us of
 * the deadline, looks, runs on to 5 us past the deadline and then becomes ready. */
struct stall_waiter {
	struct pn__waiter w;
	int64_t deadline, stall_start;
	bool ready;
};

static int stall_wait(struct pn__waiter *w, const struct timespec *ts, const sigset_t *mask)
{
	struct stall_waiter *s = (struct stall_waiter *)w;
	(void)mask;
	if (ts->tv_sec || ts->tv_nsec) { /* a probe or the kernel part: a plain sleep */
		nanosleep(ts, NULL);
		return s->ready;
	}
	int64_t now = pn_now();
	int r = s->ready;
	if (!s->stall_start && now >= s->deadline - 50 * US) {
		s->stall_start = now;
		while (pn_now() < s->deadline + 5 * US)
			;
		s->ready = true;
	}
	return r;
}

static void test_stall_at_the_end(void **state)
{
	(void)state;
	/* wakeups later than the waits: the whole wait is the spin, whose checks meet the
	 * stall (not the kernel part) */
	for (int i = 0; i < 64; i++)
		pn__plan_learn(2 * MS, 20 * MS);
	int good = 0;
	for (int i = 0; i < 50 && good < 10; i++) {
		int64_t deadline = pn_now() + 2 * MS;
		struct stall_waiter s = {
		        {.kind = PN__WAIT_OWN, .wait = stall_wait}, deadline, 0, false};
		struct pn__plan p = PN__PLAN_INIT;
		int r = pn__wait(&s.w, &p, CLOCK_MONOTONIC, deadline, 0, 0);
		int64_t ret = pn_now();
		assert_true(ret >= deadline);
		/* only a stall in the spin's checks counts: the kernel part may itself end past
		 * the deadline on a loaded machine, and a stall in the last look (started at
		 * most PN__LOOK_WINDOW_NS before the deadline) sees an fd ready after it as
		 * the next call's, by design */
		if (!s.stall_start || s.stall_start >= deadline - PN__LOOK_WINDOW_NS)
			continue;
		good++;
		if (r != 1)
			fail_msg("an fd ready during a check stalled across the deadline (started "
			         "%lld ns before it): %d, not 1",
			         (long long)(deadline - s.stall_start), r);
	}
	if (good == 0) { /* a machine that took the CPU away at every end (or the class
		          * waits in the kernel, its spins losing the CPU): said, not failed */
		print_message("SKIP: no wait of 50 reached its stall in the spin's checks\n");
		skip();
	}
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, threaded, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++) {
		void *failed;
		pthread_join(t[i], &failed);
		if (failed)
			fail_msg("%s", (const char *)failed);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_invalid),
	        cmocka_unit_test(test_pwait2_denied),
	        cmocka_unit_test(test_ready_before_and_past),
	        cmocka_unit_test(test_never_early),
	        cmocka_unit_test(test_ready_during),
	        cmocka_unit_test(test_ready_during_spin),
	        cmocka_unit_test(test_eintr),
	        cmocka_unit_test(test_stall_at_the_end),
	        cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
