/* SPDX-License-Identifier: MIT */
/*
 * arms.h: which way a shared thread without real time waits: the plan's, or as the program
 * would alone. An online comparison on a share of its waits decides, so that where the
 * plan does not help it costs nothing. Internal.
 */
#ifndef PUNCTUAL_WAIT_ARMS_H
#define PUNCTUAL_WAIT_ARMS_H

#include <stdbool.h>
#include <stdint.h>

#include "hist/decay_hist.h"

enum { PN__ARM_PLAN, PN__ARM_ALONE };
/* Each way's waits before the comparison decides, and the share the way not chosen keeps. */
#define PN__ARMS_FIRST        48
#define PN__ARMS_EXPLORE      8
#define PN__ARMS_EXPLORE_PLAN 64 /* where the program's own way was chosen */
/* A way is tried in runs; their first waits carry the other way's (unlearned). */
#define PN__ARMS_RUN    16
#define PN__ARMS_SETTLE 4
/* The plan is taken once its p99 is below the program's by more than 10% and this, with a
 * p50 no higher, and left once either is higher. */
#define PN__ARMS_SLACK_NS 20000

/* What the program's own call under way is: one the comparison picked, or a timeout the
 * program's runtime rounded to whole ms, which is never compared. */
enum { PN__ALONE_COMPARED = 1, PN__ALONE_ROUNDED };

struct pn__arms {
	struct pn__decay_hist late[2]; /* each way's lateness past the deadline */
	uint32_t turn;
	uint8_t run_left;  /* of the exploring run */
	uint8_t settle;    /* waits not yet learned */
	int8_t last;       /* the last pick */
	int8_t alone;      /* the comparison chose the program's own way */
	int8_t ahead;      /* a pick made before its wait (pn__wait_alone): the way + 1, or 0 */
	int8_t calling;    /* the program's own call under way: a PN__ALONE_*, or 0 */
	int64_t ahead_for; /* the deadline of ahead's wait */
	uint64_t waits[2];
	uint64_t rounded; /* whole-ms waits left to the program */
};

int pn__arms_pick(struct pn__arms *a);
/* A wait of that way ended late ns past its deadline. */
void pn__arms_learn(struct pn__arms *a, int arm, int64_t late);
/* Each way's p99 (0: none yet). */
int64_t pn__arms_p99(const struct pn__arms *a, int arm);

#endif
