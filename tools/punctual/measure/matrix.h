/* SPDX-License-Identifier: MIT */
/* measure/matrix.h: the sleep-accuracy matrix: mechanisms x intervals x timer slack. */
#ifndef PUNCTUAL_MEASURE_MATRIX_H
#define PUNCTUAL_MEASURE_MATRIX_H

#include <stdint.h>

#include "measure/sleeps.h"

struct sleep_matrix {
	/* set by the caller */
	const int64_t *intervals;
	int nintervals;
	const int64_t *slacks;
	int nslacks;
	const struct sleep_mech *const *m;
	int nm;
	long samples;     /* at most per cell */
	int64_t duration; /* for the whole matrix */
	/* what was measured */
	const char **unsupported; /* per mechanism: NULL, or why */
	struct sleep_cell *cells; /* [interval][slack][mechanism] */
	int64_t elapsed;
	int64_t original_slack;          /* put back after */
	const struct sleep_mech *failed; /* on error */
	struct sleep_ctx *ctx;
};

/* Measures one interval at a time, rounds visiting every (slack, mechanism) cell, so that
 * every cell sees the same machine; each interval gets an equal share of what remains. A
 * sample still sleeping a tenth of the budget past it is cut and the run ends; so does a
 * caught stop. 0, -ENOMEM, or a mechanism's -errno (x->failed). */
int sleep_matrix_run(struct sleep_matrix *x);
struct sleep_cell *sleep_matrix_cell(const struct sleep_matrix *x, int i, int s, int m);
/* Early returns over every cell: must be 0. */
uint64_t sleep_matrix_early(const struct sleep_matrix *x);
/* Samples cut at the budget's end over every cell. */
uint64_t sleep_matrix_cut(const struct sleep_matrix *x);
void sleep_matrix_free(struct sleep_matrix *x);

#endif
