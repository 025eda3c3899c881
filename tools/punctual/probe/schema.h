/* SPDX-License-Identifier: MIT */
/*
 * What each key of a probe report means to `punctual probe --compare`: one table of data,
 * so that a section a version adds needs a row at most, never a change in compare/.
 */
#ifndef PUNCTUAL_PROBE_SCHEMA_H
#define PUNCTUAL_PROBE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

/* The section of the report's own top-level members. */
#define PROBE_TOP "report"

enum probe_role {
	PK_FIGURE,     /* a result: a number is a figure, an object or array is walked */
	PK_PARAM,      /* given to the run: figures beside it compare only when equal */
	PK_IDENTITY,   /* a scalar that names its array element */
	PK_SLACK,      /* the timer slack an element ran at: names its column */
	PK_SLACK_SELF, /* the process's own slack: the column a PK_SLACK matches first */
	PK_FACT,       /* a fact of the host or the run: listed when the reports differ */
	PK_CONTEXT,    /* a number without a direction: shown, never judged */
	PK_IGNORED,    /* none of these */
};

struct probe_key {
	const char *section; /* a section, PROBE_TOP, or NULL: every section */
	const char *key;     /* a member's name, or NULL: every member of section */
	enum probe_role role;
	bool exact;   /* PK_FIGURE: any change counts */
	bool higher;  /* PK_FIGURE: higher is better */
	bool ns;      /* a duration in ns, though not named "_ns" */
	bool fold;    /* PK_FIGURE: 0 in both reports folds into one line */
	bool samples; /* PK_CONTEXT: the samples its object's pNN_ns rest on */
};

/* An identity value (or prefix) that marks its element as an adaptive wait's. */
struct probe_adaptive {
	const char *key, *value;
	bool prefix;
};
extern const struct probe_adaptive probe_adaptive[];
extern const size_t probe_nadaptive;
/* Whether the identity key with the string value marks an adaptive wait's element. */
bool probe_is_adaptive(const char *key, const char *value);

/* The table, in the order the facts that differ are listed. */
extern const struct probe_key probe_keys[];
extern const size_t probe_nkeys;

/* The row for key in section: the row naming both, else key's in every section, else
 * section's for every member, else a figure's. Never NULL. */
const struct probe_key *probe_key(const char *section, const char *key);
/* Whether key, under row k, is a duration in ns. */
bool probe_key_ns(const struct probe_key *k, const char *key);

#endif
