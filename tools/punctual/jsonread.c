/* SPDX-License-Identifier: MIT */
/*
 * jsonread.c: a strict recursive-descent JSON reader (RFC 8259). It accepts exactly the
 * grammar of the RFC's section 2 to 7 over UTF-8 text (as Unicode 3.9, table 3-7, defines
 * well-formed) and nothing more, so that a report that is not JSON is refused with where
 * it stops being JSON, never half read. Numbers are doubles (strtod on the matched span;
 * one too large for a double is refused); strings are decoded to UTF-8.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"

struct rd {
	const char *s, *p, *end;
	char *err;
	size_t errn;
	int status; /* 0, -EINVAL or -ENOMEM once something failed */
};

__attribute__((format(printf, 2, 3))) static int fail(struct rd *r, const char *fmt, ...)
{
	if (r->status)
		return r->status;
	int line = 1, col = 1;
	for (const char *q = r->s; q < r->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else if (((unsigned char)*q & 0xc0) != 0x80) {
			col++;
		}
	}
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->errn)
		snprintf(r->err, r->errn, "line %d, column %d: %s", line, col, msg);
	return r->status = -EINVAL;
}

static int nomem(struct rd *r)
{
	if (r->errn)
		snprintf(r->err, r->errn, "out of memory");
	return r->status = -ENOMEM;
}

static void ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* What is at p, for a message. */
static const char *what(const struct rd *r)
{
	if (r->p >= r->end)
		return "the end of the input";
	unsigned char c = (unsigned char)*r->p;
	if (c < 0x20)
		return "a control character";
	if (c >= 0x80)
		return "a non-ASCII character";
	static char one[4][8];
	static int k;
	char *b = one[k++ & 3];
	snprintf(b, 8, "'%c'", c);
	return b;
}

static bool lit(struct rd *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return false;
	r->p += n;
	return true;
}

/* ---- strings ---------------------------------------------------------------------- */

struct buf {
	char *d;
	size_t n, cap;
};

static int put(struct rd *r, struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (b->n + n + 1 > cap)
			cap *= 2;
		char *d = realloc(b->d, cap);
		if (!d)
			return nomem(r);
		b->d = d;
		b->cap = cap;
	}
	memcpy(b->d + b->n, s, n);
	b->n += n;
	b->d[b->n] = '\0';
	return 0;
}

static int put_cp(struct rd *r, struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return put(r, b, u, n);
}

/* The length of the well-formed UTF-8 sequence at p (Unicode table 3-7), or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if (p[k] < 0x80 || p[k] > 0xbf)
			return 0;
	return n;
}

static int hex4(struct rd *r, uint32_t *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++, r->p++) {
		if (r->p >= r->end)
			return fail(r, "unterminated \\u escape");
		char c = *r->p;
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			return fail(r, "\\u needs 4 hex digits, not %s", what(r));
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

static int escape(struct rd *r, struct buf *b)
{
	r->p++; /* the backslash */
	if (r->p >= r->end)
		return fail(r, "unterminated string");
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = *r->p ? strchr(from, *r->p) : NULL;
	if (e) {
		r->p++;
		return put(r, b, &to[e - from], 1);
	}
	if (*r->p != 'u')
		return fail(r, "invalid escape \\%s", what(r));
	r->p++;
	uint32_t cp, lo;
	if (hex4(r, &cp))
		return r->status;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(r, "a low surrogate escape without a high one");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (!lit(r, "\\u"))
			return fail(r, "a high surrogate escape without a low one");
		if (hex4(r, &lo))
			return r->status;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(r, "a high surrogate escape without a low one");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return put_cp(r, b, cp);
}

static int string(struct rd *r, char **out, size_t *len)
{
	struct buf b = {0};
	r->p++; /* the opening quote */
	if (put(r, &b, "", 0))
		return r->status;
	for (;;) {
		if (r->p >= r->end) {
			fail(r, "unterminated string");
			break;
		}
		unsigned char c = (unsigned char)*r->p;
		if (c == '"') {
			r->p++;
			*out = b.d;
			*len = b.n;
			return 0;
		}
		if (c == '\\') {
			if (escape(r, &b))
				break;
			continue;
		}
		if (c < 0x20) {
			fail(r, "a control character in a string (escape it)");
			break;
		}
		size_t n = c < 0x80
		                   ? 1
		                   : utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
		if (!n) {
			fail(r, "invalid UTF-8 in a string");
			break;
		}
		if (put(r, &b, r->p, n))
			break;
		r->p += n;
	}
	free(b.d);
	return r->status;
}

/* ---- numbers ---------------------------------------------------------------------- */

static bool digit(const struct rd *r)
{
	return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

static int number(struct rd *r, double *v)
{
	const char *start = r->p;
	if (*r->p == '-')
		r->p++;
	if (!digit(r))
		return fail(r, "a number needs a digit, not %s", what(r));
	if (*r->p == '0') {
		r->p++;
		if (digit(r))
			return fail(r, "a number must not start with 0");
	} else {
		while (digit(r))
			r->p++;
	}
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (!digit(r))
			return fail(r, "a digit must follow the decimal point");
		while (digit(r))
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!digit(r))
			return fail(r, "an exponent needs a digit");
		while (digit(r))
			r->p++;
	}
	char tmp[64], *heap = NULL, *s = tmp;
	size_t n = (size_t)(r->p - start);
	if (n >= sizeof(tmp) && !(s = heap = malloc(n + 1)))
		return nomem(r);
	memcpy(s, start, n);
	s[n] = '\0';
	errno = 0;
	*v = strtod(s, NULL);
	int range = errno == ERANGE && (*v > 1 || *v < -1); /* underflow to 0 is fine */
	free(heap);
	if (range) {
		r->p = start;
		return fail(r, "a number too large for a double");
	}
	return 0;
}

/* ---- values ----------------------------------------------------------------------- */

static int value(struct rd *r, struct jv *v, int depth);

/* One more member in v (an array or object being built). */
static struct jv *grow(struct rd *r, struct jv *v, size_t *cap)
{
	if (v->len == *cap) {
		size_t c = *cap ? *cap * 2 : 4;
		struct jv *nv = realloc(v->v, c * sizeof(*nv));
		if (!nv)
			return nomem(r), NULL;
		v->v = nv;
		if (v->type == JV_OBJ) {
			char **nk = realloc(v->keys, c * sizeof(*nk));
			if (!nk)
				return nomem(r), NULL;
			v->keys = nk;
		}
		*cap = c;
	}
	struct jv *m = &v->v[v->len];
	memset(m, 0, sizeof(*m));
	return m;
}

static int members(struct rd *r, struct jv *v, int depth)
{
	const char close = v->type == JV_OBJ ? '}' : ']';
	size_t cap = 0;
	r->p++;
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		ws(r);
		struct jv *m = grow(r, v, &cap);
		if (!m)
			return r->status;
		if (v->type == JV_OBJ) {
			if (r->p >= r->end || *r->p != '"')
				return fail(r, "expected a member name in quotes, not %s", what(r));
			size_t klen;
			if (string(r, &v->keys[v->len], &klen))
				return r->status;
			v->len++; /* counted now: jv_free frees its name (and its null value) */
			ws(r);
			if (r->p >= r->end || *r->p != ':')
				return fail(r, "expected ':', not %s", what(r));
			r->p++;
			ws(r);
			if (value(r, m, depth + 1))
				return r->status;
		} else {
			v->len++;
			if (value(r, m, depth + 1))
				return r->status;
		}
		ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			ws(r);
			if (r->p < r->end && *r->p == close)
				return fail(r, "a trailing comma");
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return 0;
		}
		return fail(r, "expected ',' or '%c', not %s", close, what(r));
	}
}

static int value(struct rd *r, struct jv *v, int depth)
{
	if (depth > JV_DEPTH)
		return fail(r, "nested deeper than %d", JV_DEPTH);
	if (r->p >= r->end)
		return fail(r, "expected a value, not the end of the input");
	switch (*r->p) {
	case '{':
		v->type = JV_OBJ;
		return members(r, v, depth);
	case '[':
		v->type = JV_ARR;
		return members(r, v, depth);
	case '"':
		if (string(r, &v->str, &v->len))
			return r->status;
		v->type = JV_STR;
		return 0;
	case 't':
	case 'f':
		if (lit(r, "true") || lit(r, "false")) {
			v->type = JV_BOOL;
			v->b = r->p[-4] == 't';
			return 0;
		}
		break;
	case 'n':
		if (lit(r, "null")) {
			v->type = JV_NULL;
			return 0;
		}
		break;
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')) {
			v->type = JV_NUM;
			return number(r, &v->num);
		}
	}
	return fail(r, "expected a value, not %s", what(r));
}

static void members_free(struct jv *v)
{
	if (v->type == JV_STR) {
		free(v->str);
		return;
	}
	for (size_t i = 0; v->v && i < v->len; i++) {
		members_free(&v->v[i]);
		if (v->type == JV_OBJ)
			free(v->keys[i]);
	}
	free(v->v);
	free(v->keys);
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	members_free(v);
	free(v);
}

int jv_parse(const char *text, size_t n, struct jv **out, char *err, size_t errn)
{
	struct rd r = {.s = text, .p = text, .end = text + n, .err = err, .errn = errn};
	if (errn)
		err[0] = '\0';
	struct jv *v = calloc(1, sizeof(*v));
	if (!v)
		return nomem(&r);
	/* a byte-order mark is not JSON text (RFC 8259, 8.1: must not be added) */
	ws(&r);
	if (value(&r, v, 1) == 0) {
		ws(&r);
		if (r.p < r.end)
			fail(&r, "more after the document: %s", what(&r));
	}
	if (r.status) {
		jv_free(v);
		return r.status;
	}
	*out = v;
	return 0;
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
	if (!o || o->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->len; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->v[i];
	return NULL;
}

const char *jv_str(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);
	return v && v->type == JV_STR ? v->str : NULL;
}

bool jv_num(const struct jv *o, const char *key, double *v)
{
	const struct jv *m = jv_get(o, key);
	if (!m || m->type != JV_NUM)
		return false;
	*v = m->num;
	return true;
}
