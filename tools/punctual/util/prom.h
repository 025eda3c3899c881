/* SPDX-License-Identifier: MIT */
/* prom.h: Prometheus text exposition (prom.c): the label escaping and the HELP and TYPE
 * lines every metric of `probe --prom` carries. */
#ifndef PUNCTUAL_PROM_H
#define PUNCTUAL_PROM_H

#include <stdio.h>

/* v as a label value: backslash, double quote and newline escaped; a byte that is not
 * UTF-8 and every other control character as the text \xHH (valid UTF-8 whatever v is). */
void prom_label(FILE *f, const char *v);
/* The "# HELP name text" and "# TYPE name type" lines of a metric. */
void prom_help(FILE *f, const char *name, const char *type, const char *text);

#endif
