/* SPDX-License-Identifier: MIT */
/*
 * test_causes.c: the tool's attribution (tools/punctual/measure/causes.c): the cpu.stat
 * parser for v1 and v2 (the v2 path has no cpu controller to run against here), the
 * per-CPU interrupt, softirq and steal columns (offline CPUs, short rows, the excluded
 * rows), the cause table (late deadlines with the periods overran, the threshold, the
 * level, the top cause), and one real reading in this thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <punctual/clock.h>
#include "measure/causes.h"

static void stat_v1_v2(void **state)
{
	(void)state;
	struct pn__cgroup_stat st;
	pn__cgroup_parse_stat(
	        "nr_periods 46\nnr_throttled 34\nthrottled_time 1084785325\nnr_bursts 0\n"
	        "burst_time 0\n",
	        false, &st);
	assert_int_equal(st.nr_periods, 46);
	assert_int_equal(st.nr_throttled, 34);
	assert_int_equal(st.throttled_ns, 1084785325);
	pn__cgroup_parse_stat(
	        "usage_usec 9\nuser_usec 5\nsystem_usec 4\nnr_periods 7\nnr_throttled 2\n"
	        "throttled_usec 1500\nnr_bursts 0\nburst_usec 0",
	        true, &st);
	assert_int_equal(st.nr_periods, 7);
	assert_int_equal(st.nr_throttled, 2);
	assert_int_equal(st.throttled_ns, 1500000);
	/* v2 without the cpu controller has no throttling keys; v1's key is not v2's */
	pn__cgroup_parse_stat("usage_usec 9\nuser_usec 5\n", true, &st);
	assert_int_equal(st.nr_throttled + st.throttled_ns + st.nr_periods, 0);
	pn__cgroup_parse_stat("throttled_time 5\n", true, &st);
	assert_int_equal(st.throttled_ns, 0);
	pn__cgroup_parse_stat("", false, &st);
	assert_int_equal(st.nr_throttled, 0);
	pn__cgroup_parse_stat("nr_throttled\nnr_throttled x\nnr_throttled 3", false, &st);
	assert_int_equal(st.nr_throttled, 3);
}

static const char interrupts[] = "           CPU0       CPU1       \n"
                                 "  1:          9          0   IO-APIC   1-edge      i8042\n"
                                 " 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n"
                                 "NMI:          0          0   Non-maskable interrupts\n"
                                 "LOC:     300000     200000   Local timer interrupts\n"
                                 "RES:       5000       6000   Rescheduling interrupts\n"
                                 "CAL:         10         20   Function call interrupts\n"
                                 "ERR:          4\n"
                                 "MIS:          0\n";
static const char softirqs[] = "                    CPU0       CPU1       \n"
                               "          HI:          1          0\n"
                               "       TIMER:     300586     259802\n"
                               "      NET_TX:          4          0\n"
                               "      NET_RX:        559        761\n"
                               "       BLOCK:          0     501360\n"
                               "    IRQ_POLL:          0          0\n"
                               "     TASKLET:          2          2\n"
                               "       SCHED:     422611     391580\n"
                               "     HRTIMER:          0          0\n"
                               "         RCU:     699221     739839\n";

static void irq_columns(void **state)
{
	(void)state;
	/* CPU0: 9 + 1 + 0 + 10 + 4 (ERR, one column) */
	assert_int_equal(causes_irq_sum(interrupts, NULL, 0), 24);
	/* CPU1: 0 + 2 + 0 + 20; ERR and MIS have no second column */
	assert_int_equal(causes_irq_sum(interrupts, NULL, 1), 22);
	assert_int_equal(causes_irq_sum(NULL, softirqs, 0), 1 + 4 + 559 + 2);
	assert_int_equal(causes_irq_sum(NULL, softirqs, 1), 761 + 501360 + 2);
	assert_int_equal(causes_irq_sum(interrupts, softirqs, 1), 22 + 761 + 501360 + 2);
	assert_int_equal(causes_irq_sum(interrupts, softirqs, 7), 0); /* no such column */
	assert_int_equal(causes_irq_sum(NULL, NULL, 0), 0);
	/* CPU1 offline: the columns are CPU0 and CPU2 */
	const char *off = "      CPU0  CPU2\n  5:   3   8  x\nLOC:  1  1\n";
	assert_int_equal(causes_irq_sum(off, NULL, 2), 8);
	assert_int_equal(causes_irq_sum(off, NULL, 1), 0);
	/* CPU1 must not match CPU10's column */
	char wide[2048] = "  ";
	for (int c = 0; c <= 10; c++)
		snprintf(wide + strlen(wide), sizeof(wide) - strlen(wide), " CPU%d", c);
	strcat(wide, "\n 9:");
	for (int c = 0; c <= 10; c++)
		snprintf(wide + strlen(wide), sizeof(wide) - strlen(wide), " %d", 100 + c);
	strcat(wide, " edge\n");
	assert_int_equal(causes_irq_sum(wide, NULL, 1), 101);
	assert_int_equal(causes_irq_sum(wide, NULL, 10), 110);
}

static void steal(void **state)
{
	(void)state;
	const char *stat = "cpu  1 2 3 4 5 6 7 99 0 0\n"
	                   "cpu0 1 2 3 4 5 6 7 40 0 0\n"
	                   "cpu1 1 2 3 4 5 6 7 59 0 0\n"
	                   "cpu12 1 2 3 4 5 6 7 5 0 0\n"
	                   "cpu2 1 2 3\n"
	                   "intr 5\n";
	assert_int_equal(causes_steal(stat, 0), 40);
	assert_int_equal(causes_steal(stat, 1), 59);
	assert_int_equal(causes_steal(stat, 12), 5);
	assert_int_equal(causes_steal(stat, 2), 0); /* too short: unknown */
	assert_int_equal(causes_steal(stat, 3), 0);
}

static void table(void **state)
{
	(void)state;
	struct cause_rec recs[] = {
	        {.late = 100, .cause = PN__WHY_WAKEUP, .level = -1},
	        {.late = 500, .missed = 9, .cause = PN__WHY_THROTTLED, .level = 1},
	        {.late = 300, .cause = PN__WHY_THROTTLED, .level = 0},
	        {.late = 200, .missed = 1, .cause = PN__WHY_THROTTLED, .level = 1},
	        {.late = 700, .cause = PN__WHY_PREEMPTED, .level = -1},
	        {.late = 201, .missed = 30, .cause = PN__WHY_PREEMPTED, .level = -1},
	};
	struct causes_thread t = {.rec = recs, .nrec = sizeof(recs) / sizeof(recs[0])};
	struct cause_table tab = {0};
	cause_table_add(&tab, &t, 200); /* later than 200: not the 100 nor the 200 */
	assert_int_equal(tab.late_wakeups, 4);
	assert_int_equal(tab.late, 10 + 1 + 1 + 31);
	assert_int_equal(tab.c[PN__WHY_THROTTLED].count, 11);
	assert_int_equal(tab.c[PN__WHY_THROTTLED].wakeups, 2);
	assert_int_equal(tab.c[PN__WHY_THROTTLED].total_ns, 800);
	assert_int_equal(tab.c[PN__WHY_THROTTLED].max_ns, 500);
	assert_int_equal(tab.c[PN__WHY_PREEMPTED].count, 32);
	assert_int_equal(tab.c[PN__WHY_WAKEUP].count, 0);
	assert_int_equal(cause_table_top(&tab), PN__WHY_PREEMPTED);
	/* levels 0 and 1 once each: a tie goes to the level nearest the process */
	assert_int_equal(cause_table_level(&tab), 0);
	struct cause_rec more = {.late = 900, .cause = PN__WHY_THROTTLED, .level = 1};
	struct causes_thread t2 = {.rec = &more, .nrec = 1};
	cause_table_add(&tab, &t2, 200); /* a second thread's records add up */
	assert_int_equal(cause_table_level(&tab), 1);
	assert_int_equal(tab.c[PN__WHY_THROTTLED].max_ns, 900);
	assert_int_equal(tab.late_wakeups, 5);
	struct cause_table empty = {0};
	assert_int_equal(cause_table_top(&empty), -1);
	assert_int_equal(cause_table_level(&empty), -1);
	for (int c = 0; c < PN__WHY_COUNT; c++)
		assert_true(strlen(pn__why_name(c)) > 0);
	assert_string_equal(pn__why_name(PN__WHY_COUNT), "unknown");
}

/* One real reading: no quota level, so no cgroup file; a late wakeup gets a cause. */
static void real(void **state)
{
	(void)state;
	struct causes_cgroup cg;
	causes_cgroup_init(&cg);
	struct causes_thread t;
	int r = causes_thread_open(&t, &cg, pn_now());
	if (r < 0)
		skip(); /* no schedstat (CONFIG_SCHED_INFO off) */
	int8_t level = 7;
	assert_int_equal(causes_after(&t, pn_now(), 1000, 0, 0, false, &level), -1);
	assert_int_equal(t.nrec, 0);
	int c = causes_after(&t, pn_now(), 5000000, 1, 4, true, &level);
	assert_true(c >= 0 && c < PN__WHY_COUNT);
	assert_int_equal(t.nrec, 1);
	assert_int_equal(t.rec[0].cause, c);
	assert_int_equal(t.rec[0].missed, 4);
	assert_int_equal(t.rec[0].cycle, 1);
	assert_true(c == PN__WHY_THROTTLED ? level >= 0 : level == -1);
	causes_thread_close(&t);
	free(t.rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(stat_v1_v2), cmocka_unit_test(irq_columns),
	        cmocka_unit_test(steal),      cmocka_unit_test(table),
	        cmocka_unit_test(real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
