/* SPDX-License-Identifier: MIT */
/*
 * policy.h: the margin policy of a precise sleep: from what a thread has learned of its
 * kernel wakeups per sleep-length class, how long before the deadline its kernel wait ends
 * and the spin takes over, with which slack, and what a new wakeup teaches. Functions of
 * their arguments alone, so that tests drive them with synthetic histories. Internal.
 */
#ifndef PUNCTUAL_WAIT_POLICY_H
#define PUNCTUAL_WAIT_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <punctual/sleep.h>
#include "hist/decay_hist.h"

/* What a thread knows of its sleeps of one length class (PN_SLEEP_CLASSES). */
struct pn__sleep_class {
	struct pn__decay_hist wake; /* the kernel's lateness past target + slack */
	uint32_t spins;             /* sleeps since its last kernel sample */
	int64_t held;               /* a stall held back from wake; 0: none */
	float lost;                 /* decayed share of its spins that lost the CPU */
	uint32_t calm;              /* sleeps since it last spun while lost is high */
};

/* What the thread's spins lose: the gaps between two of a spin's clock reads longer than
 * PN__GAP_NS, decayed by spin. */
#define PN__GAP_NS     2000
#define PN__LOSS_STEPS 16 /* thresholds 1 us << j, j < PN__LOSS_STEPS */
struct pn__spin_loss {
	float watched;                /* spin time watched, ns */
	float over[PN__LOSS_STEPS];   /* the gaps' time beyond each threshold, ns */
	float most[PN__LOSS_STEPS];   /* the largest one spin's share of over */
	float stalls[PN__LOSS_STEPS]; /* the gaps longer than each threshold */
};
struct pn__spin_gaps {
	int64_t watched, lost;
	float over[PN__LOSS_STEPS];
	float stalls[PN__LOSS_STEPS];
};
/* A gap of gap ns (> PN__GAP_NS) in a spin. */
void pn__policy_gap(struct pn__spin_gaps *g, int64_t gap);
void pn__policy_loss_add(struct pn__spin_loss *l, const struct pn__spin_gaps *g);
/* The share of spin time in a stall with more than x ns of it left: the chance that a
 * spin ends more than x late. Less the spin that lost the most: one stall is no rate. 0
 * until the thread has watched PN__LOSS_MIN_NS of spins. */
#define PN__LOSS_MIN_NS 20000000
double pn__policy_loss_share(const struct pn__spin_loss *l, int64_t x);
double pn__policy_loss_stalls(const struct pn__spin_loss *l, int64_t x);

struct pn__policy_ask {
	int64_t len; /* deadline - now */
	int64_t precision;
	int32_t budget_ppm;     /* or PN_SLEEP_BUDGET_AUTO */
	int64_t budget_room_ns; /* CPU the budget window has left for this wait */
	int64_t overhead;       /* a wait's CPU besides its spin, ns */
	double loss;            /* pn__policy_loss_share at the precision */
	bool unpriced;          /* no spin whatever the margin: no margin priced */
};
/* The answer: the margin, what the learned wakeups alone ask for (wanted >= margin), and
 * the share of the wait's length the margin is expected to spend (ppm). */
struct pn__policy_choice {
	int64_t margin, wanted, kernel_q;
	int32_t spend_ppm;
};
/* Chooses a wait's margin in class k of cls (libpunctual(3)'s rules). */
void pn__policy_choose(const struct pn__sleep_class *cls, int k, const struct pn__policy_ask *a,
                       struct pn__policy_choice *c);

/* A class needs this many samples to plan on its own; fewer, its neighbour helps. */
#define PN__MARGIN_MIN_SAMPLES 32

int pn__policy_class(int64_t len);
/* A sleep whose precision covers its class's p99 lateness waits in the kernel alone. */
#define PN__MARGIN_KERNEL_LEVEL 0.99
double pn__policy_level(int64_t precision);

/* The margin a precision of PN__MARGIN_FINE_NS or less uses for len ns in class c. */
int64_t pn__policy_fine(const struct pn__sleep_class *c, int64_t len);
#define PN__MARGIN_FINE_NS 2000

/* The kernel part of a sleep with left ns to go: until deadline - *lead with *slack. */
void pn__policy_kernel(bool lost, int64_t precision, int64_t kernel_q, int64_t margin, int64_t left,
                       int64_t *slack, int64_t *lead);
/* Whether c's spins lose the CPU to other tasks (over PN__MARGIN_LOST_RATE), but for every
 * PN__MARGIN_LOST_EXPLORE-th sleep, which spins to see whether the CPU is free again. */
bool pn__policy_lost(struct pn__sleep_class *c);
void pn__policy_spun(struct pn__sleep_class *c, int64_t over);
/* Learns a kernel wakeup late ns past its target and slack, for len ns in class k (a lone
 * stall held back). */
void pn__policy_learn(struct pn__sleep_class *cls, int k, int64_t late, int64_t len);
bool pn__policy_learned_any(const struct pn__sleep_class *cls);
/* A quantile of c, doubled while c has fewer than PN__MARGIN_MIN_SAMPLES samples. */
int64_t pn__policy_quantile(const struct pn__sleep_class *c, double level);

#endif
