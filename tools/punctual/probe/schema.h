/* SPDX-License-Identifier: MIT */
/*
 * What each key of a probe report (each section's json function writes its part,
 * docs/probe.schema.json describes it) means to `punctual probe --compare`: one table of data
 * (probe/schema.c) that compare/read.c consults, so that a section a version adds needs a row
 * at most, never a change in compare/.
 */
#ifndef PUNCTUAL_PROBE_SCHEMA_H
#define PUNCTUAL_PROBE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

/* The section of the report's own members ("tool", "version", "elapsed_ns"): every other
 * top-level member is a section of its own, named by its key. */
#define PROBE_TOP "report"

enum probe_role {
	PK_FIGURE,     /* a result: a number is a figure, an object or array is walked */
	PK_PARAM,      /* a number the run was given: figures beside it compare only when
	                  both reports ran with the same */
	PK_IDENTITY,   /* a scalar that names its array element ("mechanism": "nanosleep") */
	PK_SLACK,      /* the timer slack an element ran at: names its column */
	PK_SLACK_SELF, /* the process's own timer slack: the column a PK_SLACK matches first */
	PK_FACT,       /* a fact of the host or the run: listed when the reports differ */
	PK_CONTEXT,    /* a number without a direction (a sample count, another process's
	                  CPU): shown beside the figures, never judged */
	PK_IGNORED,    /* none of these: a rank, a calibration, a derived threshold */
};

struct probe_key {
	const char *section; /* a section, PROBE_TOP, or NULL: every section */
	const char *key;     /* a member's name, or NULL: every member of section */
	enum probe_role role;
	bool exact;   /* PK_FIGURE: a count the probe makes exactly: any change counts */
	bool higher;  /* PK_FIGURE: higher is better (else lower) */
	bool ns;      /* a duration in ns, though the name does not end in "_ns" */
	bool fold;    /* PK_FIGURE: in an element, 0 in both reports folds into one line */
	bool samples; /* PK_CONTEXT: the number of samples its object's pNN_ns rest on */
};

/* An identity value that marks its element as an adaptive wait's (a budget that spins or
 * not by what it learned): value, or a prefix of it when prefix is set. */
struct probe_adaptive {
	const char *key, *value;
	bool prefix;
};
extern const struct probe_adaptive probe_adaptive[];
extern const size_t probe_nadaptive;
/* Whether the identity key with the string value marks an adaptive wait's element. */
bool probe_is_adaptive(const char *key, const char *value);

/* The table, in the order the facts that differ are listed (probe/schema.c). */
extern const struct probe_key probe_keys[];
extern const size_t probe_nkeys;

/* The row for key in section: the row naming both, else the row naming key in every
 * section, else section's row for every member, else a figure's (lower is better,
 * its rule from its value). Never NULL. */
const struct probe_key *probe_key(const char *section, const char *key);
/* Whether the value of key, under row k, is a duration in ns: its name ends in "_ns",
 * or the row says so. */
bool probe_key_ns(const struct probe_key *k, const char *key);

#endif
