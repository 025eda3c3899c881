/* SPDX-License-Identifier: MIT */
/* json.h: the tool's JSON writer: a stream of values with escaping and automatic commas. */
#ifndef PUNCTUAL_JSON_H
#define PUNCTUAL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The deepest the writer nests: one more, or closing one not open, is a bug and exits 1
 * rather than write a comma wrong. */
#define JSON_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_DEPTH + 1]; /* per depth: a value was written there */
};
/* A document that is one object on f; json_end closes it and ends the line. */
void json_begin(struct json *j, FILE *f);
void json_end(struct json *j);
/* json_begin, then "tool", "version" and "command". */
void json_report_begin(struct json *j, FILE *f, const char *command);
void json_obj(struct json *j, const char *key); /* key NULL inside arrays / at top */
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
void json_int(struct json *j, const char *key, int64_t v);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_num(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
/* null (json_null is jansson's). */
void json_none(struct json *j, const char *key);
/* v when known, else null. */
void json_int_if(struct json *j, const char *key, bool known, int64_t v);
/* The space-separated words of s as an array of strings. */
void json_words(struct json *j, const char *key, const char *s);
/* A histogram as {count, min, p50, p99, p999, max}, with more its "mean" and its
 * non-empty buckets as "histogram": [[lo, hi, count], ...]. */
enum { JSON_HIST_MEAN = 1, JSON_HIST_BUCKETS = 2 };
struct pn_hist;
void json_hist(struct json *j, const char *key, const struct pn_hist *h, unsigned more);

#endif
