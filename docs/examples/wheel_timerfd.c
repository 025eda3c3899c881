/* SPDX-License-Identifier: MIT */
/*
 * wheel_timerfd.c: a pn_wheel driven by epoll through one timerfd, the way an event
 * loop (epoll, libuv's uv_poll, libevent's event_new on the fd) hosts it. Fifty timers
 * with deadlines spread over 200 ms and a precision of 10% of their delay share few
 * wakeups; the program prints how many, and exits 1 if any timer fired early.
 *
 *   cc wheel_timerfd.c $(pkg-config --cflags --libs punctual) -o wheel_timerfd
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <punctual/punctual.h>

#define NTIMERS 50

struct job {
	struct pn_timer timer; /* embedded: no allocation per timer */
	int id;
};

static int fired, early;

static void on_timer(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	(void)arg;
	if (pn_now() < t->deadline)
		early++;
	fired++;
}

int main(void)
{
	struct pn_wheel *w;
	struct job jobs[NTIMERS];
	int r = pn_wheel_new(&w);
	if (r < 0) {
		fprintf(stderr, "pn_wheel_new: %s\n", pn_strerror(r));
		return 1;
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || ep < 0) {
		perror("timerfd_create/epoll_create1");
		return 1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
	if (epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) < 0) {
		perror("epoll_ctl");
		return 1;
	}

	int64_t t0 = pn_now();
	for (int i = 0; i < NTIMERS; i++) {
		int64_t delay = 1000000 + (int64_t)i * 4000000; /* 1 ms .. 197 ms */
		jobs[i].id = i;
		pn_timer_init(&jobs[i].timer, on_timer, &jobs[i]);
		pn_wheel_add(w, &jobs[i].timer, t0 + delay, delay / 10);
	}

	int wakeups = 0;
	/* Re-arm the timerfd after every change to the wheel, then wait on epoll. */
	while (pn_wheel_timerfd(w, tfd) == 1) {
		struct epoll_event got;
		if (epoll_wait(ep, &got, 1, -1) < 1)
			continue; /* EINTR */
		uint64_t expirations;
		if (read(tfd, &expirations, sizeof(expirations)) < 0)
			continue; /* EAGAIN: re-armed before we read */
		pn_wheel_expire(w, pn_now());
		wakeups++;
	}
	printf("%d timers, %d wakeups, %d early\n", fired, wakeups, early);
	close(ep);
	close(tfd);
	pn_wheel_free(w);
	return early || fired != NTIMERS;
}
