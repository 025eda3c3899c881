/* SPDX-License-Identifier: MIT */
/*
 * sleep_state.h: a thread's precise-sleep state (sleep_state.c): what it learned per length
 * class, its statistics, and the sleep whose caller is spinning its last stretch. Mapped at
 * the thread's first plan, unmapped when the thread exits. Internal.
 */
#ifndef PUNCTUAL_SLEEP_STATE_H
#define PUNCTUAL_SLEEP_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <punctual/sleep.h>
#include "sleep_margin.h"
#include "sleep_plan.h"

/* A sleep whose caller spins its last stretch (PN__SLEEP_TAIL): counted at the thread's next
 * sleep or statistics read, once the caller has stored its end. One counted before its
 * caller stored it (a signal handler that slept or read the statistics during that stretch,
 * or jumped out of it) counts as ending at its deadline. */
struct pn__sleep_pending {
	int64_t start, deadline, precision;
	struct pn__tail at;
	int k;
	bool on;
};

struct pn__sleep_state {
	struct pn__sleep_class cls[PN_SLEEP_CLASSES];
	struct pn_sleep_stats st;
	struct pn__sleep_pending pend;
};

/* The calling thread's state, or NULL: none yet (or its mapping failed). */
struct pn__sleep_state *pn__sleep_state(void);
/* The calling thread's state, mapped if it has none (mmap: async-signal-safe); NULL if that
 * fails. */
struct pn__sleep_state *pn__sleep_state_make(void);
/* Counts a sleep of class k that ended at now, having spun from spin_start (no spin when
 * spin_start >= deadline). */
void pn__sleep_count(struct pn__sleep_state *t, int k, int64_t deadline, int64_t precision,
                     int64_t spin_start, int64_t now);
/* Counts the pending sleep (its caller's tail has ended), if there is one. */
void pn__sleep_settle(struct pn__sleep_state *t);
/* Records p's sleep as pending, its end to be stored by its caller's tail from spin_start
 * on: sets p->tail, p->tail_to and p->tail_seq. */
void pn__sleep_pend(struct pn__sleep_state *t, struct pn__sleep_plan *p, int64_t spin_start);

#endif
