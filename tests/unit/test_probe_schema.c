/* SPDX-License-Identifier: MIT */
/*
 * test_probe_schema.c: the table of what each probe report key means to --compare
 * (tools/punctual/probe/schema.c): the row naming section and key wins over the row for
 * the key in every section, which wins over the section's row for every member; a key no
 * row names is a figure; and the table is well formed (no row twice, every row names a
 * section or a key, facts and the process's slack name their section, a flag only on a
 * figure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probe/schema.h"

static void precedence(void **state)
{
	(void)state;
	/* the cpus section's own row: exact, higher is better */
	const struct probe_key *k = probe_key("cpus", "count");
	assert_true(k->role == PK_FIGURE && k->exact && k->higher);
	/* a row for cpus and the key wins over the key's row in every section */
	assert_int_equal(probe_key("cpus", "limit")->role, PK_FACT);
	assert_int_equal(probe_key("timers", "limit")->role, PK_IGNORED);
	/* the key's row in every section wins over the section's row */
	k = probe_key("cpus", "early");
	assert_true(k->exact && !k->higher && k->fold);
	assert_int_equal(probe_key("host", "tick_hz_estimate")->role, PK_IGNORED);
	assert_int_equal(probe_key("host", "kernel")->role, PK_FACT);
	assert_int_equal(probe_key("host", "slack_self_ns")->role, PK_SLACK_SELF);
	/* anything else: a figure, lower is better, no flag */
	k = probe_key("a_new_section", "a_new_key");
	assert_true(k->role == PK_FIGURE && !k->exact && !k->higher && !k->ns && !k->fold);
	assert_int_equal(probe_key(PROBE_TOP, "timers")->role, PK_PARAM);
	assert_int_equal(probe_key("sleeps", "mechanism")->role, PK_IDENTITY);
	/* durations: by name, or by the row */
	assert_true(probe_key_ns(probe_key("x", "y"), "overshoot_ns"));
	assert_false(probe_key_ns(probe_key("x", "y"), "ns"));
	assert_false(probe_key_ns(probe_key("x", "y"), "nanos"));
	assert_true(probe_key_ns(probe_key("clocks", "ns_per_read"), "ns_per_read"));
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void well_formed(void **state)
{
	(void)state;
	assert_true(probe_nkeys > 0);
	size_t slack_self = 0;
	for (size_t i = 0; i < probe_nkeys; i++) {
		const struct probe_key *k = &probe_keys[i];
		if (!k->section && !k->key)
			fail_msg("row %zu names neither a section nor a key", i);
		for (size_t j = 0; j < i; j++)
			if (same(k->section, probe_keys[j].section) &&
			    same(k->key, probe_keys[j].key))
				fail_msg("rows %zu and %zu name the same key", j, i);
		if ((k->role == PK_FACT || k->role == PK_SLACK_SELF) && !k->section)
			fail_msg("row %zu: a fact or the process's slack names its section", i);
		if (k->role != PK_FIGURE && (k->exact || k->higher || k->fold))
			fail_msg("row %zu: a figure's flag on another role", i);
		if (k->fold && !k->exact)
			fail_msg("row %zu: only an exact count folds", i);
		slack_self += k->role == PK_SLACK_SELF;
		/* probe_key finds a row naming both exactly as itself */
		if (k->section && k->key)
			assert_ptr_equal(probe_key(k->section, k->key), k);
	}
	assert_int_equal(slack_self, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(precedence),
	        cmocka_unit_test(well_formed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
