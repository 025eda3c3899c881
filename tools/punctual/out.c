/* SPDX-License-Identifier: MIT */
/*
 * out.c: the tool's stdout: a report is written into a memory buffer and reaches stdout
 * all at once, or not at all when the command fails on the way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

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
	fflush(out);
	if (fwrite(out_buf, 1, out_len, stdout) != out_len || fflush(stdout) != 0)
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
