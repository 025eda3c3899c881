/* SPDX-License-Identifier: MIT */
/* The text and JSON of the figures the subcommands and the probe share (figures.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <punctual/cpus.h>
#include <punctual/version.h>
#include "render/figures.h"
#include "util/encode.h"
#include "util/out.h"

void host_json(struct json *j, const struct host *h)
{
	json_obj(j, "host");
	json_str(j, "kernel", h->kernel);
	json_str(j, "cpu", h->cpu);
	json_str(j, "virtualization", h->virt);
	json_str(j, "dmi", h->dmi);
	if (*h->container_how)
		json_str(j, "container", h->container);
	else
		json_none(j, "container");
	json_str(j, "clocksource", h->clocksource);
	json_words(j, "available_clocksources", h->clocksources);
	if (h->invariant_tsc >= 0)
		json_bool(j, "invariant_tsc", h->invariant_tsc);
	else
		json_none(j, "invariant_tsc");
	json_num(j, "tick_hz_estimate", h->tick_hz);
	json_int(j, "coarse_resolution_ns", h->coarse_res_ns);
	json_str(j, "nohz_full", h->nohz_full);
	json_str(j, "isolated_cpus", h->isolated);
	json_int_if(j, "slack_self_ns", h->slack_self >= 0, h->slack_self); /* or -errno */
	json_int_if(j, "slack_pid1_ns", h->slack_pid1 >= 0, h->slack_pid1);
	json_obj_end(j);
}

void clock_source_json(struct json *j, const struct clock_result *r)
{
	json_obj(j, NULL);
	json_str(j, "id", r->id);
	json_str(j, "name", r->name);
	json_str(j, "via", r->via);
	json_str(j, "path", r->path);
	json_bool(j, "ordered", r->ordered);
	json_int(j, "rank", r->rank);
	json_obj(j, "ns_per_read");
	json_num(j, "min", r->cost_min);
	json_num(j, "median", r->cost_median);
	json_uint(j, "rounds", r->rounds);
	json_uint(j, "reads_per_round", r->reads_per_round);
	json_obj_end(j);
	json_obj(j, "resolution_ns");
	json_int_if(j, "getres", r->getres_ns >= 0, r->getres_ns);
	json_int_if(j, "smallest_step", r->step_ns >= 0, r->step_ns);
	json_obj_end(j);
	json_obj(j, "backward");
	json_uint(j, "same_thread", r->backward_same);
	json_uint(j, "reads_checked", r->reads_checked);
	json_uint(j, "cross_cpu", r->backward_cross);
	json_uint(j, "handoffs", r->handoffs);
	json_int(j, "max_ns", r->backward_max_ns);
	json_obj_end(j);
	json_obj_end(j);
}

static void cgroup_json(struct json *j, const struct pn_cpu_info *in)
{
	json_obj(j, "cgroup");
	json_str(j, "version", pn_cgroup_version_name(in->cgroup_version));
	json_str(j, "controller", in->cgroup_path[0] ? (in->cgroup_v1_cpu ? "v1" : "v2") : NULL);
	json_str(j, "path", in->cgroup_path[0] ? in->cgroup_path : NULL);
	json_str(j, "dir", in->cgroup_dir[0] ? in->cgroup_dir : NULL);
	json_str(j, "error", in->cgroup_error ? pn_strerror(in->cgroup_error) : NULL);
	json_arr(j, "levels");
	int n = in->n_levels < PN_CPU_LEVELS_MAX ? in->n_levels : PN_CPU_LEVELS_MAX;
	for (int i = 0; i < n; i++) {
		const struct pn_cpu_level *l = &in->levels[i];
		json_obj(j, NULL);
		json_str(j, "path", l->path);
		json_int_if(j, "quota_us", l->quota_us > 0, l->quota_us);
		json_int_if(j, "period_us", l->period_us > 0, l->period_us);
		json_int_if(j, "shares", l->shares >= 0, l->shares);
		json_str(j, "error", l->status ? pn_strerror(l->status) : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void cpu_info_json(struct json *j, const struct pn_cpu_info *in)
{
	json_int(j, "count", in->count);
	json_str(j, "reason", in->reason);
	json_int_if(j, "online", in->online > 0, in->online);
	json_int_if(j, "affinity", in->affinity > 0, in->affinity);
	json_str(j, "affinity_list", in->affinity_list);
	json_str(j, "rounding", pn_cpu_rounding_name(in->rounding));
	json_str(j, "rounding_invalid", in->rounding_invalid[0] ? in->rounding_invalid : NULL);
	json_int_if(j, "override", in->override != 0, in->override);
	json_str(j, "override_invalid", in->override_invalid[0] ? in->override_invalid : NULL);
	cgroup_json(j, in);
	if (in->limit > 0) {
		json_obj(j, "limit");
		json_num(j, "cpus", in->limit);
		json_int(j, "count", in->limit_count);
		json_str(j, "path", in->limit_path);
		json_int(j, "level", in->limit_level);
		json_obj_end(j);
	} else {
		json_none(j, "limit");
	}
}

/* Text shows paths and values from the environment through text_safe: a cgroup's name may
 * hold any byte (an ESC, a C1 control) but '/' and NUL. */
#define SAFE(b, s) text_safe(b, sizeof(b), s)

/* Each cgroup level's quota (the limit's marked), then the rounding and any override. */
static void cpu_levels_text(FILE *f, const struct pn_cpu_info *in)
{
	char s1[4 * PN_CPU_PATH_MAX];
	int n = in->n_levels < PN_CPU_LEVELS_MAX ? in->n_levels : PN_CPU_LEVELS_MAX;
	for (int i = 0; i < n; i++) {
		const struct pn_cpu_level *l = &in->levels[i];
		char q[64];
		if (l->status)
			snprintf(q, sizeof(q), "unreadable: %s", pn_strerror(l->status));
		else if (l->quota_us > 0)
			snprintf(q, sizeof(q), "%lld/%lld us = %.6g CPUs", (long long)l->quota_us,
			         (long long)l->period_us,
			         (double)l->quota_us / (double)l->period_us);
		else
			snprintf(q, sizeof(q), "unlimited");
		fprintf(f, "    %s %-40s %s", i == in->limit_level ? "*" : " ", SAFE(s1, l->path),
		        q);
		if (l->shares >= 0)
			fprintf(f, " (%s %lld)", in->cgroup_v1_cpu ? "shares" : "weight",
			        (long long)l->shares);
		fputc('\n', f);
	}
	if (in->n_levels > n)
		fprintf(f, "    ... %d more levels up to the root\n", in->n_levels - n);
	fprintf(f, "  rounding: %s", pn_cpu_rounding_name(in->rounding));
	if (in->rounding_invalid[0])
		fprintf(f, " (PUNCTUAL_CPU_ROUNDING='%s' ignored: not ceil, floor or nearest)",
		        SAFE(s1, in->rounding_invalid));
	fputc('\n', f);
	if (in->override)
		fprintf(f, "  override: PUNCTUAL_CPU_COUNT=%d\n", in->override);
	if (in->override_invalid[0])
		fprintf(f,
		        "  override: PUNCTUAL_CPU_COUNT='%s' ignored (not a count from 1 to %d)\n",
		        SAFE(s1, in->override_invalid), PN_CPU_COUNT_MAX);
}

void cpu_info_text(FILE *f, const struct pn_cpu_info *in, bool levels)
{
	char s1[4 * PN_CPU_PATH_MAX], s2[4 * PN_CPU_PATH_MAX];
	fprintf(f, "cpus: %d\n", in->count);
	fprintf(f, "  why:      %s\n", SAFE(s1, in->reason));
	if (in->affinity > 0)
		fprintf(f, "  affinity: %d CPU%s (%s)", in->affinity, in->affinity == 1 ? "" : "s",
		        in->affinity_list);
	else
		fprintf(f, "  affinity: unreadable (%s)", pn_strerror(in->affinity));
	if (in->online > 0)
		fprintf(f, ", %d online\n", in->online);
	else
		fprintf(f, ", online unreadable\n");
	fprintf(f, "  cgroup:   %s", pn_cgroup_version_name(in->cgroup_version));
	if (in->cgroup_path[0] && levels)
		fprintf(f, " (limit read from %s) %s at %s", in->cgroup_v1_cpu ? "v1" : "v2",
		        SAFE(s1, in->cgroup_path), SAFE(s2, in->cgroup_dir));
	else if (in->cgroup_path[0])
		fprintf(f, " %s", SAFE(s1, in->cgroup_path));
	fputc('\n', f);
	if (levels)
		cpu_levels_text(f, in);
}
#undef SAFE

void timers_json(struct json *j, const struct timers_config *c, const struct timers_result *r,
                 bool interrupted)
{
	json_int(j, "count", c->count);
	json_bool(j, "periodic", c->periodic);
	json_obj(j, "delay");
	json_str(j, "distribution",
	         c->dist == TIMERS_UNIFORM   ? "uniform"
	         : c->dist == TIMERS_BIMODAL ? "bimodal"
	                                     : "fixed");
	json_int(j, "a_ns", c->a);
	json_int(j, "b_ns", c->b);
	json_obj_end(j);
	if (c->percent >= 0) {
		json_num(j, "precision_percent", c->percent);
		json_none(j, "precision_ns");
	} else {
		json_none(j, "precision_percent");
		json_int(j, "precision_ns", c->precision);
	}
	json_uint(j, "seed", c->seed);
	json_int(j, "duration_ns", c->duration);
	json_int(j, "elapsed_ns", r->elapsed);
	json_bool(j, "interrupted", interrupted);
	json_uint(j, "fired", r->fired);
	json_int(j, "unfired", r->unfired);
	json_bool(j, "truncated", r->truncated);
	json_uint(j, "wakeups", r->wakeups);
	json_uint(j, "offline_optimum", r->optimum);
	json_num(j, "ratio_to_optimum", r->optimum ? (double)r->wakeups / (double)r->optimum : 0.0);
	json_uint(j, "uncoalesced_wakeups", r->uncoalesced);
	json_num(j, "timers_per_wakeup", r->wakeups ? (double)r->fired / (double)r->wakeups : 0.0);
	json_uint(j, "missed_periods", r->missed);
	json_uint(j, "past_window", r->past_window);
	json_uint(j, "early", r->early);
	json_hist(j, "lateness_ns", &r->late, JSON_HIST_MEAN);
}

/* ---- the clock sources' table ------------------------------------------------------- */

/* The table's columns, most needed first: what fits the output's width is shown (all of
 * them when wide), in the table's order. */
enum { C_RANK, C_SOURCE, C_VIA, C_PATH, C_MIN, C_MEDIAN, C_GETRES, C_STEP, C_BACK, NCOLS };
static const struct {
	const char *head;
	bool left;
	int priority; /* 0 first */
} cols[NCOLS] = {
        [C_RANK] = {"rank", false, 1},     [C_SOURCE] = {"source", true, 0},
        [C_VIA] = {"via", true, 4},        [C_PATH] = {"path", true, 3},
        [C_MIN] = {"min ns", false, 6},    [C_MEDIAN] = {"median ns", false, 2},
        [C_GETRES] = {"getres", false, 7}, [C_STEP] = {"step", false, 8},
        [C_BACK] = {"backward", false, 5},
};
#define CELL    48
#define MAXROWS 64

static const char *fmt_res(char *buf, size_t n, int64_t ns)
{
	if (ns < 0)
		return "-";
	return fmt_ns(buf, n, (double)ns);
}

static void clock_cells(char cell[NCOLS][CELL], const struct clock_result *r)
{
	char b[32];
	snprintf(cell[C_RANK], CELL, "%d", r->rank);
	snprintf(cell[C_SOURCE], CELL, "%s", r->name);
	snprintf(cell[C_VIA], CELL, "%s", r->via);
	snprintf(cell[C_PATH], CELL, "%s", r->path);
	snprintf(cell[C_MIN], CELL, "%.1f", r->cost_min);
	snprintf(cell[C_MEDIAN], CELL, "%.1f", r->cost_median);
	snprintf(cell[C_GETRES], CELL, "%s", fmt_res(b, sizeof(b), r->getres_ns));
	snprintf(cell[C_STEP], CELL, "%s", fmt_res(b, sizeof(b), r->step_ns));
	if (r->handoffs)
		snprintf(cell[C_BACK], CELL, "%llu/%llu%s", (unsigned long long)r->backward_same,
		         (unsigned long long)r->backward_cross, r->ordered ? "" : " unord.");
	else if (r->reads_checked)
		snprintf(cell[C_BACK], CELL, "%llu/-", (unsigned long long)r->backward_same);
	else /* not checked: a signal stopped the run first */
		snprintf(cell[C_BACK], CELL, "-/-");
}

/* The rows of res the table shows, in its order (ids' or res's), into row; how many. */
static int clock_rows(int row[MAXROWS], const struct clock_result *res, int n,
                      const char *const *ids, int nids)
{
	int k = 0;
	if (!ids) {
		for (int i = 0; i < n && k < MAXROWS; i++)
			row[k++] = i;
		return k;
	}
	for (int d = 0; d < nids && k < MAXROWS; d++)
		for (int i = 0; i < n; i++)
			if (strcmp(res[i].id, ids[d]) == 0)
				row[k++] = i;
	return k;
}

/* Which columns fit the output's width (every one when wide), two spaces between, by
 * priority; how many did not. */
static int clock_columns(bool show[NCOLS], const int w[NCOLS], bool wide)
{
	int total = 0, dropped = 0;
	for (int pr = 0; pr < NCOLS; pr++)
		for (int c = 0; c < NCOLS; c++) {
			if (cols[c].priority != pr)
				continue;
			show[c] = wide || total + w[c] + (total ? 2 : 0) <= out_width();
			if (show[c])
				total += w[c] + (total ? 2 : 0);
			else
				dropped++;
		}
	return dropped;
}

void clock_table_text(const struct clock_result *res, int n, const char *const *ids, int nids,
                      bool wide, const char *more)
{
	int row[MAXROWS], nrows = clock_rows(row, res, n, ids, nids);
	char cell[MAXROWS][NCOLS][CELL];
	int w[NCOLS];
	for (int c = 0; c < NCOLS; c++)
		w[c] = (int)strlen(cols[c].head);
	for (int i = 0; i < nrows; i++) {
		clock_cells(cell[i], &res[row[i]]);
		for (int c = 0; c < NCOLS; c++)
			if ((int)strlen(cell[i][c]) > w[c])
				w[c] = (int)strlen(cell[i][c]);
	}
	bool show[NCOLS];
	int dropped = clock_columns(show, w, wide);
	for (int i = -1; i < nrows; i++) {
		int col = 0;
		for (int c = 0; c < NCOLS; c++) {
			if (!show[c])
				continue;
			const char *v = i < 0 ? cols[c].head : cell[i][c];
			fprintf(out, "%s%*s", col ? "  " : "", cols[c].left ? -w[c] : w[c], v);
			col++;
		}
		fputc('\n', out);
	}
	if (dropped)
		fprintf(out, "(%d column%s left out to fit %d columns: %s)\n", dropped,
		        dropped == 1 ? "" : "s", out_width(), more);
}
