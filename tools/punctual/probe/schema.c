/* SPDX-License-Identifier: MIT */
/*
 * What each key of a probe report means to --compare, as one table.
 *
 * compare/read.c walks a report without knowing its sections: every number is a figure
 * named by its path, compared lower-is-better under a rule chosen by its value (a
 * whole non-negative count that is not a duration: Poisson noise; anything else: a
 * factor of 2). It reads these conventions of the writer without a row:
 * - NAME_ns is a duration in ns;
 * - NAME_min beside NAME is NAME's cheapest round: NAME gets the range rule;
 * - an object with count, p50 and p99 is a histogram (json_hist): its p50 and p99;
 * - an object with "supported": false has no figures (skipped, saying so);
 * - pNN_ns beside a member whose row has .samples (n, cycles) is the quantile 0.NN of
 *   that many samples (p999_ns: 0.999), compared as a histogram's.
 *
 * A new key needs a row only when that default is wrong for it:
 * - a number the run was given, not a result (a workload's size, a duration asked
 *   for): PK_PARAM, so that runs given different ones are not compared;
 * - a string or number that tells an array's elements apart (a mechanism, an id):
 *   PK_IDENTITY, so that elements join by it rather than by position;
 * - a fact of the host (a kernel, a cgroup): PK_FACT, listed when it differs; a
 *   section of facts only: one row with key NULL;
 * - a count the probe makes exactly, where any change matters: .exact (.fold as well
 *   when 0 is the invariant and its rows would only repeat it);
 * - a number with no direction (a sample count, what another process did, what a
 *   variant was configured with): PK_CONTEXT, shown and never judged; .samples when it
 *   counts the samples its object's quantiles rest on;
 * - higher is better: .higher; a duration whose name does not end in "_ns": .ns;
 * - anything else that is not a figure to compare (a rank, a calibration, a threshold
 *   derived from the results): PK_IGNORED.
 * A row names its section, or NULL for the key in every section. The row naming both
 * wins over the row for every section, which wins over the section's row for every
 * member (probe_key()). Facts are listed in the order of their rows.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "probe/schema.h"

const struct probe_key probe_keys[] = {
        /* the report's header: what made it; the version and --quick are facts */
        {.section = PROBE_TOP, .key = "tool", .role = PK_IGNORED},
        {.section = PROBE_TOP, .key = "command", .role = PK_IGNORED},
        {.section = PROBE_TOP, .key = "version", .role = PK_FACT},
        {.section = PROBE_TOP, .key = "quick", .role = PK_FACT},
        /* a report a signal cut short says so: a fact, listed when the two differ */
        {.section = PROBE_TOP, .key = "interrupted", .role = PK_FACT},
        /* the host: every member a fact; the process's slack names a sleep column */
        {.section = "host", .key = "slack_self_ns", .role = PK_SLACK_SELF},
        {.section = "host", .role = PK_FACT},
        /* the CPUs this process may use: counted exactly, more is better; the cgroup, its
         * limit and the affinity list are facts */
        {.section = "cpus", .key = "cgroup_version", .role = PK_FACT},
        {.section = "cpus", .key = "cgroup_path", .role = PK_FACT},
        {.section = "cpus", .key = "limit", .role = PK_FACT},
        {.section = "cpus", .key = "affinity_list", .role = PK_FACT},
        {.section = "cpus", .key = "reason", .role = PK_FACT},
        {.section = "cpus", .role = PK_FIGURE, .exact = true, .higher = true},
        /* the shared-CPU run: its hogs and CPUs are what it was given; the hogs' share and
         * fairness are better higher */
        {.section = "shared", .key = "hogs", .role = PK_PARAM},
        {.section = "shared", .key = "hog_cpus", .role = PK_PARAM},
        {.section = "shared", .key = "sleeper_cpu", .role = PK_PARAM},
        {.section = "shared", .key = "length_ns", .role = PK_PARAM},
        {.section = "shared", .key = "best", .role = PK_IGNORED},
        {.section = "shared", .key = "hog_pct", .role = PK_FIGURE, .higher = true},
        {.section = "shared", .key = "fair_pct", .role = PK_FIGURE, .higher = true},
        {.section = "shared", .key = "variant", .role = PK_IDENTITY},
        /* the processes that ran beside the why-late loop: what the run saw, not a
         * figure of the host (a pid is an identifier; the CPU they took is context, and
         * --compare warns when it differs) */
        {.section = "why_late", .key = "top", .role = PK_IGNORED},
        /* the other programs late while it ran (eBPF, root): their lateness is theirs */
        {.section = "why_late", .key = "host_late", .role = PK_IGNORED},
        {.section = "why_late", .key = "cpus", .role = PK_CONTEXT},
        {.section = "why_late", .key = "processes", .role = PK_CONTEXT},
        {.section = "why_late", .key = "runnable", .role = PK_CONTEXT},
        {.section = "why_late", .key = "levels_walked", .role = PK_CONTEXT},
        /* a cause's share of the late wakeups (a split: no direction) and the lateness it
         * sums (over a few events: its count is what is judged) */
        {.section = "why_late", .key = "share", .role = PK_CONTEXT},
        {.section = "why_late", .key = "total_ns", .role = PK_CONTEXT},
        /* what a frontier variant was configured with: its name says it */
        {.section = "frontier", .key = "budget_ppm", .role = PK_CONTEXT},
        {.section = "frontier", .key = "margin_ns", .role = PK_CONTEXT},
        /* the verdict repeats the frontier's figures, and its advice is no figure */
        {.section = "verdict", .role = PK_IGNORED},
        /* a recommendation's effect is the figure it quotes from its own section */
        {.section = "recommendations", .key = "effect", .role = PK_IGNORED},
        /* the frontier's lengths: their variants are named under them */
        {.section = "frontier", .key = "length_ns", .role = PK_IDENTITY},
        /* what a run was given: the timer demo's workload, a run's length and samples */
        {.key = "timers", .role = PK_PARAM},
        {.key = "min_delay_ns", .role = PK_PARAM},
        {.key = "max_delay_ns", .role = PK_PARAM},
        {.key = "precision_percent", .role = PK_PARAM},
        {.key = "duration_ns", .role = PK_PARAM},
        {.key = "samples", .role = PK_PARAM},
        {.key = "precision_ns", .role = PK_PARAM},
        /* how many samples a run took (its quantiles rest on them), and its largest
         * sample (one sample: no interval to judge it by) */
        {.key = "n", .role = PK_CONTEXT, .samples = true},
        {.key = "cycles", .role = PK_CONTEXT, .samples = true},
        {.key = "max_ns", .role = PK_CONTEXT},
        /* what tells an array's elements apart: a clock, a sleep cell, a cause, a level */
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
        /* early returns: never early, so any change counts; a cell's 0s fold (the table
         * counts them in one line as early-return counts) */
        {.key = "early", .role = PK_FIGURE, .exact = true, .fold = true},
        {.key = "early_total", .role = PK_FIGURE, .exact = true},
        /* a clock's cost */
        {.key = "ns_per_read", .role = PK_FIGURE, .ns = true},
        /* ranks, calibrations, durations of the run itself, derived thresholds, and host
         * facts where they may appear outside the system section */
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
 * The elements of adaptive waits: a budget learns, within a run, whether spinning pays,
 * so two runs of one host give it medians 300 times apart (72 ns spinning, 22 us not).
 * One run against another tells nothing of the host: their figures are shown, and not
 * judged (compare/join.c, "varies").
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

static bool same(const char *row, const char *name)
{
	return row && strcmp(row, name) == 0;
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
