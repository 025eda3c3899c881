/* SPDX-License-Identifier: MIT */
/*
 * test_frontier.c: the choice behind probe's recommendation "what precision costs"
 * (tools/punctual/measure/frontier.c): the punctual variant that buys the most p99 per
 * point of CPU over the kernel alone, never one a fixed margin of no more CPU beats, and
 * the fixed margin of the nearest CPU beside it. Synthetic cells: no timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "measure/frontier.h"

#define US 1000LL

enum { KERNEL, FIXED125, FIXED500, BUDGET5, BUDGET10, AUTO, SPIN, NVAR };

/* One length of 1 ms; a cell has 980 sleeps late by p50 ns and 20 late by p99 ns (so its p99
 * is p99 where p99 >= p50), at cpu % of 1 s. */
static void cell(struct frontier *f, int v, int64_t p50, int64_t p99, double cpu)
{
	struct frontier_cell *c = &f->cell[0][v];
	pn_hist_init(&c->late);
	pn_hist_record_n(&c->late, p50, 980);
	pn_hist_record_n(&c->late, p99, 20);
	c->wall_ns = 1000000000;
	c->cpu_ns = (int64_t)(cpu * 1e7);
}

static struct frontier *make(void)
{
	struct frontier *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->c.nlen = 1;
	f->c.len[0] = 1000 * US;
	f->c.nvar = NVAR;
	const struct frontier_variant var[NVAR] = {
	        {FR_KERNEL, 0},      {FR_FIXED, 125 * US}, {FR_FIXED, 500 * US}, {FR_BUDGET, 50000},
	        {FR_BUDGET, 100000}, {FR_AUTO, 0},         {FR_SPIN, 0}};
	memcpy(f->c.var, var, sizeof(var));
	cell(f, KERNEL, 60 * US, 400 * US, 2);
	cell(f, FIXED125, 0, 200 * US, 6);
	cell(f, FIXED500, 0, 80 * US, 45);
	cell(f, BUDGET5, 1 * US, 180 * US, 5);
	cell(f, BUDGET10, 1 * US, 100 * US, 9);
	cell(f, AUTO, 1 * US, 150 * US, 8);
	cell(f, SPIN, 0, 50 * US, 100);
	return f;
}

/* The most p99 per CPU: budget 5% (220 us for 3 points) over 10% (300 us for 7) and the
 * default (250 us for 6); the spin and the fixed margins are never chosen. */
static void test_best_per_cpu(void **state)
{
	(void)state;
	struct frontier *f = make();
	assert_int_equal(frontier_best(f, 0), BUDGET5);
	free(f);
}

/* A budget whose p99 a fixed margin of no more CPU beats is never the recommendation, even
 * with the most per CPU: budget 5%, p99 205 us at 6.1% CPU (195 us for 4.1 points: 47.6 a
 * point, against budget 10%'s 42.9 and the default's 41.7), loses to the fixed 125 us
 * margin's 200 us at 6%. */
static void test_dominated_never_best(void **state)
{
	(void)state;
	struct frontier *f = make();
	cell(f, BUDGET5, 1 * US, 205 * US, 6.1);
	assert_int_equal(frontier_best(f, 0), BUDGET10);
	/* at equal CPU, a lower p99 beats it too */
	cell(f, BUDGET5, 1 * US, 205 * US, 6);
	assert_int_equal(frontier_best(f, 0), BUDGET10);
	/* at equal CPU and equal p99 it is not beaten */
	cell(f, BUDGET5, 1 * US, 200 * US, 6);
	assert_int_equal(frontier_best(f, 0), BUDGET5);
	/* nor by a fixed margin too small for a p99 */
	cell(f, BUDGET5, 1 * US, 205 * US, 6.1);
	pn_hist_init(&f->cell[0][FIXED125].late);
	pn_hist_record_n(&f->cell[0][FIXED125].late, 1 * US, FRONTIER_MIN_P99 - 1);
	assert_int_equal(frontier_best(f, 0), BUDGET5);
	free(f);
	f = make();
	/* every punctual variant beaten: none */
	cell(f, BUDGET5, 1 * US, 250 * US, 6.5);
	cell(f, BUDGET10, 1 * US, 250 * US, 9);
	cell(f, AUTO, 1 * US, 250 * US, 8);
	assert_int_equal(frontier_best(f, 0), -1);
	free(f);
}

/* No gain over the kernel, no kernel variant, no such length, an empty cell: none. */
static void test_no_best(void **state)
{
	(void)state;
	struct frontier *f = make();
	assert_int_equal(frontier_best(f, 1), -1);
	assert_int_equal(frontier_best(f, -1), -1);
	cell(f, KERNEL, 30 * US, 50 * US, 2); /* the kernel alone already beats them */
	assert_int_equal(frontier_best(f, 0), -1);
	free(f);
	f = make();
	f->c.var[KERNEL].kind = FR_SPIN;
	assert_int_equal(frontier_best(f, 0), -1);
	free(f);
	f = make();
	pn_hist_init(&f->cell[0][KERNEL].late);
	assert_int_equal(frontier_best(f, 0), -1);
	free(f);
}

/* The fixed margin of the nearest CPU, whatever the order of the variants. */
static void test_nearest_fixed(void **state)
{
	(void)state;
	struct frontier *f = make();
	assert_int_equal(frontier_nearest_fixed(f, 0, 5), FIXED125);
	assert_int_equal(frontier_nearest_fixed(f, 0, 30), FIXED500);
	assert_int_equal(frontier_nearest_fixed(f, 0, 100), FIXED500);
	assert_int_equal(frontier_nearest_fixed(f, 1, 5), -1);
	/* the other way round: the 500 us margin first */
	struct frontier_variant v = f->c.var[FIXED125];
	struct frontier_cell c = f->cell[0][FIXED125];
	f->c.var[FIXED125] = f->c.var[FIXED500];
	f->cell[0][FIXED125] = f->cell[0][FIXED500];
	f->c.var[FIXED500] = v;
	f->cell[0][FIXED500] = c;
	assert_int_equal(frontier_nearest_fixed(f, 0, 5), FIXED500);
	assert_int_equal(frontier_nearest_fixed(f, 0, 30), FIXED125);
	f->c.var[FIXED125].kind = f->c.var[FIXED500].kind = FR_BUDGET;
	assert_int_equal(frontier_nearest_fixed(f, 0, 5), -1);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_best_per_cpu),
	        cmocka_unit_test(test_dominated_never_best),
	        cmocka_unit_test(test_no_best),
	        cmocka_unit_test(test_nearest_fixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
