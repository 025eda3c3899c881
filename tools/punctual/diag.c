/* SPDX-License-Identifier: MIT */
/* diag.c: the tool's exits with a message: usage_error (bad input: one line, exit 2) and
 * die (a runtime failure, or another documented status), each one line on stderr naming the
 * subcommand. */
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
