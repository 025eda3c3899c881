/* SPDX-License-Identifier: MIT */
/*
 * hooks.h: the timer wheel's test hooks (check.c), for tests/unit/test_wheel.c
 * and fuzz/fuzz_wheel.c. Internal.
 */
#ifndef PUNCTUAL_WHEEL_HOOKS_H
#define PUNCTUAL_WHEEL_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pn_wheel;
/* For wheel w: fail makes the sorts' buffer fail to grow (the list sort is used),
 * records_min is the shortest list sorted by records (default 129), few the most timers an
 * expiry's bucket sorts by insertion (default 32; more: a crowd, sorted as a list). */
void pn__wheel_check_tune(struct pn_wheel *w, bool fail, size_t records_min, size_t few);
/* Sets the next insertion sequence number, to cross its 2^52 wrap. */
void pn__wheel_check_seq(struct pn_wheel *w, uint64_t seq);

#endif
