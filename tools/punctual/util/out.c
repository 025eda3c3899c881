/* SPDX-License-Identifier: MIT */
/*
 * out.c: the tool's stdout: a report is written into a memory buffer and reaches stdout
 * all at once, or not at all when the command fails on the way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/diag.h"
#include "util/out.h"

FILE *out;
static char *out_buf;
static size_t out_len;

void out_open(void)
{
	out = open_memstream(&out_buf, &out_len);
	if (!out)
		die(1, "out of memory");
}

void out_commit(void)
{
	out_commit_to(stdout);
}

void out_commit_to(FILE *f)
{
	fflush(out);
	if (fwrite(out_buf, 1, out_len, f) != out_len || fflush(f) != 0)
		die(1, "writing the report failed");
	fclose(out);
	free(out_buf);
	out = NULL;
	out_buf = NULL;
}

void stdout_close(void)
{
	/* ferror: a write that failed earlier, whose data fflush no longer holds */
	errno = 0;
	bool lost = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !lost) {
		lost = true;
		e = errno;
	}
	if (lost)
		die(1, "writing to standard output failed%s%s", e ? ": " : "",
		    e ? strerror(e) : "");
}

int out_width(void)
{
	static int width;
	if (width)
		return width;
	const char *c = getenv("COLUMNS");
	char *end;
	long v = c ? strtol(c, &end, 10) : 0;
	if (c && *c && !*end && v >= 40 && v <= 1000)
		return width = (int)v;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return width = ws.ws_col;
	return width = 80;
}

void out_wrap(FILE *f, const char *first, const char *rest, const char *text)
{
	int width = out_width(), col = fprintf(f, "%s", first);
	int indent = (int)strlen(rest), start = col;
	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		int len = (int)strcspn(p, " ");
		if (!len)
			break;
		/* a `command` is one word where it fits a line: a copy of it reads the same
		 * whatever the figures before it */
		const char *close = *p == '`' ? strchr(p + 1, '`') : NULL;
		if (close && close - p >= len) {
			int span = (int)(close + 1 - p) + (int)strcspn(close + 1, " ");
			if (span <= width - indent)
				len = span;
		}
		/* a word that does not fit starts a new line, unless it is the line's first */
		if (col > start && col + 1 + len > width) {
			fprintf(f, "\n%s", rest);
			col = start = indent;
		} else if (col > start) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, (size_t)len, f);
		col += len;
		p += len;
	}
	fputc('\n', f);
}
