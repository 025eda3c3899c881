/* SPDX-License-Identifier: MIT */
/* compare.h: what `punctual probe --compare` (compare.c) hands its join (compare_join.c)
 * and its renderer (compare_render.c): the two reports' figures, the rows they share,
 * what was skipped. */
#ifndef PUNCTUAL_COMPARE_H
#define PUNCTUAL_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "jsonread.h"

enum rule { R_QUANTILE, R_RANGE, R_COUNT, R_FACTOR, R_EXACT, R_PARAM };
enum verdict { V_SAME, V_BETTER, V_WORSE };

struct fig {
	char section[32];
	char name[192];     /* unique in its section */
	char parent[192];   /* the object it is in (section/name), for parameters */
	double v, lo, hi;   /* the value and, for R_QUANTILE and R_RANGE, its interval */
	const struct jv *h; /* R_QUANTILE: the histogram, and the quantile */
	double q;
	enum rule rule;
	int dir;   /* -1 lower is better, +1 higher is better */
	bool time; /* a duration in ns */
	bool fold; /* R_EXACT: 0 in both reports folds into one line (probe_schema.h) */
	bool used;
};

struct report {
	const char *file;
	struct jv *doc;
	double slack_self; /* -1 when the report does not say */
	struct fig *f;
	size_t n, cap;
	struct fig **sorted; /* during compare_join: f by section, name and position */
	size_t *unused;      /* per position in sorted: the next one not yet skipped */
};

struct fact {
	char name[64], before[192], after[192];
};

struct row {
	const struct fig *a, *b;
	enum verdict v;
};

struct skip {
	const char *name, *section;
	char why[512];
};

/* Joins a's and b's figures by name: the pairs, each with its verdict, into rows (and
 * their number per verdict into count); the figures skipped, with why, into sk from
 * *ns on (an object whose run differs or that one report could not run, a figure only
 * one report has). rows and sk have room for a->n + b->n. Returns the number of rows. */
size_t compare_join(struct report *a, struct report *b, struct row *rows, struct skip *sk,
                    size_t *ns, int count[3]);
/* A figure's value for people: "1.5 us", "42", "unsupported". */
const char *compare_value(char *b, size_t n, const struct fig *f);
/* The comparison as a table or as JSON, on out. */
void compare_text(const struct report *a, const struct report *b, const struct fact *fa, size_t nf,
                  const struct row *rows, size_t nr, const struct skip *sk, size_t ns,
                  const int count[3]);
void compare_json(const struct report *a, const struct report *b, const struct fact *fa, size_t nf,
                  const struct row *rows, size_t nr, const struct skip *sk, size_t ns,
                  const int count[3]);

#endif
