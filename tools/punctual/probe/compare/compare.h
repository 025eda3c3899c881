/* SPDX-License-Identifier: MIT */
/* compare.h: what the parts of `punctual probe --compare` hand each other: the reports'
 * figures and facts, the rows they share and what was skipped. */
#ifndef PUNCTUAL_COMPARE_H
#define PUNCTUAL_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

struct json_t; /* jansson's value: only read.c and shapes.c read it */

enum rule { R_QUANTILE, R_RANGE, R_COUNT, R_FACTOR, R_EXACT, R_CONTEXT, R_PARAM };
/* V_CONTEXT: a figure without a direction, shown and never judged; V_VARIES: an adaptive
 * wait's figure, which two runs of one host give far apart, shown and not judged */
enum verdict { V_SAME, V_BETTER, V_WORSE, V_CONTEXT, V_VARIES };

/* The longest figure name kept; longer ones are cut. */
#define FIG_NAME_MAX 192

/* A figure, about 100 bytes so that a report at MAX_INPUT fits in memory. Its strings live
 * in the report. */
struct fig {
	const char *section;
	const char *name;        /* unique in its section */
	const char *parent;      /* the object it is in, for parameters */
	double v, lo, hi;        /* the value and, for R_QUANTILE and R_RANGE, its interval */
	const struct json_t *h;  /* R_QUANTILE: the object of quantiles, the quantile and */
	double q, samples;       /* the number of samples it rests on */
	bool flat;               /* R_QUANTILE: h has pNN_ns members */
	const char *unsupported; /* R_QUANTILE: why the report cannot support it, or NULL */
	enum rule rule;
	int dir;       /* -1 lower is better, +1 higher is better */
	bool time;     /* a duration in ns */
	bool fold;     /* R_EXACT: 0 in both reports folds into one line */
	bool adaptive; /* varies between runs beyond any interval */
	bool used;
};

struct report {
	const char *file;
	struct json_t *doc;
	const char *version; /* the report's, or NULL */
	double slack_self;   /* -1 when the report does not say */
	struct fig *f;
	size_t n, cap;
	struct fig **sorted; /* during compare_join: f by section, name and position */
	size_t *unused;      /* per position in sorted: the next one not yet skipped */
	bool adaptive;       /* while walking an adaptive wait's element */
	char *arena;         /* blocks, each led by the previous one */
	size_t arena_used, arena_size;
};

struct fact {
	char name[64], before[192], after[192];
};

/* The CPUs other processes used beside each report's 1 ms loop (-1: not recorded). */
struct load {
	double before, after;
	bool differs;
};

/* A headline figure's ratio AFTER/BEFORE with the interval the reports' noise allows. */
struct headline {
	const char *label;
	const struct row *row;
	double ratio, lo, hi;
};

struct row {
	const struct fig *a, *b;
	enum verdict v;
};

struct skip {
	const char *name, *section;
	const char *why; /* shared by the figures skipped for one reason */
};

/* Reads the report in file (- for stdin) into r; exits 2 with one line naming file when
 * it cannot be read or is not a probe report. */
void compare_load(struct report *r, const char *file);
/* Brings a report of an earlier schema version to version 1's members in place, so that
 * reports of any version compare. */
void compare_as_v1(struct json_t *doc);
/* a's and b's figures, into their f, n and cap; each quantile with its interval. */
void compare_figures(struct report *a, struct report *b);
/* The facts that differ between a and b, at most max, into res, in the order of the
 * schema's PK_FACT rows. Their number. */
size_t compare_facts(const struct report *a, const struct report *b, struct fact *res, size_t max);
/* A copy of the formatted string, cut at FIG_NAME_MAX + 2 bytes (512 for a reason), that
 * lives as long as r; exits 1 out of memory. */
const char *compare_str(struct report *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The background load each report records, into l. */
void compare_load_of(const struct report *a, const struct report *b, struct load *l);
/* Frees what compare_load and compare_figures allocated for r. */
void compare_free(struct report *r);
/* Joins a's and b's figures by name into rows with their verdicts (count: per verdict),
 * the figures skipped with why into sk from *ns on. rows and sk have room for a->n + b->n.
 * Returns the number of rows. */
size_t compare_join(struct report *a, struct report *b, struct row *rows, struct skip *sk,
                    size_t *ns, int count[5]);
/* The headline figures rows has, each with its ratio, into h. Their number. */
#define COMPARE_HEADLINES 3
size_t compare_headlines(const struct row *rows, size_t nr, struct headline *h);
/* A figure's value for people: "1.5 us", "42", "unsupported". */
const char *compare_value(char *b, size_t n, const struct fig *f);
/* The comparison as a table or as JSON, on out. */
struct comparison {
	const struct fact *fa;
	size_t nf;
	const struct row *rows;
	size_t nr;
	const struct skip *sk;
	size_t ns;
	const int *count; /* per verdict */
	struct load load;
	struct headline head[COMPARE_HEADLINES];
	size_t nh;
};
void compare_text(const struct report *a, const struct report *b, const struct comparison *c);
void compare_json(const struct report *a, const struct report *b, const struct comparison *c);

#endif
