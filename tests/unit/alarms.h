/* SPDX-License-Identifier: MIT */
/*
 * alarms.h: a SIGALRM every few microseconds during a test, counted, for the tests that
 * check that sleeps stay never-early when signals interrupt them. The handler is
 * installed without SA_RESTART, so interrupted calls see EINTR.
 */
#ifndef PN_TEST_ALARMS_H
#define PN_TEST_ALARMS_H

#include <signal.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms; /* SIGALRMs delivered since alarms_start */

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* Sends SIGALRM every us microseconds until alarms_stop. Returns 0, or -1 (errno). */
static int alarms_start(long us)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		return -1;
	alarms = 0;
	struct itimerval it = {{0, us}, {0, us}};
	return setitimer(ITIMER_REAL, &it, NULL);
}

/* Stops the timer and restores SIGALRM's default action. */
static void alarms_stop(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
}

#endif
