/* SPDX-License-Identifier: MIT */
/* json.c: a small streaming JSON writer (escaping, commas, nesting) for every --json. */
#include <math.h>
#include <string.h>

#include <punctual/hist.h>
#include "json.h"

static void sep(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		json_str(&(struct json){.f = j->f}, NULL, key);
		fputc(':', j->f);
	}
}

static void put_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

static void open_(struct json *j, const char *key, char c)
{
	sep(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
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

void json_str(struct json *j, const char *key, const char *v)
{
	if (j->depth || key)
		sep(j, key);
	if (!v)
		fputs("null", j->f);
	else
		put_escaped(j->f, v);
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

void json_null(struct json *j, const char *key)
{
	sep(j, key);
	fputs("null", j->f);
}

void json_hist(struct json *j, const char *key, const struct pn_hist *h, bool buckets)
{
	json_obj(j, key);
	json_uint(j, "count", pn_hist_count(h));
	json_int(j, "min", pn_hist_min(h));
	json_int(j, "p50", pn_hist_percentile(h, 50));
	json_int(j, "p99", pn_hist_percentile(h, 99));
	json_int(j, "p999", pn_hist_percentile(h, 99.9));
	json_int(j, "max", pn_hist_max(h));
	if (buckets) {
		json_num(j, "mean", pn_hist_mean(h));
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
