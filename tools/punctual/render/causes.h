/* SPDX-License-Identifier: MIT */
/* The cause table and the cgroup's throttling counters as text and JSON, shared by `sleep
 * --periodic --explain` and `probe`'s "why late" section. */
#ifndef PUNCTUAL_CAUSES_RENDER_H
#define PUNCTUAL_CAUSES_RENDER_H

#include <stddef.h>

#include "util/json.h"
#include "measure/causes.h"

/* "cgroup /a: quota 30 ms per 100 ms" for level lv of cg, into b. */
void cause_level_text(char *b, size_t n, const struct causes_cgroup *cg, int lv);
/* "causes": one object per cause, in enum order; for throttled the cgroup and its quota. */
void cause_json_table(struct json *j, const struct cause_table *t, const struct causes_cgroup *cg);
/* "cgroup": the levels walked, each quota level with its counters since the cgroup was
 * created (null where unreadable). */
void cause_json_cgroup(struct json *j, const struct causes_cgroup *cg);
/* The table as text: one row per cause that has late deadlines. */
void cause_text_table(FILE *f, const struct cause_table *t, const struct causes_cgroup *cg,
                      const char *indent);

#endif
