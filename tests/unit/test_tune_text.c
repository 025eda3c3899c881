/* SPDX-License-Identifier: MIT */
/*
 * test_tune_text.c: the verdict at the end of `punctual tune`'s text report
 * (tools/punctual/tune/tune.c, tune_kept_lines): the fix kept is named as kept, and where
 * the best is another, that one is named as not better beyond the noise, never so that it
 * reads as the fix kept; with none kept, a fix lower within the noise is "too noisy to
 * tell", with the steal and the runs' p99s that made it so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tune/tune.h"

/* A result whose waits all fall in bucket b (so its quantiles are that bucket's). */
static void result(struct tune_result *r, int b)
{
	memset(r, 0, sizeof(*r));
	r->fig.waits = 200;
	r->fig.h[b] = 200;
	r->fig.max = INT64_MAX / 2;
	r->ratio = 0.5;
	r->ratio_lo = 0.4;
	r->ratio_hi = 0.6;
}

/* o's lines into buf. */
static void lines(char *buf, size_t n, const struct tune_outcome *o, const struct tune_setting *s)
{
	FILE *f = fmemopen(buf, n, "w");
	assert_non_null(f);
	tune_kept_lines(f, o, s);
	assert_int_equal(fclose(f), 0);
}

static void kept_not_best(void **state)
{
	(void)state;
	static const struct tune_setting s[] = {
	        {.name = "as it is"},
	        {.name = "--slack 1ns", .slack = true},
	        {.name = "--precise", .precise = true},
	};
	static struct tune_outcome o = {.n = 3, .q = 0.99, .kept = 1, .best = 2};
	result(&o.res[0], 60);
	result(&o.res[1], 40);
	result(&o.res[2], 38);
	char buf[2048];
	lines(buf, sizeof(buf), &o, s);
	assert_non_null(strstr(buf, "\nkept: --slack 1ns, p99 lateness "));
	/* the line naming the best says it is not better than the one kept */
	const char *best = strstr(buf, "--precise");
	assert_non_null(best);
	const char *eol = strchr(best, '\n');
	char line[512];
	snprintf(line, sizeof(line), "%.*s", (int)(eol - best), best);
	assert_non_null(strstr(line, "is not better than --slack 1ns beyond the noise"));
	assert_non_null(strstr(buf, "the best, --precise at p99 "));

	o.best = 1; /* the best kept: no second line */
	lines(buf, sizeof(buf), &o, s);
	assert_null(strstr(buf, "--precise"));
	assert_null(strstr(buf, "the best"));
	o.kept = o.best = -1;
	lines(buf, sizeof(buf), &o, s);
	assert_non_null(strstr(buf, "no fix measured better"));
}

/* The text's sentences unwrapped: each line break and its two spaces become one space. */
static void unwrap(char *buf)
{
	for (char *w; (w = strstr(buf, "\n  ")) != NULL;)
		memmove(w, w + 2, strlen(w + 2) + 1), *w = ' ';
}

static void too_noisy_to_tell(void **state)
{
	(void)state;
	static const struct tune_setting s[] = {
	        {.name = "as it is"},
	        {.name = "--slack 1ns", .slack = true},
	};
	static struct tune_outcome o = {.n = 2, .q = 0.99, .kept = -1, .best = -1};
	result(&o.res[0], 60);
	result(&o.res[1], 58);
	o.res[0].v = 2.4e6;
	o.res[1].v = 2.0e6;
	o.res[0].runs = 4;
	o.res[0].run_p99_lo = 1000000;
	o.res[0].run_p99_hi = 3300000;
	o.steal = 0.03;
	char buf[2048];
	lines(buf, sizeof(buf), &o, s);
	for (char *l = buf, *eol; *l; l = *eol ? eol + 1 : eol) { /* wrapped at 80 columns */
		eol = strchrnul(l, '\n');
		if (eol - l > 80)
			fail_msg("a line over 80 columns: %.*s", (int)(eol - l), l);
	}
	unwrap(buf);
	assert_non_null(strstr(buf, "too noisy to tell: the lowest, --slack 1ns at p99 "));
	assert_non_null(strstr(buf, "stole 3.0%"));
	if (!strstr(buf, "runs' p99 went from ") || !strstr(buf, "to 3.3 ms (stall bursts)"))
		fail_msg("the runs' p99s not named: %s", buf);
	assert_null(strstr(buf, "no fix measured better"));
	o.steal = 0; /* nothing named: the waits' own spread */
	o.res[0].runs = 1;
	lines(buf, sizeof(buf), &o, s);
	unwrap(buf);
	if (!strstr(buf, "(steal under 0.5%: the waits' own spread") || strstr(buf, "stall"))
		fail_msg("no reason, or one not measured: %s", buf);
	o.res[1].v = 2.6e6; /* higher: nothing to tell */
	lines(buf, sizeof(buf), &o, s);
	assert_non_null(strstr(buf, "no fix measured better"));
}

int main(void)
{
	setenv("COLUMNS", "80", 1); /* the width the text wraps at, whatever the terminal */
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(kept_not_best),
	        cmocka_unit_test(too_noisy_to_tell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
