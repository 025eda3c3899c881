/* SPDX-License-Identifier: MIT */
/*
 * duration.c: the one duration parser ("250", "1.5ms", "10us", "2s"), used by the tool's
 * options and by the preload shim for PUNCTUAL_PRECISION, which it parses inside every
 * program it is injected into: so it never allocates, never reads past the NUL, and
 * rejects rather than guesses (fuzz/fuzz_duration.c holds it to that).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
        {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"ms", 1000000}, {"s", 1000000000},
};

int pn__parse_duration(const char *s, int64_t default_unit_ns, int64_t *res)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	int64_t ip = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, *p - '0', &ip))
			return -ERANGE;
	}
	/* The fraction, kept to 18 digits: enough for any unit down to 1 ns. */
	int64_t frac = 0, frac_scale = 1;
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, digits++) {
			if (frac_scale < 1000000000000000000LL) {
				frac = frac * 10 + (*p - '0');
				frac_scale *= 10;
			}
		}
	}
	if (digits == 0)
		return -EINVAL;
	int64_t unit = default_unit_ns;
	if (*p) {
		unit = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(p, units[i].name) == 0)
				unit = units[i].ns;
		if (!unit)
			return -EINVAL;
	}
	int64_t v;
	if (__builtin_mul_overflow(ip, unit, &v))
		return -ERANGE;
	/* frac/frac_scale * unit without overflow: unit <= 1e9 and frac < frac_scale. */
	__int128 f = (__int128)frac * unit / frac_scale;
	if (__builtin_add_overflow(v, (int64_t)f, &v))
		return -ERANGE;
	*res = v;
	return 0;
}
