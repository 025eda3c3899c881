/* SPDX-License-Identifier: MIT */
/* diag.c: the tool's exits with a message: usage_error (bad input: one line, exit 2) and
 * die (a runtime failure, or another documented status), each one line on stderr naming the
 * subcommand; and its exits by a signal, after the cleanups registered for them. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>

#include "tool.h"

const char *tool_cmd;

static void vmsg(const char *fmt, va_list ap)
{
	/* One write of a formatted line, so it is never interleaved with progress. */
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

static void cleanup_signal(int sig)
{
	for (int i = ncleanups - 1; i >= 0; i--)
		cleanups[i]();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cleanup_on_signal(void (*fn)(void))
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	if (ncleanups == CLEANUPS)
		return;
	cleanups[ncleanups] = fn;
	ncleanups = ncleanups + 1;
	if (ncleanups > 1)
		return;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old, sa = {.sa_handler = cleanup_signal};
		sigemptyset(&sa.sa_mask); /* one cleanup at a time: the others wait */
		for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
			sigaddset(&sa.sa_mask, sigs[k]);
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}
