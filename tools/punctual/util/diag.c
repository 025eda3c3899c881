/* SPDX-License-Identifier: MIT */
/* diag.c: the tool's exits with a message, one line on stderr naming the subcommand; its
 * exits by a signal after the cleanups; and the stop a first SIGINT or SIGTERM asks of a
 * command that measures. */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/diag.h"
#include "util/progress.h"

const char *tool_cmd;

static void vmsg(const char *fmt, va_list ap)
{
	/* one write, never interleaved with progress */
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (tool_cmd)
		fprintf(stderr, "punctual %s: %s", tool_cmd, msg);
	else
		fprintf(stderr, "punctual: %s", msg);
}

_Noreturn void usage_error(const char *fmt, ...)
{
	va_list ap;
	progress_done();
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'punctual%s%s --help')\n", tool_cmd ? " " : "",
	        tool_cmd ? tool_cmd : "");
	exit(EXIT_USAGE);
}

_Noreturn void die(int st, const char *fmt, ...)
{
	va_list ap;
	progress_done();
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(st);
}

#define CLEANUPS 8
static void (*cleanups[CLEANUPS])(void);
static volatile sig_atomic_t ncleanups;

volatile sig_atomic_t tool_stop;
static volatile sig_atomic_t stoppable;
static volatile sig_atomic_t hup_stops; /* SIGHUP stops as SIGTERM does */
static struct timespec stop_at;         /* when tool_stop was set */

/* A repeat within this of the first is the same request (timeout(1) signals the child and
 * then its group; Ctrl-C reaches a whole pipeline); a person's second Ctrl-C is slower. */
#define REPEAT_NS 100000000LL

static long long since_stop(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t); /* async-signal-safe */
	return (t.tv_sec - stop_at.tv_sec) * 1000000000LL + (t.tv_nsec - stop_at.tv_nsec);
}

static void on_signal(int sig)
{
	if (stoppable && (sig != SIGHUP || hup_stops)) {
		if (!tool_stop) {
			clock_gettime(CLOCK_MONOTONIC, &stop_at);
			tool_stop = sig;
			return;
		}
		if (since_stop() < REPEAT_NS)
			return;
	}
	for (int i = ncleanups - 1; i >= 0; i--)
		cleanups[i]();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Our handler for sig (no SA_RESTART: a sleep it interrupts ends), unless the caller set
 * another and force is false. */
static void catch_signal(int sig, bool force)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction old, sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask); /* one cleanup at a time */
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		sigaddset(&sa.sa_mask, sigs[k]);
	if (sigaction(sig, NULL, &old) == 0 &&
	    (force || old.sa_handler == SIG_DFL || old.sa_handler == on_signal))
		sigaction(sig, &sa, NULL);
}

void cleanup_on_signal(void (*fn)(void))
{
	if (ncleanups == CLEANUPS)
		return;
	cleanups[ncleanups] = fn;
	ncleanups = ncleanups + 1;
	if (ncleanups > 1)
		return;
	catch_signal(SIGINT, false);
	catch_signal(SIGTERM, false);
	catch_signal(SIGHUP, false);
}

void stop_on_signals(void)
{
	stoppable = 1;
	/* caught even where the caller ignores them: a stop asked for is a stop */
	catch_signal(SIGINT, true);
	catch_signal(SIGTERM, true);
}

void stop_on_hangup(void)
{
	hup_stops = 1;
	catch_signal(SIGHUP, false);
}

void stop_on_signals_end(void)
{
	stoppable = 0;
}
