/* SPDX-License-Identifier: MIT */
/*
 * event_loop.c: one thread serving fds and timers: a pn_wheel holds the timers, and the
 * loop waits with pn_epoll_wait_until on the wheel's coalesced window, so a timer fires
 * never early and inside its precision window while the fds are served the moment they
 * are ready. Here: 40 timers over 100 ms (precision 5% of their delay) and a pipe that a
 * second thread writes every 7 ms; the program prints the wakeups, the messages read and
 * how late the reads came after the writes, and exits 1 if a timer fired early or a
 * message was lost.
 *
 *   cc event_loop.c $(pkg-config --cflags --libs punctual) -o event_loop
 */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <punctual/punctual.h>

#define NTIMERS  40
#define MESSAGES 12

static int fired, early;

static void on_timer(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	(void)arg;
	early += pn_now() < t->deadline;
	fired++;
}

/* Writes the time it writes, every 7 ms. */
static void *writer(void *arg)
{
	int fd = *(int *)arg;
	for (int i = 0; i < MESSAGES; i++) {
		pn_sleep_for(7000000, 100000);
		int64_t now = pn_now();
		if (write(fd, &now, sizeof(now)) != sizeof(now))
			return NULL;
	}
	return NULL;
}

int main(void)
{
	struct pn_wheel *w;
	struct pn_timer timers[NTIMERS];
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC);
	if (pn_wheel_new(&w) != 0 || ep < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return 1;
	struct epoll_event e = {.events = EPOLLIN, .data.fd = p[0]};
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
	int64_t start = pn_now();
	for (int i = 0; i < NTIMERS; i++) {
		int64_t delay = 2500000 * (i + 1); /* 2.5 ms .. 100 ms */
		pn_timer_init(&timers[i], on_timer, NULL);
		pn_wheel_add(w, &timers[i], start + delay, delay / 20);
	}
	pthread_t t;
	pthread_create(&t, NULL, writer, &p[1]);

	int wakeups = 0, got = 0;
	/* until every timer fired and every message came, however slow the machine (the
	 * 10 s end only stops a loop whose writer died) */
	int64_t worst_read = 0, end = start + 10000000000LL;
	while (pn_now() < end && (got < MESSAGES || pn_wheel_count(w) > 0)) {
		int64_t earliest, latest;
		if (pn_wheel_window(w, &earliest, &latest) != 0)
			earliest = latest = end; /* no timers: wait for the fds until the end */
		/* waking anywhere in [earliest, latest] fires the same timers in their windows */
		struct epoll_event ev;
		int n = pn_epoll_wait_until(ep, &ev, 1, earliest, latest - earliest);
		wakeups++;
		if (n > 0) {
			int64_t sent;
			while (read(p[0], &sent, sizeof(sent)) == sizeof(sent)) {
				int64_t late = pn_now() - sent;
				worst_read = late > worst_read ? late : worst_read;
				got++;
			}
		}
		pn_wheel_expire(w, pn_now());
	}
	pthread_join(t, NULL);
	printf("%d timers fired in %d wakeups (%d early); %d of %d messages read, the latest "
	       "%.1f us after its write\n",
	       fired, wakeups, early, got, MESSAGES, worst_read / 1e3);
	pn_wheel_free(w);
	return early || fired != NTIMERS || got != MESSAGES;
}
