/* SPDX-License-Identifier: MIT */
/*
 * test_json.c: the tool's JSON writer (tools/punctual/json.c) makes valid JSON of any
 * bytes: every string it writes decodes, escapes and all, to the input's code points,
 * with U+FFFD for each byte outside well-formed UTF-8 (checked against the table of
 * well-formed sequences in the Unicode standard, 3.9, table 3-7, for every string of
 * one and two bytes, the edges of the longer forms and random bytes); and the document
 * helpers write what they say; JSON_DEPTH levels nest right, and one more (or a close
 * with nothing open) exits 1 with one line; jansson, strict, reads back what it writes.
 * The other encoders of untrusted text (encode.c, prom.c): text for a terminal holds no
 * control character (C0, DEL, C1) and is UTF-8, and a Prometheus label value is UTF-8,
 * for every string of one and two bytes and random ones.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef PN_HAVE_JANSSON
#include <jansson.h>
#endif

#include "contract.h"
#include "util/diag.h"
#include "util/encode.h"
#include "util/json.h"
#include "util/prom.h"

#define MAXCP 64

/* Table 3-7: the well-formed sequence at s (n bytes left) and its length, or 0. */
static int well_formed(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const struct {
		unsigned char lo[4], hi[4];
		int len;
	} forms[] = {
	        {{0x00}, {0x7f}, 1},
	        {{0xc2, 0x80}, {0xdf, 0xbf}, 2},
	        {{0xe0, 0xa0, 0x80}, {0xe0, 0xbf, 0xbf}, 3},
	        {{0xe1, 0x80, 0x80}, {0xec, 0xbf, 0xbf}, 3},
	        {{0xed, 0x80, 0x80}, {0xed, 0x9f, 0xbf}, 3},
	        {{0xee, 0x80, 0x80}, {0xef, 0xbf, 0xbf}, 3},
	        {{0xf0, 0x90, 0x80, 0x80}, {0xf0, 0xbf, 0xbf, 0xbf}, 4},
	        {{0xf1, 0x80, 0x80, 0x80}, {0xf3, 0xbf, 0xbf, 0xbf}, 4},
	        {{0xf4, 0x80, 0x80, 0x80}, {0xf4, 0x8f, 0xbf, 0xbf}, 4},
	};
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		int len = forms[f].len, k = 0;
		if ((size_t)len > n)
			continue;
		while (k < len && s[k] >= forms[f].lo[k] && s[k] <= forms[f].hi[k])
			k++;
		if (k < len)
			continue;
		static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
		*cp = s[0] & lead_mask[len];
		for (k = 1; k < len; k++)
			*cp = *cp << 6 | (s[k] & 0x3f);
		return len;
	}
	return 0;
}

/* What the writer promises for the n bytes at s: code points, U+FFFD per bad byte. */
static int expected(const unsigned char *s, size_t n, uint32_t *cp)
{
	int k = 0;
	for (size_t i = 0; i < n;) {
		int len = well_formed(s + i, n - i, &cp[k]);
		if (len == 0)
			cp[k] = 0xfffd, len = 1;
		k++;
		i += (size_t)len;
	}
	return k;
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes the JSON string literal at t (len bytes, nothing after it); -1 if invalid. */
static int decode(const unsigned char *t, size_t len, uint32_t *cp)
{
	if (len < 2 || t[0] != '"' || t[len - 1] != '"')
		return -1;
	int k = 0;
	for (size_t i = 1; i < len - 1;) {
		if (k == MAXCP)
			return -1;
		if (t[i] < 0x20 || t[i] == '"')
			return -1;
		if (t[i] != '\\') {
			int l = well_formed(t + i, len - 1 - i, &cp[k++]);
			if (l == 0)
				return -1;
			i += (size_t)l;
			continue;
		}
		if (i + 1 >= len - 1)
			return -1;
		const char *e = strchr("\"\\/bfnrtu", t[i + 1]);
		if (!e || !t[i + 1])
			return -1;
		if (t[i + 1] == 'u') {
			if (i + 6 > len - 1)
				return -1;
			uint32_t v = 0;
			for (int d = 2; d < 6; d++) {
				if (hex(t[i + d]) < 0)
					return -1;
				v = v << 4 | (uint32_t)hex(t[i + d]);
			}
			if (v >= 0xd800 && v <= 0xdfff)
				return -1; /* the writer never needs a surrogate pair */
			cp[k++] = v;
			i += 6;
			continue;
		}
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		cp[k++] = (unsigned char)to[strchr(from, t[i + 1]) - from];
		i += 2;
	}
	return k;
}

/* The per-string checks write into one stream on a fixed buffer, reused: a memstream a
 * string cost ASan a fresh buffer (allocated, filled, quarantined) each, most of the
 * test's time. scratch() rewinds it; scratch_len() is what was written since. */
static char scratch_buf[1024];

static FILE *scratch(void)
{
	static FILE *f;
	if (!f)
		f = fmemopen(scratch_buf, sizeof(scratch_buf), "w");
	assert_non_null(f);
	rewind(f);
	return f;
}

static size_t scratch_len(FILE *f)
{
	assert_int_equal(fflush(f), 0);
	long len = ftell(f);
	assert_true(len >= 0 && (size_t)len < sizeof(scratch_buf)); /* with room for its NUL */
	return (size_t)len;
}

/* json_str of the n bytes at s (no NUL among them) decodes to what it promises. */
static void check_string(const unsigned char *s, size_t n)
{
	char in[MAXCP + 1], *buf = scratch_buf;
	memcpy(in, s, n);
	in[n] = '\0';
	FILE *f = scratch();
	struct json j = {.f = f};
	json_str(&j, NULL, in);
	size_t len = scratch_len(f);
	uint32_t want[MAXCP], got[MAXCP];
	int nw = expected(s, n, want);
	int ng = decode((const unsigned char *)buf, len, got);
	if (ng != nw || memcmp(want, got, sizeof(want[0]) * (size_t)nw) != 0) {
		fprintf(stderr, "input:");
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %02x", s[i]);
		fprintf(stderr, "\noutput: %.*s\n", (int)len, buf);
		fail();
	}
}

static void every_short_string(void **state)
{
	(void)state;
	unsigned char s[2];
	for (int a = 1; a < 256; a++) {
		s[0] = (unsigned char)a;
		check_string(s, 1);
		for (int b = 1; b < 256; b++) {
			s[1] = (unsigned char)b;
			check_string(s, 2);
		}
	}
}

static void edges_of_longer_forms(void **state)
{
	(void)state;
	static const unsigned char edge[] = {0x01, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
	                                     0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf4, 0xff};
	enum { E = sizeof(edge) };
	unsigned char s[4];
	for (int lead = 0xc0; lead < 256; lead++) {
		s[0] = (unsigned char)lead;
		for (int x = 0; x < E; x++)
			for (int y = 0; y < E; y++) {
				s[1] = edge[x], s[2] = edge[y];
				check_string(s, 3);
				for (int z = 0; z < E; z++) {
					s[3] = edge[z];
					check_string(s, 4);
				}
			}
	}
}

static void random_bytes(void **state)
{
	(void)state;
	uint64_t rng = 16;
	unsigned char s[24];
	for (int t = 0; t < 200000; t++) {
		size_t n = 1 + pn__splitmix64(&rng) % sizeof(s);
		for (size_t i = 0; i < n; i++) {
			uint64_t r = pn__splitmix64(&rng);
			/* mostly high bytes and controls: where the mistakes would be */
			s[i] = (unsigned char)(r % 4 ? 0x80 | (r >> 8) : 1 + (r >> 8) % 255);
		}
		check_string(s, n);
	}
}

/* What one document written by fn comes out as. */
static char *document(void (*fn)(struct json *j))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct json j;
	json_report_begin(&j, f, "test");
	fn(&j);
	json_end(&j);
	fclose(f);
	return buf;
}

static void fields(struct json *j)
{
	json_int_if(j, "known", true, -5);
	json_int_if(j, "unknown", false, 7);
	json_words(j, "words", "  tsc  hpet acpi_pm ");
	json_words(j, "none", "");
	json_num(j, "nan", NAN);
	json_num(j, "inf", INFINITY);
	json_num(j, "half", 0.5);
	json_str(j, "null", NULL);
	json_obj(j, "o\n");
	json_arr(j, "a");
	json_uint(j, NULL, UINT64_MAX);
	json_bool(j, NULL, false);
	json_arr_end(j);
	json_obj_end(j);
}

static void document_helpers(void **state)
{
	(void)state;
	char *d = document(fields);
	assert_string_equal(d, "{\"tool\":\"punctual\",\"version\":\"" PUNCTUAL_VERSION "\","
	                       "\"command\":\"test\",\"known\":-5,\"unknown\":null,"
	                       "\"words\":[\"tsc\",\"hpet\",\"acpi_pm\"],\"none\":[],"
	                       "\"nan\":null,\"inf\":null,\"half\":0.5,\"null\":null,"
	                       "\"o\\n\":{\"a\":[18446744073709551615,false]}}\n");
	free(d);
}

#ifdef PN_HAVE_JANSSON
/* What the writer makes of random bytes, jansson (the reader of probe --compare, strict:
 * UTF-8, no member twice) reads back: the bytes as a value and as a name, and numbers. */
static void read_back(void **state)
{
	(void)state;
	uint64_t rng = 0x5eed;
	for (int round = 0; round < 2000; round++) {
		char key[49];
		size_t n = pn__splitmix64(&rng) % sizeof(key);
		for (size_t i = 0; i < n; i++)
			key[i] = (char)pn__splitmix64(&rng);
		key[n] = '\0';
		char *doc = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&doc, &len);
		assert_non_null(f);
		struct json j;
		json_begin(&j, f);
		json_str(&j, "v", key);
		json_obj(&j, "o");
		json_int(&j, key, -round);
		json_obj_end(&j);
		json_num(&j, "x", (double)round / 7);
		json_uint(&j, "u", UINT64_MAX);
		json_end(&j);
		fclose(f);
		json_error_t err;
		json_t *v = json_loadb(doc, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL,
		                       &err);
		if (!v)
			fail_msg("'%s' refused: line %d, column %d: %s", doc, err.line, err.column,
			         err.text);
		assert_int_equal(json_object_size(v), 4);
		const char *read = json_string_value(json_object_get(v, "v"));
		assert_non_null(read);
		json_t *o = json_object_get(v, "o");
		assert_int_equal(json_object_size(o), 1);
		assert_true(json_number_value(json_object_get(o, read)) == -round);
		assert_true(fabs(json_number_value(json_object_get(v, "x")) - round / 7.0) <=
		            1e-5 * round / 7.0);
		assert_true(json_number_value(json_object_get(v, "u")) == 0x1p64);
		json_decref(v);
		free(doc);
	}
}
#endif

/* JSON_DEPTH levels are written right, commas and all. */
static void deepest(void **state)
{
	(void)state;
	char *buf = NULL, want[1024] = "{\"a\":[";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct json j;
	json_begin(&j, f);
	json_arr(&j, "a");
	for (int i = 0; i < JSON_DEPTH - 2; i++) {
		json_int(&j, NULL, i);
		json_arr(&j, NULL);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%d,[", i);
	}
	json_int(&j, NULL, 7);
	strcat(want, "7");
	for (int i = 0; i < JSON_DEPTH - 1; i++) {
		json_arr_end(&j);
		strcat(want, "]");
		if (i < JSON_DEPTH - 2) { /* a value after each inner array: its comma */
			json_int(&j, NULL, -1);
			strcat(want, ",-1");
		}
	}
	json_end(&j);
	strcat(want, "}\n");
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

/* Runs fn in a child writing to /dev/null: it must exit 1 with one line on stderr that
 * contains msg. */
static void dies(void (*fn)(struct json *j), const char *msg)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		FILE *f = fopen("/dev/null", "w");
		struct json j;
		json_begin(&j, f);
		fn(&j);
		_exit(0); /* did not die */
	}
	close(p[1]);
	char err[512] = "";
	size_t n = 0;
	ssize_t k;
	while ((k = read(p[0], err + n, sizeof(err) - 1 - n)) > 0)
		n += (size_t)k;
	err[n] = '\0';
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		fail_msg("expected exit 1 with '%s', got status 0x%x, stderr '%s'", msg, st, err);
	assert_non_null(strstr(err, msg));
	assert_ptr_equal(strchr(err, '\n'), err + n - 1);
}

static void one_too_deep(struct json *j)
{
	for (int i = 1; i <= JSON_DEPTH; i++)
		json_obj(j, "k");
}

static void one_too_many_closed(struct json *j)
{
	json_arr(j, "a");
	json_arr_end(j);
	json_end(j);
	json_obj_end(j);
}

/* Past its limits the writer exits 1 naming the bug, never writes wrong JSON. */
static void limits(void **state)
{
	(void)state;
	dies(one_too_deep, "the JSON writer's nesting limit (32) reached: a bug");
	dies(one_too_many_closed, "the JSON writer closed '}' with nothing open: a bug");
}

/* No byte that a terminal acts on, and valid UTF-8 (utf8_len walks it whole). */
static void assert_terminal_safe(const char *t)
{
	const unsigned char *p = (const unsigned char *)t, *end = p + strlen(t);
	while (p < end) {
		int n = utf8_len(p, end);
		assert_true(n > 0);
		assert_int_equal(utf8_unsafe(p, end), 0);
		p += n;
	}
}

static void check_encoders(const char *s)
{
	char buf[64];
	assert_terminal_safe(text_safe(buf, sizeof(buf), s));
	FILE *f = scratch();
	prom_label(f, s);
	size_t len = scratch_len(f);
	const unsigned char *p = (const unsigned char *)scratch_buf, *end = p + len;
	for (int n; p < end; p += n) {
		n = utf8_len(p, end);
		assert_true(n > 0);
		assert_true(*p != '\n');
	}
}

static void text_and_prom(void **state)
{
	(void)state;
	char s[3] = {0};
	for (int a = 1; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			check_encoders(s);
		}
	uint64_t seed = 42;
	char r[24];
	for (int i = 0; i < 100000; i++) {
		for (size_t k = 0; k + 1 < sizeof(r); k++)
			r[k] = (char)(1 + pn__splitmix64(&seed) % 255);
		r[sizeof(r) - 1] = 0;
		check_encoders(r);
	}
	char buf[64];
	assert_string_equal(text_safe(buf, sizeof(buf), "/a\033[2J\xc2\x9b\xff/é"),
	                    "/a\\x1b[2J\\xc2\\x9b\\xff/é");
	assert_string_equal(text_safe(buf, 8, "abcdefghij"), "abcdefg");
	assert_string_equal(text_safe(buf, 6, "ab\033cd"), "ab"); /* never half an escape */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(every_short_string),
	        cmocka_unit_test(edges_of_longer_forms),
	        cmocka_unit_test(random_bytes),
	        cmocka_unit_test(document_helpers),
	        cmocka_unit_test(deepest),
#ifdef PN_HAVE_JANSSON
	        cmocka_unit_test(read_back),
#endif
	        cmocka_unit_test(limits),
	        cmocka_unit_test(text_and_prom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
