/* SPDX-License-Identifier: MIT */
/* opts.c: the option loop, and values with units, shared by every subcommand. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/sleep.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"

int64_t opt_duration(const char *opt, const char *s)
{
	int64_t v;
	int r = pn__duration_parse(s, 0, &v);
	if (r == -ERANGE)
		usage_error("%s: '%s' is too large", opt, s);
	if (r == -EDOM)
		usage_error("%s: '%s' needs a unit: %sns, %sus, %sms or %ss (m and h too)", opt, s,
		            s, s, s, s);
	if (r < 0)
		usage_error("%s: '%s' is not a duration (a number and a unit: 250us, 1.5ms, 2s, "
		            "1m30s)",
		            opt, s);
	return v;
}

long opt_us(const char *opt, const char *s, long lo, long hi)
{
	int64_t v = opt_duration(opt, s);
	if (v % 1000)
		usage_error("%s: '%s' is not a whole number of us", opt, s);
	if (v / 1000 < lo || v / 1000 > hi)
		usage_error("%s: %s is out of range [%ldus, %ldus]", opt, s, lo, hi);
	return (long)(v / 1000);
}

long opt_long(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '-'))
		usage_error("%s: '%s' is not a number", opt, s ? s : "");
	long v = strtol(s, &end, 10);
	if (*end)
		usage_error("%s: '%s' is not a number", opt, s);
	if (errno == ERANGE || v < lo || v > hi)
		usage_error("%s: %s is out of range [%ld, %ld]", opt, s, lo, hi);
	return v;
}

/* The long option name (len bytes) names, exactly or as the only one it abbreviates. */
static const struct option *long_opt(const struct option *lo, const char *name, size_t len)
{
	const struct option *found = NULL;
	int n = 0;
	for (; lo->name; lo++) {
		if (strncmp(lo->name, name, len) != 0)
			continue;
		if (lo->name[len] == '\0')
			return lo;
		found = lo;
		n++;
	}
	return n == 1 ? found : NULL;
}

/* The edit distance with swaps of neighbours ("porbe" -> "probe"), capped at 9. */
static int distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 31 || m > 31)
		return 9;
	int d[32][32];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m] < 9 ? d[n][m] : 9;
}

const char *nearest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	int bd = 3; /* at most two edits, fewer than the word's length */
	for (size_t i = 0; i < n; i++) {
		int d = distance(s, names[i]);
		if (d < bd && d < (int)strlen(s)) {
			bd = d;
			best = names[i];
		}
	}
	return best;
}

/* "; did you mean '--name'?" for the long option nearest to a ("--nam"), or "". */
static const char *option_hint(const char *a, const struct option *lo, char *buf, size_t n)
{
	const char *names[64];
	size_t k = 0;
	for (; lo->name && k < 64; lo++)
		names[k++] = lo->name;
	const char *arg = a + strspn(a, "-");
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	const char *best = nearest(name, names, k);
	if (!best)
		return "";
	snprintf(buf, n, "; did you mean '--%s'?", best);
	return buf;
}

int next_opt(int argc, char **argv, const char *optstring, const struct option *lo,
             const char *usage)
{
	static char **started;
	if (started != argv) { /* a new command line */
		started = argv;
		opterr = 0;
		optind = 1;
	}
	int c = getopt_long(argc, argv, optstring, lo, NULL);
	switch (c) {
	case 'h':
		fputs(usage, stdout);
		stdout_close();
		exit(0);
	case ':':
		usage_error("option '%s' needs a value", argv[optind - 1]);
	case '?': {
		/* "--list=1": name the long option, in full even when abbreviated */
		const char *a = argv[optind - 1];
		if (optopt && strncmp(a, "--", 2) == 0 && strchr(a, '=')) {
			int len = (int)strcspn(a + 2, "=");
			const struct option *o = long_opt(lo, a + 2, (size_t)len);
			if (o)
				usage_error("option '--%s' takes no value", o->name);
			usage_error("option '--%.*s' takes no value", len, a + 2);
		}
		/* "-5" in place of a value reaches getopt as an option */
		if (optopt >= '0' && optopt <= '9')
			usage_error("a value must not be negative (-%c...)", optopt);
		if (optopt)
			usage_error("unknown option '-%c'", optopt);
		char hint[96];
		usage_error("unknown option '%s'%s", a, option_hint(a, lo, hint, sizeof(hint)));
	}
	}
	return c;
}

void no_more_args(int argc, char **argv)
{
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

/* Whether s, a valid duration, is a whole number of ns ("0.5" and "1.0005us" are not). */
static bool whole_ns(const char *s)
{
	for (const char *p = s; *p;) {
		p += strspn(p, "0123456789");
		const char *d = *p == '.' ? p + 1 : p, *end = d + strspn(d, "0123456789");
		const char *unit = end;
		p = unit + strcspn(unit, "0123456789.");
		while (end > d && end[-1] == '0')
			end--;
		if (end == d)
			continue;
		if (end - d > 9) /* no unit is above 2^42 ns */
			return false;
		char one[16];
		int64_t unit_ns, frac = 0, scale = 1;
		snprintf(one, sizeof(one), "1%.*s", (int)(p - unit), unit);
		if (pn__duration_parse(one, 1, &unit_ns) < 0)
			return false;
		for (const char *c = d; c < end; c++, scale *= 10)
			frac = frac * 10 + (*c - '0');
		if ((__int128)frac * unit_ns % scale != 0)
			return false;
	}
	return true;
}

int64_t opt_slack(const char *opt, const char *s)
{
	if (strcmp(s, "default") == 0)
		return 0;
	int64_t v = opt_duration(opt, s);
	/* rounding 0.5 down would ask for the default (50 us), up for what was not asked */
	if (!whole_ns(s))
		usage_error("%s: '%s' is not a whole number of ns", opt, s);
	return v;
}

const char *opt_budget(const char *s, char *buf, size_t n)
{
	if (!s) /* for scan-build */
		usage_error("--budget needs a value");
	int32_t budget_ppm;
	int r = pn__duration_parse_share(s, &budget_ppm);
	if (r == -ERANGE)
		usage_error("--budget: %s is out of range [0%%, 100%%]", s);
	if (r < 0)
		usage_error("--budget: '%s' is not a share of a CPU (10%%, 12.5%%, auto)", s);
	if (budget_ppm == PN_SLEEP_BUDGET_AUTO)
		snprintf(buf, n, "auto");
	else
		snprintf(buf, n, "%.4f%%", budget_ppm / 1e4);
	return buf;
}
