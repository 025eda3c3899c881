/* SPDX-License-Identifier: MIT */
/* progress.c: one self-overwriting status line on stderr, shown only on a terminal. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "util/progress.h"

static int shown = -1; /* -1: not yet decided */

void progress(const char *fmt, ...)
{
	if (shown < 0)
		shown = isatty(STDERR_FILENO) ? 0 : 2;
	if (shown == 2)
		return;
	char line[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	shown = 1;
}

void progress_done(void)
{
	if (shown == 1) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		shown = 0;
	}
}
