/* SPDX-License-Identifier: MIT */
/* json.c: a small streaming JSON writer (escaping, commas, nesting) for every --json. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <punctual/hist.h>
#include "util/diag.h"
#include "util/encode.h"
#include "util/json.h"

/* The len bytes at s as a JSON string, whatever they are: control characters escaped,
 * and each byte that is not part of well-formed UTF-8 replaced by U+FFFD (written as an
 * escape). */
static void put_escaped(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		int n = utf8_len(p, end);
		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		/* the short escapes JSON has, then \uXXXX for the other control characters */
		static const char plain[] = "\"\\\n\t\r", escaped[] = "\"\\ntr";
		const char *e = *p ? strchr(plain, *p) : NULL;
		if (e)
			fprintf(f, "\\%c", escaped[e - plain]);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
		p++;
	}
	fputc('"', f);
}

/* The comma before a value, and its key inside an object. */
static void sep(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		put_escaped(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	if (j->depth == JSON_DEPTH)
		die(1, "the JSON writer's nesting limit (%d) reached: a bug", JSON_DEPTH);
	sep(j, key);
	fputc(c, j->f);
	j->need_comma[++j->depth] = false;
}

static void close_(struct json *j, char c)
{
	if (j->depth == 0)
		die(1, "the JSON writer closed '%c' with nothing open: a bug", c);
	fputc(c, j->f);
	j->depth--;
}

void json_obj(struct json *j, const char *key)
{
	open_(j, key, '{');
}

void json_obj_end(struct json *j)
{
	close_(j, '}');
}

void json_arr(struct json *j, const char *key)
{
	open_(j, key, '[');
}

void json_arr_end(struct json *j)
{
	close_(j, ']');
}

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	json_obj(j, NULL);
}

void json_report_begin(struct json *j, FILE *f, const char *command)
{
	json_begin(j, f);
	json_str(j, "tool", "punctual");
	json_str(j, "version", PUNCTUAL_VERSION);
	json_str(j, "command", command);
}

void json_end(struct json *j)
{
	json_obj_end(j);
	fputc('\n', j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	if (j->depth || key)
		sep(j, key);
	if (!v)
		fputs("null", j->f);
	else
		put_escaped(j->f, v, strlen(v));
}

void json_int(struct json *j, const char *key, int64_t v)
{
	sep(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
	sep(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_num(struct json *j, const char *key, double v)
{
	sep(j, key);
	/* JSON has no NaN or infinity. */
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_none(struct json *j, const char *key)
{
	sep(j, key);
	fputs("null", j->f);
}

void json_int_if(struct json *j, const char *key, bool known, int64_t v)
{
	if (known)
		json_int(j, key, v);
	else
		json_none(j, key);
}

void json_words(struct json *j, const char *key, const char *s)
{
	json_arr(j, key);
	for (size_t n; *(s += strspn(s, " ")); s += n) {
		n = strcspn(s, " ");
		sep(j, NULL);
		put_escaped(j->f, s, n);
	}
	json_arr_end(j);
}

void json_hist(struct json *j, const char *key, const struct pn_hist *h, unsigned more)
{
	json_obj(j, key);
	json_uint(j, "count", pn_hist_count(h));
	json_int(j, "min", pn_hist_min(h));
	json_int(j, "p50", pn_hist_percentile(h, 50));
	json_int(j, "p99", pn_hist_percentile(h, 99));
	json_int(j, "p999", pn_hist_percentile(h, 99.9));
	json_int(j, "max", pn_hist_max(h));
	if (more & JSON_HIST_MEAN)
		json_num(j, "mean", pn_hist_mean(h));
	if (more & JSON_HIST_BUCKETS) {
		/* non-empty buckets: [lo, hi, count], values lo..hi inclusive */
		json_arr(j, "histogram");
		struct pn_hist_bucket b;
		for (int i = pn_hist_next(h, 0, &b); i >= 0; i = pn_hist_next(h, i + 1, &b)) {
			json_arr(j, NULL);
			json_int(j, NULL, b.lo);
			json_int(j, NULL, b.hi);
			json_uint(j, NULL, b.count);
			json_arr_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}
