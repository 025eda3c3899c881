/* SPDX-License-Identifier: MIT */
/*
 * probe/compare/shapes.c: the report's shapes across versions, for --compare. A version 2
 * section (clocks' sources, the CPU count, the timer demo) is brought to version 1's flat
 * members, under the names they have always had; what version 2 adds there is not
 * compared. An earlier report's "system" is read as "host".
 */
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/diag.h"
#include "probe/compare/compare.h"

/* Member key of o as a number, when o is an object that has it. */
static bool num(const json_t *o, const char *key, double *v)
{
	const json_t *m = json_object_get(o, key);
	if (!json_is_number(m))
		return false;
	*v = json_number_value(m);
	return true;
}

/* Sets key of o to a copy of v's number, if it is one. */
static void put_num(json_t *o, const char *key, const json_t *v)
{
	if (json_is_number(v) && json_object_set_new(o, key, json_real(json_number_value(v))))
		die(1, "out of memory");
}

/* Sets key of o to v itself, when there is one. */
static void put(json_t *o, const char *key, json_t *v)
{
	if (v && json_object_set(o, key, v))
		die(1, "out of memory");
}

static json_t *new_object(void)
{
	json_t *o = json_object();
	if (!o)
		die(1, "out of memory");
	return o;
}

/* A version 2 clock source as version 1 wrote it, with the backward steps it counts as
 * errors (another CPU's only for a clock that promises order). */
static json_t *clock_v1(json_t *e)
{
	json_t *cost = json_object_get(e, "ns_per_read"), *back = json_object_get(e, "backward");
	if (!json_is_object(cost) && !json_is_object(back))
		return NULL; /* version 1 already */
	json_t *o = new_object();
	put(o, "id", json_object_get(e, "id"));
	put(o, "path", json_object_get(e, "path"));
	if (json_is_object(cost)) {
		put_num(o, "ns_per_read", json_object_get(cost, "median"));
		put_num(o, "ns_per_read_min", json_object_get(cost, "min"));
	} else {
		put(o, "ns_per_read", cost);
		put(o, "ns_per_read_min", json_object_get(e, "ns_per_read_min"));
	}
	put(o, "rank", json_object_get(e, "rank"));
	if (json_is_object(back)) {
		double n = 0;
		num(back, "same_thread", &n);
		double cross = 0;
		if (json_is_true(json_object_get(e, "ordered")) && num(back, "cross_cpu", &cross))
			n += cross;
		if (json_object_set_new(o, "backward", json_real(n)))
			die(1, "out of memory");
	} else {
		put(o, "backward", back);
	}
	return o;
}

/* The CPU count of version 2 as version 1's cgroup_version, cgroup_path and limit. */
static json_t *cpus_v1(json_t *c)
{
	json_t *cg = json_object_get(c, "cgroup");
	if (!json_is_object(cg))
		return NULL;
	json_t *o = new_object();
	static const char *const same[] = {"count", "online", "affinity", "affinity_list"};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		put(o, same[i], json_object_get(c, same[i]));
	put(o, "cgroup_version", json_object_get(cg, "version"));
	json_t *path = json_object_get(cg, "path"); /* version 1: "" for none */
	if (json_is_string(path))
		put(o, "cgroup_path", path);
	else if (json_object_set_new(o, "cgroup_path", json_string("")))
		die(1, "out of memory");
	double limit = 0;
	num(json_object_get(c, "limit"), "cpus", &limit);
	if (json_object_set_new(o, "limit", json_real(limit)))
		die(1, "out of memory");
	put(o, "reason", json_object_get(c, "reason"));
	put(o, "error", json_object_get(c, "error"));
	return o;
}

/* The timer demo of version 2 as version 1's. */
static json_t *timers_v1(json_t *t)
{
	json_t *delay = json_object_get(t, "delay");
	if (!json_is_object(delay))
		return NULL;
	json_t *o = new_object();
	put_num(o, "timers", json_object_get(t, "count"));
	put_num(o, "min_delay_ns", json_object_get(delay, "a_ns"));
	put_num(o, "max_delay_ns", json_object_get(delay, "b_ns"));
	put(o, "precision_percent", json_object_get(t, "precision_percent"));
	put(o, "wakeups_without_window", json_object_get(t, "uncoalesced_wakeups"));
	put(o, "wakeups_with_window", json_object_get(t, "wakeups"));
	static const char *const same[] = {"offline_optimum", "past_window", "early"};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		put(o, same[i], json_object_get(t, same[i]));
	put_num(o, "late_p99_ns", json_object_get(json_object_get(t, "lateness_ns"), "p99"));
	return o;
}

/* "system" under its later name, "host". */
static void host_named(json_t *doc)
{
	json_t *system = json_object_get(doc, "system");
	if (!json_is_object(system) || json_object_get(doc, "host"))
		return;
	if (json_object_set(doc, "host", system) || json_object_del(doc, "system"))
		die(1, "out of memory");
}

void compare_as_v1(json_t *doc)
{
	host_named(doc);
	json_t *sources = json_object_get(json_object_get(doc, "clocks"), "sources"), *e;
	size_t i;
	json_array_foreach(sources, i, e)
	{
		json_t *o = json_is_object(e) ? clock_v1(e) : NULL;
		if (o && json_array_set_new(sources, i, o))
			die(1, "out of memory");
	}
	static const char *const sections[] = {"cpus", "timers"};
	for (i = 0; i < 2; i++) {
		json_t *s = json_object_get(doc, sections[i]);
		if (!json_is_object(s))
			continue;
		json_t *o = i == 0 ? cpus_v1(s) : timers_v1(s);
		if (o && json_object_set_new(doc, sections[i], o))
			die(1, "out of memory");
	}
}
