/* SPDX-License-Identifier: MIT */
/*
 * fuzz_duration.c: pn__duration_parse on any bytes, with both default units the callers
 * use (1 ns: PUNCTUAL_PRECISION and most options; 1 ms). Beyond not crashing: a value it
 * accepts is never negative, says exactly what the same digits say in ns ("%lldns" and a
 * bare number with unit 1 parse back to it), scales with the default unit when the input
 * is a bare number, and a rejection leaves *res untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "internal.h"

static void check(const char *s, int64_t unit)
{
	int64_t v = -7;
	int r = pn__duration_parse(s, unit, &v);
	if (r != 0) {
		if ((r != -EINVAL && r != -ERANGE && r != -EDOM) || v != -7)
			abort();
		return;
	}
	if (v < 0)
		abort();
	char back[32];
	int64_t w = -7;
	snprintf(back, sizeof(back), "%lldns", (long long)v);
	if (pn__duration_parse(back, 1000, &w) != 0 || w != v)
		abort();
	snprintf(back, sizeof(back), "%lld", (long long)v);
	if (pn__duration_parse(back, 1, &w) != 0 || w != v)
		abort();
	/* a bare whole number: unit 1000 gives 1000 times unit 1, or overflows */
	if (unit == 1 && strspn(s, "0123456789") == strlen(s)) {
		int r3 = pn__duration_parse(s, 1000, &w);
		if (r3 == 0 ? w != v * 1000 : (r3 != -ERANGE || v <= INT64_MAX / 1000))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_text(data, size);
	if (!s)
		return 0;
	check(s, 1);
	check(s, 1000000);
	free(s);
	return 0;
}
