/* SPDX-License-Identifier: MIT */
/*
 * duration.c: the one duration parser, used by the tool's options and by the shim inside
 * every program it is injected into: so it never allocates, never reads past the NUL,
 * and rejects rather than guesses. Terms of a number and a unit, strictly decreasing
 * ("1m30s"; "30s1m" and "1s1s" are refused), or a bare number alone in the caller's
 * default unit. Beside it the budget's share parser and the duration formatter.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/sleep.h>
#include "internal.h"

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
        {"ns", 1},         {"us", 1000},         {"\xc2\xb5s", 1000},    {"ms", 1000000},
        {"s", 1000000000}, {"m", 60000000000LL}, {"h", 3600000000000LL},
};

/* A unit's length in ns at *p (advanced), or 0; the longest name wins ("ms" before "m"). */
static int64_t unit_at(const char **p)
{
	size_t best = 0;
	int64_t ns = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);
		if (n > best && strncmp(*p, units[i].name, n) == 0) {
			best = n;
			ns = units[i].ns;
		}
	}
	*p += best;
	return ns;
}

/* The number at *p (advanced): its whole part and its fraction frac / scale (18 digits).
 * 0, -EINVAL (no digit), -ERANGE. */
static int number_at(const char **p, int64_t *whole, int64_t *frac, int64_t *scale)
{
	int digits = 0;
	*whole = *frac = 0;
	*scale = 1;
	for (; **p >= '0' && **p <= '9'; (*p)++, digits++)
		if (__builtin_mul_overflow(*whole, 10, whole) ||
		    __builtin_add_overflow(*whole, **p - '0', whole))
			return -ERANGE;
	if (**p == '.')
		for ((*p)++; **p >= '0' && **p <= '9'; (*p)++, digits++)
			if (*scale < 1000000000000000000LL) {
				*frac = *frac * 10 + (**p - '0');
				*scale *= 10;
			}
	return digits ? 0 : -EINVAL;
}

/* whole + frac / scale units of unit ns, added to *v: 0 or -ERANGE. */
static int add_term(int64_t *v, int64_t whole, int64_t frac, int64_t scale, int64_t unit)
{
	int64_t t;
	if (__builtin_mul_overflow(whole, unit, &t))
		return -ERANGE;
	/* without overflow: frac < scale <= 1e18, unit < 2^42 */
	__int128 f = (__int128)frac * unit / scale;
	if (f > INT64_MAX || __builtin_add_overflow(t, (int64_t)f, &t) ||
	    __builtin_add_overflow(*v, t, v))
		return -ERANGE;
	return 0;
}

int pn__duration_parse(const char *s, int64_t default_unit_ns, int64_t *res)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	int64_t v = 0, last = INT64_MAX, whole, frac, scale;
	for (int terms = 0; *p; terms++) {
		int r = number_at(&p, &whole, &frac, &scale);
		if (r < 0)
			return r;
		int64_t unit = unit_at(&p);
		if (!unit) {
			if (*p || terms) /* garbage, or a bare number after a term */
				return -EINVAL;
			if (!default_unit_ns) /* bare: only 0 needs no unit */
				return whole || frac ? -EDOM : (*res = 0, 0);
			unit = default_unit_ns;
		} else if (unit >= last) {
			return -EINVAL; /* units must decrease */
		}
		last = unit;
		if ((r = add_term(&v, whole, frac, scale, unit)) < 0)
			return r;
	}
	*res = v;
	return 0;
}

int pn__duration_parse_share(const char *s, int32_t *budget_ppm)
{
	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "auto") || !strcmp(s, "default")) {
		*budget_ppm = PN_SLEEP_BUDGET_AUTO;
		return 0;
	}
	char *end;
	int e = errno;
	errno = 0;
	double v = strtod(s, &end);
	int bad = end == s || (*end && strcmp(end, "%")) || errno || v != v;
	errno = e;
	if (bad)
		return -EINVAL;
	if (!(v >= 0 && v <= 100))
		return -ERANGE;
	*budget_ppm = (int32_t)(v * 1e4 + 0.5);
	return 0;
}

const char *pn__duration_format(char *buf, size_t n, double ns)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = {{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
	if (ns == 0) {
		snprintf(buf, n, "0");
		return buf;
	}
	size_t k = 0;
	while (k + 1 < sizeof(u) / sizeof(u[0]) && (ns < 0 ? -ns : ns) >= u[k + 1].div)
		k++;
	double x = ns / u[k].div, mag = x < 0 ? -x : x;
	if (!(mag >= 0.05 && mag < 1e6))
		snprintf(buf, n, "%.3g %s", x, u[k].unit);
	else
		snprintf(buf, n, "%.*f %s", x == (double)(int64_t)x ? 0 : 1, x, u[k].unit);
	return buf;
}
