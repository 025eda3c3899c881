/* SPDX-License-Identifier: MIT */
/*
 * test_probe_reco.c: what `punctual probe` advises and concludes quotes only the p99s its
 * tables show. On fixed figures: a sleep cell of fewer than FRONTIER_MIN_P99 sleeps (a
 * "-" in the sleeps table) gives no precise-sleep advice; a precise cell that never spun
 * is said to need no spin, not "0 of spinning"; the frontier's advice names the
 * default's p99 only where its cell has one; the verdict shows a loop only where both
 * cells have a p99, names every command the recommendations give, and says "nothing
 * lowered it" only where none gives one; a fix is advised only beyond the noise of
 * repeated runs, else noted as unsure with the host's noise named.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "probe/probe.h"
#include "util/json.h"
#include "util/out.h"

#define US 1000LL
#define MS 1000000LL

static struct probe p;
static struct sleep_cell cells[PROBE_INTERVALS * PROBE_SLACKS * PROBE_MECHS];
static const char *unsupported[PROBE_MECHS];
static struct frontier fr;

/* A probe with the sleeps section's shape and empty cells, no quota throttled. */
static int setup(void **state)
{
	(void)state;
	static const int64_t iv[PROBE_INTERVALS] = {1 * US, 100 * US, 1 * MS};
	memset(&p, 0, sizeof(p));
	memset(&fr, 0, sizeof(fr));
	p.quota.level = -1;
	p.host.slack_self = 50 * US;
	memcpy(p.intervals, iv, sizeof(iv));
	p.slacks[0] = 50 * US;
	p.slacks[1] = 1;
	const char *ids[] = {"nanosleep", "clock_nanosleep_abs", "epoll_wait", "select"};
	int n = 0;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		p.mechs[n++] = sleep_mech_find(ids[i]);
	p.mechs[n++] = sleep_mech_precise(PRECISE_SLEEP, 1000, "1us");
	p.mechs[n++] = sleep_mech_precise(PRECISE_SLEEP, 50000, "50us");
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++)
		sleep_cell_init(&cells[i]);
	memset(unsupported, 0, sizeof(unsupported));
	p.sleeps = (struct sleep_matrix){.intervals = p.intervals,
	                                 .nintervals = PROBE_INTERVALS,
	                                 .slacks = p.slacks,
	                                 .nslacks = PROBE_SLACKS,
	                                 .m = p.mechs,
	                                 .nm = n,
	                                 .unsupported = unsupported,
	                                 .cells = cells};
	return 0;
}

/* n sleeps of late ns into h, the last `big` of them big ns late. */
static void fill(struct pn_hist *h, uint64_t n, int64_t late, uint64_t nbig, int64_t big)
{
	pn_hist_record_n(h, late, n - nbig);
	pn_hist_record_n(h, big, nbig);
}

static struct sleep_cell *cell(const char *mech, int interval, int slack)
{
	int m = probe_mech(&p, mech);
	assert_true(m >= 0);
	return sleep_matrix_cell(&p.sleeps, interval, slack, m);
}

static const struct probe_reco *reco(const char *kind)
{
	for (int i = 0; i < p.nrecos; i++)
		if (strcmp(p.recos[i].kind, kind) == 0)
			return &p.recos[i];
	return NULL;
}

/* 68 sleeps a cell, one 2.2 ms late: the table shows "28.0 / -", so no p99 to quote. */
static void precise_needs_a_shown_p99(void **state)
{
	(void)state;
	fill(&cell("clock_nanosleep_abs", 1, 1)->late, 68, 28 * US, 1, 2200 * US);
	fill(&cell("precise:1us", 1, 1)->late, 68, 1 * US, 0, 0);
	probe_sleeps.recommend(&p);
	const struct probe_reco *r = reco("precise");
	if (r)
		fail_msg("advice from a p99 the table shows as -: %s", r->text);
}

/* From FRONTIER_MIN_P99 sleeps on the advice stands; a precise cell that never spun says
 * so rather than "0 of spinning". */
static void precise_without_spinning(void **state)
{
	(void)state;
	fill(&cell("clock_nanosleep_abs", 1, 1)->late, 200, 28 * US, 10, 500 * US);
	fill(&cell("precise:1us", 1, 1)->late, 200, 1 * US, 0, 0);
	probe_sleeps.recommend(&p);
	const struct probe_reco *r = reco("precise");
	assert_non_null(r);
	assert_true(r->measured && r->before > 400 * US && r->after < 2 * US);
	if (strstr(r->text, " 0 of spinning"))
		fail_msg("a spin of 0 quoted: %s", r->text);
	assert_non_null(strstr(r->text, "without spinning"));
}

static void precise_with_spinning(void **state)
{
	(void)state;
	fill(&cell("clock_nanosleep_abs", 1, 1)->late, 200, 28 * US, 10, 500 * US);
	struct sleep_cell *pr = cell("precise:1us", 1, 1);
	fill(&pr->late, 200, 1 * US, 0, 0);
	pr->spun_ns = 200 * 40 * US;
	probe_sleeps.recommend(&p);
	const struct probe_reco *r = reco("precise");
	assert_non_null(r);
	assert_non_null(strstr(r->text, "for 40 us of spinning per sleep"));
}

/* A frontier of 1 ms sleeps: the kernel, budget 10% and the default, n sleeps each. */
static void frontier_of(uint64_t nkernel, uint64_t nbudget, uint64_t ndefault)
{
	fr.c.nlen = 1;
	fr.c.len[0] = 1 * MS;
	fr.c.nvar = 3;
	fr.c.var[0] = (struct frontier_variant){FR_KERNEL, 0};
	fr.c.var[1] = (struct frontier_variant){FR_BUDGET, 100000};
	fr.c.var[2] = (struct frontier_variant){FR_AUTO, 0};
	for (int v = 0; v < 3; v++)
		pn_hist_init(&fr.cell[0][v].late);
	fill(&fr.cell[0][0].late, nkernel, 80 * US, nkernel / 20, 300 * US);
	fill(&fr.cell[0][1].late, nbudget, 1 * US, 0, 0);
	fill(&fr.cell[0][2].late, ndefault, 2 * US, 1, 3 * MS);
	p.frontier = (struct probe_frontier){
	        .run = true, .f = &fr, .best = 1, .won = FRONTIER_ROUNDS, .len_1ms = 0};
}

/* The default's cell: n sleeps late ns each (a budget then beats it beyond the noise). */
static void default_at(uint64_t n, int64_t late)
{
	pn_hist_reset(&fr.cell[0][2].late);
	fill(&fr.cell[0][2].late, n, late, 0, 0);
}

static void frontier_default_needs_a_shown_p99(void **state)
{
	(void)state;
	frontier_of(200, 200, 60);
	probe_frontier.recommend(&p);
	const struct probe_reco *r = reco("budget");
	assert_non_null(r);
	if (strstr(r->text, "default's p99"))
		fail_msg("the default's p99 from %d sleeps quoted: %s", 60, r->text);
	frontier_of(200, 200, 200);
	default_at(200, 30 * US);
	p.nrecos = 0;
	probe_frontier.recommend(&p);
	assert_non_null(reco("budget"));
	assert_non_null(strstr(reco("budget")->text, "default's p99"));
}

/* The verdict's JSON for the frontier, read back by hand: its statistic and fix_ns. */
static void verdict(char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	assert_non_null(f);
	struct json j;
	json_begin(&j, f);
	probe_verdict_json(&j, &p);
	json_end(&j);
	fclose(f);
}

static void verdict_p99_only_where_both_have_one(void **state)
{
	(void)state;
	char buf[4096];
	frontier_of(200, 60, 200);
	verdict(buf, sizeof(buf));
	if (!strstr(buf, "\"loops\":[]"))
		fail_msg("a loop shown without a p99 for its fix: %s", buf);
	frontier_of(200, 200, 200);
	verdict(buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"statistic\":\"p99\""));
}

/* The verdict's text, into buf, its blanks as single spaces. */
static void verdict_text(char *buf, size_t n)
{
	FILE *saved = out;
	out = fmemopen(buf, n, "w");
	assert_non_null(out);
	probe_verdict_text(&p);
	fclose(out);
	out = saved;
	char *w = buf; /* out_wrap breaks lines anywhere: one space for each run of blanks */
	for (const char *r = buf; *r; r++)
		if (!(*r == ' ' || *r == '\n') || (w > buf && w[-1] != ' '))
			*w++ = *r == '\n' ? ' ' : *r;
	*w = '\0';
}

/* The report: no fix at 1 ms, yet the slack and the shared CPUs' advice below. */
static void verdict_names_every_command(void **state)
{
	(void)state;
	char buf[4096];
	frontier_of(200, 200, 200);
	p.frontier.best = -1;
	probe_reco_add(&p, "slack", "punctual run --slack 1ns -- APP",
	               "Slack: `punctual run --slack 1ns -- APP`, or TimerSlackNSec=1ns.");
	probe_reco_add(&p, "shared", "punctual run --precise -- APP",
	               "Shared: `punctual run --precise -- APP`.");
	probe_reco_add(&p, "clock", "", "Clocks: `punctual clock --clocksources` measures.");
	verdict_text(buf, sizeof(buf));
	const char *want[] = {"`punctual run --slack 1ns`", "`punctual run --precise`",
	                      "`punctual clock --clocksources`"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(buf, want[i]))
			fail_msg("the verdict does not name %s: %s", want[i], buf);
	if (strstr(buf, "no fix") || strstr(buf, "nothing lowered"))
		fail_msg("a verdict of no fix above a recommended fix: %s", buf);
	p.nrecos = 0;
	verdict_text(buf, sizeof(buf));
	assert_non_null(strstr(buf, "nothing lowered it"));
	assert_non_null(strstr(buf, "nothing measured here calls for a change"));
}

/* A budget's p99 of 160 us against the kernel's 300 us, from 200 sleeps each: apart in
 * one run, not beyond the noise of repeated runs (2.25x). No advice; unsure, and why. */
static void frontier_fix_beyond_the_noise(void **state)
{
	(void)state;
	char buf[4096];
	frontier_of(200, 200, 200);
	pn_hist_reset(&fr.cell[0][1].late);
	fill(&fr.cell[0][1].late, 200, 20 * US, 10, 160 * US);
	probe_frontier.recommend(&p);
	const struct probe_reco *r = reco("budget");
	if (r)
		fail_msg("advice within the noise of repeated runs: %s", r->text);
	assert_int_equal(p.frontier.best, -1);
	assert_int_equal(p.nunsure, 1);
	verdict_text(buf, sizeof(buf));
	assert_non_null(strstr(buf, "too noisy to tell"));
	/* a pure spin 140 us late at p99: the host's stalls, named */
	fr.c.var[fr.c.nvar] = (struct frontier_variant){FR_SPIN, 0};
	pn_hist_init(&fr.cell[0][fr.c.nvar].late);
	fill(&fr.cell[0][fr.c.nvar].late, 200, 100, 10, 140 * US);
	fr.c.nvar++;
	verdict_text(buf, sizeof(buf));
	if (!strstr(buf, "stalled in bursts"))
		fail_msg("the stalls not named: %s", buf);
	/* 1 us against 300 us is beyond it, and against the default's 30 us */
	frontier_of(200, 200, 200);
	default_at(200, 30 * US);
	p.nunsure = 0;
	probe_frontier.recommend(&p);
	assert_non_null(reco("budget"));
}

/* 25 us against 12 us at p99 (halved, but within 2.25x): no precise advice, unsure. */
static void precise_beyond_the_noise(void **state)
{
	(void)state;
	fill(&cell("clock_nanosleep_abs", 1, 1)->late, 200, 5 * US, 10, 25 * US);
	fill(&cell("precise:1us", 1, 1)->late, 200, 1 * US, 10, 12 * US);
	probe_sleeps.recommend(&p);
	const struct probe_reco *r = reco("precise");
	if (r)
		fail_msg("advice within the noise of repeated runs: %s", r->text);
	assert_int_equal(p.nunsure, 1);
}

/* PM QoS is judged against its own blocks without it, in every pair: a held median under
 * the main loop's, measured before, is no gain. */
static void qos_against_its_blocks(void **state)
{
	(void)state;
	struct probe_why *w = &p.why;
	w->run = true;
	w->status = -ENOENT; /* no causes: the PM QoS advice alone */
	w->p50 = 60 * US;
	w->qos.cycles = w->qos.cycles_without = 496;
	w->qos.late = 0;
	w->qos.late_without = 1; /* too few to halve */
	w->qos.p50 = 44 * US;
	w->qos.p99 = 600 * US;
	w->qos.p99_without = 700 * US;
	for (int i = 0; i < QOS_PAIRS; i++) {
		for (int on = 0; on < 2; on++) {
			w->qos.block[i][on][0] = 124;
			w->qos.block_p50[i][on] = 44 * US;
		}
	}
	w->qos.p50_without = 44 * US;
	probe_why.recommend(&p);
	assert_null(reco("pm_qos")); /* as fast without it: the main loop's median is older */
	w->qos.p50_without = 60 * US;
	for (int i = 0; i < QOS_PAIRS; i++)
		w->qos.block_p50[i][0] = 60 * US;
	p.nrecos = 0;
	probe_why.recommend(&p);
	assert_non_null(reco("pm_qos"));
	w->qos.block_p50[2][1] = 61 * US; /* one pair the other way */
	p.nrecos = 0;
	probe_why.recommend(&p);
	assert_null(reco("pm_qos"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup(precise_needs_a_shown_p99, setup),
	        cmocka_unit_test_setup(precise_without_spinning, setup),
	        cmocka_unit_test_setup(precise_with_spinning, setup),
	        cmocka_unit_test_setup(frontier_default_needs_a_shown_p99, setup),
	        cmocka_unit_test_setup(verdict_p99_only_where_both_have_one, setup),
	        cmocka_unit_test_setup(verdict_names_every_command, setup),
	        cmocka_unit_test_setup(frontier_fix_beyond_the_noise, setup),
	        cmocka_unit_test_setup(precise_beyond_the_noise, setup),
	        cmocka_unit_test_setup(qos_against_its_blocks, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
