/* SPDX-License-Identifier: MIT */
/*
 * jsonread.h: the tool's JSON reader (RFC 8259, strict), for `punctual probe --compare`:
 * a document becomes a tree of values, or an error message naming the line and column.
 */
#ifndef PUNCTUAL_JSONREAD_H
#define PUNCTUAL_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	enum jv_type type;
	bool b;       /* JV_BOOL */
	double num;   /* JV_NUM */
	char *str;    /* JV_STR: UTF-8, NUL-terminated; len bytes (a \u0000 inside counts) */
	size_t len;   /* JV_STR: bytes; JV_ARR, JV_OBJ: members */
	struct jv *v; /* JV_ARR, JV_OBJ: the members' values, in document order */
	char **keys;  /* JV_OBJ: the members' names */
};

/* Parses the n bytes at text, one JSON document (RFC 8259: no trailing commas, comments,
 * leading zeros, raw control characters or invalid UTF-8; surrogate escapes paired;
 * nesting at most JV_DEPTH; whitespace only around it): *out is the tree (jv_free it)
 * and 0, or -EINVAL with a message in err ("line 3, column 7: expected ':'"), -ENOMEM,
 * *out untouched. */
#define JV_DEPTH 64
int jv_parse(const char *text, size_t n, struct jv **out, char *err, size_t errn);
/* Frees a tree from jv_parse; NULL is fine. */
void jv_free(struct jv *v);
/* The value of member key of object o (the first of that name), or NULL when o is NULL,
 * not an object or has no such member. */
const struct jv *jv_get(const struct jv *o, const char *key);
/* jv_get's value when it is a string / a number, else NULL / false. */
const char *jv_str(const struct jv *o, const char *key);
bool jv_num(const struct jv *o, const char *key, double *v);

#endif
