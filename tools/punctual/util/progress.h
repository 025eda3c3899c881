/* SPDX-License-Identifier: MIT */
/* util/progress.h: a single line of progress on stderr, only when it is a terminal
 * (progress.c). */
#ifndef PUNCTUAL_UTIL_PROGRESS_H
#define PUNCTUAL_UTIL_PROGRESS_H

#include "util/diag.h"

void progress(const char *fmt, ...) PN_FMT(1, 2);
void progress_done(void);

#endif
