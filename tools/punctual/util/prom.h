/* SPDX-License-Identifier: MIT */
/* prom.h: Prometheus text exposition: label escaping, HELP and TYPE lines. */
#ifndef PUNCTUAL_PROM_H
#define PUNCTUAL_PROM_H

#include <stdio.h>

/* v as a label value, valid UTF-8 whatever v is (other bytes and controls as \xHH). */
void prom_label(FILE *f, const char *v);
/* The "# HELP name text" and "# TYPE name type" lines of a metric. */
void prom_help(FILE *f, const char *name, const char *type, const char *text);

#endif
