/* SPDX-License-Identifier: MIT */
/*
 * test_frontier.c: the choice behind probe's recommendation "what precision costs"
 * (tools/punctual/measure/frontier.c), a rule the noise does not flip: punctual's default
 * where it is as good as the best, a budget only where it beats the default beyond the
 * noise in every stretch, never one a fixed margin of no more CPU beats. Synthetic cells:
 * no timing.
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

/* Records v in c as the frontier does: its histogram, and the tail of stretch r. */
static void put(struct frontier_cell *c, int r, int64_t v)
{
	struct frontier_tail *t = &c->round[r];
	pn_hist_record(&c->late, v);
	int64_t i = t->n < FRONTIER_TAIL ? t->n : FRONTIER_TAIL - 1;
	t->n++;
	if (t->n > FRONTIER_TAIL && v <= t->top[FRONTIER_TAIL - 1])
		return;
	for (; i > 0 && t->top[i - 1] < v; i--)
		t->top[i] = t->top[i - 1];
	t->top[i] = v;
}

/* One length of 1 ms; a cell has 960 sleeps late by p50 ns and 40 spread evenly from lo to
 * hi ns (its p99 near their middle), dealt in turn to the three stretches, at cpu % of
 * 1 s. */
static void spread(struct frontier *f, int v, int64_t p50, int64_t lo, int64_t hi, double cpu)
{
	struct frontier_cell *c = &f->cell[0][v];
	memset(c, 0, sizeof(*c));
	pn_hist_init(&c->late);
	for (int i = 0; i < 960; i++)
		put(c, i % FRONTIER_ROUNDS, p50);
	for (int i = 0; i < 40; i++)
		put(c, i % FRONTIER_ROUNDS, lo + (hi - lo) * i / 39);
	c->wall_ns = 1000000000;
	c->cpu_ns = (int64_t)(cpu * 1e7);
}

/* A cell whose 40 late sleeps are all late by p99 ns: its p99, in each stretch too. */
static void cell(struct frontier *f, int v, int64_t p50, int64_t p99, double cpu)
{
	spread(f, v, p50, p99, p99, cpu);
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

/* The p99's interval and a stretch's p99. */
static void test_noise(void **state)
{
	(void)state;
	struct frontier *f = make();
	int64_t lo, hi;
	spread(f, AUTO, 1 * US, 100 * US, 200 * US, 8);
	assert_int_equal(frontier_p99_interval(&f->cell[0][AUTO], &lo, &hi), 0);
	int64_t p99 = pn_hist_percentile(&f->cell[0][AUTO].late, 99);
	assert_true(lo < p99 && p99 < hi && lo >= 100 * US && hi <= 201 * US);
	for (int r = 0; r < FRONTIER_ROUNDS; r++)
		assert_true(frontier_round_p99(&f->cell[0][AUTO], r) > 150 * US);
	memset(&f->cell[0][AUTO].round[1], 0, sizeof(f->cell[0][AUTO].round[1]));
	assert_int_equal(frontier_round_p99(&f->cell[0][AUTO], 1), -1);
	pn_hist_init(&f->cell[0][AUTO].late);
	assert_int_equal(frontier_p99_interval(&f->cell[0][AUTO], &lo, &hi), -1);
	free(f);
}

/* A budget only where it beats the default beyond the noise in every stretch, and then the
 * smallest of those as good as the best. */
static void test_budget_beats_default(void **state)
{
	(void)state;
	int won;
	struct frontier *f = make();
	assert_int_equal(frontier_best(f, 0, &won), BUDGET10);
	assert_int_equal(won, FRONTIER_ROUNDS);
	/* budget 5% as good as 10%: the smaller budget */
	cell(f, BUDGET5, 1 * US, 100 * US, 5);
	assert_int_equal(frontier_best(f, 0, &won), BUDGET5);
	free(f);
}

/* The default wherever it is as good as the best (the intervals meet), or no budget beats
 * it in every stretch. */
static void test_default_when_as_good(void **state)
{
	(void)state;
	int won;
	struct frontier *f = make();
	cell(f, AUTO, 1 * US, 100 * US, 8);
	assert_int_equal(frontier_best(f, 0, &won), AUTO);
	assert_int_equal(won, FRONTIER_ROUNDS); /* against the kernel */
	free(f);
	/* intervals that meet: noise, not a better budget */
	f = make();
	spread(f, BUDGET10, 1 * US, 60 * US, 140 * US, 9);
	spread(f, AUTO, 1 * US, 75 * US, 155 * US, 8);
	assert_int_equal(frontier_best(f, 0, &won), AUTO);
	free(f);
	/* a budget that loses one stretch to the default: the default */
	f = make();
	struct frontier_tail *t = &f->cell[0][BUDGET10].round[1];
	for (int i = 0; i < FRONTIER_TAIL; i++)
		t->top[i] = 300 * US;
	int64_t lo, hi, dlo, dhi;
	frontier_p99_interval(&f->cell[0][BUDGET10], &lo, &hi);
	frontier_p99_interval(&f->cell[0][AUTO], &dlo, &dhi);
	assert_true(hi < dlo); /* apart overall: only the stretch decides */
	assert_false(frontier_beats(f, 0, BUDGET10, AUTO, &won));
	assert_int_equal(won, FRONTIER_ROUNDS - 1);
	assert_int_equal(frontier_best(f, 0, &won), AUTO);
	free(f);
}

/* A budget whose p99 a fixed margin of no more CPU beats is never the recommendation. */
static void test_dominated_never_best(void **state)
{
	(void)state;
	int won;
	struct frontier *f = make();
	cell(f, BUDGET10, 1 * US, 100 * US, 46); /* the 500 us margin: 80 us at 45% */
	assert_int_equal(frontier_best(f, 0, &won), AUTO);
	free(f);
	f = make();
	/* every punctual variant beaten: none */
	cell(f, BUDGET5, 1 * US, 250 * US, 6.5);
	cell(f, BUDGET10, 1 * US, 250 * US, 9);
	cell(f, AUTO, 1 * US, 250 * US, 8);
	assert_int_equal(frontier_best(f, 0, &won), -1);
	free(f);
}

/* No win over the kernel in every stretch, no kernel variant, no such length, an empty
 * cell: none. */
static void test_no_best(void **state)
{
	(void)state;
	int won;
	struct frontier *f = make();
	assert_int_equal(frontier_best(f, 1, &won), -1);
	assert_int_equal(frontier_best(f, -1, &won), -1);
	cell(f, KERNEL, 30 * US, 50 * US, 2); /* the kernel alone already beats them */
	assert_int_equal(frontier_best(f, 0, &won), -1);
	free(f);
	f = make();
	/* the kernel's p99 over the noise of each, but lower in one stretch */
	for (int i = 0; i < FRONTIER_TAIL; i++)
		f->cell[0][KERNEL].round[2].top[i] = 10 * US;
	assert_int_equal(frontier_best(f, 0, &won), -1);
	free(f);
	f = make();
	f->c.var[KERNEL].kind = FR_SPIN;
	assert_int_equal(frontier_best(f, 0, &won), -1);
	free(f);
	f = make();
	pn_hist_init(&f->cell[0][KERNEL].late);
	assert_int_equal(frontier_best(f, 0, &won), -1);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_noise),
	        cmocka_unit_test(test_budget_beats_default),
	        cmocka_unit_test(test_default_when_as_good),
	        cmocka_unit_test(test_dominated_never_best),
	        cmocka_unit_test(test_no_best),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
