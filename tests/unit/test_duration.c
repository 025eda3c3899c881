/* SPDX-License-Identifier: MIT */
/*
 * test_duration.c: pn__duration_parse, the parser of every duration the tool takes and of
 * PUNCTUAL_PRECISION in the preload shim: units (m and h too), terms in decreasing units
 * ("1m30s"), fractions, the default unit and its refusal (-EDOM: a unit is needed),
 * overflow, and what it rejects (with *res untouched).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <punctual/sleep.h>
#include "internal.h"

static int64_t parse(const char *s, int64_t unit)
{
	int64_t v = -42;
	int r = pn__duration_parse(s, unit, &v);
	if (r != 0) {
		assert_int_equal(v, -42); /* untouched on failure */
		return r;
	}
	return v;
}

static void test_units(void **state)
{
	(void)state;
	assert_int_equal(parse("250", 1), 250);
	assert_int_equal(parse("250", 1000), 250000);
	assert_int_equal(parse("0", 1), 0);
	assert_int_equal(parse("7ns", 1000), 7);
	assert_int_equal(parse("10us", 1), 10000);
	assert_int_equal(parse("10\xc2\xb5s", 1), 10000);
	assert_int_equal(parse("3ms", 1), 3000000);
	assert_int_equal(parse("2s", 1), 2000000000);
	assert_int_equal(parse("007ms", 1), 7000000);
	assert_int_equal(parse("1m", 1), 60000000000LL);
	assert_int_equal(parse("2h", 1), 7200000000000LL);
	assert_int_equal(parse("1m30s", 1), 90000000000LL);
	assert_int_equal(parse("1h2m3s4ms5us6ns", 1), 3723004005006LL);
	assert_int_equal(parse("1.5m", 1), 90000000000LL);
	assert_int_equal(parse("0.5h30m", 1), 3600000000000LL);
	assert_int_equal(parse("1s500ms", 1), 1500000000);
	assert_int_equal(parse("2562047h", 1), 9223369200000000000LL);
	assert_int_equal(parse("2562048h", 1), -ERANGE);
	assert_int_equal(parse("2562047h47m16.854775807s", 1), INT64_MAX);
	assert_int_equal(parse("2562047h47m16.854775808s", 1), -ERANGE);
	/* no default unit: a bare number is refused, but 0 */
	assert_int_equal(parse("1000", 0), -EDOM);
	assert_int_equal(parse("0.5", 0), -EDOM);
	assert_int_equal(parse("0", 0), 0);
	assert_int_equal(parse("0.0", 0), 0);
	assert_int_equal(parse("1000us", 0), 1000000);
}

static void test_fractions(void **state)
{
	(void)state;
	assert_int_equal(parse("1.5ms", 1), 1500000);
	assert_int_equal(parse("0.5us", 1), 500);
	assert_int_equal(parse(".5s", 1), 500000000);
	assert_int_equal(parse("2.", 1000), 2000);
	assert_int_equal(parse("1.0005us", 1), 1000); /* below 1 ns: truncated */
	assert_int_equal(parse("0.5", 1), 0);
	/* more digits than int64 holds in the fraction: kept to 18, no overflow */
	assert_int_equal(parse("1.999999999999999999999999s", 1), 1999999999);
	assert_int_equal(parse("0.000000001s", 1), 1);
}

static void test_limits(void **state)
{
	(void)state;
	assert_int_equal(parse("9223372036854775807", 1), INT64_MAX);
	assert_int_equal(parse("9223372036854775808", 1), -ERANGE);
	assert_int_equal(parse("9223372036854775807us", 1), -ERANGE);
	assert_int_equal(parse("9223372036s", 1), 9223372036000000000LL);
	assert_int_equal(parse("9223372037s", 1), -ERANGE);
	assert_int_equal(parse("9223372035.9s", 1), 9223372035900000000LL);
	assert_int_equal(parse("9223372036.854775807s", 1), INT64_MAX);
	assert_int_equal(parse("9223372036.854775808s", 1), -ERANGE);
	assert_int_equal(parse("99999999999999999999999999", 1), -ERANGE);
}

static void test_rejects(void **state)
{
	(void)state;
	const char *bad[] = {"",     "-1",    "-1ms",  "+5",     " 5",     "5 ",  "5 ms", "ms",
	                     ".",    ".s",    "1.2.3", "5min",   "5sec",   "5MS", "5Ms",  "1e3",
	                     "0x10", "5ns ",  "5\xc2", "5\xb5s", "inf",    "nan", "5nss", "1s1m",
	                     "1s1s", "30s1m", "1m30",  "1h-1m",  "1m 30s", "1hh", "m30s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], 1) != -EINVAL)
			fail_msg("'%s' was not rejected", bad[i]);
	int64_t v = 5;
	assert_int_equal(pn__duration_parse(NULL, 1, &v), -EINVAL);
	assert_int_equal(v, 5);
}

/* The budget's grammar, one parser for PUNCTUAL_BUDGET and --budget. */
static void test_share(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int r;
		int32_t ppm;
	} c[] = {{"10%", 0, 100000},
	         {"12.5%", 0, 125000},
	         {"10", 0, 100000},
	         {"0", 0, 0},
	         {"100%", 0, 1000000},
	         {"0.0001%", 0, 1},
	         {"auto", 0, PN_SLEEP_BUDGET_AUTO},
	         {"default", 0, PN_SLEEP_BUDGET_AUTO},
	         {"101%", -ERANGE, 0},
	         {"-1%", -ERANGE, 0},
	         {"", -EINVAL, 0},
	         {"10%%", -EINVAL, 0},
	         {"10 %", -EINVAL, 0},
	         {"ten", -EINVAL, 0},
	         {"nan", -EINVAL, 0},
	         {"1e999", -EINVAL, 0},
	         {"10x", -EINVAL, 0}};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int32_t v = 42;
		int r = pn__duration_parse_share(c[i].s, &v);
		if (r != c[i].r || v != (r ? 42 : c[i].ppm))
			fail_msg("'%s': %d, %d (wanted %d, %d)", c[i].s, r, (int)v, c[i].r,
			         (int)c[i].ppm);
	}
	int32_t v = 42;
	assert_int_equal(pn__duration_parse_share(NULL, &v), -EINVAL);
	assert_int_equal(v, 42);
}

/* The one formatter for people. */
static void test_format(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(pn__duration_format(b, sizeof(b), 0), "0");
	assert_string_equal(pn__duration_format(b, sizeof(b), 850), "850 ns");
	assert_string_equal(pn__duration_format(b, sizeof(b), 12500), "12.5 us");
	assert_string_equal(pn__duration_format(b, sizeof(b), 4e6), "4 ms");
	assert_string_equal(pn__duration_format(b, sizeof(b), 1.5e9), "1.5 s");
	assert_string_equal(pn__duration_format(b, sizeof(b), -2e3), "-2 us");
	assert_string_equal(pn__duration_format(b, sizeof(b), 0.01), "0.01 ns");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_units),  cmocka_unit_test(test_fractions),
	        cmocka_unit_test(test_limits), cmocka_unit_test(test_rejects),
	        cmocka_unit_test(test_share),  cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
