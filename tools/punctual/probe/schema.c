/* SPDX-License-Identifier: MIT */
/*
 * What each key of a probe report means to --compare, as one table. A key needs a row
 * only where the walk's default is wrong for it (docs/HACKING.md, "How to add"). Facts are
 * listed in the order of their rows.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "probe/schema.h"

const struct probe_key probe_keys[] = {
        /* the report's header: the version and --quick are facts */
        {.section = PROBE_TOP, .key = "tool", .role = PK_IGNORED},
        {.section = PROBE_TOP, .key = "command", .role = PK_IGNORED},
        {.section = PROBE_TOP, .key = "version", .role = PK_FACT},
        {.section = PROBE_TOP, .key = "quick", .role = PK_FACT},
        /* a report a signal cut short says so: a fact, listed when the two differ */
        {.section = PROBE_TOP, .key = "interrupted", .role = PK_FACT},
        /* the process's slack names a sleep column */
        {.section = "host", .key = "slack_self_ns", .role = PK_SLACK_SELF},
        {.section = "host", .role = PK_FACT},
        /* the CPUs this process may use: exact, more is better */
        {.section = "cpus", .key = "cgroup_version", .role = PK_FACT},
        {.section = "cpus", .key = "cgroup_path", .role = PK_FACT},
        {.section = "cpus", .key = "limit", .role = PK_FACT},
        {.section = "cpus", .key = "affinity_list", .role = PK_FACT},
        {.section = "cpus", .key = "reason", .role = PK_FACT},
        {.section = "cpus", .role = PK_FIGURE, .exact = true, .higher = true},
        /* the shared-CPU run: its hogs and CPUs are given; the hogs' share is better higher */
        {.section = "shared", .key = "hogs", .role = PK_PARAM},
        {.section = "shared", .key = "hog_cpus", .role = PK_PARAM},
        {.section = "shared", .key = "sleeper_cpu", .role = PK_PARAM},
        {.section = "shared", .key = "length_ns", .role = PK_PARAM},
        {.section = "shared", .key = "best", .role = PK_IGNORED},
        {.section = "shared", .key = "hog_pct", .role = PK_FIGURE, .higher = true},
        {.section = "shared", .key = "fair_pct", .role = PK_FIGURE, .higher = true},
        {.section = "shared", .key = "variant", .role = PK_IDENTITY},
        /* the processes beside the why-late loop and the other programs late: theirs,
         * not the host's figures */
        {.section = "why_late", .key = "top", .role = PK_IGNORED},
        {.section = "why_late", .key = "host_late", .role = PK_IGNORED},
        {.section = "why_late", .key = "cpus", .role = PK_CONTEXT},
        {.section = "why_late", .key = "processes", .role = PK_CONTEXT},
        {.section = "why_late", .key = "runnable", .role = PK_CONTEXT},
        {.section = "why_late", .key = "levels_walked", .role = PK_CONTEXT},
        /* a cause's share (a split: no direction) and its summed lateness (its count is
         * judged) */
        {.section = "why_late", .key = "share", .role = PK_CONTEXT},
        {.section = "why_late", .key = "total_ns", .role = PK_CONTEXT},
        /* a frontier variant's configuration: its name says it */
        {.section = "frontier", .key = "budget_ppm", .role = PK_CONTEXT},
        {.section = "frontier", .key = "margin_ns", .role = PK_CONTEXT},
        /* the verdict repeats the frontier's figures */
        {.section = "verdict", .role = PK_IGNORED},
        /* an effect quotes its own section's figure */
        {.section = "recommendations", .key = "effect", .role = PK_IGNORED},
        /* the frontier's lengths name their variants */
        {.section = "frontier", .key = "length_ns", .role = PK_IDENTITY},
        /* what a run was given */
        {.key = "timers", .role = PK_PARAM},
        {.key = "min_delay_ns", .role = PK_PARAM},
        {.key = "max_delay_ns", .role = PK_PARAM},
        {.key = "precision_percent", .role = PK_PARAM},
        {.key = "duration_ns", .role = PK_PARAM},
        {.key = "samples", .role = PK_PARAM},
        {.key = "precision_ns", .role = PK_PARAM},
        /* a run's samples (its quantiles rest on them) and its largest sample (no
         * interval to judge it by) */
        {.key = "n", .role = PK_CONTEXT, .samples = true},
        {.key = "cycles", .role = PK_CONTEXT, .samples = true},
        {.key = "max_ns", .role = PK_CONTEXT},
        /* what tells an array's elements apart */
        {.key = "id", .role = PK_IDENTITY},
        {.key = "mechanism", .role = PK_IDENTITY},
        {.key = "name", .role = PK_IDENTITY},
        {.key = "cause", .role = PK_IDENTITY},
        {.key = "kind", .role = PK_IDENTITY},
        {.key = "level", .role = PK_IDENTITY},
        {.key = "source", .role = PK_IDENTITY},
        {.key = "window", .role = PK_IDENTITY},
        {.key = "thread", .role = PK_IDENTITY},
        {.key = "cpu", .role = PK_IDENTITY},
        {.key = "interval_ns", .role = PK_IDENTITY},
        /* a sleep cell's slack: the cell at the process's slack and at 1 ns */
        {.key = "slack_ns", .role = PK_SLACK},
        /* never early, so any change counts; a cell's 0s fold into one line */
        {.key = "early", .role = PK_FIGURE, .exact = true, .fold = true},
        {.key = "early_total", .role = PK_FIGURE, .exact = true},
        /* a clock's cost */
        {.key = "ns_per_read", .role = PK_FIGURE, .ns = true},
        /* ranks, calibrations, the run's own durations, derived thresholds, host facts
         * outside the host section */
        {.key = "rank", .role = PK_IGNORED},
        {.key = "cycles_hz", .role = PK_IGNORED},
        {.key = "limit", .role = PK_IGNORED},
        {.key = "elapsed_ns", .role = PK_IGNORED},
        {.key = "tick_hz_estimate", .role = PK_IGNORED},
        {.key = "coarse_resolution_ns", .role = PK_IGNORED},
        {.key = "backward", .role = PK_IGNORED},
        {.key = "threshold_ns", .role = PK_IGNORED},
};
const size_t probe_nkeys = sizeof(probe_keys) / sizeof(probe_keys[0]);

/*
 * Adaptive waits learn within a run whether spinning pays, so two runs of one host give
 * medians 300 times apart: their figures are shown, not judged ("varies").
 */
const struct probe_adaptive probe_adaptive[] = {
        {.key = "mechanism", .value = "precise:", .prefix = true}, /* the sleeps' precise rows */
        {.key = "kind", .value = "budget"},                        /* the frontier's */
        {.key = "kind", .value = "auto"},
        {.key = "variant", .value = "auto"}, /* the shared run's default */
};
const size_t probe_nadaptive = sizeof(probe_adaptive) / sizeof(probe_adaptive[0]);

bool probe_is_adaptive(const char *key, const char *value)
{
	for (size_t i = 0; i < probe_nadaptive; i++) {
		const struct probe_adaptive *a = &probe_adaptive[i];
		if (strcmp(a->key, key) == 0 &&
		    (a->prefix ? strncmp(value, a->value, strlen(a->value)) == 0
		               : strcmp(value, a->value) == 0))
			return true;
	}
	return false;
}

/* The first bytes first: probe_key scans the table for every member of a report, and
 * most rows differ there (a report of 40000 cells is a million scans). */
static bool same(const char *row, const char *name)
{
	return row && row[0] == name[0] && strcmp(row, name) == 0;
}

const struct probe_key *probe_key(const char *section, const char *key)
{
	static const struct probe_key figure = {.role = PK_FIGURE};
	const struct probe_key *any_section = NULL, *every_member = NULL;
	for (size_t i = 0; i < probe_nkeys; i++) {
		const struct probe_key *k = &probe_keys[i];
		if (same(k->section, section) && same(k->key, key))
			return k;
		if (!any_section && !k->section && same(k->key, key))
			any_section = k;
		if (!every_member && same(k->section, section) && !k->key)
			every_member = k;
	}
	return any_section ? any_section : every_member ? every_member : &figure;
}

bool probe_key_ns(const struct probe_key *k, const char *key)
{
	size_t n = strlen(key);
	return k->ns || (n >= 3 && strcmp(key + n - 3, "_ns") == 0);
}
