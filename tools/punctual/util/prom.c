/* SPDX-License-Identifier: MIT */
/* prom.c: Prometheus text exposition (prom.h), as the text format's specification says:
 * label values escape backslash, double quote and newline, and are UTF-8 (a parser rejects
 * the whole file otherwise); HELP and TYPE come once before a metric's samples. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/encode.h"
#include "util/prom.h"

void prom_label(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v, *end = p + strlen(v);
	while (p < end) {
		int bad = utf8_unsafe(p, end);
		if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if (bad) { /* the text \xHH (its backslash escaped): valid UTF-8 */
			for (int i = 0; i < bad; i++)
				fprintf(f, "\\\\x%02x", p[i]);
			p += bad;
		} else {
			if (*p == '\\' || *p == '"')
				fputc('\\', f);
			int n = utf8_len(p, end);
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
}

void prom_help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}
