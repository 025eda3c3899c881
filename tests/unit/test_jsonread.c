/* SPDX-License-Identifier: MIT */
/*
 * test_jsonread.c: the tool's JSON reader (tools/punctual/jsonread.c) reads what RFC 8259
 * allows, to the values it means (escapes, surrogate pairs, numbers, nesting), reads back
 * what the tool's writer (json.c) writes of any bytes, and refuses everything else with
 * -EINVAL and a message naming where: truncations of a valid document at every byte,
 * trailing commas, comments, bad escapes, lone surrogates, invalid UTF-8, raw control
 * characters, leading zeros, numbers too large, nesting too deep, garbage after the
 * document. Leaks and overreads are ASan's to find (the suite runs under it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"
#include "jsonread.h"
#include "splitmix.h"

/* Parses s (without its NUL, in a heap copy of exactly its size so ASan sees overreads). */
static int parse(const char *s, size_t n, struct jv **v, char *err)
{
	char *copy = malloc(n ? n : 1);
	assert_non_null(copy);
	memcpy(copy, s, n);
	int r = jv_parse(copy, n, v, err, 200);
	free(copy);
	return r;
}

static struct jv *ok(const char *s)
{
	struct jv *v = NULL;
	char err[200];
	int r = parse(s, strlen(s), &v, err);
	if (r != 0)
		fail_msg("'%s' refused: %s", s, err);
	return v;
}

static void refused(const char *s, size_t n, const char *why)
{
	struct jv *v = (struct jv *)0x1;
	char err[200];
	int r = parse(s, n, &v, err);
	if (r != -EINVAL)
		fail_msg("'%.*s' (%s): got %d, not -EINVAL", (int)n, s, why, r);
	assert_ptr_equal(v, (struct jv *)0x1); /* untouched */
	assert_true(strncmp(err, "line ", 5) == 0);
	assert_null(strchr(err, '\n'));
}

static void values(void **state)
{
	(void)state;
	struct jv *v = ok(" {\"a\": [1, -2.5e3, 0, -0, 1E2, true, false, null, \"x\"],\n"
	                  "\"b\": {}, \"c\": [], \"\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"} ");
	assert_int_equal(v->type, JV_OBJ);
	assert_int_equal(v->len, 4);
	const struct jv *a = jv_get(v, "a");
	assert_non_null(a);
	assert_int_equal(a->type, JV_ARR);
	assert_int_equal(a->len, 9);
	assert_true(a->v[0].num == 1 && a->v[1].num == -2500 && a->v[2].num == 0);
	assert_true(a->v[4].num == 100);
	assert_true(a->v[5].type == JV_BOOL && a->v[5].b && a->v[6].type == JV_BOOL && !a->v[6].b);
	assert_int_equal(a->v[7].type, JV_NULL);
	assert_string_equal(a->v[8].str, "x");
	assert_int_equal(jv_get(v, "b")->type, JV_OBJ);
	assert_int_equal(jv_get(v, "c")->len, 0);
	assert_string_equal(jv_str(v, ""), "\"\\/\b\f\n\r\t");
	assert_null(jv_get(v, "missing"));
	assert_null(jv_get(a, "a")); /* not an object */
	assert_null(jv_str(v, "a"));
	double d;
	assert_false(jv_num(v, "a", &d));
	jv_free(v);

	/* escapes to UTF-8: U+00E9, U+20AC, U+1F600 by a surrogate pair, U+0000 inside */
	v = ok("[\"\\u00e9\\u20AC\\ud83d\\ude00a\\u0000b\", \"\xc3\xa9\xf0\x9f\x98\x80\"]");
	assert_int_equal(v->v[0].len, 2 + 3 + 4 + 1 + 1 + 1);
	assert_memory_equal(v->v[0].str,
	                    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	                    "a\0b",
	                    12);
	assert_string_equal(v->v[1].str, "\xc3\xa9\xf0\x9f\x98\x80");
	jv_free(v);

	/* scalars at the top, a first-of-duplicates lookup, deep but allowed nesting */
	v = ok("12345678901234567890");
	assert_true(v->type == JV_NUM && v->num > 1.2e19 && v->num < 1.3e19);
	jv_free(v);
	v = ok("1e-400"); /* underflows to 0: a number, not an error */
	assert_true(v->num == 0);
	jv_free(v);
	v = ok("{\"k\":1,\"k\":2}");
	assert_true(jv_num(v, "k", &d) && d == 1);
	jv_free(v);
	char deep[2 * JV_DEPTH + 1];
	memset(deep, '[', JV_DEPTH);
	memset(deep + JV_DEPTH, ']', JV_DEPTH);
	deep[2 * JV_DEPTH] = '\0';
	jv_free(ok(deep));
	jv_free(NULL);
}

static void invalid(void **state)
{
	(void)state;
	static const char *const bad[] = {
	        "",
	        " ",
	        "{",
	        "[",
	        "]",
	        "}",
	        "[1,]",
	        "{\"a\":1,}",
	        "[,1]",
	        "{,}",
	        "{\"a\" 1}",
	        "{\"a\":}",
	        "{a:1}",
	        "{'a':1}",
	        "['a']",
	        "[1 2]",
	        "[1]]",
	        "[1] x",
	        "{}{}",
	        "// c\n[]",
	        "[/* c */]",
	        "[01]",
	        "[-]",
	        "[-01]",
	        "[1.]",
	        "[.5]",
	        "[1e]",
	        "[1e+]",
	        "[+1]",
	        "[0x10]",
	        "[NaN]",
	        "[Infinity]",
	        "[-Infinity]",
	        "[1e400]",
	        "[-1e400]",
	        "[tru]",
	        "[True]",
	        "[nul]",
	        "[nulls]",
	        "\"abc",
	        "\"\\x\"",
	        "\"\\u12\"",
	        "\"\\u12g4\"",
	        "\"\\ud800\"",
	        "\"\\udc00\"",
	        "\"\\ud800\\u0041\"",
	        "\"\\ud800x\"",
	        "\"a\tb\"",
	        "\"a\nb\"",
	        "\"\x01\"",
	        "\"\xff\"",
	        "\"\xc0\xaf\"",
	        "\"\xe0\x80\xaf\"",
	        "\"\xed\xa0\x80\"",
	        "\"\xf4\x90\x80\x80\"",
	        "\"\xc3\"",
	        "\"\xe2\x82\"",
	        "\xef\xbb\xbf[]",
	        "[1,\xc3\xa9]",
	        "\"\\",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused(bad[i], strlen(bad[i]), "a case");
	refused("[\0]", 3, "a NUL byte");
	refused("\"a\0b\"", 5, "a raw NUL in a string");
	char deep[2 * JV_DEPTH + 3];
	memset(deep, '[', JV_DEPTH + 1);
	memset(deep + JV_DEPTH + 1, ']', JV_DEPTH + 1);
	refused(deep, 2 * JV_DEPTH + 2, "too deep");

	/* the message names where: line 2, column 6 */
	struct jv *v;
	char err[200];
	assert_int_equal(parse("{\"a\":\n [1,]}", 12, &v, err), -EINVAL);
	assert_string_equal(err, "line 2, column 5: a trailing comma");
}

/* Every prefix of a valid document but itself is invalid. */
static void truncations(void **state)
{
	(void)state;
	const char *doc = "{\"tool\":\"punctual\",\"n\":[-1.5e-3,2,{\"x\":null}],"
	                  "\"s\":\"\\u00e9\xe2\x82\xac\\ud83d\\ude00\",\"t\":true,\"f\":false}";
	size_t n = strlen(doc);
	jv_free(ok(doc));
	for (size_t k = 0; k < n; k++)
		refused(doc, k, "a truncation");
}

/* What json.c writes of random bytes, the reader reads back as one document. */
static void writer_round_trip(void **state)
{
	(void)state;
	uint64_t seed = 0x5eed;
	for (int round = 0; round < 500; round++) {
		unsigned char in[48];
		size_t n = pn__splitmix64(&seed) % sizeof(in);
		for (size_t i = 0; i < n; i++)
			in[i] = (unsigned char)pn__splitmix64(&seed);
		char key[49];
		memcpy(key, in, n);
		key[n] = '\0';
		char *doc = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&doc, &len);
		assert_non_null(f);
		struct json j;
		json_begin(&j, f);
		json_str(&j, key, key);
		json_num(&j, "x", (double)round / 7);
		json_int(&j, "i", -round);
		json_end(&j);
		fclose(f);
		struct jv *v = ok(doc);
		assert_int_equal(v->type, JV_OBJ);
		assert_int_equal(v->len, 3);
		assert_int_equal(v->v[0].type, JV_STR);
		/* by position: the random name may be "i" too */
		assert_true(v->v[2].type == JV_NUM && v->v[2].num == -round);
		assert_string_equal(v->keys[2], "i");
		jv_free(v);
		free(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(values),
	        cmocka_unit_test(invalid),
	        cmocka_unit_test(truncations),
	        cmocka_unit_test(writer_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
