/* SPDX-License-Identifier: MIT */
/* prom.c: Prometheus text exposition (prom.h), as the text format's specification says:
 * label values escape backslash, double quote and newline; HELP and TYPE come once before a
 * metric's samples. */
#include "prom.h"

void prom_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

void prom_help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}
