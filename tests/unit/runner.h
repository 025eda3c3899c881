/* SPDX-License-Identifier: MIT */
/*
 * runner.h: runs a test executable's cmocka tests, all of them or those its arguments
 * select, so that one executable backs several ctest entries; and makes skips visible.
 * cmocka counts a skip() as a pass (its status is the number of failures): a test that
 * cannot run here calls pn_skip(why) instead, and when every test that ran skipped, the
 * executable exits PN_EXIT_SKIP, which tests/CMakeLists.txt declares as every test's
 * SKIP_RETURN_CODE, so that ctest reports the entry as skipped. A test that may skip on
 * a common host gets an entry of its own: a skip inside a larger entry is only printed.
 *
 * Arguments: PREFIX runs the tests whose name starts with PREFIX; -PREFIX leaves them
 * out. Without a PREFIX, every test runs but those left out.
 */
#ifndef PN_TEST_RUNNER_H
#define PN_TEST_RUNNER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PN_EXIT_SKIP 77

static int pn_skips; /* pn_skip calls in this process */

/* Prints "SKIP: why" and skips the running test (cmocka's skip() longjmps out of it). */
__attribute__((format(printf, 1, 2))) static inline void pn_skip(const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	print_message("SKIP: %s\n", why);
	pn_skips++;
	skip();
}

/* The emulator the cross build's tests run under (qemu-user: tests/CMakeLists.txt sets
 * PUNCTUAL_EMULATOR), or NULL on hardware. A test of what the emulator does not reproduce
 * skips under it, never on hardware. */
static inline const char *pn_emulator(void)
{
	const char *e = getenv("PUNCTUAL_EMULATOR");
	return e && *e ? e : NULL;
}

/* pn_skip(why) under an emulator. */
#define pn_skip_if_emulated(...)                                                                   \
	do {                                                                                       \
		if (pn_emulator())                                                                 \
			pn_skip(__VA_ARGS__);                                                      \
	} while (0)

static inline bool pn_prefix(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* Runs the selected tests as group. Returns 0, 1 when a test failed, 2 for an argument
 * that selects nothing, PN_EXIT_SKIP when every test that ran skipped. */
static inline int pn_run_tests(const char *group, const struct CMUnitTest *tests, size_t n,
                               int argc, char **argv)
{
	bool include_only = false;
	for (int a = 1; a < argc; a++) {
		const char *p = argv[a][0] == '-' ? argv[a] + 1 : argv[a];
		bool matched = false;
		for (size_t i = 0; i < n; i++)
			matched |= pn_prefix(tests[i].name, p);
		if (!matched || !*p) {
			fprintf(stderr, "%s: no test is named '%s...'\n", group, p);
			return 2;
		}
		include_only |= argv[a][0] != '-';
	}
	struct CMUnitTest *sel = calloc(n, sizeof(*sel));
	if (!sel)
		return 1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool in = !include_only;
		for (int a = 1; a < argc; a++) {
			if (argv[a][0] == '-' && pn_prefix(tests[i].name, argv[a] + 1))
				in = false;
			else if (argv[a][0] != '-' && pn_prefix(tests[i].name, argv[a]))
				in = true;
		}
		if (in)
			sel[k++] = tests[i];
	}
	int failed = k ? _cmocka_run_group_tests(group, sel, k, NULL, NULL) : 1;
	free(sel);
	if (failed)
		return 1;
	return pn_skips > 0 && (size_t)pn_skips >= k ? PN_EXIT_SKIP : 0;
}

/* pn_run_tests over a whole array. */
#define pn_run(group, tests, argc, argv)                                                           \
	pn_run_tests(group, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv)

#endif
