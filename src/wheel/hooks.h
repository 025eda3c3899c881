/* SPDX-License-Identifier: MIT */
/*
 * hooks.h: the timer wheel's test hooks, for its unit test and fuzzer. Internal.
 */
#ifndef PUNCTUAL_WHEEL_HOOKS_H
#define PUNCTUAL_WHEEL_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pn_wheel;
/* For w: fail makes the sorts' buffer fail to grow, records_min is the shortest list
 * sorted by records (default 129), few the most timers a bucket sorts by insertion
 * (default 32). */
void pn__wheel_check_tune(struct pn_wheel *w, bool fail, size_t records_min, size_t few);
/* Sets the next insertion sequence number, to cross its 2^52 wrap. */
void pn__wheel_check_seq(struct pn_wheel *w, uint64_t seq);

#endif
