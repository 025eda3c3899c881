/* SPDX-License-Identifier: MIT */
/* One shape per figure, text and JSON, written by one function that the subcommand and the
 * probe's section both call; docs/probe.schema.json names the members. */
#ifndef PUNCTUAL_RENDER_FIGURES_H
#define PUNCTUAL_RENDER_FIGURES_H

#include <stdbool.h>
#include <stdio.h>

#include <punctual/cpus.h>
#include "measure/clocks.h"
#include "measure/timers.h"
#include "util/host.h"
#include "util/json.h"

/* The member "host"; a fact that could not be read is null. */
void host_json(struct json *j, const struct host *h);

/* A clock source's object, an element of "sources". */
void clock_source_json(struct json *j, const struct clock_result *r);
/* The CPU count's members, in the open object. */
void cpu_info_json(struct json *j, const struct pn_cpu_info *in);
/* The CPU count as text on f: the count, why, the affinity, the cgroup; with levels each
 * cgroup level's quota, the rounding and any override too. */
void cpu_info_text(FILE *f, const struct pn_cpu_info *in, bool levels);
/* A timer run's members, its workload and its figures, in the open object. */
void timers_json(struct json *j, const struct timers_config *c, const struct timers_result *r,
                 bool interrupted);

/* The clock sources' table as text on out: as many columns, by priority, as fit the width,
 * saying how to see those left out. Every source of res (ids NULL), or those of ids, in
 * their order. */
void clock_table_text(const struct clock_result *res, int n, const char *const *ids, int nids,
                      bool wide, const char *more);

#endif
