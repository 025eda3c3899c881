/* SPDX-License-Identifier: MIT */
/* One JSON shape per figure, written by one function each, which the subcommand and the
 * probe's section both call: the host (clock, sleep and probe --json's "host"), a clock
 * source's costs (clock --json's sources[], the probe's clocks.sources[]), the CPU count and
 * why (cpus --json, the probe's cpus), a timer run (timers --json, the probe's timers). */
#ifndef PUNCTUAL_RENDER_FIGURES_H
#define PUNCTUAL_RENDER_FIGURES_H

#include <stdbool.h>

#include <punctual/cpus.h>
#include "measure/clocks.h"
#include "measure/timers.h"
#include "util/host.h"
#include "util/json.h"

/* The member "host": kernel, cpu, virtualization, dmi, container (null: none found),
 * clocksource, available_clocksources, invariant_tsc (null: not x86), tick_hz_estimate,
 * coarse_resolution_ns, nohz_full, isolated_cpus, slack_self_ns, slack_pid1_ns (null:
 * unreadable). */
void host_json(struct json *j, const struct host *h);

/* A clock source's object (an element of "sources"): id, name, via, path, ordered, rank,
 * ns_per_read {min, median, rounds, reads_per_round}, resolution_ns {getres,
 * smallest_step}, backward {same_thread, reads_checked, cross_cpu, handoffs, max_ns}. */
void clock_source_json(struct json *j, const struct clock_result *r);
/* The CPU count's members, in the open object: count, reason, online, affinity,
 * affinity_list, rounding, overrides, cgroup {version, controller, path, dir, error,
 * levels[]}, limit ({cpus, count, path, level}, or null). */
void cpu_info_json(struct json *j, const struct pn_cpu_info *in);
/* A timer run's members, in the open object: its workload (count, periodic, delay
 * {distribution, a_ns, b_ns}, precision_percent or precision_ns, seed, duration_ns) and
 * its figures (elapsed_ns, interrupted, fired, unfired, truncated, wakeups,
 * offline_optimum, ratio_to_optimum, uncoalesced_wakeups, timers_per_wakeup,
 * missed_periods, past_window, early, lateness_ns {a histogram}). */
void timers_json(struct json *j, const struct timers_config *c, const struct timers_result *r,
                 bool interrupted);

/* The clock sources' table as text on out, `punctual clock`'s under each clocksource and the
 * probe's section "clocks": rank, source, via, path, ns per read (min, median), getres, the
 * smallest step, backward steps; the columns by priority as many as fit the output's width
 * (every one when wide), more saying how to see those left out. The rows: every source of res
 * (ids NULL), or those of ids, in ids' order. */
void clock_table_text(const struct clock_result *res, int n, const char *const *ids, int nids,
                      bool wide, const char *more);

#endif
