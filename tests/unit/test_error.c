/* SPDX-License-Identifier: MIT */
/* test_error.c: pn_strerror and pn_version. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <punctual/version.h>

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(pn_strerror(-EINVAL), pn_strerror(EINVAL));
	assert_string_equal(pn_strerror(-EINVAL), "Invalid argument");
	assert_non_null(pn_strerror(0));
	assert_string_equal(pn_strerror(-123456), "Unknown error");
	assert_string_equal(pn_strerror(-2147483647), "Unknown error");
	/* -INT_MIN does not exist: no negation may overflow (UBSan in the asan build) */
	assert_string_equal(pn_strerror(INT_MIN), "Unknown error");
	assert_string_equal(pn_strerror(INT_MAX), "Unknown error");
}

static void test_version(void **state)
{
	(void)state;
	assert_string_equal(pn_version(), PN_VERSION_STRING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_strerror),
	        cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
