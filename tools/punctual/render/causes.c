/* SPDX-License-Identifier: MIT */
/* The cause table and the cgroup's throttling counters, as text and JSON. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "contract.h"
#include "render/causes.h"
#include "util/encode.h"
#include "util/json.h"
#include "util/out.h"

void cause_level_text(char *b, size_t n, const struct causes_cgroup *cg, int lv)
{
	char q[32], p[32], path[1024];
	if (lv < 0 || lv >= cg->n) {
		snprintf(b, n, "cgroup unknown");
		return;
	}
	snprintf(b, n, "cgroup %s: quota %s per %s%s",
	         text_safe(path, sizeof(path), cg->lv[lv].path),
	         fmt_ns(q, sizeof(q), (double)cg->lv[lv].quota_us * 1e3),
	         fmt_ns(p, sizeof(p), (double)cg->lv[lv].period_us * 1e3),
	         cg->lv[lv].burst_us > 0 ? " (with burst)" : "");
}

void cause_json_table(struct json *j, const struct cause_table *t, const struct causes_cgroup *cg)
{
	json_arr(j, "causes");
	for (int c = 0; c < PN__WHY_COUNT; c++) {
		const struct cause_stat *s = &t->c[c];
		json_obj(j, NULL);
		json_str(j, "cause", pn__why_name(c));
		json_uint(j, "count", s->count);
		json_uint(j, "wakeups", s->wakeups);
		json_uint(j, "missed_periods", s->count - s->wakeups);
		json_num(j, "share", t->late ? (double)s->count / (double)t->late : 0);
		json_int(j, "total_ns", s->total_ns);
		json_int(j, "max_ns", s->max_ns);
		int lv = c == PN__WHY_THROTTLED ? cause_table_level(t) : -1;
		if (lv >= 0) {
			json_str(j, "cgroup", cg->lv[lv].path);
			json_int(j, "quota_us", cg->lv[lv].quota_us);
			json_int(j, "period_us", cg->lv[lv].period_us);
			json_int_if(j, "burst_us", cg->lv[lv].burst_us >= 0, cg->lv[lv].burst_us);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
}

void cause_json_cgroup(struct json *j, const struct causes_cgroup *cg)
{
	json_obj(j, "cgroup");
	json_str(j, "version", cg->v2 ? "v2" : "v1");
	json_int(j, "levels_walked", cg->walked);
	json_arr(j, "quota_levels");
	for (int i = 0; i < cg->n; i++) {
		struct pn__cgroup_stat st;
		json_obj(j, NULL);
		json_str(j, "path", cg->lv[i].path);
		json_int(j, "quota_us", cg->lv[i].quota_us);
		json_int(j, "period_us", cg->lv[i].period_us);
		json_int_if(j, "burst_us", cg->lv[i].burst_us >= 0, cg->lv[i].burst_us);
		bool ok = causes_cgroup_stat(cg, i, &st) == 0;
		json_int_if(j, "nr_periods", ok, (int64_t)st.nr_periods);
		json_int_if(j, "nr_throttled", ok, (int64_t)st.nr_throttled);
		json_int_if(j, "throttled_ns", ok, (int64_t)st.throttled_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (cg->note[0])
		json_str(j, "note", cg->note);
	json_obj_end(j);
}

void cause_text_table(FILE *f, const struct cause_table *t, const struct causes_cgroup *cg,
                      const char *indent)
{
	char b[32], c[32], lv[700];
	if (!t->late)
		return;
	fprintf(f, "%s%-10s %9s %6s %8s %10s %10s\n", indent, "cause", "deadlines", "share",
	        "wakeups", "total", "max");
	for (int k = 0; k < PN__WHY_COUNT; k++) {
		const struct cause_stat *s = &t->c[k];
		if (!s->count)
			continue;
		fprintf(f, "%s%-10s %9llu %5.1f%% %8llu %10s %10s", indent, pn__why_name(k),
		        (unsigned long long)s->count, 100.0 * (double)s->count / (double)t->late,
		        (unsigned long long)s->wakeups, fmt_ns(b, sizeof(b), (double)s->total_ns),
		        fmt_ns(c, sizeof(c), (double)s->max_ns));
		if (k == PN__WHY_THROTTLED) {
			cause_level_text(lv, sizeof(lv), cg, cause_table_level(t));
			fprintf(f, "  %s", lv);
		}
		fputc('\n', f);
	}
}
