/* SPDX-License-Identifier: MIT */
/* util/out.h: what a command prints: stdout through a memory stream committed on success,
 * the text width, wrapped text, durations for people. */
#ifndef PUNCTUAL_UTIL_OUT_H
#define PUNCTUAL_UTIL_OUT_H

#include <stdio.h>
#include "contract.h"

/* Everything a command prints to stdout goes through out, flushed by out_commit() only on
 * success: an error never leaves half a report behind. */
extern FILE *out;
void out_open(void);
void out_commit(void);
/* out_commit() onto f. */
void out_commit_to(FILE *f);
/* Flushes and closes stdout: output that did not reach it is one line and exit 1. main()
 * calls it once a subcommand returns; a path that exits 0 by itself calls it first. */
void stdout_close(void);
/* $COLUMNS (40 to 1000), else the terminal's width when stdout is one, else 80. */
int out_width(void);
/* text wrapped to out_width(): first before the first line, rest before the others; a
 * word longer than a line stays whole. */
void out_wrap(FILE *f, const char *first, const char *rest, const char *text);

/* ns for people ("12.5 us"). */
static inline const char *fmt_ns(char *buf, size_t n, double ns)
{
	return pn__duration_format(buf, n, ns);
}

#endif
