/* SPDX-License-Identifier: MIT */
/*
 * loop_waits.c: the event-loop waits `punctual run --precise` is measured on, in a C
 * program that knows nothing of libpunctual (bench_loops.sh runs it plain and under the
 * shim). Prints Markdown table rows.
 *
 *   loop_waits waits LABEL N   epoll_wait(1 ms), poll(1 ms), ppoll(100 us),
 *       epoll_pwait2(100 us), select(100 us) on an idle fd (a pipe nobody writes), N of
 *       each after 100 to warm up, and epoll_wait(10 ms), N / 5 after 20, alternating wait by wait
 * with a pure spin to the same kind of deadline (now + the timeout): the machine's floor, measured
 * in the same moments. Lateness = return - (call time + timeout), the instant the call asked the
 * kernel for. Row: p50, p99, max (us), early returns, CPU % (this thread's CPU time during the
 * waits / their wall time: the spins are not counted), the floor's p99 and the target max(2
 * us, 1.5x floor p99), met or missed. loop_waits events LABEL N  event latency: a second thread
 * writes a pipe at random instants (0.5-12 ms apart, the same seeded sequence in every run; it
 * sleeps with the raw syscall, out of the shim's reach) while this one waits in poll(10 ms) or
 * epoll_wait(10 ms); N events each; the time from just before write() to the wait's return: p50,
 * p99, max (us), timeouts seen. loop_waits pass CALL N     the cost of a call the shim only passes
 * through: N rounds of two tight loops of 1000 calls, one through the symbol the program binds to
 * (the shim's, under it) and one straight to libc's function, alternating, in the same moments;
 * CALL is epoll0 (epoll_wait timeout 0), poll0 (poll timeout 0), epollinf (epoll_wait timeout -1 on
 * a ready fd), select0 (select, a zero timeval); prints the median ns per call of each: "bound
 * direct".
 *
 * Exit status 1 if any wait returned before the instant it asked for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int64_t thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

enum { EPOLL_WAIT, POLL, PPOLL, EPOLL_PWAIT2, SELECT, EPOLL_WAIT10, NCALLS };
static const char *const names[NCALLS] = {"epoll_wait(1 ms)", "poll(1 ms)",
                                          "ppoll(100 us)",    "epoll_pwait2(100 us)",
                                          "select(100 us)",   "epoll_wait(10 ms)"};
static const int64_t timeouts[NCALLS] = {1000000, 1000000, 100000, 100000, 100000, 10000000};

static int rfd, epfd;

/* One wait of the call's timeout on the idle fd; its result (must be 0: timeout). */
static int wait_once(int call)
{
	struct epoll_event ev[4];
	struct pollfd p = {rfd, POLLIN, 0};
	struct timespec ts = {0, timeouts[call]};
	switch (call) {
	case EPOLL_WAIT:
	case EPOLL_WAIT10:
		return epoll_wait(epfd, ev, 4, (int)(timeouts[call] / 1000000));
	case POLL:
		return poll(&p, 1, (int)(timeouts[call] / 1000000));
	case PPOLL:
		return ppoll(&p, 1, &ts, NULL);
	case EPOLL_PWAIT2:
		return epoll_pwait2(epfd, ev, 4, &ts, NULL);
	default: {
		fd_set r;
		FD_ZERO(&r);
		FD_SET(rfd, &r);
		struct timeval tv = {0, (long)(timeouts[call] / 1000)};
		return select(rfd + 1, &r, NULL, NULL, &tv);
	}
	}
}

static void setup(void)
{
	int p[2];
	if (pipe(p))
		die("pipe");
	rfd = p[0];
	epfd = epoll_create1(0);
	struct epoll_event e = {.events = EPOLLIN, .data.fd = rfd};
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, rfd, &e))
		die("epoll");
}

static int waits(const char *label, int n)
{
	int64_t *late = malloc(sizeof(*late) * (size_t)n),
	        *spin = malloc(sizeof(*spin) * (size_t)n);
	if (!late || !spin)
		die("malloc");
	int total_early = 0;
	for (int call = 0; call < NCALLS; call++) {
		int64_t to = timeouts[call], cpu = 0, wall = 0;
		int early = 0, n_all = n;
		if (to >= 10000000) /* 10 ms: a fifth as many, and 20 to warm up */
			n = n_all / 5;
		for (int i = to >= 10000000 ? -20 : -100; i < n; i++) {
			int64_t c0 = thread_cpu(), t0 = now();
			int r = wait_once(call);
			int64_t t1 = now(), c1 = thread_cpu();
			if (r != 0) {
				fprintf(stderr, "%s returned %d (%s)\n", names[call], r,
				        strerror(errno));
				exit(2);
			}
			int64_t d = now() + to, t;
			while ((t = now()) < d)
				;
			if (i < 0)
				continue;
			late[i] = t1 - (t0 + to);
			early += late[i] < 0;
			spin[i] = t - d;
			cpu += c1 - c0;
			wall += t1 - t0;
		}
		qsort(late, (size_t)n, sizeof(*late), cmp);
		qsort(spin, (size_t)n, sizeof(*spin), cmp);
		double floor99 = spin[n * 99 / 100] / 1e3, p99 = late[n * 99 / 100] / 1e3;
		double target = floor99 * 1.5 > 2 ? floor99 * 1.5 : 2;
		printf("| %s | %s | %.1f | %.1f | %.1f | %d | %.0f | %.1f | %.1f | %s |\n",
		       names[call], label, late[n / 2] / 1e3, p99, late[n - 1] / 1e3, early,
		       100.0 * (double)cpu / (double)wall, floor99, target,
		       p99 <= target ? "met" : "missed");
		total_early += early;
		n = n_all;
	}
	free(late);
	free(spin);
	return total_early ? 1 : 0;
}

/* Event latency: the writer thread and the loop hand each event over with a semaphore,
 * so that one write is pending at a time. */
static int wfd, nevents;
static sem_t consumed;
static int64_t wrote_at;

static void *writer(void *arg)
{
	(void)arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL; /* xorshift64: the same gaps in every run */
	for (int i = 0; i < nevents; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		struct timespec gap = {0, 500000 + (long)(x % 11500000)};
		/* The raw call: the writer stands for a source outside the loop (a peer, the
		 * network), so the shim does not make its sleeps precise (spinning). */
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &gap, NULL);
		__atomic_store_n(&wrote_at, now(), __ATOMIC_SEQ_CST);
		if (write(wfd, "x", 1) != 1)
			die("write");
		while (sem_wait(&consumed) && errno == EINTR)
			;
	}
	return NULL;
}

static int events(const char *label, int n)
{
	int64_t *lat = malloc(sizeof(*lat) * (size_t)n);
	if (!lat)
		die("malloc");
	int p[2];
	if (pipe(p))
		die("pipe");
	rfd = p[0], wfd = p[1], nevents = n;
	epfd = epoll_create1(0);
	struct epoll_event e = {.events = EPOLLIN, .data.fd = rfd};
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, rfd, &e))
		die("epoll");
	for (int use_epoll = 0; use_epoll < 2; use_epoll++) {
		sem_init(&consumed, 0, 0);
		pthread_t th;
		if (pthread_create(&th, NULL, writer, NULL))
			die("pthread_create");
		int got = 0, timeouts_seen = 0;
		while (got < n) {
			struct pollfd pf = {rfd, POLLIN, 0};
			struct epoll_event ev[4];
			int r = use_epoll ? epoll_wait(epfd, ev, 4, 10) : poll(&pf, 1, 10);
			int64_t t = now();
			if (r < 0)
				die("wait");
			if (r == 0) {
				timeouts_seen++;
				continue;
			}
			lat[got++] = t - __atomic_load_n(&wrote_at, __ATOMIC_SEQ_CST);
			char c;
			if (read(rfd, &c, 1) != 1)
				die("read");
			sem_post(&consumed);
		}
		pthread_join(th, NULL);
		sem_destroy(&consumed);
		qsort(lat, (size_t)n, sizeof(*lat), cmp);
		printf("| %s | %s | %d | %.1f | %.1f | %.1f | %d |\n",
		       use_epoll ? "epoll_wait(10 ms)" : "poll(10 ms)", label, n, lat[n / 2] / 1e3,
		       lat[n * 99 / 100] / 1e3, lat[n - 1] / 1e3, timeouts_seen);
	}
	free(lat);
	return 0;
}

/* One block of n calls of kind through the symbol the program binds to (the shim's,
 * when preloaded) or, direct, libc's own; ns per call. */
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static epoll_wait_fn libc_epoll_wait;
static poll_fn libc_poll;
static select_fn libc_select;

static int select0(select_fn sel)
{
	fd_set r;
	FD_ZERO(&r);
	FD_SET(rfd, &r);
	struct timeval tv = {0, 0};
	return sel(rfd + 1, &r, NULL, NULL, &tv);
}

static double block(int kind, int direct, int n, int ready)
{
	struct epoll_event ev[4];
	struct pollfd pf = {rfd, POLLIN, 0};
	epoll_wait_fn ew = direct ? libc_epoll_wait : epoll_wait;
	poll_fn pl = direct ? libc_poll : poll;
	select_fn sl = direct ? libc_select : select;
	int64_t t0 = now();
	for (int i = 0; i < n; i++) {
		int r = kind == 0   ? ew(epfd, ev, 4, 0)
		        : kind == 1 ? pl(&pf, 1, 0)
		        : kind == 2 ? ew(ready, ev, 4, -1) - 1
		                    : select0(sl);
		if (r != 0)
			die("pass");
	}
	return (double)(now() - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* rounds of two blocks of 1000 calls, one through the program's binding and one
 * straight to libc (found in libc.so.6 itself, past any preload), alternating: the
 * medians of each, ns per call, "bound direct". */
static int pass(const char *call, int rounds)
{
	setup();
	int p[2];
	if (pipe(p) || write(p[1], "x", 1) != 1)
		die("pipe");
	int ready = epoll_create1(0);
	struct epoll_event e = {.events = EPOLLIN, .data.fd = p[0]};
	if (ready < 0 || epoll_ctl(ready, EPOLL_CTL_ADD, p[0], &e))
		die("epoll");
	const char *const kinds[] = {"epoll0", "poll0", "epollinf", "select0"};
	int kind = 0;
	while (kind < 4 && strcmp(call, kinds[kind]))
		kind++;
	if (kind == 4)
		return 2;
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (!libc || !(libc_epoll_wait = (epoll_wait_fn)dlsym(libc, "epoll_wait")) ||
	    !(libc_poll = (poll_fn)dlsym(libc, "poll")) ||
	    !(libc_select = (select_fn)dlsym(libc, "select")))
		die("dlsym libc");
	double *bound = malloc(sizeof(double) * (size_t)rounds);
	double *direct = malloc(sizeof(double) * (size_t)rounds);
	if (!bound || !direct)
		die("malloc");
	block(kind, 0, 1000, ready); /* warm up */
	block(kind, 1, 1000, ready);
	for (int i = 0; i < rounds; i++) {
		bound[i] = block(kind, 0, 1000, ready);
		direct[i] = block(kind, 1, 1000, ready);
	}
	qsort(bound, (size_t)rounds, sizeof(double), cmp_double);
	qsort(direct, (size_t)rounds, sizeof(double), cmp_double);
	printf("%.1f %.1f\n", bound[rounds / 2], direct[rounds / 2]);
	free(bound);
	free(direct);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || atoi(argv[3]) < 100)
		return fprintf(stderr, "usage: loop_waits waits|events LABEL N | pass CALL N\n"), 2;
	int n = atoi(argv[3]);
	if (strcmp(argv[1], "waits") == 0) {
		setup();
		return waits(argv[2], n);
	}
	if (strcmp(argv[1], "events") == 0)
		return events(argv[2], n);
	if (strcmp(argv[1], "pass") == 0)
		return pass(argv[2], n);
	return 2;
}
